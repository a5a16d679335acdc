/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The QP state machine observed on a real device: a walk through every state
 * with raw posts, what completes and when, refused transitions, and where a
 * send-queue error leads a UD or UC QP. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rdmakit/qp_states.h>
#include <rdmakit/cq.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/mem.h>
#include <rdmakit/ops.h>
#include <rdmakit/status.h>

#include "base/clock.h"
#include "base/error_int.h"
#include "conn/cm_int.h"
#include "verbs/device_int.h"

#define TAG_MAGIC 0x51505354u /* "QPST": first word of every payload the walk sends */

#define S_RECV_SLOT  4096u
#define S_RECV_SLOTS 24u
#define S_SEND_BASE  (1u << 20)
#define S_SEND_SLOT  (256u * 1024)
#define S_SEND_SLOTS 20u
#define S_MR_LEN     (S_SEND_BASE + S_SEND_SLOT * S_SEND_SLOTS)

#define P_RECV_SLOT  (256u * 1024)
#define P_RECV_SLOTS 16u
#define P_SEND_BASE  (P_RECV_SLOT * P_RECV_SLOTS)
#define P_SEND_SLOT  4096u
#define P_SEND_SLOTS 8u
#define P_MR_LEN     (P_SEND_BASE + P_SEND_SLOT * P_SEND_SLOTS)

#define SMALL	       64u  /* bytes of an ordinary send */
#define PEER_RECVS     12   /* receives the peer posts at the start */
#define QUEUED_SENDS   4    /* sends in flight when SQD is entered */
#define RESUME_WAIT_MS 1500 /* how long a send posted in SQD may take to start after RTS */
#define CM_WAIT_MS     5000 /* iWARP: resolving and connecting through RDMA CM */
#define PROBE_WR       0x9e0be /* iWARP transitions: the probe's send and receive */

struct walk {
	struct rk_device *dev;
	struct rk_qps_report *rep;
	struct ibv_pd *pd;
	struct rk_cq *cq_s, *cq_p, *cq_x;
	struct rk_mr *mr_s, *mr_p;
	struct rk_qp *s, *p;
	const struct rk_gid_choice *gid;
	uint8_t port;
	bool iwarp; /* no connection: QPs reach RTS only through RDMA CM */
	struct rk_cm_self cm;	   /* iWARP: the listener on the device's own address */
	struct rk_cm *cm_s, *cm_p; /* iWARP: the ids of s and p once connected */
	struct rk_path_attr path;
	int row;
	enum ibv_qp_state cur;			 /* the subject's state as the walk put it */
	uint32_t s_recv, s_send, p_recv, p_send; /* next free slot of each kind */
};

static const char *const spec_text[] = {
	[IBV_QPS_RESET] = "no work requests: a receive or a send is an immediate error; "
			  "nothing is received",
	[IBV_QPS_INIT] = "receives may be posted and wait; a send is an immediate error; "
			 "incoming messages are not processed",
	[IBV_QPS_RTR] = "receives are posted and incoming messages received; a send is an "
			"immediate error",
	[IBV_QPS_RTS] = "receives and sends both work",
	[IBV_QPS_SQD] = "sends queued before SQD finish, then IBV_EVENT_SQ_DRAINED; new sends "
			"wait unprocessed until RTS; receiving goes on",
	[IBV_QPS_SQE] = "",
	[IBV_QPS_ERR] = "every outstanding request completes with WR_FLUSH_ERR; work posted in "
			"ERR is flushed too",
};

static void sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

const char *rk_qps_errno_name(int ret)
{
	return errno_name(ret);
}

/* ---- the event log and completion bookkeeping ---- */

static void log_event(struct walk *w, bool is_async, enum ibv_event_type type, int wr,
		      enum ibv_wc_status status)
{
	struct rk_qps_report *rep = w->rep;
	struct rk_qps_event *e;

	if (rep->nevents >= RK_QPS_MAX_EVENTS)
		return;
	e = &rep->events[rep->nevents++];
	e->row = w->row;
	e->subject_state = w->cur;
	e->is_async = is_async;
	e->async_type = type;
	e->wr = wr;
	e->status = status;
}

static int new_wr(struct walk *w, bool on_peer, bool is_send, bool raw, const char *what)
{
	struct rk_qps_report *rep = w->rep;
	struct rk_qps_wr *r;

	if (rep->nwrs >= RK_QPS_MAX_WRS)
		return -ENOSPC;
	r = &rep->wrs[rep->nwrs];
	memset(r, 0, sizeof(*r));
	r->row = w->row;
	r->on_peer = on_peer;
	r->is_send = is_send;
	r->raw = raw;
	r->what = what;
	r->completed_row = -1;
	r->delivered_row = -1;
	r->delivered_into = -1;
	return rep->nwrs++;
}

static uint8_t *recv_slot(struct walk *w, const struct rk_qps_wr *r)
{
	if (r->on_peer)
		return (uint8_t *)w->mr_p->buf + (size_t)r->slot * P_RECV_SLOT;
	return (uint8_t *)w->mr_s->buf + (size_t)r->slot * S_RECV_SLOT;
}

/* A received payload against what its send sent: the tag, then 0xa5. */
static bool payload_intact(const uint8_t *buf, uint32_t byte_len, const struct rk_qps_wr *send)
{
	if (byte_len != send->len)
		return false;
	for (uint32_t k = 2 * sizeof(uint32_t); k < byte_len; k++)
		if (buf[k] != 0xa5)
			return false;
	return true;
}

