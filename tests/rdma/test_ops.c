/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Every operation between two connected RC QPs on one device, checked byte
 * for byte: SEND, SEND with immediate, WRITE, WRITE with immediate, READ,
 * fetch-add, compare-swap, scatter/gather, event-driven completions, and the
 * remote access error a wrong rkey or a missing access flag gives. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

#define NSGE 4
#define REMOTE_ALL (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct fx F;

static int open_connected(int mr_access, int qp_access, bool events)
{
	return fx_open_connected(&F, mr_access, NSGE, events, qp_access);
}

static int setup_polled(void **state)
{
	return open_connected(REMOTE_ALL, REMOTE_ALL, false);
}

static int setup_events(void **state)
{
	return open_connected(REMOTE_ALL, REMOTE_ALL, true);
}

/* B's MR allows only REMOTE_READ: WRITE and atomics must fail remotely. */
static int setup_read_only_mr(void **state)
{
	return open_connected(IBV_ACCESS_REMOTE_READ, REMOTE_ALL, false);
}

static int teardown(void **state)
{
	fx_close(&F);
	return 0;
}

static uint64_t addr_b(size_t off)
{
	return (uint64_t)(uintptr_t)F.mr_b->buf + off;
}

static void wait_ok(struct rk_cq *cq, struct ibv_wc *wc, uint64_t wr_id)
{
	assert_int_equal(fx_wait(cq, wc), 0);
	assert_string_equal(rk_wc_status_name(wc->status), "IBV_WC_SUCCESS");
	assert_int_equal(wc->wr_id, wr_id);
}

static void post_ok(struct rk_wr *wr)
{
	wr->flags |= IBV_SEND_SIGNALED;
	assert_int_equal(rk_post(F.qp_a, wr), 0);
}

/* B's receive wr_id completed as opcode, and B's buffer holds the len bytes of
 * pattern seed that A sent. */
static void recv_ok(struct ibv_wc *wc, uint64_t wr_id, const char *opcode, uint32_t len,
		    uint32_t seed)
{
	wait_ok(F.cq_b, wc, wr_id);
	assert_string_equal(rk_wc_opcode_name(wc->opcode), opcode);
	assert_int_equal(wc->byte_len, len);
	assert_int_equal(rk_pattern_check(F.mr_b->buf, len, seed), -1);
}

/* SEND at 1 byte, one MTU plus one, and 64 KiB, through NSGE pieces on both
 * sides (gathered on send, scattered on receive). */
static void test_send_sizes_sge(void **state)
{
	static const uint32_t sizes[] = {1, 1025, 4096, FX_BUF};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		int n = len < NSGE ? 1 : NSGE;
		struct ibv_sge sa[NSGE], sb[NSGE];
		struct rk_wr wr = {.op = RK_OP_SEND, .wr_id = i, .sg = sa, .nsge = n};
		struct ibv_wc wc;

		rk_pattern_fill(F.mr_a->buf, len, (uint32_t)i + 10);
		memset(F.mr_b->buf, 0, FX_BUF);
		assert_int_equal(rk_sge_split(F.mr_a, 0, len, n, sa), n);
		assert_int_equal(rk_sge_split(F.mr_b, 0, len, n, sb), n);
		assert_int_equal(rk_post_recv(F.qp_b, 1000 + i, sb, n), 0);
		post_ok(&wr);
		wait_ok(F.cq_a, &wc, i);
		recv_ok(&wc, 1000 + i, "RECV", len, (uint32_t)i + 10);
	}
}

static void test_send_imm(void **state)
{
	struct ibv_sge sa = rk_sge(F.mr_a, 0, 100), sb = rk_sge(F.mr_b, 0, 100);
	struct rk_wr wr = {.op = RK_OP_SEND_IMM, .wr_id = 7, .sg = &sa, .nsge = 1,
			   .imm = 0xdeadbeef};
	struct ibv_wc wc;

	rk_pattern_fill(F.mr_a->buf, 100, 3);
	assert_int_equal(rk_post_recv(F.qp_b, 8, &sb, 1), 0);
	post_ok(&wr);
	wait_ok(F.cq_a, &wc, 7);
	recv_ok(&wc, 8, "RECV", 100, 3);
	assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
	assert_int_equal(ntohl(wc.imm_data), 0xdeadbeef);
}

