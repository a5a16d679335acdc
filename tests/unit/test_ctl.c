/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The control channel's framing (rk_ctl_recv) over a transport that, like
 * the channel over an RC QP, holds whole messages and waits for the next
 * one when asked for bytes it does not have: a header-only message
 * (BENCH_FIN) must be received without asking for a 0-byte rest. And
 * rk_tcp_peer_closed() on a loopback TCP channel, with rk_ctl_window() and
 * rk_ctl_qp_claim() on it; the order of a sync point; rk_ctl_send_error()'s
 * message. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdmakit/ctl.h>
#include <rdmakit/ctl_qp.h>
#include <rdmakit/stop.h>
#include <rdmakit/tcp.h>
#include <rdmakit/wire.h>

#include "unit.h"

struct msg_stream {
	struct rk_ctl ctl; /* first */
	uint8_t bytes[4 * RK_WIRE_MAX_LEN];
	size_t len, off;
	int zero_reads; /* reads of 0 bytes asked for */
};

static int stream_send(struct rk_ctl *ctl, const uint8_t *buf, size_t len)
{
	struct msg_stream *s = (struct msg_stream *)ctl;

	if (s->len + len > sizeof(s->bytes))
		return -ENOSPC;
	memcpy(s->bytes + s->len, buf, len);
	s->len += len;
	return 0;
}

/* Like a QP channel with no SEND staged: asked for what it lacks, it waits
 * for a message that never comes (-ETIMEDOUT). */
static int stream_recv(struct rk_ctl *ctl, uint8_t *buf, size_t len, int timeout_ms,
		       size_t *got_p)
{
	struct msg_stream *s = (struct msg_stream *)ctl;

	(void)timeout_ms;
	*got_p = 0;
	if (!len)
		s->zero_reads++;
	if (s->off == s->len || s->len - s->off < len)
		return -ETIMEDOUT;
	memcpy(buf, s->bytes + s->off, len);
	s->off += len;
	*got_p = len;
	return 0;
}

static void stream_close(struct rk_ctl *ctl)
{
	(void)ctl;
}

static const struct rk_ctl_ops stream_ops = {
	.send = stream_send,
	.recv = stream_recv,
	.close = stream_close,
};

static void stream_init(struct msg_stream *s)
{
	memset(s, 0, sizeof(*s));
	s->ctl.ops = &stream_ops;
	s->ctl.fd = -1;
	snprintf(s->ctl.peer, sizeof(s->ctl.peer), "test peer");
}

/* BENCH_FIN, then a SYNC: both received, in order, and the FIN's receive
 * asks for no byte beyond its header. */
static void test_header_only_message(void **state)
{
	struct rk_msg fin = {.type = RK_MSG_BENCH_FIN};
	struct rk_msg sync = {.type = RK_MSG_SYNC, .u.sync = {.step = 7, .status = 0}};
	struct rk_msg got;
	struct msg_stream s;

	(void)state;
	assert_int_equal(rk_wire_len(RK_MSG_BENCH_FIN), RK_WIRE_HDR_LEN);
	stream_init(&s);
	assert_int_equal(rk_ctl_send(&s.ctl, &fin), 0);
	assert_int_equal(rk_ctl_send(&s.ctl, &sync), 0);
	assert_int_equal(s.len, RK_WIRE_HDR_LEN + RK_WIRE_SYNC_LEN);

	memset(&got, 0xa5, sizeof(got));
	assert_int_equal(rk_ctl_recv(&s.ctl, 1000, &got), 0);
	assert_int_equal(got.type, RK_MSG_BENCH_FIN);
	assert_int_equal(s.off, RK_WIRE_HDR_LEN);
	assert_int_equal(s.zero_reads, 0);

	assert_int_equal(rk_ctl_expect(&s.ctl, RK_MSG_SYNC, 1000, &got), 0);
	assert_int_equal(got.u.sync.step, 7);
	assert_int_equal(s.off, s.len);
	assert_int_equal(s.zero_reads, 0);
}

/* Only the FIN on the channel: received at once, not a timeout waiting for
 * a rest it does not have. */
static void test_header_only_last(void **state)
{
	struct rk_msg fin = {.type = RK_MSG_BENCH_FIN};
	struct rk_msg got;
	struct msg_stream s;

	(void)state;
	stream_init(&s);
	assert_int_equal(rk_ctl_send(&s.ctl, &fin), 0);
	assert_int_equal(rk_ctl_expect(&s.ctl, RK_MSG_BENCH_FIN, 1000, &got), 0);
	assert_int_equal(s.zero_reads, 0);
	/* and nothing more: the next receive times out, as it should */
	assert_int_equal(rk_ctl_recv(&s.ctl, 1000, &got), -ETIMEDOUT);
}

/* A sync point's order. Plainly this side's SYNC goes first (on this
 * loopback stream it then reads its own); answering (sync_answers), it waits
 * for the peer's and sends nothing until that came, then answers. */
static void test_sync_answers(void **state)
{
	struct rk_msg peer = {.type = RK_MSG_SYNC, .u.sync = {.step = 3, .status = 0}};
	struct rk_msg got;
	struct msg_stream s;

	(void)state;
	stream_init(&s);
	assert_int_equal(rk_ctl_sync(&s.ctl, 3, 0, 1000), 0);
	assert_int_equal(s.len, RK_WIRE_SYNC_LEN);

	stream_init(&s);
	s.ctl.sync_answers = true;
	assert_int_equal(rk_ctl_sync(&s.ctl, 3, 0, 1000), -ETIMEDOUT);
	assert_int_equal(s.len, 0);

	stream_init(&s);
	s.ctl.sync_answers = true;
	assert_int_equal(rk_ctl_send(&s.ctl, &peer), 0);
	assert_int_equal(rk_ctl_sync(&s.ctl, 3, -EIO, 1000), 0);
	assert_int_equal(s.off, RK_WIRE_SYNC_LEN);
	assert_int_equal(s.len, 2 * RK_WIRE_SYNC_LEN);
	assert_int_equal(rk_ctl_recv(&s.ctl, 1000, &got), 0);
	assert_int_equal(got.type, RK_MSG_SYNC);
	assert_int_equal(got.u.sync.step, 3);
	assert_int_equal(got.u.sync.status, -EIO);
}

