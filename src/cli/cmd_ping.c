/* rdmakit ping: RC ping-pong with round-trip statistics, in three
 * protocols:
 *   native    rdmakit to rdmakit: SEND a ping, SEND it back, over the TCP
 *             exchange or RDMA CM (rk_conn);
 *   rping     librdmacm's rping: the client advertises its buffers, the
 *             server RDMA-READs the ping and RDMA-WRITEs the pong back;
 *   pingpong  ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong: their TCP
 *             text exchange, then SEND/RECV turns (RC, UC or UD).
 * Each protocol's own options are accepted in its mode, so rdmakit stands in
 * for rping or ibv_*_pingpong in existing scripts. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define PING_OP 0x50494e47u /* "PING": the native client's request code */
#define PING_REQ_VALIDATE 0x1u /* in the request's offset field: check data */
#define NATIVE_MAX_SIZE (16u << 20)
#define PP_PAGE 4096 /* ibv_*_pingpong -c checks the first byte of each page */
#define WR_SEND 1
#define WR_RECV 2
#define WR_RDMA 3

enum proto { PROTO_NATIVE, PROTO_RPING, PROTO_PINGPONG };

struct ping_opts {
	struct cli_dev_opts dev;
	const char *proto;
	bool server;
	bool client; /* rping -c */
	const char *addr; /* rping -a */
	uint64_t port;
	bool cm;
	const char *transport;
	uint64_t size;
	uint64_t count;
	uint64_t interval;
	uint64_t mtu;
	uint64_t rx_depth;
	bool validate;
	bool verbose;
	bool events;
	uint64_t timeout;
	uint64_t wait;
	bool json;
};

/* What a run did: feeds the text and the JSON. */
struct ping_run {
	const struct ping_opts *o;
	enum proto proto;
	enum rk_transport transport;
	const char *who;
	const char *host;
	int timeout_ms;
	/* set up */
	char device[64];
	char peer[80];
	uint32_t qpn, peer_qpn;
	int path_mtu;
	bool has_gid;
	struct rk_gid_choice gid;
	uint32_t size;   /* bytes per ping as run */
	uint64_t count;  /* rounds due (0: until the peer stops, rping) */
	/* results */
	double *us;
	size_t rounds, cap;
	bool checked;    /* every round's data was checked */
	bool unchecked_note; /* some data could not be checked, said why */
	int64_t bad_offset;
	uint64_t bad_round;
	bool peer_left;  /* rping server: the client disconnected */
};

