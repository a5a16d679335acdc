/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit-mesh: private declarations. MPI lives in mesh_tool_stages.c and
 * mesh_tool_main.c only. */
#ifndef RDMAKIT_MESH_TOOL_H
#define RDMAKIT_MESH_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include <rdmakit/mesh.h>
#include <rdmakit/mesh_link.h>

#include "cli_traffic_opts.h"

/* Exit statuses. A usage error is 2, as with every rdmakit command (it was
 * 3, and unreachable 2, until issue 35). */
enum { MESH_CLEAN = 0, MESH_OUTLIERS = 1, MESH_USAGE = 2, MESH_SETUP = 3, MESH_UNREACHABLE = 4 };

#define MESH_WHY 160

struct mesh_opts {
	const char *device;
	uint64_t port;
	int64_t gid_index;
	const char *stages;
	const char *schedule;
	enum rk_mesh_sched sched;
	bool do_reach, do_lat, do_bw;
	uint64_t lat_iters, bw_size, bw_iters, window, timeout_ms, qp_timeout;
	uint64_t bw_low_pct, lat_high_pct, jitter_pct;
	bool no_retest, quiet, no_progress, events;
	const char *json, *csv, *svg, *baseline;
	bool json_out; /* --json: the run as one document on stdout, no text */
	struct cli_traffic_opts traffic_opts; /* as parsed */
	struct rk_traffic traffic;            /* what every link carries */
};

/* What every rank tells the others about itself (plain bytes over MPI). */
struct mesh_node {
	char host[64];
	char device[64];
	char gid[64];
	int32_t port_mtu; /* the port's active MTU, bytes; 0: no port */
	int32_t error; /* 0, or why this rank has no port */
	char error_text[MESH_WHY];
};

/* What one rank measured with one peer j (row r, cell j). */
struct mesh_cell {
	int8_t sent, got;       /* -1 not tried, 0 failed, 1 ok: r -> j, j -> r */
	char sent_why[MESH_WHY];
	char got_why[MESH_WHY];
	double p50, p99;        /* r initiated the ping-pong (r < j), us; NAN otherwise */
	double bw;              /* r -> j, MB/s; NAN when not measured */
	char bw_why[MESH_WHY];
	char counters[256];     /* re-test: troubles, then port counter changes */
	int8_t retested;
};

/* The assembled run, on rank 0. */
struct mesh_result {
	int n;
	struct mesh_node *nodes;
	const char **names;     /* "host (rank i)" */
	int *port_mtu;          /* n: the nodes' port_mtu */
	bool *reach;
	char (*why)[MESH_WHY];
	const char **why_p;
	char (*bw_why)[MESH_WHY]; /* why a reachable pair's WRITEs failed ("" if they did not) */
	double *bw, *p50, *p99;
	double *bw0, *p500, *p990; /* before re-tests */
	bool *retested;
	char (*evidence)[512];  /* counters per cell (both ends) after a re-test */
	struct rk_mesh_outlier *out;
	int nout;
	struct rk_mesh_stats stats;
	struct rk_mesh_thresholds t;
	int exit_status;
	char baseline_note[256];
};

/* mesh_tool_stages.c: everything that runs on every rank. */
struct mesh_ctx {
	const struct mesh_opts *o;
	int rank, n;
	struct rk_mesh_port *port; /* NULL when this rank has no device */
	struct mesh_node *nodes;   /* n, from every rank */
	struct mesh_cell *row;     /* n: this rank's measurements */
	uint32_t nonce;
	bool progress;
};

int mesh_stage_reach(struct mesh_ctx *c);
int mesh_stage_latency(struct mesh_ctx *c);
int mesh_stage_bandwidth(struct mesh_ctx *c);
/* Re-test the pairs of cells (src*n+dst) one at a time, counters around. */
int mesh_retest(struct mesh_ctx *c, const int *cells, int k);

/* mesh_tool_result.c, mesh_tool_report.c and mesh_tool_svg.c: rank 0 only. */
int mesh_result_build(struct mesh_result *r, int n, struct mesh_node *nodes,
		      const struct mesh_cell *rows);
void mesh_result_fill(struct mesh_result *r, const struct mesh_cell *rows, bool first);
void mesh_result_free(struct mesh_result *r);
int mesh_verdicts(struct mesh_result *r, const struct mesh_opts *o);
int mesh_baseline(struct mesh_result *r, const struct mesh_opts *o);
void mesh_report_text(const struct mesh_result *r, const struct mesh_opts *o);
int mesh_report_json(const struct mesh_result *r, const struct mesh_opts *o);
/* The document --json-file writes (schema rdmakit-mesh/1); the caller puts it. */
json_object *mesh_report_doc(const struct mesh_result *r, const struct mesh_opts *o);
int mesh_report_csv(const struct mesh_result *r, const char *dir);
int mesh_report_svg(const struct mesh_result *r, const char *file);

#endif
