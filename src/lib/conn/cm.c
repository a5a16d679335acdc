/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RDMA CM connections: resolve, listen, connect and accept with rdmakit's
 * CM_HELLO in the private data, and every event that ends a connection named
 * with its status, hint and the peer's reason. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdmakit/cm.h>
#include <rdmakit/stop.h>
#include <rdmakit/error.h>
#include <rdmakit/gid.h>
#include <rdmakit/log.h>
#include <rdmakit/status.h>
#include <rdmakit/traffic.h>

#include "base/clock.h"
#include "conn/cm_int.h"
#include "verbs/qp_int.h"
#include "verbs/device_int.h"

#define CM_MAX_RD_ATOMIC   16 /* outstanding READs/atomics asked for, at most */
#define CM_RNR_RETRY_COUNT 7 /* 7: retry forever while the peer has no receive posted */
#define CM_LISTEN_BACKLOG  8
/* The CM reports its own errors (ADDR_ERROR, ...) when the timeout it was given
 * runs out; wait a little longer so that its event, which says more, wins. */
#define CM_EVENT_GRACE_MS     500
#define CM_DEFAULT_RESOLVE_MS 2000 /* for a caller's timeout of "forever" */

/* A connection or listener: the public part and what only this file needs. */
struct cm_conn {
	struct rk_cm cm; /* first: rk_cm pointers are cm_conn pointers */
	bool has_req;	 /* a connect request waits for accept or reject */
	uint8_t req_initiator_depth;
	uint8_t req_responder_resources;
	/* The RC QP of rk_cm_create_qp(): ours, not attached to the id, so that
	 * its path MTU is the smaller of both ports' (librdmacm would take the
	 * client's for both); moved to ERR here on disconnect. */
	struct ibv_qp *qp;
	enum ibv_mtu peer_mtu; /* what the peer's CM_HELLO said; 0: nothing */
	/* The peer's private data as it came (rk_cm_private_data()). */
	uint8_t data_len;
	uint8_t data[256];
	/* RDMA_PS_UDP client: the server's address from its SIDR reply. */
	bool has_ud;
	struct ibv_ah_attr ud_ah;
	uint32_t ud_qpn;
	uint32_t ud_qkey;
};

static struct cm_conn *conn_of(struct rk_cm *cm)
{
	return (struct cm_conn *)cm;
}

static bool is_ud_id(const struct rk_cm *cm)
{
	return cm->id && cm->id->ps == RDMA_PS_UDP;
}

/* One CM event, copied out before it is acknowledged. */
struct cm_event {
	enum rdma_cm_event_type type;
	int status;
	struct rdma_cm_id *id;
	uint8_t initiator_depth;
	uint8_t responder_resources;
	uint8_t data_len;
	uint8_t data[256];
	bool has_ud; /* RDMA_PS_UDP ESTABLISHED: the peer's address */
	struct ibv_ah_attr ah_attr;
	uint32_t qp_num;
	uint32_t qkey;
};

/* The library's transport retry count (rk_path_defaults(): 6, as rxe takes 7
 * to mean "forever" and would never report a vanished peer). */
static uint8_t cm_retry_count(void)
{
	struct rk_path_attr p;

	rk_path_defaults(&p);
	return p.retry_cnt;
}

