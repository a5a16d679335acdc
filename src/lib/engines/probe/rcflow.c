/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The RC step flow (see rcflow.h): the server exposes one buffer with
 * exactly the access the client's operation needs, the client works on it
 * step by step; sync points on the control channel keep both sides in step,
 * and every byte moved is checked where it arrives. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/rcflow.h>
#include <rdmakit/clients.h>
#include <rdmakit/cm.h>
#include <rdmakit/conn.h>
#include <rdmakit/counters.h>
#include <rdmakit/cq.h>
#include <rdmakit/ctl.h>
#include <rdmakit/device.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/ops.h>
#include <rdmakit/pattern.h>
#include <rdmakit/qp.h>
#include <rdmakit/region.h>
#include <rdmakit/srq.h>
#include <rdmakit/wire.h>

#include "conn/clients_int.h"
#include "base/clock.h"
#include "verbs/srq_int.h"

#define FADD_START 1000u
#define FADD_ADD 1u
#define CSWAP_SWAP 2000u

struct rc {
	const struct rk_rcflow_opts *o;
	struct rk_rcflow_result *res;
	int sge;
	struct rk_conn *conn;
	struct rk_conn *pending; /* a server's client already accepted (--clients) */
	uint64_t t_connected, t_done; /* now_ns(): connected, and every step done */
	struct rk_region *buf; /* server: the exposed buffer; client: its local one */
	uint8_t *scratch;      /* expected content, and copies out of device memory */
	enum rk_rcflow_step_kind flow[RK_RCFLOW_MAX_STEPS];
	struct rk_srq_opts srq_opts; /* server, opts.srq: its SRQ's */
};

static void emit(struct rc *rc, enum rk_rcflow_event ev, int step)
{
	if (rc->o->on_event)
		rc->o->on_event(rc->res, ev, step, rc->o->arg);
}

/* ---- ops and flows ---- */

#define ODP_SEND_RECV (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV)

/* Each step kind: its name, the remote access the server's buffer and QP
 * need for it, and its RC operations for the on-demand-paging check. */
static const struct {
	const char *name;
	int access;
	uint32_t odp;
} steps[] = {
	[RK_STEP_SEND_C2S] = {"SEND", 0, ODP_SEND_RECV},
	[RK_STEP_SEND_IMM_C2S] = {"SEND_IMM", 0, ODP_SEND_RECV},
	[RK_STEP_SEND_S2C] = {"SEND", 0, ODP_SEND_RECV},
	[RK_STEP_WRITE] = {"WRITE", IBV_ACCESS_REMOTE_WRITE, IBV_ODP_SUPPORT_WRITE},
	[RK_STEP_WRITE_IMM] = {"WRITE_IMM", IBV_ACCESS_REMOTE_WRITE, IBV_ODP_SUPPORT_WRITE},
	[RK_STEP_READ] = {"READ", IBV_ACCESS_REMOTE_READ, IBV_ODP_SUPPORT_READ},
	[RK_STEP_FADD] = {"FETCH_ADD", IBV_ACCESS_REMOTE_ATOMIC, IBV_ODP_SUPPORT_ATOMIC},
	[RK_STEP_CSWAP] = {"CMP_SWAP", IBV_ACCESS_REMOTE_ATOMIC, IBV_ODP_SUPPORT_ATOMIC},
};

const char *rk_rcflow_step_name(enum rk_rcflow_step_kind kind)
{
	if ((unsigned int)kind < sizeof(steps) / sizeof(steps[0]))
		return steps[kind].name;
	return "UNKNOWN";
}

int rk_rcflow_op_parse(const char *name, uint32_t *code_p)
{
	enum rk_op op;

	if (name && !strcmp(name, "all")) {
		*code_p = RK_RCFLOW_OP_ALL;
		return 0;
	}
	if (rk_op_parse(name, &op))
		return -EINVAL;
	*code_p = (uint32_t)op + 1;
	return 0;
}

const char *rk_rcflow_op_name(uint32_t code)
{
	if (code == RK_RCFLOW_OP_ALL)
		return "all";
	if (code >= 1 && code <= RK_OP_CMP_SWAP + 1)
		return rk_op_str((enum rk_op)(code - 1));
	return "unknown";
}

/* The op as a user names it: "read", "fetch-add", "all". */
static const char *op_user_name(uint32_t code, char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, "%s", rk_rcflow_op_name(code));
	for (i = 0; buf[i]; i++)
		buf[i] = buf[i] == '_' ? '-' : (char)tolower((unsigned char)buf[i]);
	return buf;
}

/* The steps of op code into flow: how many, or -EINVAL. */
static int flow_of(uint32_t op, enum rk_rcflow_step_kind *flow)
{
	static const enum rk_rcflow_step_kind all[] = {RK_STEP_SEND_S2C, RK_STEP_READ,
						       RK_STEP_WRITE, RK_STEP_FADD, RK_STEP_CSWAP};
	static const enum rk_rcflow_step_kind single[] = {
		[RK_OP_SEND] = RK_STEP_SEND_C2S,   [RK_OP_SEND_IMM] = RK_STEP_SEND_IMM_C2S,
		[RK_OP_WRITE] = RK_STEP_WRITE,	   [RK_OP_WRITE_IMM] = RK_STEP_WRITE_IMM,
		[RK_OP_READ] = RK_STEP_READ,	   [RK_OP_FETCH_ADD] = RK_STEP_FADD,
		[RK_OP_CMP_SWAP] = RK_STEP_CSWAP,
	};

	if (op == RK_RCFLOW_OP_ALL) {
		memcpy(flow, all, sizeof(all));
		return (int)(sizeof(all) / sizeof(all[0]));
	}
	if (op < 1 || op > RK_OP_CMP_SWAP + 1)
		return -EINVAL;
	flow[0] = single[op - 1];
	return 1;
}

