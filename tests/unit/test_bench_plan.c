/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Perftest habits, the pure part (bench.h, rk_bench_plan_match()): a server
 * checks each run option its own command line gave against the client's
 * plan and names the first that differs, with both values; options it was
 * not given are not checked. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/bench.h>

#include "unit.h"

/* A plan as the CLI makes it: write bandwidth, one size, by iterations. */
static struct rk_bench_plan plan(const uint32_t *sizes, uint32_t n)
{
	struct rk_bench_plan p = {.test = RK_BENCH_WRITE, .mode = RK_BENCH_BW,
				  .transport = RK_RC, .qps = 1, .threads = 1, .iters = 5000};

	rk_bench_plan_sizes(&p, sizes, n);
	return p;
}

static void refused(const struct rk_bench_plan *srv, uint32_t given,
		    const struct rk_bench_plan *cli, const char *want)
{
	char why[200] = "";

	assert_int_equal(rk_bench_plan_match(srv, given, cli, why, sizeof(why)), -EINVAL);
	if (strcmp(why, want)) {
		print_error("why: '%s', expected '%s'\n", why, want);
		fail();
	}
}

static void matched(const struct rk_bench_plan *srv, uint32_t given,
		    const struct rk_bench_plan *cli)
{
	char why[200] = "";

	if (rk_bench_plan_match(srv, given, cli, why, sizeof(why))) {
		print_error("refused: %s\n", why);
		fail();
	}
}

static void test_sizes_summed(void **state)
{
	static const uint32_t sweep[] = {2, 4, 8, 16}, other[] = {16, 8, 4, 2};
	struct rk_bench_plan a = plan(sweep, 4), b = plan(other, 4);

	(void)state;
	assert_int_equal(a.nsizes, 4);
	assert_int_equal(a.min_size, 2);
	assert_int_equal(a.max_size, 16);
	assert_int_equal(b.min_size, 2);
	assert_int_equal(b.max_size, 16);
	assert_true(a.sizes_hash != b.sizes_hash); /* the order counts */
}

/* Nothing given: any client is served, however it differs. */
static void test_nothing_given(void **state)
{
	static const uint32_t s1[] = {65536}, s2[] = {2, 4};
	struct rk_bench_plan srv = plan(s1, 1), cli = plan(s2, 2);

	(void)state;
	cli.test = RK_BENCH_READ;
	cli.mode = RK_BENCH_LAT;
	cli.qps = 8;
	cli.bidir = true;
	matched(&srv, 0, &cli);
}

/* Everything given and the same: served. */
static void test_all_given_same(void **state)
{
	static const uint32_t s[] = {64, 4096};
	struct rk_bench_plan srv = plan(s, 2), cli = plan(s, 2);

	(void)state;
	srv.qps = cli.qps = 4;
	srv.threads = cli.threads = 2;
	srv.bidir = cli.bidir = true;
	matched(&srv, ~0u, &cli);
	/* threads 0 and 1 both mean one thread */
	srv.threads = 1;
	cli.threads = 0;
	matched(&srv, RK_BENCH_GIVEN_THREADS, &cli);
}

