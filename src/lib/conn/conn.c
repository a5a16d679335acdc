/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One connected queue pair between two processes, over the TCP exchange or
 * RDMA CM, with the control channel that keeps their steps in order. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <rdmakit/conn.h>
#include <rdmakit/ctl_qp.h>
#include <rdmakit/tcp.h>
#include <rdmakit/mem.h>
#include <rdmakit/port.h>
#include <rdmakit/status.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>

#include "base/clock.h"
#include "conn/cm_int.h"
#include "conn/tcp_int.h"
#include "conn/ctl_qp_int.h"
#include "verbs/device_int.h"
#include "verbs/traffic_int.h"
#include "conn/conn_int.h"


static struct rk_conn *conn_new(const struct rk_conn_opts *o)
{
	struct rk_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->server = o->server;
	c->cm_mode = o->cm;
	c->ctl_keep_receives = o->ctl_keep_receives;
	c->listen_fd = -1;
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	c->release = o->release;
	c->arg = o->arg;
	return c;
}

/* PD and CQ on c->dev. */
static int make_pd_cq(struct rk_conn *c, const struct rk_conn_opts *o)
{
	int ret = rk_pd_alloc(c->dev, &c->pd);

	if (ret)
		return ret;
	if (o->srq) {
		ret = rk_srq_create(c->pd, c->dev, o->srq, &c->srq);
		if (!ret)
			ret = rk_srq_fill(c->srq);
		if (ret)
			return ret;
	}
	return rk_cq_create(c->dev, o->cq_depth > 0 ? o->cq_depth : 128, o->events, &c->cq);
}

static struct rk_qp_init_attr qp_attr(const struct rk_conn *c, const struct rk_conn_opts *o)
{
	struct rk_qp_init_attr a = o->qp;

	a.transport = o->transport;
	a.port_num = c->port_num;
	a.gid = c->has_gid ? &c->gid : NULL;
	a.srq = c->srq ? rk_srq_verbs(c->srq) : NULL;
	return a;
}

/* TCP: the device and GID, chosen by the address the peer talks to. */
static int open_device_for(struct rk_conn *c, const struct rk_conn_opts *o, const char *local_ip)
{
	struct rk_port_sel sel;
	int ret;

	ret = rk_port_open(o->device, o->port_num, o->gid_index, local_ip, &sel);
	if (ret)
		return ret;
	c->dev = sel.dev;
	c->port_num = sel.port_num;
	c->has_gid = sel.has_gid;
	c->gid = sel.gid;
	return 0;
}

/* Both sides' endpoints must fit together; tell the peer why when not, so
 * both print the same reason. */
static int check_peer(struct rk_conn *c)
{
	char why[256];
	int ret;

	ret = rk_endpoint_check(&c->local, &c->remote, why, sizeof(why));
	if (!ret)
		ret = rk_path_mtu(c->local.mtu, c->remote.mtu, 0, &c->path_mtu, why, sizeof(why));
	if (ret) {
		rk_error("cannot connect to %s: %s", c->peer, why);
		rk_ctl_send_error(c->ctl, ret, "%s", why);
	}
	return ret;
}

/* TCP, either side: RESET -> RTS towards the peer, with the caller's path
 * and the traffic fields over it. */
static int tcp_connect_qp(struct rk_conn *c, const struct rk_conn_opts *o, int access)
{
	struct rk_path_attr path;
	int ret;

	if (o->path)
		path = *o->path;
	else
		rk_path_defaults(&path);
	rk_traffic_apply(&o->traffic, &path);
	ret = rk_qp_connect(c->qp, access, &c->remote, &path);
	if (!ret)
		rk_traffic_check_qp(&o->traffic, c->qp, false);
	return ret;
}

static int traffic_check(const struct rk_traffic *t)
{
	char why[128];
	int ret = rk_traffic_check(t, why, sizeof(why));

	if (ret)
		rk_error("traffic fields: %s", why);
	return ret;
}

/* CM, either side, connected: what of the traffic fields CM did not carry. */
static void cm_traffic_note(struct rk_conn *c, const struct rk_conn_opts *o)
{
	rk_traffic_note(&o->traffic, c->dev, c->port_num, &c->gid, true);
	rk_traffic_check_qp(&o->traffic, c->qp, c->server);
}

/* TCP, either side: device and GID by the address the peer talks to, PD,
 * CQ and QP. */
static int tcp_local_setup(struct rk_conn *c, const struct rk_conn_opts *o)
{
	struct rk_qp_init_attr qa;
	int ret;

	ret = open_device_for(c, o, c->ctl->local_ip);
	if (ret)
		return ret;
	ret = make_pd_cq(c, o);
	if (ret)
		return ret;
	qa = qp_attr(c, o);
	rk_traffic_note(&o->traffic, c->dev, c->port_num, c->has_gid ? &c->gid : NULL, false);
	return rk_qp_create(c->pd, c->dev, c->cq, c->cq, &qa, &c->qp);
}

/* The tool's buffer for a client's request (o->prepare): 0, or its error
 * (the tool's why, where it gave one, logged here). */
