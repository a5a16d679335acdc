/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what the ping engine needs of counters.c's
 * run counters beyond the public calls. */
#ifndef RDMAKIT_LIB_COUNTERS_INT_H
#define RDMAKIT_LIB_COUNTERS_INT_H

#include <rdmakit/counters.h>

#pragma GCC visibility push(hidden)

/* Drop the first reading without a second (c keeps state UNREAD). */
void rk_run_counters_discard(struct rk_run_counters *c);

#pragma GCC visibility pop

#endif
