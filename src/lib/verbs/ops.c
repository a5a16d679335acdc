/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Posting work requests: one descriptor for every operation. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include <rdmakit/ops.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>

static const char *const op_names[] = {
	[RK_OP_SEND] = "SEND",
	[RK_OP_SEND_IMM] = "SEND_IMM",
	[RK_OP_WRITE] = "WRITE",
	[RK_OP_WRITE_IMM] = "WRITE_IMM",
	[RK_OP_READ] = "READ",
	[RK_OP_FETCH_ADD] = "FETCH_ADD",
	[RK_OP_CMP_SWAP] = "CMP_SWAP",
};

const char *rk_op_str(enum rk_op op)
{
	if ((unsigned int)op < sizeof(op_names) / sizeof(op_names[0]))
		return op_names[op];
	return "UNKNOWN";
}

int rk_op_parse(const char *text, enum rk_op *op_p)
{
	char norm[16];
	size_t i;

	if (!text || strlen(text) >= sizeof(norm))
		return -EINVAL;
	for (i = 0; text[i]; i++)
		norm[i] = text[i] == '-' ? '_' : text[i];
	norm[i] = '\0';
	for (i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++) {
		if (!strcasecmp(norm, op_names[i])) {
			*op_p = (enum rk_op)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const enum ibv_wr_opcode wr_opcode[] = {
	[RK_OP_SEND] = IBV_WR_SEND,
	[RK_OP_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
	[RK_OP_WRITE] = IBV_WR_RDMA_WRITE,
	[RK_OP_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
	[RK_OP_READ] = IBV_WR_RDMA_READ,
	[RK_OP_FETCH_ADD] = IBV_WR_ATOMIC_FETCH_AND_ADD,
	[RK_OP_CMP_SWAP] = IBV_WR_ATOMIC_CMP_AND_SWP,
};

/* What the IB spec says about posting in each state, to explain a refusal. */
static const char *post_rule(enum ibv_qp_state s, int is_send)
{
	switch (s) {
	case IBV_QPS_RESET: return "a QP in RESET takes no work requests";
	case IBV_QPS_INIT: return is_send ? "sends need RTS (INIT takes only receives)" : "";
	case IBV_QPS_RTR: return is_send ? "sends need RTS (RTR only receives)" : "";
	case IBV_QPS_SQD: return is_send ? "the send queue is draining (SQD)" : "";
	default: return "";
	}
}

/* The IB spec makes a post in these states an immediate error. Check it here
 * rather than trust the provider: rxe's provider puts the WQE in its ring
 * before the kernel refuses the doorbell, and the refused request then runs
 * anyway once the QP reaches RTS. */
static int check_state(const struct rk_qp *qp, const char *what, int is_send)
{
	bool refused = qp->state == IBV_QPS_RESET ||
		       (is_send && (qp->state == IBV_QPS_INIT || qp->state == IBV_QPS_RTR));

	if (!refused)
		return 0;
	rk_error("post %s on QP 0x%x (state %s): refused, %s", what, qp->qp->qp_num,
		 rk_qp_state_str(qp->state), post_rule(qp->state, is_send));
	return -EINVAL;
}

static int check_wr(const struct rk_qp *qp, const struct rk_wr *wr)
{
	if ((unsigned int)wr->op >= sizeof(wr_opcode) / sizeof(wr_opcode[0]))
		return -EINVAL;
	if (wr->nsge < 0 || (uint32_t)wr->nsge > qp->cap.max_send_sge) {
		rk_error("post %s on QP 0x%x: %d SGEs, the QP takes at most %u", rk_op_str(wr->op),
			 qp->qp->qp_num, wr->nsge, qp->cap.max_send_sge);
		return -EINVAL;
	}
	if (qp->transport == RK_UD && wr->op != RK_OP_SEND && wr->op != RK_OP_SEND_IMM) {
		rk_error("post %s on UD QP 0x%x: UD carries only SEND", rk_op_str(wr->op),
			 qp->qp->qp_num);
		return -EINVAL;
	}
	if (qp->transport == RK_UC && wr->op >= RK_OP_READ) {
		rk_error("post %s on UC QP 0x%x: UC has no READ or atomics", rk_op_str(wr->op),
			 qp->qp->qp_num);
		return -EINVAL;
	}
	if (qp->transport == RK_UD && !wr->ah) {
		rk_error("post SEND on UD QP 0x%x: no address handle", qp->qp->qp_num);
		return -EINVAL;
	}
	if (wr->op == RK_OP_FETCH_ADD || wr->op == RK_OP_CMP_SWAP) {
		if (wr->nsge != 1 || wr->sg[0].length != 8) {
			rk_error("post %s on QP 0x%x: atomics take one 8-byte SGE", rk_op_str(wr->op),
				 qp->qp->qp_num);
			return -EINVAL;
		}
		if (wr->remote_addr & 7) {
			rk_error("post %s on QP 0x%x: remote address 0x%llx is not 8-byte aligned",
				 rk_op_str(wr->op), qp->qp->qp_num,
				 (unsigned long long)wr->remote_addr);
			return -EINVAL;
		}
	}
	return 0;
}

int rk_post(struct rk_qp *qp, const struct rk_wr *wr)
{
	struct ibv_send_wr swr, *bad = NULL;
	int ret;

	ret = check_wr(qp, wr);
	if (ret)
		return ret;
	ret = check_state(qp, rk_op_str(wr->op), 1);
	if (ret)
		return ret;
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = wr->wr_id;
	swr.sg_list = (struct ibv_sge *)wr->sg;
	swr.num_sge = wr->nsge;
	swr.opcode = wr_opcode[wr->op];
	swr.send_flags = wr->flags;
	if (wr->op == RK_OP_SEND_IMM || wr->op == RK_OP_WRITE_IMM)
		swr.imm_data = htonl(wr->imm);
	switch (wr->op) {
	case RK_OP_SEND:
	case RK_OP_SEND_IMM:
		if (qp->transport == RK_UD) {
			swr.wr.ud.ah = wr->ah;
			swr.wr.ud.remote_qpn = wr->remote_qpn;
			swr.wr.ud.remote_qkey = wr->remote_qkey ? wr->remote_qkey : qp->qkey;
		}
		break;
	case RK_OP_WRITE:
	case RK_OP_WRITE_IMM:
	case RK_OP_READ:
		swr.wr.rdma.remote_addr = wr->remote_addr;
		swr.wr.rdma.rkey = wr->rkey;
		break;
	case RK_OP_FETCH_ADD:
	case RK_OP_CMP_SWAP:
		swr.wr.atomic.remote_addr = wr->remote_addr;
		swr.wr.atomic.rkey = wr->rkey;
		swr.wr.atomic.compare_add = wr->compare_add;
		swr.wr.atomic.swap = wr->swap;
		break;
	}
	ret = rk_verbs_err(ibv_post_send(qp->qp, &swr, &bad));
	if (ret) {
		const char *rule = post_rule(qp->state, 1);

		rk_error("post %s on QP 0x%x (state %s): %s%s%s%s", rk_op_str(wr->op),
			 qp->qp->qp_num, rk_qp_state_str(qp->state), rk_strerror(ret),
			 rule[0] ? " (" : "", rule, rule[0] ? ")" : "");
	}
	return ret;
}

int rk_post_recv(struct rk_qp *qp, uint64_t wr_id, const struct ibv_sge *sg, int nsge)
{
	struct ibv_recv_wr rwr, *bad = NULL;
	int ret;

	if (nsge < 0 || (uint32_t)nsge > qp->cap.max_recv_sge) {
		rk_error("post receive on QP 0x%x: %d SGEs, the QP takes at most %u",
			 qp->qp->qp_num, nsge, qp->cap.max_recv_sge);
		return -EINVAL;
	}
	ret = check_state(qp, "receive", 0);
	if (ret)
		return ret;
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = wr_id;
	rwr.sg_list = (struct ibv_sge *)sg;
	rwr.num_sge = nsge;
	ret = rk_verbs_err(ibv_post_recv(qp->qp, &rwr, &bad));
	if (ret) {
		const char *rule = post_rule(qp->state, 0);

		rk_error("post receive on QP 0x%x (state %s): %s%s%s%s", qp->qp->qp_num,
			 rk_qp_state_str(qp->state), rk_strerror(ret), rule[0] ? " (" : "", rule,
			 rule[0] ? ")" : "");
	}
	return ret;
}

struct ibv_sge rk_sge(const struct rk_mr *mr, size_t off, uint32_t len)
{
	struct ibv_sge s = {
		.addr = (uint64_t)(uintptr_t)mr->buf + off,
		.length = len,
		.lkey = mr->mr->lkey,
	};
	return s;
}

int rk_sge_divide(struct ibv_sge whole, int n, struct ibv_sge *sg)
{
	uint32_t len = whole.length, base, extra, pos = 0;

	if (n < 1 || (len && (uint32_t)n > len))
		return -EINVAL;
	base = len / (uint32_t)n;
	extra = len % (uint32_t)n;
	for (int i = 0; i < n; i++) {
		sg[i] = whole;
		sg[i].addr = whole.addr + pos;
		sg[i].length = base + ((uint32_t)i < extra);
		pos += sg[i].length;
	}
	return n;
}

int rk_sge_split(const struct rk_mr *mr, size_t off, uint32_t len, int n, struct ibv_sge *sg)
{
	if (off > mr->len || len > mr->len - off)
		return -EINVAL;
	return rk_sge_divide(rk_sge(mr, off, len), n, sg);
}
