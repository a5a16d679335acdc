/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Units and thresholds, the pure parts: bandwidth units and their
 * conversions, decimals, limits and rates read from text (with the bad text
 * named), the share of a link rate, and every gate's grading: met, missed,
 * equal to its limit, not graded (unknown link rate, a figure the run does not
 * have). */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include <rdmakit/gate.h>
#include <rdmakit/units.h>

#include "unit.h"

/* a within a relative 1e-12 of b, both printed when not. */
#define assert_near(a, b)                                                                          \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (!(fabs(a_ - b_) <= 1e-12 * fabs(b_)))                                          \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);                        \
	} while (0)

/* ---- units ---- */

static void test_unit_names(void **state)
{
	static const struct {
		const char *text;
		enum rk_bw_unit unit;
		const char *name, *str;
	} ok[] = {
		{"MiB", RK_BW_MIB, "MiB", "MiB/s"},   {"GB", RK_BW_GBYTE, "GB", "GB/s"},
		{"Gb", RK_BW_GBIT, "Gb", "Gb/s"},     {"MiB/s", RK_BW_MIB, "MiB", "MiB/s"},
		{"GB/s", RK_BW_GBYTE, "GB", "GB/s"},  {"Gb/s", RK_BW_GBIT, "Gb", "Gb/s"},
	};
	static const char *const bad[] = {"", "gb", "gB", "GiB", "mib", "MB", "Gbit", "Gb/",
					  "Gb/s ", " Gb", "Gbps", "MiB/s/s"};
	enum rk_bw_unit u;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		u = (enum rk_bw_unit)99;
		assert_int_equal(rk_bw_unit_parse(ok[i].text, &u), 0);
		assert_int_equal(u, ok[i].unit);
		assert_string_equal(rk_bw_unit_name(u), ok[i].name);
		assert_string_equal(rk_bw_unit_str(u), ok[i].str);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		u = RK_BW_GBIT;
		if (rk_bw_unit_parse(bad[i], &u) != -EINVAL)
			fail_msg("unit '%s' was taken", bad[i]);
		assert_int_equal(u, RK_BW_GBIT); /* untouched */
	}
	assert_int_equal(rk_bw_unit_parse(NULL, &u), -EINVAL);
	assert_string_equal(rk_bw_unit_name((enum rk_bw_unit)7), "?");
	assert_string_equal(rk_bw_unit_str((enum rk_bw_unit)7), "?");
}

static void test_unit_conversions(void **state)
{
	(void)state;
	/* 100 Gb/s is 12.5e9 bytes/s; 1 MiB/s is 1048576 bytes/s. */
	assert_near(rk_bw_in(12.5e9, RK_BW_GBIT), 100.0);
	assert_near(rk_bw_in(12.5e9, RK_BW_GBYTE), 12.5);
	assert_near(rk_bw_in(1048576.0, RK_BW_MIB), 1.0);
	assert_near(rk_bw_bytes(100.0, RK_BW_GBIT), 12.5e9);
	assert_near(rk_bw_bytes(12.5, RK_BW_GBYTE), 12.5e9);
	assert_near(rk_bw_bytes(1.0, RK_BW_MIB), 1048576.0);
	/* Round trips through every unit. */
	for (int u = 0; u < RK_BW_UNITS; u++)
		assert_near(rk_bw_bytes(rk_bw_in(86.5e6, (enum rk_bw_unit)u), (enum rk_bw_unit)u),
			    86.5e6);
	/* Gb and MiB of the same figure: what a --units Gb table row and a MiB row
	 * of one run relate by (86 MB/s, rxe's pace at 64 KiB). */
	assert_near(rk_bw_in(86e6, RK_BW_GBIT) * 1e9 / 8 / 1048576, rk_bw_in(86e6, RK_BW_MIB));
}

static void test_link_pct(void **state)
{
	(void)state;
	assert_near(rk_link_pct(12.5e9, 100.0), 100.0);
	assert_near(rk_link_pct(11.25e9, 100.0), 90.0);
	assert_near(rk_link_pct(1.25e9, 25.0), 40.0);
	assert_near(rk_link_pct(0, 56.0), 0.0);
	assert_true(rk_link_pct(1e9, 0) == -1);
	assert_true(rk_link_pct(1e9, -5) == -1);
	assert_true(rk_link_pct(1e9, NAN) == -1);
}

/* ---- text ---- */

