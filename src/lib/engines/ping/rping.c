/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* librdmacm's rping protocol, both roles (see rping.h): its buffer
 * advertisement and -V pattern, and the engine. */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/cm.h>
#include <rdmakit/log.h>
#include <rdmakit/pattern.h>
#include <rdmakit/rping.h>
#include <rdmakit/stop.h>

#include "base/clock.h"
#include "engines/ping/ping_int.h"
#include "verbs/traffic_int.h"

/* ---- the wire and the pattern ---- */

void rk_rping_info_encode(const struct rk_rping_info *info, uint8_t out[RK_RPING_INFO_LEN])
{
	uint64_t a = htobe64(info->addr);
	uint32_t k = htobe32(info->rkey), s = htobe32(info->size);

	memcpy(out, &a, 8);
	memcpy(out + 8, &k, 4);
	memcpy(out + 12, &s, 4);
}

int rk_rping_info_decode(const uint8_t *buf, size_t n, struct rk_rping_info *info_p, char *why,
			 size_t why_len)
{
	uint64_t a;
	uint32_t k, s;

	if (!buf || !info_p)
		return -EINVAL;
	if (n != RK_RPING_INFO_LEN)
		return ping_bad_msg(why, why_len,
				    "%zu bytes, not rping's %d-byte {addr, rkey, size}", n,
				    RK_RPING_INFO_LEN);
	memcpy(&a, buf, 8);
	memcpy(&k, buf + 8, 4);
	memcpy(&s, buf + 12, 4);
	info_p->addr = be64toh(a);
	info_p->rkey = be32toh(k);
	info_p->size = be32toh(s);
	return 0;
}

#define RPING_FIRST 'A' /* 65 */
#define RPING_LAST 'z'	/* 122 */
#define RPING_SPAN (RPING_LAST - RPING_FIRST + 1)

/* The byte rping's client puts at offset off of ping number ping, given the
 * length of its "rdma-ping-N: " prefix (hdr). */
static uint8_t rping_byte(size_t off, size_t size, uint32_t ping, const char *hdr, size_t hdr_len)
{
	if (off == size - 1)
		return 0;
	if (off < hdr_len)
		return (uint8_t)hdr[off];
	return (uint8_t)(RPING_FIRST + (ping % RPING_SPAN + (off - hdr_len)) % RPING_SPAN);
}

void rk_rping_fill(void *buf, size_t size, uint32_t ping)
{
	char hdr[32];
	size_t len;
	uint8_t *p = buf;

	if (!size)
		return;
	len = (size_t)snprintf(hdr, sizeof(hdr), "rdma-ping-%u: ", ping);
	for (size_t i = 0; i < size; i++)
		p[i] = rping_byte(i, size, ping, hdr, len);
}

ssize_t rk_rping_check(const void *buf, size_t size, uint32_t ping)
{
	const uint8_t *p = buf;
	char hdr[32];
	size_t len;

	len = (size_t)snprintf(hdr, sizeof(hdr), "rdma-ping-%u: ", ping);
	for (size_t i = 0; i < size; i++)
		if (p[i] != rping_byte(i, size, ping, hdr, len))
			return (ssize_t)i;
	return -1;
}

/* ---- the engine ---- */

struct rping {
	struct ping_run *r;
	struct rk_cq_ids w;
	struct rk_cm *listener, *cm;
	struct ibv_pd *pd;
	struct rk_cq *cq;
	struct rk_qp *qp;
	struct rk_mr *msg;   /* [0, 16): what we send; [16, 32): what we receive */
	struct rk_mr *start; /* client: the ping the server READs */
	struct rk_mr *sink;  /* client: where the server WRITEs the pong; server: its buffer */
};

/* Everything but the listener, in reverse order of making. */
static void rping_free_conn(struct rping *p)
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
}

/* PD, CQ, QP and buffers on the device CM chose; one receive posted. */
static int rping_setup(struct rping *p)
{
	const struct rk_ping_opts *o = &p->r->o;
	struct rk_qp_init_attr qa = {.transport = RK_RC, .max_send_wr = 16, .max_recv_wr = 4};
	uint32_t size = p->r->res->size;
	int ret;

	rk_run_counters_start(&p->r->res->counters, p->cm->dev, p->cm->port_num);
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
		ret = rk_mr_alloc(p->pd, size, IBV_ACCESS_REMOTE_READ, &p->start);
	if (!ret)
		ret = rk_mr_alloc(p->pd, size,
				  IBV_ACCESS_LOCAL_WRITE | (o->server ? 0 : IBV_ACCESS_REMOTE_WRITE),
				  &p->sink);
	if (!ret)
		ret = ping_post_recv(p->qp, p->msg, RK_RPING_INFO_LEN, RK_RPING_INFO_LEN);
	return ret;
}

