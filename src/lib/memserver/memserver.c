/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The memory server's event loop: one RDMA CM event channel for the listener
 * and every connection, the devices' completion channels for the region
 * SENDs, a stop eventfd and (optionally) a signalfd, under one poll(). Every
 * CM event is copied and acknowledged before it is acted on, so that an id
 * is only ever destroyed with none of its events outstanding. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdmakit/cm.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/status.h>
#include <rdmakit/wire.h>

#include "base/clock.h"
#include "memserver/memserver_int.h"
#include "conn/cm_int.h"

#define MS_BACKLOG 64
#define MS_RD_ATOMIC_MAX 16
#define MS_DEVICE_CHECK_MS 1000 /* how often a device in use is checked for removal */
/* Work request ids of a connection: the region SEND; the receives of the
 * client's request SENDs (MS_WR_HELLO + 0 .. RK_MEM_REQ_SENDS - 1). */
#define MS_WR_REGION 1
#define MS_WR_HELLO 2

/* One CM event, copied out before it is acknowledged. */
struct ms_event {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id;
	/* The client's initiator depth: the IB CM reports a REQ's fields from
	 * the receiver's side, so it arrives as responder_resources. */
	uint8_t peer_initiator_depth;
	uint8_t data_len;
	uint8_t data[256];
};

static const char *peer_str(struct rdma_cm_id *id, char *buf, size_t len)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char ip[INET6_ADDRSTRLEN] = "?";
	const void *a = NULL;

	if (sa->sa_family == AF_INET)
		a = &((struct sockaddr_in *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6)
		a = &((struct sockaddr_in6 *)sa)->sin6_addr;
	if (a)
		inet_ntop(sa->sa_family, a, ip, sizeof(ip));
	snprintf(buf, len, "%s", ip);
	return buf;
}

/* ---- devices ---- */

static struct ms_dev *dev_get(struct rk_memserver *srv, struct ibv_context *ctx)
{
	struct ibv_device_attr attr;
	struct ms_dev *d;

	for (int i = 0; i < srv->ndevs; i++)
		if (srv->devs[i].ctx == ctx)
			return &srv->devs[i];
	if (srv->ndevs == MS_MAX_DEVS)
		return NULL;
	d = &srv->devs[srv->ndevs];
	memset(d, 0, sizeof(*d));
	d->ctx = ctx;
	if (ibv_query_device(ctx, &attr)) {
		rk_error("query device %s: %m", ibv_get_device_name(ctx->device));
		return NULL;
	}
	d->max_qp_rd_atom = attr.max_qp_rd_atom;
	d->pd = ibv_alloc_pd(ctx);
	if (!d->pd) {
		rk_error("allocate a PD on %s: %m", ibv_get_device_name(ctx->device));
		return NULL;
	}
	d->cc = ibv_create_comp_channel(ctx);
	if (!d->cc || fcntl(d->cc->fd, F_SETFL, fcntl(d->cc->fd, F_GETFL) | O_NONBLOCK)) {
		rk_error("create a completion channel on %s: %m",
			 ibv_get_device_name(ctx->device));
		if (d->cc)
			ibv_destroy_comp_channel(d->cc);
		ibv_dealloc_pd(d->pd);
		return NULL;
	}
	srv->ndevs++;
	return d;
}

static void dev_free(struct rk_memserver *srv, struct ms_dev *d)
{
	for (struct ms_session *s = srv->sessions; s; s = s->next)
		if (s->dev == d)
			ms_session_unregister(s);
	ibv_destroy_comp_channel(d->cc);
	ibv_dealloc_pd(d->pd);
	*d = srv->devs[--srv->ndevs];
	/* Sessions pointed at the moved entry: follow it. */
	for (struct ms_session *s = srv->sessions; s; s = s->next)
		if (s->dev == &srv->devs[srv->ndevs])
			s->dev = d;
	for (struct ms_conn *c = srv->conns; c; c = c->next)
		if (c->dev == &srv->devs[srv->ndevs])
			c->dev = d;
}

/* ---- connections ---- */

