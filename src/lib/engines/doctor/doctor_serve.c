/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit doctor --server: serve doctor clients one after another, each its
 * checked SEND, WRITE and READ and its probe (the protocol is doctor_int.h's),
 * until stopped. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rdmakit/conn.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/ops.h>
#include <rdmakit/pattern.h>
#include <rdmakit/stop.h>
#include <rdmakit/tcp.h>

#include "engines/doctor/doctor_int.h"
#include "verbs/device_int.h"

#define DEFAULT_TIMEOUT_MS 5000
/* A client's probe may not ask the server to wait longer than this. */
#define MAX_PROBE_MS 60000

/* One client's turn. */
struct turn {
	struct rk_mr *mr; /* first: doc_release_mr() frees it */
	struct doc *d;	  /* for reading sysfs at the real root */
	int probe_ms; /* what the client said its probe takes */
};

static int on_request(struct rk_conn *conn, const struct rk_wire_buf *req,
		      struct rk_wire_buf *reply, int *qp_access, char *reason, size_t reason_len,
		      void *arg)
{
	const int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct turn *t = arg;
	char netdev[32];
	long mtu = 0;
	int ret;

	if (req->op != RK_WIRE_OP_DOCTOR) {
		rk_wire_op_refusal("doctor", req->op, reason, reason_len);
		return -EPROTO;
	}
	if (req->offset > MAX_PROBE_MS) {
		snprintf(reason, reason_len, "a probe of %llu ms is longer than this server "
			 "waits (%d ms)", (unsigned long long)req->offset, MAX_PROBE_MS);
		return -EINVAL;
	}
	t->probe_ms = (int)req->offset;
	ret = rk_mr_alloc(conn->pd, DOC_BUF_LEN, IBV_ACCESS_LOCAL_WRITE | access, &t->mr);
	if (ret)
		return ret;
	if (doc_port_netdev(t->d, conn->dev->info.name, conn->port_num ? conn->port_num : 1,
			    netdev, sizeof(netdev), &mtu))
		mtu = 0;
	reply->addr = (uintptr_t)t->mr->buf;
	reply->len = t->mr->len;
	reply->rkey = t->mr->mr->rkey;
	reply->op = RK_WIRE_OP_DOCTOR;
	reply->size = mtu > 0 && mtu < UINT32_MAX ? (uint32_t)mtu : 0;
	*qp_access = access;
	return 0;
}

/* Check [0, DOC_CHECK_LEN) of the buffer against seed: 0 or -EIO, logged. */
static int check_bytes(const struct turn *t, uint32_t seed, const char *what)
{
	ssize_t bad = rk_pattern_check(t->mr->buf, DOC_CHECK_LEN, seed);

	if (bad < 0)
		return 0;
	rk_error("doctor: the client's %s: byte %zd of %u differs from what was sent", what, bad,
		 DOC_CHECK_LEN);
	return -EIO;
}

static bool client_gone(void *arg)
{
	return rk_tcp_peer_closed(arg);
}

/* The steps of doctor_int.h, the server's side. */
static int serve_steps(struct rk_conn *conn, struct turn *t, int timeout_ms)
{
	struct ibv_sge sge = rk_sge(t->mr, 0, DOC_CHECK_LEN);
	/* A client whose SEND never comes (RoCE dropped on the way) has
	   left: seen at once, not after the timeout. */
	struct rk_cq_ids ids = {.cq = conn->cq, .gone = client_gone, .gone_arg = conn->ctl};
	struct rk_ctl *ctl = conn->ctl;
	const uint64_t want = 1;
	struct ibv_wc wc;
	int ret, st;

	memset(t->mr->buf, 0, DOC_CHECK_LEN);
	ret = rk_post_recv(conn->qp, 1, &sge, 1);
	if (!ret)
		ret = rk_ctl_sync(ctl, DOC_SYNC_RECV_POSTED, 0, timeout_ms);
	if (ret)
		return ret;
	ret = rk_cq_wait_ids(&ids, &want, 1, timeout_ms, "doctor: the client's SEND", &wc);
	if (ret == -ECONNRESET)
		rk_error("doctor: the client left before its SEND arrived");
	if (ret)
		return ret;
	st = wc.byte_len == DOC_CHECK_LEN ? check_bytes(t, DOC_SEED_SEND, "SEND") : -EIO;
	if (wc.byte_len != DOC_CHECK_LEN)
		rk_error("doctor: the client's SEND brought %u bytes, not %u", wc.byte_len,
			 DOC_CHECK_LEN);
	/* Cleared before the client hears the SEND was checked: it WRITEs
	   right after. */
	memset(t->mr->buf, 0, DOC_CHECK_LEN);
	ret = rk_ctl_sync(ctl, DOC_SYNC_SEND_CHECKED, st, timeout_ms);
	if (st || ret)
		return st ? st : ret;

	ret = rk_ctl_sync(ctl, DOC_SYNC_WRITTEN, 0, timeout_ms);
	if (ret)
		return ret;
	st = check_bytes(t, DOC_SEED_WRITE, "WRITE");
	ret = rk_ctl_sync(ctl, DOC_SYNC_WRITE_CHECKED, st, timeout_ms);
	if (st || ret)
		return st ? st : ret;

	rk_pattern_fill(t->mr->buf, DOC_CHECK_LEN, DOC_SEED_READ);
	ret = rk_ctl_sync(ctl, DOC_SYNC_READ_READY, 0, timeout_ms);
	if (!ret)
		ret = rk_ctl_sync(ctl, DOC_SYNC_READ_CHECKED, 0, timeout_ms);
	if (ret)
		return ret;
	return rk_ctl_sync(ctl, DOC_SYNC_PROBED, 0, t->probe_ms + 2 * timeout_ms);
}

/* A client that connected and closed without a word (a doctor client's
 * TCP reach check): true, after waiting up to timeout_ms for its first byte. */
static bool reach_probe(const struct rk_conn *pending, int timeout_ms)
{
	struct pollfd pfd = {.events = POLLIN};
	char b;

	if (!pending->ctl || pending->ctl->fd < 0)
		return false;
	pfd.fd = pending->ctl->fd;
	if (poll(&pfd, 1, timeout_ms) != 1)
		return false;
	return recv(pfd.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static void serve_client(struct rk_conn *pending, const struct rk_conn_opts *base,
			 struct turn *t, int timeout_ms, struct rk_doctor_served *out)
{
	struct rk_conn_opts co = *base;
	struct rk_conn *conn = NULL;
	int ret;

	snprintf(out->peer, sizeof(out->peer), "%s", pending->ctl ? pending->ctl->peer : "");
	if (reach_probe(pending, timeout_ms)) {
		out->probe = true;
		rk_conn_close(pending);
		return;
	}
	co.arg = t;
	rk_log_thread_scope(NULL, out->error, sizeof(out->error));
	ret = rk_conn_establish_accepted(pending, &co, &conn);
	if (!ret) {
		snprintf(out->device, sizeof(out->device), "%s", conn->dev->info.name);
		out->port_num = conn->port_num;
		out->path_mtu = rk_mtu_bytes(conn->path_mtu);
		ret = serve_steps(conn, t, timeout_ms);
	}
	rk_log_thread_scope(NULL, NULL, 0);
	out->status = ret;
	rk_conn_close(conn);
}

int rk_doctor_serve(const struct rk_doctor_server_opts *opts,
		    void (*on_client)(const struct rk_doctor_served *c, void *arg), void *arg,
		    struct rk_doctor_serve_total *total_p)
{
	int timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	struct rk_conn_opts co = {
		.server = true,
		.bind_ip = opts->bind_ip,
		.port = opts->port,
		.device = opts->device,
		.port_num = opts->port_num,
		.gid_index = -1,
		.timeout_ms = timeout_ms,
		.accept_timeout_ms = opts->wait_ms,
		.on_request = on_request,
		.release = doc_release_mr,
	};
	struct rk_doctor_serve_total total = {0};
	struct rk_conn_listener *l = NULL;
	struct turn t = {0};
	int ret;

	t.d = calloc(1, sizeof(*t.d)); /* root "": the real one */
	if (!t.d)
		return -ENOMEM;
	/* Clients connect over the TCP exchange: an iWARP device refused by
	 * name, with what checks its path instead. */
	ret = rk_device_name_check_no_cm(opts->device, NULL,
					 "doctor --server serves over rdmakit's TCP exchange, not "
					 "through RDMA CM: check the path with `rdmakit rc --server "
					 "--cm` there and `rdmakit rc HOST --cm -o all`");
	if (ret)
		goto out;
	ret = rk_conn_listen(&co, &l);
	if (ret)
		goto out;
	if (opts->on_listening)
		opts->on_listening(arg);
	for (;;) {
		struct rk_doctor_served served = {0};
		struct rk_conn *pending;

		/* A stop that came while a client was served: poll() would
		   not see it. */
		if (rk_stop_requested()) {
			ret = 0;
			break;
		}
		ret = rk_conn_accept(l, opts->wait_ms, &pending);
		if (ret == -EINTR || rk_stop_requested()) {
			if (!ret)
				rk_conn_close(pending);
			ret = 0;
			break;
		}
		if (ret)
			break;
		serve_client(pending, &co, &t, timeout_ms, &served);
		if (served.probe)
			total.probes++;
		else if (served.status)
			total.failed++;
		else
			total.served++;
		if (on_client)
			on_client(&served, arg);
	}
	rk_conn_listener_close(l);
out:
	free(t.d);
	if (total_p)
		*total_p = total;
	return ret;
}