/* The peer's disconnect, seen on CM while a wait finds no completion. */
static bool rping_peer_gone(void *arg)
{
	return rk_cm_peer_left(arg);
}

static void rping_connected(struct rping *p)
{
	struct rk_ping_result *res = p->r->res;

	/* The peer's leaving is seen on CM while we wait for its next message
	 * (as well as by the flush of our receive): rping's server leaves when
	 * a ping fails on its side (one larger than its -S), its client when
	 * it is done. */
	p->w.gone = rping_peer_gone;
	p->w.gone_arg = p->cm;
	res->cm = true;
	snprintf(res->device, sizeof(res->device), "%s", p->cm->dev->info.name);
	snprintf(res->peer, sizeof(res->peer), "%s", p->cm->peer_addr);
	res->qpn = p->qp->qp->qp_num;
	res->peer_qpn = p->qp->remote.qpn;
	res->path_mtu = rk_mtu_bytes(p->qp->path.path_mtu);
	res->has_gid = true;
	res->gid = p->cm->gid;
	rk_traffic_note(&p->r->o.traffic, p->cm->dev, p->cm->port_num, &p->cm->gid, true);
	rk_traffic_check_qp(&p->r->o.traffic, p->qp, p->r->o.server);
	ping_report(p->r, RK_PING_CONNECTED);
}

/* SEND the 16-byte advertisement of mr, and wait for it and for the
 * server's 16-byte go-ahead. */
static int rping_advertise(struct rping *p, const struct rk_mr *mr, const char *what)
{
	struct rk_rping_info info = {.addr = (uintptr_t)mr->buf, .rkey = mr->mr->rkey,
				     .size = p->r->res->size};
	const uint64_t want[2] = {PING_WR_SEND, PING_WR_RECV};
	struct ibv_wc wc;
	int ret;

	rk_rping_info_encode(&info, p->msg->buf);
	ret = ping_post_send(p->qp, p->msg, 0, RK_RPING_INFO_LEN, NULL, 0);
	if (!ret)
		ret = rk_cq_wait_ids(&p->w, want, 2, p->r->o.timeout_ms, what, &wc);
	if (ret == -ECONNRESET)
		rk_error("%s: the server went away (rping's server fails and leaves on a ping "
			 "larger than its -S, here %u bytes)", what, p->r->res->size);
	if (ret)
		return ret;
	if (wc.byte_len != RK_RPING_INFO_LEN) {
		rk_error("%s: the server's go-ahead has %u bytes, not rping's %d", what,
			 wc.byte_len, RK_RPING_INFO_LEN);
		return -EPROTO;
	}
	return ping_post_recv(p->qp, p->msg, RK_RPING_INFO_LEN, RK_RPING_INFO_LEN);
}

static int rping_client_round(struct rping *p, uint64_t i)
{
	struct ping_run *r = p->r;
	uint32_t size = r->res->size;
	uint8_t *start = p->start->buf, *sink = p->sink->buf;
	struct rk_ping_round round = {.index = i, .size = size, .checked = r->o.validate,
				      .data = sink, .len = size};
	double t0;
	ssize_t bad;
	int ret;

	/* rping always fills the ping this way; -V compares the pong with it. */
	rk_rping_fill(start, size, (uint32_t)i);
	memset(sink, 0, size);
	t0 = now_us();
	ret = rping_advertise(p, p->start, "ping (advertise the buffer to READ)");
	if (!ret)
		ret = rping_advertise(p, p->sink, "pong (advertise the buffer to WRITE)");
	if (ret)
		return ret;
	round.us = now_us() - t0;
	if (r->o.validate) {
		bad = rk_buf_diff(sink, start, size);
		if (bad >= 0)
			return ping_mismatch(r, i, bad, sink, start[bad],
					     "the pong the server wrote differs from the ping");
	}
	return ping_round_done(r, &round);
}

/* One connect try for rk_cm_connect_retry(). */
static int rping_client_try(void *arg)
{
	struct rping *p = arg;
	const struct rk_ping_opts *o = &p->r->o;
	int ret;

	ret = rk_cm_resolve_from(o->host, o->port, RDMA_PS_TCP, &o->traffic, o->source,
				 o->timeout_ms, &p->cm);
	if (!ret)
		ret = rping_setup(p);
	if (!ret)
		ret = rk_cm_connect_raw(p->cm, p->qp, NULL, 0, o->timeout_ms);
	return ret;
}

static int rping_client_reset(void *arg)
{
	rping_free_conn(arg);
	return 0;
}

