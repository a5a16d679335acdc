/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: a port's counters, as the kernel exposes them in sysfs.
 *
 * Two groups live under /sys/class/infiniband/DEV/ports/N/:
 *   counters/     the InfiniBand port counters (PMA: port_xmit_data, link_downed, ...);
 *                 many RoCE drivers, rxe among them, have none
 *   hw_counters/  the driver's own (rxe: rdma_sends, retry_exceeded_err, ...; mlx5:
 *                 out_of_sequence, local_ack_timeout_err, ...), what `rdma statistic` shows
 * rk_counters_read() takes a snapshot of both, rk_counters_diff() the change between
 * two snapshots. A device that exposes neither group gives an empty snapshot with
 * groups == 0: not an error, callers say so once.
 */
#ifndef RDMAKIT_COUNTERS_H
#define RDMAKIT_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>
#include <rdmakit/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_COUNTER_NAME_MAX 64

enum rk_counter_group {
	RK_COUNTERS_PORT = 0, /* ports/N/counters */
	RK_COUNTERS_HW = 1,   /* ports/N/hw_counters */
};

#define RK_COUNTER_GROUPS 2

struct rk_counter {
	char name[RK_COUNTER_NAME_MAX];
	enum rk_counter_group group;
	uint64_t value;
};

/* One reading of a port's counters. */
struct rk_counters {
	char device[64];
	uint8_t port;
	uint64_t taken_ns;     /* CLOCK_MONOTONIC when read */
	unsigned int groups;   /* bit (1u << group) for each group directory found */
	int skipped;	       /* files left out: unreadable, or not a number */
	uint32_t lifespan_ms;  /* hw_counters/lifespan: the kernel serves values up to
				  this old (0: none seen) */
	int n;
	struct rk_counter *v;  /* sorted by group, then name */
};

/* One counter's change between two snapshots. */
struct rk_counter_delta {
	const char *name;      /* points into the later snapshot */
	enum rk_counter_group group;
	uint64_t before, after;
	int64_t delta;	       /* after - before; negative when the counter went back (reset) */
	bool is_new;	       /* absent from the earlier snapshot (before taken as 0) */
};

struct rk_counters_delta {
	uint64_t interval_ns;  /* between the two snapshots */
	int n;
	struct rk_counter_delta *v; /* in the later snapshot's order */
};

/* "counters" or "hw_counters": the sysfs directory the group comes from. */
const char *rk_counter_group_str(enum rk_counter_group group);

/* Parse the text of one counter file: decimal digits, then optional blanks and a
 * newline. Returns 0, -EINVAL when it is not a number ("N/A", "-1", "", "12abc"),
 * -ERANGE when it overflows 64 bits. *value_p is set only on success. */
int rk_counter_parse(const char *text, uint64_t *value_p);

/* Snapshot port port_num of dev (it must exist: -EINVAL, logged, otherwise).
 * Unreadable files and values that are not numbers are left out (debug log) and
 * counted in skipped; hw_counters/lifespan (a setting, not a counter) is ignored.
 * Free with rk_counters_free(). *snap_p is set only on success. */
int rk_counters_read(const struct rk_device *dev, uint8_t port_num, struct rk_counters **snap_p);

/* The same from a port directory (a sysfs port such as
 * /sys/class/infiniband/rxe0/ports/1, or a copy of one). A missing directory is
 * -ENOENT, a file there -ENOTDIR (logged); missing groups are not errors. device and port only label it. */
int rk_counters_read_dir(const char *port_dir, const char *device, uint8_t port_num,
			 struct rk_counters **snap_p);

/* Free a snapshot. NULL is ignored. */
void rk_counters_free(struct rk_counters *snap);

/* The value of counter name in group, or -ENOENT when the snapshot has none. */
int rk_counters_get(const struct rk_counters *snap, enum rk_counter_group group,
		    const char *name, uint64_t *value_p);

/* Changes from before to after (same device and port). nonzero_only keeps only the
 * counters that changed. The delta points into after: keep after alive while using
 * it. Free with rk_counters_delta_free(). *delta_p is set only on success. */
int rk_counters_diff(const struct rk_counters *before, const struct rk_counters *after,
		     bool nonzero_only, struct rk_counters_delta **delta_p);

/* Free a delta. NULL is ignored. */
void rk_counters_delta_free(struct rk_counters_delta *delta);

/* The change of counter name (any group) in delta, or NULL when it has none. */
const struct rk_counter_delta *rk_counters_delta_find(const struct rk_counters_delta *delta,
						      const char *name);

/* The counters that explain a failed completion (rk_wc_status_counters()), as
 * they moved in delta: "retry_exceeded_err +1, send_err +7" into buf. Counters
 * that did not move are left out. Returns how many were cited (0: none moved,
 * buf ""). */
int rk_counters_cite(const struct rk_counters_delta *delta, enum ibv_wc_status status, char *buf,
		     size_t len);

/* The counters of trouble t (status.h) that went up in delta: "completer_retry_err
 * +10, duplicate_request +360" into buf. Rises only: a counter that went down
 * was reset. Returns how many were cited (0: t did not happen, or is no
 * trouble; buf ""). */
int rk_counters_trouble(const struct rk_counters_delta *delta, enum rk_trouble t, char *buf,
			size_t len);