static void take_wc(struct walk *w, const struct ibv_wc *wc)
{
	struct rk_qps_report *rep = w->rep;
	int i = wc->wr_id < (uint64_t)rep->nwrs ? (int)wc->wr_id : -1;
	struct rk_qps_wr *r;
	uint32_t tag[2];

	log_event(w, false, 0, i, wc->status);
	rep->rows[w->row].completions_here++;
	if (i < 0)
		return;
	r = &rep->wrs[i];
	r->completed = true;
	r->status = wc->status;
	r->byte_len = wc->byte_len;
	r->completed_in = w->cur;
	r->completed_row = w->row;
	if (r->is_send || wc->status != IBV_WC_SUCCESS || wc->byte_len < sizeof(tag))
		return;
	memcpy(tag, recv_slot(w, r), sizeof(tag));
	if (tag[0] != TAG_MAGIC || tag[1] >= (uint32_t)rep->nwrs)
		return;
	rep->wrs[tag[1]].delivered = true;
	rep->wrs[tag[1]].intact = payload_intact(recv_slot(w, r), wc->byte_len, &rep->wrs[tag[1]]);
	rep->wrs[tag[1]].delivered_in = w->cur;
	rep->wrs[tag[1]].delivered_row = w->row;
	rep->wrs[tag[1]].delivered_into = i;
}

/* Poll both CQs for ms milliseconds, or until done() says enough. */
static void drain(struct walk *w, int ms, bool (*done)(const struct walk *, const void *),
		  const void *arg)
{
	int64_t end = now_ms() + ms;
	struct ibv_wc wc[8];

	for (;;) {
		struct rk_cq *cqs[2] = {w->cq_s, w->cq_p};
		int got = 0;

		for (int c = 0; c < 2; c++) {
			int n = ibv_poll_cq(cqs[c]->cq, 8, wc);

			for (int k = 0; k < n; k++)
				take_wc(w, &wc[k]);
			got += n > 0 ? n : 0;
		}
		if (done && done(w, arg))
			return;
		if (now_ms() >= end)
			return;
		if (!got)
			sleep_ms(1);
	}
}

/* done() helpers: every WR in a NULL... -1 terminated list completed/delivered. */
static bool all_completed(const struct walk *w, const void *arg)
{
	for (const int *i = arg; *i >= 0; i++)
		if (!w->rep->wrs[*i].completed)
			return false;
	return true;
}

static bool all_delivered(const struct walk *w, const void *arg)
{
	for (const int *i = arg; *i >= 0; i++)
		if (!w->rep->wrs[*i].delivered)
			return false;
	return true;
}

/* ---- posting ---- */

static int post_recv(struct walk *w, bool on_peer, bool raw, const char *what)
{
	struct rk_qp *qp = on_peer ? w->p : w->s;
	struct ibv_recv_wr rwr, *bad = NULL;
	struct ibv_sge sge;
	struct rk_qps_wr *r;
	int i = new_wr(w, on_peer, false, raw, what);

	if (i < 0)
		return i;
	r = &w->rep->wrs[i];
	if (on_peer) {
		if (w->p_recv >= P_RECV_SLOTS)
			return -ENOSPC;
		r->slot = w->p_recv++;
		sge = rk_sge(w->mr_p, (size_t)r->slot * P_RECV_SLOT, P_RECV_SLOT);
	} else {
		if (w->s_recv >= S_RECV_SLOTS)
			return -ENOSPC;
		r->slot = w->s_recv++;
		sge = rk_sge(w->mr_s, (size_t)r->slot * S_RECV_SLOT, S_RECV_SLOT);
	}
	memset(recv_slot(w, r), 0, 8);
	if (raw) {
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = (uint64_t)i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		r->post_ret = rk_verbs_err(ibv_post_recv(qp->qp, &rwr, &bad));
	} else {
		r->post_ret = rk_post_recv(qp, (uint64_t)i, &sge, 1);
	}
	return i;
}

static int post_send(struct walk *w, bool on_peer, bool raw, const char *what, uint32_t len)
{
	struct rk_qp *qp = on_peer ? w->p : w->s;
	struct ibv_send_wr swr, *bad = NULL;
	struct ibv_sge sge;
	struct rk_qps_wr *r;
	uint32_t tag[2];
	uint8_t *buf;
	int i = new_wr(w, on_peer, true, raw, what);

	if (i < 0)
		return i;
	r = &w->rep->wrs[i];
	if (on_peer) {
		if (w->p_send >= P_SEND_SLOTS || len > P_SEND_SLOT)
			return -ENOSPC;
		r->slot = w->p_send++;
		buf = (uint8_t *)w->mr_p->buf + P_SEND_BASE + (size_t)r->slot * P_SEND_SLOT;
		sge = rk_sge(w->mr_p, (size_t)(buf - (uint8_t *)w->mr_p->buf), len);
	} else {
		if (w->s_send >= S_SEND_SLOTS || len > S_SEND_SLOT)
			return -ENOSPC;
		r->slot = w->s_send++;
		buf = (uint8_t *)w->mr_s->buf + S_SEND_BASE + (size_t)r->slot * S_SEND_SLOT;
		sge = rk_sge(w->mr_s, (size_t)(buf - (uint8_t *)w->mr_s->buf), len);
	}
	r->len = len;
	memset(buf, 0xa5, len);
	tag[0] = TAG_MAGIC;
	tag[1] = (uint32_t)i;
	memcpy(buf, tag, sizeof(tag));
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = (uint64_t)i;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	if (raw)
		r->post_ret = rk_verbs_err(ibv_post_send(qp->qp, &swr, &bad));
	else {
		struct rk_wr wr = {.op = RK_OP_SEND,
				   .wr_id = (uint64_t)i,
				   .sg = &sge,
				   .nsge = 1,
				   .flags = IBV_SEND_SIGNALED};

		r->post_ret = rk_post(qp, &wr);
	}
	return i;
}

/* ---- rows ---- */

/* The state the device reports for qp. siw's query leaves it out (0, which
 * reads as RESET): on iWARP that is UNKNOWN, not rdmakit's own belief. */