/* Free a connection whose events are all acknowledged. */
static void conn_free(struct rk_memserver *srv, struct ms_conn *c, const char *why)
{
	uint32_t qpn = c->id->qp ? c->id->qp->qp_num : 0;

	for (struct ms_conn **pp = &srv->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			srv->nconns--;
			break;
		}
	}
	if (why) {
		rk_info("disconnected queue %u of session %016" PRIx64 " from %s: QP 0x%x (%s)",
			c->queue, c->sess->id, c->peer, qpn, why);
		srv->disconnected++;
	}
	if (c->id->qp)
		rdma_destroy_qp(c->id);
	rdma_destroy_id(c->id);
	if (c->msg_mr)
		ibv_dereg_mr(c->msg_mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	ms_session_detach(srv, c->sess, c->queue);
	/* A new session whose region could not be made holds nothing to keep. */
	if (c->fail && c->new_session && !c->sess->nconn)
		ms_session_free(srv, c->sess, true);
	free(c);
}

static int conn_verbs(struct ms_conn *c)
{
	struct ibv_qp_init_attr qa;

	c->cq = ibv_create_cq(c->dev->ctx, 4, c, c->dev->cc, 0);
	if (!c->cq || ibv_req_notify_cq(c->cq, 0)) {
		rk_error("create a CQ for the connection from %s: %m", c->peer);
		return errno ? -errno : -ENOMEM;
	}
	c->msg_mr = ibv_reg_mr(c->dev->pd, &c->msg, sizeof(c->msg), IBV_ACCESS_LOCAL_WRITE);
	if (!c->msg_mr) {
		rk_error("register the region message for %s: %m", c->peer);
		return errno ? -errno : -ENOMEM;
	}
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = 2;
	qa.cap.max_recv_wr = RK_MEM_REQ_SENDS;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->dev->pd, &qa)) {
		rk_error("create the QP for the connection from %s: %m", c->peer);
		return errno ? -errno : -ENOMEM;
	}
	return 0;
}

/* RK_MEM_REQ_SENDS_FIRST: the receives for the client's request SENDs,
 * posted before the accept (memproto.h step 4). */
static int conn_post_hello(struct ms_conn *c)
{
	for (unsigned int i = 0; i < RK_MEM_REQ_SENDS; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)&c->msg.hello[i], .length = sizeof(c->msg.hello[i]),
			.lkey = c->msg_mr->lkey,
		};
		struct ibv_recv_wr wr = {.wr_id = MS_WR_HELLO + i, .sg_list = &sge, .num_sge = 1};
		struct ibv_recv_wr *bad;

		errno = ibv_post_recv(c->id->qp, &wr, &bad);
		if (errno) {
			rk_error("post the receive for the first SEND of %s: %m", c->peer);
			return -errno;
		}
	}
	c->await_hello = true;
	return 0;
}

static int conn_accept(struct ms_conn *c, uint8_t initiator_depth)
{
	struct rdma_conn_param p;
	int rd = c->dev->max_qp_rd_atom;

	if (rd > MS_RD_ATOMIC_MAX)
		rd = MS_RD_ATOMIC_MAX;
	memset(&p, 0, sizeof(p));
	p.responder_resources = (uint8_t)(initiator_depth < rd ? initiator_depth : rd);
	p.initiator_depth = 0;
	p.retry_count = 6;
	p.rnr_retry_count = 6;
	if (rdma_accept(c->id, &p)) {
		rk_error("accept the connection from %s on QP 0x%x: %m", c->peer,
			 c->id->qp->qp_num);
		return errno ? -errno : -EIO;
	}
	return 0;
}

/* ---- connect requests ---- */

struct ms_verdict {
	int code;
	char why[RK_WIRE_ERROR_TEXT];
};

static bool allowed(struct rk_memserver *srv, struct rdma_cm_id *id, const char *peer,
		    struct ms_verdict *v)
{
	char blocks[80] = "", b[64];
	size_t n = 0;

	if (!srv->o.nallow)
		return true;
	for (int i = 0; i < srv->o.nallow; i++) {
		if (rk_cidr_match(&srv->o.allow[i], rdma_get_peer_addr(id)))
			return true;
		if (n < sizeof(blocks))
			n += (size_t)snprintf(blocks + n, sizeof(blocks) - n, "%s%s", i ? " " : "",
					      rk_cidr_str(&srv->o.allow[i], b, sizeof(b)));
	}
	v->code = -EACCES;
	snprintf(v->why, sizeof(v->why), "client %s is not in --allow %s", peer, blocks);
	return false;
}