static const char *ip_str(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *a = NULL;

	buf[0] = '\0';
	if (sa && sa->sa_family == AF_INET)
		a = &((const struct sockaddr_in *)sa)->sin_addr;
	else if (sa && sa->sa_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (a && !inet_ntop(sa->sa_family, a, buf, (socklen_t)len))
		buf[0] = '\0';
	return buf;
}

/* "198.18.0.1:7471" or "[fe80::1]:7471". */
static const char *addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	unsigned int port = 0;

	ip_str(sa, ip, sizeof(ip));
	if (sa && sa->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	else if (sa && sa->sa_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	if (sa && sa->sa_family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", ip, port);
	else
		snprintf(buf, len, "%s:%u", ip[0] ? ip : "?", port);
	return buf;
}

/* Names of the IB CM reject reasons (IBTA 12.6.7.2) that explain a refusal. */
static const char *reject_reason_str(int reason)
{
	switch (reason) {
	case 1:
		return "NO_QP: the server has no QP for the connection";
	case 2:
		return "NO_EEC";
	case 3:
		return "NO_RESOURCES: the server ran out of resources";
	case 4:
		return "TIMEOUT: the peer's CM timed out";
	case 5:
		return "UNSUPPORTED: the request asks for something the server does not support";
	case 6:
		return "INVALID_COMM_ID";
	case 7:
		return "INVALID_COMM_INSTANCE";
	case 8:
		return "INVALID_SERVICE_ID: nothing listens on that port";
	case 9:
		return "INVALID_TRANSPORT_TYPE";
	case 10:
		return "STALE_CONN: the server still holds an old connection with this ID";
	case 12:
		return "INVALID_GID";
	case 13:
		return "INVALID_LID";
	case 26:
		return "INVALID_MTU";
	case 27:
		return "INSUFFICIENT_RESP_RESOURCES: the server allows fewer outstanding READs";
	case 28:
		return "CONSUMER_DEFINED: the server's application refused";
	case 29:
		return "INVALID_RNR_RETRY";
	case 30:
		return "DUPLICATE_LOCAL_COMM_ID";
	case 31:
		return "INVALID_CLASS_VERSION";
	default:
		return "an IB CM reject reason";
	}
}

static const char *status_str(const struct cm_event *ev, char *buf, size_t len)
{
	if (ev->status < 0)
		snprintf(buf, len, "status %d, %s", ev->status, rk_strerror(ev->status));
	else if (ev->type == RDMA_CM_EVENT_REJECTED && ev->status > 0)
		snprintf(buf, len, "status %d, %s", ev->status, reject_reason_str(ev->status));
	else if (ev->type == RDMA_CM_EVENT_UNREACHABLE && (ev->status == 1 || ev->status == 2))
		snprintf(buf, len, "status %d, %s", ev->status,
			 ev->status == 1 ? "SIDR: no listener on that port" :
					   "SIDR: the server rejected the request");
	else
		snprintf(buf, len, "status %d", ev->status);
	return buf;
}

/* The ERROR message an rdmakit server's reject carries in its private
 * data: true and *msg, or false when it carries none. */
static bool reject_msg(const struct cm_event *ev, struct rk_msg *msg)
{
	char why[128];

	/* A SIDR reply that rejects (status 2) carries it as a REJ does. */
	if ((ev->type != RDMA_CM_EVENT_REJECTED &&
	     !(ev->type == RDMA_CM_EVENT_UNREACHABLE && ev->status == 2)) ||
	    ev->data_len < RK_WIRE_ERROR_LEN)
		return false;
	return !rk_wire_decode(ev->data, RK_WIRE_ERROR_LEN, msg, why, sizeof(why)) &&
	       msg->type == RK_MSG_ERROR;
}

/* The reason text of an rdmakit server's reject, or "" when it has none. */
static const char *reject_text(const struct cm_event *ev, char *buf, size_t len)
{
	struct rk_msg msg;

	buf[0] = '\0';
	if (reject_msg(ev, &msg))
		snprintf(buf, len, "; the server says: \"%.*s\"", RK_WIRE_ERROR_TEXT,
			 msg.u.error.text);
	return buf;
}

/* A CM event that ends what was under way, as a negative errno. */
static int event_errno(const struct cm_event *ev)
{
	struct rk_msg msg;

	switch (ev->type) {
	case RDMA_CM_EVENT_REJECTED:
		/* The consumer (a server) said no: a decision, not worth a retry,
		 * but for "busy with another client" (-EBUSY). IB and RoCE say so
		 * by status 28; iWARP's MPA reject comes as -ECONNRESET (siw), so
		 * an rdmakit server's ERROR message in it says so there. Anything
		 * else (no listener: invalid service ID) may pass. */
		if (reject_msg(ev, &msg))
			return msg.u.error.code == -EBUSY ? -EBUSY : -ECONNABORTED;
		return ev->status == 28 ? -ECONNABORTED : -ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
		/* A SIDR reply's status: 1 (IB_SIDR_UNSUPPORTED) is no listener on
		 * that port (yet), 2 (IB_SIDR_REJECT) the server said no. */
		if (ev->status == 1)
			return -ECONNREFUSED;
		if (ev->status == 2)
			return -ECONNABORTED;
		return -EHOSTUNREACH;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return -ECONNABORTED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return ev->status < 0 ? ev->status : -EHOSTUNREACH;
	case RDMA_CM_EVENT_DISCONNECTED:
		return -ECONNRESET;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return -ENETDOWN;
	default:
		return -EPROTO;
	}
}

/* Log an event that came instead of the one wanted, once, and return its errno. */
static int event_error(const char *what, const struct cm_event *ev, enum rdma_cm_event_type want)
{
	char status[160], text[RK_WIRE_ERROR_TEXT + 32];
	const char *hint = rk_cm_event_hint(ev->type);

	int ret = event_errno(ev);

	/* A SIDR reply: the server answered, so UNREACHABLE's hint is wrong. */
	if (ev->type == RDMA_CM_EVENT_UNREACHABLE && ev->status == 1)
		hint = "nothing listens on that port (yet)";
	else if (ev->type == RDMA_CM_EVENT_UNREACHABLE && ev->status == 2)
		hint = "the server refused this client";
	else if (!hint[0])
		hint = "unexpected at this point";
	/* No listener (yet), or a busy one, is what a client retries on while
	 * its server starts or serves another: info here; the caller says it
	 * gave up, if it does. */
	rk_log(ret == -ECONNREFUSED || ret == -EBUSY ? RK_LOG_INFO : RK_LOG_ERROR,
	       "%s: %s instead of %s (%s): %s%s", what, rk_cm_event_name(ev->type),
	       rk_cm_event_name(want),
	       status_str(ev, status, sizeof(status)), hint, reject_text(ev, text, sizeof(text)));
	return ret;
}

/* Wait up to timeout_ms (-1: forever) for the next event on ch, copy it out
 * and acknowledge it. -ETIMEDOUT (not logged) when none came. */
static int cm_get_event(struct rdma_event_channel *ch, int timeout_ms, struct cm_event *ev_p)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	struct rdma_cm_event *e;
	struct cm_event ev;
	int ret;

	for (;;) {
		struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};

		ret = poll(&pfd, 1, ms_left(deadline));
		if (ret > 0)
			break;
		if (ret == 0)
			return -ETIMEDOUT;
		if (errno == EINTR && rk_stop_requested())
			return -EINTR; /* a stop request (stop.h): not an error */
		if (errno != EINTR) {
			ret = -errno;
			rk_error("wait for an RDMA CM event: %m");
			return ret;
		}
	}
	if (rdma_get_cm_event(ch, &e)) {
		ret = errno ? -errno : -EIO;
		rk_error("read an RDMA CM event: %m");
		return ret;
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = e->event;
	ev.status = e->status;
	ev.id = e->id;
	ev.initiator_depth = e->param.conn.initiator_depth;
	ev.responder_resources = e->param.conn.responder_resources;
	if (e->param.conn.private_data && e->param.conn.private_data_len) {
		ev.data_len = e->param.conn.private_data_len;
		memcpy(ev.data, e->param.conn.private_data, ev.data_len);
	}
	if (e->event == RDMA_CM_EVENT_ESTABLISHED && e->id && e->id->ps == RDMA_PS_UDP) {
		ev.has_ud = true;
		ev.ah_attr = e->param.ud.ah_attr;
		ev.qp_num = e->param.ud.qp_num;
		ev.qkey = e->param.ud.qkey;
	}
	rdma_ack_cm_event(e);
	*ev_p = ev;
	return 0;
}

/* Wait for the event want; anything else (or nothing in time) is logged as
 * what failed. */
static int cm_wait(struct rdma_event_channel *ch, enum rdma_cm_event_type want, int timeout_ms,
		   const char *what, struct cm_event *ev_p)
{
	struct cm_event ev;
	int ret;

	ret = cm_get_event(ch, timeout_ms, &ev);
	if (ret == -ETIMEDOUT) {
		rk_error("%s: no answer from RDMA CM within %d ms (no %s): the peer or the "
			 "network is slow or gone",
			 what, timeout_ms, rk_cm_event_name(want));
		return ret;
	}
	if (ret)
		return ret;
	if (ev.type != want)
		return event_error(what, &ev, want);
	*ev_p = ev;
	return 0;
}

/* Which entry of the port's GID table is the source GID RDMA CM uses. Several
 * entries can hold the same GID (RoCE v1 and v2 for one IP): v2 is preferred,
 * as the kernel's default RoCE mode; the QP's actual index is read back once
 * CM has connected it (qp_refresh). */
static int find_cm_gid(struct rk_cm *cm)
{
	const struct rk_gid_entry *best = NULL;
	struct rk_gid_table *t;
	union ibv_gid sgid;
	char local[INET6_ADDRSTRLEN], text[64];
	int ret;

	memcpy(&sgid, &cm->id->route.addr.addr.ibaddr.sgid, sizeof(sgid));
	ip_str(rdma_get_local_addr(cm->id), local, sizeof(local));
	ret = rk_gid_table_read(cm->dev, cm->port_num, &t);
	if (ret)
		return ret;
	for (int i = 0; i < t->count; i++) {
		const struct rk_gid_entry *e = &t->entries[i];

		if (memcmp(e->gid.raw, sgid.raw, sizeof(sgid.raw)))
			continue;
		if (!best || (e->type == RK_GID_ROCE_V2 && best->type != RK_GID_ROCE_V2))
			best = e;
	}
	/* Without a source GID from CM, the RoCE v2 entry carrying the local IP. */
	for (int i = 0; !best && rk_gid_is_zero(&sgid) && local[0] && i < t->count; i++)
		if (t->entries[i].type == RK_GID_ROCE_V2 && !strcmp(t->entries[i].ip, local))
			best = &t->entries[i];
	if (!best) {
		rk_error("RDMA CM uses source GID %s on %s port %u (local address %s), but the "
			 "port's GID table (%d entries) does not hold it: was the address removed?",
			 rk_gid_str(&sgid, text, sizeof(text)), cm->dev->info.name, cm->port_num,
			 local[0] ? local : "none", t->count);
		ret = -ENOENT;
		goto out_free_table;
	}
	memset(&cm->gid, 0, sizeof(cm->gid));
	cm->gid.index = best->index;
	cm->gid.type = best->type;
	cm->gid.gid = best->gid;
	snprintf(cm->gid.why, sizeof(cm->gid.why), "the source GID RDMA CM uses for %s",
		 local[0] ? local : "this connection");
out_free_table:
	rk_gid_table_free(t);
	return ret;
}

/* Wrap the device CM bound the id to, and learn its port and GID; on failure
 * nothing is left open. */
static int attach_device(struct rk_cm *cm)
{
	struct rk_gid_entry e = {0};
	int ret;

	ret = rk_device_wrap(cm->id->verbs, &cm->dev);
	if (ret) {
		rk_error("query the RDMA device RDMA CM chose: %s", rk_strerror(ret));
		return ret;
	}
	cm->port_num = cm->id->port_num;
	if (rk_device_is_iwarp(cm->dev)) {
		/* The iWARP CM runs over TCP: its route carries addresses, no GID. */
		memset(&cm->gid, 0, sizeof(cm->gid));
		snprintf(cm->gid.why, sizeof(cm->gid.why), "none: %s is iWARP (TCP, no GID)",
			 cm->dev->info.name);
		rk_info("RDMA CM uses %s port %u (iWARP: no GID)", cm->dev->info.name,
			cm->port_num);
		return 0;
	}
	ret = find_cm_gid(cm);
	if (ret) {
		/* Undone here: a caller has no device to close. */
		rk_device_close(cm->dev);
		cm->dev = NULL;
		return ret;
	}
	e.type = cm->gid.type;
	e.gid = cm->gid.gid;
	rk_gid_entry_set_ip(&e);
	rk_info("RDMA CM uses %s port %u, GID index %u (%s%s%s)", cm->dev->info.name, cm->port_num,
		cm->gid.index, rk_gid_type_str(e.type), e.ip[0] ? " " : "", e.ip);
	return 0;
}

/* A connection of its own: an event channel and an id in port space ps. */
static int new_conn(enum rdma_port_space ps, struct cm_conn **c_p)
{
	struct cm_conn *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return -ENOMEM;
	c->cm.channel = rdma_create_event_channel();
	if (!c->cm.channel) {
		ret = errno ? -errno : -ENOMEM;
		rk_error("create an RDMA CM event channel: %m (is rdma_ucm loaded and "
			 "/dev/infiniband/rdma_cm accessible?)");
		goto err_free;
	}
	if (rdma_create_id(c->cm.channel, &c->cm.id, c, ps)) {
		ret = errno ? -errno : -ENOMEM;
		rk_error("create an RDMA CM id: %m");
		goto err_destroy_channel;
	}
	*c_p = c;
	return 0;

err_destroy_channel:
	rdma_destroy_event_channel(c->cm.channel);
err_free:
	free(c);
	return ret;
}

/* Undo new_conn(). */
static void free_conn(struct cm_conn *c)
{
	rdma_destroy_id(c->cm.id);
	rdma_destroy_event_channel(c->cm.channel);
	free(c);
}

/* The id's type of service (the traffic class RDMA CM puts in the path, and
 * on RoCE v2 the IP DS field) when t has one: before the route is resolved
 * (client) or before listening (server). */
static int set_tos(struct rdma_cm_id *id, const struct rk_traffic *t)
{
	uint8_t tos;

	if (!t || !t->has_tclass)
		return 0;
	tos = t->tclass;
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos))) {
		int ret = errno ? -errno : -EIO;

		rk_error("set the RDMA CM type of service (traffic class %u, DSCP %u): %m", tos,
			 rk_tclass_dscp(tos));
		return ret;
	}
	return 0;
}

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