static enum ibv_qp_state query_state(const struct walk *w, struct rk_qp *qp)
{
	enum ibv_qp_state q = IBV_QPS_UNKNOWN;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (!w->iwarp) {
		rk_qp_query_state(qp, &q);
		return q;
	}
	if (ibv_query_qp(qp->qp, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state != IBV_QPS_RESET)
		q = a.qp_state;
	return q;
}

static struct rk_qps_row *begin_row(struct walk *w, enum ibv_qp_state state, const char *label,
				    int modify_ret)
{
	struct rk_qps_row *row;

	w->row = w->rep->nrows++;
	row = &w->rep->rows[w->row];
	memset(row, 0, sizeof(*row));
	row->state = state;
	row->label = label;
	row->spec = spec_text[state];
	row->modify_ret = modify_ret;
	row->recv_wr = row->send_wr = row->incoming_wr = row->kick_wr = -1;
	row->queried = query_state(w, w->s);
	if (!modify_ret)
		w->cur = state;
	return row;
}

/* The receive and the send every row tries, raw. */
static void post_pair(struct walk *w, struct rk_qps_row *row)
{
	row->recv_wr = post_recv(w, false, true, "recv");
	row->send_wr = post_send(w, false, true, "send", SMALL);
}

/* post_pair(), then a SEND from the peer towards the subject. */
static void post_both_ways(struct walk *w, struct rk_qps_row *row)
{
	post_pair(w, row);
	row->incoming_wr = post_send(w, true, false, "incoming send", SMALL);
}

/* A row for a state entered with modify_ret (0: the modify worked), then,
 * once in it, post_both_ways(). */
static struct rk_qps_row *enter_both_ways(struct walk *w, enum ibv_qp_state state,
					  const char *label, int modify_ret)
{
	struct rk_qps_row *row = begin_row(w, state, label, modify_ret);

	if (!row->modify_ret)
		post_both_ways(w, row);
	return row;
}

/* Poll until done() says the two work requests a and b are through (or for
 * ms), then for settle_ms more: what comes late still lands in this row. */
static void drain_two(struct walk *w, int a, int b, int ms,
		      bool (*done)(const struct walk *, const void *), int settle_ms)
{
	int list[3] = {a, b, -1};

	drain(w, ms, done, list);
	drain(w, settle_ms, NULL, NULL);
}

static int walk_setup(struct walk *w)
{
	struct rk_qp_init_attr qa = {
		.transport = RK_RC,
		.port_num = w->port,
		.max_send_wr = 32,
		.max_recv_wr = 32,
		.gid = w->gid,
	};
	struct rk_endpoint es, ep;
	int ret;

	/* iWARP: PD, CQs, MRs and QPs on the device as RDMA CM opened it, so
	 * that the pairs it connects later can use them. */
	if (w->iwarp) {
		ret = rk_cm_self_open(w->dev->info.name, w->port, CM_WAIT_MS, &w->cm);
		if (ret)
			return ret;
		w->dev = w->cm.dev;
	}
	ret = rk_pd_alloc(w->dev, &w->pd);
	if (ret)
		return ret;
	if ((ret = rk_cq_create(w->dev, 128, false, &w->cq_s)) ||
	    (ret = rk_cq_create(w->dev, 128, false, &w->cq_p)) ||
	    (ret = rk_cq_create(w->dev, 64, false, &w->cq_x)) ||
	    (ret = rk_mr_alloc(w->pd, S_MR_LEN, IBV_ACCESS_LOCAL_WRITE, &w->mr_s)) ||
	    (ret = rk_mr_alloc(w->pd, P_MR_LEN, IBV_ACCESS_LOCAL_WRITE, &w->mr_p)) ||
	    (ret = rk_qp_create(w->pd, w->dev, w->cq_s, w->cq_s, &qa, &w->s)) ||
	    (ret = rk_qp_create(w->pd, w->dev, w->cq_p, w->cq_p, &qa, &w->p)))
		return ret;
	/* The peer retransmits every 0.5 s, 7 times: long enough to watch a SEND
	 * wait while the subject is in INIT and land once it is in RTR. */
	rk_path_defaults(&w->path);
	w->path.timeout = 17;
	w->path.retry_cnt = 7;
	w->path.rnr_retry = 7;
	rk_qp_local_endpoint(w->s, &es);
	rk_qp_local_endpoint(w->p, &ep);
	w->rep->subject_qpn = w->s->qp->qp_num;
	w->rep->peer_qpn = w->p->qp->qp_num;
	/* iWARP: no connection without RDMA CM; the peer stays as created. */
	if (w->iwarp)
		return 0;
	ret = rk_qp_connect(w->p, 0, &es, &w->path);
	if (ret)
		return ret;
	for (int k = 0; k < PEER_RECVS; k++) {
		ret = post_recv(w, true, false, "peer recv");
		if (ret < 0)
			return ret;
		if (w->rep->wrs[ret].post_ret)
			return w->rep->wrs[ret].post_ret;
	}
	return 0;
}

/* iWARP: a pair connected through RDMA CM, undone: the ids disconnected
 * (which moves the QPs to ERR), the QPs destroyed, then the ids. */
static void cm_unpair(struct rk_qp **a, struct rk_qp **b, struct rk_cm **cm_a, struct rk_cm **cm_b)
{
	rk_cm_disconnect(*cm_a, 0);
	rk_cm_disconnect(*cm_b, 0);
	rk_qp_destroy(*b);
	rk_qp_destroy(*a);
	rk_cm_destroy(*cm_b);
	rk_cm_destroy(*cm_a);
	*a = *b = NULL;
	*cm_a = *cm_b = NULL;
}

/* iWARP: two RC QPs connected to each other through RDMA CM to the device's
 * own address (w->cm's listener), a's completions on cq_a, b's on cq_b. */
static int cm_connect(struct walk *w, struct rk_cq *cq_a, struct rk_cq *cq_b, struct rk_qp **a_p,
		      struct rk_qp **b_p, struct rk_cm **cm_a, struct rk_cm **cm_b)
{
	struct rk_qp_init_attr qa = {
		.transport = RK_RC, .port_num = w->port, .max_send_wr = 32, .max_recv_wr = 32};
	struct rk_cm_self_side a = {.cq = cq_a, .qa = qa}, b = {.cq = cq_b, .qa = qa};
	int ret;

