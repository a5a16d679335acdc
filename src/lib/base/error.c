/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One error convention: 0 or a negative errno. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/error.h>

#include "base/error_int.h"

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

const char *errno_name(int ret)
{
	static __thread char other[24];

	switch (-ret) {
	case 0:
		return "0";
	case EINVAL:
		return "EINVAL";
	case ENOMEM:
		return "ENOMEM";
	case EAGAIN:
		return "EAGAIN";
	case EPERM:
		return "EPERM";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EIO:
		return "EIO";
	case ENOSPC:
		return "ENOSPC";
	case EBUSY:
		return "EBUSY";
	case ENOTCONN: /* siw's answer to a send posted before RTS */
		return "ENOTCONN";
	}
	snprintf(other, sizeof(other), "errno %d", -ret);
	return other;
}
