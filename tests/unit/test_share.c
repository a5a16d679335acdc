/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Message and descriptor passing between processes, shared memory files, and
 * the qp-states report's phrases: pure logic, no verbs device. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdmakit/qp_states.h>
#include <rdmakit/share.h>

#include "unit.h"

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

/* A descriptor travels with the message; the received one names the same file. */
static void test_fd_passing(void **state)
{
	struct rk_share_handles h = {.pd_handle = 7,
				     .mr_handle = 9,
				     .mr_addr = 0x1000,
				     .mr_len = 4096,
				     .lkey = 0x11,
				     .rkey = 0x22},
				got;
	int sv[2], mfd, rfd = -1;
	char buf[8] = {0};

	pair(sv);
	assert_int_equal(rk_shm_create("unit", 4096, &mfd), 0);
	assert_int_equal(pwrite(mfd, "shared", 6, 0), 6);
	assert_int_equal(rk_share_msg_send(sv[0], &h, sizeof(h), mfd), 0);
	assert_int_equal(rk_share_recv_handles(sv[1], 1000, &rfd, &got), 0);
	assert_true(rfd >= 0);
	assert_int_not_equal(rfd, mfd);
	assert_int_equal(got.pd_handle, 7);
	assert_int_equal(got.mr_handle, 9);
	assert_int_equal(got.mr_addr, 0x1000);
	assert_int_equal(got.rkey, 0x22);
	assert_int_equal(pread(rfd, buf, 6, 0), 6);
	assert_string_equal(buf, "shared");
	close(rfd);
	close(mfd);
	close(sv[0]);
	close(sv[1]);
}

/* rk_share_send_handles(): the owner's command fd, PD and MR handles (verbs
 * objects of its own here: only their fields are read) arrive as
 * rk_share_recv_handles() gives them. */
static void test_send_handles(void **state)
{
	struct ibv_context ctx;
	struct ibv_pd pd;
	struct ibv_mr mr;
	struct rk_share_handles got, want = {.pd_handle = 3,
					     .mr_handle = 5,
					     .mr_addr = 0x2000,
					     .mr_len = 8192,
					     .lkey = 0x33,
					     .rkey = 0x44};
	int sv[2], rfd = -1;
	char buf[4] = {0};

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	memset(&pd, 0, sizeof(pd));
	memset(&mr, 0, sizeof(mr));
	assert_int_equal(rk_shm_create("unit", 4096, &ctx.cmd_fd), 0);
	assert_int_equal(pwrite(ctx.cmd_fd, "cmd", 3, 0), 3);
	pd.handle = want.pd_handle;
	mr.handle = want.mr_handle;
	mr.addr = (void *)(uintptr_t)want.mr_addr;
	mr.length = want.mr_len;
	mr.lkey = want.lkey;
	mr.rkey = want.rkey;
	pair(sv);
	assert_int_equal(rk_share_send_handles(sv[0], &ctx, &pd, &mr), 0);
	assert_int_equal(rk_share_recv_handles(sv[1], 1000, &rfd, &got), 0);
	assert_memory_equal(&got, &want, sizeof(want));
	assert_true(rfd >= 0);
	assert_int_equal(pread(rfd, buf, 3, 0), 3);
	assert_string_equal(buf, "cmd"); /* the same file as the owner's fd */
	close(rfd);
	close(ctx.cmd_fd);
	close(sv[0]);
	close(sv[1]);
}

/* Handles without a descriptor are refused by name. */
static void test_handles_need_fd(void **state)
{
	struct rk_share_handles h = {0}, got;
	int sv[2], fd = -5;

	pair(sv);
	assert_int_equal(rk_share_msg_send(sv[0], &h, sizeof(h), -1), 0);
	assert_int_equal(rk_share_recv_handles(sv[1], 1000, &fd, &got), -EPROTO);
	assert_int_equal(fd, -5); /* untouched on failure */
	close(sv[0]);
	close(sv[1]);
}

/* A message that arrives in pieces is put together; silence times out; a
 * closed peer is -EPIPE. */
