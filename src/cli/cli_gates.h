/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit CLI: units and thresholds on the command line (--units,
 * --expect-bw, ...): read, each check printed, the exit status they come to. */
#ifndef RDMAKIT_CLI_GATES_H
#define RDMAKIT_CLI_GATES_H

#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#include <rdmakit/gate.h>

#include "cli_opts.h"

/* Units and thresholds (gate.h), as given, until cli_gates_parse() reads them. */
struct cli_gate_opts {
	const char *units;        /* "MiB" (NULL: the default), "GB", "Gb" */
	const char *expect_bw;    /* RATE */
	const char *min_link_pct; /* N */
	const char *max_lat_p99;  /* US */
	const char *max_rtt_p99;  /* US */
};

/* The units --units offers (cli_gates_parse() checks them). */
extern const char *const cli_units[];

#define CLI_UNITS_OPT(o)                                                                         \
	{"units", 0, CLI_OPT_STRING, &(o)->units, 0, 0, "UNIT",                                  \
	 "bandwidth in Gb (10^9 bits/s, as perftest's --report_gbits), GB (10^9 bytes/s) or "   \
	 "MiB (2^20 bytes/s)", .def = "MiB", .values = cli_units}
#define CLI_BW_GATE_OPTS(o)                                                                      \
	{"expect-bw", 0, CLI_OPT_STRING, &(o)->expect_bw, 0, 0, "RATE",                          \
	 "client: exit 3 unless the average bandwidth is at least RATE (90Gb, 11GB, 1000MiB; "  \
	 "a bare number is in --units)"},                                                        \
		{"min-link-pct", 0, CLI_OPT_STRING, &(o)->min_link_pct, 0, 0, "N",               \
		 "client: exit 3 unless the average bandwidth is at least N% of the link rate "   \
		 "(unknown on rxe: not graded, exit 3)"}
#define CLI_LAT_GATE_OPT(o)                                                                      \
	{"max-lat-p99", 0, CLI_OPT_STRING, &(o)->max_lat_p99, 0, 0, "US",                        \
	 "client, --mode lat: exit 3 unless the latency p99 is at most US microseconds"}
#define CLI_RTT_GATE_OPT(o)                                                                      \
	{"max-rtt-p99", 0, CLI_OPT_STRING, &(o)->max_rtt_p99, 0, 0, "US",                        \
	 "client: exit 3 unless the round-trip time p99 is at most US microseconds"}

/* Read the units and thresholds of o into g (the gates left out are 0).
 * CLI_OK, or CLI_USAGE after naming the option and the bad text. */
int cli_gates_parse(const char *cmd, const struct cli_gate_opts *o, struct rk_gates *g);

/* Grade f against g: each check as a line (" gate LABEL: ..." on out), or as
 * JSON objects appended to arr (when not NULL) with "size" when size > 0.
 * Returns how many checks did not pass; *checks_p (when not NULL) grows by
 * how many were made. */
int cli_gates_grade(const struct rk_gates *g, const struct rk_gate_figures *f, uint32_t size,
		    const char *label, FILE *out, json_object *arr, int *checks_p);

/* The end of a graded run: the text line (on out, when not NULL) or the JSON
 * fields "gates" (arr, taken) and "gates_passed" (in doc, when not NULL).
 * Returns the exit status: status itself unless the run worked and a check
 * did not pass (CLI_GATE). */
int cli_gates_end(const char *who, int status, int checks, int failed, FILE *out,
		  json_object *doc, json_object *arr);

#endif
