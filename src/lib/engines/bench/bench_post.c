/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The benchmark's posting and polling: batches of requests as one doorbell
 * (the ibv_wr_* API or ibv_post_send lists), the end-of-round SEND, receives,
 * and completions in batches. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/pattern.h>
#include <rdmakit/status.h>

#include "engines/bench/bench_int.h"

/* The wr_id of request p of QP i: signaled when it is every se-th or the
 * round's last, its wr_id then says how many requests its completion covers
 * (never 0); 0 for an unsignaled one. */
static inline uint64_t take_signal(struct bqp *q, uint32_t i, uint64_t p, uint32_t se)
{
	uint64_t id;

	q->unsig++;
	if ((p + 1) % se != 0 && p + 1 != q->target)
		return 0;
	id = (uint64_t)i << 48 | q->unsig;
	q->unsig = 0;
	return id;
}

/* Post n requests on QP i as one doorbell. */
int bench_post_batch(struct rk_bench *b, uint32_t i, uint32_t n, uint32_t size, bool inl)
{
	struct bqp *q = &b->q[i];
	uint32_t se = b->se;
	enum rk_bench_test t = b->info.test;
	int ret;

	/* Inline requests go through ibv_post_send: the rxe provider of
	 * rdma-core 44 leaves the WQE's residual length at 0 in
	 * ibv_wr_set_inline_data() (fixed upstream later), and the request then
	 * fails with IBV_WC_LOC_QP_OP_ERR. */
	if (q->qpx && !inl) {
		struct ibv_qp_ex *x = q->qpx;
		uint64_t addr = (uintptr_t)out_slot(b, i);

		ibv_wr_start(x);
		for (uint32_t k = 0; k < n; k++) {
			uint64_t p = q->posted + k, id = take_signal(q, i, p, se);

			x->wr_id = id;
			x->wr_flags = id ? IBV_SEND_SIGNALED : 0;
			switch (t) {
			case RK_BENCH_SEND: ibv_wr_send(x); break;
			case RK_BENCH_WRITE: ibv_wr_rdma_write(x, q->rkey, q->raddr); break;
			case RK_BENCH_READ: ibv_wr_rdma_read(x, q->rkey, q->raddr); break;
			case RK_BENCH_FETCH_ADD:
				ibv_wr_atomic_fetch_add(x, q->rkey, q->raddr, 1);
				break;
			case RK_BENCH_CMP_SWAP:
				ibv_wr_atomic_cmp_swp(x, q->rkey, q->raddr, p, p + 1);
				break;
			}
			if (q->ah)
				ibv_wr_set_ud_addr(x, q->ah, q->remote.qpn,
						   q->remote.qkey ? q->remote.qkey : RK_DEFAULT_QKEY);
			ibv_wr_set_sge(x, b->mr->mr->lkey, addr, is_atomic(t) ? 8 : size);
		}
		ret = ibv_wr_complete(x);
	} else {
		struct ibv_send_wr *bad;

		for (uint32_t k = 0; k < n; k++) {
			struct ibv_send_wr *w = &q->wr[k];
			uint64_t p = q->posted + k, id = take_signal(q, i, p, se);

			w->next = k + 1 < n ? w + 1 : NULL; /* the list ends at n */
			w->wr_id = id;
			w->send_flags = id ? IBV_SEND_SIGNALED : 0;
			if (inl)
				w->send_flags |= IBV_SEND_INLINE;
			q->sge[k].length = is_atomic(t) ? 8 : size;
			if (t == RK_BENCH_CMP_SWAP) {
				w->wr.atomic.compare_add = p;
				w->wr.atomic.swap = p + 1;
			}
		}
		ret = ibv_post_send(q->qp->qp, &q->wr[0], &bad);
	}
	if (ret) {
		ret = rk_verbs_err(ret);
		rk_error("post %u %s requests on QP 0x%x: %s (%" PRIu64 " outstanding, send queue "
			 "%u)", n, rk_bench_test_str(t), q->qp->qp->qp_num, rk_strerror(ret),
			 q->posted - q->completed, b->info.tx_depth);
		return ret;
	}
	q->posted += n;
	return 0;
}

/* The SEND with immediate that ends a SEND round on QP i: its immediate is
 * the number of messages sent, so the receiver knows what to expect. On
 * iWARP (no_imm) a plain SEND of the round's bytes and the count after them:
 * no data message has that length. */
