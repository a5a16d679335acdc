/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: hints that work where the user is. An installed
 * program's hints name the installed command, package or manual page; the
 * source tree's form (scripts/softroce, scripts/kmod.sh) only when the
 * running program is in a build tree of rdmakit. */
#ifndef RDMAKIT_LIB_HINT_INT_H
#define RDMAKIT_LIB_HINT_INT_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* Whether the running program (/proc/self/exe) lies in a CMake build tree of
 * rdmakit: a CMakeCache.txt in its directory or up to three above, naming
 * rdmakit's source directory (rdmakit_SOURCE_DIR), which is copied to dir.
 * Nothing is compiled in: an installed program (/usr/bin/rdmakit) or a
 * program of another project is never under such a cache, and a build
 * moved or deleted since counts as installed. */
bool rk_hint_source_dir(char *dir, size_t len);

/* What to do without RDMA hardware: make a Soft-RoCE device (the commands,
 * and rdmakit-devices(1)), and in a build tree also its scripts/softroce.
 * A string of the library's, the same for the whole run. */
const char *rk_hint_no_device(void);

#pragma GCC visibility pop

#endif