	ret = rk_cm_self_resolve(&w->cm, w->dev->info.name, CM_WAIT_MS, &a.cm);
	if (ret)
		return ret;
	ret = rk_cm_self_connect(w->cm.listener, w->pd, &a, &b, CM_WAIT_MS);
	*cm_a = a.cm;
	*cm_b = b.cm;
	*a_p = a.qp;
	*b_p = b.qp;
	return ret;
}

static void walk_teardown(struct walk *w)
{
	cm_unpair(&w->s, &w->p, &w->cm_s, &w->cm_p);
	rk_mr_free(w->mr_p);
	rk_mr_free(w->mr_s);
	rk_cq_destroy(w->cq_x);
	rk_cq_destroy(w->cq_p);
	rk_cq_destroy(w->cq_s);
	rk_pd_free(w->pd);
	rk_cm_self_close(&w->cm);
}

static int raw_modify(struct walk *w, struct rk_qp *qp, enum ibv_qp_state from,
		      enum ibv_qp_state to);

/* Wait for the subject's SQ_DRAINED, logging every async event seen. */
static bool wait_drained(struct walk *w, int ms)
{
	int64_t end = now_ms() + ms;
	struct rk_async_event ev;

	while (now_ms() < end) {
		int left = (int)(end - now_ms()) + 1;

		if (rk_async_event_wait(w->dev, left, &ev))
			return false;
		log_event(w, true, ev.type, -1, IBV_WC_SUCCESS);
		if (ev.type == IBV_EVENT_SQ_DRAINED && ev.has_qp && ev.qp_num == w->s->qp->qp_num)
			return true;
	}
	return false;
}

/* RESET, INIT, RTR and RTS: what each state does with sends and receives. */
static int walk_to_rts(struct walk *w)
{
	struct rk_qps_report *rep = w->rep;
	struct rk_qps_row *row;
	struct rk_endpoint ep;

	rk_qp_local_endpoint(w->p, &ep);

	/* RESET: the QP as created. */
	row = begin_row(w, IBV_QPS_RESET, "RESET", 0);
	post_pair(w, row);
	drain(w, 300, NULL, NULL);

	/* INIT: the peer's SEND must wait; the peer retransmits it. */
	row = enter_both_ways(w, IBV_QPS_INIT, "INIT", rk_qp_to_init(w->s, 0));
	if (row->modify_ret)
		return row->modify_ret;
	drain(w, 600, NULL, NULL);

	/* RTR: incoming messages are received, sends are not executed. */
	row = enter_both_ways(w, IBV_QPS_RTR, "RTR", rk_qp_to_rtr(w->s, &ep, &w->path));
	if (row->modify_ret)
		return row->modify_ret;
	drain_two(w, rep->rows[1].incoming_wr, row->incoming_wr, 6000, all_delivered, 400);

	/* RTS: both directions. */
	row = enter_both_ways(w, IBV_QPS_RTS, "RTS", rk_qp_to_rts(w->s));
	if (row->modify_ret)
		return row->modify_ret;
	drain_two(w, row->send_wr, row->incoming_wr, 4000, all_completed, 400);
	return 0;
}

/* SQD: large sends in flight when the drain starts, then back to RTS. */
static int walk_sqd(struct walk *w)
{
	struct rk_qps_report *rep = w->rep;
	struct rk_qps_row *row;
	int list[QUEUED_SENDS + 1], ret, n;

	w->row = rep->nrows; /* the queued sends belong to the SQD row */
	for (n = 0; n < QUEUED_SENDS; n++)
		list[n] = post_send(w, false, true, "queued send", S_SEND_SLOT);
	list[n] = -1;
	/* iWARP: the raw verb (rdmakit's own steps know the QP by a GID). */
	row = begin_row(w, IBV_QPS_SQD, "SQD",
			w->iwarp ? raw_modify(w, w->s, IBV_QPS_RTS, IBV_QPS_SQD) :
				   rk_qp_to_sqd(w->s));
	memcpy(row->queued, list, sizeof(int) * QUEUED_SENDS);
	row->nqueued = QUEUED_SENDS;
	for (n = 0; n < QUEUED_SENDS; n++)
		rep->wrs[list[n]].row = w->row;
	if (row->modify_ret)
		return row->modify_ret;
	post_both_ways(w, row);
	row->drained_event = wait_drained(w, 4000);
	drain(w, 4000, all_completed, list);
	drain(w, 500, NULL, NULL);
	/* Back to RTS: what was posted in SQD may run now (still this row). On
	 * iWARP what the device answers is recorded, and the walk goes on. */
	ret = w->iwarp ? raw_modify(w, w->s, IBV_QPS_SQD, IBV_QPS_RTS) : rk_qp_to_rts(w->s);
	row->resume_ret = ret;
	if (ret && !w->iwarp)
		return ret;
	if (!ret)
		w->cur = IBV_QPS_RTS;
	list[0] = row->send_wr;
	list[1] = -1;
	/* A send the device refused in SQD (siw) has nothing to wait for. */
	drain(w, rep->wrs[row->send_wr].post_ret ? 300 : RESUME_WAIT_MS, all_completed, list);
	if (!ret && !rep->wrs[row->send_wr].post_ret && !rep->wrs[row->send_wr].completed) {
		/* Still not run: does the next post (a doorbell) start it? */
		row->kick_wr = post_send(w, false, true, "send after the return to RTS", SMALL);
		list[1] = row->kick_wr;
		list[2] = -1;
		drain(w, 3000, all_completed, list);
	}
	drain(w, 300, NULL, NULL);
	return 0;
}

/* ERR: outstanding receives and sends (the peer, in ERR itself, never
 * answers the sends) are flushed; then RESET empties the queues. */
static int walk_err(struct walk *w)
{
	struct rk_qps_report *rep = w->rep;
	struct rk_qps_row *row;
	int list[6], ret, n;

	ret = rk_qp_to_err(w->p);
	if (ret)
		return ret;
	w->row = rep->nrows;
	drain(w, 300, NULL, NULL);
	for (n = 0; n < 3; n++)
		list[n] = post_recv(w, false, true, "outstanding recv");
	for (; n < 5; n++)
		list[n] = post_send(w, false, true, "outstanding send", SMALL);
	list[n] = -1;
	drain(w, 100, NULL, NULL);
	row = begin_row(w, IBV_QPS_ERR, "ERR", rk_qp_to_err(w->s));
	memcpy(row->queued, list, sizeof(int) * 5);
	row->nqueued = 5;
	for (n = 0; n < 5; n++)
		rep->wrs[list[n]].row = w->row;
	if (row->modify_ret)
		return row->modify_ret;
	drain(w, 3000, all_completed, list);
	post_pair(w, row);
	list[0] = row->send_wr;
	list[1] = row->recv_wr;
	list[2] = -1;
	drain(w, 1000, all_completed, list);

	/* RESET from ERR: the queues are emptied without completions. */
	row = begin_row(w, IBV_QPS_RESET, "RESET (from ERR)", rk_qp_to_reset(w->s));
	if (row->modify_ret)
		return row->modify_ret;
	drain(w, 300, NULL, NULL);
	return 0;
}

/* RTS again: recovery through RESET, INIT, RTR, RTS on both sides. */
static int walk_recovered(struct walk *w)
{
	struct rk_qps_row *row;
	int ret;

	ret = rk_qp_recover(w->s);
	if (!ret)
		ret = rk_qp_recover(w->p);
	if (!ret) {
		ret = post_recv(w, true, false, "peer recv");
		ret = ret < 0 ? ret : 0;
	}
	row = enter_both_ways(w, IBV_QPS_RTS, "RTS (recovered)", ret);
	if (row->modify_ret)
		return row->modify_ret;
	drain_two(w, row->send_wr, row->incoming_wr, 4000, all_delivered, 200);
	return 0;
}

/* ---- transitions the spec forbids, tried on fresh QPs ---- */

static const struct {
	enum ibv_qp_state from, to;
	bool allowed;
} tried[] = {
	{IBV_QPS_RESET, IBV_QPS_INIT, true}, {IBV_QPS_RESET, IBV_QPS_RTR, false},
	{IBV_QPS_RESET, IBV_QPS_RTS, false}, {IBV_QPS_RESET, IBV_QPS_SQD, false},
	{IBV_QPS_RESET, IBV_QPS_ERR, false}, {IBV_QPS_INIT, IBV_QPS_INIT, true},
	{IBV_QPS_INIT, IBV_QPS_RTR, true},   {IBV_QPS_INIT, IBV_QPS_RTS, false},
	{IBV_QPS_INIT, IBV_QPS_SQD, false},  {IBV_QPS_RTR, IBV_QPS_RTS, true},
	{IBV_QPS_RTR, IBV_QPS_INIT, false},  {IBV_QPS_RTR, IBV_QPS_SQD, false},
	{IBV_QPS_RTS, IBV_QPS_SQD, true},    {IBV_QPS_RTS, IBV_QPS_RTR, false},
	{IBV_QPS_RTS, IBV_QPS_INIT, false},  {IBV_QPS_RTS, IBV_QPS_SQE, false},
	{IBV_QPS_RTS, IBV_QPS_RESET, true},  {IBV_QPS_SQD, IBV_QPS_RTS, true},
	{IBV_QPS_SQD, IBV_QPS_RTR, false},   {IBV_QPS_SQD, IBV_QPS_INIT, false},
	{IBV_QPS_ERR, IBV_QPS_RESET, true},  {IBV_QPS_ERR, IBV_QPS_INIT, false},
	{IBV_QPS_ERR, IBV_QPS_RTS, false},
};

static int attrs_for(struct walk *w, struct rk_qp *qp, enum ibv_qp_state from, enum ibv_qp_state to,
		     struct ibv_qp_attr *a);

/* ibv_modify_qp() from -> to with what the target usually needs: the
 * device's own answer, no rdmakit check in between. */
static int raw_modify(struct walk *w, struct rk_qp *qp, enum ibv_qp_state from,
		      enum ibv_qp_state to)
{
	struct ibv_qp_attr a;
	int mask = attrs_for(w, qp, from, to, &a);

