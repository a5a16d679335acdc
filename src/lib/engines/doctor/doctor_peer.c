/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit doctor HOST: the path to a peer serving doctor clients, after the
 * local checks: TCP reach, RDMA CM's route, the connection (TCP exchange,
 * conn.h), both sides' GIDs, the MTUs, a checked SEND, WRITE and READ, a
 * bandwidth and latency probe; the verdict. The protocol is doctor_int.h's. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdmakit/conn.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/ops.h>
#include <rdmakit/pattern.h>
#include <rdmakit/stats.h>
#include <rdmakit/status.h>

#include "base/clock.h"
#include "engines/doctor/doctor_int.h"

#define DEFAULT_TIMEOUT_MS 5000
#define DEFAULT_PROBE_MS   2000
#define PROBE_MSG	   65536u
#define PROBE_WINDOW	   8
#define LAT_MSG		   8u
#define LAT_MAX_SAMPLES	   100000
#define WR_CHECK	   1
#define WR_PROBE	   100
#define PATH_ACK_TIMEOUT   16 /* 4.096 us x 2^16: 268 ms */

struct peer {
	struct rk_mr *mr; /* first: doc_release_mr() frees it */
	struct doc *d;
	const char *host;
	uint16_t port;
	int timeout_ms, probe_ms;
	char err[1024]; /* the first error the library logged in the current check */
	bool tcp_ok;
	char route_dev[64]; /* the device RDMA CM's route goes through */
	struct rk_conn *conn;
	bool path_ok; /* the connection still carries: go on */
	char skip_why[160];
	double mbps, lat_us;
	int path_mtu;
	char gid_type[16];
};

/* Start catching the library's first error for the check about to be made. */
static void catch_errors(struct peer *p)
{
	rk_log_thread_scope(NULL, p->err, sizeof(p->err));
}

/* The rest of the path's checks, skipped for why. */
static void skip(struct peer *p, const char *id, const char *title, const char *why)
{
	struct rk_doctor_check c;

	doc_begin(&c, id, NULL, 0, "%s", title);
	doc_status(&c, RK_DOCTOR_SKIP, 0);
	doc_seen(&c, "%s", why);
	doc_emit(p->d, &c);
}

/* ---- TCP reach ---- */

/* Connect to one address within timeout_ms, non-blocking: 0 or -errno
 * (-ETIMEDOUT when nothing answered). */
static int connect_one(const struct addrinfo *ai, int timeout_ms)
{
	struct pollfd pfd = {.events = POLLOUT};
	socklen_t len = sizeof(int);
	int fd, ret, soerr = 0;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		close(fd);
		return 0;
	}
	ret = -errno;
	if (ret == -EINPROGRESS) {
		pfd.fd = fd;
		do
			ret = poll(&pfd, 1, timeout_ms);
		while (ret < 0 && errno == EINTR);
		if (ret == 0)
			ret = -ETIMEDOUT;
		else if (ret < 0)
			ret = -errno;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
			ret = -errno;
		else
			ret = -soerr;
	}
	close(fd);
	return ret;
}