/* A's op (a WRITE or a READ) of len bytes at offset off of B's buffer, from or
 * into NSGE pieces of A's buffer, completes at A as wr_id. */
static void rdma_ok(enum rk_op op, uint64_t wr_id, size_t off, uint32_t len, struct ibv_wc *wc)
{
	struct ibv_sge sa[NSGE];
	struct rk_wr wr = {.op = op, .wr_id = wr_id, .sg = sa, .nsge = NSGE,
			   .remote_addr = addr_b(off), .rkey = F.mr_b->mr->rkey};

	rk_sge_split(F.mr_a, 0, len, NSGE, sa);
	post_ok(&wr);
	wait_ok(F.cq_a, wc, wr_id);
}

/* WRITE at an offset, gathered from NSGE local pieces, past the MTU. */
static void test_write(void **state)
{
	struct ibv_wc wc;
	uint8_t *b = F.mr_b->buf;

	rk_pattern_fill(F.mr_a->buf, 5000, 4);
	memset(F.mr_b->buf, 0xee, FX_BUF);
	rdma_ok(RK_OP_WRITE, 9, 512, 5000, &wc);
	assert_int_equal(rk_pattern_check(b + 512, 5000, 4), -1);
	/* Not a byte outside the target range was touched. */
	assert_int_equal(b[511], 0xee);
	assert_int_equal(b[512 + 5000], 0xee);
	/* A plain WRITE consumes no receive and raises no completion at B. */
	{
		int n;

		assert_int_equal(rk_cq_poll(F.cq_b, &wc, 1, 0, &n), -ETIMEDOUT);
	}
}

/* WRITE with immediate consumes a receive and reports the immediate. */
static void test_write_imm(void **state)
{
	struct ibv_sge sa = rk_sge(F.mr_a, 0, 2048);
	struct rk_wr wr = {.op = RK_OP_WRITE_IMM, .wr_id = 10, .sg = &sa, .nsge = 1,
			   .remote_addr = addr_b(0), .rkey = F.mr_b->mr->rkey, .imm = 42};
	struct ibv_wc wc;

	rk_pattern_fill(F.mr_a->buf, 2048, 5);
	memset(F.mr_b->buf, 0, FX_BUF);
	assert_int_equal(rk_post_recv(F.qp_b, 11, NULL, 0), 0);
	post_ok(&wr);
	wait_ok(F.cq_a, &wc, 10);
	recv_ok(&wc, 11, "RECV_RDMA_WITH_IMM", 2048, 5);
	assert_int_equal(ntohl(wc.imm_data), 42);
}

/* READ scattered into NSGE local pieces, 64 KiB (many response packets). */
static void test_read(void **state)
{
	struct ibv_wc wc;

	rk_pattern_fill(F.mr_b->buf, FX_BUF, 6);
	memset(F.mr_a->buf, 0, FX_BUF);
	rdma_ok(RK_OP_READ, 12, 0, FX_BUF, &wc);
	assert_string_equal(rk_wc_opcode_name(wc.opcode), "RDMA_READ");
	assert_int_equal(rk_pattern_check(F.mr_a->buf, FX_BUF, 6), -1);
}

/* Fetch-add returns the old value and adds; compare-swap swaps only on a
 * match and always returns the old value. */
static void test_atomics(void **state)
{
	uint64_t *remote = (uint64_t *)((char *)F.mr_b->buf + 64);
	uint64_t *result = F.mr_a->buf;
	struct ibv_sge s = rk_sge(F.mr_a, 0, 8);
	struct rk_wr wr = {.sg = &s, .nsge = 1, .remote_addr = addr_b(64),
			   .rkey = F.mr_b->mr->rkey};
	struct ibv_wc wc;

	*remote = 100;
	wr.op = RK_OP_FETCH_ADD;
	wr.wr_id = 20;
	wr.compare_add = 5;
	post_ok(&wr);
	wait_ok(F.cq_a, &wc, 20);
	assert_string_equal(rk_wc_opcode_name(wc.opcode), "FETCH_ADD");
	assert_int_equal(*result, 100);
	assert_int_equal(*remote, 105);

	wr.op = RK_OP_CMP_SWAP;
	wr.wr_id = 21;
	wr.compare_add = 999; /* no match: unchanged */
	wr.swap = 7;
	post_ok(&wr);
	wait_ok(F.cq_a, &wc, 21);
	assert_int_equal(*result, 105);
	assert_int_equal(*remote, 105);

	wr.wr_id = 22;
	wr.compare_add = 105; /* match: swapped */
	post_ok(&wr);
	wait_ok(F.cq_a, &wc, 22);
	assert_string_equal(rk_wc_opcode_name(wc.opcode), "COMP_SWAP");
	assert_int_equal(*result, 105);
	assert_int_equal(*remote, 7);
}