static void test_recv_pieces_timeout_close(void **state)
{
	uint32_t v[4] = {1, 2, 3, 4}, got[4];
	int sv[2];

	pair(sv);
	assert_int_equal(send(sv[0], v, 6, 0), 6);
	assert_int_equal(send(sv[0], (char *)v + 6, sizeof(v) - 6, 0), (ssize_t)sizeof(v) - 6);
	assert_int_equal(rk_share_msg_recv(sv[1], got, sizeof(got), 1000, NULL), 0);
	assert_memory_equal(got, v, sizeof(v));
	assert_int_equal(rk_share_msg_recv(sv[1], got, sizeof(got), 50, NULL), -ETIMEDOUT);
	assert_int_equal(send(sv[0], v, 3, 0), 3);
	close(sv[0]);
	assert_int_equal(rk_share_msg_recv(sv[1], got, sizeof(got), 1000, NULL), -EPIPE);
	close(sv[1]);
}

/* Two mappings of one memory file see the same bytes. */
static void test_shm_two_mappings(void **state)
{
	void *a, *b;
	int fd;

	assert_int_equal(rk_shm_create("unit2", 8192, &fd), 0);
	assert_int_equal(rk_shm_map(fd, 8192, &a), 0);
	assert_int_equal(rk_shm_map(fd, 8192, &b), 0);
	assert_ptr_not_equal(a, b);
	memcpy((char *)a + 4096, "through a", 10);
	assert_string_equal((char *)b + 4096, "through a");
	rk_shm_unmap(a, 8192);
	rk_shm_unmap(b, 8192);
	close(fd);
}

static void test_fork_status_names(void **state)
{
	assert_string_equal(rk_fork_status_str(IBV_FORK_DISABLED), "DISABLED");
	assert_string_equal(rk_fork_status_str(IBV_FORK_ENABLED), "ENABLED");
	assert_string_equal(rk_fork_status_str(IBV_FORK_UNNEEDED), "UNNEEDED");
	assert_string_equal(rk_fork_status_str((enum ibv_fork_status)42), "UNKNOWN");
}

/* The phrases of the qp-states table, from a synthetic report. */
static void test_qps_fate(void **state)
{
	static struct rk_qps_report rep;
	char buf[128];

	memset(&rep, 0, sizeof(rep));
	rep.nwrs = 4;
	/* 0: a send refused in INIT that ran in RTS anyway (rxe). */
	rep.wrs[0] = (struct rk_qps_wr){.is_send = true,
					.post_ret = -EINVAL,
					.delivered = true,
					.delivered_in = IBV_QPS_RTS,
					.completed = true,
					.status = IBV_WC_SUCCESS};
	/* 1: a receive accepted in INIT, filled in RTR. */
	rep.wrs[1] = (struct rk_qps_wr){.completed = true,
					.status = IBV_WC_SUCCESS,
					.completed_in = IBV_QPS_RTR,
					.byte_len = 64};
	/* 2: a send flushed in ERR. */
	rep.wrs[2] = (struct rk_qps_wr){.is_send = true,
					.completed = true,
					.status = IBV_WC_WR_FLUSH_ERR,
					.completed_in = IBV_QPS_ERR};
	/* 3: a receive accepted and never completed. */
	rep.wrs[3] = (struct rk_qps_wr){0};
	assert_string_equal(rk_qps_fate_str(&rep, 0, buf, sizeof(buf)),
			    "refused (EINVAL), yet ran in RTS");
	assert_string_equal(rk_qps_fate_str(&rep, 1, buf, sizeof(buf)), "accepted, filled in RTR");
	assert_string_equal(rk_qps_fate_str(&rep, 2, buf, sizeof(buf)),
			    "accepted, WR_FLUSH_ERR in ERR");
	assert_string_equal(rk_qps_fate_str(&rep, 3, buf, sizeof(buf)),
			    "accepted, never completed");
	assert_string_equal(rk_qps_fate_str(&rep, -1, buf, sizeof(buf)), "-");
	assert_string_equal(rk_qps_fate_str(&rep, 4, buf, sizeof(buf)), "-");
	assert_string_equal(rk_qps_errno_name(0), "0");
	assert_string_equal(rk_qps_errno_name(-EINVAL), "EINVAL");
	assert_string_equal(rk_qps_errno_name(-EOPNOTSUPP), "EOPNOTSUPP");
	assert_string_equal(rk_qps_errno_name(-ENOTTY), "errno 25");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fd_passing),
		cmocka_unit_test(test_send_handles),
		cmocka_unit_test(test_handles_need_fd),
		cmocka_unit_test(test_recv_pieces_timeout_close),
		cmocka_unit_test(test_shm_two_mappings),
		cmocka_unit_test(test_fork_status_names),
		cmocka_unit_test(test_qps_fate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