static void check_tcp(struct peer *p)
{
	struct addrinfo hints = {.ai_flags = AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
	struct rk_doctor_check c;
	struct addrinfo *res;
	char service[8];
	int ret = -EHOSTUNREACH, gai;

	doc_begin(&c, "peer_tcp", NULL, 0, "TCP to %s port %u", p->host, p->port);
	snprintf(service, sizeof(service), "%u", p->port);
	gai = getaddrinfo(p->host, service, &hints, &res);
	if (gai) {
		doc_status(&c, RK_DOCTOR_FAIL, -EADDRNOTAVAIL);
		doc_seen(&c, "the name %s does not resolve: %s", p->host, gai_strerror(gai));
		doc_fix(&c, "give the peer's address (or a name /etc/hosts or DNS knows)");
		doc_emit(p->d, &c);
		return;
	}
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		ret = connect_one(ai, p->timeout_ms);
		if (!ret || ret == -ECONNREFUSED)
			break;
	}
	freeaddrinfo(res);
	switch (ret) {
	case 0:
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "%s:%u accepts TCP connections", p->host, p->port);
		p->tcp_ok = true;
		break;
	case -ECONNREFUSED:
		doc_status(&c, RK_DOCTOR_FAIL, ret);
		doc_seen(&c, "nothing listens on %s:%u (connection refused)", p->host, p->port);
		doc_fix(&c, "run `rdmakit doctor --server` there%s", p->port == RK_DEFAULT_PORT ? "" :
			" with -p the same port");
		break;
	case -ETIMEDOUT:
		doc_status(&c, RK_DOCTOR_FAIL, ret);
		doc_seen(&c, "%s:%u: no answer within %d ms: the host is down or unreachable, or "
			 "a firewall drops TCP port %u (filtered)",
			 p->host, p->port, p->timeout_ms, p->port);
		doc_fix(&c, "check that %s is up and the address right (ping %s), and let TCP "
			"port %u through the firewalls between", p->host, p->host, p->port);
		break;
	case -EHOSTUNREACH:
	case -ENETUNREACH:
		doc_status(&c, RK_DOCTOR_FAIL, ret);
		doc_seen(&c, "%s:%u is unreachable: %s (no host answers at that address, or no "
			 "route to it)", p->host, p->port, rk_strerror(ret));
		doc_fix(&c, "check the address and that %s is up (ping %s), and the route to it "
			"(ip route get %s)", p->host, p->host, p->host);
		break;
	default:
		doc_status(&c, RK_DOCTOR_FAIL, ret);
		doc_seen(&c, "connect to %s:%u: %s", p->host, p->port, rk_strerror(ret));
		doc_fix(&c, "check the address and port, and the network between");
	}
	doc_emit(p->d, &c);
}

/* ---- RDMA CM's route ---- */

static void check_route(struct peer *p)
{
	const char *want = p->d->o->device;
	struct rk_doctor_check c;
	struct rk_cm *cm = NULL;
	char gid[64];
	int ret;

	doc_begin(&c, "peer_cm_route", NULL, 0, "RDMA CM route to %s", p->host);
	catch_errors(p);
	ret = rk_cm_resolve(p->host, p->port, p->timeout_ms, &cm);
	if (ret) {
		doc_status(&c, RK_DOCTOR_FAIL, ret);
		doc_seen(&c, "RDMA CM cannot resolve %s: %s", p->host,
			 p->err[0] ? p->err : rk_strerror(ret));
		doc_fix(&c, "the peer's address must be reachable through a netdev with an RDMA "
			"device: `ip route get %s` names the netdev, `rdma link` its device; check "
			"the peer is up (ping %s)", p->host, p->host);
		doc_emit(p->d, &c);
		return;
	}
	snprintf(p->route_dev, sizeof(p->route_dev), "%s", cm->dev->info.name);
	snprintf(c.device, sizeof(c.device), "%s", p->route_dev);
	c.port = cm->port_num;
	if (want && strcmp(want, p->route_dev)) {
		doc_status(&c, RK_DOCTOR_FAIL, -ENODEV);
		doc_seen(&c, "the route to %s goes through %s port %u, not -d %s", p->host,
			 p->route_dev, cm->port_num, want);
		doc_fix(&c, "use -d %s, or reach %s through %s's netdev (an address of its "
			"subnet, or a route: ip route add %s dev NETDEV)", p->route_dev, p->host, want,
			p->host);
	} else {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "%s resolves to %s port %u", p->host, p->route_dev, cm->port_num);
		if (cm->dev->ports && cm->dev->ports[cm->port_num - 1].link_layer !=
		    IBV_LINK_LAYER_UNSPECIFIED && !rk_gid_is_zero(&cm->gid.gid))
			doc_seen(&c, ", GID index %u %s (%s)", cm->gid.index,
				 rk_gid_str(&cm->gid.gid, gid, sizeof(gid)),
				 rk_gid_type_str(cm->gid.type));
	}
	rk_cm_destroy(cm);
	doc_emit(p->d, &c);
}

