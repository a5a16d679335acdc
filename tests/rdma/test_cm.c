/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* RDMA CM on a real device, client and server in one process (the server in a
 * thread): connect and accept with CM_HELLO private data both ways, a control
 * channel over the connected QP, an RDMA WRITE with the rkey the server sent;
 * a control channel that keeps its receive posted, between data SENDs on the
 * same QP, with no RNR NAK;
 * and the ways a connection fails: nothing listening, a reject with a reason,
 * an address CM cannot reach, a port in use, a client that is not rdmakit. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

#define BUF_LEN	  4096
#define WAIT_MS	  10000
#define WRITE_OFF 128
#define WRITE_LEN 1000

#define PORT_BASE 18620

/* ---- one side of a connection ---- */

struct side {
	struct rk_cm *cm;
	struct ibv_pd *pd;
	struct rk_cq *cq;
	struct rk_mr *mr;
	struct rk_qp *qp;
	struct rk_ctl *ctl;
};

static int side_open(struct side *s, struct rk_cm *cm)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC, .max_send_wr = 16, .max_recv_wr = 16};
	int ret;

	memset(s, 0, sizeof(*s));
	s->cm = cm;
	if ((ret = rk_pd_alloc(cm->dev, &s->pd)) ||
	    (ret = rk_cq_create(cm->dev, 64, false, &s->cq)) ||
	    (ret = rk_mr_alloc(s->pd, BUF_LEN,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ,
			       &s->mr)))
		return ret;
	return rk_cm_create_qp(cm, s->pd, s->cq, s->cq, &qa, &s->qp);
}

/* Verbs objects go before the CM id whose device they live on. */
static void side_close(struct side *s)
{
	rk_ctl_close(s->ctl);
	rk_cm_disconnect(s->cm, 2000);
	rk_qp_destroy(s->qp);
	rk_mr_free(s->mr);
	rk_cq_destroy(s->cq);
	rk_pd_free(s->pd);
	rk_cm_destroy(s->cm);
	memset(s, 0, sizeof(*s));
}

static struct rk_wire_buf buf_of(const struct side *s)
{
	struct rk_wire_buf b = {
		.addr = (uintptr_t)s->mr->buf, .len = BUF_LEN, .rkey = s->mr->mr->rkey};

	return b;
}

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/* ---- the server thread ---- */

enum serve_mode { SERVE_ACCEPT, SERVE_REJECT, SERVE_REQUEST_ONLY, SERVE_KEEP };

#define KEEP_ROUNDS 20
#define KEEP_LEN    256

struct server {
	enum serve_mode mode;
	struct rk_cm *listener;
	pthread_t thread;
	/* results, read by the main thread after the join */
	int get_ret;
	int ret;
	char failed[128];
	struct rk_wire_buf mine;
	struct rk_wire_buf got;
	bool got_peer;
	uint32_t step10, step11;
	size_t bad_bytes;
	int keep_rounds; /* SERVE_KEEP: data SENDs received as sent */
};

