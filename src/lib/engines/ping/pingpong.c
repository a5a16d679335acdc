/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The protocol of ibv_rc_pingpong, ibv_uc_pingpong and ibv_ud_pingpong,
 * both roles (see pingpong.h): their TCP text exchange, then SEND/RECV
 * turns on RC, UC or UD. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/error.h>
#include <rdmakit/ctl.h>
#include <rdmakit/tcp.h>
#include <rdmakit/log.h>
#include <rdmakit/pattern.h>
#include <rdmakit/pingpong.h>
#include <rdmakit/port.h>

#include "base/clock.h"
#include "engines/ping/pingpong_int.h"
#include "verbs/traffic_int.h"
#include "verbs/device_int.h"

/* ---- the address message ---- */

int rk_pp_encode(const struct rk_pp_dest *d, char *buf, size_t buf_len)
{
	int n;

	if (!d || !buf || buf_len < RK_PP_MSG_LEN || d->qpn > 0xffffff || d->psn > 0xffffff)
		return -EINVAL;
	n = snprintf(buf, buf_len, "%04x:%06x:%06x:", d->lid, d->qpn, d->psn);
	for (int i = 0; i < 16; i++)
		n += snprintf(buf + n, buf_len - (size_t)n, "%02x", d->gid.raw[i]);
	return n + 1 == RK_PP_MSG_LEN ? 0 : -EINVAL;
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Read ndigits hex digits at p into *v; the offset of the first bad one, or -1. */
static int read_hex(const char *p, int ndigits, uint32_t *v)
{
	uint32_t x = 0;

	for (int i = 0; i < ndigits; i++) {
		int d = hex_val(p[i]);

		if (d < 0)
			return i;
		x = x << 4 | (uint32_t)d;
	}
	*v = x;
	return -1;
}

static const char *printable(char c, char *buf, size_t len)
{
	if (isprint((unsigned char)c))
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", (unsigned char)c);
	return buf;
}

int rk_pp_parse(const char *buf, size_t n, struct rk_pp_dest *dest_p, char *why, size_t why_len)
{
	static const struct {
		const char *name;
		int at, digits;
	} fields[] = {{"LID", 0, 4}, {"QPN", 5, 6}, {"PSN", 12, 6}};
	struct rk_pp_dest d;
	uint32_t v[3];
	char c[16];

	if (!buf || !dest_p)
		return -EINVAL;
	if (n != RK_PP_MSG_LEN)
		return ping_bad_msg(why, why_len, "%zu bytes, not the %d of \"LID:QPN:PSN:GID\"", n,
				    RK_PP_MSG_LEN);
	for (int f = 0; f < 3; f++) {
		int bad = read_hex(buf + fields[f].at, fields[f].digits, &v[f]);
		int sep = fields[f].at + fields[f].digits;

		if (bad >= 0)
			return ping_bad_msg(why, why_len, "%s: %s at offset %d is not a hex digit",
					    fields[f].name,
					    printable(buf[fields[f].at + bad], c, sizeof(c)),
					    fields[f].at + bad);
		if (buf[sep] != ':')
			return ping_bad_msg(why, why_len,
					    "%s at offset %d where ':' belongs after the %s",
					    printable(buf[sep], c, sizeof(c)), sep, fields[f].name);
	}
	for (int i = 0; i < 16; i++) {
		uint32_t b;
		int bad = read_hex(buf + 19 + 2 * i, 2, &b);

		if (bad >= 0)
			return ping_bad_msg(why, why_len, "GID: %s at offset %d is not a hex digit",
					    printable(buf[19 + 2 * i + bad], c, sizeof(c)),
					    19 + 2 * i + bad);
		d.gid.raw[i] = (uint8_t)b;
	}
	if (buf[RK_PP_MSG_LEN - 1] != '\0')
		return ping_bad_msg(why, why_len, "%s at offset %d where the message ends with NUL",
				    printable(buf[RK_PP_MSG_LEN - 1], c, sizeof(c)),
				    RK_PP_MSG_LEN - 1);
	d.lid = (uint16_t)v[0];
	d.qpn = v[1];
	d.psn = v[2];
	*dest_p = d;
	return 0;
}


/* ---- the engine ---- */

struct pp {
	struct ping_run *r;
	struct rk_cq_ids w;
	struct rk_port_sel d;
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
	pp_close_base(p->cq, p->pd, &p->d, p->ctl, p->listen_fd);
}

void pp_close_base(struct rk_cq *cq, struct ibv_pd *pd, struct rk_port_sel *d, struct rk_ctl *ctl,
		   int listen_fd)
{
	rk_cq_destroy(cq);
	rk_pd_free(pd);
	rk_port_close(d);
	rk_ctl_close(ctl);
	if (listen_fd >= 0)
		close(listen_fd);
}

static int pp_post_recvs(struct pp *p)
{
	while (p->posted < p->depth) {
		int ret = ping_post_recv(p->qp, p->rbuf, 0, p->rlen);

		if (ret)
			return ret;
		p->posted++;
	}
	return 0;
}

/* PD, CQ, QP (in INIT; UD in RTS) and buffers, receives posted. */
static int pp_make_qp(struct pp *p)
{
	struct ping_run *r = p->r;
	struct rk_qp_init_attr qa = {.transport = r->o.transport, .max_send_wr = 4};
	uint32_t size = r->res->size;
	int ret;

	qa.port_num = p->d.port_num;
	qa.max_recv_wr = (uint32_t)p->depth;
	qa.gid = p->d.has_gid ? &p->d.gid : NULL;
	qa.qkey = RK_PP_UD_QKEY;
	p->roff = r->o.transport == RK_UD ? RK_PP_GRH_LEN : 0;
	p->rlen = size + p->roff;
	ret = rk_pd_alloc(p->d.dev, &p->pd);
	if (!ret)
		ret = rk_cq_create(p->d.dev, 2 * p->depth + 8, r->o.events, &p->cq);
	p->w.cq = p->cq;
	if (!ret)
		ret = rk_qp_create(p->pd, p->d.dev, p->cq, p->cq, &qa, &p->qp);
	if (!ret)
		ret = rk_mr_alloc(p->pd, size, 0, &p->sbuf);
	if (!ret)
		ret = rk_mr_alloc(p->pd, p->rlen, IBV_ACCESS_LOCAL_WRITE, &p->rbuf);
	if (!ret)
		ret = rk_qp_to_init(p->qp, 0);
	if (!ret && r->o.transport == RK_UD) {
		ret = rk_qp_to_rtr(p->qp, NULL, NULL);
		if (!ret)
			ret = rk_qp_to_rts(p->qp);
	}
	if (!ret)
		ret = pp_post_recvs(p);
	return ret;
}

int pp_port_open(const struct ping_run *r, const struct rk_ctl *ctl, struct rk_port_sel *d)
{
	const struct rk_port_info *pi;
	int ret;

	ret = rk_port_open(r->o.device, r->o.port_num, r->o.gid_index,
			   ctl->local_ip[0] ? ctl->local_ip : NULL, d);
	if (ret)
		return ret;
	rk_run_counters_start(&r->res->counters, d->dev, d->port_num);
	pi = rk_device_port(d->dev, d->port_num);
	snprintf(r->res->device, sizeof(r->res->device), "%s", d->dev->info.name);
	r->res->has_gid = d->has_gid;
	r->res->gid = d->gid;
	r->res->lid = pi->lid;
	return 0;
}

/* Device, QP and buffers, receives posted: ready before our address goes
 * out, as ibv_*_pingpong is. */
static int pp_setup(struct pp *p)
{
	struct ping_run *r = p->r;
	const struct rk_port_info *pi;
	uint64_t depth;
	int ret;

	ret = pp_port_open(r, p->ctl, &p->d);
	if (ret)
		return ret;
	pi = rk_device_port(p->d.dev, p->d.port_num);
	if (r->o.transport == RK_UD && r->res->size > (uint32_t)rk_mtu_bytes(pi->active_mtu)) {
		rk_error("a UD message of %u bytes does not fit the port's MTU of %d bytes: a "
			 "datagram is one packet (use -s %d or less)",
			 r->res->size, rk_mtu_bytes(pi->active_mtu), rk_mtu_bytes(pi->active_mtu));
		return -EMSGSIZE;
	}
	depth = r->o.rx_depth ? r->o.rx_depth : 500;
	p->depth = (int)(r->res->count < depth ? r->res->count : depth);
	if (p->depth < 1)
		p->depth = 1;
	return pp_make_qp(p);
}

int pp_connect_qp(const struct ping_run *r, const struct rk_port_sel *d, struct rk_qp *qp,
		  const struct rk_pp_dest *remote, enum ibv_mtu mtu, struct ibv_ah **ah_p)
{
	const struct rk_port_info *pi = rk_device_port(d->dev, d->port_num);
	struct rk_endpoint ep = {0};
	struct rk_path_attr path;
	int ret;

	ep.transport = r->o.transport;
	ep.link_layer = pi->link_layer;
	ep.lid = remote->lid;
	ep.gid = remote->gid;
	ep.gid_type = d->has_gid ? d->gid.type : RK_GID_IB;
	ep.qpn = remote->qpn;
	ep.psn = remote->psn;
	ep.mtu = mtu;
	ep.qkey = RK_PP_UD_QKEY;
	if (rk_port_is_roce(d->dev, d->port_num) && rk_gid_is_zero(&remote->gid)) {
		rk_error("%s sent no GID (all zeros), and RoCE needs one: give the ibv_*_pingpong "
			 "peer -g with the index of its RoCE v2 GID ('rdmakit devices' lists them)",
			 r->res->peer);
		return -EINVAL;
	}
	if (r->o.transport == RK_UD) {
		rk_traffic_apply(&r->o.traffic, &qp->path);
		return rk_ah_create(qp, &ep, ah_p);
	}
	rk_path_defaults(&path);
	rk_traffic_apply(&r->o.traffic, &path);
	path.path_mtu = mtu;
	path.max_dest_rd_atomic = 1;
	path.max_rd_atomic = 1;
	/* Already in INIT, with the receives posted. */
	ret = rk_qp_to_rtr(qp, &ep, &path);
	if (ret)
		return ret;
	rk_traffic_check_qp(&r->o.traffic, qp, false);
	return rk_qp_to_rts(qp);
}

/* Connect our QP to the peer's address (RC/UC: RTR and RTS; UD: an
 * address handle). The peer tells no MTU: opts->mtu is used on both sides. */
static int pp_connect(struct pp *p)
{
	struct ping_run *r = p->r;

	r->res->peer_qpn = p->remote.qpn;
	r->res->peer_lid = p->remote.lid;
	r->res->peer_psn = p->remote.psn;
	r->res->peer_gid = p->remote.gid;
	ping_report(r, RK_PING_ADDRESSES);
	rk_traffic_note(&r->o.traffic, p->d.dev, p->d.port_num, p->d.has_gid ? &p->d.gid : NULL,
			false);
	return pp_connect_qp(r, &p->d, p->qp, &p->remote, p->mtu, &p->ah);
}

int pp_io_error(const struct ping_run *r, int ret)
{
	rk_error("exchange addresses with %s: %s", r->res->peer, rk_strerror(ret));
	return ret;
}

int pp_recv_dest(const struct ping_run *r, struct rk_ctl *ctl, struct rk_pp_dest *dest)
{
	char in[RK_PP_MSG_LEN], why[160];
	size_t got;
	int ret;

	ret = ctl->ops->recv(ctl, (uint8_t *)in, sizeof(in), r->o.timeout_ms, &got);
	if (ret == -ETIMEDOUT) {
		rk_error("%s sent no address within %d ms", r->res->peer, r->o.timeout_ms);
		return ret;
	}
	if (ret && got == 0)
		return pp_io_error(r, ret);
	ret = rk_pp_parse(in, got, dest, why, sizeof(why));
	if (ret)
		rk_error("%s: not an ibv_*_pingpong address message: %s", r->res->peer, why);
	return ret;
}

static int pp_exchange(struct pp *p)
{
	struct ping_run *r = p->r;
	struct rk_pp_dest mine = {.lid = r->res->lid, .qpn = p->qp->qp->qp_num,
				  .psn = p->qp->psn};
	char out[RK_PP_MSG_LEN];
	int ret;

	if (p->d.has_gid)
		mine.gid = p->d.gid.gid;
	r->res->qpn = mine.qpn;
	r->res->psn = mine.psn;
	ret = rk_pp_encode(&mine, out, sizeof(out));
	if (ret)
		return ret;
	if (!r->o.server) {
		ret = p->ctl->ops->send(p->ctl, (const uint8_t *)out, sizeof(out));
		if (ret)
			return pp_io_error(r, ret);
	}
	ret = pp_recv_dest(r, p->ctl, &p->remote);
	if (ret)
		return ret;
	if (!r->o.server) {
		/* The server connected before it answered: say "done", then go. */
		ret = p->ctl->ops->send(p->ctl, (const uint8_t *)RK_PP_DONE, RK_PP_DONE_LEN);
		return ret ? pp_io_error(r, ret) : pp_connect(p);
	}
	ret = pp_connect(p);
	if (ret)
		return ret;
	ret = p->ctl->ops->send(p->ctl, (const uint8_t *)out, sizeof(out));
	return ret ? pp_io_error(r, ret) : pp_recv_done(r, p->ctl);
}

int pp_recv_done(const struct ping_run *r, struct rk_ctl *ctl)
{
	char in[RK_PP_DONE_LEN];
	size_t got;
	int ret;

	ret = ctl->ops->recv(ctl, (uint8_t *)in, RK_PP_DONE_LEN, r->o.timeout_ms, &got);
	if (ret || memcmp(in, RK_PP_DONE, RK_PP_DONE_LEN)) {
		rk_error("%s did not end the exchange with \"done\" (%s)", r->res->peer,
			 ret ? rk_strerror(ret) : "other bytes came");
		return ret ? ret : -EPROTO;
	}
	return 0;
}

void pp_fill(uint8_t *b, uint32_t size)
{
	rk_pattern_fill(b, size, 0x9e3779b9u);
	for (size_t i = 0; i < size; i += RK_PP_PAGE)
		b[i] = 0;
}

/* The received data against what we sent: the client's pong is its ping;
 * the server's pings after the first are its last pong (the client's
 * buffer is its send and receive buffer). */
static int pp_check(struct pp *p, bool client, uint64_t i, const uint8_t *got)
{
	const uint8_t *sent = p->sbuf->buf;
	ssize_t bad;

	if (!p->r->o.validate || (!client && i == 0))
		return 0;
	bad = rk_buf_diff(got, sent, p->r->res->size);
	if (bad < 0)
		return 0;
	return ping_mismatch(p->r, i, bad, got, sent[bad],
			     client ? "the pong differs from the ping" :
				      "the ping is not the pong this server sent");
}

#define PP_SAME "both sides need the same -s and -n"

/* One completion of each: our SEND and a receive. */
static int pp_turn(struct pp *p, bool client, uint64_t i, double *us_p)
{
	const uint64_t rwant[1] = {PING_WR_RECV}, swant[1] = {PING_WR_SEND};
	struct ping_run *r = p->r;
	uint32_t size = r->res->size;
	uint8_t *got = (uint8_t *)p->rbuf->buf + p->roff;
	struct ibv_wc wc;
	double t0 = now_us();
	/* Nothing in the exchange says -s and -n: the likely cause goes into
	 * what a failed wait reports (constant: this is the timed path). */
	static const char swhat[] = "SEND (" PP_SAME ")", rwhat[] = "RECV (" PP_SAME ")";
	int ret;

	if (client) {
		ret = ping_post_send(p->qp, p->sbuf, 0, size, p->ah, p->remote.qpn);
		if (!ret)
			ret = rk_cq_wait_ids(&p->w, swant, 1, r->o.timeout_ms, swhat, NULL);
		if (ret)
			return ret;
	}
	ret = rk_cq_wait_ids(&p->w, rwant, 1, r->o.timeout_ms, rwhat, &wc);
	if (ret)
		return ret;
	p->posted--;
	if (!client)
		t0 = now_us();
	if (wc.byte_len != p->rlen) {
		rk_error("round %" PRIu64 ": received %u bytes, %u were due (" PP_SAME ")", i + 1,
			 wc.byte_len - p->roff, size);
		return -EMSGSIZE;
	}
	ret = pp_check(p, client, i, got);
	if (ret)
		return ret;
	if (!client) {
		memcpy(p->sbuf->buf, got, size);
		ret = ping_post_send(p->qp, p->sbuf, 0, size, p->ah, p->remote.qpn);
		if (!ret)
			ret = rk_cq_wait_ids(&p->w, swant, 1, r->o.timeout_ms, swhat, NULL);
		if (ret)
			return ret;
	}
	*us_p = now_us() - t0;
	/* Keep receives posted, the way ibv_*_pingpong does. */
	if (i + 1 + (uint64_t)p->posted < r->res->count)
		return pp_post_recvs(p);
	return 0;
}

int pp_tcp(const struct ping_run *r, int *listen_fd_p, struct rk_ctl **ctl_p)
{
	const struct rk_ping_opts *o = &r->o;
	int ret;

	if (!o->server)
		return rk_tcp_connect(o->host, o->port, o->timeout_ms, ctl_p);
	ret = rk_tcp_listen(NULL, o->port, listen_fd_p);
	if (ret)
		return ret;
	ping_report(r, RK_PING_LISTENING);
	return rk_tcp_accept(*listen_fd_p, o->accept_timeout_ms, ctl_p);
}

static int pp_rounds(struct pp *p)
{
	struct ping_run *r = p->r;
	bool client = !r->o.server;
	int ret = 0;

	pp_fill(p->sbuf->buf, r->res->size);
	for (uint64_t i = 0; i < r->res->count; i++) {
		struct rk_ping_round round = {.index = i, .size = r->res->size,
					      .checked = r->o.validate && (client || i > 0),
					      .unchecked_first = r->o.validate && !client && !i};

		ret = pp_turn(p, client, i, &round.us);
		if (!ret)
			ret = ping_round_done(r, &round);
		if (ret)
			break;
		ping_pause(r, i);
	}
	r->res->checked = r->o.validate && !ret;
	/* The server cannot know what the client's first ping holds. */
	r->res->first_unchecked = r->o.server && r->res->checked;
	return ret;
}

/* Options the engine cannot run with, each named. */
static int pp_check_opts(const struct rk_ping_opts *o, enum ibv_mtu mtu)
{
	if (!mtu)
		rk_error("pingpong: an MTU of %d bytes is not 256, 512, 1024, 2048 or 4096", o->mtu);
	else if (!o->size || o->size > RK_PING_MAX_SIZE)
		rk_error("pingpong: a message of %u bytes is outside 1..%u", o->size,
			 RK_PING_MAX_SIZE);
	else if (!o->count)
		rk_error("pingpong: the count must be 1 or more");
	else if (o->transport != RK_RC && o->transport != RK_UC && o->transport != RK_UD)
		rk_error("pingpong: the transport must be RC, UC or UD");
	else if (!o->server && !o->host)
		rk_error("pingpong: the client needs the server's address");
	else if (o->source)
		rk_error("pingpong: a source address is rping's (the TCP exchange picks none)");
	else if (o->srq_qps && (o->transport != RK_RC || o->srq_qps > RK_PP_SRQ_MAX_QP))
		rk_error("pingpong: ibv_srq_pingpong runs 1..%d RC QPs, not %u %s QPs",
			 RK_PP_SRQ_MAX_QP, o->srq_qps, rk_transport_str(o->transport));
	else if (o->srq_qps && o->count < o->srq_qps)
		rk_error("pingpong: %" PRIu64 " exchanges are fewer than the %u QPs, and "
			 "ibv_srq_pingpong's client starts with one on every QP",
			 o->count, o->srq_qps);
	else if (o->srq_qps && o->interval_ms)
		rk_error("pingpong: no pause between rounds with an SRQ: its QPs ping at once");
	else
		return 0;
	return -EINVAL;
}

int rk_pingpong_run(const struct rk_ping_opts *opts, struct rk_ping_result *result)
{
	struct ping_run r;
	struct pp p = {.r = &r, .listen_fd = -1};
	int ret;

	ping_run_init(&r, opts, RK_PP_DEFAULT_PORT, result);
	p.mtu = rk_mtu_from_bytes(opts->mtu ? opts->mtu : 1024);
	ret = pp_check_opts(opts, p.mtu);
	/* The ibv_*_pingpong protocols swap GIDs over TCP: the device, port
	 * and a GID are checked (iWARP refused) before listening or connecting. */
	if (!ret)
		ret = rk_port_name_check(opts->device, opts->port_num, opts->gid_index,
					 rk_transport_str(opts->transport),
					 "the ibv_*_pingpong protocols swap addresses over TCP: "
					 "use ping --cm or --proto rping");
	if (ret)
		return ping_finish(&r, ret);
	if (opts->srq_qps)
		return ping_finish(&r, pp_srq_run(&r, p.mtu));
	ret = pp_tcp(&r, &p.listen_fd, &p.ctl);
	if (ret)
		goto out;
	snprintf(result->peer, sizeof(result->peer), "%s", p.ctl->peer);
	ret = pp_setup(&p);
	if (!ret)
		ret = pp_exchange(&p);
	if (ret)
		goto out;
	rk_ctl_close(p.ctl);
	p.ctl = NULL;
	result->path_mtu = rk_mtu_bytes(p.mtu);
	ping_report(&r, RK_PING_CONNECTED);
	ret = pp_rounds(&p);
out:
	pp_free(&p);
	return ping_finish(&r, ret);
}