static void test_decimal_scan(void **state)
{
	static const struct {
		const char *text;
		double v;
		size_t used;
	} ok[] = {
		{"90", 90, 2},      {"12.5", 12.5, 4}, {".5", 0.5, 2},    {"3.", 3, 2},
		{"0", 0, 1},        {"007", 7, 3},     {"1.2.3", 1.2, 3}, {"1e5", 1, 1},
		{"0x10", 0, 1},     {"90Gb", 90, 2},   {"2.5MiB/s", 2.5, 3},
	};
	static const char *const bad[] = {"", ".", "-1", "+1", " 1", "e5", "inf", "nan", "Gb",
					  "x1"};
	const char *end;
	double v;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		assert_int_equal(rk_decimal_scan(ok[i].text, &v, &end), 0);
		assert_near(v, ok[i].v);
		assert_int_equal(end - ok[i].text, ok[i].used);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 42;
		if (rk_decimal_scan(bad[i], &v, &end) != -EINVAL)
			fail_msg("'%s' was scanned as %g", bad[i], v);
		assert_true(v == 42);
	}
	assert_int_equal(rk_decimal_scan(NULL, &v, &end), -EINVAL);
	/* More digits than any limit needs. */
	assert_int_equal(rk_decimal_scan("1111111111111111111111111111111111111111111111111111111"
					 "111111111111", &v, &end), -EINVAL);
}

/* A parser of a number with a unit or a limit, as the refusal lists try it. */
typedef int (*parse_fn)(const char *text, double *v, char *err, size_t err_len);

/* parse refuses each of bad[0..n) with ret, saying "'<text>' <why>", and
 * leaves the value as it was. */
static void check_refused(parse_fn parse, int ret, const char *why, const char *const *bad,
			  size_t n)
{
	char err[300], says[200];
	double v;
	int got;

	for (size_t i = 0; i < n; i++) {
		err[0] = '\0';
		v = 42;
		got = parse(bad[i], &v, err, sizeof(err));
		if (got != ret)
			fail_msg("'%s': %d, expected %d (%s)", bad[i], got, ret, err);
		snprintf(says, sizeof(says), "'%s' %s", bad[i], why);
		assert_contains(err, says);
		assert_true(v == 42);
	}
}

/* The limits the tables try: at most 100. */
static int limit_100(const char *text, double *v, char *err, size_t err_len)
{
	return rk_limit_parse(text, 100, v, err, err_len);
}

/* The rates the tables try: a bare number in Gb/s. */
static int rate_gbit(const char *text, double *v, char *err, size_t err_len)
{
	return rk_rate_parse(text, RK_BW_GBIT, v, err, err_len);
}

static void test_limit_parse(void **state)
{
	static const char *const not_numbers[] = {"", "9x", "-5", "1e3", "nan", "12 "};
	static const char *const not_above_0[] = {"0", "0.0"};
	static const char *const above_max[] = {"100.5", "101"};
	char err[200];
	double v;

	(void)state;
	assert_int_equal(rk_limit_parse("90", 100, &v, err, sizeof(err)), 0);
	assert_near(v, 90);
	assert_int_equal(rk_limit_parse("100", 100, &v, err, sizeof(err)), 0); /* the maximum */
	assert_near(v, 100);
	assert_int_equal(rk_limit_parse("0.001", 100, &v, err, sizeof(err)), 0);
	assert_near(v, 0.001);
	check_refused(limit_100, -EINVAL, "is not a number", not_numbers, ARRAY_SIZE(not_numbers));
	check_refused(limit_100, -ERANGE, "is not above 0", not_above_0, ARRAY_SIZE(not_above_0));
	check_refused(limit_100, -ERANGE, "is above the maximum 100", above_max,
		      ARRAY_SIZE(above_max));
	assert_int_equal(rk_limit_parse(NULL, 100, &v, err, sizeof(err)), -EINVAL);
}

static void test_rate_parse(void **state)
{
	static const struct {
		const char *text;
		enum rk_bw_unit dflt;
		double bytes;
	} ok[] = {
		{"100Gb", RK_BW_MIB, 12.5e9},   {"100Gb/s", RK_BW_MIB, 12.5e9},
		{"12.5GB", RK_BW_MIB, 12.5e9},  {"12.5GB/s", RK_BW_GBIT, 12.5e9},
		{"1000MiB", RK_BW_GBIT, 1048576e3}, {"1MiB/s", RK_BW_GBYTE, 1048576},
		{"100", RK_BW_GBIT, 12.5e9},    {"12.5", RK_BW_GBYTE, 12.5e9},
		{"86", RK_BW_MIB, 86 * 1048576.0}, {"0.001MiB", RK_BW_MIB, 1048.576},
		{"1000000Gb", RK_BW_MIB, RK_RATE_MAX}, /* the maximum itself */
	};
	static const char *const not_rates[] = {"", "fast", "100gb", "100 Gb", "100Gbps", "100Mb",
						"-100Gb", "1e9", "Gb"};
	static const char *const not_above_0[] = {"0", "0Gb"};
	static const char *const above_max[] = {"2000000Gb"};
	char err[300];
	double v;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		v = 0;
		if (rk_rate_parse(ok[i].text, ok[i].dflt, &v, err, sizeof(err)))
			fail_msg("'%s' refused: %s", ok[i].text, err);
		assert_near(v, ok[i].bytes);
	}
	check_refused(rate_gbit, -EINVAL, "is not a rate", not_rates, ARRAY_SIZE(not_rates));
	check_refused(rate_gbit, -ERANGE, "is not above 0", not_above_0, ARRAY_SIZE(not_above_0));
	check_refused(rate_gbit, -ERANGE, "is above the maximum 1000000 Gb/s", above_max,
		      ARRAY_SIZE(above_max));
	/* The message says what a bare number is in, and shows the forms. */
	rk_rate_parse("x", RK_BW_GBYTE, &v, err, sizeof(err));
	assert_contains(err, "a number in GB");
	assert_contains(err, "90Gb");
}

