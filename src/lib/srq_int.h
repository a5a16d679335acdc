/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what the device's async event thread (device.c)
 * needs of srq.c. */
#ifndef RDMAKIT_LIB_SRQ_INT_H
#define RDMAKIT_LIB_SRQ_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#pragma GCC visibility push(hidden)

/* From the device's async event path: an event of SRQ s (SRQ_LIMIT_REACHED
 * or SRQ_ERR) for the rk_srq that owns it, counted there. Returns true and
 * sets *posted_p and *limit_p when s is an rk_srq's, false otherwise. */
bool rk_srq_async_event(struct ibv_srq *s, enum ibv_event_type type, uint32_t *posted_p,
			uint32_t *limit_p);

#pragma GCC visibility pop

#endif