static int lookup(const char *host, uint16_t port, int flags, struct addrinfo **ai_p)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = flags | AI_NUMERICSERV};
	char service[8];
	int ret;

	snprintf(service, sizeof(service), "%u", port);
	ret = getaddrinfo(host, service, &hints, ai_p);
	if (ret == 0)
		return 0;
	rk_error("look up '%s': %s", host ? host : "any", gai_strerror(ret));
	if (ret == EAI_SYSTEM)
		return -errno;
	return ret == EAI_MEMORY ? -ENOMEM : -ENOENT;
}

/* The source address, numeric, in the destination's family. */
static int lookup_source(const char *source, const struct sockaddr *dst, struct addrinfo **ai_p)
{
	struct addrinfo hints = {.ai_family = dst->sa_family, .ai_flags = AI_NUMERICHOST};
	int ret = getaddrinfo(source, NULL, &hints, ai_p);

	if (ret == 0)
		return 0;
	rk_error("source address '%s': not a numeric %s address (%s)", source,
		 dst->sa_family == AF_INET6 ? "IPv6" : "IPv4", gai_strerror(ret));
	return ret == EAI_MEMORY ? -ENOMEM : -EINVAL;
}

/* The end of one step of resolving: rc is what rdma_resolve_addr() or
 * rdma_resolve_route() returned. A refusal is logged with hint; else wait, until
 * the deadline and a grace, for the event want. */
static int resolve_step(struct cm_conn *c, int rc, const char *what, const char *step,
			const char *hint, enum rdma_cm_event_type want, int64_t deadline)
{
	struct cm_event ev;
	int ret;

	if (rc) {
		ret = errno ? -errno : -EIO;
		rk_error("%s%s: %m (%s)", what, step, hint);
		return ret;
	}
	return cm_wait(c->cm.channel, want,
		       deadline < 0 ? -1 : ms_left(deadline) + CM_EVENT_GRACE_MS, what, &ev);
}

static int cm_resolve(const char *host, uint16_t port, enum rdma_port_space ps,
		      const struct rk_traffic *traffic, const char *source, int timeout_ms,
		      struct rk_cm **cm_p)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int cm_ms = timeout_ms > 0 ? timeout_ms : CM_DEFAULT_RESOLVE_MS;
	struct addrinfo *ai, *src = NULL;
	struct cm_conn *c;
	char what[200];
	int rc, ret;

	ret = lookup(host, port, 0, &ai);
	if (ret)
		return ret;
	if (source) {
		ret = lookup_source(source, ai->ai_addr, &src);
		if (ret)
			goto err_free_ai;
	}
	ret = new_conn(ps, &c);
	if (ret)
		goto err_free_src;
	addr_str(ai->ai_addr, c->cm.peer_addr, sizeof(c->cm.peer_addr));
	snprintf(what, sizeof(what), "resolve %s%s%s", c->cm.peer_addr,
		 src ? " from source address " : "", src ? source : "");
	ret = set_tos(c->cm.id, traffic);
	if (ret)
		goto err_free_conn;

	rc = rdma_resolve_addr(c->cm.id, src ? src->ai_addr : NULL, ai->ai_addr, cm_ms);
	ret = resolve_step(c, rc, what, "",
			   src ? "the source address must be on an interface with an RDMA device "
				 "('rdma link' lists them)"
			       : rk_cm_event_hint(RDMA_CM_EVENT_ADDR_ERROR),
			   RDMA_CM_EVENT_ADDR_RESOLVED, deadline);
	if (ret)
		goto err_free_conn;
	if (deadline >= 0)
		cm_ms = ms_left(deadline) > 0 ? ms_left(deadline) : 1;
	rc = rdma_resolve_route(c->cm.id, cm_ms);
	ret = resolve_step(c, rc, what, ": resolve route",
			   is_loopback(ai->ai_addr)
				   ? "a loopback address has no RDMA device: use the address of an "
				     "interface that has one ('rdma link' lists them)"
				   : rk_cm_event_hint(RDMA_CM_EVENT_ROUTE_ERROR),
			   RDMA_CM_EVENT_ROUTE_RESOLVED, deadline);
	if (ret)
		goto err_free_conn;
	ret = attach_device(&c->cm);
	if (ret)
		goto err_free_conn;
	if (src)
		freeaddrinfo(src);
	freeaddrinfo(ai);
	*cm_p = &c->cm;
	return 0;

err_free_conn:
	free_conn(c);
err_free_src:
	if (src)
		freeaddrinfo(src);
err_free_ai:
	freeaddrinfo(ai);
	return ret;
}

int rk_cm_resolve(const char *host, uint16_t port, int timeout_ms, struct rk_cm **cm_p)
{
	return cm_resolve(host, port, RDMA_PS_TCP, NULL, NULL, timeout_ms, cm_p);
}

int rk_cm_resolve_ps(const char *host, uint16_t port, enum rdma_port_space ps,
		     const struct rk_traffic *traffic, int timeout_ms, struct rk_cm **cm_p)
{
	return cm_resolve(host, port, ps, traffic, NULL, timeout_ms, cm_p);
}

int rk_cm_resolve_from(const char *host, uint16_t port, enum rdma_port_space ps,
		       const struct rk_traffic *traffic, const char *source, int timeout_ms,
		       struct rk_cm **cm_p)
{
	return cm_resolve(host, port, ps, traffic, source, timeout_ms, cm_p);
}

static int bind_error(int ret, const char *addr, uint16_t port)
{
	switch (-ret) {
	case EADDRINUSE:
		rk_error("listen on %s: port %u is already in use by another RDMA CM listener "
			 "(another server still running?)",
			 addr, port);
		break;
	case EADDRNOTAVAIL:
		rk_error("listen on %s: no local interface has this address", addr);
		break;
	case ENODEV:
		rk_error("listen on %s: the address is not on an interface with an RDMA device "
			 "('rdma link' lists which netdevs have one)",
			 addr);
		break;
	default:
		rk_error("listen on %s: %s", addr, rk_strerror(ret));
	}
	return ret;
}

/* Whether any RDMA device here is iWARP (its CM listens with TCP sockets). */
static bool any_iwarp_device(void)
{
	struct ibv_device **list;
	bool found = false;
	int n;

	list = ibv_get_device_list(&n);
	if (!list)
		return false;
	for (int i = 0; i < n && !found; i++)
		found = list[i]->transport_type == IBV_TRANSPORT_IWARP ||
			list[i]->node_type == IBV_NODE_RNIC;
	ibv_free_device_list(list);
	return found;
}

/* The wildcard address: IPv6's, which the kernel's RDMA CM binds for both
 * families (an IPv4 one would refuse every IPv6 client); IPv4's where the
 * kernel has no IPv6, or where an iWARP device is: its listening TCP socket
 * on [::] resets IPv4 clients (siw: seen as REJECTED, status -104, and no
 * request at the server), as rdma-core's rping listens on 0.0.0.0. The
 * address in addr; 0 or a negative errno. */
static int bind_any(struct rdma_cm_id *id, uint16_t port, char *addr, size_t len)
{
	struct sockaddr_in6 any6 = {.sin6_family = AF_INET6, .sin6_port = htons(port),
				    .sin6_addr = IN6ADDR_ANY_INIT};
	struct sockaddr_in any4 = {.sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_ANY)};
	int err;

	if (any_iwarp_device())
		goto ipv4;
	if (!rdma_bind_addr(id, (struct sockaddr *)&any6)) {
		snprintf(addr, len, "0.0.0.0:%u and [::]:%u", port, port);
		return 0;
	}
	err = errno;
	if (err != EAFNOSUPPORT && err != EINVAL)
		return err ? -err : -EIO;
ipv4:
	addr_str((struct sockaddr *)&any4, addr, len);
	if (rdma_bind_addr(id, (struct sockaddr *)&any4))
		return errno ? -errno : -EIO;
	return 0;
}

