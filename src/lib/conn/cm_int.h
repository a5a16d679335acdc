/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what a listener's busy refusals (conn.c) need of
 * cm.c. */
#ifndef RDMAKIT_LIB_CM_INT_H
#define RDMAKIT_LIB_CM_INT_H

#include <rdmakit/cm.h>

#pragma GCC visibility push(hidden)

/* Refuse every connect request already waiting on listener, without
 * waiting for more, as rk_cm_reject_id() does. Returns how many. */
int rk_cm_refuse_waiting(struct rk_cm *listener, int code, const char *reason);

#pragma GCC visibility pop

#endif