#define SRV_CHECK(call)                                                                            \
	do {                                                                                       \
		int r_ = (call);                                                                   \
		if (r_) {                                                                          \
			srv->ret = r_;                                                             \
			snprintf(srv->failed, sizeof(srv->failed), "%s", #call);                   \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

static void fill(uint8_t *b, size_t len, uint32_t round)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(pattern(i) + round);
}

/* SERVE_KEEP: the channel's receive is up before the accept; each round our
 * data receive is posted before "ready" (behind the channel's), the
 * client's SEND lands in it, "done". Then two receives kept, and two
 * messages one way. */
static int serve_keep(struct server *srv, struct side *s)
{
	uint8_t want[KEEP_LEN];
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct rk_msg msg = {.type = RK_MSG_SYNC};
	int ret;

	for (uint32_t r = 0; r < KEEP_ROUNDS; r++) {
		sge = rk_sge(s->mr, 0, KEEP_LEN);
		ret = rk_post_recv(s->qp, 500 + r, &sge, 1);
		if (!ret)
			ret = rk_ctl_sync(s->ctl, 2 * r + 1, 0, WAIT_MS);
		if (!ret)
			ret = rk_ctl_qp_next_wc(s->ctl, s->cq, WAIT_MS, &wc);
		if (ret)
			return ret;
		fill(want, KEEP_LEN, r);
		if (wc.status == IBV_WC_SUCCESS && wc.wr_id == 500 + r && wc.byte_len == KEEP_LEN &&
		    !memcmp(s->mr->buf, want, KEEP_LEN))
			srv->keep_rounds++;
		ret = rk_ctl_sync(s->ctl, 2 * r + 2, 0, WAIT_MS);
		if (ret)
			return ret;
	}
	/* No more data receives here: two receives of the channel's, so two
	 * messages in a row find one each. */
	ret = rk_ctl_qp_keep_receive(s->ctl, 2);
	if (!ret)
		ret = rk_ctl_sync(s->ctl, 99, 0, WAIT_MS);
	if (!ret)
		ret = rk_ctl_expect(s->ctl, RK_MSG_SYNC, WAIT_MS, &msg);
	srv->step10 = msg.u.sync.step;
	if (!ret)
		ret = rk_ctl_expect(s->ctl, RK_MSG_SYNC, WAIT_MS, &msg);
	srv->step11 = msg.u.sync.step;
	/* Our turn: the client waits for it before it sends again (a third
	 * message in a row could meet an RNR NAK, two receives or not). */
	msg.u.sync.step = 1000;
	if (!ret)
		ret = rk_ctl_send(s->ctl, &msg);
	if (!ret)
		ret = rk_ctl_expect(s->ctl, RK_MSG_SYNC, WAIT_MS, &msg);
	return ret ? ret : msg.u.sync.step == 1001 ? 0 : -EPROTO;
}

static void *serve(void *arg)
{
	struct server *srv = arg;
	struct rk_msg msg;
	struct rk_cm *cm = NULL;
	struct side s = {0};
	const uint8_t *b;

	srv->get_ret = rk_cm_get_request(srv->listener, WAIT_MS, &cm);
	if (srv->get_ret)
		return NULL;
	srv->got = cm->peer;
	srv->got_peer = cm->has_peer;
	if (srv->mode == SERVE_REJECT) {
		srv->ret = rk_cm_reject(cm, "not today");
		rk_cm_destroy(cm);
		return NULL;
	}
	if (srv->mode == SERVE_REQUEST_ONLY) {
		rk_cm_destroy(cm);
		return NULL;
	}
	SRV_CHECK(side_open(&s, cm));
	srv->mine = buf_of(&s);
	if (srv->mode == SERVE_KEEP) {
		SRV_CHECK(rk_ctl_qp_create(s.qp, s.pd, s.cq, s.cq, &s.ctl));
		SRV_CHECK(rk_ctl_qp_keep_receive(s.ctl, 1)); /* QP in INIT */
		s.ctl->sync_answers = true;
		SRV_CHECK(rk_cm_accept(cm, s.qp, &srv->mine, WAIT_MS));
		SRV_CHECK(serve_keep(srv, &s));
		goto out;
	}
	SRV_CHECK(rk_cm_accept(cm, s.qp, &srv->mine, WAIT_MS));
	SRV_CHECK(rk_ctl_qp_create(s.qp, s.pd, s.cq, s.cq, &s.ctl));
	for (uint32_t step = 1; step <= 3; step++)
		SRV_CHECK(rk_ctl_sync(s.ctl, step, 0, WAIT_MS));
	/* Two messages one way: the second SEND may find no receive posted yet. */
	SRV_CHECK(rk_ctl_expect(s.ctl, RK_MSG_SYNC, WAIT_MS, &msg));
	srv->step10 = msg.u.sync.step;
	SRV_CHECK(rk_ctl_expect(s.ctl, RK_MSG_SYNC, WAIT_MS, &msg));
	srv->step11 = msg.u.sync.step;
	SRV_CHECK(rk_ctl_sync(s.ctl, 4, 0, WAIT_MS));
	/* The client writes, then syncs: the bytes are here by then. */
	SRV_CHECK(rk_ctl_sync(s.ctl, 5, 0, WAIT_MS));
	b = s.mr->buf;
	for (size_t i = 0; i < BUF_LEN; i++) {
		bool in = i >= WRITE_OFF && i < WRITE_OFF + WRITE_LEN;

		if (b[i] != (in ? pattern(i - WRITE_OFF) : 0))
			srv->bad_bytes++;
	}
	SRV_CHECK(rk_ctl_sync(s.ctl, 6, srv->bad_bytes ? -EIO : 0, WAIT_MS));
out:
	if (s.cm)
		side_close(&s);
	else
		rk_cm_destroy(cm);
	return NULL;
}

/* Listen on bind_ip (NULL: any address) and serve one request in a thread. */
static void server_start(struct server *srv, enum serve_mode mode, const char *bind_ip,
			 uint16_t port)
{
	memset(srv, 0, sizeof(*srv));
	srv->mode = mode;
	assert_int_equal(rk_cm_listen(bind_ip, port, &srv->listener), 0);
	assert_int_equal(pthread_create(&srv->thread, NULL, serve, srv), 0);
}

static void server_join(struct server *srv)
{
	pthread_join(srv->thread, NULL);
	rk_cm_destroy(srv->listener);
	srv->listener = NULL;
}

/* ---- tests ---- */

/* The GID CM uses is the RoCE v2 GID that carries the test address. */
static void check_cm_gid(const struct rk_cm *cm)
{
	struct rk_gid_entry e = {.type = cm->gid.type, .gid = cm->gid.gid};

	rk_gid_entry_set_ip(&e);
	printf("# CM uses %s port %u, GID index %u (%s %s): %s\n", cm->dev->info.name, cm->port_num,
	       cm->gid.index, rk_gid_type_str(cm->gid.type), e.ip, cm->gid.why);
	if (!rk_port_is_roce(cm->dev, cm->port_num))
		return;
	assert_int_equal(cm->gid.type, RK_GID_ROCE_V2);
	assert_string_equal(e.ip, fx_test_ip());
}

static void test_connect_exchange_write(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct rk_wire_buf mine;
	struct server srv;
	struct side c;
	struct rk_cm *cm;
	struct rk_msg msg = {.type = RK_MSG_SYNC};
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct rk_wr wr;
	int64_t t0;
	uint8_t *b;
	int n;

	server_start(&srv, SERVE_ACCEPT, fx_test_ip(), port);
	assert_int_equal(rk_cm_resolve(fx_test_ip(), port, WAIT_MS, &cm), 0);
	check_cm_gid(cm);
	assert_int_equal(side_open(&c, cm), 0);
	assert_int_equal(c.qp->state, IBV_QPS_INIT);
	mine = buf_of(&c);
	mine.op = 3;
	mine.size = WRITE_LEN;
	mine.offset = WRITE_OFF;
	assert_int_equal(rk_cm_connect(cm, c.qp, &mine, WAIT_MS), 0);
	assert_true(cm->connected);
	assert_true(cm->has_peer);
	assert_int_equal(c.qp->state, IBV_QPS_RTS);
	assert_true(c.qp->has_remote);
	printf("# connected QP 0x%x to QP 0x%x (sq_psn 0x%x, min_rnr_timer %u, rnr_retry %u, "
	       "max_rd_atomic %u)\n",
	       c.qp->qp->qp_num, c.qp->remote.qpn, c.qp->psn, c.qp->path.min_rnr_timer,
	       c.qp->path.rnr_retry, c.qp->path.max_rd_atomic);

	assert_int_equal(rk_ctl_qp_create(c.qp, c.pd, c.cq, c.cq, &c.ctl), 0);
	assert_int_equal(c.ctl->fd, -1);
	assert_string_equal(c.ctl->local_ip, fx_test_ip());
	printf("# control channel to %s from %s\n", c.ctl->peer, c.ctl->local_ip);
	for (uint32_t step = 1; step <= 3; step++) {
		t0 = fx_now_ms();

		assert_int_equal(rk_ctl_sync(c.ctl, step, 0, WAIT_MS), 0);
		printf("# sync %u took %lld ms\n", step, (long long)(fx_now_ms() - t0));
	}
	msg.u.sync.step = 10;
	assert_int_equal(rk_ctl_send(c.ctl, &msg), 0);
	msg.u.sync.step = 11;
	assert_int_equal(rk_ctl_send(c.ctl, &msg), 0);
	assert_int_equal(rk_ctl_sync(c.ctl, 4, 0, WAIT_MS), 0);

	/* WRITE into the server's buffer with the address and rkey it sent. */
	b = c.mr->buf;
	for (size_t i = 0; i < WRITE_LEN; i++)
		b[i] = pattern(i);
	sge = rk_sge(c.mr, 0, WRITE_LEN);
	memset(&wr, 0, sizeof(wr));
	wr.op = RK_OP_WRITE;
	wr.wr_id = 77;
	wr.sg = &sge;
	wr.nsge = 1;
	wr.flags = IBV_SEND_SIGNALED;
	wr.remote_addr = cm->peer.addr + WRITE_OFF;
	wr.rkey = cm->peer.rkey;
	assert_int_equal(rk_post(c.qp, &wr), 0);
	assert_int_equal(rk_cq_wait(c.cq, &wc, 1, WAIT_MS, &n), 0);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(rk_ctl_sync(c.ctl, 5, 0, WAIT_MS), 0);
	assert_int_equal(rk_ctl_sync(c.ctl, 6, 0, WAIT_MS), 0);

	/* Both sides disconnect; the QP is in ERR then, and the control channel
	 * says the peer is gone. */
	t0 = fx_now_ms();
	rk_cm_disconnect(cm, WAIT_MS);
	printf("# disconnected in %lld ms\n", (long long)(fx_now_ms() - t0));
	assert_true(fx_now_ms() - t0 < WAIT_MS);
	assert_false(cm->connected);
	assert_int_equal(rk_qp_query_state(c.qp, NULL), 0);
	printf("# after disconnect QP 0x%x is in %s\n", c.qp->qp->qp_num,
	       rk_qp_state_str(c.qp->state));
	fx_capture_reset();
	assert_int_equal(rk_ctl_recv(c.ctl, WAIT_MS, &msg), -ECONNRESET);
	assert_true(fx_capture_has("closed the control connection"));
	server_join(&srv);

	if (srv.ret)
		fprintf(stderr, "# server failed at %s: %s\n", srv.failed, rk_strerror(srv.ret));
	assert_int_equal(srv.get_ret, 0);
	assert_int_equal(srv.ret, 0);
	/* Each side got the other's private data. */
	assert_true(srv.got_peer);
	assert_int_equal(srv.got.addr, mine.addr);
	assert_int_equal(srv.got.len, mine.len);
	assert_int_equal(srv.got.rkey, mine.rkey);
	assert_int_equal(srv.got.op, 3);
	assert_int_equal(srv.got.size, WRITE_LEN);
	assert_int_equal(srv.got.offset, WRITE_OFF);
	assert_int_equal(cm->peer.addr, srv.mine.addr);
	assert_int_equal(cm->peer.len, srv.mine.len);
	assert_int_equal(cm->peer.rkey, srv.mine.rkey);
	assert_int_equal(srv.step10, 10);
	assert_int_equal(srv.step11, 11);
	assert_int_equal(srv.bad_bytes, 0);
	side_close(&c);
}

static uint64_t rnr_naks(const struct rk_cm *cm, bool *have)
{
	struct rk_counters *snap;
	uint64_t v = 0;

	assert_int_equal(rk_counters_read(cm->dev, cm->port_num, &snap), 0);
	*have = !rk_counters_get(snap, RK_COUNTERS_HW, "rcvd_rnr_err", &v);
	rk_counters_free(snap);
	return v;
}

/* Both sides keep the channel's receive posted and the server answers at
 * sync points: data SENDs and control messages share the receive queue in
 * the order the flow posts them, the client's SEND completions met by the
 * channel come back to it; then, with two receives kept, two messages in a
 * row. No message meets an empty receive queue: the port's RNR NAK count
 * stays (the plain channel of the test above moves it by a few each run). */
static void test_keep_receive(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct rk_wire_buf mine = {0};
	struct rk_msg msg = {.type = RK_MSG_SYNC};
	uint64_t rnr_before, rnr_after;
	struct server srv;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct side c;
	struct rk_cm *cm;
	struct rk_wr wr;
	bool have;

	server_start(&srv, SERVE_KEEP, fx_test_ip(), port);
	assert_int_equal(rk_cm_resolve(fx_test_ip(), port, WAIT_MS, &cm), 0);
	rnr_before = rnr_naks(cm, &have);
	assert_int_equal(side_open(&c, cm), 0);
	/* Up before the connect: the server's first message may come before
	 * this side has seen the connection established. */
	assert_int_equal(rk_ctl_qp_create(c.qp, c.pd, c.cq, c.cq, &c.ctl), 0);
	assert_int_equal(rk_ctl_qp_keep_receive(c.ctl, 1), 0);
	assert_int_equal(rk_cm_connect(cm, c.qp, &mine, WAIT_MS), 0);
	for (uint32_t r = 0; r < KEEP_ROUNDS; r++) {
		assert_int_equal(rk_ctl_sync(c.ctl, 2 * r + 1, 0, WAIT_MS), 0);
		fill(c.mr->buf, KEEP_LEN, r);
		sge = rk_sge(c.mr, 0, KEEP_LEN);
		memset(&wr, 0, sizeof(wr));
		wr.op = RK_OP_SEND;
		wr.wr_id = 600 + r;
		wr.sg = &sge;
		wr.nsge = 1;
		wr.flags = IBV_SEND_SIGNALED;
		assert_int_equal(rk_post(c.qp, &wr), 0);
		/* Not waited for: the channel meets its completion first. */
		assert_int_equal(rk_ctl_sync(c.ctl, 2 * r + 2, 0, WAIT_MS), 0);
		assert_true(rk_ctl_qp_take_foreign(c.ctl, &wc));
		assert_int_equal(wc.wr_id, 600 + r);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_false(rk_ctl_qp_take_foreign(c.ctl, &wc));
	}
	assert_int_equal(rk_ctl_sync(c.ctl, 99, 0, WAIT_MS), 0);
	msg.u.sync.step = 10;
	assert_int_equal(rk_ctl_send(c.ctl, &msg), 0);
	msg.u.sync.step = 11;
	assert_int_equal(rk_ctl_send(c.ctl, &msg), 0);
	assert_int_equal(rk_ctl_expect(c.ctl, RK_MSG_SYNC, WAIT_MS, &msg), 0);
	assert_int_equal(msg.u.sync.step, 1000);
	msg.u.sync.step = 1001;
	assert_int_equal(rk_ctl_send(c.ctl, &msg), 0);
	rk_cm_disconnect(cm, WAIT_MS);
	server_join(&srv);
	if (srv.ret)
		fprintf(stderr, "# server failed at %s: %s\n", srv.failed, rk_strerror(srv.ret));
	assert_int_equal(srv.ret, 0);
	assert_int_equal(srv.keep_rounds, KEEP_ROUNDS);
	assert_int_equal(srv.step10, 10);
	assert_int_equal(srv.step11, 11);
	rnr_after = rnr_naks(cm, &have);
	printf("# %d rounds: rcvd_rnr_err %llu -> %llu\n", KEEP_ROUNDS,
	       (unsigned long long)rnr_before, (unsigned long long)rnr_after);
	if (have)
		assert_int_equal(rnr_after, rnr_before);
	else
		printf("# %s has no rcvd_rnr_err counter: the RNR count is not checked\n",
		       cm->dev->info.name);
	side_close(&c);
}

static void test_no_listener_refused(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct rk_wire_buf mine = {0};
	struct side c;
	struct rk_cm *cm;
	int64_t t0;

	assert_int_equal(rk_cm_resolve(fx_test_ip(), port, WAIT_MS, &cm), 0);
	assert_int_equal(side_open(&c, cm), 0);
	fx_capture_reset();
	t0 = fx_now_ms();
	assert_int_equal(rk_cm_connect(cm, c.qp, &mine, WAIT_MS), -ECONNREFUSED);
	printf("# refused after %lld ms\n", (long long)(fx_now_ms() - t0));
	assert_true(fx_now_ms() - t0 < 5000);
	/* iWARP's CM connects a TCP stream: the refused TCP connect is said. */
	assert_true(fx_capture_has(fx_iwarp_dev() ? "Connection refused" : "RDMA_CM_EVENT_REJECTED"));
	assert_false(cm->connected);
	side_close(&c);
}

static void test_reject_with_reason(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct rk_wire_buf mine = {.op = 1};
	struct server srv;
	struct side c;
	struct rk_cm *cm;

	server_start(&srv, SERVE_REJECT, NULL, port);
	assert_int_equal(rk_cm_resolve(fx_test_ip(), port, WAIT_MS, &cm), 0);
	assert_int_equal(side_open(&c, cm), 0);
	fx_capture_reset();
	/* A server's decision, unlike a missing listener: not to be retried. */
	assert_int_equal(rk_cm_connect(cm, c.qp, &mine, WAIT_MS), -ECONNABORTED);
	server_join(&srv);
	assert_int_equal(srv.get_ret, 0);
	assert_int_equal(srv.ret, 0);
	assert_true(srv.got_peer);
	assert_int_equal(srv.got.op, 1);
	assert_true(fx_capture_has("RDMA_CM_EVENT_REJECTED"));
	assert_true(fx_capture_has("not today"));
	side_close(&c);
}

static void test_listen_port_in_use(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct rk_cm *a, *b = NULL;

	assert_int_equal(rk_cm_listen(fx_test_ip(), port, &a), 0);
	fx_capture_reset();
	assert_int_equal(rk_cm_listen(fx_test_ip(), port, &b), -EADDRINUSE);
	assert_null(b);
	assert_true(fx_capture_has("already in use"));
	rk_cm_destroy(a);
}

/* rk_cm_resolve(host) with a 3 s bound, timed and said: within 5 s. */
static int resolve_timed(const char *host, struct rk_cm **cm_p)
{
	int64_t t0 = fx_now_ms();
	int ret;

	fx_capture_reset();
	ret = rk_cm_resolve(host, fx_next_port(PORT_BASE), 3000, cm_p);
	printf("# resolve %s: %s after %lld ms\n", host, rk_strerror(ret),
	       (long long)(fx_now_ms() - t0));
	assert_true(fx_now_ms() - t0 < 5000);
	return ret;
}

/* Loopback: RDMA CM binds 127.0.0.1 to some device (rxe0), but no route
 * leads anywhere from it on RoCE: a named error at once. */
static void test_resolve_loopback(void **state)
{
	struct rk_cm *cm = NULL;
	int ret = resolve_timed("127.0.0.1", &cm);

	if (ret == 0) {
		printf("# 127.0.0.1 resolved to %s port %u, GID index %u\n", cm->dev->info.name,
		       cm->port_num, cm->gid.index);
		rk_cm_destroy(cm);
	} else {
		assert_true(fx_capture_has("resolve 127.0.0.1"));
		assert_true(fx_capture_has("loopback"));
	}
}

/* An address on the RDMA subnet where nobody is: a named error in bounded time. */
static void test_unreachable_peer(void **state)
{
	struct rk_wire_buf mine = {0};
	struct rk_cm *cm = NULL;
	struct side c;
	int64_t t0;
	int ret = resolve_timed("198.18.0.99", &cm);

	if (ret) {
		assert_true(fx_capture_has("RDMA_CM_EVENT"));
		return;
	}
	assert_int_equal(side_open(&c, cm), 0);
	t0 = fx_now_ms();
	ret = rk_cm_connect(cm, c.qp, &mine, 3000);
	printf("# connect to 198.18.0.99: %s after %lld ms\n", rk_strerror(ret),
	       (long long)(fx_now_ms() - t0));
	assert_true(ret == -ETIMEDOUT || ret == -EHOSTUNREACH);
	assert_true(fx_now_ms() - t0 < 5000);
	assert_true(fx_capture_has("198.18.0.99"));
	side_close(&c);
}

/* Wait for one event of type on a raw librdmacm channel. */
static int raw_wait(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
		    struct rdma_cm_event *copy)
{
	struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *e;
	int ret;

	if (poll(&pfd, 1, WAIT_MS) != 1 || rdma_get_cm_event(ch, &e))
		return -ETIMEDOUT;
	ret = e->event == type ? 0 : -EPROTO;
	if (ret)
		fprintf(stderr, "# raw client: %s, not %s\n", rk_cm_event_name(e->event),
			rk_cm_event_name(type));
	*copy = *e;
	rdma_ack_cm_event(e);
	return ret;
}

/* A client that is not rdmakit: 48 bytes of 'A' as private data. */
static void test_garbage_private_data(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct rdma_conn_param param;
	struct rdma_event_channel *ch;
	struct rdma_cm_event ev;
	struct rdma_cm_id *id;
	uint8_t junk[RK_WIRE_CM_HELLO_LEN];
	struct server srv;

	assert_int_equal(inet_pton(AF_INET, fx_test_ip(), &sin.sin_addr), 1);
	server_start(&srv, SERVE_REQUEST_ONLY, fx_test_ip(), port);
	ch = rdma_create_event_channel();
	assert_non_null(ch);
	assert_int_equal(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, 2000), 0);
	assert_int_equal(raw_wait(ch, RDMA_CM_EVENT_ADDR_RESOLVED, &ev), 0);
	assert_int_equal(rdma_resolve_route(id, 2000), 0);
	assert_int_equal(raw_wait(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev), 0);
	memset(junk, 0x41, sizeof(junk));
	memset(&param, 0, sizeof(param));
	param.private_data = junk;
	param.private_data_len = sizeof(junk);
	param.qp_num = 0x1234; /* no QP: the request never gets that far */
	param.retry_count = 7;
	fx_capture_reset();
	assert_int_equal(rdma_connect(id, &param), 0);
	assert_int_equal(raw_wait(ch, RDMA_CM_EVENT_REJECTED, &ev), 0);
	printf("# raw client: REJECTED, status %d, %u bytes of private data\n", ev.status,
	       ev.param.conn.private_data_len);
	server_join(&srv);
	assert_int_equal(srv.get_ret, -EBADMSG);
	assert_true(fx_capture_has("not from rdmakit"));
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_exchange_write),
		cmocka_unit_test(test_keep_receive),
		cmocka_unit_test(test_no_listener_refused),
		cmocka_unit_test(test_reject_with_reason),
		cmocka_unit_test(test_listen_port_in_use),
		cmocka_unit_test(test_resolve_loopback),
		cmocka_unit_test(test_unreachable_peer),
		cmocka_unit_test(test_garbage_private_data),
	};

	return fx_run("RDMA CM tests", tests);
}
