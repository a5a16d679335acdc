/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ibv_srq_pingpong's protocol, both roles (pingpong.h): RC QPs that take
 * their receives from one SRQ, 256 address messages each way, then every
 * QP pings at once. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/pattern.h>
#include <rdmakit/srq.h>
#include <rdmakit/status.h>
#include <rdmakit/tcp.h>

#include "base/clock.h"
#include "engines/ping/pingpong_int.h"
#include "conn/tcp_int.h"

/* What a QP awaits before its next SEND (pending[]), as ibv_srq_pingpong. */
enum { PPS_SEND = 1, PPS_RECV = 2 };
/* Receives carry wr_id PPS_WR_RECV + their SRQ slot, SENDs PING_WR_SEND. */
#define PPS_WR_RECV 16
#define PPS_WC	    32
/* The SRQ's buffers: depth x size at most (-r and -s choose). */
#define PPS_MAX_RBUF (1ull << 30)
#define PPS_SAME     "both sides need the same -n, -s and -q"

struct pps {
	struct ping_run *r;
	struct rk_port_sel d;
	struct ibv_pd *pd;
	struct rk_cq *cq;
	struct rk_srq *srq;
	struct rk_qp *qp[RK_PP_SRQ_MAX_QP];
	uint32_t n;
	struct rk_mr *sbuf; /* n slots of size bytes: each QP's SEND */
	struct rk_ctl *ctl;
	int listen_fd;
	enum ibv_mtu mtu;
	struct rk_pp_dest remote[RK_PP_SRQ_MAX_QP];
	uint8_t pending[RK_PP_SRQ_MAX_QP];
	double t0[RK_PP_SRQ_MAX_QP];	/* when the round of the QP's SEND began */
	double trecv[RK_PP_SRQ_MAX_QP]; /* server: when the QP's last ping came */
	uint64_t posted, sent, rcvd, rounds;
	uint8_t *first; /* server with validate: the first ping */
};

static void pps_free(struct pps *p)
{
	for (uint32_t i = p->n; i-- > 0;)
		rk_qp_destroy(p->qp[i]);
	rk_srq_destroy(p->srq);
	rk_mr_free(p->sbuf);
	pp_close_base(p->cq, p->pd, &p->d, p->ctl, p->listen_fd);
	free(p->first);
	free(p);
}

/* The SRQ's depth: -r, at least a receive per QP, and no more than the run
 * can use; its refills in lists that keep a receive up for every QP. */
static int pps_srq_opts(const struct pps *p, struct rk_srq_opts *so)
{
	const struct ping_run *r = p->r;
	uint64_t depth = r->o.rx_depth ? r->o.rx_depth : 500;

	if (depth < p->n) {
		rk_error("pingpong: %" PRIu64 " receives (-r) are too few for %u QPs: at least one "
			 "per QP",
			 depth, p->n);
		return -EINVAL;
	}
	if (depth > r->res->count + p->n)
		depth = r->res->count + p->n;
	if (depth * r->res->size > PPS_MAX_RBUF) {
		rk_error("pingpong: %" PRIu64 " receives of %u bytes are more than %llu MiB of "
			 "buffers: give a smaller -r or -s",
			 depth, r->res->size, PPS_MAX_RBUF >> 20);
		return -EINVAL;
	}
	*so = (struct rk_srq_opts){
		.depth = (uint32_t)depth,
		.limit = RK_SRQ_NO_LIMIT,
		.batch = depth > p->n ? (uint32_t)(depth - p->n < RK_SRQ_DEFAULT_BATCH
							   ? depth - p->n
							   : RK_SRQ_DEFAULT_BATCH)
				      : 1,
		.slot_size = r->res->size,
		.wr_id_base = PPS_WR_RECV,
	};
	return 0;
}

/* Device, SRQ (receives posted), QPs in INIT and the SENDs' buffer: ready
 * before our addresses go out, as ibv_srq_pingpong is. */
static int pps_setup(struct pps *p)
{
	struct ping_run *r = p->r;
	struct rk_qp_init_attr qa = {.transport = RK_RC, .max_send_wr = 2};
	struct rk_srq_opts so;
	int ret;

	ret = pp_port_open(r, p->ctl, &p->d);
	if (!ret)
		ret = pps_srq_opts(p, &so);
	if (!ret)
		ret = rk_pd_alloc(p->d.dev, &p->pd);
	if (!ret)
		ret = rk_cq_create(p->d.dev, (int)(so.depth + 2 * p->n + 8), r->o.events, &p->cq);
	if (!ret)
		ret = rk_srq_create(p->pd, p->d.dev, &so, &p->srq);
	if (ret)
		return ret;
	qa.port_num = p->d.port_num;
	qa.gid = p->d.has_gid ? &p->d.gid : NULL;
	qa.srq = rk_srq_verbs(p->srq);
	for (uint32_t i = 0; i < p->n && !ret; i++) {
		ret = rk_qp_create(p->pd, p->d.dev, p->cq, p->cq, &qa, &p->qp[i]);
		if (ret)
			break;
		ret = rk_qp_to_init(p->qp[i], 0);
	}
	if (!ret)
		ret = rk_mr_alloc(p->pd, (size_t)p->n * r->res->size, 0, &p->sbuf);
	if (!ret)
		ret = rk_srq_fill(p->srq);
	if (!ret) {
		r->res->qpn = p->qp[0]->qp->qp_num;
		r->res->psn = p->qp[0]->psn;
	}
	return ret;
}