/* The session a checked request names, made or found; a verdict when none. */
static struct ms_session *request_session(struct rk_memserver *srv,
					  const struct rk_mem_request *r, const char *peer,
					  struct ms_verdict *v)
{
	struct ms_session *s;

	if (!r->session) {
		if (srv->o.max_clients && (unsigned int)srv->nsessions >= srv->o.max_clients) {
			v->code = -EUSERS;
			snprintf(v->why, sizeof(v->why), "the server has --max-clients %u sessions "
				 "already", srv->o.max_clients);
			return NULL;
		}
		v->code = ms_session_new(srv, r->size, peer, &s, v->why, sizeof(v->why));
		return v->code ? NULL : s;
	}
	s = ms_session_find(srv, r->session);
	if (!s) {
		v->code = -ENOENT;
		snprintf(v->why, sizeof(v->why), "no session %016" PRIx64 " (expired, or another "
			 "server)", r->session);
	} else if (s->size != r->size) {
		v->code = -EINVAL;
		snprintf(v->why, sizeof(v->why), "size %" PRIu64 " differs from session %016"
			 PRIx64 "'s %" PRIu64, r->size, s->id, s->size);
	} else if (s->mask & (1ull << r->queue)) {
		v->code = -EEXIST;
		snprintf(v->why, sizeof(v->why), "queue %u of session %016" PRIx64 " is "
			 "connected already", r->queue, s->id);
	} else {
		return s;
	}
	return NULL;
}

static void reject(struct rk_memserver *srv, struct rdma_cm_id *id, const char *peer,
		   const struct ms_verdict *v)
{
	rk_info("rejected %s: %s (%s)", peer, v->why, rk_strerror(v->code));
	rk_cm_reject_id(id, v->code, peer, v->why);
	rdma_destroy_id(id);
	srv->rejected++;
}

