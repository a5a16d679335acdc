/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The library's version, set by the build. */
#include <rdmakit/version.h>

const char *rk_version(void)
{
	return RDMAKIT_VERSION_STRING;
}