int rk_cm_bind_listen(struct rdma_cm_id *id, const char *bind_ip, uint16_t port, int backlog)
{
	struct addrinfo *ai = NULL;
	char addr[80];
	int ret;

	if (bind_ip) {
		ret = lookup(bind_ip, port, AI_PASSIVE, &ai);
		if (ret)
			return ret;
		addr_str(ai->ai_addr, addr, sizeof(addr));
		if (rdma_bind_addr(id, ai->ai_addr))
			ret = errno ? -errno : -EIO;
	} else {
		ret = bind_any(id, port, addr, sizeof(addr));
	}
	if (!ret && rdma_listen(id, backlog))
		ret = errno ? -errno : -EIO;
	if (ret) {
		/* On the wildcard address the kernel's RDMA CM says EADDRNOTAVAIL
		 * for a port another listener holds. */
		if (ret == -EADDRNOTAVAIL && !bind_ip)
			ret = -EADDRINUSE;
		ret = bind_error(ret, addr, port);
	} else {
		rk_info("listening for RDMA CM connections on %s", addr);
	}
	if (ai)
		freeaddrinfo(ai);
	return ret;
}

static int cm_listen(const char *bind_ip, uint16_t port, enum rdma_port_space ps,
		     const struct rk_traffic *traffic, struct rk_cm **listener_p)
{
	struct cm_conn *c;
	int ret;

	ret = new_conn(ps, &c);
	if (ret)
		return ret;
	ret = set_tos(c->cm.id, traffic);
	if (ret)
		goto err_free_conn;
	ret = rk_cm_bind_listen(c->cm.id, bind_ip, port, CM_LISTEN_BACKLOG);
	if (ret)
		goto err_free_conn;
	/* Bound to one address, the listener knows its device already. */
	if (c->cm.id->verbs) {
		ret = attach_device(&c->cm);
		if (ret)
			goto err_free_conn;
	}
	c->cm.listening = true;
	*listener_p = &c->cm;
	return 0;

err_free_conn:
	free_conn(c);
	return ret;
}

int rk_cm_listen(const char *bind_ip, uint16_t port, struct rk_cm **listener_p)
{
	return cm_listen(bind_ip, port, RDMA_PS_TCP, NULL, listener_p);
}

int rk_cm_listen_ps(const char *bind_ip, uint16_t port, enum rdma_port_space ps,
		    const struct rk_traffic *traffic, struct rk_cm **listener_p)
{
	return cm_listen(bind_ip, port, ps, traffic, listener_p);
}

/* Whether RDMA CM binds a to device's port: a quiet probe on an id of its
 * own (rk_cm_bind_listen() would log every address that has no device). */
static bool binds_to(const struct sockaddr *a, const char *device, uint8_t port_num)
{
	struct rdma_cm_id *id;
	bool yes;

	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		return false;
	yes = !rdma_bind_addr(id, (struct sockaddr *)a) && id->verbs &&
	      !strcmp(ibv_get_device_name(id->verbs->device), device) && id->port_num == port_num;
	rdma_destroy_id(id);
	return yes;
}

/* The first address (IPv4 before IPv6, no link-local) that binds to device's
 * port into addr; false when none does. */
static bool device_addr(const char *device, uint8_t port_num, char *addr, size_t len)
{
	static const int families[] = {AF_INET, AF_INET6};
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return false;
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]) && !found; f++) {
		for (i = ifa; i && !found; i = i->ifa_next) {
			const struct sockaddr *a = i->ifa_addr;

			if (!a || a->sa_family != families[f])
				continue;
			if (a->sa_family == AF_INET6 &&
			    IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)a)->sin6_addr))
				continue;
			found = binds_to(a, device, port_num) &&
				!getnameinfo(a, a->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
					     sizeof(struct sockaddr_in6), addr, (socklen_t)len,
					     NULL, 0, NI_NUMERICHOST);
		}
	}
	freeifaddrs(ifa);
	return found;
}

int rk_cm_listen_on_device(const char *device, uint8_t port_num, char *addr, size_t addr_len,
			   uint16_t *port_p, struct rk_cm **listener_p)
{
	struct rk_cm *l;
	int ret;

	if (!device_addr(device, port_num, addr, addr_len)) {
		rk_error("no address of this host reaches %s port %u through RDMA CM: its "
			 "netdev needs an IP address (ip addr add ADDR dev NETDEV)", device, port_num);
		return -ENODEV;
	}
	ret = rk_cm_listen(addr, 0, &l);
	if (ret)
		return ret;
	*port_p = ntohs(rdma_get_src_port(l->id));
	*listener_p = l;
	return 0;
}

/* Encode an ERROR message with code and reason for a reject's private data. */
static int encode_reason(int code, const char *reason, uint8_t *buf, size_t len)
{
	struct rk_msg msg;

	rk_msg_error(&msg, code, "%s", reason ? reason : "");
	return rk_wire_encode(&msg, buf, len);
}

int rk_cm_reject_id(struct rdma_cm_id *id, int code, const char *peer, const char *reason)
{
	uint8_t buf[RK_WIRE_MAX_LEN];
	int len, ret;

	len = encode_reason(code, reason, buf, sizeof(buf));
	if (len > 0 && rdma_reject(id, buf, (uint8_t)len) == 0)
		return 0;
	/* Some transports carry less private data in a reject: refuse without it. */
	if (rdma_reject(id, NULL, 0)) {
		ret = errno ? -errno : -EIO;
		rk_error("reject the connection request from %s: %m", peer);
		return ret;
	}
	rk_warn("rejected the connection request from %s without the reason (\"%s\"): the "
		"transport took no private data of %d bytes",
		peer, reason ? reason : "", len);
	return 0;
}

/* The MTU (bytes) a connect request's path asks for, and this port's active
 * one; false when there is none to judge by (iWARP, no port to ask). */
static bool request_mtus(struct rdma_cm_id *id, int *theirs_p, int *ours_p)
{
	struct ibv_port_attr pa;

	if (!id->route.num_paths || !id->route.path_rec || !id->verbs ||
	    ibv_query_port(id->verbs, id->port_num, &pa))
		return false;
	*theirs_p = rk_mtu_bytes((enum ibv_mtu)id->route.path_rec[0].mtu);
	*ours_p = rk_mtu_bytes(pa.active_mtu);
	return true;
}

/* rk_cm_request_mtu_check() on MTUs already known: 0, or -EMSGSIZE and why. */
static int mtu_check(int theirs, int ours, char *why, size_t why_len)
{
	if (theirs <= ours)
		return 0;
	snprintf(why, why_len, "your path MTU %d is above this server's port MTU %d: lower yours "
		 "to %d (RDMA CM takes the client's)", theirs, ours, ours);
	return -EMSGSIZE;
}

int rk_cm_request_mtu_check(struct rdma_cm_id *id, char *why, size_t why_len)
{
	int theirs, ours;

	return request_mtus(id, &theirs, &ours) ? mtu_check(theirs, ours, why, why_len) : 0;
}

/* Reject id's pending request, with reason in the private data when it fits. */
static int reject_id(struct rdma_cm_id *id, const char *peer, const char *reason)
{
	return rk_cm_reject_id(id, -ECONNREFUSED, peer, reason);
}

/* The CM_HELLO at the start of a connection's private data (RoCE and IB pad
 * it to the CM's size): 0 and *msg_p, or -EBADMSG (or rk_wire_decode()'s
 * error) with the reason in why. */
static int decode_cm_hello(const uint8_t *data, size_t len, struct rk_msg *msg_p, char *why,
			   size_t why_len)
{
	int ret;

	if (len < RK_WIRE_CM_HELLO_LEN) {
		snprintf(why, why_len, "%zu bytes of private data, not a %d-byte CM_HELLO", len,
			 RK_WIRE_CM_HELLO_LEN);
		return -EBADMSG;
	}
	ret = rk_wire_decode(data, RK_WIRE_CM_HELLO_LEN, msg_p, why, why_len);
	if (!ret && msg_p->type != RK_MSG_CM_HELLO) {
		snprintf(why, why_len, "a %s message, not CM_HELLO", rk_msg_type_str(msg_p->type));
		ret = -EBADMSG;
	}
	return ret;
}

/* A client that keeps the path MTU RDMA CM gave it: refused (and c freed)
 * when that is above this port's (rk_cm_request_mtu_check()). */
static int refuse_bigger_mtu(struct cm_conn *c)
{
	struct rdma_cm_id *id = c->cm.id;
	char reason[160]; /* about 90 bytes: fits the ERROR text, uncut */
	int theirs, ours;

	if (!request_mtus(id, &theirs, &ours) || !mtu_check(theirs, ours, reason, sizeof(reason)))
		return 0;
	rk_error("connect request from %s: its path MTU is %d bytes, above the active MTU %d of "
		 "%s port %u. RDMA CM hands the server the client's MTU, so this side's packets "
		 "would not fit its link: give both netdevs the same MTU (ip link set DEV mtu N), "
		 "or use the TCP exchange, which takes the smaller",
		 c->cm.peer_addr, theirs, ours, ibv_get_device_name(id->verbs->device),
		 id->port_num);
	rk_cm_reject_id(id, -EMSGSIZE, c->cm.peer_addr, reason);
	c->has_req = false;
	rk_cm_destroy(&c->cm);
	return -EMSGSIZE;
}