static int rping_client(struct rping *p)
{
	struct ping_run *r = p->r;
	int ret, tries;

	/* A server started after us: try again while nothing listens. */
	ret = rk_cm_connect_retry(r->o.timeout_ms, rping_client_try, rping_client_reset, p,
				  &tries);
	if (ret == -ECONNREFUSED)
		rk_error("connect to %s port %u with RDMA CM: REJECTED, nothing listens "
			 "there; gave up after %d tr%s in %d ms (is 'rping -s' running?)",
			 r->o.host, r->o.port, tries, tries > 1 ? "ies" : "y", r->o.timeout_ms);
	if (ret)
		return ret;
	rping_connected(p);
	for (uint64_t i = 0; !r->res->count || i < r->res->count; i++) {
		/* rping's client runs until Ctrl-C by default: a stop request
		 * ends it after the round under way (CQ waits go on through
		 * signals) with what it measured. */
		if (rk_stop_requested()) {
			r->res->stopped = true;
			break;
		}
		ret = rping_client_round(p, i);
		if (ret)
			return ret;
		ping_pause(r, i);
	}
	r->res->checked = r->o.validate;
	return 0;
}

/* Server: wait for the client's next advertisement. -ECONNRESET when it
 * disconnected instead. */
static int rping_receive_info(struct rping *p, struct rk_rping_info *info, const char *what)
{
	const uint64_t want[1] = {PING_WR_RECV};
	struct ibv_wc wc;
	char why[128];
	int ret;

	ret = rk_cq_wait_ids(&p->w, want, 1, p->r->o.timeout_ms, what, &wc);
	if (ret)
		return ret;
	ret = rk_rping_info_decode((uint8_t *)p->msg->buf + RK_RPING_INFO_LEN, wc.byte_len, info,
				   why, sizeof(why));
	if (ret) {
		rk_error("%s: bad message from %s: %s", what, p->cm->peer_addr, why);
		return ret;
	}
	return ping_post_recv(p->qp, p->msg, RK_RPING_INFO_LEN, RK_RPING_INFO_LEN);
}

/* Server: READ or WRITE len bytes of the client's advertised buffer. */
static int rping_rdma(struct rping *p, enum rk_op op, const struct rk_rping_info *info,
		      uint32_t len, const char *what)
{
	struct ibv_sge sg = rk_sge(p->sink, 0, len);
	struct rk_wr wr = {.op = op, .wr_id = PING_WR_RDMA, .sg = &sg, .nsge = 1,
			   .flags = IBV_SEND_SIGNALED, .remote_addr = info->addr,
			   .rkey = info->rkey};
	const uint64_t want[1] = {PING_WR_RDMA};
	int ret = rk_post(p->qp, &wr);

	return ret ? ret : rk_cq_wait_ids(&p->w, want, 1, p->r->o.timeout_ms, what, NULL);
}

/* Server: the 16-byte go-ahead (rping's server sends its unused buffer). */
static int rping_go_ahead(struct rping *p)
{
	const uint64_t want[1] = {PING_WR_SEND};
	int ret;

	memset(p->msg->buf, 0, RK_RPING_INFO_LEN);
	ret = ping_post_send(p->qp, p->msg, 0, RK_RPING_INFO_LEN, NULL, 0);
	return ret ? ret : rk_cq_wait_ids(&p->w, want, 1, p->r->o.timeout_ms, "go-ahead", NULL);
}

/* Server: READ the ping, check it (-V), say go ahead. */
static int rping_serve_ping(struct rping *p, uint64_t i, const struct rk_rping_info *src)
{
	struct ping_run *r = p->r;
	uint8_t *buf = p->sink->buf;
	ssize_t bad;
	int ret;

	if (src->size < 1 || src->size > r->res->size) {
		rk_error("round %" PRIu64 ": the client's buffer is %u bytes; this server's is %u "
			 "(start it with -S %u)",
			 i + 1, src->size, r->res->size, src->size);
		return -EMSGSIZE;
	}
	memset(buf, 0, r->res->size);
	ret = rping_rdma(p, RK_OP_READ, src, src->size, "RDMA READ of the ping");
	if (ret)
		return ret;
	if (r->o.validate) {
		bad = rk_rping_check(buf, src->size, (uint32_t)i);
		if (bad >= 0) {
			uint8_t want[RK_RPING_MAX_SIZE + 1];

			rk_rping_fill(want, src->size, (uint32_t)i);
			return ping_mismatch(r, i, bad, buf, want[bad],
					     "the ping is not rping's -V pattern");
		}
	}
	return rping_go_ahead(p);
}

