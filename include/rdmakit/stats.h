/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: statistics of measured samples (round-trip times, latencies).
 * Pure logic, shared by the ping engines and the benchmark. */
#ifndef RDMAKIT_STATS_H
#define RDMAKIT_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The nearest rank (from 1) of percentile p (0 < p <= 100) among n samples:
 * the smallest rank with at least p% of the samples at or below it. A tiny
 * epsilon keeps 99.9% of 1000 at rank 999 despite floating-point error. 0
 * when n is 0. */
size_t rk_stats_rank(size_t n, double p);

struct rk_rtt_stats {
	size_t n;
	double min, median, p99, max, mean; /* in the samples' unit */
};

/* Statistics of n samples (not changed; a copy is sorted). The median of an
 * even count is the mean of the two middle samples; p99 is the nearest-rank
 * 99th percentile (rk_stats_rank()). -EINVAL for n == 0 or a NULL argument,
 * -ENOMEM. */
int rk_rtt_stats_compute(const double *samples, size_t n, struct rk_rtt_stats *stats_p);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