bool rk_rcflow_has_atomics(uint32_t op)
{
	enum rk_rcflow_step_kind flow[RK_RCFLOW_MAX_STEPS];
	int n = flow_of(op, flow);

	for (int i = 0; i < n; i++)
		if (flow[i] == RK_STEP_FADD || flow[i] == RK_STEP_CSWAP)
			return true;
	return false;
}

static int build_flow(struct rc *rc)
{
	int n = flow_of(rc->res->op, rc->flow);

	if (n < 0)
		return n;
	rc->res->nsteps = n;
	return 0;
}

/* The remote access the server's buffer and QP need for the client's flow,
 * and nothing more. */
static int server_remote_access(const struct rc *rc)
{
	int access = 0;

	for (int i = 0; i < rc->res->nsteps; i++)
		access |= steps[rc->flow[i]].access;
	return access;
}

/* Whether the flow has a step of kind a or b. */
static bool flow_has(const struct rc *rc, enum rk_rcflow_step_kind a, enum rk_rcflow_step_kind b)
{
	for (int i = 0; i < rc->res->nsteps; i++)
		if (rc->flow[i] == a || rc->flow[i] == b)
			return true;
	return false;
}

/* What of the flow dev cannot do, known before anything connects: 0, or a
 * negative errno with why naming the device and the capability it lacks. */
static int flow_device_check(const struct rc *rc, const struct rk_device *dev, char *why,
			     size_t why_len)
{
	const char *name = dev->info.name;

	if (flow_has(rc, RK_STEP_FADD, RK_STEP_CSWAP) && dev->info.atomic_cap == IBV_ATOMIC_NONE) {
		snprintf(why, why_len, "%s has no atomics (atomic_cap %s): fetch-add and "
			 "cmp-swap cannot run on it%s", name, rk_atomic_cap_str(dev->info.atomic_cap),
			 rk_device_is_iwarp(dev) ? " (iWARP)" : "");
		return -EOPNOTSUPP;
	}
	if (flow_has(rc, RK_STEP_SEND_IMM_C2S, RK_STEP_WRITE_IMM) && rk_device_is_iwarp(dev)) {
		snprintf(why, why_len, "%s is an iWARP device: iWARP has no immediate data "
			 "(send-imm, write-imm)", name);
		return -EOPNOTSUPP;
	}
	if (rc->sge > dev->info.max_sge) {
		snprintf(why, why_len, "--sge %d: %s takes at most %d SGEs per work request "
			 "(max_sge)", rc->sge, name, dev->info.max_sge);
		return -EINVAL;
	}
	return 0;
}

/* The local buffer's access: a READ's sink on iWARP is written by the
 * peer's READ response as an RDMA WRITE is, so it needs remote write (as
 * perftest registers it; the kernel's rdma_rw_io_needs_mr() says the same). */
static int local_access(const struct rc *rc, const struct rk_device *dev)
{
	if (rk_device_is_iwarp(dev) && flow_has(rc, RK_STEP_READ, RK_STEP_READ))
		return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	return IBV_ACCESS_LOCAL_WRITE;
}

/* The RC operations of the flow, for the on-demand-paging check. */
static uint32_t flow_odp_ops(const struct rc *rc)
{
	uint32_t ops = 0;

	for (int i = 0; i < rc->res->nsteps; i++)
		ops |= steps[rc->flow[i]].odp;
	return ops;
}

/* This side's buffer, of the kind asked, and what it came to in the result. */
static int region_alloc(struct rc *rc, struct rk_conn *conn, int access)
{
	struct rk_region_opts ro = {.kind = rc->o->mem, .odp = rc->o->odp,
				    .odp_rc = flow_odp_ops(rc)};
	struct rk_rcflow_result *r = rc->res;
	int ret;

	ret = rk_region_alloc(conn->dev, conn->pd, rc->o->size, access, &ro, &rc->buf);
	if (ret)
		return ret;
	r->access = rc->buf->access;
	r->mem = rc->buf->kind;
	r->dm = rc->buf->dm != NULL;
	r->fell_back = rc->buf->chosen && !r->dm;
	r->odp = rc->o->odp;
	snprintf(r->mem_why, sizeof(r->mem_why), "%s", rc->buf->why);
	return 0;
}

