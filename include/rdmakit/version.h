/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the library's version. */
#ifndef RDMAKIT_VERSION_H
#define RDMAKIT_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RDMAKIT_VERSION_MAJOR 0
#define RDMAKIT_VERSION_MINOR 1

/* The library's version as "MAJOR.MINOR.PATCH". */
const char *rk_version(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
