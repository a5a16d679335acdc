/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A server of several clients, the pure parts: the union of the clients'
 * measured spans (overlapping, nested, touching, apart, unsorted), the
 * aggregate over OK, failed and missing clients, and a thread's log scope
 * (its first error kept, its messages tagged). */
#include <errno.h>
#include <stdio.h>

#include <rdmakit/clients.h>
#include <rdmakit/log.h>

#include "unit.h"

#define S(a, b) {(a), (b)}

static void test_union_empty_and_one(void **state)
{
	struct rk_span one[] = {S(100, 350)};

	(void)state;
	assert_int_equal(rk_spans_union_ns(NULL, 0), 0);
	assert_int_equal(rk_spans_union_ns(one, 1), 250);
}

static void test_union_shapes(void **state)
{
	/* unsorted: [0,10) [5,20) overlap, [30,40) apart, [32,35) nested,
	 * [40,45) touching: 20 + 15 */
	struct rk_span a[] = {S(30, 40), S(5, 20), S(40, 45), S(0, 10), S(32, 35)};
	/* identical spans count once */
	struct rk_span b[] = {S(7, 9), S(7, 9), S(7, 9)};
	/* empty spans add nothing */
	struct rk_span c[] = {S(5, 5), S(10, 20), S(15, 15)};

	(void)state;
	assert_int_equal(rk_spans_union_ns(a, ARRAY_SIZE(a)), 35);
	assert_int_equal(a[0].start_ns, 0); /* sorted by start */
	assert_int_equal(rk_spans_union_ns(b, ARRAY_SIZE(b)), 2);
	assert_int_equal(rk_spans_union_ns(c, ARRAY_SIZE(c)), 10);
}

static void test_total(void **state)
{
	/* four wanted: two OK over [0,2 s) and [1,3 s) (union 3 s), one failed
	 * (its bytes not counted), one missing */
	const uint64_t s = 1000000000ull;
	struct rk_span sp1[] = {S(0, s), S(s, 2 * s)}, sp2[] = {S(s, 3 * s)}, sp3[] = {S(0, 9 * s)};
	struct rk_client_tally t[] = {
		{.arrived = true, .bytes = 3000, .msgs = 30, .spans = sp1, .nspans = 2},
		{.arrived = true, .bytes = 600, .msgs = 6, .spans = sp2, .nspans = 1},
		{.arrived = true, .status = -ECONNRESET, .bytes = 5000, .msgs = 50, .spans = sp3,
		 .nspans = 1},
		{.arrived = false},
	};
	struct rk_clients_total tot;

	(void)state;
	assert_int_equal(rk_clients_total(t, ARRAY_SIZE(t), &tot), 0);
	assert_int_equal(tot.wanted, 4);
	assert_int_equal(tot.arrived, 3);
	assert_int_equal(tot.ok, 2);
	assert_int_equal(tot.failed, 1);
	assert_int_equal(tot.missing, 1);
	assert_int_equal(tot.bytes, 3600);
	assert_int_equal(tot.msgs, 36);
	assert_true(tot.seconds == 3.0);
	assert_true(tot.bw == 1200.0);
	assert_true(tot.msg_rate == 12.0);
}

static void test_total_none_ok(void **state)
{
	struct rk_client_tally t[] = {{.arrived = false}, {.arrived = true, .status = -EIO}};
	struct rk_clients_total tot;

	(void)state;
	assert_int_equal(rk_clients_total(t, ARRAY_SIZE(t), &tot), 0);
	assert_int_equal(tot.ok, 0);
	assert_int_equal(tot.bytes, 0);
	assert_true(tot.seconds == 0 && tot.bw == 0 && tot.msg_rate == 0);
}

static char seen[1024];

static void keep_line(enum rk_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	snprintf(seen, sizeof(seen), "%s", msg);
}

static void test_log_scope(void **state)
{
	char first[64];

	(void)state;
	rk_log_set_handler(keep_line, NULL);
	rk_log_thread_scope("client 2 (198.18.0.1:5000)", first, sizeof(first));
	rk_warn("a warning is not kept");
	assert_string_equal(first, "");
	assert_string_equal(seen, "client 2 (198.18.0.1:5000): a warning is not kept");
	rk_error("the first error, %d", 1);
	rk_error("a second error");
	assert_string_equal(first, "the first error, 1"); /* untagged, the first */
	assert_string_equal(seen, "client 2 (198.18.0.1:5000): a second error");
	rk_log_thread_scope(NULL, NULL, 0);
	rk_error("after the scope");
	assert_string_equal(seen, "after the scope");
	assert_string_equal(first, "the first error, 1");
	rk_log_set_handler(NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_union_empty_and_one),
		cmocka_unit_test(test_union_shapes),
		cmocka_unit_test(test_total),
		cmocka_unit_test(test_total_none_ok),
		cmocka_unit_test(test_log_scope),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