	return rk_verbs_err(ibv_modify_qp(qp->qp, &a, mask));
}

/* fresh_qp_in() on iWARP: every step raw (rdmakit's own steps bring a QP up
 * from a GID); RTS and SQD are refused by the device without a connection. */
static int fresh_qp_in_raw(struct walk *w, struct rk_qp *qp, enum ibv_qp_state s)
{
	static const enum ibv_qp_state path[] = {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
						 IBV_QPS_SQD};
	enum ibv_qp_state cur = IBV_QPS_RESET;
	int ret = 0;

	if (s == IBV_QPS_RESET)
		return 0;
	for (size_t k = 0; k < sizeof(path) / sizeof(path[0]) && !ret && cur != s; k++) {
		if (s == IBV_QPS_ERR && cur == IBV_QPS_INIT)
			break;
		ret = raw_modify(w, qp, cur, path[k]);
		cur = path[k];
	}
	if (!ret && s == IBV_QPS_ERR)
		ret = raw_modify(w, qp, cur, IBV_QPS_ERR);
	return ret;
}

/* Bring a fresh RC QP, connected to itself, to state s. */
static int fresh_qp_in(struct walk *w, enum ibv_qp_state s, struct rk_qp **qp_p)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC, .port_num = w->port, .gid = w->gid};
	struct rk_endpoint self;
	struct rk_qp *qp;
	int ret;

	ret = rk_qp_create(w->pd, w->dev, w->cq_x, w->cq_x, &qa, &qp);
	if (ret)
		return ret;
	if (w->iwarp) {
		ret = fresh_qp_in_raw(w, qp, s);
		goto out;
	}
	rk_qp_local_endpoint(qp, &self);
	if (s != IBV_QPS_RESET && (ret = rk_qp_to_init(qp, 0)))
		goto err_destroy;
	if (s == IBV_QPS_ERR) {
		ret = rk_qp_to_err(qp);
		goto out;
	}
	if (s != IBV_QPS_RESET && s != IBV_QPS_INIT && (ret = rk_qp_to_rtr(qp, &self, &w->path)))
		goto err_destroy;
	if ((s == IBV_QPS_RTS || s == IBV_QPS_SQD) && (ret = rk_qp_to_rts(qp)))
		goto err_destroy;
	if (s == IBV_QPS_SQD)
		ret = rk_qp_to_sqd(qp);
