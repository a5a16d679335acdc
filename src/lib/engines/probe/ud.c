/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* UD datagrams: one server QP serves several clients, each client sends its
 * datagrams and gets each back (see ud.h). The TCP exchange carries a HELLO
 * each way; RDMA CM in RDMA_PS_UDP is a SIDR request and reply, udaddy's
 * protocol, with rdmakit's own private data (a mark, then QPN, count and
 * size) that udaddy neither sends nor reads. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/ud.h>
#include <rdmakit/cm.h>
#include <rdmakit/conn.h>
#include <rdmakit/counters.h>
#include <rdmakit/cq.h>
#include <rdmakit/ctl.h>
#include <rdmakit/device.h>
#include <rdmakit/gid.h>
#include <rdmakit/log.h>
#include <rdmakit/loopback.h>
#include <rdmakit/mem.h>
#include <rdmakit/ops.h>
#include <rdmakit/pattern.h>
#include <rdmakit/port.h>
#include <rdmakit/qp.h>
#include <rdmakit/rcflow.h>
#include <rdmakit/srq.h>
#include <rdmakit/tcp.h>
#include <rdmakit/traffic.h>
#include <rdmakit/wire.h>

#include "base/bytes.h"
#include "base/clock.h"
#include "verbs/srq_int.h"
#include "verbs/device_int.h"

#define UD_MARK "RDKT-UD1"          /* CM private data of rdmakit's ud */
#define UD_MARK_LEN 8
#define UD_PRIV_LEN (UD_MARK_LEN + 12) /* mark, then QPN, count, size (big-endian) */
#define UD_GRH 40
#ifndef UD_SEND_SLOTS
#define UD_SEND_SLOTS 32
#endif
#define UD_RECV_SLOTS 256
#define UD_RECV_ID 1000             /* wr_id of receive slot i: UD_RECV_ID + i */
/* Datagrams a client has out unanswered with an rdmakit server, which
 * echoes each as it comes: UD drops what finds no receive posted, and the
 * server's ring (16 to 256 slots) is shared by up to 64 clients. */
#define UD_CLIENT_WINDOW (UD_RECV_SLOTS / RK_UD_MAX_CLIENTS)

/* What the server keeps per client besides its public record. */
struct ud_client {
	uint32_t qkey;
	bool has_gid;             /* TCP: gid answers this client, not the QP's */
	struct rk_gid_choice gid;
	struct ibv_ah *ah;
	struct rk_cm *cm;  /* CM: kept until the end, as udaddy does */
	struct rk_ctl *ctl;
};

struct ud {
	const struct rk_ud_opts *o;
	struct rk_ud_result *res;
	uint16_t port;
	struct rk_port_sel sel;  /* the server's own device; the CM client's is cm->dev */
	bool own_dev;
	struct ibv_pd *pd;
	struct rk_cq *cq;
	struct rk_qp *qp;
	struct rk_mr *rbuf;      /* receive slots of size + 40 (no SRQ) */
	struct rk_srq *srq;      /* the server's shared receive queue (opts.srq) */
	struct rk_mr *sbuf;      /* send slots of size */
	int nrecv, nsend;
	bool send_busy[UD_SEND_SLOTS];
	int sends_out;
	/* Receive completions seen while waiting for a send slot, handled next;
	 * each holds an unposted slot, so nrecv bounds them. */
	struct ibv_wc later[UD_RECV_SLOTS];
	int later_head, later_n;
	/* server */
	struct rk_cm *listener;
	int listen_fd;
	struct ud_client clients[RK_UD_MAX_CLIENTS];
	/* client */
	struct rk_cm *cm;
	struct rk_ctl *ctl;
	struct ibv_ah *ah;
};

typedef int (*ud_recv_fn)(struct ud *u, const struct ibv_wc *wc, const uint8_t *slot);

static void emit(struct ud *u, struct rk_ud_event *ev)
{
	ev->result = u->res;
	if (u->o->on_event)
		u->o->on_event(ev, u->o->arg);
}

/* The payload of datagram i from the client with QP qpn; echoed unchanged. */
static uint32_t ud_seed(uint32_t qpn, uint64_t i)
{
	return qpn * 2654435761u ^ (uint32_t)(i + 1) * 40503u;
}

/* ---- the SIDR private data ---- */

static void priv_encode(uint8_t *p, uint32_t qpn, uint32_t count, uint32_t size)
{
	memcpy(p, UD_MARK, UD_MARK_LEN);
	put_u32(p + UD_MARK_LEN, qpn);
	put_u32(p + UD_MARK_LEN + 4, count);
	put_u32(p + UD_MARK_LEN + 8, size);
}

/* False for private data that is not rdmakit's (udaddy's: none). */
static bool priv_decode(const uint8_t *p, size_t len, uint32_t *qpn, uint32_t *count,
			uint32_t *size)
{
	if (len < UD_PRIV_LEN || memcmp(p, UD_MARK, UD_MARK_LEN))
		return false;
	*qpn = get_u32(p + UD_MARK_LEN);
	*count = get_u32(p + UD_MARK_LEN + 4);
	*size = get_u32(p + UD_MARK_LEN + 8);
	return true;
}

/* ---- QP and buffers ---- */