/* Bad requests are refused locally before the device sees them. */
static void test_local_checks(void **state)
{
	struct ibv_sge s = rk_sge(F.mr_a, 0, 4);
	struct rk_wr wr = {.op = RK_OP_FETCH_ADD, .sg = &s, .nsge = 1, .remote_addr = addr_b(0),
			   .rkey = F.mr_b->mr->rkey};

	assert_int_equal(rk_post(F.qp_a, &wr), -EINVAL); /* atomics need 8 bytes */
	assert_non_null(strstr(F.last_log, "8-byte"));
	s.length = 8;
	wr.remote_addr = addr_b(4);
	assert_int_equal(rk_post(F.qp_a, &wr), -EINVAL); /* misaligned */
	assert_non_null(strstr(F.last_log, "aligned"));
	wr.op = RK_OP_SEND;
	wr.nsge = NSGE + 1;
	assert_int_equal(rk_post(F.qp_a, &wr), -EINVAL); /* more SGEs than the QP has */
	assert_non_null(strstr(F.last_log, "SGEs"));
}

/* A wrong rkey: the requester gets IBV_WC_REM_ACCESS_ERR with its hint, in
 * bounded time, and its QP goes to ERR. Run last on its fixture. */
static void expect_remote_access_error(struct rk_wr *wr)
{
	struct ibv_wc wc;
	enum ibv_qp_state st;

	post_ok(wr);
	assert_int_equal(fx_wait(F.cq_a, &wc), 0);
	assert_string_equal(rk_wc_status_name(wc.status), "IBV_WC_REM_ACCESS_ERR");
	fx_log_reset(&F);
	assert_int_equal(rk_wc_check(&wc, rk_op_str(wr->op)), -EACCES);
	assert_non_null(strstr(F.last_log, "IBV_WC_REM_ACCESS_ERR"));
	assert_non_null(strstr(F.last_log, "rkey"));
	assert_int_equal(rk_qp_query_state(F.qp_a, &st), 0);
	assert_string_equal(rk_qp_state_str(st), "ERR");
}

static void test_wrong_rkey(void **state)
{
	struct ibv_sge s = rk_sge(F.mr_a, 0, 64);
	struct rk_wr wr = {.op = RK_OP_WRITE, .wr_id = 30, .sg = &s, .nsge = 1,
			   .remote_addr = addr_b(0), .rkey = F.mr_b->mr->rkey ^ 0x5a5a00};

	expect_remote_access_error(&wr);
}

/* B's MR was registered without REMOTE_WRITE: a WRITE is refused by B. */
static void test_missing_access_flag(void **state)
{
	struct ibv_sge s = rk_sge(F.mr_a, 0, 64);
	struct rk_wr wr = {.op = RK_OP_WRITE, .wr_id = 31, .sg = &s, .nsge = 1,
			   .remote_addr = addr_b(0), .rkey = F.mr_b->mr->rkey};

	expect_remote_access_error(&wr);
}

/* Out of the registered range: one byte past the end of B's MR. */
static void test_outside_mr(void **state)
{
	struct ibv_sge s = rk_sge(F.mr_a, 0, 64);
	struct rk_wr wr = {.op = RK_OP_READ, .wr_id = 32, .sg = &s, .nsge = 1,
			   .remote_addr = addr_b(FX_BUF - 63), .rkey = F.mr_b->mr->rkey};

	expect_remote_access_error(&wr);
}

static bool gone_answer;
static int gone_asked;

static bool peer_gone(void *arg)
{
	(void)arg;
	gone_asked++;
	return gone_answer;
}