/* ---- gates ---- */

static void test_gates_any(void **state)
{
	struct rk_gates g = {0};

	(void)state;
	assert_false(rk_gates_any(&g));
	g.unit = RK_BW_GBIT; /* a unit is no threshold */
	assert_false(rk_gates_any(&g));
	g.max_rtt_p99_us = 5;
	assert_true(rk_gates_any(&g));
	assert_string_equal(rk_gate_name(RK_GATE_BW), "expect-bw");
	assert_string_equal(rk_gate_name(RK_GATE_LINK_PCT), "min-link-pct");
	assert_string_equal(rk_gate_name(RK_GATE_LAT_P99), "max-lat-p99");
	assert_string_equal(rk_gate_name(RK_GATE_RTT_P99), "max-rtt-p99");
	assert_string_equal(rk_gate_name((enum rk_gate_kind)9), "?");
	assert_int_equal(RK_EXIT_GATE, 3);
}

/* One gate alone: how it grades figure against limit. */
static struct rk_gate_check one(const struct rk_gates *g, const struct rk_gate_figures *f)
{
	struct rk_gate_check c[RK_GATE_KINDS];

	assert_int_equal(rk_gates_eval(g, f, c), 1);
	return c[0];
}

/* What rk_gate_check_str() makes of c is want. */
static void assert_check_str(const struct rk_gate_check *c, const char *want)
{
	char line[400];

	rk_gate_check_str(c, line, sizeof(line));
	assert_string_equal(line, want);
}

static void test_gate_bw(void **state)
{
	struct rk_gates g = {.min_bw = 12.5e9, .unit = RK_BW_GBIT};
	struct rk_gate_figures f = {.has_bw = true, .bw = 12.5e9};
	struct rk_gate_check c;

	(void)state;
	c = one(&g, &f); /* equal (in bytes per second): met */
	assert_int_equal(c.kind, RK_GATE_BW);
	assert_string_equal(c.name, "expect-bw");
	assert_string_equal(c.unit, "Gb/s");
	assert_false(c.at_most);
	assert_true(c.graded && c.passed);
	assert_near(c.figure, 100);
	assert_near(c.limit, 100);
	f.bw = 12.5e9 * (1 - 1e-9); /* a hair under */
	c = one(&g, &f);
	assert_true(c.graded);
	assert_false(c.passed);
	f.bw = 20e9;
	assert_true(one(&g, &f).passed);
	f.bw = 86e6; /* rxe's pace */
	c = one(&g, &f);
	assert_false(c.passed);
	assert_near(c.figure, 0.688);
	assert_check_str(&c, "expect-bw: 0.688 Gb/s, limit at least 100 Gb/s: MISSED");
	/* Shown in the gates' unit, whatever unit the limit was written in. */
	g.unit = RK_BW_MIB;
	g.min_bw = 1048576e3;
	f.bw = 2 * 1048576e3;
	c = one(&g, &f);
	assert_true(c.passed);
	assert_string_equal(c.unit, "MiB/s");
	assert_near(c.limit, 1000);
	assert_near(c.figure, 2000);
	assert_check_str(&c, "expect-bw: 2000 MiB/s, limit at least 1000 MiB/s: passed");
	/* No bandwidth in the run: not graded, not passed. */
	f.has_bw = false;
	c = one(&g, &f);
	assert_false(c.graded || c.passed);
	assert_contains(c.note, "no bandwidth");
}

