/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what conn.c sets on the control channel over a QP
 * (ctl_qp.c). */
#ifndef RDMAKIT_LIB_CTL_QP_INT_H
#define RDMAKIT_LIB_CTL_QP_INT_H

#include <stdbool.h>

#include <rdmakit/ctl.h>

#pragma GCC visibility push(hidden)

/* Optional, for a channel of rk_ctl_qp_create(): asked every 100 ms while
 * it waits for a completion; true (the peer left: rk_cm_peer_left(), which
 * the QP's state shows only once this side disconnects too) ends the wait
 * with -ECONNRESET after one more 100 ms slice, instead of at its timeout
 * (a killed peer's own QP never answers). NULL gone: none. */
void rk_ctl_qp_set_gone(struct rk_ctl *ctl, bool (*gone)(void *arg), void *arg);

#pragma GCC visibility pop

#endif