/* A failure that a leaving peer can cause (REM_ACCESS_ERR here, from a
 * wrong rkey) while w.gone() says the peer left: the wait ends as the
 * peer's leaving, -ECONNRESET, the status not logged. With the peer still
 * there: the failure itself, logged, after gone() was asked for 500 ms. */
static void wait_ids_failure(bool gone)
{
	struct ibv_sge s = rk_sge(F.mr_a, 0, 64);
	struct rk_wr wr = {.op = RK_OP_WRITE, .wr_id = 40, .sg = &s, .nsge = 1,
			   .remote_addr = addr_b(0), .rkey = F.mr_b->mr->rkey ^ 0x5a5a00};
	struct rk_cq_ids w = {.cq = F.cq_a, .gone = peer_gone};
	const uint64_t want[1] = {40};
	int64_t t0;
	int ret;

	gone_answer = gone;
	gone_asked = 0;
	post_ok(&wr);
	fx_log_reset(&F);
	t0 = fx_now_ms();
	ret = rk_cq_wait_ids(&w, want, 1, FX_WAIT_MS, "WRITE", NULL);
	printf("# gone() %s: %s after %lld ms, asked %d times\n", gone ? "true" : "false",
	       rk_strerror(ret), (long long)(fx_now_ms() - t0), gone_asked);
	if (gone) {
		assert_int_equal(ret, -ECONNRESET);
		assert_null(strstr(F.last_log, "failed"));
		assert_int_equal(gone_asked, 1);
	} else {
		assert_int_equal(ret, -EACCES);
		assert_non_null(strstr(F.last_log, "IBV_WC_REM_ACCESS_ERR"));
		assert_int_equal(gone_asked, 50);
		assert_true(fx_now_ms() - t0 >= 500);
	}
}

static void test_failure_peer_gone(void **state)
{
	(void)state;
	wait_ids_failure(true);
}

static void test_failure_peer_there(void **state)
{
	(void)state;
	wait_ids_failure(false);
}

/* Atomics need a device that has them; main() checks before running them. */
static int device_has_atomics(void)
{
	struct rk_device *dev;
	int has;

	if (rk_device_open(getenv("RDMAKIT_TEST_DEVICE"), &dev))
		return -1;
	has = dev->info.atomic_cap != IBV_ATOMIC_NONE;
	if (!has)
		printf("# %s reports atomic_cap none: it has no atomic operations\n",
		       dev->info.name);
	rk_device_close(dev);
	return has;
}

/* "test_ops" runs everything but atomics; "test_ops atomics" runs those and
 * exits 77 (skipped) on a device without them. */
int main(int argc, char **argv)
{
	const struct CMUnitTest polled[] = {
		cmocka_unit_test(test_send_sizes_sge),
		cmocka_unit_test(test_send_imm),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_write_imm),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_local_checks),
		cmocka_unit_test(test_wrong_rkey),
	};
	const struct CMUnitTest events[] = {
		cmocka_unit_test(test_send_sizes_sge),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_outside_mr),
	};
	const struct CMUnitTest read_only[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_missing_access_flag),
	};
	/* Each puts QP A in ERR: a fresh pair for each. */
	const struct CMUnitTest peer_gone_tests[] = {
		cmocka_unit_test_setup_teardown(test_failure_peer_gone, setup_polled, teardown),
		cmocka_unit_test_setup_teardown(test_failure_peer_there, setup_polled, teardown),
	};
	const struct CMUnitTest atomics[] = {
		cmocka_unit_test(test_atomics),
	};
	int failed = 0;

	if (argc > 1 && !strcmp(argv[1], "atomics")) {
		int has = device_has_atomics();

		if (has <= 0)
			return has < 0 ? 1 : 77;
		failed += cmocka_run_group_tests_name("atomics polled", atomics, setup_polled,
						      teardown);
		failed += cmocka_run_group_tests_name("atomics events", atomics, setup_events,
						      teardown);
		return failed ? 1 : 0;
	}
	failed += cmocka_run_group_tests_name("polled", polled, setup_polled, teardown);
	failed += cmocka_run_group_tests_name("events", events, setup_events, teardown);
	failed += cmocka_run_group_tests_name("read-only MR", read_only, setup_read_only_mr,
					      teardown);
	failed += cmocka_run_group_tests_name("a failure while the peer leaves", peer_gone_tests,
					      NULL, NULL);
	return failed ? 1 : 0;
}
