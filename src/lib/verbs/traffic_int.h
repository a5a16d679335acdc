/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: the check conn.c and the ping engines make of a
 * connected QP's traffic class (traffic.c). */
#ifndef RDMAKIT_LIB_TRAFFIC_INT_H
#define RDMAKIT_LIB_TRAFFIC_INT_H

#include <stdbool.h>
#include <rdmakit/qp.h>
#include <rdmakit/traffic.h>

#pragma GCC visibility push(hidden)

/* After qp (RC or UC) is connected: when t asks for a traffic class and the
 * QP's address vector (ibv_query_qp) carries another, say so once (rk_warn).
 * cm_server: the QP is an RDMA CM server's, which takes the class of the
 * client's connect request, not its listener's type of service (seen on
 * rxe: the listener's RDMA_OPTION_ID_TOS is not used for the QP). Returns 1
 * when it differs, else 0. */
int rk_traffic_check_qp(const struct rk_traffic *t, const struct rk_qp *qp, bool cm_server);

#pragma GCC visibility pop

#endif