static void test_gate_link_pct(void **state)
{
	struct rk_gates g = {.min_link_pct = 90, .unit = RK_BW_GBIT};
	struct rk_gate_figures f = {.has_bw = true, .bw = 11.25e9, .link_gbps = 100};
	struct rk_gate_check c;

	(void)state;
	c = one(&g, &f); /* 90% of 100 Gb/s exactly: met */
	assert_int_equal(c.kind, RK_GATE_LINK_PCT);
	assert_string_equal(c.unit, "%");
	assert_true(c.graded && c.passed);
	if (c.figure != 90.0)
		fail_msg("figure %.17g, expected exactly 90", c.figure);
	f.bw = 11.0e9; /* 88% */
	c = one(&g, &f);
	assert_true(c.graded);
	assert_false(c.passed);
	assert_check_str(&c, "min-link-pct: 88 %, limit at least 90 %: MISSED");
	/* The link rate unknown (rxe): never graded, never passed, and says why. */
	f.link_gbps = 0;
	f.link_note = "emulated device (Soft-RoCE): a nominal figure";
	c = one(&g, &f);
	assert_false(c.graded || c.passed);
	assert_true(c.figure == 0);
	assert_string_equal(c.note,
			    "link rate unknown: emulated device (Soft-RoCE): a nominal figure");
	assert_check_str(&c, "min-link-pct: cannot grade (link rate unknown: emulated "
			     "device (Soft-RoCE): a nominal figure), limit at least 90 %: "
			     "not passed");
	f.link_note = NULL;
	assert_string_equal(one(&g, &f).note, "link rate unknown");
	f.link_note = "";
	assert_string_equal(one(&g, &f).note, "link rate unknown");
	/* Even a bandwidth far above any link is not graded without one. */
	f.bw = 1e15;
	assert_false(one(&g, &f).passed);
	f.link_gbps = NAN;
	assert_false(one(&g, &f).graded);
	/* No bandwidth at all. */
	f.link_gbps = 100;
	f.has_bw = false;
	c = one(&g, &f);
	assert_false(c.graded || c.passed);
	assert_contains(c.note, "no bandwidth");
}

static void test_gate_times(void **state)
{
	struct rk_gates g = {.max_lat_p99_us = 20};
	struct rk_gate_figures f = {.has_lat = true, .lat_p99_us = 20};
	struct rk_gate_check c;

	(void)state;
	c = one(&g, &f); /* equal: met */
	assert_int_equal(c.kind, RK_GATE_LAT_P99);
	assert_string_equal(c.unit, "us");
	assert_true(c.at_most && c.graded && c.passed);
	f.lat_p99_us = 20.0001;
	c = one(&g, &f);
	assert_false(c.passed);
	assert_check_str(&c, "max-lat-p99: 20.0001 us, limit at most 20 us: MISSED");
	f.lat_p99_us = 3;
	assert_true(one(&g, &f).passed);
	f.has_lat = false;
	c = one(&g, &f);
	assert_false(c.graded || c.passed);
	assert_contains(c.note, "no latency");

	g = (struct rk_gates){.max_rtt_p99_us = 0.001};
	f = (struct rk_gate_figures){.has_rtt = true, .rtt_p99_us = 14.2};
	c = one(&g, &f);
	assert_int_equal(c.kind, RK_GATE_RTT_P99);
	assert_string_equal(c.name, "max-rtt-p99");
	assert_false(c.passed);
	assert_check_str(&c, "max-rtt-p99: 14.2 us, limit at most 0.001 us: MISSED");
	f.rtt_p99_us = 0.001;
	assert_true(one(&g, &f).passed);
	f.has_rtt = false;
	assert_contains(one(&g, &f).note, "no round trips");
}

static void test_gates_together(void **state)
{
	struct rk_gates g = {.min_bw = 1e6, .min_link_pct = 50, .max_lat_p99_us = 10,
			     .max_rtt_p99_us = 10, .unit = RK_BW_GBYTE};
	struct rk_gate_figures f = {.has_bw = true, .bw = 2e6, .has_lat = true, .lat_p99_us = 11,
				    .has_rtt = true, .rtt_p99_us = 9, .link_gbps = 0};
	struct rk_gate_check c[RK_GATE_KINDS];

	(void)state;
	/* Every gate set: one check each, in enum order. */
	assert_int_equal(rk_gates_eval(&g, &f, c), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(c[i].kind, i);
	assert_true(c[0].passed);                  /* 2e6 >= 1e6 */
	assert_false(c[1].graded || c[1].passed);  /* no link rate */
	assert_false(c[2].passed);                 /* 11 > 10 */
	assert_true(c[3].passed);                  /* 9 <= 10 */
	assert_near(c[0].figure, 0.002);           /* in GB/s */
	/* None set: nothing graded. */
	g = (struct rk_gates){.unit = RK_BW_GBIT};
	assert_int_equal(rk_gates_eval(&g, &f, c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_names),
		cmocka_unit_test(test_unit_conversions),
		cmocka_unit_test(test_link_pct),
		cmocka_unit_test(test_decimal_scan),
		cmocka_unit_test(test_limit_parse),
		cmocka_unit_test(test_rate_parse),
		cmocka_unit_test(test_gates_any),
		cmocka_unit_test(test_gate_bw),
		cmocka_unit_test(test_gate_link_pct),
		cmocka_unit_test(test_gate_times),
		cmocka_unit_test(test_gates_together),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