/* ---- A run's counters: what an engine (bench, rc, ping, ud) saw move ----
 *
 * Counters are per port and shared by everything on the device: every QP of
 * every process on the port counts, and when both ends of a run share one
 * device, both ends' traffic shows in each side's deltas ("port-wide").
 * Self-contained (no pointers to follow): a result struct carries it by value. */

#define RK_RUN_COUNTERS_MAX 64
#define RK_RUN_FAILURES_MAX 8

enum rk_run_counters_state {
	RK_RUN_COUNTERS_UNREAD = 0, /* the run ended before its device was known, or
				       reading failed (error says why) */
	RK_RUN_COUNTERS_NONE,       /* the port exposes no counters */
	RK_RUN_COUNTERS_READ,       /* read before and after: v[] holds the changes */
};

struct rk_run_counter {
	char name[RK_COUNTER_NAME_MAX];
	enum rk_counter_group group;
	int64_t delta;
};

/* A failed completion logged (rk_wc_check()) in this process during the run. */
struct rk_run_failure {
	enum ibv_wc_status status;
	uint32_t count;
};

struct rk_run_counters {
	enum rk_run_counters_state state;
	int error;             /* UNREAD: 0 (not reached) or the reading's negative errno */
	char device[64];
	uint8_t port;
	uint64_t interval_ns;  /* between the two readings */
	int n;                 /* counters that changed, in v[] (sorted by group, name) */
	int left_out;          /* changes beyond RK_RUN_COUNTERS_MAX */
	struct rk_run_counter v[RK_RUN_COUNTERS_MAX];
	int nfailures;         /* in order of status */
	struct rk_run_failure failures[RK_RUN_FAILURES_MAX];
	/* private: the first reading, between start and stop */
	struct rk_counters *before_;
	uint32_t wc_failed_[RK_WC_STATUS_SLOTS];
};

/* Take the first reading of dev's port port_num and note the failed
 * completions logged so far; c is cleared first (a reading of an earlier
 * start is dropped). A port without counters is not an error (state NONE at
 * stop). c must be zeroed, or have been started before. Returns 0 or the
 * reading's negative errno (kept in c->error, and logged: a run does not
 * fail for its counters). */
int rk_run_counters_start(struct rk_run_counters *c, const struct rk_device *dev,
			  uint8_t port_num);

/* Take the second reading (after waiting out the kernel's hw_counters cache,
 * lifespan, so that everything the run did is in it) and keep the non-zero
 * changes and the failed completions since start. Nothing when start was
 * not called or failed; calling it twice is harmless. The device may be
 * closed by now. */
void rk_run_counters_stop(struct rk_run_counters *c);

/* The pure part of stop: c's changes from before to after (state READ, or
 * NONE when after has no group). Failures are left as they are. */
void rk_run_counters_fill(struct rk_run_counters *c, const struct rk_counters *before,
			  const struct rk_counters *after);

/* The change of counter name (any group) in c, or NULL. */
const struct rk_run_counter *rk_run_counters_find(const struct rk_run_counters *c,
						  const char *name);

/* c's changes as text: "rdma_recvs +20, rdma_sends +20" ("" when none).
 * Returns how many were written (all of c->n unless len is too short). */
int rk_run_counters_str(const struct rk_run_counters *c, char *buf, size_t len);

/* As rk_counters_cite(), from a run's changes: the counters that explain a
 * failure with status ("retry_exceeded_err +1, completer_retry_err +7").
 * Returns how many were cited. */
int rk_run_counters_cite(const struct rk_run_counters *c, enum ibv_wc_status status, char *buf,
			 size_t len);

/* The counters of trouble t (status.h) that went up in c, the run's changes:
 * "completer_retry_err +10, duplicate_request +360" into buf. Returns how many
 * were cited (0: t did not happen, or is no trouble; buf ""). */
int rk_run_counters_trouble(const struct rk_run_counters *c, enum rk_trouble t, char *buf,
			    size_t len);

/* c's changes seen as a delta, for the rk_counters_* calls that read one:
 * d->v points into v (room for RK_RUN_COUNTERS_MAX), names into c. */
void rk_run_counters_delta(const struct rk_run_counters *c, struct rk_counter_delta *v,
			   struct rk_counters_delta *d);

/* ---- Watching a port: its changes every interval (rdmakit counters --watch) ---- */

struct rk_counters_watch_opts {
	uint8_t port_num;        /* 0 means 1 */
	uint32_t interval_ms;    /* between readings, 1.. */
	uint64_t count;          /* intervals to report; 0: until a stop request */
	/* Called with each interval's changes (nonzero only), numbered from 1;
	 * delta lives until the call returns. */
	void (*on_interval)(uint64_t interval, const struct rk_counters_delta *delta, void *arg);
	void *arg;
};

/* Read the port, then every interval_ms report what changed since the last
 * reading, until count intervals are done or a stop is requested (stop.h:
 * rk_stop_watch(); seen within 100 ms). The deadlines are absolute, so the
 * intervals do not drift by the time a reading takes. Returns 0 with
 * *done_p the intervals reported, or the reading's negative errno (logged;
 * *done_p still says how many were reported before it). */
int rk_counters_watch(const struct rk_device *dev, const struct rk_counters_watch_opts *o,
		      uint64_t *done_p);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