/* ---- the connection ---- */

static int client_prepare(struct rk_conn *conn, struct rk_wire_buf *request, int *qp_access,
			  char *why, size_t why_len, void *arg)
{
	struct peer *p = arg;
	int ret;

	(void)why;
	(void)why_len;
	ret = rk_mr_alloc(conn->pd, DOC_BUF_LEN, IBV_ACCESS_LOCAL_WRITE, &p->mr);
	if (ret)
		return ret;
	request->addr = (uintptr_t)p->mr->buf;
	request->len = p->mr->len;
	request->rkey = p->mr->mr->rkey;
	request->op = RK_WIRE_OP_DOCTOR;
	request->size = DOC_CHECK_LEN;
	request->offset = (uint64_t)p->probe_ms;
	*qp_access = 0;
	return 0;
}

void doc_release_mr(struct rk_conn *conn, void *arg)
{
	struct rk_mr **mr = arg;

	(void)conn;
	rk_mr_free(*mr);
	*mr = NULL;
}

/* What another rdmakit server lets a client do, for its kind. */
static const char *server_allows(const char *kind)
{
	static const struct {
		const char *kind, *allows;
	} kinds[] = {
		{"rc", "`rdmakit rc` clients (SEND, WRITE, READ and atomics on its buffer, each "
		       "byte checked: rdmakit rc HOST -o all)"},
		{"bench", "`rdmakit bench` clients (bandwidth and latency: rdmakit bench HOST)"},
		{"ping", "`rdmakit ping` clients (round trips: rdmakit ping HOST)"},
		{"ud", "`rdmakit ud` clients (UD datagrams: rdmakit ud HOST)"},
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i].kind))
			return kinds[i].allows;
	return "its own command's clients";
}

static void check_server(struct peer *p, const char *device)
{
	struct rk_conn_opts co = {
		.host = p->host,
		.port = p->port,
		.device = device,
		.gid_index = -1,
		.timeout_ms = p->timeout_ms,
		.prepare = client_prepare,
		.release = doc_release_mr,
		.arg = p,
	};
	struct rk_doctor_check c;
	struct rk_path_attr path;
	const char *at;
	char kind[32];
	int ret;

	/* A local ACK timeout of 268 ms (16), not 67: a software device on a
	   loaded host answers late at times, and a retry exceeded there would
	   be a false FAIL; a path that drops RoCE still fails in 2 s. */
	rk_path_defaults(&path);
	path.timeout = PATH_ACK_TIMEOUT;
	co.path = &path;
	doc_begin(&c, "peer_server", device, 0, "the server on %s port %u", p->host, p->port);
	catch_errors(p);
	ret = rk_conn_establish(&co, &p->conn);
	if (ret == -ECONNRESET || ret == -ECONNREFUSED) {
		/* A server of one client at a time (another command's, with
		   --persist) took the TCP check for a client that failed, and
		   listens afresh in a moment: once more. */
		usleep(1000 * 1000);
		catch_errors(p);
		ret = rk_conn_establish(&co, &p->conn);
	}
	at = strstr(p->err, "this is an rdmakit ");
	if (ret && at && sscanf(at, "this is an rdmakit %31[a-z_-] server", kind) == 1) {
		doc_status(&c, RK_DOCTOR_WARN, -EPROTONOSUPPORT);
		doc_seen(&c, "%s:%u is an rdmakit %s server, not a doctor server: it allows %s; "
			 "the RDMA checks of the path were not made", p->host, p->port, kind,
			 server_allows(kind));
		doc_fix(&c, "run `rdmakit doctor --server` on %s (with -p another port while the "
			"%s server runs there)", p->host, kind);
		snprintf(p->skip_why, sizeof(p->skip_why), "the peer is an rdmakit %s server, not "
			 "a doctor server", kind);
	} else if (ret) {
		doc_status(&c, RK_DOCTOR_FAIL, ret);
		doc_seen(&c, "no connection to %s:%u: %s", p->host, p->port,
			 p->err[0] ? p->err : rk_strerror(ret));
		if (ret == -EBADMSG || ret == -EPROTONOSUPPORT || ret == -ECONNRESET)
			doc_fix(&c, "another program (or another rdmakit version) listens on %s:%u; "
				"run `rdmakit doctor --server` there on a free port (-p)", p->host,
				p->port);
		else if (ret == -EBUSY)
			doc_fix(&c, "the server is busy with another client: try again when it is "
				"done");
		else if (ret == -ECONNREFUSED)
			doc_fix(&c, "the server stopped listening after the TCP check: a server of "
				"one client ends with it; serve with --persist, or run `rdmakit "
				"doctor --server` on %s", p->host);
		else
			doc_fix(&c, "see the local checks above, and run `rdmakit doctor` on %s too",
				p->host);
		snprintf(p->skip_why, sizeof(p->skip_why), "no connection to the peer");
	} else {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		snprintf(c.device, sizeof(c.device), "%s", p->conn->dev->info.name);
		c.port = p->conn->port_num;
		doc_seen(&c, "%s:%u is an rdmakit doctor server; connected over the TCP exchange: "
			 "%s port %u QP 0x%x <-> peer QP 0x%x", p->host, p->port,
			 p->conn->dev->info.name, p->conn->port_num, p->conn->qp->qp->qp_num,
			 p->conn->remote.qpn);
		p->path_ok = true;
	}
	doc_emit(p->d, &c);
}