static void test_each_option_named(void **state)
{
	static const uint32_t s64k[] = {65536}, s4k[] = {4096}, l1[] = {64, 4096},
			      l2[] = {64, 1024, 4096}, l3[] = {4096, 64};
	struct rk_bench_plan srv = plan(s64k, 1), cli = plan(s4k, 1);

	(void)state;
	refused(&srv, RK_BENCH_GIVEN_SIZES, &cli, "--size: client 4096, server 65536");
	srv = plan(l1, 2);
	cli = plan(l2, 3);
	refused(&srv, RK_BENCH_GIVEN_SIZES, &cli,
		"--size: client 3 sizes 64..4096, server 2 sizes 64..4096");
	cli = plan(l3, 2);
	refused(&srv, RK_BENCH_GIVEN_SIZES, &cli,
		"--size: client 2 sizes 64..4096, server 2 sizes 64..4096 (the lists differ)");
	cli = plan(l1, 2);
	cli.test = RK_BENCH_READ;
	refused(&srv, RK_BENCH_GIVEN_TEST, &cli, "--op: client read, server write");
	cli = plan(l1, 2);
	cli.mode = RK_BENCH_LAT;
	refused(&srv, RK_BENCH_GIVEN_MODE, &cli, "--mode: client lat, server bw");
	cli = plan(l1, 2);
	cli.transport = RK_UD;
	refused(&srv, RK_BENCH_GIVEN_TRANSPORT, &cli, "--transport: client ud, server rc");
	cli = plan(l1, 2);
	cli.iters = 20;
	refused(&srv, RK_BENCH_GIVEN_ITERS, &cli, "--count: client 20, server 5000");
	cli.iters = 0;
	cli.duration_ms = 3000;
	refused(&srv, RK_BENCH_GIVEN_ITERS, &cli,
		"--count: client none (runs by --duration), server 5000");
	srv.iters = 0;
	srv.duration_ms = RK_BENCH_UNTIL_STOPPED;
	refused(&srv, RK_BENCH_GIVEN_DURATION, &cli,
		"--duration: client 3, server 0 (until stopped)");
	cli = plan(l1, 2);
	cli.qps = 2;
	refused(&srv, RK_BENCH_GIVEN_QPS, &cli, "--qps: client 2, server 1");
	cli = plan(l1, 2);
	cli.threads = 2;
	refused(&srv, RK_BENCH_GIVEN_THREADS, &cli, "--threads: client 2, server 1");
	cli = plan(l1, 2);
	srv.bidir = true;
	refused(&srv, RK_BENCH_GIVEN_BIDIR, &cli, "--bidir: client off, server on");
}

/* Several differ: the first in the options' order is named. */
static void test_first_named(void **state)
{
	static const uint32_t s64k[] = {65536}, s4k[] = {4096};
	struct rk_bench_plan srv = plan(s64k, 1), cli = plan(s4k, 1);

	(void)state;
	cli.qps = 3;
	cli.test = RK_BENCH_SEND;
	refused(&srv, ~0u, &cli, "--op: client send, server write");
	refused(&srv, RK_BENCH_GIVEN_SIZES | RK_BENCH_GIVEN_QPS, &cli,
		"--size: client 4096, server 65536");
	refused(&srv, RK_BENCH_GIVEN_QPS, &cli, "--qps: client 3, server 1");
}

/* ---- what a command asks (rk_bench_sizes_parse, rk_bench_ask_check) ---- */

static void test_sizes_parse(void **state)
{
	uint32_t sizes[RK_BENCH_MAX_SIZES];
	char why[200] = "";

	(void)state;
	assert_int_equal(rk_bench_sizes_parse("4k", sizes, why, sizeof(why)), 1);
	assert_int_equal(sizes[0], 4096);
	assert_int_equal(rk_bench_sizes_parse("2..16", sizes, why, sizeof(why)), 4);
	assert_int_equal(sizes[0], 2);
	assert_int_equal(sizes[3], 16);
	assert_int_equal(rk_bench_sizes_parse("64,4k,1M", sizes, why, sizeof(why)), 3);
	assert_int_equal(sizes[2], 1048576);
	assert_int_equal(rk_bench_sizes_parse("4x", sizes, why, sizeof(why)), -EINVAL);
	assert_contains(why, "option --size: '4x' is not a number");
	assert_int_equal(rk_bench_sizes_parse("8..2", sizes, why, sizeof(why)), -EINVAL);
	assert_contains(why, "'8..2' is not a sweep of powers of two");
	assert_int_equal(rk_bench_sizes_parse("4k,,8k", sizes, why, sizeof(why)), -EINVAL);
	assert_contains(why, "'4k,,8k' is not a list of sizes");
	assert_int_equal(rk_bench_sizes_parse("0", sizes, why, sizeof(why)), -EINVAL);
	assert_contains(why, "outside the range 1..1073741824");
}

static struct rk_bench_ask ask(enum rk_bench_test t, enum rk_bench_mode m)
{
	return (struct rk_bench_ask){.test = t, .mode = m, .transport = RK_RC, .qps = 1,
				     .threads = 1, .duration_s = -1};
}