/* Our RK_PP_SRQ_MAX_QP address messages: one per QP, zeros after. */
static int pps_send_dests(struct pps *p)
{
	struct ping_run *r = p->r;
	char out[RK_PP_MSG_LEN];
	int ret;

	for (uint32_t i = 0; i < RK_PP_SRQ_MAX_QP; i++) {
		struct rk_pp_dest mine = {0};

		if (i < p->n) {
			mine.lid = r->res->lid;
			mine.qpn = p->qp[i]->qp->qp_num;
			mine.psn = p->qp[i]->psn;
			if (p->d.has_gid)
				mine.gid = p->d.gid.gid;
		}
		ret = rk_pp_encode(&mine, out, sizeof(out));
		if (!ret)
			ret = p->ctl->ops->send(p->ctl, (const uint8_t *)out, sizeof(out));
		if (ret)
			return pp_io_error(r, ret);
	}
	return 0;
}

/* The peer's messages: as many QPs as ours (the first with QPN 0 ends them). */
static int pps_recv_dests(struct pps *p)
{
	struct ping_run *r = p->r;
	uint32_t k = 0;
	int ret;

	for (uint32_t i = 0; i < RK_PP_SRQ_MAX_QP; i++) {
		ret = pp_recv_dest(r, p->ctl, &p->remote[i]);
		if (ret)
			return ret;
	}
	while (k < RK_PP_SRQ_MAX_QP && p->remote[k].qpn)
		k++;
	if (k != p->n) {
		rk_error("%s has %u QPs and this side %u: both sides need the same -q "
			 "(ibv_srq_pingpong's default is %d)",
			 r->res->peer, k, p->n, RK_PP_SRQ_DEFAULT_QPS);
		return -EPROTO;
	}
	return 0;
}

/* Every QP to RTS against the peer's QP of the same index. */
static int pps_connect(struct pps *p)
{
	struct ping_run *r = p->r;
	int ret = 0;

	r->res->peer_qpn = p->remote[0].qpn;
	r->res->peer_lid = p->remote[0].lid;
	r->res->peer_psn = p->remote[0].psn;
	r->res->peer_gid = p->remote[0].gid;
	ping_report(r, RK_PING_ADDRESSES);
	rk_traffic_note(&r->o.traffic, p->d.dev, p->d.port_num, p->d.has_gid ? &p->d.gid : NULL,
			false);
	for (uint32_t i = 0; i < p->n && !ret; i++)
		ret = pp_connect_qp(r, &p->d, p->qp[i], &p->remote[i], p->mtu, NULL);
	return ret;
}

/* As pp_exchange(): the client writes first and ends with "done"; the
 * server connects its QPs before it answers. */
static int pps_exchange(struct pps *p)
{
	struct ping_run *r = p->r;
	int ret;

	if (!r->o.server) {
		ret = pps_send_dests(p);
		if (!ret)
			ret = pps_recv_dests(p);
		if (ret)
			return ret;
		ret = p->ctl->ops->send(p->ctl, (const uint8_t *)RK_PP_DONE, RK_PP_DONE_LEN);
		return ret ? pp_io_error(r, ret) : pps_connect(p);
	}
	ret = pps_recv_dests(p);
	if (!ret)
		ret = pps_connect(p);
	if (!ret)
		ret = pps_send_dests(p);
	if (ret) {
		/* ibv_srq_pingpong's client reads our 256 messages in a loop
		 * that never ends on a closed connection: a reset ends it. */
		rk_tcp_close_reset(p->ctl);
		p->ctl = NULL;
		return ret;
	}
	return pp_recv_done(r, p->ctl);
}

/* The next SEND on QP k: a client's ping (its round begins), or the
 * server's pong of the ping in k's slot. */
static int pps_post(struct pps *p, uint32_t k)
{
	uint32_t size = p->r->res->size;
	int ret;

	ret = ping_post_send(p->qp[k], p->sbuf, (size_t)k * size, size, NULL, 0);
	if (ret)
		return ret;
	p->posted++;
	p->pending[k] = PPS_SEND | PPS_RECV;
	p->t0[k] = p->r->o.server ? p->trecv[k] : now_us();
	return 0;
}

/* A received ping or pong against what is due: the client's pong is its
 * ping; the server's pings are all the first one (ibv_srq_pingpong sends
 * the same buffer every time). */