static int prepare_request(struct rk_conn *c, const struct rk_conn_opts *o, int *access_p)
{
	char why[256] = "";
	int ret;

	if (!o->prepare)
		return 0;
	ret = o->prepare(c, &c->request, access_p, why, sizeof(why), o->arg);
	if (ret && why[0])
		rk_error("%s", why);
	return ret;
}

/* The tool judges a client's request (o->on_request) and makes the reply:
 * 0 with *access_p set, or its error, logged, and the reason for the client
 * in reason. */
static int judge_request(struct rk_conn *c, const struct rk_conn_opts *o, int *access_p,
			 char *reason, size_t reason_len)
{
	int ret;

	if (!o->on_request)
		return 0;
	ret = o->on_request(c, &c->request, &c->reply, access_p, reason, reason_len, o->arg);
	if (ret) {
		if (!reason[0])
			snprintf(reason, reason_len, "%s", rk_strerror(ret));
		rk_error("refusing %s: %s", c->peer, reason);
	}
	return ret;
}

/* The same, a control channel up: a refusal is sent to the client. */
static int judge_request_ctl(struct rk_conn *c, const struct rk_conn_opts *o, int *access_p)
{
	char reason[RK_WIRE_ERROR_TEXT] = "";
	int ret = judge_request(c, o, access_p, reason, sizeof(reason));

	if (ret)
		rk_ctl_send_error(c->ctl, ret, "the server refused: %s", reason);
	return ret;
}

/* TCP, either side: tell the peer this side could not set up (ret). */
static int tcp_setup_failed(struct rk_conn *c, int ret)
{
	rk_ctl_send_error(c->ctl, ret, "the %s could not set up",
			  c->server ? "server" : "client");
	return ret;
}

/* A client's connect that failed after tries the server had answered busy:
 * the last error alone would hide that it was there. */
static void busy_before(const struct rk_conn *c, int busy)
{
	rk_error("(before that, %s had answered %d time%s that it was busy with other "
		 "clients)", c->peer, busy, busy > 1 ? "s" : "");
}

/* TCP client, one try: connect (trying again while nothing listens for up
 * to wait_ms), the secret, this side's setup (the first time), and the
 * HELLOs there and back. */
static int tcp_client_try(struct rk_conn *c, const struct rk_conn_opts *o, int wait_ms,
			  int *access_p)
{
	struct rk_msg msg = {.type = RK_MSG_HELLO};
	int ret;

	ret = rk_tcp_connect(o->host, o->port, wait_ms, &c->ctl);
	if (ret)
		return ret;
	snprintf(c->peer, sizeof(c->peer), "%s", c->ctl->peer);
	/* Before anything else travels. */
	if (c->auth) {
		ret = rk_auth_client(c->ctl, c->auth, c->timeout_ms);
		if (ret)
			return ret;
	}
	if (!c->qp) {
		ret = tcp_local_setup(c, o);
		if (!ret)
			ret = prepare_request(c, o, access_p);
		if (ret)
			return tcp_setup_failed(c, ret);
		rk_qp_local_endpoint(c->qp, &c->local);
	}
	msg.u.hello.ep = c->local;
	msg.u.hello.buf = c->request;
	ret = rk_ctl_send(c->ctl, &msg);
	if (ret)
		return ret;
	ret = rk_ctl_expect(c->ctl, RK_MSG_HELLO, c->timeout_ms, &msg);
	if (ret)
		return ret;
	c->remote = msg.u.hello.ep;
	c->reply = msg.u.hello.buf;
	return 0;
}

static int tcp_client(struct rk_conn *c, const struct rk_conn_opts *o)
{
	int64_t deadline = now_ms() + c->timeout_ms;
	int access = 0, ret, tries = 1;

	/* A server busy with another client: again, until the timeout. */
	while ((ret = tcp_client_try(c, o, ms_left(deadline), &access)) == -EBUSY &&
	       now_ms() + RK_CM_RETRY_INTERVAL_MS <= deadline) {
		rk_ctl_close(c->ctl);
		c->ctl = NULL;
		usleep(RK_CM_RETRY_INTERVAL_MS * 1000);
		tries++;
	}
	if (ret == -EBUSY)
		rk_error("%s: the server stayed busy with other clients; gave up after %d tr%s "
			 "in %d ms", c->peer, tries, tries > 1 ? "ies" : "y", c->timeout_ms);
	else if (ret && tries > 1)
		busy_before(c, tries - 1);
	if (ret)
		return ret;
	ret = check_peer(c);
	if (ret)
		return ret;
	return tcp_connect_qp(c, o, access);
}

/* TCP server: the client's HELLO. A client that starts authenticating is
 * refused plainly by a server without a secret. */