/* Messages above the path MTU: one datagram is one packet. */
static int ud_check_size(const struct ud *u)
{
	const struct rk_port_info *pi = rk_device_port(u->sel.dev, u->sel.port_num);
	int mtu = pi ? rk_mtu_bytes(pi->active_mtu) : 0;

	if ((int)u->o->size > mtu) {
		rk_error("a UD message of %u bytes is larger than the path MTU of %s port %u (%d "
			 "bytes): a datagram is one packet and cannot be split; use -s %d or less",
			 u->o->size, u->sel.dev->info.name, u->sel.port_num, mtu, mtu);
		return -EMSGSIZE;
	}
	return 0;
}

static int post_recv_slot(struct ud *u, int slot)
{
	uint32_t len = u->o->size + UD_GRH;
	struct ibv_sge sg = rk_sge(u->rbuf, (size_t)slot * len, len);

	return rk_post_recv(u->qp, UD_RECV_ID + (uint64_t)slot, &sg, 1);
}

static void note_qp(struct ud *u)
{
	struct rk_ud_result *r = u->res;

	r->has_qp = true;
	snprintf(r->device, sizeof(r->device), "%s", u->sel.dev->info.name);
	r->port_num = u->sel.port_num;
	r->qpn = u->qp->qp->qp_num;
	r->qkey = u->qp->qkey;
}

/* The server's SRQ (its depth is the receive queue's, at most UD_RECV_SLOTS:
 * completions put aside by server_echo() hold a slot each) and the async
 * event logger that reports its limit. */
static int ud_srq_create(struct ud *u, struct rk_qp_init_attr *qa)
{
	struct rk_srq_opts so = u->o->srq_opts;
	int ret;

	if (so.depth > UD_RECV_SLOTS) {
		rk_error("ud: --srq-depth %u: the UD server keeps at most %d receives", so.depth,
			 UD_RECV_SLOTS);
		return -EINVAL;
	}
	if (!so.depth)
		so.depth = (uint32_t)u->nrecv;
	so.slot_size = u->o->size + UD_GRH;
	so.wr_id_base = UD_RECV_ID;
	ret = rk_srq_create(u->pd, u->sel.dev, &so, &u->srq);
	if (ret)
		return ret;
	u->nrecv = (int)so.depth;
	qa->srq = rk_srq_verbs(u->srq);
	u->res->srq = true;
	return rk_async_log_start(u->sel.dev);
}

/* PD, CQ, a UD QP in RTS with qkey, and every receive slot posted. */
static int ud_setup(struct ud *u, uint32_t qkey, int nrecv)
{
	struct rk_qp_init_attr qa = {.transport = RK_UD, .port_num = u->sel.port_num,
				     .max_send_wr = UD_SEND_SLOTS, .qkey = qkey,
				     .gid = u->sel.has_gid ? &u->sel.gid : NULL};
	size_t size = u->o->size;
	int ret;

	rk_run_counters_start(&u->res->counters, u->sel.dev, u->sel.port_num);
	u->nrecv = nrecv < UD_RECV_SLOTS ? nrecv : UD_RECV_SLOTS;
	u->nsend = UD_SEND_SLOTS;
	qa.max_recv_wr = (uint32_t)u->nrecv;
	ret = rk_pd_alloc(u->sel.dev, &u->pd);
	if (!ret && u->o->server && u->o->srq)
		ret = ud_srq_create(u, &qa);
	if (!ret)
		ret = rk_cq_create(u->sel.dev, u->nrecv + u->nsend + 8, u->o->events, &u->cq);
	if (!ret)
		ret = rk_qp_create(u->pd, u->sel.dev, u->cq, u->cq, &qa, &u->qp);
	if (!ret) {
		/* Every address handle (rk_ah_create()) takes them from the path. */
		rk_traffic_apply(&u->o->traffic, &u->qp->path);
		rk_traffic_note(&u->o->traffic, u->sel.dev, u->sel.port_num, qa.gid, false);
	}
	if (!ret && !u->srq)
		ret = rk_mr_alloc(u->pd, (size_t)u->nrecv * (size + UD_GRH),
				  IBV_ACCESS_LOCAL_WRITE, &u->rbuf);
	if (!ret)
		ret = rk_mr_alloc(u->pd, (size_t)u->nsend * size, 0, &u->sbuf);
	if (!ret)
		ret = rk_qp_to_init(u->qp, 0);
	if (!ret)
		ret = rk_qp_to_rtr(u->qp, NULL, NULL);
	if (!ret)
		ret = rk_qp_to_rts(u->qp);
	for (int i = 0; !ret && !u->srq && i < u->nrecv; i++)
		ret = post_recv_slot(u, i);
	if (!ret && u->srq)
		ret = rk_srq_fill(u->srq);
	if (!ret)
		note_qp(u);
	return ret;
}

