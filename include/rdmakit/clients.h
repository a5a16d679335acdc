/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: a server of several clients at once (`bench` and `rc` with
 * --clients N): what each client came to and the aggregate over them.
 *
 * Each client is served on a thread of its own with its own connection (QP,
 * CQ, memory); one failing or vanishing ends only its own part. The
 * aggregate counts the clients that finished with every check passed:
 *   bytes, msgs   the sums of their results;
 *   seconds       the length of the union of their measured spans (each
 *                 round's, on the server's clock: from the round's start to
 *                 start + the time the client measured), so time when no
 *                 client was measuring (one arrived late, another waited)
 *                 does not count, and overlapping time counts once;
 *   bw, msg_rate  bytes and msgs over those seconds.
 */
#ifndef RDMAKIT_CLIENTS_H
#define RDMAKIT_CLIENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Clients one server serves at once, at most. */
#define RK_CLIENTS_MAX 64

/* A time span in CLOCK_MONOTONIC nanoseconds, end >= start. */
struct rk_span {
	uint64_t start_ns, end_ns;
};

/* What one client of such a server came to, whatever it ran: the first
 * member of rk_bench_client and rk_rcflow_client, so that one report prints
 * both. */
struct rk_client_outcome {
	uint32_t index;           /* 1.., in order of arrival */
	bool arrived;             /* false: it never came within the wait */
	char peer[80];
	int status;               /* 0: served to its end, every check passed; else
				     the negative errno that ended it */
	char error[320];          /* failed: the first error logged while serving it */
	uint32_t done;            /* rounds (bench) or steps (rc) done and checked,
				     also before a failure */
	uint64_t bytes, msgs;     /* their sums (rc: msgs is steps) */
};

/* One client as the aggregate sees it. */
struct rk_client_tally {
	bool arrived;
	int status;               /* 0: finished, every check passed */
	uint64_t bytes, msgs;
	const struct rk_span *spans;
	size_t nspans;
};

struct rk_clients_total {
	uint32_t wanted, arrived, ok, failed, missing;
	uint64_t bytes, msgs;     /* the OK clients' sums */
	double seconds;           /* the union of their spans */
	double bw, msg_rate;      /* bytes and messages per second over it (0: none) */
};

/* The length of the union of n spans, in nanoseconds; sorts spans by start.
 * Pure logic. */
uint64_t rk_spans_union_ns(struct rk_span *spans, size_t n);

/* The aggregate over n clients as above. 0, or -ENOMEM. Pure logic. */
int rk_clients_total(const struct rk_client_tally *t, size_t n, struct rk_clients_total *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
