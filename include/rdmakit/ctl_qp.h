/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: a control channel (ctl.h) over a connected QP, for RDMA CM. */
#ifndef RDMAKIT_CTL_QP_H
#define RDMAKIT_CTL_QP_H

#include <stdbool.h>

#include <infiniband/verbs.h>

#include <rdmakit/cq.h>
#include <rdmakit/ctl.h>
#include <rdmakit/qp.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* A control channel that sends wire messages as SENDs on a connected QP
 * (the CM case, where there is no TCP socket). It owns a small registered
 * buffer on pd; completions arrive on the QP's CQs, which it polls for its
 * own work requests only (wr_id tagged). It posts its one receive lazily:
 * before it sends, or when it waits for a message, never more than one; after
 * a sync point none is outstanding, so the caller's own receives posted then
 * get the peer's next SEND (rk_ctl_qp_keep_receive() changes that). A QP
 * that left RTS (peer disconnected) gives -ECONNRESET. */
int rk_ctl_qp_create(struct rk_qp *qp, struct ibv_pd *pd, struct rk_cq *send_cq,
		     struct rk_cq *recv_cq, struct rk_ctl **ctl_p);

/* Keep n of the channel's receives posted at all times (0: lazily, as
 * above), each posted again once its message has been read (and now), so
 * no message of the peer meets an empty receive queue: no RNR NAK, no
 * retry. Messages are copied out as they arrive; two are held at most.
 *
 * n = 1 is for a caller with receives of its own on the QP: those it posts
 * before it reads the peer's next control message queue behind the
 * channel's, and take the SENDs that follow that message. One receive
 * covers a peer that sends in turn: at sync points one side answers
 * (ctl->sync_answers, ctl.h), or a peer that sent first could send again
 * before this side's receive is back up; two messages in a row are held,
 * the second perhaps after an RNR NAK. n = 2 is for a QP that carries
 * control messages only: two in a row find a receive each. Going from 1
 * to 0 leaves the receive posted for the next message.
 *
 * While n > 0, the caller's completions that the channel meets as it waits
 * are kept for rk_ctl_qp_take_foreign() (8 at most: a ninth fails the wait
 * with -EPROTO, as any with n = 0 does), and the caller gives the channel's
 * completions it meets to rk_ctl_qp_claim(). A channel that is not on a QP
 * (TCP) has nothing to keep: 0. Errors: -EINVAL for n above
 * RK_CTL_QP_MAX_KEEP (logged); those of posting a receive. */
#define RK_CTL_QP_MAX_KEEP 2
int rk_ctl_qp_keep_receive(struct rk_ctl *ctl, unsigned int n);

/* A completion the caller polled from the QP's CQ: 1 when it is not the
 * channel's (the caller's to handle); else the channel took it (a message
 * staged for the next read, or its SEND done): 0, or that completion's error. */
int rk_ctl_qp_claim(struct rk_ctl *ctl, const struct ibv_wc *wc);

/* The oldest of the caller's completions the channel met while it waited,
 * removed: true and *wc_p, or false when it holds none. */
bool rk_ctl_qp_take_foreign(struct rk_ctl *ctl, struct ibv_wc *wc_p);

/* The caller's next completion on cq, a CQ the channel's QP shares, within
 * timeout_ms (-1: no bound): one the channel kept for it first; the
 * channel's own met on the way go to it (a failed one shows at the
 * channel's next use). For ctl NULL or not on a QP, a plain wait. Errors:
 * rk_cq_wait()'s, -ETIMEDOUT not logged. *wc_p is set only on success. */
int rk_ctl_qp_next_wc(struct rk_ctl *ctl, struct rk_cq *cq, int timeout_ms, struct ibv_wc *wc_p);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