out:
	if (ret)
		goto err_destroy;
	*qp_p = qp;
	return 0;

err_destroy:
	rk_qp_destroy(qp);
	return ret;
}

/* The attributes the target state needs when reached the usual way. */
static int attrs_for(struct walk *w, struct rk_qp *qp, enum ibv_qp_state from, enum ibv_qp_state to,
		     struct ibv_qp_attr *a)
{
	struct rk_endpoint self;

	memset(a, 0, sizeof(*a));
	a->qp_state = to;
	rk_qp_local_endpoint(qp, &self);
	switch (to) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = w->port;
		a->qp_access_flags = 0;
		return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	case IBV_QPS_RTR:
		a->path_mtu = rk_device_port(w->dev, w->port)->active_mtu;
		a->dest_qp_num = self.qpn;
		a->rq_psn = self.psn;
		a->max_dest_rd_atomic = 1;
		a->min_rnr_timer = 12;
		a->ah_attr.port_num = w->port;
		a->ah_attr.dlid = self.lid;
		if (w->gid) {
			a->ah_attr.is_global = 1;
			a->ah_attr.grh.dgid = self.gid;
			a->ah_attr.grh.sgid_index = (uint8_t)w->gid->index;
			a->ah_attr.grh.hop_limit = 64;
		}
		return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	case IBV_QPS_RTS:
		if (from == IBV_QPS_SQD || from == IBV_QPS_SQE)
			return IBV_QP_STATE;
		a->timeout = 14;
		a->retry_cnt = 7;
		a->rnr_retry = 7;
		a->sq_psn = self.psn;
		a->max_rd_atomic = 1;
		return IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	case IBV_QPS_SQD:
		a->en_sqd_async_notify = 1;
		return IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY;
	default:
		return IBV_QP_STATE;
	}
}

/* iWARP: a fresh pair connected through RDMA CM, its subject (*qp) moved on
 * to s (RTS or SQD); the caller undoes it with cm_unpair(), also on an error. */
static int fresh_cm_in(struct walk *w, enum ibv_qp_state s, struct rk_qp **qp, struct rk_qp **peer,
		       struct rk_cm **cm_a, struct rk_cm **cm_b)
{
	int ret = cm_connect(w, w->cq_x, w->cq_x, qp, peer, cm_a, cm_b);

	if (!ret && s == IBV_QPS_SQD)
		ret = raw_modify(w, *qp, IBV_QPS_RTS, IBV_QPS_SQD);
	return ret;
}

/* iWARP, after a transition from RTS or SQD (the query names no state): a
 * receive posted on the peer, a send on qp, and what completes within 1 s. */
static void probe_send(struct walk *w, struct rk_qps_transition *t, struct rk_qp *qp,
		       struct rk_qp *peer)
{
	struct ibv_sge rs = rk_sge(w->mr_p, P_SEND_BASE + (P_SEND_SLOTS - 1) * P_SEND_SLOT, SMALL);
	struct ibv_sge ss = rk_sge(w->mr_s, S_SEND_BASE + (S_SEND_SLOTS - 1) * S_SEND_SLOT, SMALL);
	struct ibv_send_wr swr = {.wr_id = PROBE_WR,
				  .sg_list = &ss,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED};
	struct ibv_recv_wr rwr = {.wr_id = PROBE_WR + 1, .sg_list = &rs, .num_sge = 1};
	struct ibv_send_wr *sbad = NULL;
	struct ibv_recv_wr *rbad = NULL;
	int64_t end;
	struct ibv_wc wc;

	t->probed = true;
	(void)ibv_post_recv(peer->qp, &rwr, &rbad); /* the peer may be gone already */
	t->probe_post_ret = rk_verbs_err(ibv_post_send(qp->qp, &swr, &sbad));
	end = now_ms() + (t->probe_post_ret ? 200 : 1000);
	while (now_ms() < end && !(t->probe_completed && t->probe_received)) {
		if (ibv_poll_cq(w->cq_x->cq, 1, &wc) <= 0) {
			sleep_ms(1);
			continue;
		}
		if (wc.wr_id == PROBE_WR) {
			t->probe_completed = true;
			t->probe_status = wc.status;
		} else if (wc.wr_id == PROBE_WR + 1 && wc.status == IBV_WC_SUCCESS) {
			t->probe_received = true;
		}
	}
}

static int walk_transitions(struct walk *w)
{
	struct rk_qps_report *rep = w->rep;
	size_t n = sizeof(tried) / sizeof(tried[0]);

	for (size_t i = 0; i < n && rep->ntransitions < RK_QPS_MAX_TRANSITIONS; i++) {
		struct rk_qps_transition *t = &rep->transitions[rep->ntransitions];
		bool cm = w->iwarp && (tried[i].from == IBV_QPS_RTS || tried[i].from == IBV_QPS_SQD);
		struct rk_cm *cm_a = NULL, *cm_b = NULL;
		struct rk_qp *qp = NULL, *peer = NULL;
		struct ibv_qp_attr a;
		int mask, ret;

		ret = cm ? fresh_cm_in(w, tried[i].from, &qp, &peer, &cm_a, &cm_b) :
			   fresh_qp_in(w, tried[i].from, &qp);
		/* iWARP: RTS is reached through RDMA CM; a state the device does
		 * not enter from it (SQD) is left out, and named. */
		if (ret && cm && tried[i].from == IBV_QPS_SQD) {
			cm_unpair(&qp, &peer, &cm_a, &cm_b);
			rep->sqd_unreachable = true;
			continue;
		}
		if (ret) {
			cm_unpair(&qp, &peer, &cm_a, &cm_b);
			return ret;
		}
		t->from = tried[i].from;
		t->to = tried[i].to;
		t->spec_allows = tried[i].allowed;
		mask = attrs_for(w, qp, t->from, t->to, &a);
		t->ret = rk_verbs_err(ibv_modify_qp(qp->qp, &a, mask));
		t->after = query_state(w, qp);
		if (cm)
			probe_send(w, t, qp, peer);
		cm_unpair(&qp, &peer, &cm_a, &cm_b);
		for (struct ibv_wc wc; ibv_poll_cq(w->cq_x->cq, 1, &wc) > 0;)
			;
		rep->ntransitions++;
	}
	/* Drop what those QPs left behind: SQ_DRAINED events, completions. */
	for (struct rk_async_event ev; rk_async_event_wait(w->dev, 0, &ev) == 0;)
		;
	return 0;
}