/* Server: judge the client's request, then create exactly what it needs. */
static int on_request(struct rk_conn *conn, const struct rk_wire_buf *req,
		      struct rk_wire_buf *reply, int *qp_access, char *reason, size_t reason_len,
		      void *arg)
{
	struct rc *rc = arg;
	const struct rk_rcflow_opts *o = rc->o;
	char name[16];
	int remote, access, ret;

	rk_run_counters_start(&rc->res->counters, conn->dev, conn->port_num);
	rc->res->op = req->op;
	if (build_flow(rc)) {
		rk_wire_op_refusal("rc", req->op, reason, reason_len);
		return -EPROTO;
	}
	if (o->op != RK_RCFLOW_OP_ANY && o->op != req->op) {
		snprintf(reason, reason_len, "the client asks for %s; this server serves only %s",
			 rk_rcflow_op_name(req->op), op_user_name(o->op, name, sizeof(name)));
		return -EPERM;
	}
	/* Every offset and length from the peer is checked against the one
	 * buffer this server exposes. */
	if (req->size == 0 || req->size > o->size || req->offset > o->size - req->size) {
		snprintf(reason, reason_len,
			 "asked for %u bytes at offset %" PRIu64
			 "; this server exposes %" PRIu64 " bytes (start it with -s %u)",
			 req->size, req->offset, o->size, req->size);
		return -ERANGE;
	}
	if (rk_rcflow_has_atomics(rc->res->op) && (req->offset % 8 || o->size < 8)) {
		snprintf(reason, reason_len, "atomics need an 8-byte aligned word in the buffer");
		return -EINVAL;
	}
	ret = flow_device_check(rc, conn->dev, reason, reason_len);
	if (ret)
		return ret;
	remote = server_remote_access(rc);
	access = IBV_ACCESS_LOCAL_WRITE | remote;
	if (rc->o->inject == RK_RCFLOW_INJECT_NO_ACCESS) {
		rk_warn("--inject no-access: registering the buffer without %s remote access",
			remote ? "its" : "any");
		access = IBV_ACCESS_LOCAL_WRITE;
	}
	ret = region_alloc(rc, conn, access);
	if (ret) {
		snprintf(reason, reason_len, "the server cannot have its %s buffer: %s",
			 rk_mem_kind_name(o->mem), rk_strerror(ret));
		return ret;
	}
	memset(reply, 0, sizeof(*reply));
	reply->addr = rc->buf->base;
	reply->len = rc->buf->len;
	reply->rkey = rc->buf->rkey;
	reply->flags = rc->buf->dm ? RK_BUF_DM | RK_BUF_ZERO_BASED : 0;
	*qp_access = remote;
	return 0;
}

/* Client: a local buffer that only this side writes into. It exposes
 * nothing: no remote access, and no address or rkey is sent. */
static int prepare(struct rk_conn *conn, struct rk_wire_buf *req, int *qp_access, char *why,
		   size_t why_len, void *arg)
{
	struct rc *rc = arg;
	int ret;

	ret = flow_device_check(rc, conn->dev, why, why_len);
	if (ret)
		return ret;
	rk_run_counters_start(&rc->res->counters, conn->dev, conn->port_num);
	ret = region_alloc(rc, conn, local_access(rc, conn->dev));
	if (ret)
		return ret;
	memset(req, 0, sizeof(*req));
	req->op = rc->res->op;
	req->size = (uint32_t)rc->o->size;
	req->offset = 0;
	*qp_access = 0;
	return 0;
}

/* Both: the buffer goes before the connection's PD does. */
static void release(struct rk_conn *conn, void *arg)
{
	struct rc *rc = arg;

	rk_region_free(rc->buf);
	rc->buf = NULL;
}

/* Client: what the server offered must hold what we are about to do. */
static int check_reply(struct rc *rc)
{
	const struct rk_wire_buf *b = &rc->conn->reply;

	if (b->len < rc->o->size) {
		rk_error("the server exposes %" PRIu64 " bytes; %" PRIu64 " are needed", b->len,
			 rc->o->size);
		return -ERANGE;
	}
	if (rk_rcflow_has_atomics(rc->res->op) && b->addr % 8) {
		rk_error("the server's buffer at 0x%" PRIx64 " is not 8-byte aligned for atomics",
			 b->addr);
		return -EINVAL;
	}
	return 0;
}

/* ---- steps ---- */

static uint32_t step_seed(int idx, enum rk_rcflow_step_kind k)
{
	return (uint32_t)(idx + 1) * 100 + (uint32_t)k;
}

/* The content a step puts in a buffer; both sides can make it. */
static void step_content(uint8_t *out, size_t len, int idx, enum rk_rcflow_step_kind k)
{
	char prefix[64];
	const char *what = k == RK_STEP_SEND_S2C ? "Hello from the server (SEND)" :
			   k == RK_STEP_READ	    ? "server content for READ" :
			   k == RK_STEP_WRITE || k == RK_STEP_WRITE_IMM ? "written by the client" :
								"sent by the client";

	snprintf(prefix, sizeof(prefix), "%s, step %d: ", what, idx + 1);
	rk_text_fill(out, len, prefix, step_seed(idx, k));
}

/* The first len bytes of the region in n SGEs (fewer when len is smaller). */
static int region_sges(const struct rk_region *r, uint32_t len, int n, struct ibv_sge *sg)
{
	if (n > (int)len)
		n = len ? (int)len : 1;
	return rk_sge_divide(rk_region_sge(r, 0, len), n, sg);
}

/* Compare the buffer with what step idx should have left there. */
static int check_content(struct rc *rc, struct rk_rcflow_step *r, int idx)
{
	uint8_t *got = rc->scratch + rc->o->size;
	ssize_t bad;
	int ret;

	step_content(rc->scratch, r->bytes, idx, r->kind);
	ret = rk_region_read(rc->buf, 0, got, r->bytes);
	if (ret)
		return ret;
	bad = rk_buf_diff(got, rc->scratch, r->bytes);
	r->checked = true;
	r->bad_offset = bad;
	if (bad >= 0) {
		rk_error("%s: byte %zd is 0x%02x, the peer put 0x%02x there", rk_rcflow_step_name(r->kind),
			 bad, got[bad], rc->scratch[bad]);
		return -EIO;
	}
	return 0;
}

