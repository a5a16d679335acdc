/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Protection domains and host-memory regions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/mem.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>

int rk_pd_alloc(struct rk_device *dev, struct ibv_pd **pd_p)
{
	struct ibv_pd *pd = ibv_alloc_pd(dev->ctx);

	if (!pd) {
		int ret = errno ? -errno : -ENOMEM;

		rk_error("allocate PD on %s: %m", dev->info.name);
		return ret;
	}
	*pd_p = pd;
	return 0;
}

void rk_pd_free(struct ibv_pd *pd)
{
	int ret;

	if (!pd)
		return;
	ret = ibv_dealloc_pd(pd);
	if (ret)
		rk_warn("deallocate PD: %s (QPs, MRs or AHs still use it)",
			rk_strerror(rk_verbs_err(ret)));
}

static const struct {
	int flag;
	const char *name;
} access_names[] = {
	{IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE"},
	{IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE"},
	{IBV_ACCESS_REMOTE_READ, "REMOTE_READ"},
	{IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC"},
	{IBV_ACCESS_MW_BIND, "MW_BIND"},
	{IBV_ACCESS_ZERO_BASED, "ZERO_BASED"},
	{IBV_ACCESS_ON_DEMAND, "ON_DEMAND"},
	{IBV_ACCESS_RELAXED_ORDERING, "RELAXED_ORDERING"},
};

const char *rk_access_str(int access, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(access_names) / sizeof(access_names[0]); i++) {
		if (!(access & access_names[i].flag))
			continue;
		off += snprintf(buf + off, off < len ? len - off : 0, "%s%s", off ? "|" : "",
				access_names[i].name);
		access &= ~access_names[i].flag;
	}
	if (access)
		off += snprintf(buf + off, off < len ? len - off : 0, "%s0x%x", off ? "|" : "",
				(unsigned int)access);
	if (!off)
		snprintf(buf, len, "none");
	return buf;
}

int rk_mr_reg(struct ibv_pd *pd, void *buf, size_t len, int access, struct rk_mr **mr_p)
{
	struct rk_mr *m;
	char flags[128];
	int ret;

	if (!buf || !len) {
		rk_error("register memory: empty buffer (address %p, length %zu)", buf, len);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->mr = ibv_reg_mr(pd, buf, len, access);
	if (!m->mr) {
		ret = errno ? -errno : -ENOMEM;
		rk_error("register %zu bytes at %p with %s: %m%s", len, buf,
			 rk_access_str(access, flags, sizeof(flags)),
			 ret == -ENOMEM || ret == -EPERM ?
				 " (locked-memory limit too low? see ulimit -l)" : "");
		free(m);
		return ret;
	}
	m->buf = buf;
	m->len = len;
	m->access = access;
	*mr_p = m;
	return 0;
}

void rk_mr_free(struct rk_mr *mr)
{
	int ret;

	if (!mr)
		return;
	ret = ibv_dereg_mr(mr->mr);
	if (ret)
		rk_warn("deregister MR (lkey 0x%x): %s", mr->mr->lkey,
			rk_strerror(rk_verbs_err(ret)));
	if (mr->owns_buf)
		free(mr->buf);
	free(mr);
}

int rk_mr_contains(const struct rk_mr *mr, uint64_t addr, uint64_t len)
{
	uint64_t start = (uint64_t)(uintptr_t)mr->buf;

	if (addr < start || len > mr->len)
		return 0;
	return addr - start <= mr->len - len;
}