/* Wait for a connect request; with any, whatever private data it carries
 * (another program's) is kept as it came instead of being checked. */
static int take_request(struct rk_cm *listener, int timeout_ms, bool any, struct rk_cm **cm_p)
{
	struct cm_event ev;
	struct cm_conn *c;
	struct rk_msg msg;
	char what[128], why[160], local[80], reason[256];
	int ret;

	if (!listener->listening) {
		rk_error("wait for a connect request: this RDMA CM id is not listening");
		return -EINVAL;
	}
	snprintf(what, sizeof(what), "wait for a connect request on %s",
		 addr_str(rdma_get_local_addr(listener->id), local, sizeof(local)));
	/* A stop request that came before the wait (a server setting up)
	 * ends it too: its signal's EINTR was spent then. Only here: the
	 * other waits (a disconnect's) go on after a stop. */
	if (rk_stop_requested())
		return -EINTR; /* not an error */
	ret = cm_get_event(listener->channel, timeout_ms, &ev);
	if (ret == -ETIMEDOUT) {
		rk_error("%s: no client within %d ms", what, timeout_ms);
		return ret;
	}
	if (ret)
		return ret;
	if (ev.type != RDMA_CM_EVENT_CONNECT_REQUEST)
		return event_error(what, &ev, RDMA_CM_EVENT_CONNECT_REQUEST);

	c = calloc(1, sizeof(*c));
	if (!c) {
		reject_id(ev.id, "a client", "the server is out of memory");
		rdma_destroy_id(ev.id);
		return -ENOMEM;
	}
	c->cm.id = ev.id;
	c->cm.id->context = c;
	c->has_req = true;
	c->req_initiator_depth = ev.initiator_depth;
	c->req_responder_resources = ev.responder_resources;
	addr_str(rdma_get_peer_addr(ev.id), c->cm.peer_addr, sizeof(c->cm.peer_addr));

	/* Its own channel, so that each connection's events wait for it alone. */
	c->cm.channel = rdma_create_event_channel();
	if (!c->cm.channel) {
		ret = errno ? -errno : -ENOMEM;
		rk_error("create an RDMA CM event channel for %s: %m", c->cm.peer_addr);
		goto err_reject;
	}
	if (rdma_migrate_id(c->cm.id, c->cm.channel)) {
		ret = errno ? -errno : -EIO;
		rk_error("move the connection from %s to its own event channel: %m",
			 c->cm.peer_addr);
		goto err_reject;
	}
	ret = attach_device(&c->cm);
	if (ret)
		goto err_reject;

	c->data_len = ev.data_len;
	memcpy(c->data, ev.data, ev.data_len);
	if (any) {
		/* Another program's client keeps its own MTU (RDMA CM's). */
		if (!is_ud_id(&c->cm)) {
			ret = refuse_bigger_mtu(c);
			if (ret)
				return ret;
		}
		rk_info("connect request from %s (%u bytes of private data)", c->cm.peer_addr,
			ev.data_len);
		*cm_p = &c->cm;
		return 0;
	}
	ret = decode_cm_hello(ev.data, ev.data_len, &msg, why, sizeof(why));
	if (ret) {
		rk_error("connect request from %s is not from rdmakit: %s (rejected; is the "
			 "client another program, or another rdmakit version?)",
			 c->cm.peer_addr, why);
		snprintf(reason, sizeof(reason), "rdmakit server: malformed CM_HELLO: %s", why);
		rk_cm_reject(&c->cm, reason);
		rk_cm_destroy(&c->cm);
		return ret;
	}
	c->peer_mtu = (enum ibv_mtu)((msg.u.cm.flags & RK_BUF_MTU_MASK) >> RK_BUF_MTU_SHIFT);
	msg.u.cm.flags &= ~RK_BUF_MTU_MASK;
	/* An rdmakit client that says its MTU takes the smaller; one that does
	 * not (an older one) cannot. */
	if (!c->peer_mtu) {
		ret = refuse_bigger_mtu(c);
		if (ret)
			return ret;
	}
	c->cm.peer = msg.u.cm;
	c->cm.has_peer = true;
	rk_info("connect request from %s", c->cm.peer_addr);
	*cm_p = &c->cm;
	return 0;

err_reject:
	reject_id(c->cm.id, c->cm.peer_addr, "the server could not set up the connection");
	rk_cm_destroy(&c->cm);
	return ret;
}

int rk_cm_refuse_waiting(struct rk_cm *listener, int code, const char *reason)
{
	struct cm_event ev;
	char peer[80];
	int n = 0;

	while (listener && listener->listening && !cm_get_event(listener->channel, 0, &ev)) {
		if (ev.type != RDMA_CM_EVENT_CONNECT_REQUEST)
			continue;
		addr_str(rdma_get_peer_addr(ev.id), peer, sizeof(peer));
		rk_info("refusing %s: %s", peer, reason);
		rk_cm_reject_id(ev.id, code, peer, reason);
		rdma_destroy_id(ev.id);
		n++;
	}
	return n;
}

int rk_cm_get_request(struct rk_cm *listener, int timeout_ms, struct rk_cm **cm_p)
{
	return take_request(listener, timeout_ms, false, cm_p);
}

int rk_cm_get_request_any(struct rk_cm *listener, int timeout_ms, struct rk_cm **cm_p)
{
	return take_request(listener, timeout_ms, true, cm_p);
}

const uint8_t *rk_cm_private_data(const struct rk_cm *cm, size_t *len_p)
{
	const struct cm_conn *c = (const struct cm_conn *)cm;

	*len_p = c->data_len;
	return c->data;
}

/* This port's active MTU now (a netdev's MTU can change), or 0. */
static enum ibv_mtu port_mtu(const struct rk_cm *cm)
{
	struct ibv_port_attr pa;

	return ibv_query_port(cm->id->verbs, cm->port_num, &pa) ? 0 : pa.active_mtu;
}

/* Move qp to state with the attributes RDMA CM gives for it, as librdmacm
 * does for a QP attached to the id. RTR: the path MTU at most mtu (0: as CM
 * says) and rd_atomic READs served; RTS: rd_atomic READs issued (-1 both:
 * as CM says). */
static int cm_qp_modify(struct rk_cm *cm, struct ibv_qp *qp, enum ibv_qp_state state,
			enum ibv_mtu mtu, int rd_atomic)
{
	struct ibv_qp_attr a = {.qp_state = state};
	int mask, ret;

	if (rdma_init_qp_attr(cm->id, &a, &mask)) {
		ret = errno ? -errno : -EIO;
		rk_error("QP 0x%x to %s for %s: RDMA CM gave no attributes: %m", qp->qp_num,
			 rk_qp_state_str(state), cm->peer_addr);
		return ret;
	}
	/* librdmacm's workaround: the kernel sets RoCE-only bits on IB. */
	if (rk_device_port(cm->dev, cm->port_num)->link_layer == IBV_LINK_LAYER_INFINIBAND)
		mask &= ~0xe00000;
	if (state == IBV_QPS_RTR) {
		if (mtu && rk_mtu_bytes(mtu) < rk_mtu_bytes(a.path_mtu))
			a.path_mtu = mtu;
		if (rd_atomic >= 0)
			a.max_dest_rd_atomic = (uint8_t)rd_atomic;
	} else if (state == IBV_QPS_RTS && rd_atomic >= 0) {
		a.max_rd_atomic = (uint8_t)rd_atomic;
	}
	ret = rk_verbs_err(ibv_modify_qp(qp, &a, mask));
	if (ret)
		rk_error("QP 0x%x to %s for %s: %s", qp->qp_num, rk_qp_state_str(state),
			 cm->peer_addr, rk_strerror(ret));
	return ret;
}

/* The smaller of two MTUs, 0 meaning "not known". */
static enum ibv_mtu mtu_min(enum ibv_mtu a, enum ibv_mtu b)
{
	if (!a || !b)
		return a ? a : b;
	return rk_mtu_bytes(a) < rk_mtu_bytes(b) ? a : b;
}

/* INIT again (CM's attributes now that the peer is known), RTR, RTS: the
 * path MTU at most mtu (0: CM's). */