/* ---- what the two sides chose ---- */

static void check_gid(struct peer *p)
{
	const struct rk_conn *conn = p->conn;
	struct rk_doctor_check c;
	char here[64], there[64];

	doc_begin(&c, "peer_gid", conn->dev->info.name, conn->port_num, "GIDs of the path");
	if (!conn->has_gid) {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "no GID on this path (InfiniBand by LID: here %u, %s %u)",
			 conn->local.lid, p->host, conn->remote.lid);
		doc_emit(p->d, &c);
		return;
	}
	snprintf(p->gid_type, sizeof(p->gid_type), "%s", rk_gid_type_str(conn->gid.type));
	doc_seen(&c, "here GID index %u %s (%s), %s GID index %u %s (%s)", conn->gid.index,
		 rk_gid_str(&conn->gid.gid, here, sizeof(here)), rk_gid_type_str(conn->gid.type),
		 p->host, conn->remote.gid_index, rk_gid_str(&conn->remote.gid, there, sizeof(there)),
		 rk_gid_type_str(conn->remote.gid_type));
	if (conn->gid.type == RK_GID_ROCE_V1 || conn->remote.gid_type == RK_GID_ROCE_V1) {
		doc_status(&c, RK_DOCTOR_WARN, -EADDRNOTAVAIL);
		doc_seen(&c, "; RoCE v1 does not cross an IP router");
		doc_fix(&c, "give each side's netdev an IP address of the path, so a RoCE v2 GID "
			"carries it (rdma link; ip addr add ADDR/LEN dev NETDEV)");
	} else {
		doc_status(&c, RK_DOCTOR_PASS, 0);
	}
	doc_emit(p->d, &c);
}