/* ---- SQE: a send-queue error on UD and UC ---- */

static int try_sqe(struct walk *w, enum rk_transport t, struct rk_qps_sqe *out)
{
	struct rk_qp_init_attr qa = {.transport = t, .port_num = w->port, .gid = w->gid};
	struct ibv_send_wr swr, *bad = NULL;
	struct rk_endpoint self;
	struct ibv_ah *ah = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct rk_qp *qp;
	int ret, n = 0;

	memset(out, 0, sizeof(*out));
	out->transport = t;
	ret = rk_qp_create(w->pd, w->dev, w->cq_x, w->cq_x, &qa, &qp);
	if (ret)
		return ret;
	rk_qp_local_endpoint(qp, &self);
	ret = rk_qp_connect(qp, 0, &self, &w->path);
	if (ret)
		goto out_destroy;
	memset(&swr, 0, sizeof(swr));
	if (t == RK_UD) {
		ret = rk_ah_create(qp, &self, &ah);
		if (ret)
			goto out_destroy;
		swr.wr.ud.ah = ah;
		swr.wr.ud.remote_qpn = self.qpn;
		swr.wr.ud.remote_qkey = qp->qkey;
	}
	/* A local key that names no MR: a local protection error on the send queue. */
	sge = rk_sge(w->mr_p, P_SEND_BASE, SMALL);
	sge.lkey ^= 0x0fff0000u;
	swr.wr_id = 1;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	out->post_ret = rk_verbs_err(ibv_post_send(qp->qp, &swr, &bad));
	if (!out->post_ret && rk_cq_wait(w->cq_x, &wc, 1, 3000, &n) == 0) {
		out->completed = true;
		out->status = wc.status;
	}
	sleep_ms(50);
	out->state_after = IBV_QPS_UNKNOWN;
	rk_qp_query_state(qp, &out->state_after);
	out->state_final = out->state_after;
	if (out->state_after == IBV_QPS_SQE) {
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTS};

		out->tried_resume = true;
		out->resume_ret = rk_verbs_err(ibv_modify_qp(qp->qp, &a, IBV_QP_STATE));
		rk_qp_query_state(qp, &out->state_final);
	}
	ret = 0;
	while (ibv_poll_cq(w->cq_x->cq, 1, &wc) > 0)
		;
out_destroy:
	if (ah)
		ibv_destroy_ah(ah);
	rk_qp_destroy(qp);
	return ret;
}

/* SQE on each transport whose send queue error state is seen (rep->sqe). */
static int walk_sqe(struct walk *w)
{
	static const enum rk_transport sqe_on[] = {RK_UD, RK_UC};
	struct rk_qps_report *rep = w->rep;

	for (size_t k = 0; k < sizeof(sqe_on) / sizeof(sqe_on[0]); k++) {
		int ret = try_sqe(w, sqe_on[k], &rep->sqe[k]);

		if (ret)
			return ret;
		rep->nsqe = (int)k + 1;
	}
	return 0;
}

/* ---- iWARP: the walk without a connection ---- */

/* A row entered with the raw verb from the state the walk is in, with a
 * receive and a send posted once in it. */
static struct rk_qps_row *enter_raw(struct walk *w, enum ibv_qp_state state, const char *label)
{
	struct rk_qps_row *row = begin_row(w, state, label, raw_modify(w, w->s, w->cur, state));

	if (!row->modify_ret)
		post_pair(w, row);
	drain(w, 300, NULL, NULL);
	return row;
}

/* ERR entered with the raw verb from the state the walk is in: what the
 * subject had accepted from wrs[first] on and not completed is outstanding;
 * then a receive and a send posted in ERR, and RESET from ERR (with a
 * receive and a send posted there too when post_in_reset). */
static void err_then_reset(struct walk *w, int first, const char *err_label,
			   const char *reset_label, bool post_in_reset)
{
	struct rk_qps_report *rep = w->rep;
	const int max = (int)(sizeof(rep->rows[0].queued) / sizeof(rep->rows[0].queued[0]));
	struct rk_qps_row *row;
	int list[9], n = 0;

	drain(w, 0, NULL, NULL); /* what completed already is not outstanding */
	for (int i = first; i < rep->nwrs && n < max; i++)
		if (!rep->wrs[i].on_peer && !rep->wrs[i].post_ret && !rep->wrs[i].completed)
			list[n++] = i;
	list[n] = -1;
	row = begin_row(w, IBV_QPS_ERR, err_label, raw_modify(w, w->s, w->cur, IBV_QPS_ERR));
	memcpy(row->queued, list, sizeof(int) * (size_t)n);
	row->nqueued = n;
	if (row->modify_ret)
		return;
	drain(w, 2000, all_completed, list);
	drain(w, 300, NULL, NULL);
	post_pair(w, row);
	drain(w, 1000, NULL, NULL);
	row = begin_row(w, IBV_QPS_RESET, reset_label,
			raw_modify(w, w->s, IBV_QPS_ERR, IBV_QPS_RESET));
	if (post_in_reset && !row->modify_ret)
		post_pair(w, row);
	drain(w, 300, NULL, NULL);
}

/* RESET, INIT, RTR, RTS tried, then ERR and RESET from ERR: what each state
 * does with posts on an iWARP QP that RDMA CM has not connected (the device
 * refuses RTS without the CM's TCP stream and MPA; no peer sends to it). */