static int read_word(struct rc *rc, uint64_t *v)
{
	return rk_region_read(rc->buf, 0, v, sizeof(*v));
}

static void take_preview(struct rc *rc, struct rk_rcflow_step *r)
{
	uint8_t tmp[sizeof(r->preview)];
	size_t n = rc->o->size < sizeof(tmp) ? rc->o->size : sizeof(tmp);
	uint64_t w;

	if (r->has_word && !read_word(rc, &w)) {
		snprintf(r->preview, sizeof(r->preview), "word %" PRIu64, w);
		return;
	}
	if (rk_region_read(rc->buf, 0, tmp, n)) {
		snprintf(r->preview, sizeof(r->preview), "(unreadable)");
		return;
	}
	/* rk_preview reads at most sizeof(preview) - 1 bytes: all were copied. */
	rk_preview(tmp, rc->o->size, r->preview, sizeof(r->preview));
}

/* The peer's buffer as this client targets it. */
static uint64_t remote_addr(const struct rc *rc)
{
	const struct rk_wire_buf *b = &rc->conn->reply;

	if (rc->o->inject == RK_RCFLOW_INJECT_OUTSIDE)
		return b->addr + b->len; /* just past the end: the peer's HCA must refuse */
	return b->addr;
}

static uint32_t remote_rkey(const struct rc *rc)
{
	uint32_t k = rc->conn->reply.rkey;

	return rc->o->inject == RK_RCFLOW_INJECT_WRONG_RKEY ? k ^ 0x00ffff00u : k;
}

/* Client side of an RDMA step (WRITE, WRITE_IMM, READ, atomics), or the
 * SEND of a client->server step. */
static int client_post(struct rc *rc, int idx, struct rk_rcflow_step *r)
{
	struct ibv_sge sg[RK_RCFLOW_MAX_SGE];
	struct rk_wr wr = {.wr_id = (uint64_t)idx + 1, .flags = IBV_SEND_SIGNALED, .sg = sg};
	struct ibv_wc wc;
	int ret;

	wr.nsge = region_sges(rc->buf, r->bytes, rc->sge, sg);
	switch (r->kind) {
	case RK_STEP_SEND_C2S: wr.op = RK_OP_SEND; break;
	case RK_STEP_SEND_IMM_C2S: wr.op = RK_OP_SEND_IMM; wr.imm = step_seed(idx, r->kind); break;
	case RK_STEP_WRITE: wr.op = RK_OP_WRITE; break;
	case RK_STEP_WRITE_IMM: wr.op = RK_OP_WRITE_IMM; wr.imm = step_seed(idx, r->kind); break;
	case RK_STEP_READ:
		wr.op = RK_OP_READ;
		/* iWARP: a READ's sink is one SGE (siw: SIW_MAX_SGE_RD). */
		if (rk_device_is_iwarp(rc->conn->dev) && wr.nsge > 1) {
			sg[0] = rk_region_sge(rc->buf, 0, r->bytes);
			wr.nsge = 1;
		}
		break;
	case RK_STEP_FADD:
	case RK_STEP_CSWAP:
		wr.op = r->kind == RK_STEP_FADD ? RK_OP_FETCH_ADD : RK_OP_CMP_SWAP;
		sg[0] = rk_region_sge(rc->buf, 0, 8);
		wr.nsge = 1;
		wr.compare_add = r->kind == RK_STEP_FADD ? FADD_ADD : FADD_START + FADD_ADD;
		wr.swap = CSWAP_SWAP;
		break;
	default: return -EINVAL;
	}
	if (wr.op != RK_OP_SEND && wr.op != RK_OP_SEND_IMM) {
		wr.remote_addr = remote_addr(rc);
		wr.rkey = remote_rkey(rc);
	}
	if (wr.op == RK_OP_WRITE_IMM || wr.op == RK_OP_SEND_IMM) {
		r->has_imm = true;
		r->imm = wr.imm;
	}
	ret = rk_post(rc->conn->qp, &wr);
	if (ret)
		return ret;
	return rk_conn_wait(rc->conn, wr.wr_id, rk_rcflow_step_name(r->kind), &wc);
}

/* How many SGEs this side's receive has in a step, or -1 when this side
 * posts none (a WRITE with immediate consumes a receive of no SGEs). */
static int step_recv_sges(const struct rc *rc, const struct rk_rcflow_step *r)
{
	bool server = rc->o->server;

	switch (r->kind) {
	case RK_STEP_SEND_C2S:
	case RK_STEP_SEND_IMM_C2S:
		return server && rc->o->inject != RK_RCFLOW_INJECT_NO_RECV ? rc->sge : -1;
	case RK_STEP_WRITE_IMM: return server ? 0 : -1;
	case RK_STEP_SEND_S2C: return server ? -1 : rc->sge;
	default: return -1;
	}
}

static uint64_t recv_wr_id(int idx)
{
	return 1000 + (uint64_t)idx;
}

