/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The benchmark's setup: the fast path chosen from the device's limits, the
 * CQs, memory and data QPs, and their exchange over the control channel
 * (BENCH_SETUP messages of wire.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/ctl.h>

#include "engines/bench/bench_int.h"

/* Bench exchange version 1 (before the BENCH_* messages of wire.h) sent its
 * SETUP as a HELLO with this op: such a client is refused by name. */
#define BENCH_V1_SETUP_OP 0xBE000001u

/* Each test's work request opcode, the remote access the side that is the
 * target needs, and its ibv_wr_* API flags. */
static const struct {
	enum ibv_wr_opcode opcode;
	int remote_access;
	uint64_t ops_flags;
} tests[] = {
	[RK_BENCH_SEND] = {IBV_WR_SEND, 0, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM},
	[RK_BENCH_WRITE] = {IBV_WR_RDMA_WRITE, IBV_ACCESS_REMOTE_WRITE, IBV_QP_EX_WITH_RDMA_WRITE},
	[RK_BENCH_READ] = {IBV_WR_RDMA_READ, IBV_ACCESS_REMOTE_READ, IBV_QP_EX_WITH_RDMA_READ},
	[RK_BENCH_FETCH_ADD] = {IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_ACCESS_REMOTE_ATOMIC,
				IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD},
	[RK_BENCH_CMP_SWAP] = {IBV_WR_ATOMIC_CMP_AND_SWP, IBV_ACCESS_REMOTE_ATOMIC,
			       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP},
};

/* Whether this side is the target of the peer's operations. */
static bool is_target(const struct rk_bench_info *in)
{
	if (in->server || in->bidir)
		return true;
	/* write latency: the server writes its pong into the client */
	return in->mode == RK_BENCH_LAT && in->test == RK_BENCH_WRITE;
}

static enum ibv_qp_type qp_type(enum rk_transport t)
{
	return t == RK_UD ? IBV_QPT_UD : t == RK_UC ? IBV_QPT_UC : IBV_QPT_RC;
}

/* Create and destroy a throwaway QP: does the provider take these caps (and
 * the ibv_wr_* API when ops is not 0)? Quiet: probing is expected to fail. */
static int probe_qp(struct rk_bench *b, uint64_t ops, uint32_t inl, uint32_t *granted_p)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.send_cq = b->w[0].scq->cq;
	a.recv_cq = b->w[0].rcq->cq;
	a.qp_type = qp_type(b->info.transport);
	a.cap.max_send_wr = b->info.tx_depth;
	a.cap.max_recv_wr = b->info.rx_depth;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = inl;
	a.pd = b->conn->pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = ops;
	}
	errno = 0;
	qp = ibv_create_qp_ex(b->conn->dev->ctx, &a);
	if (!qp)
		return errno ? -errno : -EINVAL;
	if (granted_p)
		*granted_p = a.cap.max_inline_data;
	ibv_destroy_qp(qp);
	return 0;
}

/* The inline size the provider grants, asking for want first and halving
 * while it refuses (a few creates: providers grant powers of two, or round a
 * request up, which the read-back shows). */
static int probe_inline(struct rk_bench *b, uint64_t ops, uint32_t want, uint32_t *granted_p)
{
	uint32_t ask = want, granted = 0;
	int ret;

	for (;;) {
		ret = probe_qp(b, ops, ask, &granted);
		if (!ret || !ask)
			break;
		ask /= 2;
	}
	if (ret)
		return ret;
	*granted_p = granted;
	return 0;
}

/* Many QPs: every QP's requests and receives fit its worker's CQs (which
 * cq_size() caps at the device's max_cqe), so each QP gets fewer; post
 * lists and signaling shrink with the send depth (progress needs a signaled
 * request among those outstanding), receives stay at two post lists. */
static void fit_cqs(struct rk_bench *b)
{
	struct rk_bench_info *in = &b->info;
	uint32_t most = (in->qps + b->nworkers - 1) / b->nworkers; /* QPs of a worker */
	uint32_t per = (uint32_t)b->conn->dev->info.max_cqe / most - 1;

	if (in->tx_depth <= per && in->rx_depth <= per)
		return;
	if (in->tx_depth > per)
		in->tx_depth = per;
	while (in->post_list + in->signal_every > in->tx_depth && in->signal_every > 1)
		in->signal_every /= 2;
	while ((in->post_list + in->signal_every > in->tx_depth || 2 * in->post_list > per) &&
	       in->post_list > 1)
		in->post_list /= 2;
	if (in->rx_depth > per)
		in->rx_depth = per;
	rk_debug("bench: %u QPs on CQs of %d entries: send depth %u, receive depth %u, post "
		 "list %u, signal every %u", in->qps, b->conn->dev->info.max_cqe, in->tx_depth,
		 in->rx_depth, in->post_list, in->signal_every);
}

