/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: thresholds that grade a run ("gates"), for scripts that must
 * trust a result: bandwidth at least a rate, bandwidth at least a share of
 * the link rate, latency or round-trip p99 at most a time.
 *
 * A gate compares one figure of a result with its limit; a figure equal to
 * the limit meets it. A gate whose figure is unknown (the link rate of an
 * emulated device such as rxe, a run without that figure) is not graded, and
 * a gate not graded does not pass: a pass is always a measured one.
 * Pure logic: no device is touched.
 */
#ifndef RDMAKIT_GATE_H
#define RDMAKIT_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include <rdmakit/units.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* rdmakit's exit status when the run itself worked but a threshold was missed
 * or could not be graded. The others: 0 success, 1 the run failed, 2 bad
 * usage. */
#define RK_EXIT_GATE 3

enum rk_gate_kind {
	RK_GATE_BW = 0,   /* "expect-bw": bandwidth at least min_bw */
	RK_GATE_LINK_PCT, /* "min-link-pct": bandwidth at least this % of the link rate */
	RK_GATE_LAT_P99,  /* "max-lat-p99": latency p99 at most, us */
	RK_GATE_RTT_P99,  /* "max-rtt-p99": round-trip time p99 at most, us */
};

#define RK_GATE_KINDS 4

/* Limits of the link-share and time gates (rk_limit_parse()'s max). */
#define RK_GATE_PCT_MAX 100.0
#define RK_GATE_US_MAX 1e9

/* The thresholds of a run; a limit of 0 leaves that gate out. */
struct rk_gates {
	double min_bw;         /* bytes per second */
	double min_link_pct;   /* percent, at most 100 */
	double max_lat_p99_us;
	double max_rtt_p99_us;
	enum rk_bw_unit unit;  /* bandwidth figures and limits are shown in it */
};

/* The figures of one result; has_* is false where the result has none. */
struct rk_gate_figures {
	bool has_bw;
	double bw;             /* bytes per second */
	bool has_lat;
	double lat_p99_us;
	bool has_rtt;
	double rtt_p99_us;
	double link_gbps;      /* the link rate to grade against; 0 when unknown */
	const char *link_note; /* why it is unknown (rk_link_rate.note); NULL: none given */
};

/* One gate, graded. */
struct rk_gate_check {
	enum rk_gate_kind kind;
	const char *name;      /* the option's name: "expect-bw", "min-link-pct", ... */
	const char *unit;      /* "Gb/s" (the gates' unit), "%", "us" */
	bool at_most;          /* the figure must be at most the limit (else at least) */
	double limit;          /* in unit */
	bool graded;           /* the figure is known */
	double figure;         /* in unit; 0 when not graded */
	bool passed;           /* graded and met */
	char note[200];        /* not graded: why ("link rate unknown: ..."); "" otherwise */
};

/* The option name of a gate ("expect-bw", ...; "?" out of range). */
const char *rk_gate_name(enum rk_gate_kind kind);

/* Whether any limit of g is set. */
bool rk_gates_any(const struct rk_gates *g);

/* Grade f against each gate of g that is set, in enum order, into checks
 * (room for RK_GATE_KINDS). Returns how many were written. */
int rk_gates_eval(const struct rk_gates *g, const struct rk_gate_figures *f,
		  struct rk_gate_check *checks);

/* One line for a check, without a newline, into buf:
 *   "expect-bw: 0.7123 Gb/s, limit at least 100 Gb/s: missed"
 *   "min-link-pct: cannot grade (link rate unknown: ...), limit at least 90 %: not passed"
 * (a figure missed is "MISSED", in capitals, to stand out in a table)
 * Returns what snprintf returns. */
int rk_gate_check_str(const struct rk_gate_check *c, char *buf, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