/* SEND with immediate (our QPN, as udaddy does) from a free slot. */
static int ud_send(struct ud *u, const void *data, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	uint32_t size = u->o->size;
	struct ibv_sge sg;
	struct rk_wr wr = {.op = RK_OP_SEND_IMM, .sg = &sg, .nsge = 1, .flags = IBV_SEND_SIGNALED,
			   .imm = u->qp->qp->qp_num, .ah = ah, .remote_qpn = qpn,
			   .remote_qkey = qkey};
	int slot = 0, ret;

	while (slot < u->nsend && u->send_busy[slot])
		slot++;
	if (slot == u->nsend)
		return -EAGAIN;
	memcpy((uint8_t *)u->sbuf->buf + (size_t)slot * size, data, size);
	sg = rk_sge(u->sbuf, (size_t)slot * size, size);
	wr.wr_id = (uint64_t)slot + 1;
	ret = rk_post(u->qp, &wr);
	if (ret)
		return ret;
	u->send_busy[slot] = true;
	u->sends_out++;
	return 0;
}

/* A send completion frees its slot. */
static int send_done(struct ud *u, const struct ibv_wc *wc)
{
	int ret = rk_wc_check(wc, "UD SEND");

	if (ret)
		return ret;
	u->send_busy[wc->wr_id - 1] = false;
	u->sends_out--;
	return 0;
}

/* A receive completion: check it, hand it to on_recv, post its slot again. */
static int recv_done(struct ud *u, const struct ibv_wc *wc, ud_recv_fn on_recv)
{
	if (u->srq) {
		const void *p;
		int ret = rk_wc_check(wc, "UD RECV");

		if (!ret)
			ret = rk_srq_take(u->srq, wc, &p);
		if (ret)
			return ret;
		ret = on_recv(u, wc, p);
		rk_srq_release(u->srq, wc);
		return ret ? ret : rk_srq_refill(u->srq);
	}

	int slot = (int)(wc->wr_id - UD_RECV_ID);
	const uint8_t *p = (const uint8_t *)u->rbuf->buf + (size_t)slot * (u->o->size + UD_GRH);
	int ret = rk_wc_check(wc, "UD RECV");

	if (!ret)
		ret = on_recv(u, wc, p);
	if (!ret)
		ret = post_recv_slot(u, slot);
	return ret;
}

/* Poll once (up to timeout_ms), after the receives put aside by
 * server_echo(); send completions free their slot. */
static int ud_poll(struct ud *u, int timeout_ms, ud_recv_fn on_recv)
{
	struct ibv_wc wc[16];
	int got, ret;

	while (u->later_n) {
		struct ibv_wc w = u->later[u->later_head];

		u->later_head = (u->later_head + 1) % UD_RECV_SLOTS;
		u->later_n--;
		ret = recv_done(u, &w, on_recv);
		if (ret)
			return ret;
		timeout_ms = 0;
	}
	ret = rk_cq_poll(u->cq, wc, 16, timeout_ms, &got);
	if (ret)
		return ret;
	for (int i = 0; i < got; i++) {
		ret = wc[i].wr_id < UD_RECV_ID ? send_done(u, &wc[i])
					       : recv_done(u, &wc[i], on_recv);
		if (ret)
			return ret;
	}
	return 0;
}

/* The verbs objects of ud_setup() and the client's AH; left NULL. */
static void ud_free_verbs(struct ud *u)
{
	if (u->ah)
		ibv_destroy_ah(u->ah);
	rk_mr_free(u->sbuf);
	rk_mr_free(u->rbuf);
	rk_qp_destroy(u->qp);
	rk_srq_destroy(u->srq);
	u->srq = NULL;
	rk_cq_destroy(u->cq);
	rk_pd_free(u->pd);
	u->ah = NULL;
	u->sbuf = u->rbuf = NULL;
	u->qp = NULL;
	u->cq = NULL;
	u->pd = NULL;
}

static void ud_free(struct ud *u)
{
	/* Also the entry of a client refused half way. */
	for (int i = 0; i < RK_UD_MAX_CLIENTS; i++) {
		if (u->clients[i].ah)
			ibv_destroy_ah(u->clients[i].ah);
		rk_ctl_close(u->clients[i].ctl);
		rk_cm_destroy(u->clients[i].cm);
	}
	ud_free_verbs(u);
	if (u->own_dev)
		rk_port_close(&u->sel);
	rk_ctl_close(u->ctl);
	rk_cm_destroy(u->cm);
	rk_cm_destroy(u->listener);
	if (u->listen_fd >= 0)
		close(u->listen_fd);
}

/* The device, port and GID of rk_port_open(), owned by u. */
static int ud_open_port(struct ud *u, const char *local_ip)
{
	const struct rk_ud_opts *o = u->o;
	int ret;

	ret = rk_port_open(o->device, o->port_num, o->gid_index, local_ip, &u->sel);
	if (ret)
		return ret;
	u->own_dev = true;
	return ud_check_size(u);
}

/* ---- server ---- */

static int find_client(struct ud *u, uint32_t qpn)
{
	struct rk_ud_result *r = u->res;

	for (int i = 0; i < r->nclients; i++)
		if (r->clients[i].qpn == qpn)
			return i;
	/* udaddy announces no QPN: its first datagram binds it. */
	for (int i = 0; i < r->nclients; i++)
		if (!r->clients[i].qpn) {
			r->clients[i].qpn = qpn;
			return i;
		}
	return -1;
}