static struct ms_conn *conn_new(struct rk_memserver *srv, struct rdma_cm_id *id,
				struct ms_session *s, const struct rk_mem_request *r,
				const char *peer, struct ms_verdict *v)
{
	struct ms_conn *c = calloc(1, sizeof(*c));

	v->code = -ENOSPC;
	snprintf(v->why, sizeof(v->why), "the server could not set up the connection");
	if (!c)
		return NULL;
	c->id = id;
	c->sess = s;
	c->queue = r->queue;
	c->new_session = !r->session;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->dev = dev_get(srv, id->verbs);
	if (!c->dev)
		goto err_free;
	v->code = ms_session_check_dev(s, c->dev, v->why, sizeof(v->why));
	if (v->code)
		goto err_free;
	v->code = conn_verbs(c);
	if (v->code) {
		snprintf(v->why, sizeof(v->why), "the server could not set up the connection");
		goto err_free;
	}
	id->context = c;
	return c;

err_free:
	if (id->qp)
		rdma_destroy_qp(id);
	if (c->msg_mr)
		ibv_dereg_mr(c->msg_mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	free(c);
	return NULL;
}

/* After the accept (memproto.h step 3): the session's memory, allocated if
 * new, registered on the connection's device. A failure is kept in c for
 * the SEND on ESTABLISHED. The registration blocks the event loop for as
 * long as it takes (seconds for a large region on an emulated machine);
 * rkblk connects a session's next queue only after this one's region came,
 * so no request for the same session waits behind it. */
static void conn_region(struct rk_memserver *srv, struct ms_conn *c)
{
	struct ms_session *s = c->sess;
	int64_t t0 = now_ms();

	if (srv->o.inject == RK_MS_INJECT_REGISTER_FAIL) {
		c->fail = -ENOSPC;
		snprintf(c->why, sizeof(c->why), "the server cannot register %" PRIu64 " bytes "
			 "(--inject register-fail)", s->size);
	} else {
		c->fail = ms_session_register(srv, s, c->dev,
					      srv->o.inject == RK_MS_INJECT_READ_ONLY, c->why,
					      sizeof(c->why));
	}
	if (c->fail)
		rk_info("queue %u of session %016" PRIx64 " from %s: %s (%s): telling the client, "
			"then disconnecting", c->queue, s->id, c->peer, c->why,
			rk_strerror(c->fail));
	else
		rk_debug("session %016" PRIx64 ": region ready in %" PRId64 " ms", s->id,
			 now_ms() - t0);
}

static void on_request(struct rk_memserver *srv, const struct ms_event *ev)
{
	struct rk_mem_request r;
	struct ms_verdict v = {0};
	struct ms_session *s;
	struct ms_conn *c;
	char peer[64];
	const char *dev = ibv_get_device_name(ev->id->verbs->device);

	peer_str(ev->id, peer, sizeof(peer));
	if (srv->o.device && strcmp(dev, srv->o.device)) {
		v.code = -ENODEV;
		snprintf(v.why, sizeof(v.why), "the request came through %s; the server serves "
			 "only %s", dev, srv->o.device);
		return reject(srv, ev->id, peer, &v);
	}
	if (!allowed(srv, ev->id, peer, &v))
		return reject(srv, ev->id, peer, &v);
	v.code = rk_cm_request_mtu_check(ev->id, v.why, sizeof(v.why));
	if (v.code)
		return reject(srv, ev->id, peer, &v);
	v.code = rk_mem_request_check(ev->data, ev->data_len, srv->o.max_size, &r, v.why,
				      sizeof(v.why));
	if (v.code)
		return reject(srv, ev->id, peer, &v);
	s = request_session(srv, &r, peer, &v);
	if (!s)
		return reject(srv, ev->id, peer, &v);
	c = conn_new(srv, ev->id, s, &r, peer, &v);
	if (!c) {
		if (!r.session)
			ms_session_free(srv, s, true);
		return reject(srv, ev->id, peer, &v);
	}
	ms_session_attach(s, r.queue);
	c->next = srv->conns;
	srv->conns = c;
	srv->nconns++;
	if (((r.flags & RK_MEM_REQ_SENDS_FIRST) && conn_post_hello(c)) ||
	    conn_accept(c, ev->peer_initiator_depth)) {
		conn_free(srv, c, NULL);
		if (!r.session)
			ms_session_free(srv, s, true);
		return;
	}
	srv->accepted++;
	rk_info("accepted queue %u/%u of %s session %016" PRIx64 " (%" PRIu64 " bytes) from %s: "
		"QP 0x%x", r.queue, r.queues, r.session ? "existing" : "new", s->id, s->size, peer,
		ev->id->qp->qp_num);
	conn_region(srv, c);
}

static const char *const inject_names[] = {
	[RK_MS_INJECT_REGION_MAGIC] = "region-magic", [RK_MS_INJECT_REGION_LENGTH] = "region-length",
	[RK_MS_INJECT_REGION_SHORT] = "region-short", [RK_MS_INJECT_REGION_WRAP] = "region-wrap",
	[RK_MS_INJECT_WRONG_RKEY] = "wrong-rkey", [RK_MS_INJECT_READ_ONLY] = "read-only",
	[RK_MS_INJECT_REGISTER_FAIL] = "register-fail",
};
#define NINJECT (sizeof(inject_names) / sizeof(inject_names[0]))

int rk_memserver_inject_parse(const char *name, enum rk_memserver_inject *inject_p)
{
	for (size_t i = RK_MS_INJECT_NONE + 1; name && i < NINJECT; i++)
		if (!strcmp(name, inject_names[i])) {
			*inject_p = (enum rk_memserver_inject)i;
			return 0;
		}
	return -EINVAL;
}

/* --inject: spoil the region message as asked; its length to send. */
static uint32_t inject_region(enum rk_memserver_inject f, struct rk_mem_region *m)
{
	switch (f) {
	case RK_MS_INJECT_REGION_MAGIC:
		m->magic = htobe32(RK_MEM_MAGIC ^ 0xffu);
		break;
	case RK_MS_INJECT_REGION_LENGTH:
		m->length = htobe64(be64toh(m->length) + RK_MEM_BLOCK);
		break;
	case RK_MS_INJECT_REGION_SHORT:
		return 20;
	case RK_MS_INJECT_REGION_WRAP:
		m->addr = htobe64(UINT64_MAX - RK_MEM_BLOCK);
		break;
	case RK_MS_INJECT_WRONG_RKEY:
		m->rkey = htobe32(be32toh(m->rkey) ^ 0x5au);
		break;
	default:
		break;
	}
	return sizeof(*m);
}

/* Step 4: the region SEND (or why there is none), once the connection is
 * established and, with RK_MEM_REQ_SENDS_FIRST, the client's SEND came. */
static void conn_send(struct rk_memserver *srv, struct ms_conn *c)
{
	struct ms_session *s = c->sess;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	if (!c->established || c->await_hello)
		return;
	if (c->fail) {
		struct rk_msg m;
		int len;

		rk_msg_error(&m, c->fail, "%s", c->why);
		len = rk_wire_encode(&m, c->msg.out.error, sizeof(c->msg.out.error));
		sge.length = len > 0 ? (uint32_t)len : 0;
	} else {
		rk_mem_region_encode(c->queue, s->id, (uint64_t)(uintptr_t)s->mem, s->size,
				     s->mr->rkey, c->new_session ? RK_MEM_REGION_NEW :
				     RK_MEM_REGION_RESUMED, &c->msg.out.region);
		sge.length = inject_region(srv->o.inject, &c->msg.out.region);
	}
	sge.addr = (uintptr_t)&c->msg.out;
	sge.lkey = c->msg_mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = MS_WR_REGION;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	errno = ibv_post_send(c->id->qp, &wr, &bad);
	if (errno) {
		rk_error("post the region SEND on QP 0x%x to %s: %m (disconnecting)",
			 c->id->qp->qp_num, c->peer);
		rdma_disconnect(c->id);
	}
}

static void on_established(struct rk_memserver *srv, struct ms_conn *c)
{
	c->established = true;
	conn_send(srv, c);
}

/* A SEND of the client (RK_MEM_REQ_SENDS_FIRST): its request again; the
 * first answered, a repeat (it had no answer in time) ignored. */
static void on_hello(struct rk_memserver *srv, struct ms_conn *c, const struct ibv_wc *wc)
{
	const struct rk_mem_req *h = &c->msg.hello[wc->wr_id - MS_WR_HELLO];

	if (wc->byte_len != sizeof(*h) || be32toh(h->magic) != RK_MEM_MAGIC ||
	    be16toh(h->queue) != c->queue) {
		rk_warn("queue %u of session %016" PRIx64 " from %s: its first SEND is not its "
			"request (%u bytes, magic 0x%08x, queue %u); disconnecting", c->queue,
			c->sess->id, c->peer, wc->byte_len, be32toh(h->magic), be16toh(h->queue));
		rdma_disconnect(c->id);
		return;
	}
	rk_debug("queue %u of session %016" PRIx64 " from %s: the client's request SEND came%s",
		 c->queue, c->sess->id, c->peer, c->await_hello ? "" : " again");
	if (!c->await_hello)
		return;
	c->await_hello = false;
	conn_send(srv, c);
}

/* ---- the loop ---- */

static int get_event(struct rk_memserver *srv, struct ms_event *ev)
{
	struct rdma_cm_event *e;

	if (rdma_get_cm_event(srv->ch, &e)) {
		if (errno == EAGAIN)
			return -EAGAIN;
		rk_error("read an RDMA CM event: %m");
		return errno ? -errno : -EIO;
	}
	memset(ev, 0, sizeof(*ev));
	ev->type = e->event;
	ev->status = e->status;
	ev->id = e->id;
	if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		ev->peer_initiator_depth = e->param.conn.responder_resources;
		rk_debug("connect request: initiator_depth %u, responder_resources %u (receiver's "
			 "view)", e->param.conn.initiator_depth, e->param.conn.responder_resources);
		if (e->param.conn.private_data) {
			ev->data_len = e->param.conn.private_data_len;
			memcpy(ev->data, e->param.conn.private_data, ev->data_len);
		}
	}
	rdma_ack_cm_event(e);
	return 0;
}