static int pps_check(struct pps *p, const uint8_t *got)
{
	struct ping_run *r = p->r;
	const uint8_t *want = r->o.server ? p->first : p->sbuf->buf;
	ssize_t bad;

	if (!r->o.validate)
		return 0;
	if (r->o.server && !p->first) {
		p->first = malloc(r->res->size);
		if (!p->first)
			return -ENOMEM;
		memcpy(p->first, got, r->res->size);
		return 0;
	}
	bad = rk_buf_diff(got, want, r->res->size);
	if (bad < 0)
		return 0;
	return ping_mismatch(r, p->rcvd, bad, got, want[bad],
			     r->o.server ? "the ping differs from the first ping"
					 : "the pong differs from the ping");
}

/* A receive on QP k: checked, and for the server copied into k's slot. */
static int pps_recv(struct pps *p, const struct ibv_wc *wc, uint32_t k)
{
	uint32_t size = p->r->res->size;
	const void *buf;
	int ret;

	ret = rk_srq_take(p->srq, wc, &buf);
	if (ret)
		return ret;
	if (wc->byte_len != size) {
		rk_error("QP 0x%x received %u bytes, %u were due (" PPS_SAME ")", wc->qp_num,
			 wc->byte_len, size);
		ret = -EMSGSIZE;
	} else {
		ret = pps_check(p, buf);
	}
	if (!ret && p->r->o.server) {
		memcpy((uint8_t *)p->sbuf->buf + (size_t)k * size, buf, size);
		p->trecv[k] = now_us();
	}
	rk_srq_release(p->srq, wc);
	p->rcvd++;
	return ret;
}

/* A round ends with the client's pong or the server's SEND of it. */
static int pps_round(struct pps *p, uint32_t k)
{
	struct ping_run *r = p->r;
	struct rk_ping_round round = {
		.index = p->rounds,
		.size = r->res->size,
		.us = now_us() - p->t0[k],
		.checked = r->o.validate && (!r->o.server || p->rounds > 0),
		.unchecked_first = r->o.validate && r->o.server && !p->rounds,
	};

	p->rounds++;
	return ping_round_done(r, &round);
}

static int pps_completion(struct pps *p, const struct ibv_wc *wc)
{
	bool send = wc->wr_id == PING_WR_SEND;
	uint32_t k = 0;
	int ret;

	ret = rk_wc_check(wc, send ? "SEND (" PPS_SAME ")" : "receive (" PPS_SAME ")");
	if (ret)
		return ret;
	while (k < p->n && p->qp[k]->qp->qp_num != wc->qp_num)
		k++;
	if (k == p->n) {
		rk_error("a completion of QP 0x%x, none of this run's", wc->qp_num);
		return -EPROTO;
	}
	if (send) {
		p->sent++;
		p->pending[k] &= (uint8_t)~PPS_SEND;
		ret = p->r->o.server ? pps_round(p, k) : 0;
	} else {
		ret = pps_recv(p, wc, k);
		p->pending[k] &= (uint8_t)~PPS_RECV;
		if (!ret && !p->r->o.server)
			ret = pps_round(p, k);
	}
	if (!ret && !p->pending[k] && p->posted < p->r->res->count)
		ret = pps_post(p, k);
	return ret;
}

static int pps_rounds(struct pps *p)
{
	struct ping_run *r = p->r;
	uint64_t count = r->res->count;
	struct ibv_wc wc[PPS_WC];
	int n = 0, ret = 0;

	for (uint32_t k = 0; k < p->n; k++) {
		pp_fill((uint8_t *)p->sbuf->buf + (size_t)k * r->res->size, r->res->size);
		p->pending[k] = PPS_RECV;
		if (!r->o.server)
			ret = ret ? ret : pps_post(p, k);
	}
	while (!ret && (p->sent < count || p->rcvd < count)) {
		ret = rk_cq_poll(p->cq, wc, PPS_WC, r->o.timeout_ms, &n);
		if (ret == -ETIMEDOUT)
			rk_error("no completion in %d ms: %" PRIu64 " SENDs and %" PRIu64
				 " receives "
				 "of %" PRIu64 " done (" PPS_SAME ")",
				 r->o.timeout_ms, p->sent, p->rcvd, count);
		for (int i = 0; i < n && !ret; i++)
			ret = pps_completion(p, &wc[i]);
		if (!ret)
			ret = rk_srq_refill(p->srq);
	}
	r->res->checked = r->o.validate && !ret;
	r->res->first_unchecked = r->o.server && r->res->checked;
	return ret;
}

int pp_srq_run(struct ping_run *r, enum ibv_mtu mtu)
{
	struct pps *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	p->r = r;
	p->n = r->o.srq_qps;
	p->mtu = mtu;
	p->listen_fd = -1;
	r->res->qps = p->n;
	ret = pp_tcp(r, &p->listen_fd, &p->ctl);
	if (ret)
		goto out;
	snprintf(r->res->peer, sizeof(r->res->peer), "%s", p->ctl->peer);
	ret = pps_setup(p);
	if (!ret)
		ret = pps_exchange(p);
	if (ret)
		goto out;
	rk_ctl_close(p->ctl);
	p->ctl = NULL;
	r->res->path_mtu = rk_mtu_bytes(mtu);
	ping_report(r, RK_PING_CONNECTED);
	ret = pps_rounds(p);
out:
	pps_free(p);
	return ret;
}
