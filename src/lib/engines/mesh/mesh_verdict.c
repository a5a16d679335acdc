/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit-mesh's verdicts: which nodes and links of the measured matrices
 * stand out, and why. Pure logic. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/mesh.h>

struct verdicts {
	const struct rk_mesh_input *in;
	const struct rk_mesh_thresholds *t;
	int n;
	struct rk_mesh_outlier *v;
	int nv, cap;
	bool oom;
	char names[4][80]; /* scratch for name(): four per message */
	int name_slot;
};

static const char *name(struct verdicts *vd, int i)
{
	char *buf = vd->names[vd->name_slot++ % 4];

	if (vd->in->names && vd->in->names[i])
		snprintf(buf, sizeof(vd->names[0]), "%s", vd->in->names[i]);
	else
		snprintf(buf, sizeof(vd->names[0]), "node %d", i);
	return buf;
}

__attribute__((format(printf, 8, 9)))
static void add(struct verdicts *vd, enum rk_mesh_kind kind, enum rk_mesh_metric metric, int node,
		int src, int dst, double value_expected[2], const char *fmt, ...)
{
	struct rk_mesh_outlier *o;
	va_list ap;

	if (vd->nv == vd->cap) {
		int cap = vd->cap ? vd->cap * 2 : 8;
		struct rk_mesh_outlier *v = realloc(vd->v, cap * sizeof(*v));

		if (!v) {
			vd->oom = true;
			return;
		}
		vd->v = v;
		vd->cap = cap;
	}
	o = &vd->v[vd->nv++];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->metric = metric;
	o->node = node;
	o->src = src;
	o->dst = dst;
	o->value = value_expected[0];
	o->expected = value_expected[1];
	va_start(ap, fmt);
	vsnprintf(o->reason, sizeof(o->reason), fmt, ap);
	va_end(ap);
}

static bool reachable(const struct rk_mesh_input *in, int i, int j)
{
	return !in->reach || in->reach[i * in->n + j];
}

static const char *why(const struct rk_mesh_input *in, int i, int j)
{
	const char *w = in->reach_why ? in->reach_why[i * in->n + j] : NULL;

	return w && *w ? w : "no reason recorded";
}

/* A node that reaches no peer and that no peer reaches (n >= 3: with two
 * nodes the blame cannot be placed). */
static bool node_unreachable(const struct rk_mesh_input *in, int i)
{
	if (in->n < 3)
		return false;
	for (int j = 0; j < in->n; j++)
		if (j != i && (reachable(in, i, j) || reachable(in, j, i)))
			return false;
	return true;
}

/* Nodes whose port MTU is not the fabric's: the majority's, else the
 * largest (see rk_mesh_verdicts()). */
static void grade_mtu(struct verdicts *vd)
{
	const int *mtu = vd->in->port_mtu;
	int known = 0, common = 0, common_n = 0, largest = 0;

	for (int i = 0; i < vd->n; i++) {
		int same = 0;

		if (mtu[i] <= 0)
			continue;
		known++;
		largest = mtu[i] > largest ? mtu[i] : largest;
		for (int j = 0; j < vd->n; j++)
			same += mtu[j] == mtu[i];
		if (same > common_n) {
			common = mtu[i];
			common_n = same;
		}
	}
	if (known < 2 || common_n == known)
		return;
	for (int i = 0; i < vd->n; i++) {
		double ve[2] = {mtu[i], 2 * common_n > known ? common : largest};

		if (mtu[i] <= 0 || mtu[i] == (int)ve[1])
			continue;
		if (2 * common_n > known)
			add(vd, RK_MESH_CONFIG, RK_MESH_PORT_MTU, i, -1, -1, ve,
			    "%s: port MTU %d where %d of %d nodes have %d: its pairs run at the "
			    "smaller (set its netdev MTU like the others')",
			    name(vd, i), mtu[i], common_n, known, common);
		else
			add(vd, RK_MESH_CONFIG, RK_MESH_PORT_MTU, i, -1, -1, ve,
			    "%s: port MTU %d, below the largest in the fabric (%d): the nodes' MTUs "
			    "differ, and each pair runs at the smaller",
			    name(vd, i), mtu[i], largest);
	}
}