int bench_post_sentinel(struct rk_bench *b, uint32_t i)
{
	struct bqp *q = &b->q[i];
	uint32_t imm = htonl((uint32_t)q->completed);
	uint64_t id = WRID_SENTINEL | (uint64_t)i << 48;
	int ret;

	if (b->no_imm) {
		struct ibv_send_wr w = q->wr[0], *bad;
		struct ibv_sge sge = q->sge[0];

		/* The out-slot's bytes past the round's are no message's. */
		memcpy(out_slot(b, i) + b->round_size, &imm, SENTINEL_COUNT_LEN);
		sge.length = b->round_size + SENTINEL_COUNT_LEN;
		w.sg_list = &sge;
		w.next = NULL;
		w.wr_id = id;
		w.opcode = IBV_WR_SEND;
		w.send_flags = IBV_SEND_SIGNALED;
		ret = ibv_post_send(q->qp->qp, &w, &bad);
	} else if (q->qpx) {
		ibv_wr_start(q->qpx);
		q->qpx->wr_id = id;
		q->qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send_imm(q->qpx, imm);
		if (q->ah)
			ibv_wr_set_ud_addr(q->qpx, q->ah, q->remote.qpn,
					   q->remote.qkey ? q->remote.qkey : RK_DEFAULT_QKEY);
		ibv_wr_set_sge(q->qpx, b->mr->mr->lkey, (uintptr_t)out_slot(b, i), 1);
		ret = ibv_wr_complete(q->qpx);
	} else {
		struct ibv_send_wr w = q->wr[0], *bad;
		struct ibv_sge sge = q->sge[0];

		sge.length = 1;
		w.sg_list = &sge;
		w.next = NULL;
		w.wr_id = id;
		w.opcode = IBV_WR_SEND_WITH_IMM;
		w.imm_data = imm;
		w.send_flags = IBV_SEND_SIGNALED;
		ret = ibv_post_send(q->qp->qp, &w, &bad);
	}
	if (ret) {
		ret = rk_verbs_err(ret);
		rk_error("post the end-of-round SEND on QP 0x%x: %s", q->qp->qp->qp_num,
			 rk_strerror(ret));
		return ret;
	}
	q->sentinel_posted = true;
	return 0;
}

int bench_post_recvs(struct rk_bench *b, uint32_t i, uint32_t n)
{
	struct bqp *q = &b->q[i];
	struct ibv_recv_wr *bad;
	int ret;

	while (n) {
		uint32_t k = n < b->info.post_list ? n : b->info.post_list;

		if (k > MAX_POST_LIST)
			k = MAX_POST_LIST;
		q->rwr[k - 1].next = NULL;
		ret = ibv_post_recv(q->qp->qp, &q->rwr[0], &bad);
		if (k < MAX_POST_LIST)
			q->rwr[k - 1].next = &q->rwr[k];
		if (ret) {
			ret = rk_verbs_err(ret);
			rk_error("post %u receives on QP 0x%x: %s", k, q->qp->qp->qp_num,
				 rk_strerror(ret));
			return ret;
		}
		q->rq_out += k;
		n -= k;
	}
	return 0;
}

const char *bench_test_verb(enum rk_bench_test t)
{
	static const char *const v[] = {"SEND", "RDMA WRITE", "RDMA READ", "FETCH_ADD",
					"CMP_SWAP"};

	return v[t];
}

/* A failed poll of the worker's send or receive CQ (ibv_poll_cq's n):
 * logged, naming the CQ; -EIO. Out of the polling loops' way. */
static int poll_failed(int n, const char *which)
{
	rk_error("poll the %s CQ: %s", which, rk_strerror(rk_verbs_err(n)));
	return -EIO;
}

/* Poll one of the worker's CQs (its send CQ or its receive CQ) and hand
 * each successful completion to take(); a failed one is noted and its error
 * returned, named by the operation (found only then: this is the busy
 * loop). 0 with *got_p set, or a negative errno. */
static inline int poll_worker_cq(struct bworker *w, struct rk_cq *cq,
				 int (*take)(struct rk_bench *b, const struct ibv_wc *wc),
				 int *got_p)
{
	struct rk_bench *b = w->b;
	int n = ibv_poll_cq(cq->cq, (int)b->info.cq_batch, w->wc);

	if (n < 0)
		return poll_failed(n, cq == w->scq ? "send" : "receive");
	for (int k = 0; k < n; k++) {
		const struct ibv_wc *wc = &w->wc[k];
		int ret;

		if (wc->status != IBV_WC_SUCCESS) {
			bench_note_wc(b, wc);
			return rk_wc_check(wc, cq == w->scq ? bench_test_verb(b->info.test) :
								"receive");
		}
		ret = take(b, wc);
		if (ret)
			return ret;
	}
	*got_p = n;
	return 0;
}

/* A request of this side completed. */
static inline int send_done(struct rk_bench *b, const struct ibv_wc *wc)
{
	struct bqp *q;

	if (WRID_QP(wc->wr_id) >= b->info.qps) {
		rk_error("completion with an unknown wr_id 0x%" PRIx64, wc->wr_id);
		return -EPROTO;
	}
	q = &b->q[WRID_QP(wc->wr_id)];
	q->carry = 0;
	if (wc->wr_id & WRID_SENTINEL)
		q->sentinel_done = true;
	else
		q->completed += WRID_COUNT(wc->wr_id);
	return 0;
}

