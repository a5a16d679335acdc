/* rdmakit ud: UD datagrams. One server QP serves several clients: each
 * client SENDs its datagrams (with immediate data: its QPN, as udaddy does)
 * to the server's QP through an address handle, the server answers each
 * with the same bytes through an address handle back to the sender. The
 * clients find the server by the TCP exchange or by RDMA CM in RDMA_PS_UDP
 * (SIDR), which is udaddy's protocol: rdmakit ud and udaddy work with each
 * other in either role. A UD datagram is one packet: a message larger than
 * the path MTU is refused before anything is sent. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define UD_OP 0x55444750u          /* "UDGP": the TCP client's request code */
#define UD_MARK "RDKT-UD1"          /* CM private data of rdmakit's ud */
#define UD_MARK_LEN 8
#define UD_PRIV_LEN (UD_MARK_LEN + 12) /* mark, then QPN, count, size (big-endian) */
#define UD_GRH 40
#define UD_MAX_CLIENTS 64
#define UD_SEND_SLOTS 32
#define UD_RECV_SLOTS 256
#define UD_DEFAULT_CM_PORT 7174    /* udaddy's */
#define UD_RETRY_MS 200

struct ud_opts {
	struct cli_dev_opts dev;
	bool server;
	uint64_t port;
	bool cm;
	uint64_t size;
	uint64_t count;
	uint64_t clients;
	bool events;
	bool verbose;
	uint64_t timeout;
	uint64_t wait;
	bool json;
};

/* One client as the server knows it. */
struct ud_client {
	char addr[80];
	bool rdmakit;      /* announced itself: its datagrams carry rdmakit's pattern */
	uint32_t qpn;      /* 0 until known (udaddy announces nothing) */
	uint32_t qkey;
	uint64_t count;
	uint64_t received, echoed;
	struct ibv_ah *ah;
	struct rk_cm *cm;  /* CM: kept until the end, as udaddy does */
	struct rk_ctl *ctl;
};