static void check_mtu(struct peer *p)
{
	const struct rk_conn *conn = p->conn;
	int here = rk_mtu_bytes(conn->local.mtu), there = rk_mtu_bytes(conn->remote.mtu);
	long nd_here = 0, nd_there = (long)conn->reply.size;
	struct rk_doctor_check c;
	char netdev[32] = "";

	p->path_mtu = rk_mtu_bytes(conn->path_mtu);
	doc_begin(&c, "peer_mtu", conn->dev->info.name, conn->port_num, "MTU of the path");
	doc_port_netdev(p->d, conn->dev->info.name, conn->port_num, netdev, sizeof(netdev),
			&nd_here);
	doc_seen(&c, "path MTU %d; port MTU here %d, on %s %d", p->path_mtu, here, p->host, there);
	if (netdev[0] || nd_there)
		doc_seen(&c, "; netdev MTU here %ld (%s), on %s %ld", nd_here,
			 netdev[0] ? netdev : "none", p->host, nd_there);
	if (here != there || (nd_here && nd_there && nd_here != nd_there)) {
		long low = nd_here && nd_there && nd_here < nd_there ? nd_here : nd_there;

		doc_status(&c, RK_DOCTOR_WARN, -EMSGSIZE);
		doc_seen(&c, ": the two ends differ; rdmakit takes the smaller, but a program "
			 "that takes its own port's MTU (RDMA CM on RoCE gives both sides the "
			 "client's) sends packets the smaller link drops");
		if (netdev[0] && nd_here && nd_there)
			doc_fix(&c, "the same MTU on both netdevs: ip link set dev %s mtu %ld here, "
				"or the peer's netdev to %ld on %s", netdev, low,
				nd_here > nd_there ? nd_here : nd_there, p->host);
		else
			doc_fix(&c, "the same MTU on both ends' links (ip link set dev NETDEV mtu N)");
	} else {
		doc_status(&c, RK_DOCTOR_PASS, 0);
	}
	doc_emit(p->d, &c);
}

/* ---- the checked operations ---- */

/* Post one signaled op of len bytes at off of this side's buffer, at raddr
 * of the peer's. */
static int post_one(struct peer *p, enum rk_op op, uint64_t wr_id, size_t off, uint32_t len,
		    uint64_t raddr)
{
	struct ibv_sge sge = rk_sge(p->mr, off, len);
	struct rk_wr wr = {
		.op = op,
		.wr_id = wr_id,
		.sg = &sge,
		.nsge = 1,
		.flags = RK_WR_SIGNALED,
		.remote_addr = raddr,
		.rkey = p->conn->reply.rkey,
	};

	return rk_post(p->conn->qp, &wr);
}

static int post_wait(struct peer *p, enum rk_op op, size_t off, uint32_t len, uint64_t raddr,
		     const char *what)
{
	int ret = post_one(p, op, WR_CHECK, off, len, raddr);

	return ret ? ret : rk_conn_wait(p->conn, WR_CHECK, what, NULL);
}

/* A step's outcome: a failed completion (the path drops RoCE's packets, or
 * the peer's access), a peer's check that failed, or every byte right. */
static void step_result(struct peer *p, struct rk_doctor_check *c, int ret, bool peer_checked,
			const char *what)
{
	if (!ret) {
		doc_status(c, RK_DOCTOR_PASS, 0);
		doc_seen(c, "%u bytes, every byte checked %s", DOC_CHECK_LEN,
			 peer_checked ? "by the peer as it arrived" : "here as it arrived");
		return;
	}
	doc_status(c, RK_DOCTOR_FAIL, ret);
	p->path_ok = false;
	snprintf(p->skip_why, sizeof(p->skip_why), "the %s before failed", what);
	if (ret == -EIO) {
		doc_seen(c, "%s: bytes differ from what was sent%s%s", what, p->err[0] ? ": " : "",
			 p->err);
		doc_fix(c, "a device or driver corrupts data: check the error counters (rdmakit "
			"counters) on both sides and update the driver or firmware");
		return;
	}
	doc_seen(c, "%s failed: %s", what, p->err[0] ? p->err : rk_strerror(ret));
	if ((strstr(p->err, "RETRY_EXC") || ret == -ETIMEDOUT) && p->d->fw_roce.rule[0])
		doc_fix(c, "RoCE's packets (UDP 4791) do not get through while TCP does: this "
			"host's firewall drops them (the firewall check above): %s; remove it: %s",
			p->d->fw_roce.rule, p->d->fw_roce.fix);
	else if (strstr(p->err, "RETRY_EXC") || ret == -ETIMEDOUT)
		doc_fix(c, "RoCE's packets (UDP 4791) do not get through while TCP does: a "
			"firewall rule drops them on one side (see the firewall check, and run "
			"`rdmakit doctor` on %s; a tc filter, which doctor does not read: tc filter "
			"show dev IFACE ingress), or the MTUs of the path differ", p->host);
	else
		doc_fix(c, "run `rdmakit doctor` on %s too, and check both sides' error counters "
			"(rdmakit counters)", p->host);
}