/* Let go of everything on a device that is going away: its connections,
 * the sessions' registrations (their memory stays; a client that comes back
 * through another device registers it there), the PD and completion
 * channel; then let librdmacm notice the device is gone, so that it closes
 * its own context. Devices without disassociate support (rxe) cannot finish
 * their removal before every user space context on them is closed. Limit
 * (librdmacm 44): when the removed device was the last one, librdmacm's
 * device sync gives up on the empty list and keeps its context open, so
 * that removal completes only when the server exits. */
static void dev_remove(struct rk_memserver *srv, struct ms_dev *d)
{
	char name[64];
	struct ibv_context **list;
	struct ms_conn *c, *n;
	unsigned int closed = 0;

	snprintf(name, sizeof(name), "%s", ibv_get_device_name(d->ctx->device));
	for (c = srv->conns; c; c = n) {
		n = c->next;
		if (c->dev == d) {
			conn_free(srv, c, "the device is being removed");
			closed++;
		}
	}
	dev_free(srv, d);
	list = rdma_get_devices(NULL);
	if (list)
		rdma_free_devices(list);
	rk_warn("RDMA device %s is being removed: closed %u connection%s and released it; the "
		"sessions stay in memory for their clients to come back", name, closed,
		closed == 1 ? "" : "s");
}

