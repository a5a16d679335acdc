/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Native ping: rdmakit to rdmakit over rk_conn (TCP exchange or RDMA CM),
 * and what the three ping engines share: options, results, rounds. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/conn.h>
#include <rdmakit/ctl_qp.h>
#include <rdmakit/log.h>
#include <rdmakit/pattern.h>
#include <rdmakit/ping.h>
#include <rdmakit/stop.h>
#include <rdmakit/tcp.h>

#include "base/clock.h"
#include "engines/ping/ping_int.h"
#include "verbs/counters_int.h"

#define PING_REQ_VALIDATE 0x1u   /* in the request's offset field: check data */

/* ---- shared by the engines ---- */

void ping_run_init(struct ping_run *r, const struct rk_ping_opts *o, uint16_t default_port,
		   struct rk_ping_result *res)
{
	r->o = *o;
	if (!r->o.port)
		r->o.port = default_port;
	if (r->o.timeout_ms <= 0)
		r->o.timeout_ms = 10000;
	if (r->o.accept_timeout_ms <= 0)
		r->o.accept_timeout_ms = -1;
	memset(res, 0, sizeof(*res));
	res->bad_offset = -1;
	res->size = o->size;
	res->count = o->count;
	res->validate = o->validate;
	r->res = res;
}

void ping_report(const struct ping_run *r, enum rk_ping_stage stage)
{
	struct rk_ping_progress p = {.stage = stage, .result = r->res};

	if (r->o.progress)
		r->o.progress(&p, r->o.arg);
}