/* Is the datagram what client c should have sent? */
static int server_check(struct ud *u, const struct rk_ud_peer *c, const struct ibv_wc *wc,
			const uint8_t *data)
{
	uint32_t size = u->o->size;
	uint8_t want[RK_UD_MAX_SIZE];
	ssize_t bad;

	if (wc->byte_len != size + UD_GRH) {
		rk_error("%s (QP 0x%x) sent %u bytes; this server takes %u-byte datagrams (both "
			 "sides need the same -s)",
			 c->addr, c->qpn, wc->byte_len - UD_GRH, size);
		return -EMSGSIZE;
	}
	if (c->received >= c->count) {
		rk_error("%s (QP 0x%x) sent more than the %" PRIu64 " datagrams it announced",
			 c->addr, c->qpn, c->count);
		return -EPROTO;
	}
	if (!c->rdmakit)
		return 0;
	rk_pattern_fill(want, size, ud_seed(c->qpn, c->received));
	bad = rk_buf_diff(data, want, size);
	if (bad < 0)
		return 0;
	/* A later datagram's bytes: the ones between were lost (UD does not
	 * retransmit), the data is not corrupt. */
	for (uint64_t k = 1; k <= 2 * UD_CLIENT_WINDOW && c->received + k < c->count; k++) {
		if (rk_pattern_check(data, size, ud_seed(c->qpn, c->received + k)) < 0) {
			rk_error("%s: datagram %" PRIu64 " came where %" PRIu64 " was due: %" PRIu64
				 " lost (UD does not retransmit)", c->addr, c->received + k + 1,
				 c->received + 1, k);
			return -ENODATA;
		}
	}
	rk_error("%s datagram %" PRIu64 ": byte %zd is 0x%02x, the client put 0x%02x there",
		 c->addr, c->received + 1, bad, data[bad], want[bad]);
	return -EIO;
}

/* Send the echo; with every send slot busy, wait for one. Receives that
 * complete meanwhile are put aside for ud_poll(), in their order. */
static int server_echo(struct ud *u, const struct ud_client *k, const struct rk_ud_peer *c,
		       const uint8_t *data)
{
	struct ibv_wc w;
	int got, ret;

	while ((ret = ud_send(u, data, k->ah, c->qpn, k->qkey)) == -EAGAIN) {
		ret = rk_cq_poll(u->cq, &w, 1, u->o->timeout_ms, &got);
		if (ret)
			return ret;
		if (!got)
			continue;
		if (w.wr_id >= UD_RECV_ID) {
			if (u->later_n == UD_RECV_SLOTS) {
				rk_error("UD: more receive completions than receive slots");
				return -EPROTO;
			}
			u->later[(u->later_head + u->later_n++) % UD_RECV_SLOTS] = w;
			continue;
		}
		ret = send_done(u, &w);
		if (ret)
			return ret;
	}
	return ret;
}

/* Answer where a datagram came from (the GRH in front of its data), with
 * the traffic fields asked for. */
static int ah_back(struct ud *u, const struct ibv_wc *wc, const uint8_t *slot,
		   const struct rk_ud_peer *c, struct ibv_ah **ah_p)
{
	struct ibv_ah_attr aa;
	int ret;

	ret = ibv_init_ah_from_wc(u->sel.dev->ctx, u->sel.port_num, (struct ibv_wc *)wc,
				  (struct ibv_grh *)slot, &aa);
	if (!ret) {
		rk_traffic_apply_ah(&u->o->traffic, &aa);
		*ah_p = ibv_create_ah(u->pd, &aa);
		if (*ah_p)
			return 0;
	}
	ret = errno ? -errno : -EINVAL;
	rk_error("address handle back to %s (QP 0x%x): %m", c->addr, c->qpn);
	return ret;
}

static int server_recv(struct ud *u, const struct ibv_wc *wc, const uint8_t *slot)
{
	int i = find_client(u, wc->src_qp);
	struct rk_ud_event ev = {.kind = RK_UD_DATAGRAM, .src_qpn = wc->src_qp};
	struct rk_ud_peer *c;
	struct ud_client *k;
	int ret;

	if (i < 0) {
		rk_warn("a datagram from QP 0x%x, which no client announced: dropped", wc->src_qp);
		return 0;
	}
	c = &u->res->clients[i];
	k = &u->clients[i];
	ret = server_check(u, c, wc, slot + UD_GRH);
	if (ret)
		return ret;
	if (!k->ah) {
		ret = ah_back(u, wc, slot, c, &k->ah);
		if (ret)
			return ret;
	}
	c->received++;
	ret = server_echo(u, k, c, slot + UD_GRH);
	if (ret)
		return ret;
	c->echoed++;
	ev.client = c;
	ev.index = c->received;
	ev.of = c->count;
	ev.imm = (wc->wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc->imm_data) : 0;
	ev.checked = c->rdmakit;
	emit(u, &ev);
	return 0;
}

/* The HELLO of a TCP client: our endpoint must suit it, and its size ours. */
static int check_hello(struct ud *u, const struct rk_endpoint *local, const struct rk_msg *msg,
		       char *why, size_t why_len)
{
	int ret = rk_endpoint_check(local, &msg->u.hello.ep, why, why_len);

	if (!ret && msg->u.hello.buf.op != RK_WIRE_OP_UD) {
		rk_wire_op_refusal("ud", msg->u.hello.buf.op, why, why_len);
		ret = -EPROTO;
	}
	if (!ret && (msg->u.hello.buf.size != u->o->size || !msg->u.hello.buf.len)) {
		snprintf(why, why_len, "the client sends %u-byte datagrams; this server takes "
				       "%u-byte ones", msg->u.hello.buf.size, u->o->size);
		ret = -EMSGSIZE;
	}
	return ret;
}

