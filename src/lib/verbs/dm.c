/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Device (on-chip) memory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/dm.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>

int rk_dm_alloc(struct rk_device *dev, struct ibv_pd *pd, size_t len, int access,
		struct rk_dm **dm_p)
{
	struct ibv_alloc_dm_attr attr = {.length = len};
	struct rk_dm *d;
	char flags[128];
	int ret;

	if (dev->info.max_dm_size == 0) {
		rk_error("%s has no device memory (max_dm_size 0); use host memory instead "
			 "(or --mem auto, which falls back to it)",
			 dev->info.name);
		return -EOPNOTSUPP;
	}
	if (len == 0 || len > dev->info.max_dm_size) {
		rk_error("%zu bytes of device memory asked for; %s has %llu (max_dm_size)", len,
			 dev->info.name, (unsigned long long)dev->info.max_dm_size);
		return len ? -ENOSPC : -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->dm = ibv_alloc_dm(dev->ctx, &attr);
	if (!d->dm) {
		ret = errno ? -errno : -ENOMEM;
		rk_error("allocate %zu bytes of device memory on %s: %m%s", len, dev->info.name,
			 ret == -EOPNOTSUPP ? " (the provider has no device memory)" : "");
		goto err_free_d;
	}
	access |= IBV_ACCESS_ZERO_BASED;
	d->mr = ibv_reg_dm_mr(pd, d->dm, 0, len, (unsigned int)access);
	if (!d->mr) {
		ret = errno ? -errno : -EINVAL;
		rk_error("register %zu bytes of device memory with %s: %m", len,
			 rk_access_str(access, flags, sizeof(flags)));
		goto err_free_dm;
	}
	d->len = len;
	d->access = access;
	*dm_p = d;
	return 0;

err_free_dm:
	ibv_free_dm(d->dm);
err_free_d:
	free(d);
	return ret;
}

int rk_dm_write(struct rk_dm *dm, size_t off, const void *src, size_t len)
{
	int ret;

	if (off > dm->len || len > dm->len - off)
		return -ERANGE;
	ret = rk_verbs_err(ibv_memcpy_to_dm(dm->dm, off, src, len));
	if (ret)
		rk_error("copy %zu bytes into device memory at %zu: %s", len, off, rk_strerror(ret));
	return ret;
}

int rk_dm_read(struct rk_dm *dm, size_t off, void *dst, size_t len)
{
	int ret;

	if (off > dm->len || len > dm->len - off)
		return -ERANGE;
	ret = rk_verbs_err(ibv_memcpy_from_dm(dst, dm->dm, off, len));
	if (ret)
		rk_error("copy %zu bytes out of device memory at %zu: %s", len, off,
			 rk_strerror(ret));
	return ret;
}

void rk_dm_free(struct rk_dm *dm)
{
	if (!dm)
		return;
	if (ibv_dereg_mr(dm->mr))
		rk_warn("deregister device-memory MR: %m");
	if (ibv_free_dm(dm->dm))
		rk_warn("free device memory: %m");
	free(dm);
}