static int rping_server_round(struct rping *p, uint64_t i)
{
	struct ping_run *r = p->r;
	struct rk_rping_info src, dst;
	struct rk_ping_round round = {.index = i, .checked = r->o.validate, .data = p->sink->buf};
	double t0;
	int ret;

	ret = rping_receive_info(p, &src, "wait for the client's ping buffer");
	if (ret)
		return ret;
	t0 = now_us();
	ret = rping_serve_ping(p, i, &src);
	if (!ret)
		ret = rping_receive_info(p, &dst, "wait for the client's pong buffer");
	/* Not an error of itself: rping's client ends by leaving (rping_serve). */
	if (ret == -ECONNRESET)
		rk_warn("round %" PRIu64 ": the client left in the middle of a ping (not counted)",
			i + 1);
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
	round.us = now_us() - t0;
	round.size = src.size;
	round.len = src.size;
	return ping_round_done(r, &round);
}

/* Server after its count: rping's client ends the run by disconnecting, and
 * its own server waits for that whatever its -C. Disconnecting first would
 * race the client's last go-ahead: our SEND completes once the client's
 * HCA acknowledged it, but rping handles that receive on its CQ thread and
 * CM events on another, both writing one state, so a DISCONNECTED soon
 * after can overwrite RDMA_WRITE_COMPLETE ("wait for RDMA_WRITE_COMPLETE
 * state 10") and leave the client hanging. So wait for the client's
 * disconnect, bounded by the timeout. */
static int rping_await_leave(struct rping *p)
{
	const uint64_t want[1] = {PING_WR_RECV};
	struct ping_run *r = p->r;
	struct ibv_wc wc;
	int ret;

	ret = rk_cq_wait_ids(&p->w, want, 1, r->o.timeout_ms,
			     "wait for the client to disconnect after the last ping", &wc);
	if (ret == -ECONNRESET) {
		r->res->peer_left = true;
		return 0;
	}
	if (!ret) {
		rk_error("the client wants more than the %" PRIu64 " pings this server was started "
			 "for (-C)", r->res->count);
		return -EPROTO;
	}
	return ret;
}

static int rping_serve(struct rping *p)
{
	struct ping_run *r = p->r;
	uint64_t count = r->res->count;
	int ret;

	for (uint64_t i = 0; !count || i < count; i++) {
		ret = rping_server_round(p, i);
		if (ret == -ECONNRESET && !count && r->res->rounds == i) {
			/* As rping's server: the client's disconnect ends the run. */
			r->res->peer_left = true;
			break;
		}
		if (ret == -ECONNRESET)
			rk_error("the client left after %zu of %" PRIu64 " pings", r->res->rounds,
				 count);
		if (ret)
			return ret;
	}
	if (count) {
		ret = rping_await_leave(p);
		if (ret)
			return ret;
	}
	r->res->checked = r->o.validate;
	return 0;
}

static int rping_server(struct rping *p)
{
	const struct rk_ping_opts *o = &p->r->o;
	int ret;

	ret = rk_cm_listen_ps(o->host, o->port, RDMA_PS_TCP, &o->traffic, &p->listener);
	if (ret)
		return ret;
	ping_report(p->r, RK_PING_LISTENING);
	ret = rk_cm_get_request_any(p->listener, o->accept_timeout_ms, &p->cm);
	if (!ret)
		ret = rping_setup(p);
	if (!ret)
		ret = rk_cm_accept_raw(p->cm, p->qp, NULL, 0, o->timeout_ms);
	if (ret)
		return ret;
	rping_connected(p);
	return rping_serve(p);
}

int rk_rping_run(const struct rk_ping_opts *opts, struct rk_ping_result *result)
{
	struct ping_run r;
	struct rping p = {.r = &r};
	int ret;

	ping_run_init(&r, opts, RK_RPING_DEFAULT_PORT, result);
	result->cm = true;
	if (opts->size < RK_RPING_MIN_SIZE || opts->size > RK_RPING_MAX_SIZE) {
		rk_error("rping: a ping of %u bytes is outside rping's %d..%d", opts->size,
			 RK_RPING_MIN_SIZE, RK_RPING_MAX_SIZE);
		return ping_finish(&r, -EINVAL);
	}
	if (!opts->server && !opts->host) {
		rk_error("rping: the client needs the server's address");
		return ping_finish(&r, -EINVAL);
	}
	if (opts->server && opts->source) {
		rk_error("rping: a source address is the client's; the server listens on its host "
			 "address");
		return ping_finish(&r, -EINVAL);
	}
	ret = opts->server ? rping_server(&p) : rping_client(&p);
	rping_free_conn(&p);
	rk_cm_destroy(p.listener);
	return ping_finish(&r, ret);
}