static int choose_fast_path(struct rk_bench *b)
{
	const struct rk_bench_tuning *t = &b->o.tuning;
	struct rk_bench_info *in = &b->info;
	const struct rk_device_info *di = &b->conn->dev->info;
	bool lat = in->mode == RK_BENCH_LAT;
	uint32_t granted = 0;
	int ret;

	in->tx_depth = t->tx_depth ? t->tx_depth : lat ? 64 : 512;
	in->rx_depth = t->rx_depth ? t->rx_depth : lat ? 64 : 512;
	if (in->tx_depth > (uint32_t)di->max_qp_wr)
		in->tx_depth = (uint32_t)di->max_qp_wr;
	if (in->rx_depth > (uint32_t)di->max_qp_wr)
		in->rx_depth = (uint32_t)di->max_qp_wr;
	in->post_list = t->post_list ? t->post_list : lat ? 1 : 16;
	in->signal_every = t->signal_every ? t->signal_every : lat ? 16 : 64;
	in->cq_batch = t->cq_batch ? t->cq_batch : 32;
	in->inflight = t->inflight ? t->inflight : INFLIGHT_BYTES;
	in->max_rd_atomic = (uint32_t)di->max_qp_init_rd_atom;
	/* Measured on rxe in a 2-CPU guest: bandwidth gains from yielding
	 * early (the kernel moves the packets), a ping-pong loses. */
	in->yield_after = t->yield_after >= 0 ? (uint32_t)t->yield_after : lat ? 0 : YIELD_AFTER;
	if (in->post_list > MAX_POST_LIST || in->cq_batch > MAX_CQ_BATCH) {
		rk_error("bench: post lists of at most %d and CQ batches of at most %d (asked %u, "
			 "%u)", MAX_POST_LIST, MAX_CQ_BATCH, in->post_list, in->cq_batch);
		return -EINVAL;
	}
	/* Progress needs a signaled request among those outstanding. */
	if (in->post_list + in->signal_every > in->tx_depth) {
		if (t->signal_every && t->post_list && t->tx_depth) {
			rk_error("bench: post list %u + signal every %u exceeds the send queue "
				 "depth %u: raise --tx-depth", in->post_list, in->signal_every,
				 in->tx_depth);
			return -EINVAL;
		}
		while (in->post_list + in->signal_every > in->tx_depth && in->signal_every > 1)
			in->signal_every /= 2;
		while (in->post_list + in->signal_every > in->tx_depth && in->post_list > 1)
			in->post_list /= 2;
	}
	if (in->rx_depth < 2 * in->post_list)
		in->rx_depth = 2 * in->post_list;
	fit_cqs(b);

	b->ops_flags = tests[in->test].ops_flags;
	in->wr_api = false;
	if (b->cm_data) {
		/* rk_cm_create_qp() makes ibv_create_qp()'s QPs */
		if (b->o.tuning.wr_api > 0) {
			rk_error("bench: no ibv_wr_* API on %s: its data QPs are made for their "
				 "RDMA CM connections (iWARP)", di->name);
			return -EOPNOTSUPP;
		}
		snprintf(in->wr_api_why, sizeof(in->wr_api_why), "ibv_post_send: the data QPs "
			 "are made for their RDMA CM connections (iWARP)");
	} else if (b->o.tuning.wr_api != 0) {
		ret = probe_qp(b, b->ops_flags, 0, NULL);
		if (!ret) {
			in->wr_api = true;
			snprintf(in->wr_api_why, sizeof(in->wr_api_why),
				 "ibv_wr_* (ibv_qp_ex, send_ops_flags 0x%" PRIx64 ") for SGE requests, "
				 "ibv_post_send lists for inline ones", b->ops_flags);
		} else if (b->o.tuning.wr_api > 0) {
			rk_error("bench: %s has no ibv_wr_* API for %s QPs (ibv_create_qp_ex with "
				 "send_ops_flags: %s)", di->name, rk_transport_str(in->transport),
				 rk_strerror(ret));
			return -EOPNOTSUPP;
		} else {
			snprintf(in->wr_api_why, sizeof(in->wr_api_why),
				 "ibv_post_send: %s refuses send_ops_flags (%s)", di->name,
				 rk_strerror(ret));
		}
	} else {
		snprintf(in->wr_api_why, sizeof(in->wr_api_why), "ibv_post_send (asked)");
	}
	in->inline_asked = b->o.tuning.inline_max < 0 ? INLINE_ASK : (uint32_t)b->o.tuning.inline_max;
	in->inline_granted = 0;
	if (in->inline_asked) {
		ret = probe_inline(b, in->wr_api ? b->ops_flags : 0, in->inline_asked, &granted);
		if (ret) {
			rk_error("bench: %s refuses a %s QP of %u/%u WRs even without inline data: "
				 "%s", di->name, rk_transport_str(in->transport), in->tx_depth,
				 in->rx_depth, rk_strerror(ret));
			return ret;
		}
		in->inline_granted = granted;
		/* Use what was asked for, at most: a provider may round up. */
		if (b->o.tuning.inline_max >= 0 && granted > in->inline_asked)
			in->inline_granted = in->inline_asked;
	}
	return 0;
}

/* The data QPs and the control connection's against the device's max_qp:
 * 0, or -E2BIG with a sentence in why. */
static int qps_over_device(const struct rk_bench *b, char *why, size_t why_len)
{
	const struct rk_device_info *di = &b->conn->dev->info;

	if ((int64_t)b->info.qps + 1 <= di->max_qp)
		return 0;
	snprintf(why, why_len, "--qps %u: device %s allows max_qp %d (one QP is the control "
		 "connection's)", b->info.qps, di->name, di->max_qp);
	return -E2BIG;
}

/* Entries for qps QPs of depth each (and one more), within the device's limit. */
static int cq_size(const struct rk_device *dev, uint32_t qps, uint32_t depth)
{
	uint64_t n = (uint64_t)qps * (depth + 1);

	return n > (uint64_t)dev->info.max_cqe ? dev->info.max_cqe : (int)n;
}