static int expect_client_hello(struct rk_conn *c, struct rk_msg *msg)
{
	int ret = rk_ctl_recv(c->ctl, c->timeout_ms, msg);

	if (ret)
		return ret;
	if (msg->type == RK_MSG_AUTH_BEGIN) {
		rk_error("refusing %s: it authenticates with a shared secret (--auth-file), and "
			 "this server has none",
			 c->peer);
		rk_ctl_send_error(c->ctl, -EACCES, "the server has no shared secret: start it with "
						   "--auth-file too");
		return -EACCES;
	}
	if (msg->type != RK_MSG_HELLO) {
		rk_error("%s sent a %s message where a HELLO was due", c->peer,
			 rk_msg_type_str(msg->type));
		return -EPROTO;
	}
	return 0;
}

/* TCP server: a client's control connection, from the listening socket. */
static int tcp_take(struct rk_conn *c, int listen_fd, int timeout_ms)
{
	int ret = rk_tcp_accept(listen_fd, timeout_ms, &c->ctl);

	if (ret)
		return ret;
	snprintf(c->peer, sizeof(c->peer), "%s", c->ctl->peer);
	return 0;
}

/* TCP server, a client accepted: its secret, HELLO, the QP and the reply. */
static int tcp_server_setup(struct rk_conn *c, const struct rk_conn_opts *o)
{
	struct rk_msg msg;
	int access = 0, ret;

	/* The client proves the secret before this server sends anything. */
	ret = c->auth ? rk_auth_server(c->ctl, c->auth, c->timeout_ms) : 0;
	if (!ret)
		ret = expect_client_hello(c, &msg);
	if (ret)
		return ret;
	c->remote = msg.u.hello.ep;
	c->request = msg.u.hello.buf;
	ret = tcp_local_setup(c, o);
	if (ret)
		return tcp_setup_failed(c, ret);
	rk_qp_local_endpoint(c->qp, &c->local);
	ret = check_peer(c);
	if (!ret)
		ret = judge_request_ctl(c, o, &access);
	if (ret)
		return ret;
	msg.type = RK_MSG_HELLO;
	msg.u.hello.ep = c->local;
	msg.u.hello.buf = c->reply;
	ret = rk_ctl_send(c->ctl, &msg);
	if (ret)
		return ret;
	return tcp_connect_qp(c, o, access);
}

static int tcp_server(struct rk_conn *c, const struct rk_conn_opts *o)
{
	int ret;

	ret = rk_tcp_listen(o->bind_ip, o->port, &c->listen_fd);
	if (ret)
		return ret;
	rk_info("waiting for a client on port %u", o->port);
	if (o->on_listening)
		o->on_listening(o->arg);
	ret = tcp_take(c, c->listen_fd, o->accept_timeout_ms);
	if (ret)
		return ret;
	return tcp_server_setup(c, o);
}

/* CM: rdmakit's view of the device and GID the CM id was bound to. */
static int adopt_cm_device(struct rk_conn *c, struct rk_cm *cm)
{
	int ret = rk_device_wrap(cm->id->verbs, &c->dev);

	if (ret)
		return ret;
	c->port_num = cm->port_num;
	c->gid = cm->gid;
	c->has_gid = rk_port_is_roce(c->dev, c->port_num);
	return 0;
}

/* CM with -d: RDMA CM picks the device by address, so one that resolves
 * through another device than the one asked for is refused by name. */
static int cm_check_device(const struct rk_cm *cm, const char *addr, const char *device)
{
	const char *got = ibv_get_device_name(cm->id->verbs->device);

	if (!device || !strcmp(got, device))
		return 0;
	rk_error("%s resolves to %s, not %s (RDMA CM picks the device by address; give "
		 "%s an address of its own, or leave out -d)",
		 addr, got, device, device);
	return -ENODEV;
}

/* CM server with -d: a request that came through another device is
 * rejected, with the reason, as the memserver does. */
static int cm_request_device(struct rk_conn *c, const char *device)
{
	const char *got = ibv_get_device_name(c->cm->id->verbs->device);
	char reason[RK_WIRE_ERROR_TEXT];

	if (!device || !strcmp(got, device))
		return 0;
	snprintf(reason, sizeof(reason), "the request came through %s; the server serves "
		 "only %s", got, device);
	rk_error("refusing %s: %s", c->peer, reason);
	rk_cm_reject(c->cm, reason);
	return -ENODEV;
}

/* CM server with -d, before listening: the device exists, and an address
 * to bind to resolves to it. */
static int cm_listener_device(const struct rk_cm *listener, const char *bind_ip,
			      const char *device)
{
	struct rk_device *dev;
	int ret;

	if (!device)
		return 0;
	if (listener->id->verbs)
		return cm_check_device(listener, bind_ip, device);
	ret = rk_device_open(device, &dev);
	if (!ret)
		rk_device_close(dev);
	return ret;
}

/* CM client: a server with a secret accepts without its buffer (flag
 * RK_BUF_AUTH); prove the secret on the QP's control channel, then the
 * buffer follows as a CM_HELLO there. Both sides must agree on using one. */
/* CM, authenticated: the client's turn between the server's AUTH_OK and its
 * CM_HELLO. Sent back to back, the second met the client's one kept receive
 * still taken by the first in about 1 pair of 4 (an RNR NAK, and the
 * counters rdmakit explains failures with moved on a run that worked). */
