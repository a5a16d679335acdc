/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Statistics of measured samples: nearest-rank percentiles, median, mean. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/stats.h>

size_t rk_stats_rank(size_t n, double p)
{
	double exact = p / 100.0 * (double)n - 1e-9;
	size_t rank;

	if (!n)
		return 0;
	if (p <= 0)
		return 1;
	rank = (size_t)exact;
	if ((double)rank < exact)
		rank++;
	if (rank < 1)
		rank = 1;
	return rank > n ? n : rank;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int rk_rtt_stats_compute(const double *samples, size_t n, struct rk_rtt_stats *stats_p)
{
	struct rk_rtt_stats st = {.n = n};
	double *s, sum = 0;

	if (!samples || !n || !stats_p)
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, samples, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	st.min = s[0];
	st.max = s[n - 1];
	st.mean = sum / (double)n;
	st.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	st.p99 = s[rk_stats_rank(n, 99.0) - 1];
	free(s);
	*stats_p = st;
	return 0;
}