static int on_device_removal(struct rk_memserver *srv, struct ibv_context *ctx)
{
	for (int i = 0; i < srv->ndevs; i++) {
		if (srv->devs[i].ctx == ctx) {
			dev_remove(srv, &srv->devs[i]);
			break;
		}
	}
	return 0;
}

/* A device whose verbs node is gone is being removed, whether or not an
 * RDMA CM event said so (none comes once its connections are closed). */
static void check_devices(struct rk_memserver *srv)
{
	for (int i = srv->ndevs - 1; i >= 0; i--)
		if (access(srv->devs[i].ctx->device->dev_path, F_OK))
			dev_remove(srv, &srv->devs[i]);
}

static bool is_listener(const struct rk_memserver *srv, const struct rdma_cm_id *id)
{
	for (int i = 0; i < srv->nlisteners; i++)
		if (srv->listeners[i] == id)
			return true;
	return false;
}

static int on_cm_event(struct rk_memserver *srv)
{
	struct ms_event ev;
	struct ms_conn *c;
	char why[160];
	int ret = get_event(srv, &ev);

	if (ret)
		return ret == -EAGAIN ? 0 : ret;
	if (is_listener(srv, ev.id)) {
		rk_error("listener on port %u: %s (%s)", srv->port, rk_cm_event_name(ev.type),
			 rk_cm_event_hint(ev.type));
		return ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL ? -ENODEV : -EIO;
	}
	if (ev.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		on_request(srv, &ev);
		return 0;
	}
	c = ev.id->context;
	if (!c)
		return 0;
	switch (ev.type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		on_established(srv, c);
		return 0;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return on_device_removal(srv, ev.id->verbs);
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		snprintf(why, sizeof(why), "%s, status %d", rk_cm_event_name(ev.type), ev.status);
		conn_free(srv, c, why);
		return 0;
	default:
		rk_debug("connection from %s: %s ignored", c->peer, rk_cm_event_name(ev.type));
		return 0;
	}
}

static void on_completions(struct rk_memserver *srv, struct ms_dev *d)
{
	struct ibv_cq *cq;
	struct ibv_wc wc;
	void *ctx;

	while (!ibv_get_cq_event(d->cc, &cq, &ctx)) {
		struct ms_conn *c = ctx;

		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
		while (ibv_poll_cq(cq, 1, &wc) > 0) {
			if (wc.wr_id >= MS_WR_HELLO && wc.wr_id < MS_WR_HELLO + RK_MEM_REQ_SENDS) {
				if (wc.status == IBV_WC_SUCCESS) {
					on_hello(srv, c, &wc);
					continue;
				}
				if (wc.status == IBV_WC_WR_FLUSH_ERR)
					continue;
				rk_warn("receive of the first SEND from %s on QP 0x%x: %s (%s); "
					"disconnecting", c->peer, wc.qp_num,
					ibv_wc_status_str(wc.status), rk_wc_status_hint(wc.status));
				rdma_disconnect(c->id);
				continue;
			}
			if (wc.status == IBV_WC_SUCCESS && c->fail) {
				rk_debug("told %s on QP 0x%x why there is no region; disconnecting",
					 c->peer, wc.qp_num);
				rdma_disconnect(c->id);
				continue;
			}
			if (wc.status == IBV_WC_SUCCESS) {
				rk_debug("sent the region to %s on QP 0x%x", c->peer, wc.qp_num);
				continue;
			}
			rk_warn("region SEND to %s on QP 0x%x: %s (%s); disconnecting", c->peer,
				wc.qp_num, ibv_wc_status_str(wc.status),
				rk_wc_status_hint(wc.status));
			rdma_disconnect(c->id);
		}
	}
}