/* The RC operations this side's buffer takes part in, for --odp. */
static uint32_t odp_ops(enum rk_bench_test test)
{
	switch (test) {
	case RK_BENCH_SEND: return IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV;
	case RK_BENCH_WRITE: return IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_RECV;
	case RK_BENCH_READ: return IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_RECV;
	default: return IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_RECV;
	}
}

int bench_mem_precheck(const struct rk_bench_opts *o)
{
	struct rk_region_opts ro = o->mem;

	ro.no_dm = true;
	/* A server learns the test from its client: the receives it always posts. */
	ro.odp_rc = o->conn.server ? IBV_ODP_SUPPORT_RECV : odp_ops(o->test);
	return rk_region_precheck(o->conn.device, &ro, 0);
}

/* The data buffer (2 slots per QP), of the kind asked: never device memory,
 * as the engine fills and checks it with the CPU. */
static int create_buffer(struct rk_bench *b)
{
	struct rk_bench_info *in = &b->info;
	struct rk_region_opts ro = b->o.mem;
	int ret, sink = 0;

	ro.no_dm = true;
	ro.odp_rc = odp_ops(in->test);
	if (ro.odp && in->transport != RK_RC) {
		rk_error("bench: --odp is checked and used for RC only (this run is %s)",
			 rk_transport_str(in->transport));
		return -EOPNOTSUPP;
	}
	/* iWARP: a READ's sink is written by the READ response as by a WRITE,
	 * so it needs remote write (as perftest and rc register it). */
	if (in->test == RK_BENCH_READ && rk_device_is_iwarp(b->conn->dev))
		sink = IBV_ACCESS_REMOTE_WRITE;
	ret = rk_region_alloc(b->conn->dev, b->conn->pd, 2 * in->qps * b->stride,
			      IBV_ACCESS_LOCAL_WRITE | b->access | sink, &ro, &b->region);
	if (ret)
		return ret;
	b->mr = b->region->host;
	in->mem = b->region->kind;
	in->mem_chosen = b->region->chosen;
	snprintf(in->mem_why, sizeof(in->mem_why), "%s", b->region->why);
	in->odp = ro.odp;
	return 0;
}

/* Receive CQ entries for count QPs: their receive queues, or all the SRQ
 * holds (any QP may take every receive of it), within the device's limit. */
static int rcq_size(const struct rk_bench *b, uint32_t count)
{
	struct rk_device *dev = b->conn->dev;
	uint64_t n;

	if (!b->info.srq)
		return cq_size(dev, count, b->info.rx_depth);
	n = (uint64_t)(b->o.srq_opts.depth ? b->o.srq_opts.depth : RK_SRQ_DEFAULT_DEPTH) +
	    count + 1;
	return n > (uint64_t)dev->info.max_cqe ? dev->info.max_cqe : (int)n;
}

static int qpn_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether this side receives in the run (SEND: the server, the client in
 * --bidir and latency), and so whether --srq is used; why not into
 * info.srq_why. */
static void srq_choice(struct rk_bench *b)
{
	struct rk_bench_info *in = &b->info;

	in->srq = false;
	in->srq_why[0] = '\0';
	if (!b->o.srq)
		return;
	if (in->test != RK_BENCH_SEND)
		snprintf(in->srq_why, sizeof(in->srq_why), "a %s run posts no receives",
			 rk_bench_test_str(in->test));
	else if (!in->server && !in->bidir && in->mode == RK_BENCH_BW)
		snprintf(in->srq_why, sizeof(in->srq_why), "this side only sends in a one-way "
			 "send run (the server receives: give it --srq)");
	else
		in->srq = true;
}

/* info.srq: the shared receive queue of every data QP, and the QPN map. */
static int create_srq(struct rk_bench *b)
{
	struct rk_srq_opts so = b->o.srq_opts;
	int ret;

	so.slot_size = (uint32_t)b->stride;
	ret = rk_srq_create(b->conn->pd, b->conn->dev, &so, &b->srq);
	if (ret)
		return ret;
	rk_srq_get_stats(b->srq, &b->info.srq_setup);
	b->qpn_sorted = calloc(b->info.qps, sizeof(*b->qpn_sorted));
	return b->qpn_sorted ? 0 : -ENOMEM;
}

/* The data QPs' attributes. */
static void qp_attr(const struct rk_bench *b, struct rk_qp_init_attr *qa)
{
	const struct rk_bench_info *in = &b->info;

	memset(qa, 0, sizeof(*qa));
	qa->transport = in->transport;
	qa->port_num = b->conn->port_num;
	qa->max_send_wr = in->tx_depth;
	qa->max_recv_wr = in->rx_depth;
	qa->max_inline_data = in->inline_granted;
	qa->gid = b->conn->has_gid ? &b->conn->gid : NULL;
	qa->srq = b->srq ? rk_srq_verbs(b->srq) : NULL;
}

/* The worker whose CQs QP i uses. */
static struct bworker *worker_of(struct rk_bench *b, uint32_t i)
{
	uint32_t k = 0;

	while (i >= b->w[k].first + b->w[k].count)
		k++;
	return &b->w[k];
}

/* Data QP i exists: what the provider granted it, and its QPN (the SRQ's
 * map, sorted once QP end-1 is made). */
