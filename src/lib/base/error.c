/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One error convention: 0 or a negative errno. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/error.h>

const char *rk_strerror(int err)
{
	static __thread char buf[96];

	if (err == 0)
		return "success";
	if (err < 0)
		err = -err;
	/* GNU strerror_r returns a pointer that may or may not be buf. */
	return strerror_r(err, buf, sizeof(buf));
}

int rk_verbs_err(int ret)
{
	if (ret == 0)
		return 0;
	if (ret > 0)
		return -ret;
	return errno ? -errno : -EIO;
}