/* TCP: the client chose its GID by the address it connected from; answer
 * from ours that carries the address it connected to (unless -g fixed the
 * index). The QP's default, an IPv4 GID, cannot reach an IPv6 client's. */
static int client_gid(struct ud *u, struct ud_client *k, struct rk_endpoint *local)
{
	struct rk_gid_want want = {.index = -1, .ip = k->ctl->local_ip};
	int ret;

	if (!u->sel.has_gid || u->o->gid_index >= 0 || !k->ctl->local_ip[0])
		return 0;
	ret = rk_gid_select(u->sel.dev, u->sel.port_num, &want, &k->gid);
	if (ret)
		return ret;
	k->has_gid = true;
	local->gid = k->gid.gid;
	local->gid_type = k->gid.type;
	local->gid_index = k->gid.index;
	return 0;
}

/* TCP: the client's HELLO carries its QP; ours goes back. */
static int accept_tcp(struct ud *u)
{
	struct rk_ud_peer *c = &u->res->clients[u->res->nclients];
	struct ud_client *k = &u->clients[u->res->nclients];
	struct rk_endpoint local;
	struct rk_msg msg;
	char why[256];
	int ret;

	ret = rk_tcp_accept(u->listen_fd, 1000, &k->ctl);
	if (ret)
		return ret;
	snprintf(c->addr, sizeof(c->addr), "%s", k->ctl->peer);
	ret = rk_ctl_expect(k->ctl, RK_MSG_HELLO, u->o->timeout_ms, &msg);
	if (ret)
		return ret;
	rk_qp_local_endpoint(u->qp, &local);
	ret = client_gid(u, k, &local);
	if (ret)
		return ret;
	ret = check_hello(u, &local, &msg, why, sizeof(why));
	if (ret) {
		rk_error("refusing %s: %s", c->addr, why);
		rk_ctl_send_error(k->ctl, ret, "%s", why);
		return ret;
	}
	c->rdmakit = true;
	c->qpn = msg.u.hello.ep.qpn;
	k->qkey = msg.u.hello.ep.qkey;
	c->count = msg.u.hello.buf.len;
	ret = rk_ah_create_from(u->qp, k->has_gid ? &k->gid : NULL, &msg.u.hello.ep, &k->ah);
	if (ret)
		return ret;
	memset(&msg, 0, sizeof(msg));
	msg.type = RK_MSG_HELLO;
	msg.u.hello.ep = local;
	msg.u.hello.buf.op = RK_WIRE_OP_UD;
	msg.u.hello.buf.size = u->o->size;
	msg.u.hello.buf.len = c->count;
	return rk_ctl_send(k->ctl, &msg);
}

/* CM: a SIDR request; rdmakit's carries its QPN and count. */
static int accept_cm(struct ud *u)
{
	struct rk_ud_peer *c = &u->res->clients[u->res->nclients];
	struct ud_client *k = &u->clients[u->res->nclients];
	uint32_t qpn, count, size;
	uint8_t reply[UD_PRIV_LEN];
	char why[192]; /* cut to the ERROR message's text when sent */
	const uint8_t *pd;
	size_t len;
	int ret;

	ret = rk_cm_get_request_any(u->listener, 1000, &k->cm);
	if (ret)
		return ret;
	snprintf(c->addr, sizeof(c->addr), "%s", k->cm->peer_addr);
	if (strcmp(k->cm->dev->info.name, u->sel.dev->info.name)) {
		snprintf(why, sizeof(why), "your request came in on %s; this server's QP is on %s",
			 k->cm->dev->info.name, u->sel.dev->info.name);
		rk_error("refusing %s: %s (use -d %s)", c->addr, why, k->cm->dev->info.name);
		rk_cm_reject(k->cm, why);
		rk_cm_destroy(k->cm);
		k->cm = NULL;
		return -ENODEV;
	}
	pd = rk_cm_private_data(k->cm, &len);
	k->qkey = RDMA_UDP_QKEY;
	c->count = u->o->count;
	if (priv_decode(pd, len, &qpn, &count, &size)) {
		c->rdmakit = true;
		c->qpn = qpn;
		c->count = count;
		if (size != u->o->size || !count) {
			if (count)
				snprintf(why, sizeof(why), "you send %u-byte datagrams; this server "
					 "takes %u-byte ones (-s %u)", size, u->o->size,
					 u->o->size);
			else
				snprintf(why, sizeof(why), "you asked for 0 datagrams");
			rk_error("refusing %s: %s", c->addr, why);
			rk_cm_reject(k->cm, why);
			return count ? -EMSGSIZE : -EINVAL;
		}
	}
	priv_encode(reply, u->qp->qp->qp_num, (uint32_t)c->count, u->o->size);
	return rk_cm_accept_raw(k->cm, u->qp, reply, sizeof(reply), u->o->timeout_ms);
}

static bool clients_done(const struct ud *u)
{
	const struct rk_ud_result *r = u->res;

	if (r->nclients < u->o->clients || u->sends_out)
		return false;
	for (int i = 0; i < r->nclients; i++)
		if (r->clients[i].echoed < r->clients[i].count)
			return false;
	return true;
}