struct ud {
	const struct ud_opts *o;
	const char *who;
	const char *host;
	int timeout_ms;
	uint32_t size;
	struct rk_device *dev;   /* the server's own; the CM client's is cm->dev */
	bool own_dev;
	uint8_t port_num;
	bool has_gid;
	struct rk_gid_choice gid;
	struct ibv_pd *pd;
	struct rk_cq *cq;
	struct rk_qp *qp;
	struct rk_mr *rbuf;      /* receive slots of size + 40 */
	struct rk_mr *sbuf;      /* send slots of size */
	int nrecv, nsend;
	bool send_busy[UD_SEND_SLOTS];
	int sends_out;
	/* server */
	struct rk_cm *listener;
	int listen_fd;
	struct ud_client clients[UD_MAX_CLIENTS];
	int nclients;
	/* client */
	struct rk_cm *cm;
	struct rk_ctl *ctl;
	struct ibv_ah *ah;
	uint32_t peer_qpn, peer_qkey;
	bool peer_rdmakit;
	char peer[80];
	uint64_t sent, received;
	bool checked;
	double elapsed_us;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The payload of datagram i from the client with QP qpn; echoed unchanged. */
static uint32_t ud_seed(uint32_t qpn, uint64_t i)
{
	return qpn * 2654435761u ^ (uint32_t)(i + 1) * 40503u;
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* ---- QP and buffers ---- */

static int ud_port_mtu(const struct ud *u)
{
	const struct rk_port_info *pi = rk_device_port(u->dev, u->port_num);

	return pi ? rk_mtu_bytes(pi->active_mtu) : 0;
}

/* Messages above the path MTU: one datagram is one packet. */
static int ud_check_size(const struct ud *u)
{
	int mtu = ud_port_mtu(u);

	if ((int)u->size > mtu) {
		rk_error("a UD message of %u bytes is larger than the path MTU of %s port %u (%d "
			 "bytes): a datagram is one packet and cannot be split; use -s %d or less",
			 u->size, u->dev->info.name, u->port_num, mtu, mtu);
		return -EMSGSIZE;
	}
	return 0;
}

static int post_recv_slot(struct ud *u, int slot)
{
	struct ibv_sge sg = rk_sge(u->rbuf, (size_t)slot * (u->size + UD_GRH), u->size + UD_GRH);

	return rk_post_recv(u->qp, 1000 + (uint64_t)slot, &sg, 1);
}

/* PD, CQ, a UD QP in RTS with qkey, and every receive slot posted. */
static int ud_setup(struct ud *u, uint32_t qkey, int nrecv)
{
	struct rk_qp_init_attr qa = {.transport = RK_UD, .port_num = u->port_num,
				     .max_send_wr = UD_SEND_SLOTS, .qkey = qkey,
				     .gid = u->has_gid ? &u->gid : NULL};
	int ret;

	u->nrecv = nrecv < UD_RECV_SLOTS ? nrecv : UD_RECV_SLOTS;
	u->nsend = UD_SEND_SLOTS;
	qa.max_recv_wr = (uint32_t)u->nrecv;
	ret = rk_pd_alloc(u->dev, &u->pd);
	if (!ret)
		ret = rk_cq_create(u->dev, u->nrecv + u->nsend + 8, u->o->events, &u->cq);
	if (!ret)
		ret = rk_qp_create(u->pd, u->dev, u->cq, u->cq, &qa, &u->qp);
	if (!ret)
		ret = rk_mr_alloc(u->pd, (size_t)u->nrecv * (u->size + UD_GRH),
				  IBV_ACCESS_LOCAL_WRITE, &u->rbuf);
	if (!ret)
		ret = rk_mr_alloc(u->pd, (size_t)u->nsend * u->size, 0, &u->sbuf);
	if (!ret)
		ret = rk_qp_to_init(u->qp, 0);
	if (!ret)
		ret = rk_qp_to_rtr(u->qp, NULL, NULL);
	if (!ret)
		ret = rk_qp_to_rts(u->qp);
	for (int i = 0; !ret && i < u->nrecv; i++)
		ret = post_recv_slot(u, i);
	return ret;
}

/* SEND with immediate (our QPN, as udaddy does) from a free slot. */
static int ud_send(struct ud *u, const void *data, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct ibv_sge sg;
	struct rk_wr wr = {.op = RK_OP_SEND_IMM, .sg = &sg, .nsge = 1, .flags = IBV_SEND_SIGNALED,
			   .imm = u->qp->qp->qp_num, .ah = ah, .remote_qpn = qpn,
			   .remote_qkey = qkey};
	int slot = 0, ret;

	while (slot < u->nsend && u->send_busy[slot])
		slot++;
	if (slot == u->nsend)
		return -EAGAIN;
	memcpy((uint8_t *)u->sbuf->buf + (size_t)slot * u->size, data, u->size);
	sg = rk_sge(u->sbuf, (size_t)slot * u->size, u->size);
	wr.wr_id = (uint64_t)slot + 1;
	ret = rk_post(u->qp, &wr);
	if (ret)
		return ret;
	u->send_busy[slot] = true;
	u->sends_out++;
	return 0;
}

/* Poll once (up to timeout_ms); send completions free their slot, receive
 * completions go to on_recv. */
static int ud_poll(struct ud *u, int timeout_ms,
		   int (*on_recv)(struct ud *u, const struct ibv_wc *wc, const uint8_t *slot))
{
	struct ibv_wc wc[16];
	int got, ret;

	ret = rk_cq_poll(u->cq, wc, 16, timeout_ms, &got);
	if (ret)
		return ret;
	for (int i = 0; i < got; i++) {
		ret = rk_wc_check(&wc[i], wc[i].wr_id >= 1000 ? "UD RECV" : "UD SEND");
		if (ret)
			return ret;
		if (wc[i].wr_id < 1000) {
			u->send_busy[wc[i].wr_id - 1] = false;
			u->sends_out--;
			continue;
		}
		int slot = (int)(wc[i].wr_id - 1000);
		const uint8_t *p = (const uint8_t *)u->rbuf->buf + (size_t)slot * (u->size + UD_GRH);

		ret = on_recv(u, &wc[i], p);
		if (!ret)
			ret = post_recv_slot(u, slot);
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
	for (int i = 0; i < u->nclients; i++) {
		if (u->clients[i].ah)
			ibv_destroy_ah(u->clients[i].ah);
		rk_ctl_close(u->clients[i].ctl);
		rk_cm_destroy(u->clients[i].cm);
	}
	ud_free_verbs(u);
	if (u->own_dev)
		rk_device_close(u->dev);
	rk_ctl_close(u->ctl);
	rk_cm_destroy(u->cm);
	rk_cm_destroy(u->listener);
	if (u->listen_fd >= 0)
		close(u->listen_fd);
}

/* ---- server ---- */

static struct ud_client *find_client(struct ud *u, uint32_t qpn)
{
	for (int i = 0; i < u->nclients; i++)
		if (u->clients[i].qpn == qpn)
			return &u->clients[i];
	/* udaddy announces no QPN: its first datagram binds it. */
	for (int i = 0; i < u->nclients; i++)
		if (!u->clients[i].qpn) {
			u->clients[i].qpn = qpn;
			return &u->clients[i];
		}
	return NULL;
}

static int server_recv(struct ud *u, const struct ibv_wc *wc, const uint8_t *slot)
{
	struct ud_client *c = find_client(u, wc->src_qp);
	const uint8_t *data = slot + UD_GRH;
	uint8_t want[4096];
	ssize_t bad;
	int ret;

	if (!c) {
		rk_warn("a datagram from QP 0x%x, which no client announced: dropped", wc->src_qp);
		return 0;
	}
	if (wc->byte_len != u->size + UD_GRH) {
		rk_error("%s (QP 0x%x) sent %u bytes; this server takes %u-byte datagrams (both "
			 "sides need the same -s)",
			 c->addr, c->qpn, wc->byte_len - UD_GRH, u->size);
		return -EMSGSIZE;
	}
	if (c->received >= c->count) {
		rk_error("%s (QP 0x%x) sent more than the %" PRIu64 " datagrams it announced",
			 c->addr, c->qpn, c->count);
		return -EPROTO;
	}
	if (c->rdmakit) {
		rk_pattern_fill(want, u->size, ud_seed(c->qpn, c->received));
		bad = rk_buf_diff(data, want, u->size);
		if (bad >= 0) {
			rk_error("%s datagram %" PRIu64 ": byte %zd is 0x%02x, the client put 0x%02x "
				 "there",
				 c->addr, c->received + 1, bad, data[bad], want[bad]);
			return -EIO;
		}
	}
	if (!c->ah) {
		/* Answer where it came from: the GRH in front of the data. */
		c->ah = ibv_create_ah_from_wc(u->pd, (struct ibv_wc *)wc,
					      (struct ibv_grh *)slot, u->port_num);
		if (!c->ah) {
			ret = errno ? -errno : -EINVAL;
			rk_error("address handle back to %s (QP 0x%x): %m", c->addr, c->qpn);
			return ret;
		}
	}
	c->received++;
	while ((ret = ud_send(u, data, c->ah, c->qpn, c->qkey)) == -EAGAIN) {
		struct ibv_wc w;
		int got;

		/* All send slots busy: wait for one. Receives stay queued. */
		ret = rk_cq_poll(u->cq, &w, 1, u->timeout_ms, &got);
		if (ret)
			return ret;
		ret = rk_wc_check(&w, "UD SEND");
		if (ret)
			return ret;
		if (w.wr_id >= 1000) {
			rk_error("a datagram arrived while every send slot was busy");
			return -EPROTO;
		}
		u->send_busy[w.wr_id - 1] = false;
		u->sends_out--;
	}
	if (ret)
		return ret;
	c->echoed++;
	if (u->o->verbose && !u->o->json)
		printf("server: datagram %" PRIu64 "/%" PRIu64 " from %s (QP 0x%x, imm 0x%x), "
		       "%u bytes%s, echoed\n",
		       c->received, c->count, c->addr, c->qpn,
		       (wc->wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc->imm_data) : 0, u->size,
		       c->rdmakit ? ", checked" : "");
	return 0;
}

/* TCP: the client's HELLO carries its QP; ours goes back. */
static int accept_tcp(struct ud *u)
{
	struct ud_client *c = &u->clients[u->nclients];
	struct rk_endpoint local;
	struct rk_msg msg;
	char why[256];
	int ret;

	ret = rk_tcp_accept(u->listen_fd, 1000, &c->ctl);
	if (ret)
		return ret;
	snprintf(c->addr, sizeof(c->addr), "%s", c->ctl->peer);
	ret = rk_ctl_expect(c->ctl, RK_MSG_HELLO, u->timeout_ms, &msg);
	if (ret)
		return ret;
	rk_qp_local_endpoint(u->qp, &local);
	ret = rk_endpoint_check(&local, &msg.u.hello.ep, why, sizeof(why));
	if (!ret && (msg.u.hello.buf.op != UD_OP || msg.u.hello.buf.size != u->size ||
		     !msg.u.hello.buf.len)) {
		snprintf(why, sizeof(why), "the client sends %u-byte datagrams (op 0x%x); this "
					   "server takes %u-byte ones", msg.u.hello.buf.size,
			 msg.u.hello.buf.op, u->size);
		ret = -EMSGSIZE;
	}
	if (ret) {
		rk_error("refusing %s: %s", c->addr, why);
		rk_ctl_send_error(c->ctl, ret, "%s", why);
		return ret;
	}
	c->rdmakit = true;
	c->qpn = msg.u.hello.ep.qpn;
	c->qkey = msg.u.hello.ep.qkey;
	c->count = msg.u.hello.buf.len;
	ret = rk_ah_create(u->qp, &msg.u.hello.ep, &c->ah);
	if (ret)
		return ret;
	memset(&msg, 0, sizeof(msg));
	msg.type = RK_MSG_HELLO;
	msg.u.hello.ep = local;
	msg.u.hello.buf.op = UD_OP;
	msg.u.hello.buf.size = u->size;
	msg.u.hello.buf.len = c->count;
	ret = rk_ctl_send(c->ctl, &msg);
	if (ret)
		return ret;
	u->nclients++;
	return 0;
}

/* CM: a SIDR request; rdmakit's carries its QPN and count. */
static int accept_cm(struct ud *u)
{
	struct ud_client *c = &u->clients[u->nclients];
	uint8_t reply[UD_PRIV_LEN];
	const uint8_t *pd;
	size_t len;
	int ret;

	ret = rk_cm_get_request_any(u->listener, 1000, &c->cm);
	if (ret)
		return ret;
	snprintf(c->addr, sizeof(c->addr), "%s", c->cm->peer_addr);
	if (strcmp(c->cm->dev->info.name, u->dev->info.name)) {
		rk_error("refusing %s: it came in on %s; this server's QP is on %s (use -d %s)",
			 c->addr, c->cm->dev->info.name, u->dev->info.name, c->cm->dev->info.name);
		rk_cm_reject(c->cm, "wrong device");
		rk_cm_destroy(c->cm);
		c->cm = NULL;
		return -ENODEV;
	}
	pd = rk_cm_private_data(c->cm, &len);
	c->qkey = RDMA_UDP_QKEY;
	c->count = u->o->count;
	if (len >= UD_PRIV_LEN && !memcmp(pd, UD_MARK, UD_MARK_LEN)) {
		c->rdmakit = true;
		c->qpn = get32(pd + UD_MARK_LEN);
		c->count = get32(pd + UD_MARK_LEN + 4);
		if (get32(pd + UD_MARK_LEN + 8) != u->size || !c->count) {
			rk_error("refusing %s: it sends %u-byte datagrams; this server takes %u-byte "
				 "ones", c->addr, get32(pd + UD_MARK_LEN + 8), u->size);
			rk_cm_reject(c->cm, "datagram size differs");
			return -EMSGSIZE;
		}
	}
	memcpy(reply, UD_MARK, UD_MARK_LEN);
	put32(reply + UD_MARK_LEN, u->qp->qp->qp_num);
	put32(reply + UD_MARK_LEN + 4, (uint32_t)c->count);
	put32(reply + UD_MARK_LEN + 8, u->size);
	ret = rk_cm_accept_raw(c->cm, u->qp, reply, sizeof(reply), u->timeout_ms);
	if (ret)
		return ret;
	u->nclients++;
	return 0;
}

static bool clients_done(const struct ud *u)
{
	if (u->nclients < (int)u->o->clients || u->sends_out)
		return false;
	for (int i = 0; i < u->nclients; i++)
		if (u->clients[i].echoed < u->clients[i].count)
			return false;
	return true;
}

static int run_server(struct ud *u)
{
	const struct ud_opts *o = u->o;
	int64_t per = (int64_t)o->count;
	double idle_since = now_us(), start = now_us();
	struct cli_dev d;
	int ret, nrecv;

	ret = cli_dev_open(&o->dev, NULL, &d);
	if (ret)
		return ret;
	u->dev = d.dev;
	u->own_dev = true;
	u->port_num = d.port;
	u->has_gid = d.has_gid;
	u->gid = d.gid;
	ret = ud_check_size(u);
	if (ret)
		return ret;
	nrecv = (int)(per * (int64_t)o->clients);
	ret = ud_setup(u, o->cm ? RDMA_UDP_QKEY : RK_DEFAULT_QKEY, nrecv < 16 ? 16 : nrecv);
	if (ret)
		return ret;
	if (o->cm)
		ret = rk_cm_listen_ps(NULL, (uint16_t)o->port, RDMA_PS_UDP, &u->listener);
	else
		ret = rk_tcp_listen(NULL, (uint16_t)o->port, &u->listen_fd);
	if (ret)
		return ret;
	if (!o->json)
		printf("server: UD QP 0x%x on %s port %u, Q_Key 0x%x; waiting for %" PRIu64
		       " client%s on port %" PRIu64 " (%s), %u-byte datagrams\n",
		       u->qp->qp->qp_num, u->dev->info.name, u->port_num, u->qp->qkey, o->clients,
		       o->clients > 1 ? "s" : "", o->port,
		       o->cm ? "RDMA CM, RDMA_PS_UDP" : "TCP exchange", u->size);
	fflush(stdout);
	while (!clients_done(u)) {
		double limit = u->nclients ? u->timeout_ms * 1e3 :
			       o->wait ? (double)o->wait * 1e6 : -1;

		if (u->nclients < (int)o->clients) {
			struct pollfd p = {.fd = o->cm ? u->listener->channel->fd : u->listen_fd,
					   .events = POLLIN};

			if (poll(&p, 1, 0) > 0) {
				ret = o->cm ? accept_cm(u) : accept_tcp(u);
				if (ret)
					return ret;
				if (!o->json)
					printf("server: client %d: %s%s\n", u->nclients,
					       u->clients[u->nclients - 1].addr,
					       u->clients[u->nclients - 1].rdmakit ?
						       " (rdmakit: its data is checked)" :
						       " (not rdmakit, e.g. udaddy: its data is not a "
						       "pattern that can be checked)");
				fflush(stdout);
				idle_since = now_us();
			}
		}
		ret = ud_poll(u, 20, server_recv);
		if (!ret) {
			idle_since = now_us();
			continue;
		}
		if (ret != -ETIMEDOUT)
			return ret;
		if (limit >= 0 && now_us() - idle_since > limit) {
			rk_error("%s for %.0f s", u->nclients < (int)o->clients ?
				 "no further client came" : "nothing arrived", limit / 1e6);
			for (int i = 0; i < u->nclients; i++)
				rk_error("  %s: %" PRIu64 " of %" PRIu64 " datagrams", u->clients[i].addr,
					 u->clients[i].received, u->clients[i].count);
			return -ETIMEDOUT;
		}
	}
	u->elapsed_us = now_us() - start;
	u->checked = true;
	for (int i = 0; i < u->nclients; i++) {
		u->received += u->clients[i].received;
		u->checked &= u->clients[i].rdmakit;
	}
	u->sent = u->received;
	return 0;
}

/* ---- client ---- */

static int client_recv(struct ud *u, const struct ibv_wc *wc, const uint8_t *slot)
{
	const uint8_t *data = slot + UD_GRH;
	uint8_t want[4096];
	ssize_t bad;

	if (wc->src_qp != u->peer_qpn) {
		rk_warn("a datagram from QP 0x%x, not the server's 0x%x: dropped", wc->src_qp,
			u->peer_qpn);
		return 0;
	}
	if (wc->byte_len != u->size + UD_GRH) {
		rk_error("the server answered with %u bytes, %u were sent", wc->byte_len - UD_GRH,
			 u->size);
		return -EMSGSIZE;
	}
	if (u->peer_rdmakit) {
		rk_pattern_fill(want, u->size, ud_seed(u->qp->qp->qp_num, u->received));
		bad = rk_buf_diff(data, want, u->size);
		if (bad >= 0) {
			rk_error("echo %" PRIu64 ": byte %zd is 0x%02x, 0x%02x was sent",
				 u->received + 1, bad, data[bad], want[bad]);
			return -EIO;
		}
	}
	u->received++;
	if (u->o->verbose && !u->o->json)
		printf("client: echo %" PRIu64 "/%" PRIu64 " from QP 0x%x, %u bytes%s\n",
		       u->received, u->o->count, wc->src_qp, u->size,
		       u->peer_rdmakit ? ", checked" : "");
	return 0;
}

static int connect_tcp(struct ud *u)
{
	const struct ud_opts *o = u->o;
	struct cli_dev d;
	struct rk_msg msg = {.type = RK_MSG_HELLO};
	struct rk_endpoint local;
	char why[256];
	int ret;

	ret = rk_tcp_connect(u->host, (uint16_t)o->port, u->timeout_ms, &u->ctl);
	if (ret)
		return ret;
	snprintf(u->peer, sizeof(u->peer), "%s", u->ctl->peer);
	ret = cli_dev_open(&o->dev, u->ctl->local_ip, &d);
	if (ret)
		return ret;
	u->dev = d.dev;
	u->own_dev = true;
	u->port_num = d.port;
	u->has_gid = d.has_gid;
	u->gid = d.gid;
	ret = ud_check_size(u);
	if (!ret)
		ret = ud_setup(u, RK_DEFAULT_QKEY, (int)o->count);
	if (ret)
		return ret;
	rk_qp_local_endpoint(u->qp, &local);
	msg.u.hello.ep = local;
	msg.u.hello.buf.op = UD_OP;
	msg.u.hello.buf.size = u->size;
	msg.u.hello.buf.len = o->count;
	ret = rk_ctl_send(u->ctl, &msg);
	if (!ret)
		ret = rk_ctl_expect(u->ctl, RK_MSG_HELLO, u->timeout_ms, &msg);
	if (ret)
		return ret;
	ret = rk_endpoint_check(&local, &msg.u.hello.ep, why, sizeof(why));
	if (ret) {
		rk_error("cannot talk to %s: %s", u->peer, why);
		return ret;
	}
	u->peer_qpn = msg.u.hello.ep.qpn;
	u->peer_qkey = msg.u.hello.ep.qkey;
	u->peer_rdmakit = true;
	return rk_ah_create(u->qp, &msg.u.hello.ep, &u->ah);
}

static int connect_cm_once(struct ud *u)
{
	const struct ud_opts *o = u->o;
	uint8_t priv[UD_PRIV_LEN];
	struct ibv_ah_attr ah;
	const uint8_t *pd;
	size_t len;
	int ret;

	ret = rk_cm_resolve_ps(u->host, (uint16_t)o->port, RDMA_PS_UDP, u->timeout_ms, &u->cm);
	if (ret)
		return ret;
	snprintf(u->peer, sizeof(u->peer), "%s", u->cm->peer_addr);
	u->dev = u->cm->dev;
	u->port_num = u->cm->port_num;
	u->has_gid = rk_port_is_roce(u->dev, u->port_num);
	u->gid = u->cm->gid;
	ret = ud_check_size(u);
	if (!ret)
		ret = ud_setup(u, RDMA_UDP_QKEY, (int)o->count);
	if (ret)
		return ret;
	memcpy(priv, UD_MARK, UD_MARK_LEN);
	put32(priv + UD_MARK_LEN, u->qp->qp->qp_num);
	put32(priv + UD_MARK_LEN + 4, (uint32_t)o->count);
	put32(priv + UD_MARK_LEN + 8, u->size);
	ret = rk_cm_connect_raw(u->cm, u->qp, priv, sizeof(priv), u->timeout_ms);
	if (!ret)
		ret = rk_cm_ud_peer(u->cm, &ah, &u->peer_qpn, &u->peer_qkey);
	if (ret)
		return ret;
	pd = rk_cm_private_data(u->cm, &len);
	u->peer_rdmakit = len >= UD_PRIV_LEN && !memcmp(pd, UD_MARK, UD_MARK_LEN);
	u->ah = ibv_create_ah(u->pd, &ah);
	if (!u->ah) {
		ret = errno ? -errno : -EINVAL;
		rk_error("address handle to %s from its SIDR reply: %m", u->peer);
		return ret;
	}
	return 0;
}

/* Drop what a failed connect_cm_once() set up, for the next try. */
static void client_reset(struct ud *u)
{
	ud_free_verbs(u);
	rk_cm_destroy(u->cm); /* after everything made on its device */
	u->cm = NULL;
	u->dev = NULL;
}

/* RDMA CM: a server that is still starting answers the SIDR request with
 * "no listener" (ECONNREFUSED); try again until the timeout, as TCP does. */
static int connect_cm(struct ud *u)
{
	double deadline = now_us() + u->timeout_ms * 1e3;
	int ret, tries = 1;

	for (;;) {
		ret = connect_cm_once(u);
		if (ret != -ECONNREFUSED || now_us() + UD_RETRY_MS * 1e3 > deadline)
			break;
		client_reset(u);
		usleep(UD_RETRY_MS * 1000);
		tries++;
	}
	if (ret == -ECONNREFUSED)
		rk_error("connect to %s port %" PRIu64 " with RDMA CM (RDMA_PS_UDP): nothing "
			 "listens there; gave up after %d tr%s in %d ms (is 'rdmakit ud --server "
			 "--cm' or udaddy running?)",
			 u->host, u->o->port, tries, tries > 1 ? "ies" : "y", u->timeout_ms);
	return ret;
}

/* TCP: refuse an oversized message before waiting for a server. */
static int precheck_size(struct ud *u)
{
	const struct rk_port_info *pi;
	struct rk_device *dev;
	int ret;

	ret = rk_device_open(u->o->dev.device, &dev);
	if (ret)
		return ret;
	pi = rk_device_port(dev, (uint8_t)u->o->dev.port);
	u->dev = dev;
	u->port_num = (uint8_t)u->o->dev.port;
	ret = pi ? ud_check_size(u) : 0; /* no such port: said when it is opened */
	u->dev = NULL;
	rk_device_close(dev);
	return ret;
}

static int run_client(struct ud *u)
{
	const struct ud_opts *o = u->o;
	uint8_t data[4096];
	double start, deadline;
	int ret;

	ret = o->cm ? 0 : precheck_size(u);
	if (ret)
		return ret;
	ret = o->cm ? connect_cm(u) : connect_tcp(u);
	if (ret)
		return ret;
	if (!o->json)
		printf("client: UD QP 0x%x on %s port %u -> server %s QP 0x%x, Q_Key 0x%x (%s); "
		       "%" PRIu64 " datagrams of %u bytes%s\n",
		       u->qp->qp->qp_num, u->dev->info.name, u->port_num, u->peer, u->peer_qpn,
		       u->peer_qkey, o->cm ? "RDMA CM, RDMA_PS_UDP" : "TCP exchange", o->count,
		       u->size, u->peer_rdmakit ? ", echoes checked" :
		       " (the server is not rdmakit, e.g. udaddy: its answers are not checked)");
	fflush(stdout);
	/* All datagrams first, then the answers: udaddy's server answers only
	 * once it has them all. Our receives are posted already. */
	start = now_us();
	deadline = start + u->timeout_ms * 1e3;
	while (u->sent < o->count) {
		rk_pattern_fill(data, u->size, ud_seed(u->qp->qp->qp_num, u->sent));
		ret = ud_send(u, data, u->ah, u->peer_qpn, u->peer_qkey);
		if (ret == -EAGAIN)
			ret = ud_poll(u, 100, client_recv);
		else if (!ret)
			u->sent++;
		if (ret && ret != -ETIMEDOUT)
			return ret;
		if (now_us() > deadline) {
			rk_error("sent %" PRIu64 " of %" PRIu64 " datagrams in %d ms", u->sent,
				 o->count, u->timeout_ms);
			return -ETIMEDOUT;
		}
	}
	while (u->received < o->count || u->sends_out) {
		ret = ud_poll(u, 100, client_recv);
		if (ret && ret != -ETIMEDOUT)
			return ret;
		if (now_us() > deadline) {
			rk_error("%" PRIu64 " of %" PRIu64 " answers came within %d ms (datagrams "
				 "lost, or the server expects another count: udaddy needs the same "
				 "-C)",
				 u->received, o->count, u->timeout_ms);
			return -ETIMEDOUT;
		}
	}
	u->elapsed_us = now_us() - start;
	u->checked = u->peer_rdmakit;
	return 0;
}

/* ---- main ---- */

static json_object *report_json(const struct ud *u, int result)
{
	json_object *doc = json_object_new_object();

	json_object_object_add(doc, "role", json_object_new_string(u->who));
	json_object_object_add(doc, "connection", json_object_new_string(u->o->cm ? "cm" : "tcp"));
	json_object_object_add(doc, "size", json_object_new_int64(u->size));
	json_object_object_add(doc, "count", json_object_new_int64((int64_t)u->o->count));
	if (u->qp) {
		json_object_object_add(doc, "device", json_object_new_string(u->dev->info.name));
		json_object_object_add(doc, "qpn", json_object_new_int64(u->qp->qp->qp_num));
		json_object_object_add(doc, "qkey", json_object_new_int64(u->qp->qkey));
	}
	if (u->o->server) {
		json_object *cl = json_object_new_array();

		for (int i = 0; i < u->nclients; i++) {
			const struct ud_client *c = &u->clients[i];
			json_object *j = json_object_new_object();

			json_object_object_add(j, "addr", json_object_new_string(c->addr));
			json_object_object_add(j, "qpn", json_object_new_int64(c->qpn));
			json_object_object_add(j, "rdmakit", json_object_new_boolean(c->rdmakit));
			json_object_object_add(j, "received", json_object_new_int64((int64_t)c->received));
			json_object_object_add(j, "echoed", json_object_new_int64((int64_t)c->echoed));
			json_object_array_add(cl, j);
		}
		json_object_object_add(doc, "clients", cl);
	} else {
		json_object_object_add(doc, "peer", json_object_new_string(u->peer));
		json_object_object_add(doc, "peer_qpn", json_object_new_int64(u->peer_qpn));
		json_object_object_add(doc, "peer_qkey", json_object_new_int64(u->peer_qkey));
		json_object_object_add(doc, "sent", json_object_new_int64((int64_t)u->sent));
	}
	json_object_object_add(doc, "received", json_object_new_int64((int64_t)u->received));
	json_object_object_add(doc, "validated", json_object_new_boolean(!result && u->checked));
	json_object_object_add(doc, "elapsed_us", json_object_new_double(u->elapsed_us));
	json_object_object_add(doc, "result", json_object_new_string(result ? "failed" : "ok"));
	if (result)
		json_object_object_add(doc, "error", json_object_new_string(rk_strerror(result)));
	return doc;
}

static const char usage_text[] = "rdmakit ud --server [options]\n       rdmakit ud HOST [options]";
static const char description[] =
	"UD datagrams: the client SENDs COUNT datagrams (with immediate data: its QPN) to the\n"
	"server's UD QP through an address handle; the server answers each with the same\n"
	"bytes through an address handle back to the sender (receives leave 40 bytes for\n"
	"the GRH). One server QP serves --clients clients. Connection by the TCP exchange\n"
	"or by RDMA CM in RDMA_PS_UDP (--cm), which is udaddy's protocol: rdmakit ud and\n"
	"udaddy (-s HOST -C COUNT -S SIZE) work with each other either way round.\n"
	"A datagram is one packet: a size above the path MTU is refused.";

int cmd_ud(int argc, char **argv)
{
	struct ud_opts o = {.dev = CLI_DEV_OPTS_DEFAULT, .size = 100, .count = 10, .clients = 1,
			    .timeout = 10};
	const struct rk_opt opts[] = {
		{"server", 'S', RK_OPT_FLAG, &o.server, 0, 0, NULL, "be the server"},
		{"port", 'p', RK_OPT_COUNT, &o.port, 1, 65535, "PORT",
		 "TCP port (default 18515), or RDMA CM port with --cm (default 7174, udaddy's)"},
		{"cm", 'c', RK_OPT_FLAG, &o.cm, 0, 0, NULL,
		 "RDMA CM in RDMA_PS_UDP (as udaddy) instead of the TCP exchange"},
		CLI_DEV_OPTS(&o.dev),
		{"size", 's', RK_OPT_SIZE, &o.size, 1, 4096, "BYTES",
		 "bytes per datagram (at most the path MTU)"},
		{"count", 'n', RK_OPT_COUNT, &o.count, 1, 100000, "N",
		 "datagrams per client (a udaddy client's -C)"},
		{"clients", 'C', RK_OPT_COUNT, &o.clients, 1, UD_MAX_CLIENTS, "N",
		 "server: serve N clients, then stop"},
		{"events", 'e', RK_OPT_FLAG, &o.events, 0, 0, NULL,
		 "sleep on a completion channel instead of polling"},
		{"verbose", 'v', RK_OPT_FLAG, &o.verbose, 0, 0, NULL, "print every datagram"},
		{"timeout", 't', RK_OPT_COUNT, &o.timeout, 1, 3600, "SEC",
		 "client: keep trying to connect this long; both: bound on every wait"},
		{"wait", 'w', RK_OPT_COUNT, &o.wait, 0, 86400, "SEC",
		 "server: give up when no client came in SEC seconds (0: wait forever)"},
		{"json", 'j', RK_OPT_FLAG, &o.json, 0, 0, NULL, "print one JSON document"},
		RK_OPT_END,
	};
	struct ud u = {.o = &o, .listen_fd = -1};
	int first, ret;

	ret = cli_parse("ud", usage_text, description, opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	ret = cli_check_role_args("ud", o.server, argc, argv, first);
	if (ret >= 0)
		return ret;
	if (!o.server && o.clients != 1) {
		fprintf(stderr, "rdmakit ud: option --clients is the server's\n");
		return CLI_USAGE;
	}
	if (!o.port)
		o.port = o.cm ? UD_DEFAULT_CM_PORT : RK_DEFAULT_PORT;
	u.who = o.server ? "server" : "client";
	u.host = o.server ? NULL : argv[first];
	u.timeout_ms = (int)o.timeout * 1000;
	u.size = (uint32_t)o.size;
	ret = o.server ? run_server(&u) : run_client(&u);
	if (o.json) {
		cli_json_print(report_json(&u, ret));
	} else if (!ret) {
		printf("%s: %" PRIu64 " datagram%s of %u bytes %s in %.1f ms, %s: OK\n", u.who,
		       u.received, u.received == 1 ? "" : "s", u.size,
		       o.server ? "received and echoed" : "sent and echoed back",
		       u.elapsed_us / 1e3,
		       u.checked ? "every byte checked" :
		       "not checked (a peer that is not rdmakit sends no checkable pattern)");
	} else {
		printf("%s: FAILED (%s)\n", u.who, rk_strerror(ret));
	}
	ud_free(&u);
	return ret ? CLI_FAILED : CLI_OK;
}
