/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit CLI: the shared receive queue options of bench, rc and ud (srq.h),
 * one option group, and the SRQ's report in text and JSON. */
#ifndef RDMAKIT_CLI_SRQ_H
#define RDMAKIT_CLI_SRQ_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include <rdmakit/counters.h>
#include <rdmakit/srq.h>

#include "cli_opts.h"

struct cli_srq_opts {
	bool srq;
	uint64_t depth;     /* 0: the library's */
	int64_t limit;      /* -1: depth / 4; 0: none */
	bool no_refill;
	bool xrc;
};

#define CLI_SRQ_OPTS_DEFAULT {.limit = -1}

/* What a peer meets when the SRQ is empty, for --srq-no-refill's help: on
 * RC the RNR retries (--rnr-retry), on UD (which has none, and no
 * --rnr-retry) a datagram dropped. */
#define CLI_SRQ_EMPTY_RNR                                                                        \
	"a peer that sends more finds the SRQ empty (RNR: with its --rnr-retry low its SENDs "  \
	"fail with IBV_WC_RNR_RETRY_EXC_ERR)"
#define CLI_SRQ_EMPTY_UD "a datagram that finds the SRQ empty is dropped (UD has no RNR)"

/* Long options only (no letters). */
#define CLI_SRQ_OPTS(o) CLI_SRQ_OPTS_EMPTY(o, CLI_SRQ_EMPTY_RNR)
#define CLI_SRQ_OPTS_EMPTY(o, empty)                                                             \
	{"srq", 0, CLI_OPT_FLAG, &(o)->srq, 0, 0, NULL,                                          \
	 "this side's receives come from one shared receive queue (SRQ) that all its QPs "       \
	 "drain, refilled in lists as it empties; every message is checked as it arrives"},      \
	{"srq-depth", 0, CLI_OPT_COUNT, &(o)->depth, 1, 1 << 20, "N",                            \
	 "receives the SRQ keeps posted (at most the device's max_srq_wr)", .def = "512"},       \
	{"srq-limit", 0, CLI_OPT_INT, &(o)->limit, -1, 1 << 20, "N",                             \
	 "arm the SRQ limit: IBV_EVENT_SRQ_LIMIT_REACHED is reported when fewer than N "         \
	 "receives are posted; 0: none", .def = "-1: a quarter of the depth"},                   \
	{"srq-no-refill", 0, CLI_OPT_FLAG, &(o)->no_refill, 0, 0, NULL,                          \
	 "demonstration: post --srq-depth receives once and never refill; the limit event "      \
	 "comes as they run out, and " empty},                                                   \
	{"xrc", 0, CLI_OPT_FLAG, &(o)->xrc, 0, 0, NULL,                                          \
	 "XRC shared receive queues: refused by name where the device lacks XRC (rxe)"}

/* The SRQ options together: the others need --srq, a limit below the depth.
 * 0, or CLI_USAGE after saying what is wrong ("rdmakit CMD: ..."). */
int cli_srq_check(const char *cmd, const struct cli_srq_opts *o);

/* The library's options from the command line's (slot_size left 0). */
void cli_srq_fill(const struct cli_srq_opts *o, struct rk_srq_opts *so);

/* "SRQ: depth 512, limit 128 (...)..." under indent; the limit event
 * spelled out by name when it came. */
void cli_srq_text(const struct rk_srq_stats *st, const char *indent);

/* The SRQ as a JSON object. */
json_object *cli_srq_json(const struct rk_srq_stats *st);

/* A run's closing block: its port counters (cli_counters_text()) and, where
 * its receives came from an SRQ (srq not NULL), the SRQ's, under indent. */
void cli_run_text(const struct rk_run_counters *c, const struct rk_srq_stats *srq,
		  const char *indent);

/* The same in doc: "PREFIXcounters", and "PREFIXsrq" where srq is not NULL. */
void cli_run_json(json_object *doc, const char *prefix, const struct rk_run_counters *c,
		  const struct rk_srq_stats *srq);

#endif