#define CM_AUTH_DONE_STEP 0x41555448u /* "AUTH" */

static int cm_auth_turn(struct rk_conn *c, bool server)
{
	struct rk_msg msg = {.type = RK_MSG_SYNC};
	int ret;

	if (!server) {
		msg.u.sync.step = CM_AUTH_DONE_STEP;
		return rk_ctl_send(c->ctl, &msg);
	}
	ret = rk_ctl_expect(c->ctl, RK_MSG_SYNC, c->timeout_ms, &msg);
	if (!ret && msg.u.sync.step != CM_AUTH_DONE_STEP) {
		rk_error("%s sent step %u after authenticating, where %u was due", c->peer,
			 msg.u.sync.step, CM_AUTH_DONE_STEP);
		ret = -EPROTO;
	}
	return ret;
}

static int cm_client_auth(struct rk_conn *c)
{
	bool asked = c->reply.flags & RK_BUF_AUTH;
	struct rk_msg msg;
	int ret;

	if (!c->auth && !asked)
		return 0;
	if (!asked || !c->auth) {
		rk_error("%s: %s", c->peer, c->auth ? "the server accepted without authenticating; "
						      "this client insists (--auth-file)" :
						      "the server requires a shared secret: start "
						      "the client with --auth-file");
		rk_ctl_send_error(c->ctl, -EACCES, "the two sides disagree on --auth-file");
		return -EACCES;
	}
	ret = rk_auth_client(c->ctl, c->auth, c->timeout_ms);
	if (ret)
		return ret;
	ret = cm_auth_turn(c, false);
	if (ret)
		return ret;
	ret = rk_ctl_expect(c->ctl, RK_MSG_CM_HELLO, c->timeout_ms, &msg);
	if (ret)
		return ret;
	if (msg.u.cm.flags & RK_BUF_AUTH) {
		rk_error("%s sent its buffer still flagged for authentication", c->peer);
		return -EPROTO;
	}
	c->reply = msg.u.cm;
	return 0;
}

static bool cm_peer_gone(void *arg)
{
	return rk_cm_peer_left(arg);
}

/* The control channel on the connected QP; a peer that dies is seen on CM
 * while the channel waits, not at its timeout. */
static int cm_ctl_create(struct rk_conn *c)
{
	int ret;

	if (c->ctl)
		return 0; /* made before the server accepted */
	ret = rk_ctl_qp_create(c->qp, c->pd, c->cq, c->cq, &c->ctl);
	if (ret)
		return ret;
	rk_ctl_qp_set_gone(c->ctl, cm_peer_gone, c->cm);
	if (!c->ctl_keep_receives)
		return 0;
	/* The server answers at sync points: the client's next message then
	 * always follows the server's receive posted again. */
	c->ctl->sync_answers = c->server;
	return rk_ctl_qp_keep_receive(c->ctl, c->ctl_keep_receives);
}

/* One CM connect try: the QP on the current id, then the request. */
struct cm_try {
	struct rk_conn *c;
	const struct rk_conn_opts *o;
	struct rk_qp_init_attr qa;
	int busy; /* tries the server answered busy */
};

static int cm_client_try(void *arg)
{
	struct cm_try *t = arg;
	int ret;

	ret = rk_cm_create_qp(t->c->cm, t->c->pd, t->c->cq, t->c->cq, &t->qa, &t->c->qp);
	if (ret)
		return ret;
	/* The server may send before this side has seen the connection
	 * established: a receive waits for it (ctl_keep_receives). */
	if (t->c->ctl_keep_receives) {
		ret = cm_ctl_create(t->c);
		if (ret)
			return ret;
	}
	ret = rk_cm_connect(t->c->cm, t->c->qp, &t->c->request, t->c->timeout_ms);
	t->busy += ret == -EBUSY;
	return ret;
}

/* Completions left on cq by a QP that is gone: siw flushes a destroyed QP's
 * posted receives into its CQ, and the next try's QP (often with the same
 * QPN) took them for its own and ended its control channel at once, flushed
 * (a client started before its server failed on iWARP). */
static void cq_drop_stale(struct rk_cq *cq)
{
	struct ibv_wc wc[16];
	int n, dropped = 0;

	while (!rk_cq_poll(cq, wc, 16, 0, &n))
		dropped += n;
	if (dropped)
		rk_debug("dropped %d completion%s of the QP of the failed try", dropped,
			 dropped > 1 ? "s" : "");
}

/* A fresh id for the next try; resolved before the old one goes, so
 * librdmacm keeps the device context our PD lives on. */