static const char *const proto_names[] = {"native", "rping", "pingpong"};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int record(struct ping_run *r, double us)
{
	if (r->rounds == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		double *n = realloc(r->us, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->us = n;
		r->cap = cap;
	}
	r->us[r->rounds++] = us;
	return 0;
}

static void pause_interval(const struct ping_run *r, uint64_t round)
{
	if (r->o->interval && !r->o->server && (!r->count || round + 1 < r->count))
		usleep((useconds_t)(r->o->interval * 1000));
}

/* One verbose line per round. */
static void print_round(const struct ping_run *r, uint64_t i, double us, const void *data,
			size_t len, const char *note)
{
	char prev[48];

	if (!r->o->verbose || r->o->json)
		return;
	if (r->count)
		printf("%s: round %" PRIu64 "/%" PRIu64, r->who, i + 1, r->count);
	else
		printf("%s: round %" PRIu64, r->who, i + 1);
	printf(": %u bytes, %s %.1f us%s%s", r->size, r->o->server ? "served in" : "rtt", us,
	       note ? ", " : "", note ? note : "");
	if (data)
		printf(" [%s]", rk_preview(data, len, prev, sizeof(prev)));
	printf("\n");
	fflush(stdout);
}

/* ---- completions ---- */

/* rping server: has the client disconnected (CM DISCONNECTED waiting)? */
static bool cm_peer_left(struct rk_cm *cm)
{
	struct pollfd p;
	struct rdma_cm_event *e;
	bool left;

	if (!cm || !cm->channel)
		return false;
	p.fd = cm->channel->fd;
	p.events = POLLIN;
	if (poll(&p, 1, 0) <= 0 || rdma_get_cm_event(cm->channel, &e))
		return false;
	left = e->event == RDMA_CM_EVENT_DISCONNECTED;
	if (!left)
		rk_debug("ignoring %s on %s", rk_cm_event_name(e->event), cm->peer_addr);
	rdma_ack_cm_event(e);
	if (left && cm->connected) {
		rdma_disconnect(cm->id); /* answer it */
		cm->connected = false;
	}
	return left;
}

/* A CQ, and a receive's completion that came early: the peer's next
 * message can complete before our own SEND's completion is polled. */
struct waiter {
	struct rk_cq *cq;
	bool has_early;
	struct ibv_wc early;
};

/* Wait for the completions of n work requests (their wr_ids in want, any
 * order) within timeout_ms. A receive's completion is copied to *rwc; one
 * that is not wanted yet is kept for the next wait. A flushed request, or a
 * DISCONNECTED on cm, is the peer leaving: -ECONNRESET, not logged (the
 * caller decides what it means). */
static int wait_ids(struct waiter *w, const uint64_t *want, int n, int timeout_ms,
		    struct rk_cm *cm, const char *what, struct ibv_wc *rwc)
{
	double deadline = now_us() + timeout_ms * 1000.0;
	bool done[4] = {false};
	int left = n;

	for (int k = 0; w->has_early && k < n; k++) {
		if (want[k] != w->early.wr_id)
			continue;
		done[k] = true;
		left--;
		if (rwc)
			*rwc = w->early;
		w->has_early = false;
	}
	while (left) {
		struct ibv_wc wc[4];
		double rem = (deadline - now_us()) / 1000;
		int got, ret, slice = rem < 0 ? 0 : (int)rem;

		if (cm && slice > 100)
			slice = 100;
		ret = rk_cq_poll(w->cq, wc, 4, slice, &got);
		if (ret == -ETIMEDOUT) {
			if (cm_peer_left(cm))
				return -ECONNRESET;
			if (now_us() < deadline)
				continue;
			rk_error("%s: no completion within %d ms (peer gone or stuck?)", what,
				 timeout_ms);
			return ret;
		}
		if (ret)
			return ret;
		for (int i = 0; i < got; i++) {
			int k;

			if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				return -ECONNRESET;
			ret = rk_wc_check(&wc[i], what);
			if (ret)
				return ret;
			for (k = 0; k < n; k++)
				if (!done[k] && want[k] == wc[i].wr_id)
					break;
			if (k == n && (wc[i].opcode & IBV_WC_RECV) && !w->has_early) {
				w->early = wc[i];
				w->has_early = true;
				continue;
			}
			if (k == n) {
				rk_error("%s: a completion for wr_id %" PRIu64 " was not due", what,
					 (uint64_t)wc[i].wr_id);
				return -EPROTO;
			}
			done[k] = true;
			left--;
			if ((wc[i].opcode & IBV_WC_RECV) && rwc)
				*rwc = wc[i];
		}
	}
	return 0;
}

static int post_send_buf(struct rk_qp *qp, const struct rk_mr *mr, size_t off, uint32_t len,
			 struct ibv_ah *ah, uint32_t rqpn)
{
	struct ibv_sge sg = rk_sge(mr, off, len);
	struct rk_wr wr = {.op = RK_OP_SEND, .wr_id = WR_SEND, .sg = &sg, .nsge = 1,
			   .flags = IBV_SEND_SIGNALED, .ah = ah, .remote_qpn = rqpn};

	return rk_post(qp, &wr);
}

static int post_recv_buf(struct rk_qp *qp, const struct rk_mr *mr, size_t off, uint32_t len)
{
	struct ibv_sge sg = rk_sge(mr, off, len);

	return rk_post_recv(qp, WR_RECV, &sg, 1);
}

/* A data check that failed: say where, keep it for the summary. */
static int data_mismatch(struct ping_run *r, uint64_t round, ssize_t off, const uint8_t *got,
			 uint8_t want, const char *what)
{
	r->bad_offset = off;
	r->bad_round = round;
	rk_error("round %" PRIu64 ": %s: byte %zd is 0x%02x, 0x%02x was due", round + 1, what, off,
		 got[off], want);
	return -EIO;
}

/* ---- native: rdmakit to rdmakit over rk_conn ---- */

struct native {
	struct ping_run *r;
	struct waiter w;
	struct rk_mr *mr; /* [0, size): ping; [size, 2 size): pong */
	bool validate;
};

static int native_prepare(struct rk_conn *conn, struct rk_wire_buf *req, int *qp_access,
			  void *arg)
{
	struct native *n = arg;
	int ret;

	ret = rk_mr_alloc(conn->pd, 2 * (size_t)n->r->size, IBV_ACCESS_LOCAL_WRITE, &n->mr);
	if (ret)
		return ret;
	memset(req, 0, sizeof(*req));
	req->op = PING_OP;
	req->size = n->r->size;
	req->len = n->r->count;
	req->offset = n->validate ? PING_REQ_VALIDATE : 0;
	*qp_access = 0;
	return 0;
}

static int native_on_request(struct rk_conn *conn, const struct rk_wire_buf *req,
			     struct rk_wire_buf *reply, int *qp_access, char *reason,
			     size_t reason_len, void *arg)
{
	struct native *n = arg;
	int ret;

	if (req->op != PING_OP) {
		snprintf(reason, reason_len, "this is an rdmakit ping server; the client asks for "
					     "operation 0x%x (an rdmakit rc client?)", req->op);
		return -EPROTO;
	}
	if (req->size < 1 || req->size > NATIVE_MAX_SIZE || req->len < 1 ||
	    req->len > 1000000000ull || (req->offset & ~(uint64_t)PING_REQ_VALIDATE)) {
		snprintf(reason, reason_len, "bad ping request: size %u (1..%u), count %" PRIu64
					     " (1..10^9), flags 0x%" PRIx64,
			 req->size, NATIVE_MAX_SIZE, req->len, req->offset);
		return -EINVAL;
	}
	n->r->size = req->size;
	n->r->count = req->len;
	n->validate = (req->offset & PING_REQ_VALIDATE) || n->r->o->validate;
	ret = rk_mr_alloc(conn->pd, 2 * (size_t)req->size, IBV_ACCESS_LOCAL_WRITE, &n->mr);
	if (ret) {
		snprintf(reason, reason_len, "the server cannot register %u bytes", 2 * req->size);
		return ret;
	}
	memset(reply, 0, sizeof(*reply));
	*qp_access = 0;
	return 0;
}

/* rk_conn_close() calls this before the PD goes (also when setup fails). */
static void native_release(struct rk_conn *conn, void *arg)
{
	struct native *n = arg;

	rk_mr_free(n->mr);
	n->mr = NULL;
}

static uint32_t native_seed(uint64_t round)
{
	return (uint32_t)(round * 2654435761u + 1);
}

static int native_client_round(struct native *n, struct rk_conn *c, uint64_t i)
{
	struct ping_run *r = n->r;
	uint8_t *ping = n->mr->buf, *pong = ping + r->size;
	const uint64_t want[2] = {WR_SEND, WR_RECV};
	struct ibv_wc wc;
	ssize_t bad;
	double t0, us;
	int ret;

	if (n->validate) {
		rk_pattern_fill(ping, r->size, native_seed(i));
		memset(pong, 0, r->size);
	}
	ret = post_recv_buf(c->qp, n->mr, r->size, r->size);
	if (ret)
		return ret;
	t0 = now_us();
	ret = post_send_buf(c->qp, n->mr, 0, r->size, NULL, 0);
	if (!ret)
		ret = wait_ids(&n->w, want, 2, c->timeout_ms, NULL, "ping", &wc);
	if (ret)
		return ret;
	us = now_us() - t0;
	if (wc.byte_len != r->size) {
		rk_error("round %" PRIu64 ": the pong has %u bytes, %u were sent", i + 1,
			 wc.byte_len, r->size);
		return -EIO;
	}
	if (n->validate) {
		bad = rk_buf_diff(pong, ping, r->size);
		if (bad >= 0)
			return data_mismatch(r, i, bad, pong, ping[bad], "the pong differs from the ping");
	}
	print_round(r, i, us, NULL, 0, n->validate ? "checked" : NULL);
	return record(r, us);
}

static int native_server_round(struct native *n, struct rk_conn *c, uint64_t i)
{
	struct ping_run *r = n->r;
	uint8_t *base = n->mr->buf;
	size_t cur = (i % 2) * r->size, next = ((i + 1) % 2) * r->size;
	const uint64_t rwant[1] = {WR_RECV}, swant[1] = {WR_SEND};
	struct ibv_wc wc;
	ssize_t bad;
	double t0, us;
	int ret;

	t0 = now_us();
	ret = wait_ids(&n->w, rwant, 1, c->timeout_ms, NULL, "ping", &wc);
	if (ret)
		return ret;
	t0 = now_us();
	if (wc.byte_len != r->size) {
		rk_error("round %" PRIu64 ": the ping has %u bytes, the client said %u", i + 1,
			 wc.byte_len, r->size);
		return -EIO;
	}
	if (n->validate) {
		bad = rk_pattern_check(base + cur, r->size, native_seed(i));
		if (bad >= 0)
			return data_mismatch(r, i, bad, base + cur,
					     rk_pattern_byte((size_t)bad, native_seed(i)),
					     "the ping is not what the client sent");
	}
	/* The next ping's receive before this pong: the client sends it as
	 * soon as the pong arrives. */
	if (i + 1 < r->count) {
		ret = post_recv_buf(c->qp, n->mr, next, r->size);
		if (ret)
			return ret;
	}
	ret = post_send_buf(c->qp, n->mr, cur, r->size, NULL, 0);
	if (!ret)
		ret = wait_ids(&n->w, swant, 1, c->timeout_ms, NULL, "pong", NULL);
	if (ret)
		return ret;
	us = now_us() - t0;
	print_round(r, i, us, NULL, 0, n->validate ? "checked" : NULL);
	return record(r, us);
}

static int run_native(struct ping_run *r)
{
	const struct ping_opts *o = r->o;
	struct native n = {.r = r, .validate = o->validate};
	struct rk_conn_opts co = {0};
	struct rk_conn *c = NULL;
	int ret;

	cli_conn_opts(&co, o->server, r->host, o->port, o->cm, &o->dev, r->timeout_ms, o->wait);
	co.events = o->events;
	co.transport = RK_RC;
	co.qp.max_send_wr = 8;
	co.qp.max_recv_wr = 8;
	co.prepare = native_prepare;
	co.on_request = native_on_request;
	co.release = native_release;
	co.arg = &n;
	if (!o->json && o->server)
		printf("server: waiting for a ping client on port %" PRIu64 " (%s)\n", o->port,
		       o->cm ? "RDMA CM" : "TCP exchange");
	fflush(stdout);
	ret = rk_conn_establish(&co, &c);
	if (ret)
		goto out;
	n.w.cq = c->cq;
	snprintf(r->device, sizeof(r->device), "%s", c->dev->info.name);
	snprintf(r->peer, sizeof(r->peer), "%s", c->peer);
	r->qpn = c->qp->qp->qp_num;
	r->peer_qpn = c->cm_mode ? c->qp->remote.qpn : c->remote.qpn;
	r->path_mtu = rk_mtu_bytes(c->cm_mode ? c->qp->path.path_mtu : c->path_mtu);
	r->has_gid = c->has_gid;
	r->gid = c->gid;
	if (!o->json)
		printf("%s: connected to %s (%s): QP 0x%x <-> peer QP 0x%x, path MTU %d; %" PRIu64
		       " pings of %u bytes%s\n",
		       r->who, r->peer, c->cm_mode ? "RDMA CM" : "TCP exchange", r->qpn,
		       r->peer_qpn, r->path_mtu, r->count, r->size,
		       n.validate ? ", data checked" : "");
	fflush(stdout);
	/* The server's first receive: with TCP before the sync that starts the
	 * pings; with CM after it, as the sync's own SEND would land in it (a
	 * ping that comes first is retried by the client's HCA: RNR). */
	if (o->server && !c->cm_mode)
		ret = post_recv_buf(c->qp, n.mr, 0, r->size);
	if (!ret)
		ret = rk_ctl_sync(c->ctl, 1, 0, c->timeout_ms);
	if (!ret && o->server && c->cm_mode)
		ret = post_recv_buf(c->qp, n.mr, 0, r->size);
	for (uint64_t i = 0; !ret && i < r->count; i++) {
		ret = o->server ? native_server_round(&n, c, i) : native_client_round(&n, c, i);
		if (!ret)
			pause_interval(r, i);
	}
	r->checked = n.validate && !ret;
	/* A last sync: neither side tears down while the other still works. */
	if (!ret)
		ret = rk_ctl_sync(c->ctl, 2, 0, c->timeout_ms);
out:
	rk_conn_close(c);
	return ret;
}

/* ---- rping ---- */

struct rping {
	struct ping_run *r;
	struct waiter w;
	struct rk_cm *listener, *cm;
	struct ibv_pd *pd;
	struct rk_cq *cq;
	struct rk_qp *qp;
	struct rk_mr *msg;   /* [0, 16): what we send; [16, 32): what we receive */
	struct rk_mr *start; /* client: the ping the server READs */
	struct rk_mr *sink;  /* client: where the server WRITEs the pong; server: its buffer */
};

static void rping_free(struct rping *p)
{
	rk_mr_free(p->sink);
	rk_mr_free(p->start);
	rk_mr_free(p->msg);
	p->sink = p->start = p->msg = NULL;
	if (p->cm)
		rk_cm_disconnect(p->cm, 1000);
	rk_qp_destroy(p->qp);
	p->qp = NULL;
	rk_cq_destroy(p->cq);
	p->cq = NULL;
	rk_pd_free(p->pd);
	p->pd = NULL;
	rk_cm_destroy(p->cm);
	p->cm = NULL;
	rk_cm_destroy(p->listener);
	p->listener = NULL;
}

/* PD, CQ, QP and buffers on the device CM chose; one receive posted. */
static int rping_setup(struct rping *p)
{
	const struct ping_opts *o = p->r->o;
	struct rk_qp_init_attr qa = {.transport = RK_RC, .max_send_wr = 16, .max_recv_wr = 4};
	int ret;

	ret = rk_pd_alloc(p->cm->dev, &p->pd);
	if (!ret)
		ret = rk_cq_create(p->cm->dev, 64, o->events, &p->cq);
	p->w.cq = p->cq;
	p->w.has_early = false;
	if (!ret)
		ret = rk_cm_create_qp(p->cm, p->pd, p->cq, p->cq, &qa, &p->qp);
	if (!ret)
		ret = rk_mr_alloc(p->pd, 2 * RK_RPING_INFO_LEN, IBV_ACCESS_LOCAL_WRITE, &p->msg);
	/* Exactly the access each buffer needs: the server READs the ping and
	 * WRITEs the pong; the server's own buffer is written by its READ. */
	if (!ret && !o->server)
		ret = rk_mr_alloc(p->pd, p->r->size, IBV_ACCESS_REMOTE_READ, &p->start);
	if (!ret)
		ret = rk_mr_alloc(p->pd, p->r->size,
				  IBV_ACCESS_LOCAL_WRITE | (o->server ? 0 : IBV_ACCESS_REMOTE_WRITE),
				  &p->sink);
	if (!ret)
		ret = post_recv_buf(p->qp, p->msg, RK_RPING_INFO_LEN, RK_RPING_INFO_LEN);
	return ret;
}

static void rping_connected(struct rping *p)
{
	struct ping_run *r = p->r;

	snprintf(r->device, sizeof(r->device), "%s", p->cm->dev->info.name);
	snprintf(r->peer, sizeof(r->peer), "%s", p->cm->peer_addr);
	r->qpn = p->qp->qp->qp_num;
	r->peer_qpn = p->qp->remote.qpn;
	r->path_mtu = rk_mtu_bytes(p->qp->path.path_mtu);
	r->has_gid = true;
	r->gid = p->cm->gid;
	if (!r->o->json)
		printf("%s: connected to %s (RDMA CM, rping protocol): QP 0x%x <-> peer QP 0x%x, "
		       "path MTU %d\n",
		       r->who, r->peer, r->qpn, r->peer_qpn, r->path_mtu);
	fflush(stdout);
}

/* SEND the 16-byte advertisement of mr, and wait for it and for the
 * server's 16-byte go-ahead. */
static int rping_advertise(struct rping *p, const struct rk_mr *mr, const char *what)
{
	struct rk_rping_info info = {.addr = (uintptr_t)mr->buf, .rkey = mr->mr->rkey,
				     .size = p->r->size};
	const uint64_t want[2] = {WR_SEND, WR_RECV};
	struct ibv_wc wc;
	int ret;

	rk_rping_info_encode(&info, p->msg->buf);
	ret = post_send_buf(p->qp, p->msg, 0, RK_RPING_INFO_LEN, NULL, 0);
	if (!ret)
		ret = wait_ids(&p->w, want, 2, p->r->timeout_ms, NULL, what, &wc);
	if (ret == -ECONNRESET)
		rk_error("%s: the server went away", what);
	if (ret)
		return ret;
	if (wc.byte_len != RK_RPING_INFO_LEN) {
		rk_error("%s: the server's go-ahead has %u bytes, not rping's %d", what,
			 wc.byte_len, RK_RPING_INFO_LEN);
		return -EPROTO;
	}
	return post_recv_buf(p->qp, p->msg, RK_RPING_INFO_LEN, RK_RPING_INFO_LEN);
}

static int rping_client_round(struct rping *p, uint64_t i)
{
	struct ping_run *r = p->r;
	uint8_t *start = p->start->buf, *sink = p->sink->buf;
	double t0, us;
	ssize_t bad;
	int ret;

	/* rping always fills the ping this way; -V compares the pong with it. */
	rk_rping_fill(start, r->size, (uint32_t)i);
	memset(sink, 0, r->size);
	t0 = now_us();
	ret = rping_advertise(p, p->start, "ping (advertise the buffer to READ)");
	if (!ret)
		ret = rping_advertise(p, p->sink, "pong (advertise the buffer to WRITE)");
	if (ret)
		return ret;
	us = now_us() - t0;
	if (r->o->validate) {
		bad = rk_buf_diff(sink, start, r->size);
		if (bad >= 0)
			return data_mismatch(r, i, bad, sink, start[bad],
					     "the pong the server wrote differs from the ping");
	}
	print_round(r, i, us, sink, r->size, r->o->validate ? "checked" : NULL);
	return record(r, us);
}

static int rping_client(struct rping *p)
{
	struct ping_run *r = p->r;
	double deadline = now_us() + r->timeout_ms * 1000.0;
	int ret, tries = 0;

	/* A server started after us: try again while nothing listens. */
	for (;;) {
		tries++;
		ret = rk_cm_resolve(r->host, (uint16_t)r->o->port, r->timeout_ms, &p->cm);
		if (!ret)
			ret = rping_setup(p);
		if (!ret)
			ret = rk_cm_connect_raw(p->cm, p->qp, NULL, 0, r->timeout_ms);
		if (ret != -ECONNREFUSED || now_us() + 200e3 > deadline)
			break;
		rping_free(p);
		usleep(200 * 1000);
	}
	if (ret == -ECONNREFUSED)
		rk_error("connect to %s port %" PRIu64 " with RDMA CM: REJECTED, nothing listens "
			 "there; gave up after %d tr%s in %d ms (is 'rping -s' running?)",
			 r->host, r->o->port, tries, tries > 1 ? "ies" : "y", r->timeout_ms);
	if (ret)
		return ret;
	rping_connected(p);
	for (uint64_t i = 0; !r->count || i < r->count; i++) {
		ret = rping_client_round(p, i);
		if (ret)
			return ret;
		pause_interval(r, i);
	}
	r->checked = r->o->validate;
	return 0;
}

/* Server: wait for the client's next advertisement. -ECONNRESET when it
 * disconnected instead. */
static int rping_receive_info(struct rping *p, struct rk_rping_info *info, const char *what)
{
	const uint64_t want[1] = {WR_RECV};
	struct ibv_wc wc;
	char why[128];
	int ret;

	ret = wait_ids(&p->w, want, 1, p->r->timeout_ms, p->cm, what, &wc);
	if (ret)
		return ret;
	ret = rk_rping_info_decode(p->msg->buf + RK_RPING_INFO_LEN, wc.byte_len, info, why,
				   sizeof(why));
	if (ret) {
		rk_error("%s: bad message from %s: %s", what, p->cm->peer_addr, why);
		return ret;
	}
	return post_recv_buf(p->qp, p->msg, RK_RPING_INFO_LEN, RK_RPING_INFO_LEN);
}

/* Server: READ or WRITE len bytes of the client's advertised buffer. */
static int rping_rdma(struct rping *p, enum rk_op op, const struct rk_rping_info *info,
		      uint32_t len, const char *what)
{
	struct ibv_sge sg = rk_sge(p->sink, 0, len);
	struct rk_wr wr = {.op = op, .wr_id = WR_RDMA, .sg = &sg, .nsge = 1,
			   .flags = IBV_SEND_SIGNALED, .remote_addr = info->addr,
			   .rkey = info->rkey};
	const uint64_t want[1] = {WR_RDMA};
	int ret = rk_post(p->qp, &wr);

	return ret ? ret : wait_ids(&p->w, want, 1, p->r->timeout_ms, NULL, what, NULL);
}

/* Server: the 16-byte go-ahead (rping's server sends its unused buffer). */
static int rping_go_ahead(struct rping *p)
{
	const uint64_t want[1] = {WR_SEND};
	int ret;

	memset(p->msg->buf, 0, RK_RPING_INFO_LEN);
	ret = post_send_buf(p->qp, p->msg, 0, RK_RPING_INFO_LEN, NULL, 0);
	return ret ? ret : wait_ids(&p->w, want, 1, p->r->timeout_ms, NULL, "go-ahead", NULL);
}

static int rping_server_round(struct rping *p, uint64_t i)
{
	struct ping_run *r = p->r;
	struct rk_rping_info src, dst;
	uint8_t *buf = p->sink->buf;
	double t0, us;
	ssize_t bad;
	int ret;

	ret = rping_receive_info(p, &src, "wait for the client's ping buffer");
	if (ret)
		return ret;
	t0 = now_us();
	if (src.size < 1 || src.size > r->size) {
		rk_error("round %" PRIu64 ": the client's buffer is %u bytes; this server's is %u "
			 "(start it with -S %u)",
			 i + 1, src.size, r->size, src.size);
		return -EMSGSIZE;
	}
	memset(buf, 0, r->size);
	ret = rping_rdma(p, RK_OP_READ, &src, src.size, "RDMA READ of the ping");
	if (ret)
		return ret;
	if (r->o->validate) {
		bad = rk_rping_check(buf, src.size, (uint32_t)i);
		if (bad >= 0) {
			uint8_t want[RK_RPING_MAX_SIZE + 1];

			rk_rping_fill(want, src.size, (uint32_t)i);
			return data_mismatch(r, i, bad, buf, want[bad],
					     "the ping is not rping's -V pattern");
		}
	}
	ret = rping_go_ahead(p);
	if (!ret)
		ret = rping_receive_info(p, &dst, "wait for the client's pong buffer");
	if (ret == -ECONNRESET)
		rk_error("round %" PRIu64 ": the client left in the middle of a ping", i + 1);
	if (ret)
		return ret;
	if (dst.size < src.size) {
		rk_error("round %" PRIu64 ": the client's pong buffer has %u bytes, its ping %u",
			 i + 1, dst.size, src.size);
		return -EMSGSIZE;
	}
	ret = rping_rdma(p, RK_OP_WRITE, &dst, src.size, "RDMA WRITE of the pong");
	if (!ret)
		ret = rping_go_ahead(p);
	if (ret)
		return ret;
	us = now_us() - t0;
	print_round(r, i, us, buf, src.size, r->o->validate ? "checked: rping's pattern" : NULL);
	return record(r, us);
}

static int rping_server(struct rping *p)
{
	struct ping_run *r = p->r;
	const struct ping_opts *o = r->o;
	int ret;

	ret = rk_cm_listen(o->addr, (uint16_t)o->port, &p->listener);
	if (ret)
		return ret;
	if (!o->json)
		printf("server: waiting for an rping client on port %" PRIu64 " (RDMA CM)\n",
		       o->port);
	fflush(stdout);
	ret = rk_cm_get_request_any(p->listener, o->wait ? (int)o->wait * 1000 : -1, &p->cm);
	if (!ret)
		ret = rping_setup(p);
	if (!ret)
		ret = rk_cm_accept_raw(p->cm, p->qp, NULL, 0, r->timeout_ms);
	if (ret)
		return ret;
	rping_connected(p);
	for (uint64_t i = 0; !r->count || i < r->count; i++) {
		ret = rping_server_round(p, i);
		if (ret == -ECONNRESET && !r->count && r->rounds == i) {
			/* As rping's server: the client's disconnect ends the run. */
			r->peer_left = true;
			ret = 0;
			break;
		}
		if (ret == -ECONNRESET)
			rk_error("the client left after %zu of %" PRIu64 " pings", r->rounds,
				 r->count);
		if (ret)
			return ret;
	}
	r->checked = o->validate;
	return 0;
}

static int run_rping(struct ping_run *r)
{
	struct rping p = {.r = r};
	int ret;

	ret = r->o->server ? rping_server(&p) : rping_client(&p);
	rping_free(&p);
	return ret;
}

/* ---- ibv_*_pingpong ---- */

struct pp {
	struct ping_run *r;
	struct waiter w;
	struct cli_dev d;
	struct ibv_pd *pd;
	struct rk_cq *cq;
	struct rk_qp *qp;
	struct ibv_ah *ah;
	struct rk_ctl *ctl;
	int listen_fd;
	struct rk_mr *sbuf; /* what we send */
	struct rk_mr *rbuf; /* receives: UD leaves room for the GRH first */
	uint32_t rlen;      /* bytes per receive */
	uint32_t roff;      /* where the data starts in a receive */
	int posted;         /* receives outstanding */
	int depth;
	struct rk_pp_dest remote;
	enum ibv_mtu mtu;
};

static void pp_free(struct pp *p)
{
	if (p->ah)
		ibv_destroy_ah(p->ah);
	rk_mr_free(p->rbuf);
	rk_mr_free(p->sbuf);
	rk_qp_destroy(p->qp);
	rk_cq_destroy(p->cq);
	rk_pd_free(p->pd);
	if (p->d.dev)
		cli_dev_close(&p->d);
	rk_ctl_close(p->ctl);
	if (p->listen_fd >= 0)
		close(p->listen_fd);
}

static int pp_post_recvs(struct pp *p)
{
	while (p->posted < p->depth) {
		int ret = post_recv_buf(p->qp, p->rbuf, 0, p->rlen);

		if (ret)
			return ret;
		p->posted++;
	}
	return 0;
}

/* Device, QP and buffers, receives posted: ready before our address goes
 * out, as ibv_*_pingpong is. */
static int pp_setup(struct pp *p)
{
	struct ping_run *r = p->r;
	const struct ping_opts *o = r->o;
	struct rk_qp_init_attr qa = {.transport = r->transport, .max_send_wr = 4};
	const struct rk_port_info *pi;
	int ret;

	ret = cli_dev_open(&o->dev, p->ctl->local_ip[0] ? p->ctl->local_ip : NULL, &p->d);
	if (ret)
		return ret;
	pi = rk_device_port(p->d.dev, p->d.port);
	if (r->transport == RK_UD && r->size > (uint32_t)rk_mtu_bytes(pi->active_mtu)) {
		rk_error("a UD message of %u bytes does not fit the port's MTU of %d bytes: a "
			 "datagram is one packet (use -s %d or less)",
			 r->size, rk_mtu_bytes(pi->active_mtu), rk_mtu_bytes(pi->active_mtu));
		return -EMSGSIZE;
	}
	p->depth = (int)(r->count < o->rx_depth ? r->count : o->rx_depth);
	if (p->depth < 1)
		p->depth = 1;
	qa.port_num = p->d.port;
	qa.max_recv_wr = (uint32_t)p->depth;
	qa.gid = p->d.has_gid ? &p->d.gid : NULL;
	qa.qkey = RK_PP_UD_QKEY;
	p->roff = r->transport == RK_UD ? RK_PP_GRH_LEN : 0;
	p->rlen = r->size + p->roff;
	ret = rk_pd_alloc(p->d.dev, &p->pd);
	if (!ret)
		ret = rk_cq_create(p->d.dev, 2 * p->depth + 8, o->events, &p->cq);
	p->w.cq = p->cq;
	if (!ret)
		ret = rk_qp_create(p->pd, p->d.dev, p->cq, p->cq, &qa, &p->qp);
	if (!ret)
		ret = rk_mr_alloc(p->pd, r->size, 0, &p->sbuf);
	if (!ret)
		ret = rk_mr_alloc(p->pd, p->rlen, IBV_ACCESS_LOCAL_WRITE, &p->rbuf);
	if (!ret)
		ret = rk_qp_to_init(p->qp, 0);
	if (!ret && r->transport == RK_UD) {
		ret = rk_qp_to_rtr(p->qp, NULL, NULL);
		if (!ret)
			ret = rk_qp_to_rts(p->qp);
	}
	if (!ret)
		ret = pp_post_recvs(p);
	return ret;
}

/* Connect our QP to the peer's address (RC/UC: RTR and RTS; UD: an
 * address handle). The peer tells no MTU: -m is used on both sides. */
static int pp_connect(struct pp *p)
{
	struct ping_run *r = p->r;
	const struct rk_port_info *pi = rk_device_port(p->d.dev, p->d.port);
	struct rk_endpoint ep = {0};
	struct rk_path_attr path;
	char gid[64];
	int ret;

	ep.transport = r->transport;
	ep.link_layer = pi->link_layer;
	ep.lid = p->remote.lid;
	ep.gid = p->remote.gid;
	ep.gid_type = p->d.has_gid ? p->d.gid.type : RK_GID_IB;
	ep.qpn = p->remote.qpn;
	ep.psn = p->remote.psn;
	ep.mtu = p->mtu;
	ep.qkey = RK_PP_UD_QKEY;
	r->peer_qpn = p->remote.qpn;
	if (rk_port_is_roce(p->d.dev, p->d.port) && rk_gid_is_zero(&p->remote.gid)) {
		rk_error("%s sent no GID (all zeros), and RoCE needs one: give the ibv_*_pingpong "
			 "peer -g with the index of its RoCE v2 GID ('rdmakit devices' lists them)",
			 r->peer);
		return -EINVAL;
	}
	if (!r->o->json)
		printf("%s: %s at %s: LID %u, QPN 0x%06x, PSN 0x%06x, GID %s\n", r->who,
		       r->o->server ? "client" : "server", r->peer, p->remote.lid, p->remote.qpn,
		       p->remote.psn, rk_gid_str(&p->remote.gid, gid, sizeof(gid)));
	if (r->transport == RK_UD)
		return rk_ah_create(p->qp, &ep, &p->ah);
	rk_path_defaults(&path);
	path.path_mtu = p->mtu;
	path.max_dest_rd_atomic = 1;
	path.max_rd_atomic = 1;
	/* Already in INIT, with the receives posted. */
	ret = rk_qp_to_rtr(p->qp, &ep, &path);
	return ret ? ret : rk_qp_to_rts(p->qp);
}

static int pp_exchange(struct pp *p)
{
	struct ping_run *r = p->r;
	const struct ping_opts *o = r->o;
	const struct rk_port_info *pi = rk_device_port(p->d.dev, p->d.port);
	struct rk_pp_dest mine = {.lid = pi->lid, .qpn = p->qp->qp->qp_num, .psn = p->qp->psn};
	char out[RK_PP_MSG_LEN], in[RK_PP_MSG_LEN], why[160], gid[64];
	size_t got;
	int ret;

	if (p->d.has_gid)
		mine.gid = p->d.gid.gid;
	ret = rk_pp_encode(&mine, out, sizeof(out));
	if (ret)
		return ret;
	if (!o->json)
		printf("%s: local address: LID %u, QPN 0x%06x, PSN 0x%06x, GID %s (index %d)\n",
		       r->who, mine.lid, mine.qpn, mine.psn,
		       rk_gid_str(&mine.gid, gid, sizeof(gid)),
		       p->d.has_gid ? (int)p->d.gid.index : -1);
	if (!o->server) {
		ret = p->ctl->ops->send(p->ctl, (const uint8_t *)out, sizeof(out));
		if (ret)
			goto err_io;
	}
	ret = p->ctl->ops->recv(p->ctl, (uint8_t *)in, sizeof(in), r->timeout_ms, &got);
	if (ret == -ETIMEDOUT) {
		rk_error("%s sent no address within %d ms", r->peer, r->timeout_ms);
		return ret;
	}
	if (ret && got == 0)
		goto err_io;
	ret = rk_pp_parse(in, got, &p->remote, why, sizeof(why));
	if (ret) {
		rk_error("%s: not an ibv_*_pingpong address message: %s", r->peer, why);
		return ret;
	}
	if (!o->server) {
		/* The server connected before it answered: say "done", then go. */
		ret = p->ctl->ops->send(p->ctl, (const uint8_t *)RK_PP_DONE, RK_PP_DONE_LEN);
		if (ret)
			goto err_io;
		return pp_connect(p);
	}
	ret = pp_connect(p);
	if (ret)
		return ret;
	ret = p->ctl->ops->send(p->ctl, (const uint8_t *)out, sizeof(out));
	if (ret)
		goto err_io;
	ret = p->ctl->ops->recv(p->ctl, (uint8_t *)in, RK_PP_DONE_LEN, r->timeout_ms, &got);
	if (ret || memcmp(in, RK_PP_DONE, RK_PP_DONE_LEN)) {
		rk_error("%s did not end the exchange with \"done\" (%s)", r->peer,
			 ret ? rk_strerror(ret) : "other bytes came");
		return ret ? ret : -EPROTO;
	}
	return 0;

err_io:
	rk_error("exchange addresses with %s: %s", r->peer, rk_strerror(ret));
	return ret;
}

/* The ping we send: a pattern, with the first byte of every page 0 as
 * ibv_*_pingpong -c expects. */
static void pp_fill(struct pp *p)
{
	uint8_t *b = p->sbuf->buf;

	rk_pattern_fill(b, p->r->size, 0x9e3779b9u);
	for (size_t i = 0; i < p->r->size; i += PP_PAGE)
		b[i] = 0;
}

/* One completion of each: our SEND and a receive. */
static int pp_turn(struct pp *p, bool send_first, uint64_t i, double *us_p)
{
	const uint64_t rwant[1] = {WR_RECV}, swant[1] = {WR_SEND};
	struct ping_run *r = p->r;
	struct ibv_wc wc;
	uint8_t *got = (uint8_t *)p->rbuf->buf + p->roff;
	double t0 = now_us();
	ssize_t bad;
	int ret;

	if (send_first) {
		ret = post_send_buf(p->qp, p->sbuf, 0, r->size, p->ah, p->remote.qpn);
		if (!ret)
			ret = wait_ids(&p->w, swant, 1, r->timeout_ms, NULL, "SEND", NULL);
		if (ret)
			return ret;
	}
	ret = wait_ids(&p->w, rwant, 1, r->timeout_ms, NULL, "RECV", &wc);
	if (ret)
		return ret;
	p->posted--;
	if (!send_first)
		t0 = now_us();
	if (wc.byte_len != p->rlen) {
		rk_error("round %" PRIu64 ": received %u bytes, %u were due (same -s on both "
			 "sides?)",
			 i + 1, wc.byte_len - p->roff, r->size);
		return -EMSGSIZE;
	}
	if (send_first && r->o->validate) {
		/* The server sends back what it received. */
		bad = rk_buf_diff(got, p->sbuf->buf, r->size);
		if (bad >= 0)
			return data_mismatch(r, i, bad, got, ((uint8_t *)p->sbuf->buf)[bad],
					     "the pong differs from the ping");
	}
	if (!send_first && r->o->validate && i > 0) {
		/* The client's buffer is its send and receive buffer: each ping
		 * after the first is the pong it got. */
		bad = rk_buf_diff(got, p->sbuf->buf, r->size);
		if (bad >= 0)
			return data_mismatch(r, i, bad, got, ((uint8_t *)p->sbuf->buf)[bad],
					     "the ping is not the pong this server sent");
	}
	if (!send_first) {
		memcpy(p->sbuf->buf, got, r->size);
		ret = post_send_buf(p->qp, p->sbuf, 0, r->size, p->ah, p->remote.qpn);
		if (!ret)
			ret = wait_ids(&p->w, swant, 1, r->timeout_ms, NULL, "SEND", NULL);
		if (ret)
			return ret;
	}
	*us_p = now_us() - t0;
	/* Keep receives posted, the way ibv_*_pingpong does. */
	if ((uint64_t)(i + 1 + (uint64_t)p->posted) < r->count)
		return pp_post_recvs(p);
	return 0;
}

static int run_pingpong(struct ping_run *r)
{
	const struct ping_opts *o = r->o;
	struct pp p = {.r = r, .listen_fd = -1};
	int ret;

	p.mtu = rk_mtu_from_bytes((int)o->mtu);
	if (!o->server) {
		ret = rk_tcp_connect(r->host, (uint16_t)o->port, r->timeout_ms, &p.ctl);
	} else {
		ret = rk_tcp_listen(NULL, (uint16_t)o->port, &p.listen_fd);
		if (!ret && !o->json)
			printf("server: waiting for an ibv_%s_pingpong client on TCP port %" PRIu64
			       "\n",
			       r->transport == RK_RC ? "rc" : r->transport == RK_UC ? "uc" : "ud",
			       o->port);
		fflush(stdout);
		if (!ret)
			ret = rk_tcp_accept(p.listen_fd, o->wait ? (int)o->wait * 1000 : -1, &p.ctl);
	}
	if (ret)
		goto out;
	snprintf(r->peer, sizeof(r->peer), "%s", p.ctl->peer);
	ret = pp_setup(&p);
	if (!ret)
		ret = pp_exchange(&p);
	if (ret)
		goto out;
	rk_ctl_close(p.ctl);
	p.ctl = NULL;
	snprintf(r->device, sizeof(r->device), "%s", p.d.dev->info.name);
	r->qpn = p.qp->qp->qp_num;
	r->path_mtu = rk_mtu_bytes(p.mtu);
	r->has_gid = p.d.has_gid;
	r->gid = p.d.gid;
	if (!o->json)
		printf("%s: %s QP 0x%x <-> peer QP 0x%x, path MTU %d; %" PRIu64
		       " exchanges of %u bytes%s\n",
		       r->who, rk_transport_str(r->transport), r->qpn, r->peer_qpn, r->path_mtu,
		       r->count, r->size, o->validate ? ", data checked" : "");
	fflush(stdout);
	pp_fill(&p);
	for (uint64_t i = 0; i < r->count; i++) {
		double us = 0;

		ret = pp_turn(&p, !o->server, i, &us);
		if (ret)
			break;
		print_round(r, i, us, NULL, 0, o->validate ? (o->server && !i ? "first ping "
					"(the client's own content)" : "checked") : NULL);
		ret = record(r, us);
		if (ret)
			break;
		pause_interval(r, i);
	}
	r->checked = o->validate && !ret;
	/* The server cannot know what the client's first ping holds. */
	r->unchecked_note = o->server && r->checked;
out:
	pp_free(&p);
	return ret;
}

/* ---- output ---- */

static void summary_text(const struct ping_run *r, int result)
{
	struct rk_rtt_stats st;
	const char *what = r->o->server ? "round" : "rtt";

	if (!rk_rtt_stats_compute(r->us, r->rounds, &st))
		printf("%s: %zu round%s of %u bytes, %s min %.1f / median %.1f / p99 %.1f / max "
		       "%.1f us (mean %.1f)\n",
		       r->who, r->rounds, r->rounds == 1 ? "" : "s", r->size, what, st.min,
		       st.median, st.p99, st.max, st.mean);
	if (result) {
		printf("%s: FAILED after %zu round%s (%s)\n", r->who, r->rounds,
		       r->rounds == 1 ? "" : "s", rk_strerror(result));
		return;
	}
	printf("%s: %s%s%s: OK\n", r->who,
	       r->unchecked_note ? "data checked in every round after the first (the client's "
				   "own content; each later ping is the pong sent back)" :
	       r->checked ? "data checked in every round" :
	       r->proto == PROTO_PINGPONG ? "data not checked (use -c)" : "data not checked (use -V)",
	       r->peer_left ? "; the client disconnected, as rping does"
		: "", r->rounds ? "" : "; no rounds");
}

static json_object *summary_json(const struct ping_run *r, int result)
{
	json_object *doc = json_object_new_object();
	struct rk_rtt_stats st;
	char text[64];

	json_object_object_add(doc, "role", json_object_new_string(r->who));
	json_object_object_add(doc, "proto", json_object_new_string(proto_names[r->proto]));
	json_object_object_add(doc, "transport",
			       json_object_new_string(rk_transport_str(r->transport)));
	json_object_object_add(doc, "connection",
			       json_object_new_string(r->proto == PROTO_RPING ? "cm" :
						      r->o->cm ? "cm" : "tcp"));
	if (r->device[0]) {
		json_object_object_add(doc, "device", json_object_new_string(r->device));
		json_object_object_add(doc, "peer", json_object_new_string(r->peer));
		json_object_object_add(doc, "qpn", json_object_new_int64(r->qpn));
		json_object_object_add(doc, "peer_qpn", json_object_new_int64(r->peer_qpn));
		json_object_object_add(doc, "path_mtu", json_object_new_int(r->path_mtu));
		if (r->has_gid) {
			json_object *g = json_object_new_object();

			json_object_object_add(g, "index", json_object_new_int64(r->gid.index));
			json_object_object_add(g, "type", json_object_new_string(
								  rk_gid_type_str(r->gid.type)));
			json_object_object_add(g, "gid", json_object_new_string(rk_gid_str(
								 &r->gid.gid, text, sizeof(text))));
			json_object_object_add(doc, "gid", g);
		}
	}
	json_object_object_add(doc, "size", json_object_new_int64(r->size));
	json_object_object_add(doc, "count", json_object_new_int64((int64_t)r->count));
	json_object_object_add(doc, "rounds", json_object_new_int64((int64_t)r->rounds));
	json_object_object_add(doc, "validated", json_object_new_boolean(r->checked));
	if (r->bad_offset >= 0) {
		json_object_object_add(doc, "bad_round", json_object_new_int64((int64_t)r->bad_round + 1));
		json_object_object_add(doc, "bad_offset", json_object_new_int64(r->bad_offset));
	}
	if (!rk_rtt_stats_compute(r->us, r->rounds, &st)) {
		json_object *t = json_object_new_object();

		json_object_object_add(t, "min", json_object_new_double(st.min));
		json_object_object_add(t, "median", json_object_new_double(st.median));
		json_object_object_add(t, "p99", json_object_new_double(st.p99));
		json_object_object_add(t, "max", json_object_new_double(st.max));
		json_object_object_add(t, "mean", json_object_new_double(st.mean));
		json_object_object_add(doc, r->o->server ? "round_us" : "rtt_us", t);
	}
	if (r->peer_left)
		json_object_object_add(doc, "peer_disconnected", json_object_new_boolean(true));
	if (r->unchecked_note)
		json_object_object_add(doc, "first_round_unchecked", json_object_new_boolean(true));
	json_object_object_add(doc, "result", json_object_new_string(result ? "failed" : "ok"));
	if (result)
		json_object_object_add(doc, "error", json_object_new_string(rk_strerror(result)));
	return doc;
}

/* ---- options ---- */

static const char usage_text[] =
	"rdmakit ping --server [options]  |  rdmakit ping HOST [options]\n"
	"       rdmakit ping --proto rping -s|-c [-a ADDR] [-p PORT] [-C COUNT] [-S SIZE] [-V] [-v]\n"
	"       rdmakit ping --proto pingpong [--transport rc|uc|ud] [-d DEV] [-i PORT] [-g IDX]\n"
	"                    [-p PORT] [-s SIZE] [-n ITERS] [-m MTU] [HOST]";
static const char description[] =
	"RC ping-pong with round-trip statistics (min, median, p99, max).\n"
	"  --proto native    (default) rdmakit to rdmakit: the client SENDs a ping, the\n"
	"                    server SENDs it back; TCP exchange, or RDMA CM with --cm\n"
	"  --proto rping     librdmacm's rping: the client advertises its buffers, the\n"
	"                    server RDMA-READs the ping and RDMA-WRITEs the pong back;\n"
	"                    takes rping's options (-s server, -c client, -a, -p, -C, -S, -V, -v)\n"
	"  --proto pingpong  ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong (--transport):\n"
	"                    their TCP text exchange, then SEND/RECV turns; takes their options\n"
	"                    (-d, -i, -g, -p, -s, -n, -m, -e, -c); no HOST means server\n"
	"Each mode's options are listed with --proto MODE --help.";

static enum proto proto_of(const char *name, bool *ok)
{
	*ok = true;
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, proto_names[i]))
			return (enum proto)i;
	*ok = false;
	return PROTO_NATIVE;
}