static void ask_refused(const struct rk_bench_ask *a, const char *want)
{
	uint32_t sizes[RK_BENCH_MAX_SIZES];
	uint64_t iters = 77;
	int n = -1;
	char why[200] = "";

	assert_int_equal(rk_bench_ask_check(a, sizes, &n, &iters, why, sizeof(why)), -EINVAL);
	assert_contains(why, want);
	assert_int_equal(n, -1);
	assert_int_equal(iters, 77);
}

static void test_ask_defaults(void **state)
{
	struct rk_bench_ask a = ask(RK_BENCH_WRITE, RK_BENCH_BW);
	uint32_t sizes[RK_BENCH_MAX_SIZES];
	uint64_t iters;
	char why[200] = "";
	int n;

	(void)state;
	assert_int_equal(rk_bench_ask_check(&a, sizes, &n, &iters, why, sizeof(why)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(sizes[0], 65536);
	assert_int_equal(iters, 5000);
	a = ask(RK_BENCH_SEND, RK_BENCH_LAT);
	assert_int_equal(rk_bench_ask_check(&a, sizes, &n, &iters, why, sizeof(why)), 0);
	assert_int_equal(sizes[0], 2);
	assert_int_equal(iters, 1000);
	a = ask(RK_BENCH_FETCH_ADD, RK_BENCH_LAT);
	a.server = true; /* a server learns the client's iterations */
	assert_int_equal(rk_bench_ask_check(&a, sizes, &n, &iters, why, sizeof(why)), 0);
	assert_int_equal(sizes[0], 8);
	assert_int_equal(iters, 0);
	a = ask(RK_BENCH_WRITE, RK_BENCH_BW);
	a.duration_s = 10;
	a.interval_s = 2;
	assert_int_equal(rk_bench_ask_check(&a, sizes, &n, &iters, why, sizeof(why)), 0);
	assert_int_equal(iters, 0);
}

static void test_ask_refused(void **state)
{
	struct rk_bench_ask a = ask(RK_BENCH_WRITE, RK_BENCH_BW);

	(void)state;
	a.iters = 10;
	a.duration_s = 5;
	ask_refused(&a, "give --count or --duration, not both");
	a = ask(RK_BENCH_WRITE, RK_BENCH_BW);
	a.threads = 2;
	ask_refused(&a, "option --threads: each thread needs a QP of its own: raise --qps");
	a = ask(RK_BENCH_WRITE, RK_BENCH_LAT);
	a.threads = 2;
	ask_refused(&a, "option --threads: threads are for bandwidth (--mode bw)");
	a = ask(RK_BENCH_FETCH_ADD, RK_BENCH_BW);
	a.sizes = "16";
	ask_refused(&a, "option --size: atomics work on 8 bytes (got 16)");
	a = ask(RK_BENCH_WRITE, RK_BENCH_BW);
	a.interval_s = 1;
	ask_refused(&a, "option --interval: needs --duration SEC");
	a.duration_s = 2;
	a.interval_s = 3;
	ask_refused(&a, "option --interval: 3 s is longer than --duration 2 s");
	a = ask(RK_BENCH_WRITE, RK_BENCH_BW);
	a.duration_s = 0;
	a.sizes = "4k,8k";
	ask_refused(&a, "--duration 0 runs one size until stopped: give one size");
	a.server = true;
	a.sizes = NULL;
	a.interval_s = 1;
	ask_refused(&a, "option --interval: the client measures and prints the intervals");
	a = ask(RK_BENCH_READ, RK_BENCH_BW);
	a.transport = RK_UD;
	ask_refused(&a, "UD has no");
}

/* ---- the ask made the engine's options (rk_bench_ask_opts) ---- */

static void test_ask_opts(void **state)
{
	struct rk_bench_ask a = ask(RK_BENCH_WRITE, RK_BENCH_BW);
	struct rk_bench_opts bo;
	uint32_t sizes[RK_BENCH_MAX_SIZES];
	char why[200] = "";
	int n = 0;

	(void)state;
	a.qps = 4;
	a.threads = 2;
	a.sizes = "64,4k,1M";
	a.duration_s = 3;
	a.interval_s = 1.5;
	assert_int_equal(rk_bench_ask_opts(&a, &bo, sizes, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(sizes[1], 4096);
	assert_int_equal(bo.qps, 4);
	assert_int_equal(bo.threads, 2);
	assert_int_equal(bo.max_size, 1048576);
	assert_int_equal(bo.plan.min_size, 64);
	assert_int_equal(bo.plan.max_size, 1048576);
	assert_int_equal(bo.plan.nsizes, 3);
	assert_int_equal(bo.plan.iters, 0); /* runs by --duration */
	assert_int_equal(bo.plan.duration_ms, 3000);
	assert_int_equal(bo.interval_ms, 1500);
	assert_int_equal(bo.expect, 0); /* a client expects nothing */

	a = ask(RK_BENCH_WRITE, RK_BENCH_BW);
	a.duration_s = 0; /* until stopped */
	assert_int_equal(rk_bench_ask_opts(&a, &bo, sizes, &n, why, sizeof(why)), 0);
	assert_int_equal(bo.plan.duration_ms, RK_BENCH_UNTIL_STOPPED);

	a = ask(RK_BENCH_READ, RK_BENCH_LAT);
	a.server = true;
	a.given = RK_BENCH_GIVEN_TEST | RK_BENCH_GIVEN_MODE;
	assert_int_equal(rk_bench_ask_opts(&a, &bo, sizes, &n, why, sizeof(why)), 0);
	assert_int_equal(bo.expect, RK_BENCH_GIVEN_TEST | RK_BENCH_GIVEN_MODE);
	assert_int_equal(bo.plan.iters, 0); /* a server learns them */
}

static void ask_opts_refused(const struct rk_bench_ask *a, const char *want)
{
	struct rk_bench_opts bo = {.qps = 77};
	uint32_t sizes[RK_BENCH_MAX_SIZES] = {77};
	int n = 77;
	char why[200] = "";

	assert_int_equal(rk_bench_ask_opts(a, &bo, sizes, &n, why, sizeof(why)), -EINVAL);
	assert_contains(why, want);
	/* outputs untouched on a refusal */
	assert_int_equal(bo.qps, 77);
	assert_int_equal(sizes[0], 77);
	assert_int_equal(n, 77);
}

static void test_ask_opts_refused(void **state)
{
	struct rk_bench_ask a = ask(RK_BENCH_SEND, RK_BENCH_BW);
	struct rk_gates bw = {.min_bw = 1e9}, lat = {.max_lat_p99_us = 50};

	(void)state;
	a.transport = RK_UD;
	a.odp = true;
	ask_opts_refused(&a, "option --odp: for --transport rc only");
	a = ask(RK_BENCH_WRITE, RK_BENCH_LAT);
	a.gates = &bw;
	ask_opts_refused(&a, "--expect-bw and --min-link-pct grade bandwidth (--mode bw)");
	a = ask(RK_BENCH_WRITE, RK_BENCH_BW);
	a.gates = &lat;
	ask_opts_refused(&a, "--max-lat-p99 grades latency (--mode lat)");
	a.server = true;
	ask_opts_refused(&a, "the client grades what it measured");
	a = ask(RK_BENCH_WRITE, RK_BENCH_BW);
	a.iters = 10;
	a.duration_s = 5; /* rk_bench_ask_check()'s refusals come first */
	ask_opts_refused(&a, "give --count or --duration, not both");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_summed),
		cmocka_unit_test(test_nothing_given),
		cmocka_unit_test(test_all_given_same),
		cmocka_unit_test(test_each_option_named),
		cmocka_unit_test(test_first_named),
		cmocka_unit_test(test_sizes_parse),
		cmocka_unit_test(test_ask_defaults),
		cmocka_unit_test(test_ask_refused),
		cmocka_unit_test(test_ask_opts),
		cmocka_unit_test(test_ask_opts_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
