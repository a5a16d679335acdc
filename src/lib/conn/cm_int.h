/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what qp.c needs of cm.c. */
#ifndef RDMAKIT_LIB_CM_INT_H
#define RDMAKIT_LIB_CM_INT_H

#include <rdmakit/qp.h>

#pragma GCC visibility push(hidden)

/* Destroy an RC QP made by rk_cm_create_qp(), which its connection stops
 * moving to ERR on disconnect. The caller frees qp. */
void cm_qp_destroy(struct rk_qp *qp);

#pragma GCC visibility pop

#endif