static int on_signal(struct rk_memserver *srv)
{
	struct signalfd_siginfo si;

	if (read(srv->sigfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	if (si.ssi_signo == SIGUSR1) {
		if (srv->o.on_status)
			srv->o.on_status(srv, srv->o.arg);
		return 0;
	}
	rk_info("%s: stopping", strsignal((int)si.ssi_signo));
	return 1;
}

int rk_memserver_run(struct rk_memserver *srv)
{
	for (;;) {
		struct pollfd pfd[3 + MS_MAX_DEVS];
		int n = 0, timeout = ms_sessions_expire(srv), ret;

		check_devices(srv);
		if (srv->ndevs && (timeout < 0 || timeout > MS_DEVICE_CHECK_MS))
			timeout = MS_DEVICE_CHECK_MS;

		pfd[n++] = (struct pollfd){.fd = srv->ch->fd, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = srv->stopfd, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = srv->sigfd, .events = POLLIN};
		for (int i = 0; i < srv->ndevs; i++)
			pfd[n++] = (struct pollfd){.fd = srv->devs[i].cc->fd, .events = POLLIN};
		ret = poll(pfd, (nfds_t)n, timeout);
		if (ret < 0 && errno != EINTR) {
			ret = -errno;
			rk_error("wait for events: %m");
			return ret;
		}
		if (ret <= 0)
			continue;
		if (pfd[1].revents)
			return 0;
		if (pfd[2].revents && on_signal(srv))
			return 0;
		for (int i = 3; i < n; i++)
			if (pfd[i].revents && i - 3 < srv->ndevs)
				on_completions(srv, &srv->devs[i - 3]);
		if (pfd[0].revents) {
			ret = on_cm_event(srv);
			if (ret)
				return ret;
		}
	}
}

void rk_memserver_stop(struct rk_memserver *srv)
{
	uint64_t one = 1;
	ssize_t n = write(srv->stopfd, &one, sizeof(one));

	(void)n;
}

uint16_t rk_memserver_port(const struct rk_memserver *srv)
{
	return srv->port;
}

/* ---- setup and teardown ---- */

static int setup_fds(struct rk_memserver *srv)
{
	sigset_t set;

	srv->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srv->stopfd < 0) {
		rk_error("create an eventfd: %m");
		return -errno;
	}
	if (!srv->o.signals)
		return 0;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &set, &srv->oldmask)) {
		rk_error("block SIGINT, SIGTERM and SIGUSR1: %m");
		return -EINVAL;
	}
	srv->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (srv->sigfd < 0) {
		rk_error("create a signalfd: %m");
		pthread_sigmask(SIG_SETMASK, &srv->oldmask, NULL);
		return -errno;
	}
	return 0;
}

/* A new listening id on the server's channel, in *id_p. */
static int new_listener(struct rk_memserver *srv, struct rdma_cm_id **id_p)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(srv->ch, &id, NULL, RDMA_PS_TCP)) {
		rk_error("create an RDMA CM id: %m");
		return errno ? -errno : -ENOMEM;
	}
	srv->listeners[srv->nlisteners++] = id;
	*id_p = id;
	return 0;
}

/* Whether this kernel has IPv6 at all. */
static bool have_ipv6(void)
{
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Every address: [::] IPv6-only and 0.0.0.0 on their own ids. A dual-stack
 * [::] listener does not serve IPv4 on iWARP: the provider's TCP listener
 * hands the kernel's RDMA CM a v4-mapped address, which it finds on no
 * device, and the connection is reset before any request reaches us. Where
 * an iWARP device is, rk_cm_bind_listen()'s wildcard is 0.0.0.0 alone, so
 * [::] is named here (without it siw refused every IPv6 client: the TCP
 * connect was reset, -ECONNREFUSED in rkblk). */
static int listen_any(struct rk_memserver *srv, struct rdma_cm_id *id)
{
	int one = 1, ret;
	bool v6;

	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one)))
		return rk_cm_bind_listen(id, NULL, srv->port, MS_BACKLOG);
	ret = rk_cm_bind_listen(id, NULL, srv->port, MS_BACKLOG);
	if (ret)
		return ret;
	v6 = rdma_get_local_addr(id)->sa_family == AF_INET6;
	if (!v6 && !have_ipv6())
		return 0;
	ret = new_listener(srv, &id);
	if (ret)
		return ret;
	if (v6)
		return rk_cm_bind_listen(id, "0.0.0.0", srv->port, MS_BACKLOG);
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one))) {
		rk_error("listen on [::]:%u IPv6-only: %m", srv->port);
		return errno ? -errno : -EINVAL;
	}
	return rk_cm_bind_listen(id, "::", srv->port, MS_BACKLOG);
}