static int cm_qp_connect(struct rk_cm *cm, struct ibv_qp *qp, enum ibv_mtu mtu, int responder,
			 int initiator)
{
	int ret = cm_qp_modify(cm, qp, IBV_QPS_INIT, 0, -1);

	if (!ret)
		ret = cm_qp_modify(cm, qp, IBV_QPS_RTR, mtu, responder);
	if (!ret)
		ret = cm_qp_modify(cm, qp, IBV_QPS_RTS, 0, initiator);
	return ret;
}

/* The connection stops: its QP to ERR, as librdmacm's rdma_disconnect()
 * does for an attached one (its receives flush). */
static void cm_qp_error(struct rk_cm *cm)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	struct ibv_qp *qp = conn_of(cm)->qp;

	if (qp && ibv_modify_qp(qp, &a, IBV_QP_STATE))
		rk_debug("QP 0x%x to ERR on disconnect from %s failed", qp->qp_num, cm->peer_addr);
}

/* rk_qp_destroy()'s hook for a QP of rk_cm_create_qp(): the connection
 * stops moving it to ERR on disconnect; the caller frees qp. */
static void cm_qp_destroy(struct rk_qp *qp)
{
	struct cm_conn *c = qp->cm_id->context;
	int ret;

	if (c && c->qp == qp->qp)
		c->qp = NULL;
	ret = ibv_destroy_qp(qp->qp);
	if (ret)
		rk_warn("destroy QP 0x%x: %s", qp->qp->qp_num, rk_strerror(rk_verbs_err(ret)));
}

int rk_cm_create_qp(struct rk_cm *cm, struct ibv_pd *pd, struct rk_cq *send_cq,
		    struct rk_cq *recv_cq, const struct rk_qp_init_attr *attr, struct rk_qp **qp_p)
{
	struct ibv_qp_init_attr ia, got;
	struct ibv_qp_attr qa;
	struct qp_hooked *h;
	struct rk_qp *qp;
	int ret;

	if (cm->listening || !cm->dev) {
		rk_error("create a QP through RDMA CM: a listener has no connection (use the id "
			 "from rk_cm_get_request())");
		return -EINVAL;
	}
	if (attr->transport != RK_RC) {
		rk_error("create a QP through RDMA CM: rdmakit's CM connections are RC, not %s",
			 rk_transport_str(attr->transport));
		return -EINVAL;
	}
	if (pd->context != cm->id->verbs) {
		rk_error("create a QP through RDMA CM: the PD belongs to another device than %s, "
			 "which CM chose for %s (allocate the PD on cm->dev)",
			 cm->dev->info.name, cm->peer_addr);
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->destroy = cm_qp_destroy;
	qp = &h->qp;
	rk_qp_verbs_attr(attr, send_cq, recv_cq, &ia); /* RC: checked above */
	qp->qp = ibv_create_qp(pd, &ia);
	if (!qp->qp) {
		ret = errno ? -errno : -ENOMEM;
		rk_error("create RC QP for RDMA CM on %s (send %u x %u SGE, recv %u x %u SGE, "
			 "inline %u): %m (device limits: %d WRs, %d SGEs)",
			 cm->dev->info.name, ia.cap.max_send_wr, ia.cap.max_send_sge,
			 ia.cap.max_recv_wr, ia.cap.max_recv_sge, ia.cap.max_inline_data,
			 cm->dev->info.max_qp_wr, cm->dev->info.max_sge);
		goto err_free_qp;
	}
	ret = cm_qp_modify(cm, qp->qp, IBV_QPS_INIT, 0, -1);
	if (ret)
		goto err_destroy_qp;
	ret = rk_verbs_err(ibv_query_qp(qp->qp, &qa,
					IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_CAP, &got));
	if (ret) {
		rk_error("query QP 0x%x made for RDMA CM: %s", qp->qp->qp_num, rk_strerror(ret));
		goto err_destroy_qp;
	}
	conn_of(cm)->qp = qp->qp;
	qp->cm_id = cm->id;
	qp->dev = cm->dev;
	qp->pd = pd;
	qp->transport = RK_RC;
	qp->port_num = cm->port_num;
	qp->state = qa.qp_state;
	/* siw's query leaves the state out (0, RESET); its idle QP takes
	 * receives, as INIT does. */
	if (rk_device_is_iwarp(cm->dev) && qp->state == IBV_QPS_RESET)
		qp->state = IBV_QPS_INIT;
	qp->has_gid = !rk_device_is_iwarp(cm->dev);
	qp->gid = cm->gid;
	qp->psn = 0; /* CM picks it; read back once connected */
	qp->qkey = RK_DEFAULT_QKEY;
	qp->cap = got.cap;
	qp->access = (int)qa.qp_access_flags;
	rk_path_defaults(&qp->path);
	rk_debug("created QP 0x%x for RDMA CM on %s port %u (%s)", qp->qp->qp_num, cm->dev->info.name,
		 qp->port_num, rk_qp_state_str(qp->state));
	*qp_p = qp;
	return 0;

err_destroy_qp:
	ibv_destroy_qp(qp->qp);
err_free_qp:
	free(h);
	return ret;
}

/* Read back what RDMA CM set on a connected QP: state, PSNs, the peer's QPN
 * and GID, the path, and the source GID index it really uses. */
static int qp_refresh(struct rk_cm *cm, struct rk_qp *qp)
{
	const int mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MTU | IBV_QP_AV |
			 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER |
			 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC;
	const struct rk_port_info *pi = rk_device_port(qp->dev, qp->port_num);
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int ret;

	ret = rk_verbs_err(ibv_query_qp(qp->qp, &a, mask, &ia));
	if (ret) {
		rk_error("query QP 0x%x after RDMA CM connected it: %s", qp->qp->qp_num,
			 rk_strerror(ret));
		return ret;
	}
	/* siw's query leaves the state out (0, RESET): the iWARP CM said
	 * ESTABLISHED, which it says only once it moved the QP to RTS. */
	if (rk_device_is_iwarp(cm->dev) && a.qp_state == IBV_QPS_RESET)
		a.qp_state = IBV_QPS_RTS;
	qp->state = a.qp_state;
	if (a.qp_state != IBV_QPS_RTS) {
		rk_error("RDMA CM reported the connection to %s established, but QP 0x%x is in %s, "
			 "not RTS",
			 cm->peer_addr, qp->qp->qp_num, rk_qp_state_str(a.qp_state));
		return -EPROTO;
	}
	qp->psn = a.sq_psn;
	qp->access = (int)a.qp_access_flags;
	qp->path.path_mtu = a.path_mtu;
	qp->path.min_rnr_timer = a.min_rnr_timer;
	qp->path.timeout = a.timeout;
	qp->path.retry_cnt = a.retry_cnt;
	qp->path.rnr_retry = a.rnr_retry;
	qp->path.max_rd_atomic = a.max_rd_atomic;
	qp->path.max_dest_rd_atomic = a.max_dest_rd_atomic;
	qp->path.sl = a.ah_attr.sl;
	qp->path.hop_limit = a.ah_attr.grh.hop_limit;
	qp->path.traffic_class = a.ah_attr.grh.traffic_class;
	qp->path.flow_label = a.ah_attr.grh.flow_label;

	memset(&qp->remote, 0, sizeof(qp->remote));
	qp->remote.transport = RK_RC;
	qp->remote.link_layer = pi ? pi->link_layer : 0;
	qp->remote.lid = a.ah_attr.dlid;
	qp->remote.qpn = a.dest_qp_num;
	qp->remote.psn = a.rq_psn;
	qp->remote.mtu = a.path_mtu;
	if (a.ah_attr.is_global)
		qp->remote.gid = a.ah_attr.grh.dgid;
	qp->remote.gid_type = qp->gid.type;
	qp->has_remote = true;

	/* The index CM set is the truth; the table lookup only guessed between
	 * entries holding the same GID. */
	if (a.ah_attr.is_global && a.ah_attr.grh.sgid_index != qp->gid.index) {
		struct rk_gid_table *t;

		if (rk_gid_table_read(qp->dev, qp->port_num, &t) == 0) {
			const struct rk_gid_entry *e =
				rk_gid_table_find(t, a.ah_attr.grh.sgid_index);

			if (e) {
				cm->gid.index = e->index;
				cm->gid.type = e->type;
				cm->gid.gid = e->gid;
				snprintf(cm->gid.why, sizeof(cm->gid.why),
					 "the source GID index RDMA CM set on QP 0x%x (%s%s%s)",
					 qp->qp->qp_num, rk_gid_type_str(e->type),
					 e->ip[0] ? " " : "", e->ip);
				qp->gid = cm->gid;
				qp->remote.gid_type = e->type;
			}
			rk_gid_table_free(t);
		}
	}
	return 0;
}

/* CM leaves min_rnr_timer at 0, the longest RNR NAK delay (655 ms): a SEND
 * that arrives just before the peer posts its receive then waits that long,
 * which a control channel on the QP feels at every step. Use rdmakit's
 * default instead; RTS -> RTS may change it. */
static void shorten_rnr_timer(struct rk_qp *qp)
{
	struct rk_path_attr def;
	struct ibv_qp_attr a;
	int ret;

	rk_path_defaults(&def);
	if (qp->path.min_rnr_timer == def.min_rnr_timer)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.min_rnr_timer = def.min_rnr_timer;
	ret = rk_verbs_err(ibv_modify_qp(qp->qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER));
	if (ret) {
		rk_warn("QP 0x%x: keeping RDMA CM's min_rnr_timer %u (setting %u: %s); a SEND "
			"that finds no receive waits up to 655 ms",
			qp->qp->qp_num, qp->path.min_rnr_timer, def.min_rnr_timer,
			rk_strerror(ret));
		return;
	}
	qp->path.min_rnr_timer = def.min_rnr_timer;
}

/* Our CM_HELLO: mine, and this port's MTU for the peer to take the smaller. */
static int encode_hello(struct rk_cm *cm, const struct rk_wire_buf *mine, uint8_t *buf,
			size_t len)
{
	struct rk_msg msg;
	int ret;

	memset(&msg, 0, sizeof(msg));
	msg.type = RK_MSG_CM_HELLO;
	msg.u.cm = *mine;
	msg.u.cm.flags |= (uint32_t)port_mtu(cm) << RK_BUF_MTU_SHIFT;
	ret = rk_wire_encode(&msg, buf, len);
	if (ret < 0)
		rk_error("encode the CM_HELLO private data: a field is out of range (flags 0x%x)",
			 mine->flags);
	return ret;
}

static uint8_t rd_atomic(int device_max, unsigned int peer_max)
{
	unsigned int n = device_max > 0 ? (unsigned int)device_max : 0;

	if (n > CM_MAX_RD_ATOMIC)
		n = CM_MAX_RD_ATOMIC;
	return (uint8_t)(n < peer_max ? n : peer_max);
}

int rk_cm_connect(struct rk_cm *cm, struct rk_qp *qp, const struct rk_wire_buf *mine,
		  int timeout_ms)
{
	uint8_t hello[RK_WIRE_MAX_LEN];
	const uint8_t *data;
	struct rk_msg msg;
	char why[160];
	size_t n;
	int len, ret;

	len = encode_hello(cm, mine, hello, sizeof(hello));
	if (len < 0)
		return len;
	/* The connection itself is the raw one; what is ours is the reply. */
	ret = rk_cm_connect_raw(cm, qp, hello, (size_t)len, timeout_ms);
	if (ret)
		return ret;
	data = rk_cm_private_data(cm, &n);
	ret = decode_cm_hello(data, n, &msg, why, sizeof(why));
	if (ret) {
		rk_error("connect QP 0x%x to %s: the server accepted, but its reply is not from "
			 "rdmakit: %s (is the server another program, or another rdmakit version?)",
			 qp->qp->qp_num, cm->peer_addr, why);
		return ret;
	}
	cm->peer = msg.u.cm;
	cm->peer.flags &= ~RK_BUF_MTU_MASK; /* taken by the raw connect */
	cm->has_peer = true;
	return 0;
}

int rk_cm_accept(struct rk_cm *cm, struct rk_qp *qp, const struct rk_wire_buf *mine, int timeout_ms)
{
	uint8_t hello[RK_WIRE_MAX_LEN];
	int len;

	len = encode_hello(cm, mine, hello, sizeof(hello));
	if (len < 0)
		return len;
	/* As rk_cm_connect(): the raw accept, with our CM_HELLO as its data. */
	return rk_cm_accept_raw(cm, qp, hello, (size_t)len, timeout_ms);
}

int rk_cm_reject(struct rk_cm *cm, const char *reason)
{
	struct cm_conn *c = conn_of(cm);
	int ret;

	if (!c->has_req) {
		rk_error("reject: no connect request is waiting on this RDMA CM id");
		return -EINVAL;
	}
	ret = reject_id(cm->id, cm->peer_addr, reason);
	if (ret)
		return ret;
	c->has_req = false;
	rk_info("rejected the connect request from %s: %s", cm->peer_addr,
		reason ? reason : "(no reason)");
	return 0;
}

bool rk_cm_retry_worth(int err)
{
	/* No listener yet, or not reachable yet: the server may be starting;
	 * busy with another client: it may be done soon. */
	return err == -ECONNREFUSED || err == -EHOSTUNREACH || err == -EBUSY;
}

int rk_cm_connect_retry(int timeout_ms, int (*attempt)(void *arg), int (*reset)(void *arg),
			void *arg, int *tries_p)
{
	int64_t deadline = now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
	int ret, tries = 1;

	for (;;) {
		ret = attempt(arg);
		if (!ret || !rk_cm_retry_worth(ret) ||
		    now_ms() + RK_CM_RETRY_INTERVAL_MS > deadline)
			break;
		usleep(RK_CM_RETRY_INTERVAL_MS * 1000);
		if (reset) {
			ret = reset(arg);
			if (ret)
				break;
		}
		tries++;
	}
	if (tries_p)
		*tries_p = tries;
	return ret;
}

bool rk_cm_peer_left(struct rk_cm *cm)
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
		cm_qp_error(cm);
		rdma_disconnect(cm->id); /* answer it */
		cm->connected = false;
	}
	return left;
}