static void qp_created(struct rk_bench *b, uint32_t i, uint32_t end)
{
	struct rk_bench_info *in = &b->info;
	struct bqp *q = &b->q[i];

	if (in->wr_api)
		q->qpx = ibv_qp_to_qp_ex(q->qp->qp);
	/* What the provider granted this QP, not what was asked. */
	if (q->qp->cap.max_inline_data < in->inline_granted)
		in->inline_granted = q->qp->cap.max_inline_data;
	in->qpn[i] = q->qp->qp->qp_num;
	if (b->qpn_sorted)
		b->qpn_sorted[i] = (uint64_t)in->qpn[i] << 32 | i;
	if (b->qpn_sorted && i + 1 == end && end == in->qps)
		qsort(b->qpn_sorted, in->qps, sizeof(*b->qpn_sorted), qpn_cmp);
}

/* Data QPs first..end-1, each on its worker's CQs (and the SRQ, info.srq). */
static int create_qps(struct rk_bench *b, uint32_t first, uint32_t end)
{
	struct rk_bench_info *in = &b->info;
	struct rk_device *dev = b->conn->dev;
	struct rk_qp_init_attr qa;
	int ret;

	qp_attr(b, &qa);
	for (uint32_t i = first; i < end; i++) {
		struct bqp *q = &b->q[i];
		struct bworker *w = worker_of(b, i);
		if (in->wr_api)
			ret = rk_qp_create_ex(b->conn->pd, dev, w->scq, w->rcq, &qa, b->ops_flags,
					      &q->qp);
		else
			ret = rk_qp_create(b->conn->pd, dev, w->scq, w->rcq, &qa, &q->qp);
		if (ret)
			return ret;
		qp_created(b, i, end);
	}
	return 0;
}

/* What the QPs share: CQs per worker, the fast path, the buffer, the SRQ. */
static int create_local(struct rk_bench *b)
{
	struct rk_bench_info *in = &b->info;
	struct rk_device *dev = b->conn->dev;
	char why[160];
	int ret;

	in->path_mtu = 0;
	in->device[0] = '\0';
	snprintf(in->device, sizeof(in->device), "%s", dev->info.name);
	in->port_num = b->conn->port_num;
	ret = rk_port_link_rate(dev, in->port_num, &in->link); /* the port is open: 0 */
	if (ret)
		return ret;
	if (qps_over_device(b, why, sizeof(why))) {
		rk_error("bench: %s", why);
		return -E2BIG;
	}
	srq_choice(b);
	/* iWARP: no immediate data; with --cm (the only way it connects) a
	 * CM connection per data QP, to the port the server's reply names. */
	b->no_imm = rk_device_is_iwarp(dev);
	/* Said, not dropped in silence: TCP retransmits an iWARP QP's data. */
	if (b->no_imm && (b->o.tuning.ack_timeout >= 0 || b->o.tuning.rnr_retry >= 0))
		rk_warn("bench: %s is an iWARP device: its QPs run over TCP, which retransmits "
			"by itself; --ack-timeout and --rnr-retry do not apply there",
			dev->info.name);
	if (!in->server && b->conn->cm_mode && b->no_imm) {
		if (!b->conn->reply.offset || b->conn->reply.offset > UINT16_MAX) {
			rk_error("bench: %s names no port for the data QPs' RDMA CM connections, "
				 "which %s (iWARP) needs: is it an older rdmakit?", b->conn->peer,
				 dev->info.name);
			return -EPROTO;
		}
		b->cm_data = true;
		b->data_port = (uint16_t)b->conn->reply.offset;
		b->data_token = b->conn->reply.addr;
	}
	in->has_gid = b->conn->has_gid;
	if (in->has_gid) {
		in->gid_index = b->conn->gid.index;
		rk_gid_str(&b->conn->gid.gid, in->gid, sizeof(in->gid));
	}
	/* Workers, each with its own CQs: probing needs the first's. The QPs
	 * are split into contiguous ranges. CQs are sized for the deepest use. */
	b->nworkers = in->threads;
	b->w = calloc(b->nworkers, sizeof(*b->w));
	if (!b->w)
		return -ENOMEM;
	in->tx_depth = b->o.tuning.tx_depth ? b->o.tuning.tx_depth : 512;
	in->rx_depth = b->o.tuning.rx_depth ? b->o.tuning.rx_depth : 512;
	for (uint32_t k = 0; k < b->nworkers; k++) {
		struct bworker *w = &b->w[k];

		w->b = b;
		w->first = (uint32_t)((uint64_t)k * in->qps / b->nworkers);
		w->count = (uint32_t)((uint64_t)(k + 1) * in->qps / b->nworkers) - w->first;
		ret = rk_cq_create(dev, cq_size(dev, w->count, in->tx_depth), false, &w->scq);
		if (!ret)
			ret = rk_cq_create(dev, rcq_size(b, w->count), false, &w->rcq);
		if (ret)
			return ret;
	}
	ret = choose_fast_path(b);
	if (ret)
		return ret;
	for (uint32_t k = 0; k < b->nworkers; k++) {
		b->w[k].wc = calloc(in->cq_batch, sizeof(*b->w[k].wc));
		if (!b->w[k].wc)
			return -ENOMEM;
	}

	b->stride = stride_for(in->max_size);
	b->access = is_target(in) ? tests[in->test].remote_access : 0;
	ret = create_buffer(b);
	if (ret)
		return ret;
	if (in->srq) {
		ret = create_srq(b);
		if (ret)
			return ret;
	}
	b->q = calloc(in->qps, sizeof(*b->q));
	return b->q ? 0 : -ENOMEM;
}