/* A client knocking: take it. 0 when none was waiting. */
static int server_take_client(struct ud *u)
{
	struct pollfd p = {.fd = u->o->cm ? u->listener->channel->fd : u->listen_fd,
			   .events = POLLIN};
	struct rk_ud_event ev = {.kind = RK_UD_CLIENT};
	int ret;

	if (u->res->nclients >= u->o->clients || poll(&p, 1, 0) <= 0)
		return 0;
	ret = u->o->cm ? accept_cm(u) : accept_tcp(u);
	if (ret)
		return ret;
	ev.client = &u->res->clients[u->res->nclients++];
	emit(u, &ev);
	return 1;
}

static int server_timed_out(struct ud *u, double limit_us)
{
	const struct rk_ud_result *r = u->res;

	rk_error("%s for %.0f s", r->nclients < u->o->clients ?
		 "no further client came" : "nothing arrived", limit_us / 1e6);
	for (int i = 0; i < r->nclients; i++)
		rk_error("  %s: %" PRIu64 " of %" PRIu64 " datagrams", r->clients[i].addr,
			 r->clients[i].received, r->clients[i].count);
	return -ETIMEDOUT;
}

/* A client of the TCP exchange that closed it before its last datagram
 * (its process ended): said, -ECONNRESET; else 0. UD itself cannot tell. */
static int server_client_left(struct ud *u)
{
	const struct rk_ud_result *r = u->res;

	for (int i = 0; i < r->nclients; i++) {
		const struct rk_ud_peer *c = &r->clients[i];

		if (c->received < c->count && u->clients[i].ctl &&
		    rk_tcp_peer_closed(u->clients[i].ctl)) {
			rk_error("%s went away after %" PRIu64 " of %" PRIu64 " datagrams (it "
				 "closed the TCP exchange)", c->addr, c->received, c->count);
			return -ECONNRESET;
		}
	}
	return 0;
}

/* Take clients and echo their datagrams until every one is done. */
static int server_loop(struct ud *u)
{
	const struct rk_ud_opts *o = u->o;
	double idle_since = now_us();
	int ret;

	while (!clients_done(u)) {
		double limit = u->res->nclients ? o->timeout_ms * 1e3 :
			       o->wait_ms > 0 ? o->wait_ms * 1e3 : -1;

		ret = server_take_client(u);
		if (ret < 0)
			return ret;
		if (ret)
			idle_since = now_us();
		ret = ud_poll(u, 20, server_recv);
		if (!ret) {
			idle_since = now_us();
			continue;
		}
		if (ret != -ETIMEDOUT)
			return ret;
		ret = server_client_left(u);
		if (ret)
			return ret;
		if (limit >= 0 && now_us() - idle_since > limit)
			return server_timed_out(u, limit);
	}
	return 0;
}

static int run_server(struct ud *u)
{
	const struct rk_ud_opts *o = u->o;
	struct rk_ud_result *r = u->res;
	struct rk_ud_event ev = {.kind = RK_UD_READY};
	int64_t nrecv = (int64_t)o->count * o->clients;
	double start = now_us();
	int ret;

	ret = ud_open_port(u, NULL);
	if (!ret)
		ret = ud_setup(u, o->cm ? RDMA_UDP_QKEY : RK_DEFAULT_QKEY,
			       nrecv < 16 ? 16 : nrecv > UD_RECV_SLOTS ? UD_RECV_SLOTS : (int)nrecv);
	if (ret)
		return ret;
	if (o->cm)
		ret = rk_cm_listen_ps(NULL, u->port, RDMA_PS_UDP, &o->traffic, &u->listener);
	else
		ret = rk_tcp_listen(NULL, u->port, &u->listen_fd);
	if (ret)
		return ret;
	emit(u, &ev);
	ret = server_loop(u);
	if (ret)
		return ret;
	r->elapsed_us = now_us() - start;
	r->checked = true;
	for (int i = 0; i < r->nclients; i++) {
		r->received += r->clients[i].received;
		r->checked &= r->clients[i].rdmakit;
	}
	r->sent = r->received;
	return 0;
}

/* ---- client ---- */

static int client_recv(struct ud *u, const struct ibv_wc *wc, const uint8_t *slot)
{
	struct rk_ud_result *r = u->res;
	struct rk_ud_event ev = {.kind = RK_UD_DATAGRAM, .src_qpn = wc->src_qp};
	const uint8_t *data = slot + UD_GRH;
	uint32_t size = u->o->size;
	uint8_t want[RK_UD_MAX_SIZE];
	ssize_t bad;

	if (wc->src_qp != r->peer_qpn) {
		rk_warn("a datagram from QP 0x%x, not the server's 0x%x: dropped", wc->src_qp,
			r->peer_qpn);
		return 0;
	}
	if (wc->byte_len != size + UD_GRH) {
		rk_error("the server answered with %u bytes, %u were sent", wc->byte_len - UD_GRH,
			 size);
		return -EMSGSIZE;
	}
	if (r->peer_rdmakit) {
		rk_pattern_fill(want, size, ud_seed(u->qp->qp->qp_num, r->received));
		bad = rk_buf_diff(data, want, size);
		if (bad >= 0) {
			rk_error("echo %" PRIu64 ": byte %zd is 0x%02x, 0x%02x was sent",
				 r->received + 1, bad, data[bad], want[bad]);
			return -EIO;
		}
	}
	r->received++;
	ev.index = r->received;
	ev.of = u->o->count;
	ev.imm = (wc->wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc->imm_data) : 0;
	ev.checked = r->peer_rdmakit;
	emit(u, &ev);
	return 0;
}