static int post_step_recv(struct rc *rc, int idx, struct rk_rcflow_step *r)
{
	struct ibv_sge sg[RK_RCFLOW_MAX_SGE];
	int nsge = step_recv_sges(rc, r);

	if (rc->conn->srq)
		return 0; /* the SRQ's receives, posted already */
	nsge = nsge ? region_sges(rc->buf, r->bytes, nsge, sg) : 0;
	return rk_post_recv(rc->conn->qp, recv_wr_id(idx), sg, nsge);
}

/* The next receive from the server's SRQ: a SEND's bytes are copied from
 * the SRQ's slot into the buffer (where the step's check reads them), and
 * the SRQ refilled. */
static int srq_step_recv(struct rc *rc, const struct rk_rcflow_step *r, struct ibv_wc *wc)
{
	struct rk_srq *srq = rc->conn->srq;
	const void *data;
	int ret, n;

	ret = rk_cq_wait(rc->conn->cq, wc, 1, rc->conn->timeout_ms, &n);
	if (ret == -ETIMEDOUT)
		rk_error("RECV from the SRQ: no completion within %d ms (peer gone or stuck?)",
			 rc->conn->timeout_ms);
	if (!ret)
		ret = rk_wc_check(wc, "RECV from the SRQ");
	if (!ret)
		ret = rk_srq_take(srq, wc, &data);
	if (ret)
		return ret;
	if (r->kind != RK_STEP_WRITE_IMM && wc->byte_len == r->bytes)
		ret = rk_region_write(rc->buf, 0, data, wc->byte_len);
	rk_srq_release(srq, wc);
	return ret ? ret : rk_srq_refill(srq);
}

/* Receive side of a SEND (or the receive a WRITE with immediate consumes):
 * the receive was posted already (TCP) or is posted now (CM, see run_step). */
static int wait_step_recv(struct rc *rc, int idx, struct rk_rcflow_step *r, bool posted)
{
	struct ibv_wc wc;
	int ret;

	if (!posted) {
		ret = post_step_recv(rc, idx, r);
		if (ret)
			return ret;
	}
	if (rc->conn->srq)
		ret = srq_step_recv(rc, r, &wc);
	else
		ret = rk_conn_wait(rc->conn, recv_wr_id(idx), "RECV", &wc);
	if (ret)
		return ret;
	if (wc.byte_len != r->bytes) {
		rk_error("received %u bytes, %u were due", wc.byte_len, r->bytes);
		return -EIO;
	}
	if (wc.wc_flags & IBV_WC_WITH_IMM) {
		r->has_imm = true;
		r->imm = ntohl(wc.imm_data);
		if (r->imm != step_seed(idx, r->kind)) {
			rk_error("immediate data 0x%x, 0x%x was sent", r->imm,
				 step_seed(idx, r->kind));
			return -EIO;
		}
	}
	return 0;
}

/* The side that puts the content in place before a step: the server for
 * what the client reads or works on, the client for what it sends or writes. */
static bool server_fills(enum rk_rcflow_step_kind k)
{
	return k == RK_STEP_SEND_S2C || k == RK_STEP_READ || k == RK_STEP_FADD ||
	       k == RK_STEP_CSWAP;
}

/* What happens before the "ready" sync point: put content in place. */
static int step_prepare(struct rc *rc, int idx, struct rk_rcflow_step *r)
{
	uint64_t w;

	if (rc->o->server != server_fills(r->kind))
		return 0;
	if (r->kind == RK_STEP_FADD || r->kind == RK_STEP_CSWAP) {
		w = r->kind == RK_STEP_FADD ? FADD_START : FADD_START + FADD_ADD;
		r->has_word = true;
		r->word_before = w;
		return rk_region_write(rc->buf, 0, &w, sizeof(w));
	}
	step_content(rc->scratch, r->bytes, idx, r->kind);
	return rk_region_write(rc->buf, 0, rc->scratch, r->bytes);
}

/* What happens between the "ready" and "done" sync points. */
static int step_act(struct rc *rc, int idx, struct rk_rcflow_step *r, bool recv_posted)
{
	int nsge = rc->sge;
	struct ibv_sge sg[RK_RCFLOW_MAX_SGE];
	struct rk_wr wr = {.op = RK_OP_SEND, .wr_id = (uint64_t)idx + 1, .sg = sg,
			   .flags = IBV_SEND_SIGNALED};
	int ret;

	if (step_recv_sges(rc, r) >= 0)
		return wait_step_recv(rc, idx, r, recv_posted);
	if (rc->o->server) {
		if (r->kind == RK_STEP_SEND_S2C) {
			wr.nsge = region_sges(rc->buf, r->bytes, nsge, sg);
			ret = rk_post(rc->conn->qp, &wr);
			if (ret)
				return ret;
			return rk_conn_wait(rc->conn, wr.wr_id, "SEND", NULL);
		}
		if (rc->o->inject == RK_RCFLOW_INJECT_NO_RECV && (r->kind == RK_STEP_SEND_C2S ||
						  r->kind == RK_STEP_SEND_IMM_C2S))
			rk_warn("--inject no-recv: posting no receive for the client's SEND");
		return 0; /* the client acts on our buffer */
	}
	return client_post(rc, idx, r);
}

