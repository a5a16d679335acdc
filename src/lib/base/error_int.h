/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: errno names for reports. */
#ifndef RDMAKIT_LIB_ERROR_INT_H
#define RDMAKIT_LIB_ERROR_INT_H

#pragma GCC visibility push(hidden)

/* "EINVAL" for -EINVAL, "0" for 0, "errno N" for one not named (a buffer
 * of the calling thread). Behind qp_states.h's rk_qps_errno_name(), here
 * so that engines other than the QP-state walk use it too. */
const char *errno_name(int ret);

#pragma GCC visibility pop

#endif