/* SEND (the server posted a receive) or RDMA WRITE to the peer, which
 * checks what arrived and says so at the next sync point. */
static void check_to_peer(struct peer *p, bool send)
{
	struct rk_ctl *ctl = p->conn->ctl;
	struct rk_doctor_check c;
	int ret = 0;

	doc_begin(&c, send ? "peer_send" : "peer_write", p->conn->dev->info.name,
		  p->conn->port_num, "%s to %s", send ? "SEND" : "RDMA WRITE", p->host);
	catch_errors(p);
	rk_pattern_fill(p->mr->buf, DOC_CHECK_LEN, send ? DOC_SEED_SEND : DOC_SEED_WRITE);
	if (send)
		ret = rk_ctl_sync(ctl, DOC_SYNC_RECV_POSTED, 0, p->timeout_ms);
	if (!ret)
		ret = post_wait(p, send ? RK_OP_SEND : RK_OP_WRITE, 0, DOC_CHECK_LEN,
				send ? 0 : p->conn->reply.addr, send ? "doctor: SEND" : "doctor: WRITE");
	if (!ret && !send)
		ret = rk_ctl_sync(ctl, DOC_SYNC_WRITTEN, 0, p->timeout_ms);
	if (!ret)
		ret = rk_ctl_sync(ctl, send ? DOC_SYNC_SEND_CHECKED : DOC_SYNC_WRITE_CHECKED, 0,
				  p->timeout_ms);
	step_result(p, &c, ret, true, send ? "SEND" : "WRITE");
	doc_emit(p->d, &c);
}

static void check_read(struct peer *p)
{
	struct rk_ctl *ctl = p->conn->ctl;
	struct rk_doctor_check c;
	ssize_t bad;
	int ret;

	doc_begin(&c, "peer_read", p->conn->dev->info.name, p->conn->port_num,
		  "RDMA READ from %s", p->host);
	catch_errors(p);
	memset(p->mr->buf, 0, DOC_CHECK_LEN);
	ret = rk_ctl_sync(ctl, DOC_SYNC_READ_READY, 0, p->timeout_ms);
	if (!ret)
		ret = post_wait(p, RK_OP_READ, 0, DOC_CHECK_LEN, p->conn->reply.addr,
				"doctor: READ");
	if (!ret) {
		bad = rk_pattern_check(p->mr->buf, DOC_CHECK_LEN, DOC_SEED_READ);
		if (bad >= 0) {
			snprintf(p->err, sizeof(p->err), "the first at offset %zd of %u", bad,
				 DOC_CHECK_LEN);
			ret = -EIO;
		}
		/* The server hears the outcome either way. */
		if (!ret)
			ret = rk_ctl_sync(ctl, DOC_SYNC_READ_CHECKED, 0, p->timeout_ms);
		else
			rk_ctl_sync(ctl, DOC_SYNC_READ_CHECKED, ret, p->timeout_ms);
	}
	step_result(p, &c, ret, false, "READ");
	doc_emit(p->d, &c);
}

/* ---- the probe ---- */