static int setup_listener(struct rk_memserver *srv)
{
	struct rdma_cm_id *id;
	int ret;

	srv->ch = rdma_create_event_channel();
	if (!srv->ch) {
		rk_error("create an RDMA CM event channel: %m (is rdma_ucm loaded and "
			 "/dev/infiniband/rdma_cm accessible?)");
		return errno ? -errno : -ENOMEM;
	}
	if (fcntl(srv->ch->fd, F_SETFL, fcntl(srv->ch->fd, F_GETFL) | O_NONBLOCK)) {
		rk_error("make the RDMA CM event channel non-blocking: %m");
		return -errno;
	}
	ret = new_listener(srv, &id);
	if (ret)
		return ret;
	if (srv->o.bind)
		return rk_cm_bind_listen(id, srv->o.bind, srv->port, MS_BACKLOG);
	return listen_any(srv, id);
}

int rk_memserver_check(const struct rk_memserver_opts *o, char *why, size_t why_len)
{
	if (o->mem == RK_MEM_DM || (unsigned int)o->mem > RK_MEM_AUTO)
		snprintf(why, why_len, "option --mem: sessions cannot live in %s memory (they "
			 "outlive a device); use host, hugepage, memfd, memfd-huge or auto",
			 rk_mem_kind_name(o->mem));
	else if (o->state_dir && o->mem != RK_MEM_HOST)
		snprintf(why, why_len, "option --mem: with --state-dir the sessions live in its "
			 "files (host memory); --mem %s does not apply", rk_mem_kind_name(o->mem));
	else
		return 0;
	return -EINVAL;
}

/* The memory opts asks for, before anything is made: what this machine
 * cannot give is said at once, not when a client comes. */
static int check_mem(const struct rk_memserver_opts *o)
{
	struct rk_region_opts ro = {.kind = o->mem, .no_dm = true, .odp = o->odp,
				    .odp_rc = IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_WRITE};
	char why[200];

	if (rk_memserver_check(o, why, sizeof(why))) {
		rk_error("memserver: %s", why);
		return -EINVAL;
	}
	return rk_region_precheck(o->device, &ro, 0);
}

int rk_memserver_create(const struct rk_memserver_opts *opts, struct rk_memserver **srv_p)
{
	struct rk_memserver *srv;
	int ret;

	ret = check_mem(opts);
	if (ret)
		return ret;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->o = *opts;
	srv->port = opts->port ? opts->port : RK_MEM_DEFAULT_PORT;
	srv->stopfd = -1;
	srv->sigfd = -1;
	srv->started = time(NULL);
	ret = setup_fds(srv);
	if (ret)
		goto err_destroy;
	ret = setup_listener(srv);
	if (ret)
		goto err_destroy;
	ret = ms_sessions_adopt(srv);
	if (ret)
		goto err_destroy;
	ms_counters_baseline(srv);
	rk_info("sessions' memory: %s%s",
		opts->state_dir ? "files in the state directory" : rk_mem_kind_name(opts->mem),
		opts->odp ? ", registered with on-demand paging" : "");
	*srv_p = srv;
	return 0;

err_destroy:
	rk_memserver_destroy(srv);
	return ret;
}

void rk_memserver_destroy(struct rk_memserver *srv)
{
	if (!srv)
		return;
	while (srv->conns) {
		struct ms_conn *c = srv->conns;

		if (c->established)
			rdma_disconnect(c->id);
		conn_free(srv, c, "the server stops");
	}
	while (srv->sessions)
		ms_session_free(srv, srv->sessions, false);
	while (srv->ndevs)
		dev_free(srv, &srv->devs[srv->ndevs - 1]);
	while (srv->nlisteners)
		rdma_destroy_id(srv->listeners[--srv->nlisteners]);
	if (srv->ch)
		rdma_destroy_event_channel(srv->ch);
	if (srv->sigfd >= 0) {
		close(srv->sigfd);
		pthread_sigmask(SIG_SETMASK, &srv->oldmask, NULL);
	}
	if (srv->stopfd >= 0)
		close(srv->stopfd);
	free(srv);
}
