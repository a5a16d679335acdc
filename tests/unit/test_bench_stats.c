/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The benchmark's pure logic: latency statistics (perftest's median,
 * nearest-rank percentiles), the peak rate over the run's samples, size
 * sweeps, and which test runs on which transport. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdmakit/bench.h>
#include <rdmakit/stats.h>

#include "unit.h"

/* got is want, each figure within 1e-9; a failure names the case and the figure. */
static void check_lat(const char *name, const struct rk_bench_lat *got,
		      const struct rk_bench_lat *want)
{
	const struct {
		const char *what;
		double got, want;
	} figs[] = {
		{"min", got->min, want->min}, {"median", got->median, want->median},
		{"avg", got->avg, want->avg}, {"p99", got->p99, want->p99},
		{"p999", got->p999, want->p999}, {"max", got->max, want->max},
		{"stdev", got->stdev, want->stdev},
	};

	if (got->samples != want->samples)
		fail_msg("%s: samples = %" PRIu64 ", expected %" PRIu64, name, got->samples,
			 want->samples);
	for (size_t i = 0; i < ARRAY_SIZE(figs); i++)
		if (!(fabs(figs[i].got - figs[i].want) <= 1e-9))
			fail_msg("%s: %s = %.9f, expected %.9f", name, figs[i].what, figs[i].got,
				 figs[i].want);
}

static void test_lat_stats(void **state)
{
	/* Unsorted; factor 2 (half round trip): 1,3,5,7,9 us halved, whose
	 * population stdev is sqrt(8) / 2. */
	uint64_t odd[] = {9000, 1000, 5000, 3000, 7000};
	/* perftest's median of an even count: the mean of the two middle samples. */
	uint64_t even[] = {4000, 1000, 3000, 2000};
	const struct {
		const char *name;
		uint64_t *ns;
		size_t n;
		unsigned int factor;
		struct rk_bench_lat want;
	} cases[] = {
		{"odd", odd, 5, 2,
		 {.samples = 5, .min = 0.5, .median = 2.5, .avg = 2.5, .p99 = 4.5, .p999 = 4.5,
		  .max = 4.5, .stdev = sqrt(2.0)}},
		{"even", even, 4, 1,
		 {.samples = 4, .min = 1.0, .median = 2.5, .avg = 2.5, .p99 = 4.0, .p999 = 4.0,
		  .max = 4.0, .stdev = sqrt(1.25)}},
		{"empty", NULL, 0, 2, {.samples = 0}}, /* all zeros */
	};
	struct rk_bench_lat l;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		rk_bench_lat_stats(cases[i].ns, cases[i].n, cases[i].factor, &l);
		check_lat(cases[i].name, &l, &cases[i].want);
	}
}

static void test_percentile_nearest_rank(void **state)
{
	uint64_t *v = malloc(1000 * sizeof(*v));

	(void)state;
	assert_non_null(v);
	for (int i = 0; i < 1000; i++)
		v[i] = (uint64_t)i + 1; /* 1..1000 */
	assert_int_equal(rk_bench_percentile(v, 1000, 50), 500);
	assert_int_equal(rk_bench_percentile(v, 1000, 99), 990);
	assert_int_equal(rk_bench_percentile(v, 1000, 99.9), 999);
	assert_int_equal(rk_bench_percentile(v, 1000, 100), 1000);
	assert_int_equal(rk_bench_percentile(v, 10, 99.9), 10);
	assert_int_equal(rk_bench_percentile(v, 1, 50), 1);
	assert_int_equal(rk_bench_percentile(v, 0, 50), 0);
	free(v);
}

/* rk_stats_rank(): the nearest rank rk_bench_percentile() picks, alone. */
static void test_stats_rank(void **state)
{
	(void)state;
	assert_int_equal(rk_stats_rank(1000, 50), 500);
	assert_int_equal(rk_stats_rank(1000, 99.9), 999); /* despite rounding */
	assert_int_equal(rk_stats_rank(1000, 100), 1000);
	assert_int_equal(rk_stats_rank(3, 50), 2);
	assert_int_equal(rk_stats_rank(10, 0.001), 1);
	assert_int_equal(rk_stats_rank(1, 99), 1);
	assert_int_equal(rk_stats_rank(0, 50), 0);
}