/* After "done": check what arrived here, read words, take the preview. */
static int step_finish(struct rc *rc, int idx, struct rk_rcflow_step *r)
{
	bool server = rc->o->server;
	uint64_t want_before = r->kind == RK_STEP_FADD ? FADD_START : FADD_START + FADD_ADD;
	uint64_t want_after = r->kind == RK_STEP_FADD ? FADD_START + FADD_ADD : CSWAP_SWAP;
	uint64_t w = 0;
	int ret = 0;

	switch (r->kind) {
	case RK_STEP_SEND_C2S:
	case RK_STEP_SEND_IMM_C2S:
	case RK_STEP_WRITE:
	case RK_STEP_WRITE_IMM:
		if (server)
			ret = check_content(rc, r, idx);
		break;
	case RK_STEP_SEND_S2C:
	case RK_STEP_READ:
		if (!server)
			ret = check_content(rc, r, idx);
		break;
	case RK_STEP_FADD:
	case RK_STEP_CSWAP:
		r->has_word = true;
		ret = read_word(rc, &w);
		if (ret)
			break;
		if (server) {
			r->word_after = w;
			if (w != want_after) {
				rk_error("%s: the word is %" PRIu64 ", %" PRIu64 " was due",
					 rk_rcflow_step_name(r->kind), w, want_after);
				ret = -EIO;
			}
		} else {
			/* The client's result buffer holds the value before. */
			r->word_before = w;
			r->word_after = want_after;
			if (w != want_before) {
				rk_error("%s returned %" PRIu64 ", %" PRIu64 " was in the word",
					 rk_rcflow_step_name(r->kind), w, want_before);
				ret = -EIO;
			}
		}
		r->checked = true;
		r->bad_offset = -1;
		break;
	}
	take_preview(rc, r);
	return ret;
}
/* One step: prepare, sync "ready", act, sync "done" carrying our status,
 * finish. Either side's failure stops both. */
static int run_step(struct rc *rc, int idx)
{
	struct rk_rcflow_step *r = &rc->res->steps[idx];
	struct rk_ctl *ctl = rc->conn->ctl;
	int tmo = rc->conn->timeout_ms;
	int ret;

	r->kind = rc->flow[idx];
	/* The client's size: the server's -s is only its buffer's size. */
	r->bytes = r->kind == RK_STEP_FADD || r->kind == RK_STEP_CSWAP ? 8 : rc->conn->request.size;
	r->bad_offset = -1;
	/* Post this side's receive before "ready", so the peer's SEND never
	 * meets an empty queue (an RNR NAK and a retry). With CM the control
	 * messages share this receive queue: the channel's receive, kept posted,
	 * is ahead of ours and takes the peer's "ready" (conn_opts()); where it
	 * is not kept, ours goes up after "ready". */
	bool early = step_recv_sges(rc, r) >= 0 &&
		     (!rc->conn->cm_mode || rc->conn->ctl_keep_receives);

	ret = step_prepare(rc, idx, r);
	if (!ret && early)
		ret = post_step_recv(rc, idx, r);
	if (!ret)
		ret = rk_ctl_sync(ctl, (uint32_t)(2 * idx + 1), 0, tmo);
	if (!ret) {
		ret = step_act(rc, idx, r, early);
		r->status = ret;
		/* Tell the peer how it went, whatever it was. */
		int sret = rk_ctl_sync(ctl, (uint32_t)(2 * idx + 2), ret, tmo);

		if (!ret)
			ret = sret;
	}
	if (!ret)
		ret = step_finish(rc, idx, r);
	r->status = ret;
	rc->res->done = idx + 1;
	emit(rc, RK_RCFLOW_STEP, idx);
	return ret;
}


/* ---- the run ---- */

/* The connection as the result reports it. */
static void note_connected(struct rc *rc)
{
	const struct rk_conn *c = rc->conn;
	struct rk_rcflow_result *r = rc->res;

	r->connected = true;
	snprintf(r->device, sizeof(r->device), "%s", c->dev->info.name);
	r->port_num = c->port_num;
	r->has_gid = c->has_gid;
	r->gid = c->gid;
	r->cm = c->cm_mode;
	snprintf(r->peer, sizeof(r->peer), "%s", c->peer);
	r->qpn = c->qp->qp->qp_num;
	/* RDMA CM's are read back from the QP it connected. */
	r->peer_qpn = c->cm_mode ? c->qp->remote.qpn : c->remote.qpn;
	r->path_mtu = rk_mtu_bytes(c->cm_mode ? c->qp->path.path_mtu : c->path_mtu);
	r->rkey = rc->buf->rkey;
	r->reply = c->reply;
}

/* The memory asked for that this machine cannot give: say so at once, not
 * when the first client comes or after connecting. */
static int check_mem(const struct rk_rcflow_opts *o)
{
	struct rk_region_opts ro = {.kind = o->mem, .odp = o->odp};

	return rk_region_precheck(o->device, &ro, o->size);
}

/* Each fault: its name and the side that injects it. */
static const struct {
	const char *name;
	bool server;
} faults[] = {
	[RK_RCFLOW_INJECT_WRONG_RKEY] = {"wrong-rkey", false},
	[RK_RCFLOW_INJECT_OUTSIDE] = {"outside", false},
	[RK_RCFLOW_INJECT_NO_ACCESS] = {"no-access", true},
	[RK_RCFLOW_INJECT_NO_RECV] = {"no-recv", true},
};

#define NFAULTS (sizeof(faults) / sizeof(faults[0]))
#define FAULT_SIDES "client: wrong-rkey, outside; server: no-access, no-recv"

