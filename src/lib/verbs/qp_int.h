/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: a QP whose teardown a higher layer owns, and the
 * verbs attributes every QP is made with. */
#ifndef RDMAKIT_LIB_QP_INT_H
#define RDMAKIT_LIB_QP_INT_H

#include <rdmakit/cq.h>
#include <rdmakit/qp.h>

#pragma GCC visibility push(hidden)

/* RDMA CM's QPs (conn/cm.c) are made as this, with qp.cm_id set: their
 * connection must forget the QP before it goes, and verbs cannot call up
 * to say so. rk_qp_destroy() calls destroy() (which destroys the ibv_qp)
 * and frees the whole. */
struct qp_hooked {
	struct rk_qp qp; /* first: the rk_qp handed out is the allocation */
	void (*destroy)(struct rk_qp *qp);
};

/* The verbs creation attributes for attr (the defaults above applied: 64
 * WRs, 1 SGE each way), with send_cq and recv_cq. The one place they are
 * built: rk_qp_create(), rk_qp_create_ex() and rk_cm_create_qp() use it. */
void rk_qp_verbs_attr(const struct rk_qp_init_attr *attr, struct rk_cq *send_cq,
		      struct rk_cq *recv_cq, struct ibv_qp_init_attr *ia);

#pragma GCC visibility pop

#endif