/* Wait up to timeout_ms (-1: forever) for the connection's DISCONNECTED,
 * dropping other events: 0, or cm_get_event()'s error (-ETIMEDOUT). */
static int cm_wait_disconnected(struct rk_cm *cm, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	struct cm_event ev;

	for (;;) {
		int ret = cm_get_event(cm->channel, ms_left(deadline), &ev);

		if (ret)
			return ret;
		if (ev.type == RDMA_CM_EVENT_DISCONNECTED)
			return 0;
		rk_debug("ignoring %s on %s", rk_cm_event_name(ev.type), cm->peer_addr);
	}
}

bool rk_cm_wait_peer_left(struct rk_cm *cm, int timeout_ms)
{
	if (!cm || !cm->channel || !cm->connected)
		return false;
	if (cm_wait_disconnected(cm, timeout_ms)) {
		rk_debug("%s did not disconnect within %d ms", cm->peer_addr, timeout_ms);
		return false;
	}
	cm_qp_error(cm);
	rdma_disconnect(cm->id); /* answer it */
	cm->connected = false;
	return true;
}

void rk_cm_disconnect(struct rk_cm *cm, int timeout_ms)
{
	if (!cm || !cm->id || !cm->connected)
		return;
	/* After the peer's disconnect this only answers it, which is fine too. */
	cm_qp_error(cm);
	if (rdma_disconnect(cm->id))
		rk_debug("disconnect from %s: %m", cm->peer_addr);
	cm->connected = false;
	if (cm_wait_disconnected(cm, timeout_ms) == -ETIMEDOUT)
		rk_debug("disconnect from %s: no %s within %d ms", cm->peer_addr,
			 rk_cm_event_name(RDMA_CM_EVENT_DISCONNECTED), timeout_ms);
}

void rk_cm_destroy(struct rk_cm *cm)
{
	struct cm_conn *c;

	if (!cm)
		return;
	c = conn_of(cm);
	/* A request never answered is refused, so the client hears at once. */
	if (c->has_req && cm->id)
		rdma_reject(cm->id, NULL, 0);
	if (cm->id && rdma_destroy_id(cm->id))
		rk_warn("destroy RDMA CM id of %s: %m",
			cm->peer_addr[0] ? cm->peer_addr : "a listener");
	if (cm->channel)
		rdma_destroy_event_channel(cm->channel);
	rk_device_close(cm->dev);
	free(c);
}

/* ---- other programs' protocols: private data as it comes, and UD ---- */

/* The QP and private data rk_cm_connect_raw() and rk_cm_accept_raw() take:
 * 0, or -EINVAL after saying what is wrong ("DOING PEER: ..."). */
static int raw_check(const struct rk_cm *cm, const struct rk_qp *qp, size_t len, bool ud,
		     const char *doing)
{
	if (qp && (ud ? qp->transport == RK_UD : qp->cm_id == cm->id) && len <= UINT8_MAX)
		return 0;
	rk_error("%s %s: %s", doing, cm->peer_addr,
		 len > UINT8_MAX ? "private data longer than 255 bytes" :
		 ud ? "a UD connection (RDMA_PS_UDP) needs a UD QP" :
		      "the QP was not created on this connection (use rk_cm_create_qp())");
	return -EINVAL;
}

/* The connection parameters of both sides: the private data, and for UD
 * (SIDR) our QPN, for RC the READs and atomics this device serves and issues
 * within what the peer issues (peer_initiator) and serves (peer_responder). */