static int cm_client_reset(void *arg)
{
	struct cm_try *t = arg;
	struct rk_conn *c = t->c;
	struct rk_cm *next;
	int ret;

	ret = rk_cm_resolve_ps(t->o->host, t->o->port, RDMA_PS_TCP, &t->o->traffic, c->timeout_ms,
			       &next);
	if (ret)
		return ret;
	/* The channel and the QP were the old id's. */
	rk_ctl_close(c->ctl);
	rk_qp_destroy(c->qp);
	c->ctl = NULL;
	c->qp = NULL;
	cq_drop_stale(c->cq);
	rk_cm_destroy(c->cm);
	c->cm = next;
	if (next->id->verbs != c->dev->ctx) {
		rk_error("%s resolved to another device on retry", t->o->host);
		return -ENODEV;
	}
	return 0;
}

static int cm_client(struct rk_conn *c, const struct rk_conn_opts *o)
{
	struct cm_try t = {.c = c, .o = o};
	int access = 0, ret, tries;

	ret = rk_cm_resolve_ps(o->host, o->port, RDMA_PS_TCP, &o->traffic, c->timeout_ms, &c->cm);
	if (ret)
		return ret;
	snprintf(c->peer, sizeof(c->peer), "%s", c->cm->peer_addr);
	ret = cm_check_device(c->cm, o->host, o->device);
	if (ret)
		return ret;
	ret = adopt_cm_device(c, c->cm);
	if (ret)
		return ret;
	ret = make_pd_cq(c, o);
	if (ret)
		return ret;
	ret = prepare_request(c, o, &access);
	if (ret)
		return ret;
	if (c->auth)
		c->request.flags |= RK_BUF_AUTH;
	t.qa = qp_attr(c, o);
	ret = rk_cm_connect_retry(c->timeout_ms, cm_client_try, cm_client_reset, &t, &tries);
	if (ret == -ECONNREFUSED)
		rk_error("connect to %s with RDMA CM: REJECTED, nothing listens on port %u; gave up "
			 "after %d tr%s in %d ms (is the server running, with --cm?)",
			 c->peer, o->port, tries, tries > 1 ? "ies" : "y", c->timeout_ms);
	else if (ret == -EBUSY)
		rk_error("connect to %s with RDMA CM: the server stayed busy with other clients; "
			 "gave up after %d tr%s in %d ms", c->peer, tries, tries > 1 ? "ies" : "y",
			 c->timeout_ms);
	else if (ret && tries > 1 && rk_cm_retry_worth(ret)) /* a rejection said why already */
		rk_error("connect to %s with RDMA CM: gave up after %d tries in %d ms", c->peer,
			 tries, c->timeout_ms);
	if (ret && ret != -EBUSY && t.busy)
		busy_before(c, t.busy);
	if (ret)
		return ret;
	cm_traffic_note(c, o);
	c->reply = c->cm->peer;
	ret = rk_qp_set_access(c->qp, access);
	if (ret)
		return ret;
	ret = cm_ctl_create(c);
	if (ret)
		return ret;
	return cm_client_auth(c);
}

/* CM server: a request's RK_BUF_AUTH flag must match whether this server
 * has a secret; a mismatch is rejected with the reason, nothing accepted. */
static int cm_server_check_auth(struct rk_conn *c)
{
	bool asks = c->request.flags & RK_BUF_AUTH;

	if (c->auth && !asks) {
		rk_error("refusing %s: it has no shared secret, and this server requires one "
			 "(--auth-file)",
			 c->peer);
		rk_cm_reject(c->cm, "the server requires a shared secret: start the client with "
				    "--auth-file");
		return -EACCES;
	}
	if (!c->auth && asks) {
		rk_error("refusing %s: it authenticates with a shared secret (--auth-file), and "
			 "this server has none",
			 c->peer);
		rk_cm_reject(c->cm, "the server has no shared secret: start it with --auth-file too");
		return -EACCES;
	}
	c->request.flags &= ~(uint32_t)RK_BUF_AUTH;
	return 0;
}

/* CM server with a secret, after accepting without its buffer: the client
 * proves the secret on the QP's control channel; only then is its request
 * judged, the buffer made, and its address and rkey sent (a CM_HELLO there). */
static int cm_server_auth(struct rk_conn *c, const struct rk_conn_opts *o)
{
	struct rk_msg msg = {.type = RK_MSG_CM_HELLO};
	int access = 0, ret;

	ret = cm_ctl_create(c);
	if (ret)
		return ret;
	ret = rk_auth_server(c->ctl, c->auth, c->timeout_ms);
	if (!ret)
		ret = cm_auth_turn(c, true);
	if (!ret)
		ret = judge_request_ctl(c, o, &access);
	if (ret)
		return ret;
	ret = rk_qp_set_access(c->qp, access);
	if (ret)
		return ret;
	msg.u.cm = c->reply;
	return rk_ctl_send(c->ctl, &msg);
}

/* CM server: a client's connection request from the listener, its secret
 * flag checked and its device adopted (shared is the listener's device for
 * its clients: one rk_device, and one async event logger, for them all). */
