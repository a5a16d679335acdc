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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_summed),
		cmocka_unit_test(test_nothing_given),
		cmocka_unit_test(test_all_given_same),
		cmocka_unit_test(test_each_option_named),
		cmocka_unit_test(test_first_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
