/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: one error convention.
 *
 * Every librdmakit function that can fail returns 0 on success or a negative
 * errno value (-EINVAL, -ETIMEDOUT, ...). Output parameters come last and are
 * written only on success. The function that first understands an error logs
 * it once, through rk_log(); callers only propagate the code.
 */
#ifndef RDMAKIT_ERROR_H
#define RDMAKIT_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Text for a return code of this library: 0, or a negative (or positive) errno.
 * Thread-safe; the string is static or thread-local and must not be freed. */
const char *rk_strerror(int err);

/* Convert a verbs-style result (a positive errno, or -1 with errno set) to a
 * negative errno. ret 0 stays 0. */
int rk_verbs_err(int ret);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
