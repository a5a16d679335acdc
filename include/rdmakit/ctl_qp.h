/* rdmakit: a control channel (ctl.h) over a connected QP, for RDMA CM. */
#ifndef RDMAKIT_CTL_QP_H
#define RDMAKIT_CTL_QP_H

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

#ifdef __cplusplus
}
#endif
#endif
