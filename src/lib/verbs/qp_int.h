/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: a QP whose teardown a higher layer owns. */
#ifndef RDMAKIT_LIB_QP_INT_H
#define RDMAKIT_LIB_QP_INT_H

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

#pragma GCC visibility pop

#endif
