/* Device (on-chip) memory, and regions that are either host or device memory. */
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

int rk_region_alloc(struct rk_device *dev, struct ibv_pd *pd, size_t len, int access,
		    bool want_dm, bool fallback, bool *fell_back_p, struct rk_region **region_p)
{
	struct rk_region *r;
	bool fell_back = false;
	int ret = -EOPNOTSUPP;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (want_dm && fallback && dev->info.max_dm_size == 0) {
		/* Expected, and asked for: one warning, not an error first. */
		rk_warn("%s has no device memory (max_dm_size 0): using host memory, as asked",
			dev->info.name);
		fell_back = true;
	} else if (want_dm) {
		ret = rk_dm_alloc(dev, pd, len, access, &r->dm);
		if (ret && !(fallback && ret == -EOPNOTSUPP))
			goto err_free_r;
		if (ret) {
			rk_warn("falling back to host memory, as asked");
			fell_back = true;
		}
	}
	if (r->dm) {
		r->lkey = r->dm->mr->lkey;
		r->rkey = r->dm->mr->rkey;
		r->base = 0;
	} else {
		ret = rk_mr_alloc(pd, len, access, &r->host);
		if (ret)
			goto err_free_r;
		r->lkey = r->host->mr->lkey;
		r->rkey = r->host->mr->rkey;
		r->base = (uint64_t)(uintptr_t)r->host->buf;
	}
	r->len = len;
	if (fell_back_p)
		*fell_back_p = fell_back;
	*region_p = r;
	return 0;

err_free_r:
	free(r);
	return ret;
}

int rk_region_write(struct rk_region *r, size_t off, const void *src, size_t len)
{
	if (r->dm)
		return rk_dm_write(r->dm, off, src, len);
	if (off > r->len || len > r->len - off)
		return -ERANGE;
	memcpy((char *)r->host->buf + off, src, len);
	return 0;
}

int rk_region_read(const struct rk_region *r, size_t off, void *dst, size_t len)
{
	if (r->dm)
		return rk_dm_read(r->dm, off, dst, len);
	if (off > r->len || len > r->len - off)
		return -ERANGE;
	memcpy(dst, (const char *)r->host->buf + off, len);
	return 0;
}

struct ibv_sge rk_region_sge(const struct rk_region *r, size_t off, uint32_t len)
{
	struct ibv_sge s = {.addr = r->base + off, .length = len, .lkey = r->lkey};

	return s;
}

bool rk_region_contains(const struct rk_region *r, uint64_t addr, uint64_t len)
{
	if (addr < r->base || len > r->len)
		return false;
	return addr - r->base <= r->len - len;
}

void rk_region_free(struct rk_region *r)
{
	if (!r)
		return;
	rk_dm_free(r->dm);
	rk_mr_free(r->host);
	free(r);
}