static void grade_reach(struct verdicts *vd)
{
	const struct rk_mesh_input *in = vd->in;
	double ve[2] = {0, 1};

	for (int i = 0; i < vd->n; i++)
		if (node_unreachable(in, i))
			add(vd, RK_MESH_UNREACHABLE, RK_MESH_REACH, i, -1, -1, ve,
			    "%s is unreachable: no peer connects to it and it connects to none "
			    "(%s)", name(vd, i), why(in, i, (i + 1) % vd->n));
	for (int i = 0; i < vd->n; i++) {
		for (int j = 0; j < vd->n; j++) {
			bool both = !reachable(in, j, i);

			if (i == j || reachable(in, i, j) || node_unreachable(in, i) ||
			    node_unreachable(in, j) || (both && j < i))
				continue;
			add(vd, RK_MESH_UNREACHABLE, RK_MESH_REACH, -1, i, j, ve, "%s %s %s: %s",
			    name(vd, i), both ? "<->" : "->", name(vd, j), why(in, i, j));
		}
	}
}

/* Per node, the best (max when high is good, else min) of its row and
 * column; the median of those over the nodes. */
static double reference(const double *m, int n, bool high_good)
{
	double best[n];

	for (int i = 0; i < n; i++) {
		best[i] = NAN;
		for (int j = 0; j < n; j++) {
			double a = m[i * n + j], b = m[j * n + i];

			for (int k = 0; k < 2; k++) {
				double x = k ? b : a;

				if (i == j || isnan(x))
					continue;
				if (isnan(best[i]) || (high_good ? x > best[i] : x < best[i]))
					best[i] = x;
			}
		}
	}
	return rk_mesh_median(best, n);
}

static double median_of(const double *cells, int k)
{
	return rk_mesh_median(cells, k);
}

/* Whether every measured cell of node i's row (or column) is flagged, with
 * at least two measured; their median into *med_p. */
static bool line_flagged(const double *m, const bool *flag, int n, int i, bool column,
			 double *med_p)
{
	double cells[n];
	int k = 0, flagged = 0;

	for (int j = 0; j < n; j++) {
		int c = column ? j * n + i : i * n + j;

		if (j == i || isnan(m[c]))
			continue;
		cells[k++] = m[c];
		flagged += flag[c];
	}
	*med_p = median_of(cells, k);
	return k >= 2 && flagged == k;
}

static void bw_nodes(struct verdicts *vd, const bool *flag, bool *explained, double ref)
{
	const double *m = vd->in->bw;
	int n = vd->n;
	double ve[2] = {0, vd->t->bw_low * ref};

	for (int i = 0; i < n; i++) {
		double rmed, cmed;
		bool row = line_flagged(m, flag, n, i, false, &rmed);
		bool col = line_flagged(m, flag, n, i, true, &cmed);

		for (int j = 0; j < n; j++) {
			explained[i * n + j] |= row;
			explained[j * n + i] |= col;
		}
		ve[0] = row ? rmed : cmed;
		if (row && col)
			add(vd, RK_MESH_NODE, RK_MESH_BW, i, -1, -1, ve,
			    "%s is slow both ways: sends at a median %.3g MB/s and receives at "
			    "%.3g MB/s, below %.3g MB/s (%.0f%% of the fabric reference %.3g MB/s)",
			    name(vd, i), rmed, cmed, ve[1], vd->t->bw_low * 100, ref);
		else if (row || col)
			add(vd, row ? RK_MESH_SENDER : RK_MESH_RECEIVER, RK_MESH_BW, i, -1, -1, ve,
			    "%s %s slowly %s every peer: median %.3g MB/s, below %.3g MB/s "
			    "(%.0f%% of the fabric reference %.3g MB/s); it %s normally",
			    name(vd, i), row ? "sends" : "receives", row ? "to" : "from", ve[0],
			    ve[1], vd->t->bw_low * 100, ref, row ? "receives" : "sends");
	}
}

