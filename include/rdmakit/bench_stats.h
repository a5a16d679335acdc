/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the benchmark's statistics (latency percentiles, peak rate,
 * size sweeps). Pure logic. */
#ifndef RDMAKIT_BENCH_STATS_H
#define RDMAKIT_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Latency statistics of a round, in microseconds. */
struct rk_bench_lat {
	uint64_t samples;
	double min, median, avg, p99, p999, max, stdev; /* microseconds */
};

/* Latency statistics of n samples (nanoseconds; sorted in place), each
 * divided by factor (2 for a half round trip), in microseconds. Median as
 * perftest (the mean of the two middle samples for an even count);
 * percentiles by nearest rank. n == 0 gives all zeros. */
void rk_bench_lat_stats(uint64_t *ns, size_t n, unsigned int factor, struct rk_bench_lat *out);

/* The value at percentile p (0 < p <= 100) of n sorted samples, nearest rank. */
uint64_t rk_bench_percentile(const uint64_t *sorted, size_t n, double p);

/* A point of a run: messages completed by time t (ns from the start). */
struct rk_bench_sample {
	uint64_t t_ns;
	uint64_t count;
};

/* The best rate (messages per second) over any stretch of the samples that
 * covers at least min_count messages; the start (0, 0) is implied. 0 when no
 * stretch is long enough. */
double rk_bench_peak_rate(const struct rk_bench_sample *s, size_t n, uint64_t min_count);

/* Powers of two from lo to hi inclusive (lo, hi powers of two, lo <= hi) into
 * sizes (at most max); returns the count or -EINVAL / -ENOSPC. */
int rk_bench_sweep(uint32_t lo, uint32_t hi, uint32_t *sizes, size_t max);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