int rk_rcflow_inject_parse(const char *name, enum rk_rcflow_inject *inject_p)
{
	for (size_t i = RK_RCFLOW_INJECT_NONE + 1; name && i < NFAULTS; i++)
		if (!strcmp(name, faults[i].name)) {
			*inject_p = (enum rk_rcflow_inject)i;
			return 0;
		}
	return -EINVAL;
}

/* What rk_rcflow_check() refuses, or NULL. */
static const char *check_why(const struct rk_rcflow_opts *o, char *buf, size_t len)
{
	enum rk_rcflow_step_kind flow[RK_RCFLOW_MAX_STEPS];
	int sge = o->sge ? o->sge : 1;

	if (!o->server && !o->host)
		return "a client needs the server's address";
	if (o->size < 1 || o->size > UINT32_MAX)
		return "option --size: not 1..4 GiB";
	if (sge < 1 || sge > RK_RCFLOW_MAX_SGE)
		return "option --sge: not 1..64";
	if ((uint64_t)sge > o->size) {
		snprintf(buf, len, "option --sge: %d pieces do not fit in %" PRIu64 " bytes", sge,
			 o->size);
		return buf;
	}
	if ((!o->server || o->op != RK_RCFLOW_OP_ANY) && flow_of(o->op, flow) < 0)
		return "the op code is not one of rk_rcflow_op_parse()'s";
	if (o->op != RK_RCFLOW_OP_ANY && rk_rcflow_has_atomics(o->op) && o->size < 8)
		return "option --size: atomics need at least 8 bytes";
	if (!o->server && o->mem == RK_MEM_DM)
		return "device memory is for the server's buffer (rc --server --mem dm)";
	if ((unsigned int)o->mem > RK_MEM_AUTO)
		return "the memory kind is not one of region.h's";
	if ((unsigned int)o->inject >= NFAULTS ||
	    (o->inject && faults[o->inject].server != o->server)) {
		snprintf(buf, len, "option --inject: %s is not a fault this side can inject ("
			 FAULT_SIDES ")", (unsigned int)o->inject < NFAULTS ?
			 faults[o->inject].name : "this code");
		return buf;
	}
	if (o->srq && !o->server)
		return "option --srq is the server's (its QP receives the client's SENDs from the "
		       "SRQ)";
	return NULL;
}

int rk_rcflow_check(const struct rk_rcflow_opts *o, char *why, size_t why_len)
{
	char buf[200];
	const char *bad = check_why(o, buf, sizeof(buf));

	if (!bad)
		return 0;
	snprintf(why, why_len, "%s", bad);
	return -EINVAL;
}

/* rk_rcflow_check(), and what only a run refuses: an SRQ over RDMA CM. */
static int check_opts(const struct rk_rcflow_opts *o)
{
	char why[200];

	if (!rk_rcflow_check(o, why, sizeof(why))) {
		if (!o->srq || !o->cm)
			return 0;
		snprintf(why, sizeof(why), "--srq with --cm: over RDMA CM the control messages "
			 "travel on the QP's own receives, which an SRQ would take; use the TCP "
			 "exchange");
	}
	rk_error("RC flow: %s", why);
	return -EINVAL;
}

/* The server listens: a client may come now. */
static void listening(void *arg)
{
	emit(arg, RK_RCFLOW_WAITING, -1);
}

static void conn_opts(struct rc *rc, struct rk_conn_opts *co, struct rk_path_attr *path)
{
	const struct rk_rcflow_opts *o = rc->o;

	memset(co, 0, sizeof(*co));
	co->server = o->server;
	co->host = o->server ? NULL : o->host;
	co->port = o->port;
	co->cm = o->cm;
	co->device = o->device;
	co->port_num = o->port_num;
	co->gid_index = o->gid_index;
	co->timeout_ms = o->timeout_ms;
	co->accept_timeout_ms = o->accept_timeout_ms;
	co->events = o->events;
	co->traffic = o->traffic;
	co->transport = RK_RC;
	/* Over CM, every control message finds a receive waiting: without,
	 * about three RNR NAKs a step in the counters this run reports. One,
	 * as the step's own receives share the queue; none with --inject
	 * no-recv, whose client SEND must meet an empty queue. */
	co->ctl_keep_receives = o->inject != RK_RCFLOW_INJECT_NO_RECV ? 1 : 0;
	co->qp.max_send_wr = 16;
	co->qp.max_recv_wr = 16;
	co->qp.max_send_sge = (uint32_t)rc->sge;
	co->qp.max_recv_sge = (uint32_t)rc->sge;
	rk_path_defaults(path);
	path->rnr_retry = o->rnr_retry;
	path->retry_cnt = o->retry;
	co->path = path;
	co->prepare = prepare;
	co->on_request = on_request;
	co->auth_file = o->auth_file;
	co->release = release;
	co->on_listening = listening;
	co->arg = rc;
	if (o->server && o->srq) {
		rc->srq_opts = o->srq_opts;
		rc->srq_opts.slot_size = (uint32_t)o->size;
		co->srq = &rc->srq_opts;
	}
}

/* Connect, run every step, and a last sync: neither side tears down while
 * the other still works. */
