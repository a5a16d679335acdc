/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: names and hints for work-completion statuses, opcodes, async and
 * CM events. Every value has a name; unknown values get "UNKNOWN(n)". */
#ifndef RDMAKIT_STATUS_H
#define RDMAKIT_STATUS_H

#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* "IBV_WC_REM_ACCESS_ERR" etc. */
const char *rk_wc_status_name(enum ibv_wc_status status);

/* What to check for this status, one sentence; "" for IBV_WC_SUCCESS. */
const char *rk_wc_status_hint(enum ibv_wc_status status);

/* The port counters (sysfs hw_counters or counters; rxe's, mlx5's and the IB
 * port counters' names) that move when a completion fails with this status, for
 * a report to cite next to the hint (rk_counters_cite()). A NULL-terminated
 * list, empty (never NULL) where no counter is known to tell. */
const char *const *rk_wc_status_counters(enum ibv_wc_status status);

/* Trouble the transport recovers from: hidden from a run that worked (no
 * completion failed), it shows in the port counters and costs time. Each has a
 * name ("retransmissions"), a hint (what happened, what to look at) and the
 * counters that tell of it (any driver's names, as rk_wc_status_counters());
 * rk_run_counters_trouble() (counters.h) cites those a run moved. */
enum rk_trouble {
	RK_TROUBLE_RETRANSMIT, /* ACK timeouts, resent packets */
	RK_TROUBLE_RNR,        /* RNR NAKs: a SEND met no receive */
	RK_TROUBLE_SEQUENCE,   /* packets out of sequence: NAKs for resends */
	RK_TROUBLE_NOT_SENT,   /* packets the device could not send */
	RK_TROUBLE_CONGESTION, /* ECN marks, CNPs */
	RK_TROUBLE_COUNT
};

struct rk_trouble_desc {
	const char *name;
	const char *hint;
	const char *const *counters; /* NULL-terminated, never empty */
};

/* t's description, or NULL for a value past the last (RK_TROUBLE_COUNT). */
const struct rk_trouble_desc *rk_trouble_desc(enum rk_trouble t);

/* "SEND", "RDMA_WRITE", "RECV_RDMA_WITH_IMM", ... */
const char *rk_wc_opcode_name(enum ibv_wc_opcode opcode);

/* "IBV_EVENT_PORT_ERR" etc., and a hint. */
const char *rk_async_event_name(enum ibv_event_type type);
const char *rk_async_event_hint(enum ibv_event_type type);

/* "RDMA_CM_EVENT_REJECTED" etc., and a hint. */
const char *rk_cm_event_name(enum rdma_cm_event_type type);
const char *rk_cm_event_hint(enum rdma_cm_event_type type);

/* A completion status as a negative errno: 0 for success, -ECANCELED for a
 * flush, -ETIMEDOUT for retry/RNR exhaustion, -EACCES for access and
 * protection errors, -EMSGSIZE for a length error, -EREMOTEIO for other
 * remote errors, -EIO otherwise. */
int rk_wc_errno(enum ibv_wc_status status);

/* Slots for the completion statuses rk_wc_check() counts (a run's counters,
 * counters.h, carry one count per slot). */
#define RK_WC_STATUS_SLOTS 32

/* How many failed completions with status rk_wc_check() has logged in this
 * process so far, all threads together (0 for IBV_WC_SUCCESS). A run's
 * counters (rk_run_counters_stop()) name the statuses that failed during it. */
uint32_t rk_wc_failures(enum ibv_wc_status status);

/* Log a failed completion once, with its name and hint, and return
 * rk_wc_errno() of it (0 for success, nothing logged). what names the
 * operation in the message (NULL: "work request"; a failed completion
 * carries no valid opcode). Counted for rk_wc_failures(). */
int rk_wc_check(const struct ibv_wc *wc, const char *what);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