static int walk_unconnected(struct walk *w)
{
	struct rk_qps_row *row;

	row = begin_row(w, IBV_QPS_RESET, "RESET", 0);
	post_pair(w, row);
	drain(w, 300, NULL, NULL);
	enter_raw(w, IBV_QPS_INIT, "INIT");
	enter_raw(w, IBV_QPS_RTR, "RTR");
	enter_raw(w, IBV_QPS_RTS, "RTS");
	err_then_reset(w, 0, "ERR", "RESET (from ERR)", false);
	return 0;
}

/* iWARP: s and p replaced by a pair connected through RDMA CM, and nrecv
 * receives posted on p; then the row label, in RTS, posts both ways. */
static int walk_cm_rts(struct walk *w, int nrecv, const char *label)
{
	struct rk_qps_report *rep = w->rep;
	struct rk_qps_row *row;
	int ret;

	cm_unpair(&w->s, &w->p, &w->cm_s, &w->cm_p);
	w->cur = IBV_QPS_ERR; /* the disconnect above: what comes now was flushed by it */
	drain(w, 200, NULL, NULL);
	ret = cm_connect(w, w->cq_s, w->cq_p, &w->s, &w->p, &w->cm_s, &w->cm_p);
	for (int k = 0; !ret && k < nrecv; k++) {
		ret = post_recv(w, true, false, "peer recv");
		ret = ret < 0 ? ret : rep->wrs[ret].post_ret;
	}
	if (ret)
		return ret;
	rep->cm_subject_qpn = w->s->qp->qp_num;
	rep->cm_peer_qpn = w->p->qp->qp_num;
	row = enter_both_ways(w, IBV_QPS_RTS, label, 0);
	drain_two(w, row->send_wr, row->incoming_wr, 4000, all_delivered, 400);
	return 0;
}

/* iWARP, the connected part: RTS both ways, SQD and back (walk_sqd()); on a
 * second pair RTS again, ERR with requests outstanding, RESET from ERR. */
static int walk_connected(struct walk *w)
{
	struct rk_qps_report *rep = w->rep;
	int ret, first;

	rep->connected_from = rep->nrows;
	/* the subject's send and the peer's receives: one each, QUEUED_SENDS,
	 * SQD's and the one after it */
	ret = walk_cm_rts(w, QUEUED_SENDS + 3, "RTS (CM)");
	if (!ret)
		ret = walk_sqd(w);
	first = rep->nwrs;
	if (!ret)
		ret = walk_cm_rts(w, 3, "RTS (CM, 2nd)");
	if (ret)
		return ret;
	/* Outstanding when ERR comes: receives nothing is sent to, and large
	 * sends posted just before. */
	for (int n = 0; n < 3; n++)
		post_recv(w, false, true, "outstanding recv");
	for (int n = 0; n < 2; n++)
		post_send(w, false, true, "outstanding send", S_SEND_SLOT);
	err_then_reset(w, first, "ERR (from RTS)", "RESET (CM)", true);
	rep->cm_walked = true;
	return 0;
}

/* The walk, in order: the first part that fails ends it. */
static int (*const walk_parts[])(struct walk *w) = {
	walk_setup, walk_to_rts, walk_sqd, walk_err, walk_recovered, walk_transitions, walk_sqe,
};

/* iWARP: what needs no connection, then what needs RDMA CM; SQE needs UD
 * or UC, which iWARP has not. */
static int (*const walk_parts_iwarp[])(struct walk *w) = {
	walk_setup,
	walk_unconnected,
	walk_connected,
	walk_transitions,
};

int rk_qps_observe(struct rk_device *dev, uint8_t port, const struct rk_gid_choice *gid,
		   struct rk_qps_report *rep)
{
	struct walk w;
	int ret = 0;

	memset(rep, 0, sizeof(*rep));
	memset(&w, 0, sizeof(w));
	w.dev = dev;
	w.rep = rep;
	w.port = port;
	w.gid = gid;
	w.iwarp = rk_device_is_iwarp(dev);
	snprintf(rep->device, sizeof(rep->device), "%s", dev->info.name);
	if (w.iwarp)
		for (size_t i = 0; i < sizeof(walk_parts_iwarp) / sizeof(walk_parts_iwarp[0]) && !ret;
		     i++)
			ret = walk_parts_iwarp[i](&w);
	else
		for (size_t i = 0; i < sizeof(walk_parts) / sizeof(walk_parts[0]) && !ret; i++)
			ret = walk_parts[i](&w);
	walk_teardown(&w);
	if (w.iwarp)
		snprintf(rep->not_walked, sizeof(rep->not_walked),
			 "SQE (a send-queue error on a UD or UC QP: iWARP has only RC QPs)%s",
			 rep->sqd_unreachable ? "; the transitions from SQD (the device refused "
						"RTS -> SQD)" : "");
	return ret;
}

const char *rk_qps_fate_str(const struct rk_qps_report *rep, int wr, char *buf, size_t len)
{
	const struct rk_qps_wr *r;
	char how[96] = "", tail[96] = "";

	if (wr < 0 || wr >= rep->nwrs) {
		snprintf(buf, len, "-");
		return buf;
	}
	r = &rep->wrs[wr];
	if (r->post_ret)
		snprintf(how, sizeof(how), "refused (%s), ", rk_qps_errno_name(r->post_ret));
	else
		snprintf(how, sizeof(how), "accepted, ");
	if (r->is_send && r->delivered)
		snprintf(tail, sizeof(tail), "%sran in %s%s", r->post_ret ? "yet " : "",
			 rk_qp_state_str(r->delivered_in),
			 r->completed && r->status != IBV_WC_SUCCESS ? " (completion: error)" : "");
	else if (r->completed && r->status == IBV_WC_SUCCESS && !r->is_send)
		snprintf(tail, sizeof(tail), "%sfilled in %s", r->post_ret ? "yet " : "",
			 rk_qp_state_str(r->completed_in));
	else if (r->completed)
		snprintf(tail, sizeof(tail), "%s in %s",
			 rk_wc_status_name(r->status) + strlen("IBV_WC_"),
			 rk_qp_state_str(r->completed_in));
	else
		snprintf(tail, sizeof(tail), "never %s",
			 r->post_ret && r->is_send ? "ran" : "completed");
	snprintf(buf, len, "%s%s", how, tail);
	return buf;
}
