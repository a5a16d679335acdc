/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit-mesh's schedules and robust statistics: pure logic. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/mesh.h>

static const char *const sched_names[] = {"pairs", "shift", "serial"};

const char *rk_mesh_sched_str(enum rk_mesh_sched s)
{
	if ((unsigned int)s < sizeof(sched_names) / sizeof(sched_names[0]))
		return sched_names[s];
	return "unknown";
}

int rk_mesh_sched_parse(const char *text, enum rk_mesh_sched *s_p)
{
	for (size_t i = 0; text && i < sizeof(sched_names) / sizeof(sched_names[0]); i++) {
		if (!strcmp(text, sched_names[i])) {
			*s_p = (enum rk_mesh_sched)i;
			return 0;
		}
	}
	return -EINVAL;
}

int rk_mesh_rounds(enum rk_mesh_sched s, int n)
{
	if (n < 2)
		return 0;
	switch (s) {
	case RK_MESH_PAIRS:
		return n % 2 ? n : n - 1;
	case RK_MESH_SHIFT:
		return n - 1;
	case RK_MESH_SERIAL:
		return n * (n - 1) / 2;
	}
	return 0;
}

/* The circle method: m players (n, plus a dummy when n is odd), player m-1
 * fixed, the others rotating; in round r, m-1 meets r and x meets 2r - x. */
static int circle_partner(int n, int round, int rank)
{
	int m = n % 2 ? n + 1 : n;
	int partner;

	if (rank == m - 1)
		partner = round;
	else if (rank == round)
		partner = m - 1;
	else
		partner = ((2 * round - rank) % (m - 1) + (m - 1)) % (m - 1);
	return partner >= n ? -1 : partner;
}

static int serial_partner(int n, int round, int rank)
{
	int k = 0;

	for (int a = 0; a < n; a++) {
		for (int b = a + 1; b < n; b++, k++) {
			if (k != round)
				continue;
			if (rank == a)
				return b;
			return rank == b ? a : -1;
		}
	}
	return -1;
}

int rk_mesh_peer(enum rk_mesh_sched s, int n, int round, int rank, int *to_p, int *from_p)
{
	int to, from;

	if (n < 2 || rank < 0 || rank >= n || round < 0 || round >= rk_mesh_rounds(s, n))
		return -EINVAL;
	switch (s) {
	case RK_MESH_PAIRS:
		to = from = circle_partner(n, round, rank);
		break;
	case RK_MESH_SHIFT:
		to = (rank + round + 1) % n;
		from = (rank - round - 1 + n) % n;
		break;
	case RK_MESH_SERIAL:
		to = from = serial_partner(n, round, rank);
		break;
	default:
		return -EINVAL;
	}
	*to_p = to;
	*from_p = from;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The values of v that are not NAN, sorted, into a new array. */
static double *sorted_values(const double *v, size_t n, size_t *count_p)
{
	double *s = malloc((n ? n : 1) * sizeof(*s));
	size_t k = 0;

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			s[k++] = v[i];
	qsort(s, k, sizeof(*s), cmp_double);
	*count_p = k;
	return s;
}

double rk_mesh_median(const double *v, size_t n)
{
	size_t k;
	double *s = sorted_values(v, n, &k);
	double med = NAN;

	if (!s)
		return NAN;
	if (k)
		med = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
	free(s);
	return med;
}

double rk_mesh_mad(const double *v, size_t n)
{
	double med = rk_mesh_median(v, n);
	double *dev;
	double mad;

	if (isnan(med))
		return NAN;
	dev = malloc(n * sizeof(*dev));
	if (!dev)
		return NAN;
	for (size_t i = 0; i < n; i++)
		dev[i] = isnan(v[i]) ? NAN : fabs(v[i] - med);
	mad = rk_mesh_median(dev, n);
	free(dev);
	return mad;
}

static const char *const metric_names[] = {"reach", "bandwidth", "latency_p50", "latency_p99",
					   "port_mtu"};

const char *rk_mesh_metric_str(enum rk_mesh_metric m)
{
	if ((unsigned int)m < sizeof(metric_names) / sizeof(metric_names[0]))
		return metric_names[m];
	return "unknown";
}

static const char *const kind_names[] = {"unreachable", "sender", "receiver",
					 "node", "link", "asymmetric",
					 "latency", "unstable", "regression", "config"};

const char *rk_mesh_kind_str(enum rk_mesh_kind k)
{
	if ((unsigned int)k < sizeof(kind_names) / sizeof(kind_names[0]))
		return kind_names[k];
	return "unknown";
}

void rk_mesh_thresholds_default(struct rk_mesh_thresholds *t)
{
	t->bw_low = 0.6;
	t->lat_high = 2.0;
	t->lat_jitter = 4.0;
}