static void raw_param(const struct rk_cm *cm, const struct rk_qp *qp, const void *data,
		      size_t len, bool ud, unsigned int peer_initiator, unsigned int peer_responder,
		      struct rdma_conn_param *param)
{
	memset(param, 0, sizeof(*param));
	param->private_data = data;
	param->private_data_len = (uint8_t)len;
	param->qp_num = qp->qp->qp_num; /* RC: ours, not attached to the id */
	if (ud)
		return;
	param->srq = qp->qp->srq != NULL;
	param->responder_resources = rd_atomic(cm->dev->info.max_qp_rd_atom, peer_initiator);
	param->initiator_depth = rd_atomic(cm->dev->info.max_qp_init_rd_atom, peer_responder);
	param->retry_count = cm_retry_count();
	param->rnr_retry_count = CM_RNR_RETRY_COUNT;
}

/* Our side of the handshake, from the checks to rdma_connect() (accept false)
 * or rdma_accept() of the waiting request; what names it for later errors. */
static int raw_send(struct rk_cm *cm, struct rk_qp *qp, const void *data, size_t len, bool accept,
		    char *what, size_t what_len)
{
	struct cm_conn *c = conn_of(cm);
	struct rdma_conn_param param;
	bool ud = is_ud_id(cm);
	int ret;

	if (accept && !c->has_req) {
		rk_error("accept: no connect request is waiting on this RDMA CM id");
		return -EINVAL;
	}
	ret = raw_check(cm, qp, len, ud, accept ? "accept" : "connect to");
	if (ret)
		return ret;
	if (accept) {
		snprintf(what, what_len, "accept %s on %s QP 0x%x", cm->peer_addr, ud ? "UD" : "RC",
			 qp->qp->qp_num);
		/* Serve as many READs as the client will issue, issue as many as it
		 * serves, both within this device's limits. */
		raw_param(cm, qp, data, len, ud, c->req_initiator_depth, c->req_responder_resources,
			  &param);
		/* The client's MTU came in its request (and CM_HELLO): the smaller
		 * of it and ours. */
		/* On iWARP the CM moves the QP to RTS itself, once MPA is done. */
		if (!ud && !rk_device_is_iwarp(cm->dev)) {
			ret = cm_qp_connect(cm, qp->qp, mtu_min(port_mtu(cm), c->peer_mtu),
					    param.responder_resources, param.initiator_depth);
			if (ret)
				return ret; /* the request is refused when cm goes */
		}
		ret = rdma_accept(cm->id, &param);
	} else {
		snprintf(what, what_len, "connect %s QP 0x%x to %s", ud ? "UD" : "RC",
			 qp->qp->qp_num, cm->peer_addr);
		/* SIDR: the server answers with its QPN and Q_Key; ours travels in our
		 * datagrams. RC: what the server allows is settled by its answer. */
		raw_param(cm, qp, data, len, ud, UINT8_MAX, UINT8_MAX, &param);
		ret = rdma_connect(cm->id, &param);
	}
	if (ret) {
		ret = errno ? -errno : -EIO;
		/* iWARP connects its TCP stream here: no listener (yet) is
		 * ECONNREFUSED at once, which a client retries on while its
		 * server starts (info, as for IB's REJECTED: the caller says it
		 * gave up, if it does). */
		rk_log(!accept && ret == -ECONNREFUSED ? RK_LOG_INFO : RK_LOG_ERROR, "%s: %s", what,
		       rk_strerror(ret));
		return ret;
	}
	if (accept)
		c->has_req = false;
	return 0;
}

/* An RC connection is ESTABLISHED: read back what CM set on the QP, and say
 * so ("connected to PEER", "accepted PEER"). */
static int raw_established(struct rk_cm *cm, struct rk_qp *qp, const char *done)
{
	int ret;

	cm->connected = true;
	ret = qp_refresh(cm, qp);
	if (ret)
		return ret;
	if (rk_device_is_iwarp(cm->dev)) {
		/* No RNR NAK on iWARP, and no peer QPN either side can see. */
		rk_info("%s %s: QP 0x%x (iWARP)", done, cm->peer_addr, qp->qp->qp_num);
		return 0;
	}
	shorten_rnr_timer(qp);
	rk_info("%s %s: QP 0x%x <-> peer QP 0x%x", done, cm->peer_addr, qp->qp->qp_num,
		qp->remote.qpn);
	return 0;
}

/* The MTU a CM_HELLO in data says, or 0 (none, or not a CM_HELLO). */
static enum ibv_mtu hello_mtu(const uint8_t *data, size_t len)
{
	struct rk_msg m;
	char why[8];

	if (decode_cm_hello(data, len, &m, why, sizeof(why)))
		return 0;
	return (enum ibv_mtu)((m.u.cm.flags & RK_BUF_MTU_MASK) >> RK_BUF_MTU_SHIFT);
}

/* RC client: the server's reply (CONNECT_RESPONSE, since the QP is ours),
 * then our QP to RTS at the smaller MTU of ours and the one the reply says,
 * then the RTU (rdma_establish()). */
static int raw_connect_rc(struct rk_cm *cm, struct rk_qp *qp, const char *what, int timeout_ms)
{
	struct cm_conn *c = conn_of(cm);
	bool iwarp = rk_device_is_iwarp(cm->dev);
	struct cm_event ev;
	int ret;

	/* iWARP: the CM brings the QP to RTS itself and says ESTABLISHED with
	 * the server's private data; there is no reply to answer. */
	ret = cm_wait(cm->channel, iwarp ? RDMA_CM_EVENT_ESTABLISHED :
					   RDMA_CM_EVENT_CONNECT_RESPONSE,
		      timeout_ms, what, &ev);
	if (ret)
		return ret;
	c->data_len = ev.data_len;
	memcpy(c->data, ev.data, ev.data_len);
	if (iwarp)
		return raw_established(cm, qp, "connected to");
	c->peer_mtu = hello_mtu(c->data, c->data_len);
	ret = cm_qp_connect(cm, qp->qp, mtu_min(port_mtu(cm), c->peer_mtu), -1, -1);
	if (ret) {
		rdma_reject(cm->id, NULL, 0); /* the server hears at once */
		return ret;
	}
	if (rdma_establish(cm->id)) {
		ret = errno ? -errno : -EIO;
		rk_error("%s: send the RTU (rdma_establish): %m", what);
		return ret;
	}
	return raw_established(cm, qp, "connected to");
}

int rk_cm_connect_raw(struct rk_cm *cm, struct rk_qp *qp, const void *data, size_t len,
		      int timeout_ms)
{
	struct cm_conn *c = conn_of(cm);
	struct cm_event ev;
	char what[128];
	int ret;

	ret = raw_send(cm, qp, data, len, false, what, sizeof(what));
	if (ret)
		return ret;
	if (!is_ud_id(cm))
		return raw_connect_rc(cm, qp, what, timeout_ms);
	ret = cm_wait(cm->channel, RDMA_CM_EVENT_ESTABLISHED, timeout_ms, what, &ev);
	if (ret)
		return ret;
	c->data_len = ev.data_len;
	memcpy(c->data, ev.data, ev.data_len);
	if (!ev.has_ud) {
		rk_error("%s: the SIDR reply carries no address", what);
		return -EPROTO;
	}
	c->has_ud = true;
	c->ud_ah = ev.ah_attr;
	c->ud_qpn = ev.qp_num;
	c->ud_qkey = ev.qkey;
	rk_info("%s: the server's QP is 0x%x, Q_Key 0x%x", what, ev.qp_num, ev.qkey);
	return 0;
}

int rk_cm_accept_raw(struct rk_cm *cm, struct rk_qp *qp, const void *data, size_t len,
		     int timeout_ms)
{
	struct cm_event ev;
	char what[128];
	int ret;

	ret = raw_send(cm, qp, data, len, true, what, sizeof(what));
	if (ret || is_ud_id(cm)) /* the SIDR reply went out: nothing more comes for UD */
		return ret;
	ret = cm_wait(cm->channel, RDMA_CM_EVENT_ESTABLISHED, timeout_ms, what, &ev);
	if (ret)
		return ret;
	return raw_established(cm, qp, "accepted");
}

int rk_cm_ud_peer(const struct rk_cm *cm, struct ibv_ah_attr *ah_p, uint32_t *qpn_p,
		  uint32_t *qkey_p)
{
	const struct cm_conn *c = (const struct cm_conn *)cm;

	if (!c->has_ud)
		return -ENOTCONN;
	*ah_p = c->ud_ah;
	*qpn_p = c->ud_qpn;
	*qkey_p = c->ud_qkey;
	return 0;
}