static int cm_take(struct rk_conn *c, struct rk_cm *listener, int timeout_ms,
		   const char *device, struct rk_device **shared)
{
	int ret;

	ret = rk_cm_get_request(listener, timeout_ms, &c->cm);
	if (ret)
		return ret;
	snprintf(c->peer, sizeof(c->peer), "%s", c->cm->peer_addr);
	c->request = c->cm->peer;
	ret = cm_request_device(c, device);
	if (ret)
		return ret;
	ret = cm_server_check_auth(c);
	if (ret)
		return ret;
	if (shared && *shared && (*shared)->ctx == c->cm->id->verbs) {
		c->dev = rk_device_ref(*shared);
		c->port_num = c->cm->port_num;
		c->gid = c->cm->gid;
		c->has_gid = rk_port_is_roce(c->dev, c->port_num);
	} else {
		ret = adopt_cm_device(c, c->cm);
		if (ret) {
			rk_cm_reject(c->cm, "the server could not set up");
			return ret;
		}
		if (shared && !*shared)
			*shared = rk_device_ref(c->dev);
	}
	return 0;
}

/* CM server, a request taken: PD, CQ, the tool's buffer, the QP, accept. */
static int cm_server_setup(struct rk_conn *c, const struct rk_conn_opts *o)
{
	const struct rk_wire_buf pending = {.flags = RK_BUF_AUTH};
	struct rk_qp_init_attr qa;
	char reason[RK_WIRE_ERROR_TEXT] = "";
	int access = 0, ret;

	ret = make_pd_cq(c, o);
	if (ret) {
		rk_cm_reject(c->cm, "the server could not set up");
		return ret;
	}
	/* With a secret, the request is judged only after the client proved it. */
	ret = c->auth ? 0 : judge_request(c, o, &access, reason, sizeof(reason));
	if (ret) {
		rk_cm_reject(c->cm, reason);
		return ret;
	}
	qa = qp_attr(c, o);
	ret = rk_cm_create_qp(c->cm, c->pd, c->cq, c->cq, &qa, &c->qp);
	if (ret) {
		rk_cm_reject(c->cm, "the server could not create its QP");
		return ret;
	}
	/* The client's first control message may well come before this side
	 * has seen the connection established: a receive waits for it. */
	if (c->ctl_keep_receives) {
		ret = cm_ctl_create(c);
		if (ret) {
			rk_cm_reject(c->cm, "the server could not set up");
			return ret;
		}
	}
	ret = rk_cm_accept(c->cm, c->qp, c->auth ? &pending : &c->reply, c->timeout_ms);
	if (ret)
		return ret;
	cm_traffic_note(c, o);
	if (c->auth)
		return cm_server_auth(c, o);
	ret = rk_qp_set_access(c->qp, access);
	if (ret)
		return ret;
	return cm_ctl_create(c);
}

static int cm_server(struct rk_conn *c, const struct rk_conn_opts *o)
{
	int ret;

	ret = rk_cm_listen_ps(o->bind_ip, o->port, RDMA_PS_TCP, &o->traffic, &c->listener);
	if (ret)
		return ret;
	ret = cm_listener_device(c->listener, o->bind_ip, o->device);
	if (ret)
		return ret;
	rk_info("waiting for an RDMA CM client on port %u", o->port);
	if (o->on_listening)
		o->on_listening(o->arg);
	ret = cm_take(c, c->listener, o->accept_timeout_ms, o->device, NULL);
	if (ret)
		return ret;
	return cm_server_setup(c, o);
}

/* Connected both ways: the async event logger, and both QPs in RTS before
 * either side goes on. On failure the connection is closed. */
static int conn_finish(struct rk_conn *c, int ret, struct rk_conn **conn_p)
{
	/* Port down, QP fatal and the like are named as they happen. */
	if (!ret)
		ret = rk_async_log_start(c->dev);
	if (!ret)
		ret = rk_ctl_sync(c->ctl, 0, 0, c->timeout_ms);
	if (ret) {
		rk_conn_close(c);
		return ret;
	}
	*conn_p = c;
	return 0;
}

/* ---- a server that has its clients: the others are told it is busy ---- */

/* While a server of one client serves it (or one of N clients serves its N),
 * a thread answers every other client that comes with -EBUSY, which
 * rdmakit's clients try again on until their timeout: a --persist server
 * takes them once this client is done. Unanswered, they waited until the end
 * of the run, then were reset. */
struct conn_doorman {
	pthread_t thread;
	int stop_fd;            /* eventfd: doorman_stop() ends the thread */
	int listen_fd;          /* TCP, or -1 */
	struct rk_cm *listener; /* CM, or NULL */
	char busy[96];          /* what the others are told */
	char served[96];        /* whom the server serves, for its log */
};

/* Answer the clients waiting on the listener (CM, or else TCP): how many. */
static int refuse_others(const struct conn_doorman *d)
{
	if (d->listener)
		return rk_cm_refuse_waiting(d->listener, -EBUSY, d->busy);
	return rk_tcp_refuse_waiting(d->listen_fd, -EBUSY, d->busy);
}