int ping_round_done(struct ping_run *r, const struct rk_ping_round *round)
{
	struct rk_ping_result *res = r->res;
	struct rk_ping_progress p = {.stage = RK_PING_ROUND, .result = res, .round = round};

	if (res->rounds == res->cap) {
		size_t cap = res->cap ? 2 * res->cap : 64;
		double *n = realloc(res->us, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		res->us = n;
		res->cap = cap;
	}
	res->us[res->rounds++] = round->us;
	if (r->o.progress)
		r->o.progress(&p, r->o.arg);
	return 0;
}

int ping_mismatch(struct ping_run *r, uint64_t round, ssize_t off, const uint8_t *got,
		  uint8_t want, const char *what)
{
	r->res->bad_offset = off;
	r->res->bad_round = round;
	rk_error("round %" PRIu64 ": %s: byte %zd is 0x%02x, 0x%02x was due", round + 1, what, off,
		 got[off], want);
	return -EIO;
}

void ping_pause(const struct ping_run *r, uint64_t round)
{
	if (r->o.interval_ms && !r->o.server && (!r->res->count || round + 1 < r->res->count))
		usleep((useconds_t)r->o.interval_ms * 1000);
}

int ping_finish(struct ping_run *r, int ret)
{
	rk_run_counters_stop(&r->res->counters);
	r->res->error = ret;
	return ret;
}

int ping_post_send(struct rk_qp *qp, const struct rk_mr *mr, size_t off, uint32_t len,
		   struct ibv_ah *ah, uint32_t rqpn)
{
	struct ibv_sge sg = rk_sge(mr, off, len);
	struct rk_wr wr = {.op = RK_OP_SEND, .wr_id = PING_WR_SEND, .sg = &sg, .nsge = 1,
			   .flags = IBV_SEND_SIGNALED, .ah = ah, .remote_qpn = rqpn};

	return rk_post(qp, &wr);
}

int ping_post_recv(struct rk_qp *qp, const struct rk_mr *mr, size_t off, uint32_t len)
{
	struct ibv_sge sg = rk_sge(mr, off, len);

	return rk_post_recv(qp, PING_WR_RECV, &sg, 1);
}

int rk_ping_result_stats(const struct rk_ping_result *result, struct rk_rtt_stats *stats_p)
{
	if (!result)
		return -EINVAL;
	return rk_rtt_stats_compute(result->us, result->rounds, stats_p);
}

void rk_ping_result_free(struct rk_ping_result *result)
{
	if (!result)
		return;
	free(result->us);
	rk_run_counters_discard(&result->counters);
	result->us = NULL;
	result->rounds = result->cap = 0;
}

/* ---- native: rdmakit to rdmakit over rk_conn ---- */

struct native {
	struct ping_run *r;
	struct rk_cq_ids w;
	struct rk_mr *mr; /* [0, size): ping; [size, 2 size): pong */
};

/* The server listens: a client may connect now. */
static void native_listening(void *arg)
{
	struct native *n = arg;

	ping_report(n->r, RK_PING_LISTENING);
}

static int native_prepare(struct rk_conn *conn, struct rk_wire_buf *req, int *qp_access,
			  char *why, size_t why_len, void *arg)
{
	struct native *n = arg;
	struct rk_ping_result *res = n->r->res;
	int ret;

	(void)why;
	(void)why_len;
	rk_run_counters_start(&res->counters, conn->dev, conn->port_num);
	ret = rk_mr_alloc(conn->pd, 2 * (size_t)res->size, IBV_ACCESS_LOCAL_WRITE, &n->mr);
	if (ret)
		return ret;
	memset(req, 0, sizeof(*req));
	req->op = RK_WIRE_OP_PING;
	req->size = res->size;
	req->len = res->count;
	req->offset = res->validate ? PING_REQ_VALIDATE : 0;
	*qp_access = 0;
	return 0;
}

static int native_on_request(struct rk_conn *conn, const struct rk_wire_buf *req,
			     struct rk_wire_buf *reply, int *qp_access, char *reason,
			     size_t reason_len, void *arg)
{
	struct native *n = arg;
	struct rk_ping_result *res = n->r->res;
	int ret;

	if (req->op != RK_WIRE_OP_PING) {
		rk_wire_op_refusal("ping", req->op, reason, reason_len);
		return -EPROTO;
	}
	if (req->size < 1 || req->size > RK_PING_MAX_SIZE || req->len < 1 ||
	    req->len > RK_PING_MAX_COUNT || (req->offset & ~(uint64_t)PING_REQ_VALIDATE)) {
		snprintf(reason, reason_len, "bad ping request: size %u (1..%u), count %" PRIu64
					     " (1..10^9), flags 0x%" PRIx64,
			 req->size, RK_PING_MAX_SIZE, req->len, req->offset);
		return -EINVAL;
	}
	rk_run_counters_start(&res->counters, conn->dev, conn->port_num);
	res->size = req->size;
	res->count = req->len;
	res->validate = (req->offset & PING_REQ_VALIDATE) || n->r->o.validate;
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

	(void)conn;
	rk_mr_free(n->mr);
	n->mr = NULL;
}

static uint32_t native_seed(uint64_t round)
{
	return (uint32_t)(round * 2654435761u + 1);
}

static int native_client_round(struct native *n, struct rk_conn *c, uint64_t i)
{
	struct rk_ping_result *res = n->r->res;
	uint32_t size = res->size;
	uint8_t *ping = n->mr->buf, *pong = ping + size;
	const uint64_t want[2] = {PING_WR_SEND, PING_WR_RECV};
	struct rk_ping_round round = {.index = i, .size = size, .checked = res->validate};
	struct ibv_wc wc;
	ssize_t bad;
	double t0;
	int ret;

	if (res->validate) {
		rk_pattern_fill(ping, size, native_seed(i));
		memset(pong, 0, size);
	}
	ret = ping_post_recv(c->qp, n->mr, size, size);
	if (ret)
		return ret;
	t0 = now_us();
	ret = ping_post_send(c->qp, n->mr, 0, size, NULL, 0);
	if (!ret)
		ret = rk_cq_wait_ids(&n->w, want, 2, c->timeout_ms, "ping", &wc);
	if (ret)
		return ret;
	round.us = now_us() - t0;
	if (wc.byte_len != size) {
		rk_error("round %" PRIu64 ": the pong has %u bytes, %u were sent", i + 1,
			 wc.byte_len, size);
		return -EIO;
	}
	if (res->validate) {
		bad = rk_buf_diff(pong, ping, size);
		if (bad >= 0)
			return ping_mismatch(n->r, i, bad, pong, ping[bad],
					     "the pong differs from the ping");
	}
	return ping_round_done(n->r, &round);
}

/* Client: a stop request ended the run before its count; a SEND of no
 * bytes where the next ping would be tells the server so. */
static int native_client_stop(struct native *n, struct rk_conn *c)
{
	const uint64_t want[1] = {PING_WR_SEND};
	/* No SGE at all: some devices read a zero-length one as 2 GiB. */
	struct rk_wr wr = {.op = RK_OP_SEND, .wr_id = PING_WR_SEND, .flags = IBV_SEND_SIGNALED};
	int ret;

	n->r->res->stopped = true;
	/* Over CM the server's SYNC comes first after a stop (native_rounds()):
	 * the channel's receive goes up now, with no pong due. */
	ret = rk_ctl_qp_keep_receive(c->ctl, 1);
	if (!ret)
		ret = rk_post(c->qp, &wr);
	if (!ret)
		ret = rk_cq_wait_ids(&n->w, want, 1, c->timeout_ms, "the stop (a SEND of no bytes)",
				     NULL);
	return ret;
}

/* Server: 0 after a round, 1 when the client said it stopped, or a
 * negative errno. */
static int native_server_round(struct native *n, struct rk_conn *c, uint64_t i)
{
	struct rk_ping_result *res = n->r->res;
	uint32_t size = res->size;
	uint8_t *base = n->mr->buf;
	size_t cur = (i % 2) * size, next = ((i + 1) % 2) * size;
	const uint64_t rwant[1] = {PING_WR_RECV}, swant[1] = {PING_WR_SEND};
	struct rk_ping_round round = {.index = i, .size = size, .checked = res->validate};
	struct ibv_wc wc;
	ssize_t bad;
	double t0;
	int ret;

	ret = rk_cq_wait_ids(&n->w, rwant, 1, c->timeout_ms, "ping", &wc);
	if (ret)
		return ret;
	t0 = now_us();
	if (wc.byte_len == 0) {
		res->stopped = true;
		return 1;
	}
	if (wc.byte_len != size) {
		rk_error("round %" PRIu64 ": the ping has %u bytes, the client said %u", i + 1,
			 wc.byte_len, size);
		return -EIO;
	}
	if (res->validate) {
		bad = rk_pattern_check(base + cur, size, native_seed(i));
		if (bad >= 0)
			return ping_mismatch(n->r, i, bad, base + cur,
					     rk_pattern_byte((size_t)bad, native_seed(i)),
					     "the ping is not what the client sent");
	}
	/* The next ping's receive before this pong: the client sends it as
	 * soon as the pong arrives; after the last, its closing SYNC does,
	 * into the control channel's receive. */
	if (i + 1 < res->count)
		ret = ping_post_recv(c->qp, n->mr, next, size);
	else
		ret = rk_ctl_qp_keep_receive(c->ctl, 1);
	if (ret)
		return ret;
	ret = ping_post_send(c->qp, n->mr, cur, size, NULL, 0);
	if (!ret)
		ret = rk_cq_wait_ids(&n->w, swant, 1, c->timeout_ms, "pong", NULL);
	if (ret)
		return ret;
	round.us = now_us() - t0;
	return ping_round_done(n->r, &round);
}

static void native_connected(struct ping_run *r, const struct rk_conn *c)
{
	struct rk_ping_result *res = r->res;

	res->cm = c->cm_mode;
	snprintf(res->device, sizeof(res->device), "%s", c->dev->info.name);
	snprintf(res->peer, sizeof(res->peer), "%s", c->peer);
	res->qpn = c->qp->qp->qp_num;
	res->peer_qpn = c->cm_mode ? c->qp->remote.qpn : c->remote.qpn;
	res->path_mtu = rk_mtu_bytes(c->cm_mode ? c->qp->path.path_mtu : c->path_mtu);
	res->has_gid = c->has_gid;
	res->gid = c->gid;
	ping_report(r, RK_PING_CONNECTED);
}

/* The peer's leaving, looked for while a wait finds no completion: its
 * disconnect on RDMA CM, or its close of the TCP exchange (no message is
 * due there between the two syncs). */
static bool native_peer_gone(void *arg)
{
	struct rk_conn *c = arg;

	return c->cm_mode ? rk_cm_peer_left(c->cm) : rk_tcp_peer_closed(c->ctl);
}

static int claim_ctl(void *arg, const struct ibv_wc *wc)
{
	return rk_ctl_qp_claim(arg, wc);
}

/* The rounds between the two sync points. */
static int native_rounds(struct native *n, struct rk_conn *c)
{
	struct ping_run *r = n->r;
	bool server = r->o.server;
	int ret = 0;

	n->w.gone = native_peer_gone;
	n->w.gone_arg = c;
	n->w.claim = claim_ctl;
	n->w.claim_arg = c->ctl;

	/* The server's first receive goes up before the sync that starts the
	 * pings, so the first ping finds it (no RNR NAK in its round trip).
	 * Over CM the control channel's kept receive is ahead of it and takes
	 * the client's SYNC; then it keeps none (it would take a ping) until
	 * the last pong (native_server_round()). */
	if (server)
		ret = ping_post_recv(c->qp, n->mr, 0, r->res->size);
	if (!ret)
		ret = rk_ctl_qp_keep_receive(c->ctl, 0);
	if (!ret)
		ret = rk_ctl_sync(c->ctl, 1, 0, c->timeout_ms);
	for (uint64_t i = 0; !ret && i < r->res->count; i++) {
		if (!server && i && rk_stop_requested()) {
			ret = native_client_stop(n, c);
			break;
		}
		ret = server ? native_server_round(n, c, i) : native_client_round(n, c, i);
		if (ret == 1) { /* the client stopped */
			ret = 0;
			break;
		}
		if (!ret)
			ping_pause(r, i);
	}
	if (!ret && server)
		ret = rk_ctl_qp_keep_receive(c->ctl, 1); /* a client that stopped */
	if (ret == -ECONNRESET)
		rk_error("the %s went away after %zu of %" PRIu64 " rounds (its process ended, or "
			 "it gave up)", server ? "client" : "server", r->res->rounds, r->res->count);
	r->res->checked = r->res->validate && !ret;
	/* A last sync: neither side tears down while the other still works.
	 * After a stop over CM the server sends first: it learnt of the stop
	 * as the client's SEND of no bytes, and only then put the channel's
	 * receive up, which a client SYNC sent at once could miss (RNR NAK). */
	if (!ret && c->cm_mode && r->res->stopped)
		c->ctl->sync_answers = !server;
	if (!ret)
		ret = rk_ctl_sync(c->ctl, 2, 0, c->timeout_ms);
	return ret;
}

int rk_ping_run(const struct rk_ping_opts *opts, struct rk_ping_result *result)
{
	struct ping_run r;
	struct native n = {.r = &r};
	struct rk_conn_opts co = {0};
	struct rk_conn *c = NULL;
	int ret;

	ping_run_init(&r, opts, RK_DEFAULT_PORT, result);
	if (!opts->server && (!opts->size || opts->size > RK_PING_MAX_SIZE || !opts->count ||
			      opts->count > RK_PING_MAX_COUNT || !opts->host)) {
		rk_error("ping client: size %u (1..%u), count %" PRIu64 " (1..10^9) and the "
			 "server's address%s are needed", opts->size, RK_PING_MAX_SIZE, opts->count,
			 opts->host ? "" : " (none given)");
		return ping_finish(&r, -EINVAL);
	}
	if (opts->source) {
		rk_error("ping: a source address is rping's, not the native protocol's");
		return ping_finish(&r, -EINVAL);
	}
	co.server = opts->server;
	co.host = opts->server ? NULL : opts->host;
	co.port = r.o.port;
	co.cm = opts->cm;
	co.device = opts->device;
	co.port_num = opts->port_num;
	co.gid_index = opts->gid_index;
	co.timeout_ms = r.o.timeout_ms;
	co.accept_timeout_ms = r.o.accept_timeout_ms;
	co.events = opts->events;
	co.traffic = opts->traffic;
	co.transport = RK_RC;
	co.ctl_keep_receives = 1; /* over CM; native_rounds() says when not */
	co.qp.max_send_wr = 8;
	co.qp.max_recv_wr = 8;
	co.prepare = native_prepare;
	co.on_request = native_on_request;
	co.release = native_release;
	co.on_listening = native_listening;
	co.arg = &n;
	result->cm = opts->cm;
	ret = rk_conn_establish(&co, &c);
	if (!ret) {
		n.w.cq = c->cq;
		native_connected(&r, c);
		ret = native_rounds(&n, c);
	}
	rk_conn_close(c);
	return ping_finish(&r, ret);
}