/* rk_tcp_peer_closed() over a real loopback connection: false while the
 * peer holds its end (a message waiting is not a close), true once it
 * closed it; false for a channel that is not TCP. On the way, the window:
 * RK_CTL_WINDOW on TCP, 1 without a socket (as over a QP); and
 * rk_ctl_qp_claim() leaves a completion met on a channel that is not on a
 * QP to the caller (1). */
static void test_tcp_peer_closed(void **state)
{
	struct ibv_wc wc = {.wr_id = 42, .status = IBV_WC_SUCCESS};
	struct rk_msg msg = {.type = RK_MSG_SYNC};
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct rk_ctl *cli, *srv;
	struct msg_stream s;
	int lfd;

	(void)state;
	assert_int_equal(rk_tcp_listen("127.0.0.1", 0, &lfd), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	assert_int_equal(rk_tcp_connect("127.0.0.1", ntohs(sin.sin_port), 2000, &cli), 0);
	assert_int_equal(rk_tcp_accept(lfd, 2000, &srv), 0);
	assert_int_equal(rk_ctl_window(cli), RK_CTL_WINDOW);
	assert_int_equal(rk_ctl_window(srv), RK_CTL_WINDOW);
	assert_int_equal(rk_ctl_qp_claim(cli, &wc), 1);
	assert_false(rk_tcp_peer_closed(cli));
	assert_int_equal(rk_ctl_send(srv, &msg), 0);
	assert_int_equal(rk_ctl_pending(cli, 1000), 1);
	assert_false(rk_tcp_peer_closed(cli));
	rk_ctl_close(srv);
	for (int i = 0; i < 100 && !rk_tcp_peer_closed(cli); i++)
		usleep(10000);
	assert_true(rk_tcp_peer_closed(cli));
	rk_ctl_close(cli);
	close(lfd);
	stream_init(&s);
	assert_false(rk_tcp_peer_closed(&s.ctl));
	assert_int_equal(rk_ctl_window(&s.ctl), 1);
	assert_int_equal(rk_ctl_qp_claim(&s.ctl, &wc), 1);
}

/* A stop request (stop.h) made before rk_tcp_accept() waits, as when a
 * --persist server's SIGTERM comes while it sets up, ends the wait at once
 * with -EINTR: it does not wait out the timeout (or forever). */
static void test_tcp_accept_stopped(void **state)
{
	static volatile sig_atomic_t stop;
	struct rk_ctl *srv = NULL;
	struct timespec t0, t1;
	int lfd;

	(void)state;
	assert_int_equal(rk_tcp_listen("127.0.0.1", 0, &lfd), 0);
	stop = SIGTERM;
	rk_stop_watch(&stop);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(rk_tcp_accept(lfd, 3000, &srv), -EINTR);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rk_stop_watch(NULL);
	assert_null(srv);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	close(lfd);
}

/* rk_ctl_send_error() sends one ERROR message with the code and the
 * formatted reason, which the peer's rk_ctl_recv() ends on; NULL is
 * ignored. */
static void test_ctl_send_error(void **state)
{
	struct msg_stream s;
	struct rk_msg got;
	char why[128];

	(void)state;
	stream_init(&s);
	rk_ctl_send_error(&s.ctl, -ENOSPC, "buffer of %d bytes is too small", 64);
	rk_ctl_send_error(NULL, -EIO, "nobody");
	/* The bytes sent are that message, and the one message there is. */
	assert_int_equal(rk_wire_decode(s.bytes, s.len, &got, why, sizeof(why)), 0);
	assert_int_equal(got.type, RK_MSG_ERROR);
	assert_int_equal(got.u.error.code, -ENOSPC);
	assert_string_equal(got.u.error.text, "buffer of 64 bytes is too small");
	assert_int_equal(s.len, rk_wire_len(RK_MSG_ERROR));
	/* The receiving side ends with it: the peer gave up. */
	assert_int_equal(rk_ctl_recv(&s.ctl, 1000, &got), -ECONNABORTED);
	assert_int_equal(s.off, s.len);
}

/* A connect refused on every try gives up with -ECONNREFUSED, the error its
 * message names, not -ETIMEDOUT (issue 35: `rc HOST --json` said "Connection
 * timed out" where stderr said "Connection refused"). */
static void test_tcp_connect_refused(void **state)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct rk_ctl *cli = NULL;
	int lfd, port;

	(void)state;
	/* A port that was just listened on and closed: nothing listens there. */
	assert_int_equal(rk_tcp_listen("127.0.0.1", 0, &lfd), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	port = ntohs(sin.sin_port);
	close(lfd);
	assert_int_equal(rk_tcp_connect("127.0.0.1", (uint16_t)port, 0, &cli), -ECONNREFUSED);
	assert_int_equal(rk_tcp_connect("127.0.0.1", (uint16_t)port, 500, &cli), -ECONNREFUSED);
	assert_null(cli);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_only_message),
		cmocka_unit_test(test_header_only_last),
		cmocka_unit_test(test_sync_answers),
		cmocka_unit_test(test_tcp_peer_closed),
		cmocka_unit_test(test_ctl_send_error),
		cmocka_unit_test(test_tcp_connect_refused),
		cmocka_unit_test(test_tcp_accept_stopped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