/* Completions of this worker's requests. */
int bench_poll_send(struct bworker *w, int *got_p)
{
	return poll_worker_cq(w, w->scq, send_done, got_p);
}

/* Top the worker's receive queues up again, in post lists (the SRQ: its
 * own lists, for every worker). */
int bench_refill_recvs(struct bworker *w)
{
	struct rk_bench *b = w->b;

	if (b->srq)
		return rk_srq_refill(b->srq);

	for (uint32_t i = w->first; i < w->first + w->count; i++) {
		struct bqp *q = &b->q[i];
		uint32_t room = b->info.rx_depth - q->rq_out;

		if (room >= b->info.post_list) {
			int ret = bench_post_recvs(b, i, room - room % b->info.post_list);

			if (ret)
				return ret;
		}
	}
	return 0;
}

/* The index of the data QP with QPN qpn (the SRQ's completions name their
 * QP only so), or -1. */
static int64_t qp_index(const struct rk_bench *b, uint32_t qpn)
{
	uint32_t lo = 0, hi = b->info.qps;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint32_t v = (uint32_t)(b->qpn_sorted[mid] >> 32);

		if (v == qpn)
			return (int64_t)(uint32_t)b->qpn_sorted[mid];
		if (v < qpn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Whether a received message (its bytes at buf) is the peer's end-of-round
 * SEND, and then the count it carries into *count_p. */
static inline bool sentinel_of(const struct rk_bench *b, const struct ibv_wc *wc,
			       const uint8_t *buf, uint32_t *count_p)
{
	uint32_t n;

	if (!b->no_imm) {
		if (!(wc->wc_flags & IBV_WC_WITH_IMM))
			return false;
		*count_p = ntohl(wc->imm_data);
		return true;
	}
	if (wc->byte_len != b->round_size + SENTINEL_COUNT_LEN)
		return false;
	memcpy(&n, buf + b->round_size, SENTINEL_COUNT_LEN);
	*count_p = ntohl(n);
	return true;
}

/* A receive from the SRQ: which QP it came to, and its bytes checked now
 * (the slot goes back to the SRQ at once); an end-of-round SEND's count
 * into *count_p (*sentinel_p true). Returns the QP's index or a negative
 * errno. */
static int64_t srq_received(struct rk_bench *b, const struct ibv_wc *wc, bool *sentinel_p,
			    uint32_t *count_p)
{
	uint32_t off = b->info.transport == RK_UD ? UD_GRH : 0;
	const uint8_t *buf;
	int64_t i = qp_index(b, wc->qp_num);
	struct bqp *q;
	int ret;

	if (i < 0) {
		rk_error("an SRQ receive completion for QP 0x%x, not one of this side's",
			 wc->qp_num);
		return -EPROTO;
	}
	ret = rk_srq_take(b->srq, wc, (const void **)&buf);
	if (ret)
		return ret;
	q = &b->q[i];
	*sentinel_p = sentinel_of(b, wc, buf + off, count_p);
	if (!*sentinel_p) {
		ssize_t bad = -1;

		if (wc->byte_len != b->round_size + off)
			bad = wc->byte_len < b->round_size + off ? (ssize_t)wc->byte_len : 0;
		else
			bad = rk_pattern_check(buf + off, b->round_size, b->round_seed);
		if (bad >= 0 && !q->bad_data++) {
			q->bad_at = bad;
			q->bad_len = wc->byte_len;
		}
	}
	rk_srq_release(b->srq, wc);
	return i;
}

/* A receive completed: a message, or the peer's end-of-round (with
 * immediate data). */
static inline int recv_done(struct rk_bench *b, const struct ibv_wc *wc)
{
	struct bqp *q;
	uint32_t count = 0;
	bool sentinel = false;

	if (b->srq) {
		int64_t i = srq_received(b, wc, &sentinel, &count);

		if (i < 0)
			return (int)i;
		q = &b->q[i];
	} else if (wc->wr_id >= b->info.qps) {
		rk_error("receive completion with an unknown wr_id 0x%" PRIx64, wc->wr_id);
		return -EPROTO;
	} else {
		q = &b->q[wc->wr_id];
		q->rq_out--;
		sentinel = sentinel_of(b, wc, in_slot(b, (uint32_t)wc->wr_id), &count);
	}
	if (sentinel) {
		q->got_sentinel = true;
		q->expected = count;
	} else {
		q->received++;
	}
	return 0;
}

/* Receive completions; with refill, keeps the receive queues topped up (a
 * ping-pong refills after its answer is posted, off the critical path). */
int bench_poll_recv(struct bworker *w, int *got_p, bool refill)
{
	int ret = poll_worker_cq(w, w->rcq, recv_done, got_p);

	if (ret)
		return ret;
	return *got_p > 0 && refill ? bench_refill_recvs(w) : 0;
}
