/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: completion queues, polled or event-driven. */
#ifndef RDMAKIT_CQ_H
#define RDMAKIT_CQ_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct rk_cq {
	struct ibv_cq *cq;
	struct ibv_comp_channel *channel; /* NULL when polled */
	int depth;
	unsigned int unacked_events;
	bool armed;
};

/* Create a CQ of at least depth entries. With events, a completion channel is
 * created too and rk_cq_poll() sleeps on it instead of spinning. */
int rk_cq_create(struct rk_device *dev, int depth, bool events, struct rk_cq **cq_p);

/* Destroy the CQ and its channel (acknowledging pending events). NULL ignored. */
void rk_cq_destroy(struct rk_cq *cq);

/* Return up to max completions in wc. Waits up to timeout_ms for the first
 * (-1: forever, 0: just look). *n_p is the number returned (>= 1 on success);
 * -ETIMEDOUT when none came. Completions with an error status are returned
 * like any other: the caller decides (see rk_wc_check()). */
int rk_cq_poll(struct rk_cq *cq, struct ibv_wc *wc, int max, int timeout_ms, int *n_p);

/* Wait for exactly n completions (n <= 64) into wc within timeout_ms overall.
 * -ETIMEDOUT, with those that came counted in *got_p, when fewer arrive. */
int rk_cq_wait(struct rk_cq *cq, struct ibv_wc *wc, int n, int timeout_ms, int *got_p);

/* Waiting on one CQ for the completions of chosen work requests (by
 * wr_id, in any order). A receive's completion that is not wanted yet (the
 * peer's next message can complete before our own SEND's completion is
 * polled) is kept here for the next wait. */
#define RK_CQ_WAIT_IDS_MAX 8
struct rk_cq_ids {
	struct rk_cq *cq;
	bool has_early;
	struct ibv_wc early;
	/* Optional: asked about every 100 ms while nothing completes; true
	 * ends the wait with -ECONNRESET (e.g. rk_cm_peer_left()) after one
	 * more 100 ms slice in which completions the peer caused still count. */
	bool (*gone)(void *arg);
	void *gone_arg;
	/* Optional: a completion not among those waited for is offered here
	 * first (a control channel on the same QP: rk_ctl_qp_claim()); 1 means
	 * not taken, anything else taken. */
	int (*claim)(void *arg, const struct ibv_wc *wc);
	void *claim_arg;
};

/* Wait for the completions of the n (1..RK_CQ_WAIT_IDS_MAX) work requests
 * whose wr_ids are in want, within timeout_ms. The last receive completion
 * among them is copied to *recv_wc_p (may be NULL). A flushed request,
 * w->gone(), or a failure a leaving peer causes (no answer, a remote error)
 * followed within 500 ms by w->gone() is the peer leaving: -ECONNRESET, not
 * logged (the caller decides what it means). Errors logged, naming what: a failed status
 * (rk_wc_check()), -ETIMEDOUT, -EPROTO for a completion not due. */
int rk_cq_wait_ids(struct rk_cq_ids *w, const uint64_t *want, int n, int timeout_ms,
		   const char *what, struct ibv_wc *recv_wc_p);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