static void setup_msg(struct rk_bench *b, uint32_t i, struct rk_msg *m)
{
	const struct rk_bench_info *in = &b->info;
	struct rk_wire_bench_setup *s = &m->u.bench_setup;

	memset(m, 0, sizeof(*m));
	m->type = RK_MSG_BENCH_SETUP;
	rk_qp_local_endpoint(b->q[i].qp, &s->ep);
	s->buf_addr = (uintptr_t)in_slot(b, 0);
	s->buf_len = (uint64_t)in->qps * b->stride;
	s->rkey = b->mr->mr->rkey;
	s->max_size = in->max_size;
	s->test = (uint8_t)in->test;
	s->mode = (uint8_t)in->mode;
	s->transport = (uint8_t)in->transport;
	s->bidir = in->bidir ? 1 : 0;
	s->qps = (uint16_t)in->qps;
	s->qp = (uint16_t)i;
	s->threads = (uint16_t)b->plan.threads;
	s->nsizes = (uint16_t)b->plan.nsizes;
	s->min_size = b->plan.min_size;
	s->sizes_hash = b->plan.sizes_hash;
	s->duration_ms = b->plan.duration_ms;
	s->iters = b->plan.iters;
}

/* Server: the client's plan from its SETUP, against what this server's
 * command line gave (opts.expect). */
static int match_plan(struct rk_bench *b, const struct rk_wire_bench_setup *s, char *why,
		      size_t why_len)
{
	struct rk_bench_plan *p = &b->plan;

	*p = (struct rk_bench_plan){
		.test = (enum rk_bench_test)s->test, .mode = (enum rk_bench_mode)s->mode,
		.transport = (enum rk_transport)s->transport, .qps = s->qps,
		.threads = s->threads, .bidir = s->bidir, .nsizes = s->nsizes,
		.min_size = s->min_size, .max_size = s->max_size, .sizes_hash = s->sizes_hash,
		.iters = s->iters, .duration_ms = s->duration_ms,
	};
	return rk_bench_plan_match(&b->o.plan, b->o.expect, p, why, why_len);
}

/* Server: what the client asks for, from its first SETUP (whose fields
 * the decoder checked against bench.h's limits). */
static int learn_setup(struct rk_bench *b, const struct rk_msg *m, char *why, size_t why_len)
{
	const struct rk_wire_bench_setup *s = &m->u.bench_setup;
	struct rk_bench_info *in = &b->info;

	if (s->qp != 0) {
		snprintf(why, why_len, "the first SETUP is for QP %u, not 0", s->qp);
		return -EPROTO;
	}
	in->test = (enum rk_bench_test)s->test;
	in->mode = (enum rk_bench_mode)s->mode;
	in->transport = (enum rk_transport)s->transport;
	in->bidir = s->bidir;
	in->qps = s->qps;
	in->max_size = s->max_size;
	if (match_plan(b, s, why, why_len))
		return -EINVAL;
	if (bench_iwarp_refusal(in, b->conn->dev, why, why_len))
		return -EOPNOTSUPP;
	if (qps_over_device(b, why, why_len))
		return -E2BIG;
	if ((uint64_t)in->qps * stride_for(in->max_size) > RK_BENCH_MAX_MEM / 2) {
		snprintf(why, why_len, "%u QPs of %u bytes would need %" PRIu64 " bytes here, more "
			 "than the %" PRIu64 " a bench server registers", in->qps, in->max_size,
			 2 * (uint64_t)in->qps * stride_for(in->max_size), RK_BENCH_MAX_MEM);
		return -E2BIG;
	}
	return rk_bench_check(in->test, in->mode, in->transport, in->qps, in->bidir, why,
			      why_len);
}

/* A peer's SETUP for QP i: its endpoint and in-slots. */
static int take_peer_setup(struct rk_bench *b, uint32_t i, const struct rk_msg *m, char *why,
			   size_t why_len)
{
	const struct rk_wire_bench_setup *s = &m->u.bench_setup;
	struct rk_endpoint local;
	uint64_t want_len = (uint64_t)b->info.qps * b->stride;
	enum ibv_mtu mtu;
	int ret;

	if (s->qp != i || s->qps != b->info.qps) {
		snprintf(why, why_len, "SETUP message %u is not the one due (QP %u of %u)", i, s->qp,
			 s->qps);
		return -EPROTO;
	}
	if (s->max_size != b->info.max_size || s->buf_len < want_len) {
		snprintf(why, why_len, "the peer's buffer (%" PRIu64 " bytes for size %u) does not "
			 "fit %u QPs of %u bytes", s->buf_len, s->max_size, b->info.qps,
			 b->info.max_size);
		return -EPROTO;
	}
	if (b->cm_data) {
		/* RDMA CM connected the QP: nothing of the endpoint to use */
		mtu = b->q[i].qp->path.path_mtu;
		b->info.path_mtu = mtu ? rk_mtu_bytes(mtu) : 0;
		goto buffer;
	}
	rk_qp_local_endpoint(b->q[i].qp, &local);
	ret = rk_endpoint_check(&local, &s->ep, why, why_len);
	if (ret)
		return ret;
	ret = rk_path_mtu(local.mtu, s->ep.mtu, 0, &mtu, why, why_len);
	if (ret)
		return ret;
	b->info.path_mtu = rk_mtu_bytes(mtu);
	if (b->info.transport == RK_UD && b->info.max_size > (uint32_t)b->info.path_mtu) {
		snprintf(why, why_len, "UD messages fit in one packet: size %u is above the path MTU "
			 "%d", b->info.max_size, b->info.path_mtu);
		return -EMSGSIZE;
	}
buffer:
	b->q[i].remote = s->ep;
	b->q[i].raddr = s->buf_addr + (uint64_t)i * b->stride;
	b->q[i].rkey = s->rkey;
	b->info.peer_qpn[i] = s->ep.qpn;
	return 0;
}