/* WRITEs of PROBE_MSG bytes, PROBE_WINDOW outstanding, for ms: MB/s. */
static int probe_bw(struct peer *p, int ms, double *mbps_p)
{
	uint64_t slots = DOC_BUF_LEN / PROBE_MSG, posted = 0, done = 0;
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)ms * 1000000u;
	struct ibv_wc wc[PROBE_WINDOW];
	int n, ret;

	for (;;) {
		while (posted - done < PROBE_WINDOW && now_ns() < end) {
			ret = post_one(p, RK_OP_WRITE, WR_PROBE, 0, PROBE_MSG,
				       p->conn->reply.addr + (posted % slots) * PROBE_MSG);
			if (ret)
				return ret;
			posted++;
		}
		if (done == posted)
			break;
		ret = rk_cq_poll(p->conn->cq, wc, PROBE_WINDOW, p->timeout_ms, &n);
		if (ret) {
			if (ret == -ETIMEDOUT)
				rk_error("doctor: probe WRITE: no completion within %d ms",
					 p->timeout_ms);
			return ret;
		}
		for (int i = 0; i < n; i++) {
			ret = rk_wc_check(&wc[i], "doctor: probe WRITE");
			if (ret)
				return ret;
		}
		done += (uint64_t)n;
	}
	*mbps_p = (double)(done * PROBE_MSG) * 1000.0 / (double)(now_ns() - t0);
	return 0;
}

/* READs of LAT_MSG bytes, one at a time, for ms: their round trips. */
static int probe_lat(struct peer *p, int ms, struct rk_rtt_stats *st)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
	double *samples;
	size_t n = 0;
	int ret = 0;

	samples = malloc(LAT_MAX_SAMPLES * sizeof(*samples));
	if (!samples)
		return -ENOMEM;
	while (n < LAT_MAX_SAMPLES && (now_ns() < end || !n)) {
		double t0 = now_us();

		ret = post_wait(p, RK_OP_READ, DOC_CHECK_LEN, LAT_MSG, p->conn->reply.addr,
				"doctor: probe READ");
		if (ret)
			break;
		samples[n++] = now_us() - t0;
	}
	if (!ret)
		ret = rk_rtt_stats_compute(samples, n, st);
	free(samples);
	return ret;
}

static void check_probe(struct peer *p)
{
	struct rk_doctor_check c;
	struct rk_rtt_stats st = {0};
	int half = p->probe_ms / 2, ret;

	doc_begin(&c, "peer_probe", p->conn->dev->info.name, p->conn->port_num,
		  "bandwidth and latency to %s", p->host);
	catch_errors(p);
	ret = probe_bw(p, half, &p->mbps);
	if (!ret)
		ret = probe_lat(p, p->probe_ms - half, &st);
	rk_ctl_sync(p->conn->ctl, DOC_SYNC_PROBED, ret, p->timeout_ms);
	if (ret) {
		step_result(p, &c, ret, false, "probe");
	} else {
		p->lat_us = st.median;
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "RDMA WRITE of %u bytes: %.1f MB/s over %.1f s; RDMA READ of %u bytes: "
			 "round trip median %.1f us (min %.1f, p99 %.1f, %zu reads)", PROBE_MSG,
			 p->mbps, half / 1000.0, LAT_MSG, st.median, st.min, st.p99, st.n);
	}
	doc_emit(p->d, &c);
}

/* ---- iWARP ---- */

/* The path's checks connect over rdmakit's TCP exchange (a GID swapped over
 * TCP), which cannot bring up an iWARP QP (its QPs connect only through RDMA
 * CM): on an iWARP device they are refused by name, not tried. True then. */
static bool refuse_iwarp(struct peer *p, const char *device)
{
	struct rk_doctor_check c;

	for (int i = 0; i < p->d->ndevs; i++) {
		if (strcmp(p->d->devs[i].name, device) || !rk_device_is_iwarp(p->d->devs[i].dev))
			continue;
		snprintf(p->skip_why, sizeof(p->skip_why), "%s is an iWARP device: doctor does "
			 "not connect through RDMA CM yet", device);
		doc_begin(&c, "peer_server", device, 0, "the server on %s port %u", p->host,
			  p->port);
		doc_status(&c, RK_DOCTOR_WARN, -EPROTONOSUPPORT);
		doc_seen(&c, "%s is an iWARP device: its QPs connect only through RDMA CM, and "
			 "doctor HOST connects over rdmakit's TCP exchange: the SEND, WRITE, READ "
			 "and probe of the path are not made", device);
		doc_fix(&c, "check the path through RDMA CM with every byte checked: `rdmakit rc "
			"--server --cm -p %u` on %s, then `rdmakit rc %s --cm -p %u -o all` here",
			p->port, p->host, p->host, p->port);
		doc_emit(p->d, &c);
		return true;
	}
	return false;
}