static void grade_bw(struct verdicts *vd, double ref)
{
	const double *m = vd->in->bw;
	int n = vd->n;
	bool flag[n * n], explained[n * n];
	double lim = vd->t->bw_low * ref;

	for (int c = 0; c < n * n; c++) {
		flag[c] = !isnan(m[c]) && m[c] < lim;
		explained[c] = false;
	}
	bw_nodes(vd, flag, explained, ref);
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			int c = i * n + j, r = j * n + i;
			bool both = flag[r] && !explained[r];
			double ve[2] = {m[c], lim};

			if (!flag[c] || explained[c] || (both && j < i))
				continue;
			if (both)
				add(vd, RK_MESH_LINK, RK_MESH_BW, -1, i, j, ve,
				    "link %s <-> %s is slow both ways: %.3g and %.3g MB/s, below "
				    "%.3g MB/s (%.0f%% of the fabric reference %.3g MB/s); both "
				    "nodes run normally with other peers", name(vd, i), name(vd, j),
				    m[c], m[r], lim, vd->t->bw_low * 100, ref);
			else
				add(vd, RK_MESH_ASYMMETRIC, RK_MESH_BW, -1, i, j, ve,
				    "%s -> %s runs at %.3g MB/s, below %.3g MB/s (%.0f%% of the "
				    "fabric reference %.3g MB/s), while %s -> %s runs at %.3g MB/s",
				    name(vd, i), name(vd, j), m[c], lim, vd->t->bw_low * 100, ref,
				    name(vd, j), name(vd, i), m[r]);
		}
	}
}

/* Symmetric latency: pair flags from the upper triangle, a node when all
 * its pairs (two at least) are flagged. skip: pairs already judged. */
static void grade_lat(struct verdicts *vd, const double *m, double lim, double ref,
		      enum rk_mesh_metric metric, bool *flag, const bool *skip)
{
	int n = vd->n;
	bool node_flag[n];
	enum rk_mesh_kind kind = metric == RK_MESH_LAT_P50 ? RK_MESH_LATENCY : RK_MESH_UNSTABLE;
	const char *what = metric == RK_MESH_LAT_P50 ? "p50" : "p99";
	double factor = metric == RK_MESH_LAT_P50 ? vd->t->lat_high : vd->t->lat_jitter;

	for (int c = 0; c < n * n; c++)
		flag[c] = !isnan(m[c]) && m[c] > lim && !(skip && skip[c]);
	for (int i = 0; i < n; i++) {
		double med;
		double ve[2];

		node_flag[i] = line_flagged(m, flag, n, i, false, &med);
		ve[0] = med;
		ve[1] = lim;
		if (node_flag[i])
			add(vd, kind, metric, i, -1, -1, ve,
			    "%s: %s latency to every peer is high: median %.1f us, above %.1f us "
			    "(%.1fx the fabric reference %.1f us)%s", name(vd, i), what, med, lim,
			    factor, ref, kind == RK_MESH_UNSTABLE ? " while p50 is normal" : "");
	}
	for (int i = 0; i < n; i++) {
		for (int j = i + 1; j < n; j++) {
			double ve[2] = {m[i * n + j], lim};

			if (!flag[i * n + j] || node_flag[i] || node_flag[j])
				continue;
			add(vd, kind, metric, -1, i, j, ve,
			    "%s <-> %s: %s latency %.1f us, above %.1f us (%.1fx the fabric "
			    "reference %.1f us); both nodes are normal with other peers%s",
			    name(vd, i), name(vd, j), what, ve[0], lim, factor, ref,
			    kind == RK_MESH_UNSTABLE ? " and p50 is normal" : "");
		}
	}
}