/* TCP: our HELLO with the QP, the count and the size; the server's back. */
static int connect_tcp(struct ud *u)
{
	const struct rk_ud_opts *o = u->o;
	struct rk_ud_result *r = u->res;
	struct rk_msg msg = {.type = RK_MSG_HELLO};
	struct rk_endpoint local;
	char why[256];
	int ret;

	ret = rk_tcp_connect(o->host, u->port, o->timeout_ms, &u->ctl);
	if (ret)
		return ret;
	snprintf(r->peer, sizeof(r->peer), "%s", u->ctl->peer);
	ret = ud_open_port(u, u->ctl->local_ip[0] ? u->ctl->local_ip : NULL);
	if (!ret)
		ret = ud_setup(u, RK_DEFAULT_QKEY, (int)o->count);
	if (ret)
		return ret;
	rk_qp_local_endpoint(u->qp, &local);
	msg.u.hello.ep = local;
	msg.u.hello.buf.op = RK_WIRE_OP_UD;
	msg.u.hello.buf.size = o->size;
	msg.u.hello.buf.len = o->count;
	ret = rk_ctl_send(u->ctl, &msg);
	if (!ret)
		ret = rk_ctl_expect(u->ctl, RK_MSG_HELLO, o->timeout_ms, &msg);
	if (ret)
		return ret;
	ret = rk_endpoint_check(&local, &msg.u.hello.ep, why, sizeof(why));
	if (ret) {
		rk_error("cannot talk to %s: %s", r->peer, why);
		return ret;
	}
	r->peer_qpn = msg.u.hello.ep.qpn;
	r->peer_qkey = msg.u.hello.ep.qkey;
	r->peer_rdmakit = true;
	return rk_ah_create(u->qp, &msg.u.hello.ep, &u->ah);
}

static int connect_cm_once(void *arg)
{
	struct ud *u = arg;
	const struct rk_ud_opts *o = u->o;
	struct rk_ud_result *r = u->res;
	uint32_t qpn, count, size;
	uint8_t priv[UD_PRIV_LEN];
	struct ibv_ah_attr ah;
	const uint8_t *pd;
	size_t len;
	int ret;

	ret = rk_cm_resolve_ps(o->host, u->port, RDMA_PS_UDP, &o->traffic, o->timeout_ms,
			       &u->cm);
	if (ret)
		return ret;
	snprintf(r->peer, sizeof(r->peer), "%s", u->cm->peer_addr);
	u->sel.dev = u->cm->dev;
	u->sel.port_num = u->cm->port_num;
	u->sel.has_gid = rk_port_is_roce(u->sel.dev, u->sel.port_num);
	u->sel.gid = u->cm->gid;
	ret = ud_check_size(u);
	if (!ret)
		ret = ud_setup(u, RDMA_UDP_QKEY, (int)o->count);
	if (ret)
		return ret;
	priv_encode(priv, u->qp->qp->qp_num, o->count, o->size);
	ret = rk_cm_connect_raw(u->cm, u->qp, priv, sizeof(priv), o->timeout_ms);
	if (!ret)
		ret = rk_cm_ud_peer(u->cm, &ah, &r->peer_qpn, &r->peer_qkey);
	if (ret)
		return ret;
	pd = rk_cm_private_data(u->cm, &len);
	r->peer_rdmakit = priv_decode(pd, len, &qpn, &count, &size);
	rk_traffic_apply_ah(&o->traffic, &ah);
	u->ah = ibv_create_ah(u->pd, &ah);
	if (!u->ah) {
		ret = errno ? -errno : -EINVAL;
		rk_error("address handle to %s from its SIDR reply: %m", r->peer);
		return ret;
	}
	return 0;
}

/* Drop what a failed connect_cm_once() set up, for the next try. */
static int client_reset(void *arg)
{
	struct ud *u = arg;

	ud_free_verbs(u);
	rk_cm_destroy(u->cm); /* after everything made on its device */
	u->cm = NULL;
	u->sel.dev = NULL;
	u->res->has_qp = false;
	return 0;
}

/* RDMA CM: a server that is still starting answers the SIDR request with
 * "no listener" (ECONNREFUSED); try again until the timeout, as TCP does. */
static int connect_cm(struct ud *u)
{
	int ret, tries;

	ret = rk_cm_connect_retry(u->o->timeout_ms, connect_cm_once, client_reset, u, &tries);
	if (ret == -ECONNREFUSED)
		rk_error("connect to %s port %u with RDMA CM (RDMA_PS_UDP): nothing listens "
			 "there; gave up after %d tr%s in %d ms (is 'rdmakit ud --server --cm' or "
			 "udaddy running?)",
			 u->o->host, u->port, tries, tries > 1 ? "ies" : "y", u->o->timeout_ms);
	return ret;
}