/* ---- the verdict ---- */

static void verdict(struct peer *p)
{
	struct rk_doctor_summary *s = &p->d->sum;

	if (s->fail)
		doc_add(s->verdict, sizeof(s->verdict), "FAIL: %d check%s failed, the first: %s (its fix above)",
			 s->fail, s->fail == 1 ? "" : "s", p->d->first_fail);
	else if (!p->mbps)
		doc_add(s->verdict, sizeof(s->verdict), "WARN: the path to %s was not checked "
			 "through: %s", p->host, p->skip_why[0] ? p->skip_why :
			 p->d->first_warn);
	else
		doc_add(s->verdict, sizeof(s->verdict), "%s: RDMA works between this host (%s "
			 "port %u) and %s: %s, path MTU %d, %.1f MB/s, %.1f us round trip%s%s",
			 s->warn ? "WARN" : "PASS", p->conn->dev->info.name, p->conn->port_num,
			 p->host, p->gid_type[0] ? p->gid_type : "InfiniBand", p->path_mtu, p->mbps,
			 p->lat_us, s->warn ? "; the first warning: " : "", p->d->first_warn);
}

void doc_check_peer(struct doc *d)
{
	const struct rk_doctor_opts *o = d->o;
	struct peer *p;
	const char *device;

	if (!o->host)
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->d = d;
	p->host = o->host;
	p->port = o->port ? o->port : RK_DEFAULT_PORT;
	p->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	p->probe_ms = o->probe_ms > 0 ? o->probe_ms : DEFAULT_PROBE_MS;

	check_tcp(p);
	if (!d->ndevs) {
		snprintf(p->skip_why, sizeof(p->skip_why), "no RDMA device here%s (see the checks "
			 "above)", o->device ? " by that name" : "");
		skip(p, "peer_cm_route", "RDMA CM route", p->skip_why);
	} else {
		check_route(p);
		if (!p->tcp_ok)
			snprintf(p->skip_why, sizeof(p->skip_why), "no TCP connection to %s",
				 p->host);
		else if (!p->route_dev[0] && !o->device)
			snprintf(p->skip_why, sizeof(p->skip_why), "no RDMA route to %s", p->host);
	}
	if (p->tcp_ok && d->ndevs && (p->route_dev[0] || o->device)) {
		device = o->device ? o->device : p->route_dev;
		if (!refuse_iwarp(p, device))
			check_server(p, device);
	} else {
		skip(p, "peer_server", "the server", p->skip_why);
	}
	rk_log_thread_scope(NULL, NULL, 0);
	if (p->path_ok) {
		check_gid(p);
		check_mtu(p);
		check_to_peer(p, true);
	} else {
		skip(p, "peer_gid", "GIDs of the path", p->skip_why);
		skip(p, "peer_mtu", "MTU of the path", p->skip_why);
		skip(p, "peer_send", "SEND", p->skip_why);
	}
	if (p->path_ok)
		check_to_peer(p, false);
	else
		skip(p, "peer_write", "RDMA WRITE", p->skip_why);
	if (p->path_ok)
		check_read(p);
	else
		skip(p, "peer_read", "RDMA READ", p->skip_why);
	if (p->path_ok)
		check_probe(p);
	else
		skip(p, "peer_probe", "bandwidth and latency", p->skip_why);
	if (!p->path_ok)
		p->mbps = 0; /* the probe failed: no figures for the verdict */
	rk_log_thread_scope(NULL, NULL, 0);
	verdict(p);
	rk_conn_close(p->conn);
	free(p);
}
