/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what the device's async event reader (device.c)
 * learns from the SRQ code (srq.c) without calling it. */
#ifndef RDMAKIT_LIB_DEVICE_INT_H
#define RDMAKIT_LIB_DEVICE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#pragma GCC visibility push(hidden)

/* Whether srq is a live rk_srq; if so its receives posted and limit
 * (srq.c's srq_async_event()). */
typedef bool (*device_srq_event_fn)(struct ibv_srq *srq, enum ibv_event_type type,
				    uint32_t *posted_p, uint32_t *limit_p);

/* srq.c sets it with its first SRQ; until then an SRQ event names no SRQ,
 * as none of ours exists. */
void device_srq_event_hook(device_srq_event_fn fn);

#pragma GCC visibility pop

#endif