static int connect_qp(struct rk_bench *b, uint32_t i)
{
	struct bqp *q = &b->q[i];
	struct rk_path_attr path;
	int ret;

	/* As many outstanding READs and atomics as the device takes (the
	 * library's default is 16). */
	rk_path_defaults(&path);
	path.max_rd_atomic = (uint8_t)(b->conn->dev->info.max_qp_init_rd_atom > 255 ? 255 :
				       b->conn->dev->info.max_qp_init_rd_atom);
	path.max_dest_rd_atomic = (uint8_t)(b->conn->dev->info.max_qp_rd_atom > 255 ? 255 :
					    b->conn->dev->info.max_qp_rd_atom);
	b->info.max_rd_atomic = path.max_rd_atomic;
	/* Soft-RoCE arms its retransmit timer once and lets it expire under a
	 * steady stream of multi-packet messages: with 67 ms it fires about
	 * every period and resends the window (measured: no loss of throughput,
	 * but --ack-timeout 18 makes the counters quiet). */
	if (b->o.tuning.ack_timeout >= 0)
		path.timeout = (uint8_t)b->o.tuning.ack_timeout;
	if (b->o.tuning.rnr_retry >= 0)
		path.rnr_retry = (uint8_t)b->o.tuning.rnr_retry;
	b->info.rnr_retry = path.rnr_retry;
	b->info.ack_timeout = path.timeout;
	b->info.retry_cnt = path.retry_cnt;
	rk_traffic_apply(&b->o.conn.traffic, &path);
	ret = rk_qp_connect(q->qp, b->access, &q->remote, &path);
	if (ret)
		return ret;
	if (b->info.transport == RK_UD) {
		q->qp->path = path; /* the address handle's GRH fields */
		return rk_ah_create(q->qp, &q->remote, &q->ah);
	}
	return 0;
}

/* Fixed parts of the work requests, so that the loops touch only wr_id,
 * flags and the atomics' operands. */
static void prebuild(struct rk_bench *b, uint32_t i)
{
	struct bqp *q = &b->q[i];

	for (uint32_t k = 0; k < MAX_POST_LIST; k++) {
		struct ibv_send_wr *w = &q->wr[k];

		memset(w, 0, sizeof(*w));
		q->sge[k].addr = (uintptr_t)out_slot(b, i);
		q->sge[k].lkey = b->mr->mr->lkey;
		w->sg_list = &q->sge[k];
		w->num_sge = 1;
		w->opcode = tests[b->info.test].opcode;
		w->next = k + 1 < MAX_POST_LIST ? &q->wr[k + 1] : NULL;
		if (is_atomic(b->info.test)) {
			w->wr.atomic.remote_addr = q->raddr;
			w->wr.atomic.rkey = q->rkey;
			w->wr.atomic.compare_add = 1;
		} else if (b->info.transport == RK_UD) {
			w->wr.ud.ah = q->ah;
			w->wr.ud.remote_qpn = q->remote.qpn;
			w->wr.ud.remote_qkey = q->remote.qkey ? q->remote.qkey : RK_DEFAULT_QKEY;
		} else {
			w->wr.rdma.remote_addr = q->raddr;
			w->wr.rdma.rkey = q->rkey;
		}
		q->rwr[k].wr_id = i;
		q->rwr[k].sg_list = &q->rsge;
		q->rwr[k].num_sge = 1;
		q->rwr[k].next = k + 1 < MAX_POST_LIST ? &q->rwr[k + 1] : NULL;
	}
	q->rsge.addr = (uintptr_t)in_slot(b, i);
	q->rsge.length = (uint32_t)b->stride;
	q->rsge.lkey = b->mr->mr->lkey;
}

static void setup_failed(struct rk_bench *b, int ret)
{
	rk_ctl_send_error(b->conn->ctl, ret, "the %s could not set up",
			  b->info.server ? "server" : "client");
}

/* The peer's SETUP of QP i, taken. */
static int recv_setup(struct rk_bench *b, uint32_t i, char *why, size_t why_len)
{
	struct rk_msg m;
	int ret;

	ret = rk_ctl_expect(b->conn->ctl, RK_MSG_BENCH_SETUP, b->wait_ms, &m);
	return ret ? ret : take_peer_setup(b, i, &m, why, why_len);
}

/* The client's SETUPs after the first travel in windows (rk_ctl_window):
 * a round trip per window, not per QP. The first goes alone: the server
 * checks the plan on it and may refuse, and its answer must not meet
 * unread data at its close. */