/* --proto picks the option table, so it is read first. */
static const char *find_proto(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--proto") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--proto=", 8))
			return argv[i] + 8;
	}
	return "native";
}

#define OPT_PROTO(o)                                                                             \
	{"proto", 0, RK_OPT_STRING, &(o)->proto, 0, 0, "MODE",                                  \
	 "native, rping or pingpong (each takes its own options)"}
#define OPT_COMMON(o)                                                                            \
	{"interval", 'I', RK_OPT_COUNT, &(o)->interval, 0, 3600000, "MS",                       \
	 "client: pause between rounds"},                                                        \
		{"verbose", 'v', RK_OPT_FLAG, &(o)->verbose, 0, 0, NULL, "print every round"},     \
		{"events", 'e', RK_OPT_FLAG, &(o)->events, 0, 0, NULL,                             \
		 "sleep on a completion channel instead of polling"},                              \
		{"timeout", 't', RK_OPT_COUNT, &(o)->timeout, 1, 3600, "SEC",                     \
		 "client: keep trying to connect this long; both: bound on every wait"},          \
		{"wait", 'w', RK_OPT_COUNT, &(o)->wait, 0, 86400, "SEC",                          \
		 "server: give up when no client came in SEC seconds (0: wait forever)"},         \
		{"json", 'j', RK_OPT_FLAG, &(o)->json, 0, 0, NULL, "print one JSON document"}

