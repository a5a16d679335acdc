/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: checking a whole fabric (rdmakit-mesh), the parts without MPI.
 *
 * Schedules: which ranks meet in which round. Verdicts: which nodes and links
 * of a measured matrix stand out, and why. Pure logic, no device: the
 * rdmakit-mesh executable measures (over rdmakit's own QPs, MPI only
 * bootstrapping) and hands the matrices here.
 *
 * Matrices are n*n doubles, row-major: m[i * n + j] is what node i measured
 * towards node j (bandwidth: i sends to j). NAN marks a cell not measured
 * (the diagonal, unreachable pairs).
 */
#ifndef RDMAKIT_MESH_H
#define RDMAKIT_MESH_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

enum rk_mesh_sched {
	RK_MESH_PAIRS = 0, /* N-1 rounds (N if odd: one bye each) of disjoint pairs */
	RK_MESH_SHIFT,     /* mpiGraph: round d, rank r sends to r+d and receives from r-d */
	RK_MESH_SERIAL,    /* one pair per round: N(N-1)/2 rounds */
};

/* "pairs", "shift", "serial". */
const char *rk_mesh_sched_str(enum rk_mesh_sched s);
/* Parse those names. -EINVAL. */
int rk_mesh_sched_parse(const char *text, enum rk_mesh_sched *s_p);

/* How many rounds schedule s has for n ranks (n >= 2; 0 otherwise). */
int rk_mesh_rounds(enum rk_mesh_sched s, int n);

/* Whom rank meets in round (0 .. rk_mesh_rounds() - 1): *to_p the rank it
 * sends to, *from_p the rank it receives from; -1 for none (a bye, or idle in
 * a serial round). pairs and serial: to == from, the partner. -EINVAL for a
 * rank, round or n out of range. */
int rk_mesh_peer(enum rk_mesh_sched s, int n, int round, int rank, int *to_p, int *from_p);

/* Median of the n values of v that are not NAN (v is not changed); NAN when
 * there are none. */
double rk_mesh_median(const double *v, size_t n);
/* Median absolute deviation from the median (unscaled); NAN when none. */
double rk_mesh_mad(const double *v, size_t n);

enum rk_mesh_metric {
	RK_MESH_REACH = 0,
	RK_MESH_BW,      /* MB/s, higher is better */
	RK_MESH_LAT_P50, /* microseconds, lower is better */
	RK_MESH_LAT_P99,
	RK_MESH_PORT_MTU, /* bytes: the port's active MTU */
};

/* "reach", "bandwidth", "latency_p50", "latency_p99", "port_mtu". */
const char *rk_mesh_metric_str(enum rk_mesh_metric m);

enum rk_mesh_kind {
	RK_MESH_UNREACHABLE = 0, /* a pair (or a whole node) that does not connect */
	RK_MESH_SENDER,          /* a node's whole row is low: its sending side */
	RK_MESH_RECEIVER,        /* a node's whole column is low: its receiving side */
	RK_MESH_NODE,            /* row and column low: the node itself */
	RK_MESH_LINK,            /* one pair low both ways: the link between them */
	RK_MESH_ASYMMETRIC,      /* one direction of a pair low, the other normal */
	RK_MESH_LATENCY,         /* p50 high: a node (all its pairs) or one pair */
	RK_MESH_UNSTABLE,        /* p99 high while p50 is normal */
	RK_MESH_REGRESSION,      /* worse than the same cell of a baseline run */
	RK_MESH_CONFIG,          /* a node set up unlike the others (its port MTU) */
};

/* "unreachable", "sender", "receiver", "node", "link", "asymmetric",
 * "latency", "unstable", "regression", "config". */
const char *rk_mesh_kind_str(enum rk_mesh_kind k);

/* One verdict. node >= 0 for a node verdict (src = dst = -1), else the pair
 * src -> dst (for a link or latency pair, src < dst and both directions). */
struct rk_mesh_outlier {
	enum rk_mesh_kind kind;
	enum rk_mesh_metric metric;
	int node;
	int src, dst;
	double value;    /* the node's median over its cells, or the cell's value */
	double expected; /* the threshold it crossed */
	char reason[256];
};

/* Thresholds, relative to the fabric's reference (see rk_mesh_verdicts()). */
struct rk_mesh_thresholds {
	double bw_low;     /* flag bandwidth below bw_low * reference (0.6) */
	double lat_high;   /* flag p50 above lat_high * reference (2.0) */
	double lat_jitter; /* flag p99 above lat_jitter * reference p99 (4.0) */
};

void rk_mesh_thresholds_default(struct rk_mesh_thresholds *t);

/* What the verdicts were computed against: references and the plain robust
 * statistics of each matrix. */
struct rk_mesh_stats {
	double bw_ref, bw_median, bw_mad;
	double lat_ref, lat_median, lat_mad;
	double p99_ref;
};

/* Input of rk_mesh_verdicts(): any matrix may be NULL (stage not run). reach
 * cells: true when the ordered pair connected and exchanged its checked
 * message; reach_why (may be NULL) the failure's text per cell. names[i]
 * labels node i in reasons (NULL: "node i"). port_mtu (may be NULL): each
 * node's active port MTU in bytes, 0 where unknown. */
struct rk_mesh_input {
	int n;
	const char *const *names;
	const bool *reach;
	const char *const *reach_why;
	const double *bw;
	const double *p50; /* symmetric: p50[i*n+j] == p50[j*n+i] (one ping-pong per pair) */
	const double *p99;
	const int *port_mtu;
};

/* The verdicts for in, under t. References are robust against one bad node
 * even among three: bandwidth's is the median over nodes of each node's best
 * cell (its row and column), latency's the median over nodes of each node's
 * lowest p50 (p99 likewise). A node is flagged when all its cells (at least
 * two) are flagged, a link or an asymmetric pair for what remains; cells of
 * unreachable pairs are not graded. A node whose port MTU differs from the
 * one most nodes have (more than half of those known; without such a
 * majority, every node below the largest) is a config outlier: each pair
 * runs at the smaller MTU, so a netdev MTU set unlike the others shows only
 * as slow links. Outliers are in *out_p (free()), their
 * count in *n_p; *stats_p (may be NULL) gets the statistics. -EINVAL for
 * n < 2 or no matrix, -ENOMEM. */
int rk_mesh_verdicts(const struct rk_mesh_input *in, const struct rk_mesh_thresholds *t,
		     struct rk_mesh_outlier **out_p, int *n_p, struct rk_mesh_stats *stats_p);

/* Cells to re-test one at a time: those rk_mesh_verdicts() would grade
 * against t (bandwidth below, p50 or p99 above their thresholds). Writes up
 * to max ordered pairs (src < dst for latency cells) as src*n+dst into
 * cells, each once, and returns how many there are (may exceed max).
 * -EINVAL as rk_mesh_verdicts(). */
int rk_mesh_suspects(const struct rk_mesh_input *in, const struct rk_mesh_thresholds *t,
		     int *cells, int max);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