static void matrix_stats(const double *m, int n, double *median_p, double *mad_p)
{
	*median_p = m ? rk_mesh_median(m, (size_t)n * n) : NAN;
	*mad_p = m ? rk_mesh_mad(m, (size_t)n * n) : NAN;
}

static void stats_of(const struct rk_mesh_input *in, struct rk_mesh_stats *s)
{
	s->bw_ref = in->bw ? reference(in->bw, in->n, true) : NAN;
	s->lat_ref = in->p50 ? reference(in->p50, in->n, false) : NAN;
	s->p99_ref = in->p99 ? reference(in->p99, in->n, false) : NAN;
	matrix_stats(in->bw, in->n, &s->bw_median, &s->bw_mad);
	matrix_stats(in->p50, in->n, &s->lat_median, &s->lat_mad);
}

static int check_input(const struct rk_mesh_input *in, const struct rk_mesh_thresholds *t)
{
	if (!in || !t || in->n < 2 || (!in->reach && !in->bw && !in->p50))
		return -EINVAL;
	return 0;
}

int rk_mesh_verdicts(const struct rk_mesh_input *in, const struct rk_mesh_thresholds *t,
		     struct rk_mesh_outlier **out_p, int *n_p, struct rk_mesh_stats *stats_p)
{
	struct verdicts vd = {.in = in, .t = t, .n = in ? in->n : 0};
	struct rk_mesh_stats s;
	int ret = check_input(in, t);

	if (ret)
		return ret;
	stats_of(in, &s);
	if (in->port_mtu)
		grade_mtu(&vd);
	if (in->reach)
		grade_reach(&vd);
	if (in->bw && !isnan(s.bw_ref))
		grade_bw(&vd, s.bw_ref);
	if (in->p50 && !isnan(s.lat_ref)) {
		int n = in->n;
		bool *flag = calloc((size_t)n * n, 2 * sizeof(bool));

		if (!flag) {
			free(vd.v);
			return -ENOMEM;
		}
		grade_lat(&vd, in->p50, t->lat_high * s.lat_ref, s.lat_ref, RK_MESH_LAT_P50, flag,
			  NULL);
		if (in->p99 && !isnan(s.p99_ref))
			grade_lat(&vd, in->p99, t->lat_jitter * s.p99_ref, s.p99_ref,
				  RK_MESH_LAT_P99, flag + n * n, flag);
		free(flag);
	}
	if (vd.oom) {
		free(vd.v);
		return -ENOMEM;
	}
	*out_p = vd.v;
	*n_p = vd.nv;
	if (stats_p)
		*stats_p = s;
	return 0;
}

static int add_cell(int *cells, int k, int max, int c)
{
	int m = k < max ? k : max;

	for (int i = 0; i < m; i++)
		if (cells[i] == c)
			return k;
	if (k < max)
		cells[k] = c;
	return k + 1;
}

int rk_mesh_suspects(const struct rk_mesh_input *in, const struct rk_mesh_thresholds *t,
		     int *cells, int max)
{
	struct rk_mesh_stats s;
	int k = 0, n;
	int ret = check_input(in, t);

	if (ret)
		return ret;
	stats_of(in, &s);
	n = in->n;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			int c = i * n + j;
			bool sus = in->bw && !isnan(in->bw[c]) && in->bw[c] < t->bw_low * s.bw_ref;

			if (i < j && in->p50 && !isnan(in->p50[c]) &&
			    in->p50[c] > t->lat_high * s.lat_ref)
				sus = true;
			if (i < j && in->p99 && !isnan(in->p99[c]) &&
			    in->p99[c] > t->lat_jitter * s.p99_ref)
				sus = true;
			if (sus && i != j)
				k = add_cell(cells, k, max, c);
		}
	}
	return k;
}
