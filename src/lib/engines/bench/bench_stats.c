/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Benchmark statistics: latency percentiles, peak rate, size sweeps. Pure
 * logic, unit-tested on the host. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/bench_stats.h>
#include <rdmakit/stats.h>

/* sqrt by Newton's method: the library does not link libm. */
static double root(double v)
{
	double x = v > 1 ? v : 1;

	if (v <= 0)
		return 0;
	for (int i = 0; i < 200; i++) {
		double next = 0.5 * (x + v / x);

		if (next == x)
			break;
		x = next;
	}
	return x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t rk_bench_percentile(const uint64_t *sorted, size_t n, double p)
{
	/* Nearest rank, the same rank as ping's statistics (stats.h). */
	return n ? sorted[rk_stats_rank(n, p) - 1] : 0;
}

void rk_bench_lat_stats(uint64_t *ns, size_t n, unsigned int factor, struct rk_bench_lat *out)
{
	double f = (factor ? factor : 1) * 1000.0; /* ns -> us, and the RTT factor */
	double sum = 0, sq = 0, mean;

	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	qsort(ns, n, sizeof(*ns), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)ns[i];
	mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += ((double)ns[i] - mean) * ((double)ns[i] - mean);
	out->samples = n;
	out->min = (double)ns[0] / f;
	out->max = (double)ns[n - 1] / f;
	out->avg = mean / f;
	out->stdev = root(sq / (double)n) / f;
	if (n % 2)
		out->median = (double)ns[n / 2] / f;
	else
		out->median = ((double)ns[n / 2 - 1] + (double)ns[n / 2]) / 2.0 / f;
	out->p99 = (double)rk_bench_percentile(ns, n, 99.0) / f;
	out->p999 = (double)rk_bench_percentile(ns, n, 99.9) / f;
}

double rk_bench_peak_rate(const struct rk_bench_sample *s, size_t n, uint64_t min_count)
{
	double best = 0;
	size_t i = 0; /* the stretch starts after sample i - 1 (i == 0: at the origin) */

	if (!min_count)
		min_count = 1;
	for (size_t j = 0; j < n; j++) {
		/* The shortest stretch ending at j that still covers min_count:
		 * move the start forward while the rest would remain long enough. */
		while (i < j && s[j].count - s[i].count >= min_count)
			i++;
		/* Now the stretch from i - 1 (or the origin) is the last long enough. */
		uint64_t c0 = i ? s[i - 1].count : 0, t0 = i ? s[i - 1].t_ns : 0;

		if (s[j].count - c0 < min_count || s[j].t_ns <= t0)
			continue;
		double r = (double)(s[j].count - c0) * 1e9 / (double)(s[j].t_ns - t0);

		if (r > best)
			best = r;
	}
	return best;
}

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int rk_bench_sweep(uint32_t lo, uint32_t hi, uint32_t *sizes, size_t max)
{
	size_t n = 0;

	if (!pow2(lo) || !pow2(hi) || lo > hi)
		return -EINVAL;
	for (uint64_t v = lo; v <= hi; v <<= 1) {
		if (n == max)
			return -ENOSPC;
		sizes[n++] = (uint32_t)v;
	}
	return (int)n;
}