static int run(struct rc *rc)
{
	struct rk_conn_opts co;
	struct rk_path_attr path;
	int ret;

	conn_opts(rc, &co, &path);
	if (rc->pending)
		ret = rk_conn_establish_accepted(rc->pending, &co, &rc->conn);
	else
		ret = rk_conn_establish(&co, &rc->conn);
	rc->pending = NULL; /* taken either way */
	if (ret)
		return ret;
	rc->t_connected = now_ns();
	note_connected(rc);
	if (!rc->o->server)
		ret = check_reply(rc);
	if (ret)
		return ret;
	emit(rc, RK_RCFLOW_CONNECTED, -1);
	for (int i = 0; !ret && i < rc->res->nsteps; i++)
		ret = run_step(rc, i);
	rc->t_done = now_ns();
	if (!ret)
		ret = rk_ctl_sync(rc->conn->ctl, 1000, 0, rc->conn->timeout_ms);
	/* Over CM the last SYNC travels on the QP: the client, which may have
	 * read the server's before its ACK left, lets the server go first. */
	if (!ret && !rc->o->server && rc->conn->cm)
		rk_cm_wait_peer_left(rc->conn->cm, 2000);
	return ret;
}

/* The flow once, as opts says; pending: a server's client already accepted
 * (closed here on failure). Its connected span in *span_p (may be NULL). */
static int rcflow_run(const struct rk_rcflow_opts *opts, struct rk_conn *pending,
		      struct rk_rcflow_result *result, struct rk_span *span_p)
{
	struct rc rc = {.o = opts, .res = result, .sge = opts->sge ? opts->sge : 1,
			.pending = pending};
	int ret;

	memset(result, 0, sizeof(*result));
	result->op = opts->op;
	if (opts->xrc) {
		rk_conn_close(pending);
		return rk_srq_xrc_refuse("rc", opts->device);
	}
	ret = check_opts(opts);
	if (!ret && opts->op != RK_RCFLOW_OP_ANY)
		build_flow(&rc);
	if (!ret && !pending)
		ret = check_mem(opts);
	if (!ret) {
		rc.scratch = malloc(2 * opts->size);
		ret = rc.scratch ? run(&rc) : -ENOMEM;
	}
	rk_conn_close(rc.pending); /* not taken: an early failure */
	rk_run_counters_stop(&result->counters);
	if (rc.conn && rc.conn->srq) {
		result->srq = true;
		rk_srq_get_stats(rc.conn->srq, &result->srq_stats);
	}
	rk_conn_close(rc.conn);
	free(rc.scratch);
	if (span_p) {
		span_p->start_ns = rc.t_connected;
		span_p->end_ns = rc.t_done > rc.t_connected ? rc.t_done : rc.t_connected;
	}
	return ret;
}

int rk_rcflow_run(const struct rk_rcflow_opts *opts, struct rk_rcflow_result *result)
{
	return rcflow_run(opts, NULL, result, NULL);
}

/* ---- a server of several clients at once ---- */

struct rc_server {
	const struct rk_rcflow_opts *opts;
	void (*on_client)(const struct rk_rcflow_client *c, void *arg);
	void *arg;
};

static int serve_client(struct rk_conn *pending, void *client, void *arg)
{
	const struct rc_server *s = arg;
	struct rk_rcflow_client *c = client;
	struct rk_rcflow_opts o = *s->opts;
	int ret;

	o.on_event = NULL;
	ret = rcflow_run(&o, pending, &c->result, &c->span);
	for (int i = 0; i < c->result.done; i++) {
		if (!c->result.steps[i].status) {
			c->out.done++;
			c->out.bytes += c->result.steps[i].bytes;
		}
	}
	c->out.msgs = c->out.done;
	return ret;
}

static void client_ended(const void *client, void *arg)
{
	const struct rc_server *s = arg;

	s->on_client(client, s->arg);
}

/* Its one span: connected .. every step done. */
static size_t client_spans(const void *client, struct rk_span *spans)
{
	const struct rk_rcflow_client *c = client;

	if (!c->out.arrived)
		return 0;
	if (spans)
		spans[0] = c->span;
	return 1;
}

int rk_rcflow_serve_clients(const struct rk_rcflow_opts *opts, uint32_t n,
			    void (*on_client)(const struct rk_rcflow_client *c, void *arg),
			    void *arg, struct rk_rcflow_clients *rep)
{
	struct rc_server s = {.opts = opts, .on_client = on_client, .arg = arg};
	struct clients_server cs = {.size = sizeof(*rep->clients), .serve = serve_client,
				    .ended = on_client ? client_ended : NULL, .arg = &s,
				    .spans = client_spans};
	struct rc rc0 = {.o = opts, .sge = opts->sge ? opts->sge : 1};
	struct rk_conn_opts co;
	struct rk_path_attr path;
	void *clients;
	int ret;

	memset(rep, 0, sizeof(*rep));
	ret = clients_check("RC flow", opts->server, n);
	if (ret)
		return ret;
	ret = opts->xrc ? rk_srq_xrc_refuse("rc", opts->device) : check_opts(opts);
	if (!ret)
		ret = check_mem(opts);
	if (ret)
		return ret;
	conn_opts(&rc0, &co, &path); /* the listener's: where, and on_listening */
	ret = clients_serve(&co, n, opts->accept_timeout_ms, &cs, &clients, &rep->total);
	if (ret)
		return ret;
	rep->wanted = n;
	rep->clients = clients;
	return 0;
}

void rk_rcflow_clients_free(struct rk_rcflow_clients *rep)
{
	free(rep->clients);
	memset(rep, 0, sizeof(*rep));
}