static void *doorman_main(void *arg)
{
	struct conn_doorman *d = arg;
	struct pollfd p[2] = {
		{.fd = d->stop_fd, .events = POLLIN},
		{.fd = d->listener ? d->listener->channel->fd : d->listen_fd, .events = POLLIN},
	};
	bool said = false;

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents || (p[1].revents & (POLLERR | POLLHUP | POLLNVAL)))
			break;
		if (refuse_others(d) && !said) {
			rk_warn("another client came while %s: told it is busy (its tries are not "
				"logged)", d->served);
			said = true;
		}
	}
	return NULL;
}

/* Start answering others busy on listener (CM) or listen_fd (TCP). NULL
 * where no thread could be had: they wait as before, which is warned. */
static struct conn_doorman *doorman_start(struct rk_cm *listener, int listen_fd,
					  const char *busy, const char *served)
{
	struct conn_doorman *d = calloc(1, sizeof(*d));
	sigset_t all, old;
	int ret = -ENOMEM;

	if (!d)
		goto err;
	d->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (d->stop_fd < 0) {
		ret = -errno;
		goto err_free;
	}
	d->listen_fd = listen_fd;
	d->listener = listener;
	snprintf(d->busy, sizeof(d->busy), "%s", busy);
	snprintf(d->served, sizeof(d->served), "%s", served);
	/* Signals stay with the caller's thread, whose waits end on a stop signal. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&d->thread, NULL, doorman_main, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto err_close;
	return d;

err_close:
	close(d->stop_fd);
err_free:
	free(d);
err:
	rk_warn("other clients will wait unanswered while %s: %s", served, rk_strerror(ret));
	return NULL;
}

/* End the thread, then answer those still waiting: the caller closes the
 * listener next, and a client that came meanwhile would be reset, where one
 * answered busy, or finding no listener, tries again. */
static void doorman_stop(struct conn_doorman *d)
{
	uint64_t one = 1;

	if (!d)
		return;
	/* An eventfd written once does not fail. */
	if (write(d->stop_fd, &one, sizeof(one)) < 0)
		rk_warn("stop the thread that refuses other clients: %m");
	pthread_join(d->thread, NULL);
	refuse_others(d);
	close(d->stop_fd);
	free(d);
}

/* A server's listener goes (CM id cm, or TCP socket fd), its doorman first. */
static void unlisten(struct conn_doorman **d, struct rk_cm **cm, int *fd)
{
	doorman_stop(*d);
	*d = NULL;
	rk_cm_destroy(*cm);
	*cm = NULL;
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int rk_conn_establish(const struct rk_conn_opts *opts, struct rk_conn **conn_p)
{
	struct rk_conn_opts o = *opts;
	struct rk_auth *auth = NULL;
	struct rk_conn *c;
	int ret;

	if (!o.port)
		o.port = RK_DEFAULT_PORT;
	if (!o.server && (!o.host || !o.host[0])) {
		rk_error("no server address given");
		return -EINVAL;
	}
	if (o.cm && o.transport != RK_RC) {
		rk_error("RDMA CM connects RC queue pairs only (asked for %s)",
			 rk_transport_str(o.transport));
		return -EINVAL;
	}
	ret = traffic_check(&o.traffic);
	if (ret)
		return ret;
	/* The device, its port and a GID, before listening or connecting: a host
	 * without one fails at once, not after waiting for a peer; iWARP is
	 * refused here, not midway. (RDMA CM finds the device by address.) */
	if (!o.cm) {
		ret = rk_port_name_check(o.device, o.port_num, o.gid_index,
					 rk_transport_str(o.transport), "use --cm");
		if (ret)
			return ret;
	}
	if (o.auth_file) {
		ret = rk_auth_load(o.auth_file, &auth);
		if (ret)
			return ret;
	}
	c = conn_new(&o);
	if (!c) {
		rk_auth_free(auth);
		return -ENOMEM;
	}
	c->auth = auth;
	if (o.cm)
		ret = o.server ? cm_server(c, &o) : cm_client(c, &o);
	else
		ret = o.server ? tcp_server(c, &o) : tcp_client(c, &o);
	if (!ret && o.server) {
		char served[96];

		snprintf(served, sizeof(served), "%s is served", c->peer);
		c->doorman = doorman_start(c->listener, c->listen_fd, RK_CONN_BUSY, served);
	}
	return conn_finish(c, ret, conn_p);
}

/* ---- one listener, many clients ---- */

struct rk_conn_listener {
	struct rk_conn_opts o;
	int listen_fd;             /* TCP */
	struct rk_cm *cm;          /* CM */
	struct rk_device *cm_dev;  /* CM: the device its clients came on (a reference) */
	struct conn_doorman *doorman; /* rk_conn_listener_refuse_others() */
};

int rk_conn_listen(const struct rk_conn_opts *opts, struct rk_conn_listener **l_p)
{
	struct rk_conn_listener *l;
	int ret;

	if (!opts->server || (opts->cm && opts->transport != RK_RC)) {
		rk_error("a listener is a server's, and RDMA CM connects RC queue pairs only");
		return -EINVAL;
	}
	ret = traffic_check(&opts->traffic);
	if (ret)
		return ret;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->o = *opts;
	if (!l->o.port)
		l->o.port = RK_DEFAULT_PORT;
	l->listen_fd = -1;
	if (opts->cm) {
		ret = rk_cm_listen_ps(opts->bind_ip, l->o.port, RDMA_PS_TCP, &opts->traffic, &l->cm);
		if (!ret) {
			ret = cm_listener_device(l->cm, opts->bind_ip, opts->device);
			if (ret)
				rk_cm_destroy(l->cm);
		}
	} else {
		/* The device as rk_conn_establish() checks it, before listening. */
		ret = rk_port_name_check(opts->device, opts->port_num, opts->gid_index,
					 rk_transport_str(opts->transport), "use --cm");
		if (!ret)
			ret = rk_tcp_listen(opts->bind_ip, l->o.port, &l->listen_fd);
	}
	if (ret) {
		free(l);
		return ret;
	}
	rk_info("waiting for %s clients on port %u", opts->cm ? "RDMA CM" : "TCP exchange",
		l->o.port);
	if (opts->on_listening)
		opts->on_listening(opts->arg);
	*l_p = l;
	return 0;
}

int rk_conn_accept(struct rk_conn_listener *l, int timeout_ms, struct rk_conn **pending_p)
{
	struct rk_auth *auth = NULL;
	struct rk_conn *c;
	int ret;

	if (l->o.auth_file) {
		ret = rk_auth_load(l->o.auth_file, &auth);
		if (ret)
			return ret;
	}
	c = conn_new(&l->o);
	if (!c) {
		rk_auth_free(auth);
		return -ENOMEM;
	}
	c->auth = auth;
	c->release = NULL; /* the client's own opts bring theirs */
	c->arg = NULL;
	if (l->o.cm)
		ret = cm_take(c, l->cm, timeout_ms, l->o.device, &l->cm_dev);
	else
		ret = tcp_take(c, l->listen_fd, timeout_ms);
	if (ret) {
		rk_conn_close(c);
		return ret;
	}
	*pending_p = c;
	return 0;
}

int rk_conn_establish_accepted(struct rk_conn *pending, const struct rk_conn_opts *opts,
			       struct rk_conn **conn_p)
{
	struct rk_conn_opts o = *opts;
	int ret;

	if (!o.port)
		o.port = RK_DEFAULT_PORT;
	pending->timeout_ms = o.timeout_ms > 0 ? o.timeout_ms : 10000;
	pending->release = o.release;
	pending->arg = o.arg;
	pending->ctl_keep_receives = o.ctl_keep_receives;
	ret = pending->cm_mode ? cm_server_setup(pending, &o) : tcp_server_setup(pending, &o);
	return conn_finish(pending, ret, conn_p);
}

void rk_conn_listener_refuse_others(struct rk_conn_listener *l, unsigned int served)
{
	char busy[96], who[48];

	if (l->doorman)
		return;
	snprintf(busy, sizeof(busy), "the server is busy with the %u client%s it serves at once",
		 served, served == 1 ? "" : "s");
	snprintf(who, sizeof(who), "its %u client%s are served", served, served == 1 ? "" : "s");
	l->doorman = doorman_start(l->cm, l->listen_fd, busy, who);
}

void rk_conn_listener_close(struct rk_conn_listener *l)
{
	if (!l)
		return;
	unlisten(&l->doorman, &l->cm, &l->listen_fd);
	rk_device_close(l->cm_dev);
	free(l);
}

int rk_conn_wait(struct rk_conn *conn, uint64_t wr_id, const char *what, struct ibv_wc *wc_p)
{
	struct ibv_wc wc;
	int ret;

	/* Over CM the control channel shares the CQ: its completions go to it. */
	ret = rk_ctl_qp_next_wc(conn->ctl, conn->cq, conn->timeout_ms, &wc);
	if (ret == -ETIMEDOUT) {
		rk_error("%s: no completion within %d ms (peer gone or stuck?)", what,
			 conn->timeout_ms);
		return ret;
	}
	if (ret)
		return ret;
	ret = rk_wc_check(&wc, what);
	if (ret)
		return ret;
	if (wc.wr_id != wr_id) {
		rk_error("%s: completion for wr_id %llu where %llu was due", what,
			 (unsigned long long)wc.wr_id, (unsigned long long)wr_id);
		return -EPROTO;
	}
	if (wc_p)
		*wc_p = wc;
	return 0;
}

void rk_conn_close(struct rk_conn *c)
{
	if (!c)
		return;
	/* The listener goes first: the rest of the teardown takes a while. */
	unlisten(&c->doorman, &c->listener, &c->listen_fd);
	rk_ctl_close(c->ctl);
	if (c->cm)
		rk_cm_disconnect(c->cm, 1000);
	if (c->release)
		c->release(c, c->arg);
	rk_qp_destroy(c->qp);
	rk_srq_destroy(c->srq);
	rk_cq_destroy(c->cq);
	rk_pd_free(c->pd);
	rk_device_close(c->dev);
	rk_cm_destroy(c->cm);
	rk_auth_free(c->auth);
	free(c);
}