static void test_peak(void **state)
{
	/* 100 messages per ms for 3 ms, then a burst of 100 in 0.5 ms, then slow. */
	struct rk_bench_sample s[] = {
		{1000000, 100}, {2000000, 200}, {3000000, 300}, {3500000, 400}, {5500000, 500},
	};

	(void)state;
	/* any stretch of >= 100 messages: the burst, 200k msgs/s */
	assert_close(rk_bench_peak_rate(s, 5, 100), 100 * 1e9 / 500000.0);
	/* >= 200 messages: best is 200..400 in 1.5 ms */
	assert_close(rk_bench_peak_rate(s, 5, 200), 200 * 1e9 / 1500000.0);
	/* the whole run */
	assert_close(rk_bench_peak_rate(s, 5, 500), 500 * 1e9 / 5500000.0);
	/* nothing long enough */
	assert_close(rk_bench_peak_rate(s, 5, 501), 0);
	assert_close(rk_bench_peak_rate(s, 0, 1), 0);
}

static void test_sweep(void **state)
{
	uint32_t sizes[64];

	(void)state;
	assert_int_equal(rk_bench_sweep(2, 8u << 20, sizes, 64), 23);
	assert_int_equal(sizes[0], 2);
	assert_int_equal(sizes[22], 8u << 20);
	assert_int_equal(rk_bench_sweep(64, 64, sizes, 64), 1);
	assert_int_equal(rk_bench_sweep(3, 8, sizes, 64), -EINVAL);
	assert_int_equal(rk_bench_sweep(8, 4, sizes, 64), -EINVAL);
	assert_int_equal(rk_bench_sweep(0, 4, sizes, 64), -EINVAL);
	assert_int_equal(rk_bench_sweep(1, 1u << 30, sizes, 4), -ENOSPC);
}

static void test_rules(void **state)
{
	char why[200];

	(void)state;
	assert_int_equal(rk_bench_check(RK_BENCH_READ, RK_BENCH_BW, RK_RC, 1, false, why,
					sizeof(why)), 0);
	assert_int_equal(rk_bench_check(RK_BENCH_WRITE, RK_BENCH_BW, RK_UC, 4, true, why,
					sizeof(why)), 0);
	assert_int_equal(rk_bench_check(RK_BENCH_READ, RK_BENCH_BW, RK_UC, 1, false, why,
					sizeof(why)), -EINVAL);
	assert_contains(why, "UC has no read");
	assert_int_equal(rk_bench_check(RK_BENCH_WRITE, RK_BENCH_BW, RK_UD, 1, false, why,
					sizeof(why)), -EINVAL);
	assert_contains(why, "UD has no write");
	assert_int_equal(rk_bench_check(RK_BENCH_SEND, RK_BENCH_LAT, RK_UD, 2, false, why,
					sizeof(why)), -EINVAL);
	assert_contains(why, "latency runs on one QP");
	assert_int_equal(rk_bench_check(RK_BENCH_SEND, RK_BENCH_BW, RK_RC, 0, false, why,
					sizeof(why)), -EINVAL);
	assert_int_equal(rk_bench_check(RK_BENCH_SEND, RK_BENCH_BW, RK_RC, 128, false, why,
					sizeof(why)), 0);
	assert_int_equal(rk_bench_check(RK_BENCH_SEND, RK_BENCH_BW, RK_RC, RK_BENCH_MAX_QPS,
					false, why, sizeof(why)), 0);
	assert_int_equal(rk_bench_check(RK_BENCH_SEND, RK_BENCH_BW, RK_RC, RK_BENCH_MAX_QPS + 1,
					false, why, sizeof(why)), -EINVAL);
	assert_int_equal(rk_bench_check(RK_BENCH_SEND, RK_BENCH_LAT, RK_RC, 1, true, why,
					sizeof(why)), -EINVAL);
}

static void test_names(void **state)
{
	enum rk_bench_test t;
	enum rk_bench_mode m;

	(void)state;
	assert_int_equal(rk_bench_test_parse("cmp-swap", &t), 0);
	assert_int_equal(t, RK_BENCH_CMP_SWAP);
	assert_string_equal(rk_bench_test_str(RK_BENCH_FETCH_ADD), "fetch-add");
	assert_int_equal(rk_bench_test_parse("Send", &t), -EINVAL);
	assert_int_equal(rk_bench_mode_parse("lat", &m), 0);
	assert_int_equal(m, RK_BENCH_LAT);
	assert_int_equal(rk_bench_mode_parse("", &m), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lat_stats),
		cmocka_unit_test(test_percentile_nearest_rank),
		cmocka_unit_test(test_stats_rank),
		cmocka_unit_test(test_peak),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