int cmd_ping(int argc, char **argv)
{
	struct ping_opts o = {
		.dev = CLI_DEV_OPTS_DEFAULT, .proto = find_proto(argc, argv), .timeout = 10,
		.mtu = 1024, .rx_depth = 500, .transport = "rc",
	};
	const struct rk_opt native_opts[] = {
		OPT_PROTO(&o),
		{"server", 'S', RK_OPT_FLAG, &o.server, 0, 0, NULL, "be the server"},
		{"port", 'p', RK_OPT_COUNT, &o.port, 1, 65535, "PORT", "TCP or RDMA CM port"},
		{"cm", 'c', RK_OPT_FLAG, &o.cm, 0, 0, NULL,
		 "connect with RDMA CM instead of the TCP exchange"},
		CLI_DEV_OPTS(&o.dev),
		{"size", 's', RK_OPT_SIZE, &o.size, 1, NATIVE_MAX_SIZE, "BYTES",
		 "client: bytes per ping"},
		{"count", 'n', RK_OPT_COUNT, &o.count, 1, 1000000000, "N", "client: pings"},
		{"validate", 'V', RK_OPT_FLAG, &o.validate, 0, 0, NULL,
		 "check every byte of every ping and pong"},
		OPT_COMMON(&o),
		RK_OPT_END,
	};
	const struct rk_opt rping_opts[] = {
		OPT_PROTO(&o),
		{"server", 's', RK_OPT_FLAG, &o.server, 0, 0, NULL, "be the server (rping -s)"},
		{"client", 'c', RK_OPT_FLAG, &o.client, 0, 0, NULL, "be the client (rping -c)"},
		{"addr", 'a', RK_OPT_STRING, &o.addr, 0, 0, "ADDR",
		 "client: the server's address; server: the address to listen on"},
		{"port", 'p', RK_OPT_COUNT, &o.port, 1, 65535, "PORT", "RDMA CM port"},
		{"count", 'C', RK_OPT_COUNT, &o.count, 0, 1000000000, "N",
		 "pings (0: client forever; server until the client leaves)"},
		{"size", 'S', RK_OPT_SIZE, &o.size, RK_RPING_MIN_SIZE, RK_RPING_MAX_SIZE, "BYTES",
		 "ping size (server: the largest it serves)"},
		{"validate", 'V', RK_OPT_FLAG, &o.validate, 0, 0, NULL,
		 "client: compare each pong with its ping; server: check rping's pattern"},
		OPT_COMMON(&o),
		RK_OPT_END,
	};
	const struct rk_opt pp_opts[] = {
		OPT_PROTO(&o),
		{"transport", 0, RK_OPT_STRING, &o.transport, 0, 0, "T",
		 "rc, uc or ud: as ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong"},
		{"server", 0, RK_OPT_FLAG, &o.server, 0, 0, NULL, "be the server (as giving no HOST)"},
		{"port", 'p', RK_OPT_COUNT, &o.port, 1, 65535, "PORT", "TCP port of the exchange"},
		CLI_DEV_OPTS(&o.dev),
		{"size", 's', RK_OPT_SIZE, &o.size, 1, NATIVE_MAX_SIZE, "BYTES",
		 "message size (both sides the same)"},
		{"iters", 'n', RK_OPT_COUNT, &o.count, 1, 1000000000, "N",
		 "exchanges (both sides the same)"},
		{"mtu", 'm', RK_OPT_COUNT, &o.mtu, 256, 4096, "BYTES", "path MTU (RC, UC)"},
		{"rx-depth", 'r', RK_OPT_COUNT, &o.rx_depth, 1, 8192, "N",
		 "receives kept posted"},
		{"chk", 'c', RK_OPT_FLAG, &o.validate, 0, 0, NULL,
		 "check received data: the pong is the ping; the server: each ping after the "
		 "first is its last pong"},
		OPT_COMMON(&o),
		RK_OPT_END,
	};
	struct ping_run r = {.o = &o, .bad_offset = -1};
	const struct rk_opt *table;
	int first, ret;
	bool ok;

	r.proto = proto_of(o.proto, &ok);
	if (!ok) {
		fprintf(stderr, "rdmakit ping: option --proto: '%s' is not native, rping or "
				"pingpong\n", o.proto);
		return CLI_USAGE;
	}
	/* Each mode's defaults are those of the program it speaks for. */
	switch (r.proto) {
	case PROTO_NATIVE: table = native_opts; o.port = RK_DEFAULT_PORT; o.size = 64;
		o.count = 10; break;
	case PROTO_RPING: table = rping_opts; o.port = RK_RPING_DEFAULT_PORT; o.size = 64;
		o.count = 0; break;
	default: table = pp_opts; o.port = RK_PP_DEFAULT_PORT; o.size = 4096; o.count = 1000;
		break;
	}
	ret = cli_parse("ping", usage_text, description, table, argc, argv, &first);
	if (ret >= 0)
		return ret;
	r.host = first < argc ? argv[first] : NULL;
	if (first < argc - 1) {
		fprintf(stderr, "rdmakit ping: one HOST only ('%s' is extra)\n", argv[first + 1]);
		return CLI_USAGE;
	}
	switch (r.proto) {
	case PROTO_RPING:
		if (o.server == o.client) {
			fprintf(stderr, "rdmakit ping: --proto rping needs -s (server) or -c "
					"(client), as rping does\n");
			return CLI_USAGE;
		}
		if (o.server && r.host) {
			fprintf(stderr, "rdmakit ping: the rping server listens on -a ADDR, not on "
					"'%s'\n", r.host);
			return CLI_USAGE;
		}
		if (!o.server && r.host && o.addr) {
			fprintf(stderr, "rdmakit ping: give the server once: -a %s or %s\n", o.addr,
				r.host);
			return CLI_USAGE;
		}
		if (!o.server && !r.host)
			r.host = o.addr;
		if (!o.server && !r.host) {
			fprintf(stderr, "rdmakit ping: the rping client needs the server's "
					"address (-a ADDR)\n");
			return CLI_USAGE;
		}
		break;
	case PROTO_PINGPONG:
		if (!strcmp(o.transport, "rc"))
			r.transport = RK_RC;
		else if (!strcmp(o.transport, "uc"))
			r.transport = RK_UC;
		else if (!strcmp(o.transport, "ud"))
			r.transport = RK_UD;
		else {
			fprintf(stderr, "rdmakit ping: option --transport: '%s' is not rc, uc or "
					"ud\n", o.transport);
			return CLI_USAGE;
		}
		if (!rk_mtu_from_bytes((int)o.mtu)) {
			fprintf(stderr, "rdmakit ping: option --mtu: %" PRIu64 " is not 256, 512, "
					"1024, 2048 or 4096\n", o.mtu);
			return CLI_USAGE;
		}
		if (o.server && r.host) {
			fprintf(stderr, "rdmakit ping: a server takes no HOST ('%s')\n", r.host);
			return CLI_USAGE;
		}
		o.server = !r.host;
		break;
	default:
		if (o.server && r.host) {
			fprintf(stderr, "rdmakit ping: a server takes no HOST ('%s')\n", r.host);
			return CLI_USAGE;
		}
		if (!o.server && !r.host) {
			fprintf(stderr, "rdmakit ping: give the server's address (or --server)\n");
			return CLI_USAGE;
		}
		break;
	}
	r.who = o.server ? "server" : "client";
	r.timeout_ms = (int)o.timeout * 1000;
	r.size = (uint32_t)o.size;
	r.count = o.count;
	if (r.proto == PROTO_NATIVE)
		ret = run_native(&r);
	else if (r.proto == PROTO_RPING)
		ret = run_rping(&r);
	else
		ret = run_pingpong(&r);
	if (o.json)
		cli_json_print(summary_json(&r, ret));
	else
		summary_text(&r, ret);
	free(r.us);
	return ret ? CLI_FAILED : CLI_OK;
}
