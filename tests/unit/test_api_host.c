/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Public calls that only the library's own engines used (issue 33), on the
 * host where they need no device: CM's connect-with-retry loop, the control
 * channel's window, error message and completion claim, device memory's
 * bounds and its refusal on a device without any, and the NULLs that free
 * and unimport ignore. Their device halves are tests/rdma/test_api.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdmakit/cm.h>
#include <rdmakit/ctl.h>
#include <rdmakit/ctl_qp.h>
#include <rdmakit/dm.h>
#include <rdmakit/share.h>
#include <rdmakit/tcp.h>

#include "unit.h"

/* ---- rk_cm_connect_retry ---- */

struct tries {
	int results[8]; /* what each attempt returns, in turn */
	int attempts, resets;
	int reset_ret;
};

static int attempt(void *arg)
{
	struct tries *t = arg;

	return t->results[t->attempts++];
}

static int reset(void *arg)
{
	struct tries *t = arg;

	t->resets++;
	return t->reset_ret;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* No listener twice, then connected: three tries, two resets between them,
 * an interval slept before each retry. */
static void test_cm_retry_until_connected(void **state)
{
	struct tries t = {.results = {-ECONNREFUSED, -EBUSY, 0}};
	int64_t t0 = now_ms();
	int tries = 0;

	(void)state;
	assert_int_equal(rk_cm_connect_retry(5000, attempt, reset, &t, &tries), 0);
	assert_int_equal(tries, 3);
	assert_int_equal(t.attempts, 3);
	assert_int_equal(t.resets, 2);
	assert_true(now_ms() - t0 >= 2 * RK_CM_RETRY_INTERVAL_MS);
}

/* A reject is not worth a retry: one try, no reset, its error. */
static void test_cm_retry_not_worth(void **state)
{
	struct tries t = {.results = {-ECONNABORTED, 0}};
	int tries = 0;

	(void)state;
	assert_int_equal(rk_cm_connect_retry(5000, attempt, reset, &t, &tries), -ECONNABORTED);
	assert_int_equal(tries, 1);
	assert_int_equal(t.resets, 0);
}

/* The timeout ends the tries (0 ms: the first one only), and reset's error
 * ends them too. */
static void test_cm_retry_timeout_and_reset_error(void **state)
{
	struct tries t = {.results = {-ECONNREFUSED, -ECONNREFUSED, 0}};
	struct tries u = {.results = {-EHOSTUNREACH, 0}, .reset_ret = -ENOMEM};
	int tries = 0;

	(void)state;
	assert_int_equal(rk_cm_connect_retry(0, attempt, reset, &t, &tries), -ECONNREFUSED);
	assert_int_equal(tries, 1);
	assert_int_equal(t.resets, 0);
	assert_int_equal(rk_cm_connect_retry(5000, attempt, reset, &u, NULL), -ENOMEM);
	assert_int_equal(u.attempts, 1);
	assert_int_equal(u.resets, 1);
}

/* ---- the control channel: window, error message, claim ---- */

struct msg_stream {
	struct rk_ctl ctl; /* first */
	uint8_t bytes[4 * RK_WIRE_MAX_LEN];
	size_t len, off;
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

static int stream_recv(struct rk_ctl *ctl, uint8_t *buf, size_t len, int timeout_ms,
		       size_t *got_p)
{
	struct msg_stream *s = (struct msg_stream *)ctl;

	(void)timeout_ms;
	*got_p = 0;
	if (s->len - s->off < len)
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

/* The window: RK_CTL_WINDOW on a TCP channel, 1 on one without a socket
 * (as the channel over a QP). rk_ctl_qp_claim() leaves a completion met on
 * a channel that is not on a QP to the caller (1). */
static void test_ctl_window_and_claim(void **state)
{
	struct ibv_wc wc = {.wr_id = 42, .status = IBV_WC_SUCCESS};
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct rk_ctl *cli, *srv;
	struct msg_stream s;
	int lfd;

	(void)state;
	stream_init(&s);
	assert_int_equal(rk_ctl_window(&s.ctl), 1);
	assert_int_equal(rk_ctl_qp_claim(&s.ctl, &wc), 1);
	assert_int_equal(rk_tcp_listen("127.0.0.1", 0, &lfd), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	assert_int_equal(rk_tcp_connect("127.0.0.1", ntohs(sin.sin_port), 2000, &cli), 0);
	assert_int_equal(rk_tcp_accept(lfd, 2000, &srv), 0);
	assert_int_equal(rk_ctl_window(cli), RK_CTL_WINDOW);
	assert_int_equal(rk_ctl_window(srv), RK_CTL_WINDOW);
	assert_int_equal(rk_ctl_qp_claim(cli, &wc), 1);
	rk_ctl_close(srv);
	rk_ctl_close(cli);
	close(lfd);
}

/* ---- device memory without a device ---- */

/* A device whose max_dm_size is 0 is refused before any verbs call;
 * copies outside the memory are -ERANGE before any either. */
static void test_dm_refusals(void **state)
{
	struct rk_device dev;
	struct rk_dm dm = {.len = 64};
	struct rk_dm *got = NULL;
	uint8_t b[32] = {0};

	(void)state;
	memset(&dev, 0, sizeof(dev));
	snprintf(dev.info.name, sizeof(dev.info.name), "nodm0");
	assert_int_equal(rk_dm_alloc(&dev, NULL, 4096, IBV_ACCESS_LOCAL_WRITE, &got), -EOPNOTSUPP);
	assert_null(got);
	assert_int_equal(rk_dm_write(&dm, 40, b, 32), -ERANGE);
	assert_int_equal(rk_dm_read(&dm, 65, b, 0), -ERANGE);
	assert_int_equal(rk_dm_read(&dm, 33, b, 32), -ERANGE);
	rk_dm_free(NULL);
	rk_share_unimport(NULL);
}

/* ibv_fork_init() before any registration: accepted. */
static void test_fork_init(void **state)
{
	(void)state;
	assert_int_equal(rk_fork_init(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cm_retry_until_connected),
		cmocka_unit_test(test_cm_retry_not_worth),
		cmocka_unit_test(test_cm_retry_timeout_and_reset_error),
		cmocka_unit_test(test_ctl_send_error),
		cmocka_unit_test(test_ctl_window_and_claim),
		cmocka_unit_test(test_dm_refusals),
		cmocka_unit_test(test_fork_init),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
