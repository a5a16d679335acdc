/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: loopback, two RC queue pairs on one device connected to each other.
 *
 * rk_loopback_run() opens a device port, creates QP A and QP B (each with
 * its own CQ and buffer), connects them to each other and moves data between
 * them: SEND/RECV (A -> B, into a posted receive), RDMA WRITE (A -> B's
 * buffer by rkey) and RDMA READ (A <- B's buffer by rkey), count times each,
 * every time with a fresh pattern that is checked byte for byte where it
 * lands. With sge > 1 each side gathers/scatters its buffer as sge pieces.
 * The engine prints nothing; errors are logged once, where first understood.
 */
#ifndef RDMAKIT_LOOPBACK_H
#define RDMAKIT_LOOPBACK_H

#include <stdbool.h>
#include <stdint.h>

#include <rdmakit/gid.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_LOOPBACK_MAX_SIZE  (1ull << 30)
#define RK_LOOPBACK_MAX_COUNT 10000000ull
#define RK_LOOPBACK_MAX_SGE   64

/* The steps, in the order they run. */
enum rk_loopback_step_kind {
	RK_LOOPBACK_SEND,
	RK_LOOPBACK_WRITE,
	RK_LOOPBACK_READ,
	RK_LOOPBACK_STEPS /* how many */
};

struct rk_loopback_result;

/* What the optional callback is told about, in this order. */
enum rk_loopback_event {
	RK_LOOPBACK_OPENED,    /* device, port, LID and GID of the result are set */
	RK_LOOPBACK_CONNECTED, /* both QPs in RTS: connected, qpn_a, qpn_b, path_mtu set */
	RK_LOOPBACK_ROUND,     /* one round of step checked (steps[step].checked counts it) */
	RK_LOOPBACK_STEP,      /* step ended: every round checked, or steps[step].status
				  says why it stopped (the run then stops too) */
};

typedef void (*rk_loopback_event_fn)(const struct rk_loopback_result *r,
				     enum rk_loopback_event ev, int step, void *arg);

struct rk_loopback_opts {
	const char *device; /* NULL: the first device */
	uint8_t port_num;   /* 0 means 1 */
	int gid_index;      /* -1: choose a RoCE v2 GID */
	uint64_t size;      /* bytes per operation, 1 .. RK_LOOPBACK_MAX_SIZE */
	uint64_t count;     /* rounds of each step, 1 .. RK_LOOPBACK_MAX_COUNT */
	uint32_t sge;       /* pieces per buffer, 1 .. RK_LOOPBACK_MAX_SGE, at most size;
			       0 means 1 */
	bool events;        /* sleep on a completion channel instead of polling */
	rk_loopback_event_fn on_event; /* optional; r is the run so far */
	void *arg;
};

/* What one step did. */
struct rk_loopback_step {
	enum rk_loopback_step_kind kind;
	const char *name;    /* "SEND", "WRITE", "READ" */
	const char *what;    /* "QP A -> QP B, into a posted receive", ... */
	uint64_t checked;    /* rounds done and checked */
	double total_us;     /* time of those rounds, post to last completion */
	int64_t bad_offset;  /* first byte that differed, -1: all matched */
	uint32_t byte_len;   /* SEND: byte_len of the last receive completion */
	int status;          /* 0, or the negative errno the step stopped with */
};

struct rk_loopback_result {
	char device[64];
	uint8_t port_num;
	uint16_t lid;        /* 0 with has_gid false: iWARP (no LID, no GID) */
	bool has_gid;        /* RoCE (or an explicit index): gid is set */
	struct rk_gid_choice gid;
	bool connected;      /* the QP fields below are set */
	uint32_t qpn_a, qpn_b;
	int path_mtu;        /* bytes */
	uint64_t size, count;
	uint32_t sge;
	bool events;
	struct rk_loopback_step steps[RK_LOOPBACK_STEPS];
};

/* Run the loopback as opts says. On iWARP, whose QPs connect only through
 * RDMA CM, B listens on the first address of this host that RDMA CM binds to
 * the device's port, A connects to it (A's buffer, a READ sink, then also
 * takes remote writes, as iWARP's READ responses are, and is one SGE: siw
 * writes only the first of more). Returns 0 when every
 * round of every step was checked byte for byte, with *result_p filled; or a
 * negative errno, logged, with *result_p untouched: -EINVAL bad options (also
 * more SGEs than the device allows, a GID index on iWARP), the device-open
 * errors of rk_port_open(), -ENODEV no address reaching an iWARP device, a setup
 * error, -ETIMEDOUT a completion that did not come within 5 s, -EIO bytes
 * that differ or a RECV of the wrong length, or a completion's error. The
 * callback (when set) sees the run as it goes, also the step that failed. */
int rk_loopback_run(const struct rk_loopback_opts *opts, struct rk_loopback_result *result_p);

/* Average microseconds per checked round of a step; 0 when none was. */
double rk_loopback_step_avg_us(const struct rk_loopback_step *step);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