static int client_exchange(struct rk_bench *b, char *why, size_t why_len)
{
	struct rk_ctl *ctl = b->conn->ctl;
	uint32_t window = 1;
	struct rk_msg m;
	int ret;

	for (uint32_t first = 0; first < b->info.qps; first += window) {
		uint32_t end;

		if (first > 0)
			window = rk_ctl_window(ctl);
		end = first + window < b->info.qps ? first + window : b->info.qps;
		for (uint32_t i = first; i < end; i++) {
			setup_msg(b, i, &m);
			ret = rk_ctl_send(ctl, &m);
			if (ret)
				return ret;
		}
		if (first == 0 && b->info.qps > 1) {
			ret = create_qps(b, 1, b->info.qps);
			if (ret) {
				setup_failed(b, ret);
				return ret;
			}
		}
		for (uint32_t i = first; i < end; i++) {
			ret = recv_setup(b, i, why, why_len);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Server: one SETUP in, one out, per QP; it read the client's first
 * before it created its QPs. */
static int server_exchange(struct rk_bench *b, char *why, size_t why_len)
{
	struct rk_ctl *ctl = b->conn->ctl;
	struct rk_msg m;
	int ret;

	for (uint32_t i = 0; i < b->info.qps; i++) {
		if (i > 0) {
			ret = recv_setup(b, i, why, why_len);
			if (ret)
				return ret;
		}
		setup_msg(b, i, &m);
		ret = rk_ctl_send(ctl, &m);
		if (ret)
			return ret;
	}
	return 0;
}

static int exchange_setup(struct rk_bench *b)
{
	struct rk_ctl *ctl = b->conn->ctl;
	char why[200] = "";
	int ret;

	ret = b->info.server ? server_exchange(b, why, sizeof(why)) :
			       client_exchange(b, why, sizeof(why));
	if (ret && why[0]) {
		rk_error("bench setup with %s: %s", b->conn->peer, why);
		rk_ctl_send_error(ctl, ret, "%s", why);
	}
	if (ret)
		return ret;
	for (uint32_t i = 0; i < b->info.qps; i++) {
		ret = connect_qp(b, i);
		if (ret) {
			rk_ctl_send_error(ctl, ret, "the %s could not connect its QP 0x%x",
					  b->info.server ? "server" : "client", b->info.qpn[i]);
			return ret;
		}
		prebuild(b, i);
	}
	return rk_ctl_sync(ctl, STEP_SETUP, 0, b->wait_ms);
}

/* Server: the client's first SETUP, and what it asks for. A client of bench
 * exchange version 1 sent it as a HELLO: refused by name, not misread. */
static int server_first_setup(struct rk_bench *b, struct rk_msg *first)
{
	struct rk_ctl *ctl = b->conn->ctl;
	char why[200] = "";
	int ret;

	ret = rk_ctl_recv(ctl, b->wait_ms, first);
	if (ret == -EPROTONOSUPPORT)
		rk_ctl_send_error(ctl, ret, "the server speaks bench exchange version %d",
				  RK_WIRE_BENCH_VERSION);
	if (ret)
		return ret;
	if (first->type == RK_MSG_HELLO && first->u.hello.buf.op == BENCH_V1_SETUP_OP) {
		snprintf(why, sizeof(why), "the client speaks bench exchange version 1 (an older "
			 "rdmakit), this side version %d: run the same rdmakit on both sides",
			 RK_WIRE_BENCH_VERSION);
		ret = -EPROTONOSUPPORT;
	} else if (first->type != RK_MSG_BENCH_SETUP) {
		snprintf(why, sizeof(why), "a %s message where a %s was due",
			 rk_msg_type_str(first->type), rk_msg_type_str(RK_MSG_BENCH_SETUP));
		ret = -EPROTO;
	} else {
		ret = learn_setup(b, first, why, sizeof(why));
	}
	if (ret) {
		rk_error("refusing %s: %s", b->conn->peer, why);
		rk_ctl_send_error(ctl, ret, "the server refused: %s", why);
	}
	return ret;
}

/* cm_data: data QP i on its own RDMA CM connection, made but not yet
 * connected. The client resolves the server's data port; the server takes
 * the request for QP i from its data listener (it must echo the token of
 * the server's reply and name QP i). */
static int cm_data_qp(struct rk_bench *b, uint32_t i)
{
	struct bqp *q = &b->q[i];
	struct bworker *w = worker_of(b, i);
	struct rk_qp_init_attr qa;
	char reason[RK_WIRE_ERROR_TEXT];
	int ret;

	if (!b->info.server) {
		ret = rk_cm_resolve_ps(b->o.conn.host, b->data_port, RDMA_PS_TCP,
				       &b->o.conn.traffic, b->wait_ms, &q->cm);
		if (ret)
			return ret;
		if (q->cm->id->verbs != b->conn->dev->ctx) {
			rk_error("bench: %s port %u (data QP %u) resolves to %s, not %s",
				 b->o.conn.host, b->data_port, i, q->cm->dev->info.name,
				 b->conn->dev->info.name);
			return -ENODEV;
		}
	} else {
		ret = rk_cm_get_request(b->data_listener, b->wait_ms, &q->cm);
		if (ret)
			return ret;
		if (q->cm->peer.op != RK_WIRE_OP_BENCH || q->cm->peer.offset != i ||
		    q->cm->peer.addr != b->data_token) {
			snprintf(reason, sizeof(reason), "a request for bench's data QP %u of this "
				 "session was due (op 0x%x, QP %" PRIu64 "%s)", i, q->cm->peer.op,
				 q->cm->peer.offset,
				 q->cm->peer.addr != b->data_token ? ", another session's token" :
				 "");
			rk_error("bench: refusing %s: %s", q->cm->peer_addr, reason);
			rk_cm_reject(q->cm, reason);
			return -EPROTO;
		}
	}
	qp_attr(b, &qa);
	ret = rk_cm_create_qp(q->cm, b->conn->pd, w->scq, w->rcq, &qa, &q->qp);
	if (ret) {
		if (b->info.server)
			rk_cm_reject(q->cm, "the server could not create the data QP");
		return ret;
	}
	qp_created(b, i, b->info.qps);
	return 0;
}

/* cm_data: connect (client) or accept (server) data QP i. */
static int cm_data_connect(struct rk_bench *b, uint32_t i)
{
	struct bqp *q = &b->q[i];
	struct rk_wire_buf mine;

	memset(&mine, 0, sizeof(mine));
	mine.op = RK_WIRE_OP_BENCH;
	if (b->info.server)
		return rk_cm_accept(q->cm, q->qp, &mine, b->wait_ms);
	mine.offset = i;
	mine.addr = b->data_token;
	return rk_cm_connect(q->cm, q->qp, &mine, b->wait_ms);
}

/* cm_data, after the exchange: each QP's access and fixed requests, and
 * what RDMA CM chose for its path (the tuning options do not apply). */
static int cm_data_finish(struct rk_bench *b)
{
	struct rk_ctl *ctl = b->conn->ctl;
	int ret;

	for (uint32_t i = 0; i < b->info.qps; i++) {
		struct bqp *q = &b->q[i];

		ret = rk_qp_set_access(q->qp, b->access);
		if (ret) {
			rk_ctl_send_error(ctl, ret, "the %s could not set up its QP 0x%x",
					  b->info.server ? "server" : "client", b->info.qpn[i]);
			return ret;
		}
		prebuild(b, i);
	}
	b->info.max_rd_atomic = b->q[0].qp->path.max_rd_atomic;
	b->info.rnr_retry = b->q[0].qp->path.rnr_retry;
	b->info.ack_timeout = b->q[0].qp->path.timeout;
	b->info.retry_cnt = b->q[0].qp->path.retry_cnt;
	return rk_ctl_sync(ctl, STEP_SETUP, 0, b->wait_ms);
}

/* cm_data: QP by QP, the client makes it, sends its SETUP, connects it
 * through RDMA CM and takes the server's SETUP; the server takes the SETUP,
 * the QP's connect request (the QP is made on it), accepts and answers with
 * its SETUP. Before the first connect the server says it took the plan (a
 * refusal reaches the client as a message, not as a rejected connect). */
static int cm_data_exchange(struct rk_bench *b, const struct rk_msg *first)
{
	struct rk_ctl *ctl = b->conn->ctl;
	char why[200] = "";
	struct rk_msg m;
	int ret = 0;

	if (b->info.server) {
		ret = rk_ctl_sync(ctl, STEP_CM_DATA, 0, b->wait_ms);
		if (ret)
			return ret;
	}
	for (uint32_t i = 0; i < b->info.qps && !ret; i++) {
		if (!b->info.server) {
			ret = cm_data_qp(b, i);
			if (ret) {
				setup_failed(b, ret);
				break;
			}
			setup_msg(b, i, &m);
			ret = rk_ctl_send(ctl, &m);
			if (!ret && i == 0)
				ret = rk_ctl_sync(ctl, STEP_CM_DATA, 0, b->wait_ms);
			if (!ret)
				ret = cm_data_connect(b, i);
			if (!ret)
				ret = recv_setup(b, i, why, sizeof(why));
			continue;
		}
		if (i == 0)
			m = *first;
		else
			ret = rk_ctl_expect(ctl, RK_MSG_BENCH_SETUP, b->wait_ms, &m);
		if (!ret)
			ret = cm_data_qp(b, i);
		if (!ret)
			ret = cm_data_connect(b, i);
		if (!ret)
			ret = take_peer_setup(b, i, &m, why, sizeof(why));
		if (!ret) {
			setup_msg(b, i, &m);
			ret = rk_ctl_send(ctl, &m);
		}
	}
	if (ret && why[0]) {
		rk_error("bench setup with %s: %s", b->conn->peer, why);
		rk_ctl_send_error(ctl, ret, "%s", why);
	}
	return ret ? ret : cm_data_finish(b);
}

int bench_setup(struct rk_bench *b)
{
	struct rk_msg first;
	char why[200] = "";
	int ret;

	if (b->info.server) {
		ret = server_first_setup(b, &first);
		if (ret)
			return ret;
	}
	/* The client creates one QP before its first SETUP and the rest while
	 * the server creates its own (the server waits for that SETUP). */
	ret = create_local(b);
	if (!ret && !b->cm_data)
		ret = create_qps(b, 0, b->info.server ? b->info.qps : 1);
	if (ret) {
		setup_failed(b, ret);
		return ret;
	}
	if (b->cm_data)
		return cm_data_exchange(b, &first);
	if (b->info.server) {
		ret = take_peer_setup(b, 0, &first, why, sizeof(why));
		if (ret) {
			rk_error("bench setup with %s: %s", b->conn->peer, why);
			rk_ctl_send_error(b->conn->ctl, ret, "%s", why);
			return ret;
		}
	}
	return exchange_setup(b);
}
