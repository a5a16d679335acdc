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

/* A control channel that sends wire messages as SENDs on a connected QP
 * (the CM case, where there is no TCP socket). It owns a small registered
 * buffer on pd; completions arrive on the QP's CQs, which it polls for its
 * own work requests only (wr_id tagged). It posts its one receive lazily:
 * before it sends, or when it waits for a message, never more than one; after
 * a sync point none is outstanding, so the caller's own receives posted then
 * get the peer's next SEND. A QP that left RTS (peer disconnected) gives
 * -ECONNRESET. */
int rk_ctl_qp_create(struct rk_qp *qp, struct ibv_pd *pd, struct rk_cq *send_cq,
		     struct rk_cq *recv_cq, struct rk_ctl **ctl_p);

/* Optional, for a channel of rk_ctl_qp_create(): asked every 100 ms while
 * it waits for a completion; true (the peer left: rk_cm_peer_left(), which
 * the QP's state shows only once this side disconnects too) ends the wait
 * with -ECONNRESET after one more 100 ms slice, instead of at its timeout
 * (a killed peer's own QP never answers). NULL gone: none. */
void rk_ctl_qp_set_gone(struct rk_ctl *ctl, bool (*gone)(void *arg), void *arg);

#ifdef __cplusplus
}
#endif
#endif
