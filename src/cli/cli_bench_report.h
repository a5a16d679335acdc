/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit bench's report (cli_bench_report.c): the table like perftest's,
 * --json or --csv, soak intervals, thresholds and the --clients report. */
#ifndef RDMAKIT_CLI_BENCH_REPORT_H
#define RDMAKIT_CLI_BENCH_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include <rdmakit/bench.h>
#include <rdmakit/gate.h>
#include <rdmakit/traffic.h>

/* What the report takes from bench's command line. */
struct cli_bench_report_opts {
	bool json;
	bool csv;
	bool server;
	uint64_t interval_ms;     /* soak: a record every this long; 0: none */
	uint64_t port;            /* --port, in the JSON head */
	uint64_t wait_s;          /* --wait, named by the --clients verdict */
	struct rk_traffic traffic; /* what every packet carries */
};

/* One side's report, set up with o and gates, the rest zero. */
struct cli_bench_report {
	const struct cli_bench_report_opts *o;
	const struct rk_bench_info *info;
	json_object *doc, *results;
	bool progress_shown;
	bool tty;
	const struct rk_gates *gates; /* the units, and the thresholds to grade */
	json_object *gate_arr;        /* --json: the graded checks */
	int gate_checks, gate_failed;
	int err; /* the failed round's error, for the JSON "result" */
};

/* The engine's callbacks: the progress line on a terminal (not with
 * interval records), the interval records, and the stop request. */
void cli_bench_hooks(struct cli_bench_report *rp, struct rk_bench_opts *bo);

/* Connected: the header (text), the column names (--csv) or the document's
 * head (--json). */
void cli_bench_head(struct cli_bench_report *rp, const struct rk_bench_info *info);

/* After a round: the progress line cleared. */
void cli_bench_clear_progress(struct cli_bench_report *rp);

/* A round's row (text, CSV) or result (JSON), its graded thresholds and its
 * port counters. */
void cli_bench_result(struct cli_bench_report *rp, const struct rk_bench_result *r);

/* A failed round (err): its port counters, and err for the JSON "result". */
void cli_bench_failed(struct cli_bench_report *rp, const struct rk_bench_result *r, int err);

/* The verdict: the JSON document's "ok" (and the document, printed), or the
 * last line of text; the thresholds' before it. Returns the exit status. */
int cli_bench_end(struct cli_bench_report *rp, int status);

/* --clients: as each client ends (text only), a line saying how it came out
 * (arg unused; rk_bench_serve_clients()' callback). */
void cli_bench_client_end(const struct rk_bench_client *c, void *arg);

/* The report of a --clients run: per client, the aggregate, the verdict.
 * Returns the exit status. */
int cli_bench_clients(struct cli_bench_report *rp, const struct rk_bench_clients *rep);

#endif