/* TCP: refuse an oversized message before waiting for a server. */
static int precheck_size(struct ud *u)
{
	const struct rk_port_info *pi;
	struct rk_device *dev;
	int ret;

	ret = rk_device_open(u->o->device, &dev);
	if (ret)
		return ret;
	u->sel.dev = dev;
	u->sel.port_num = u->o->port_num ? u->o->port_num : 1;
	pi = rk_device_port(dev, u->sel.port_num);
	ret = pi ? ud_check_size(u) : 0; /* no such port: said when it is opened */
	u->sel.dev = NULL;
	rk_device_close(dev);
	return ret;
}

/* The wait's end: timeout_ms after the last answer (or the start). */
static bool client_stalled(struct ud *u, uint64_t *seen, double *deadline)
{
	if (u->res->received != *seen) {
		*seen = u->res->received;
		*deadline = now_us() + u->o->timeout_ms * 1e3;
	}
	return now_us() > *deadline;
}

/* udaddy's server answers only once it has every datagram (it posted a
 * receive for each): all of them first, then the answers. An rdmakit
 * server echoes each as it comes: at most UD_CLIENT_WINDOW unanswered.
 * Our receives are posted already. Every wait is bounded by timeout_ms
 * from the last answer. */
static int client_exchange(struct ud *u)
{
	const struct rk_ud_opts *o = u->o;
	struct rk_ud_result *r = u->res;
	double deadline = now_us() + o->timeout_ms * 1e3;
	uint64_t seen = 0;
	uint8_t data[RK_UD_MAX_SIZE];
	int ret;

	while (r->sent < o->count) {
		if (r->peer_rdmakit && r->sent - r->received >= UD_CLIENT_WINDOW) {
			ret = ud_poll(u, 100, client_recv);
		} else {
			rk_pattern_fill(data, o->size, ud_seed(u->qp->qp->qp_num, r->sent));
			ret = ud_send(u, data, u->ah, r->peer_qpn, r->peer_qkey);
			if (ret == -EAGAIN)
				ret = ud_poll(u, 100, client_recv);
			else if (!ret)
				r->sent++;
		}
		if (ret && ret != -ETIMEDOUT)
			return ret;
		if (client_stalled(u, &seen, &deadline)) {
			rk_error("sent %" PRIu64 " of %u datagrams; nothing moved for %d ms",
				 r->sent, o->count, o->timeout_ms);
			return -ETIMEDOUT;
		}
	}
	while (r->received < o->count || u->sends_out) {
		ret = ud_poll(u, 100, client_recv);
		if (ret && ret != -ETIMEDOUT)
			return ret;
		if (client_stalled(u, &seen, &deadline)) {
			rk_error("%" PRIu64 " of %u answers came, then none for %d ms (datagrams "
				 "lost, or the server expects another count: udaddy needs the same "
				 "-C)", r->received, o->count, o->timeout_ms);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

static int run_client(struct ud *u)
{
	const struct rk_ud_opts *o = u->o;
	struct rk_ud_event ev = {.kind = RK_UD_READY};
	double start;
	int ret;

	ret = o->cm ? connect_cm(u) : precheck_size(u);
	if (!ret && !o->cm)
		ret = connect_tcp(u);
	if (ret)
		return ret;
	emit(u, &ev);
	start = now_us();
	ret = client_exchange(u);
	if (ret)
		return ret;
	u->res->elapsed_us = now_us() - start;
	u->res->checked = u->res->peer_rdmakit;
	return 0;
}

static int check_opts(const struct rk_ud_opts *o)
{
	const char *bad = NULL;

	if (!o->server && !o->host)
		bad = "a client needs the server's address";
	else if (o->size < 1 || o->size > RK_UD_MAX_SIZE)
		bad = "the size is not 1..4096";
	else if (o->count < 1)
		bad = "the count is 0";
	else if (o->server && (o->clients < 1 || o->clients > RK_UD_MAX_CLIENTS))
		bad = "the number of clients is not 1..64";
	else if (o->timeout_ms < 1)
		bad = "the timeout is not positive";
	else if (o->srq && !o->server)
		bad = "--srq is for the server (its QP receives from the SRQ)";
	if (bad) {
		rk_error("UD: %s", bad);
		return -EINVAL;
	}
	return 0;
}

int rk_ud_run(const struct rk_ud_opts *opts, struct rk_ud_result *result)
{
	struct ud u = {.o = opts, .res = result, .listen_fd = -1};
	int ret;

	memset(result, 0, sizeof(*result));
	ret = check_opts(opts);
	if (ret)
		return ret;
	if (opts->xrc)
		return rk_srq_xrc_refuse("ud", opts->device);
	/* iWARP (siw creates only RC QPs): refused before listening or connecting;
	 * without RDMA CM, the port and a GID checked too. */
	ret = opts->cm ? rk_device_name_check_no_cm(opts->device, "UD", NULL) :
			 rk_port_name_check(opts->device, opts->port_num, opts->gid_index, "UD", NULL);
	if (ret)
		return ret;
	u.port = opts->port ? opts->port : opts->cm ? RK_UD_CM_PORT : RK_DEFAULT_PORT;
	ret = opts->server ? run_server(&u) : run_client(&u);
	rk_run_counters_stop(&result->counters);
	if (u.srq)
		rk_srq_get_stats(u.srq, &result->srq_stats);
	ud_free(&u);
	return ret;
}
