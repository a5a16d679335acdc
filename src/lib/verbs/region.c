/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Buffers of every kind (host, huge pages, memfd, device memory), allocated
 * and registered by one call. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdmakit/region.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>

static const char *const kind_names[] = {
	[RK_MEM_HOST] = "host",   [RK_MEM_HUGEPAGE] = "hugepage", [RK_MEM_MEMFD] = "memfd",
	[RK_MEM_MEMFD_HUGE] = "memfd-huge", [RK_MEM_DM] = "dm", [RK_MEM_AUTO] = "auto",
};

const char *rk_mem_kind_name(enum rk_mem_kind kind)
{
	if ((size_t)kind < sizeof(kind_names) / sizeof(kind_names[0]))
		return kind_names[kind];
	return "unknown";
}

int rk_mem_kind_parse(const char *name, enum rk_mem_kind *kind_p)
{
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (name && !strcmp(name, kind_names[i])) {
			*kind_p = (enum rk_mem_kind)i;
			return 0;
		}
	return -EINVAL;
}

/* ---- the huge-page pool ---- */

int rk_hugepage_pool_read(struct rk_hugepage_pool *pool_p)
{
	struct rk_hugepage_pool p = {0};
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");
	uint64_t v;

	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "HugePages_Total: %" SCNu64, &v) == 1)
			p.total = v;
		else if (sscanf(line, "HugePages_Free: %" SCNu64, &v) == 1)
			p.free = v;
		else if (sscanf(line, "HugePages_Rsvd: %" SCNu64, &v) == 1)
			p.reserved = v;
		else if (sscanf(line, "Hugepagesize: %" SCNu64 " kB", &v) == 1)
			p.page_size = v * 1024;
	}
	fclose(f);
	*pool_p = p;
	return 0;
}

uint64_t rk_hugepage_pages(const struct rk_hugepage_pool *pool, size_t len)
{
	if (!pool->page_size)
		return 0;
	return (len + pool->page_size - 1) / pool->page_size;
}

bool rk_hugepage_room(const struct rk_hugepage_pool *pool, size_t len)
{
	uint64_t avail = pool->free > pool->reserved ? pool->free - pool->reserved : 0;

	return pool->page_size && len && rk_hugepage_pages(pool, len) <= avail;
}

/* The pool, in words for a message: "0 of 0 huge pages of 2048 kB free". */
static const char *pool_str(const struct rk_hugepage_pool *p, char *buf, size_t len)
{
	uint64_t avail = p->free > p->reserved ? p->free - p->reserved : 0;

	snprintf(buf, len, "%" PRIu64 " of %" PRIu64 " huge pages of %" PRIu64 " kB free%s",
		 avail, p->total, p->page_size / 1024,
		 p->reserved ? " (more reserved by other mappings)" : "");
	return buf;
}

/* Why a huge-page mapping of len bytes (0: any at all) cannot be had, for a
 * user to act on. */
static void log_pool_short(enum rk_mem_kind kind, const struct rk_hugepage_pool *p, size_t len,
			   const char *what)
{
	uint64_t pages = len ? rk_hugepage_pages(p, len) : 1;
	char pool[120], need[80];

	if (len)
		snprintf(need, sizeof(need), "%zu bytes take %" PRIu64 " page%s", len, pages,
			 pages == 1 ? "" : "s");
	else
		snprintf(need, sizeof(need), "it takes at least 1 page");
	rk_error("%s: no huge pages to be had (%s): %s of %" PRIu64 " kB, and the pool has %s "
		 "(/proc/meminfo); reserve more as root: sysctl vm.nr_hugepages=%" PRIu64,
		 rk_mem_kind_name(kind), what, need, p->page_size / 1024,
		 pool_str(p, pool, sizeof(pool)), p->total + pages);
}

int rk_hugepage_check(enum rk_mem_kind kind, size_t len)
{
	struct rk_hugepage_pool p;

	if (kind != RK_MEM_HUGEPAGE && kind != RK_MEM_MEMFD_HUGE)
		return 0;
	if (rk_hugepage_pool_read(&p) || !p.page_size) {
		rk_error("%s: this kernel shows no huge-page pool in /proc/meminfo",
			 rk_mem_kind_name(kind));
		return -EOPNOTSUPP;
	}
	if (rk_hugepage_room(&p, len ? len : 1))
		return 0;
	log_pool_short(kind, &p, len, "the pool is short");
	return -ENOMEM;
}

/* A huge-page mmap() failed although the pool looked big enough (another
 * process took the pages in between). */
static void log_map_failed(enum rk_mem_kind kind, size_t len, int err)
{
	struct rk_hugepage_pool p;

	if (rk_hugepage_pool_read(&p) || !p.page_size)
		rk_error("%s: map %zu bytes: %s", rk_mem_kind_name(kind), len, rk_strerror(err));
	else
		log_pool_short(kind, &p, len, rk_strerror(err));
}

/* ---- mapping the host-side kinds ---- */

static int map_memfd(enum rk_mem_kind kind, size_t map_len, struct rk_mem_map *m)
{
	unsigned int flags = MFD_CLOEXEC | (kind == RK_MEM_MEMFD_HUGE ? MFD_HUGETLB : 0);
	int ret;

	m->fd = memfd_create("rdmakit-buffer", flags);
	if (m->fd < 0) {
		ret = -errno;
		rk_error("%s: memfd_create: %m", rk_mem_kind_name(kind));
		return ret;
	}
	if (ftruncate(m->fd, (off_t)map_len)) {
		ret = -errno;
		rk_error("%s: size the memfd to %zu bytes: %m", rk_mem_kind_name(kind), map_len);
		goto err_close;
	}
	m->buf = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (m->buf == MAP_FAILED) {
		ret = -errno;
		m->buf = NULL;
		if (kind == RK_MEM_MEMFD_HUGE)
			log_map_failed(kind, map_len, ret);
		else
			rk_error("%s: map %zu bytes: %m", rk_mem_kind_name(kind), map_len);
		goto err_close;
	}
	return 0;

err_close:
	close(m->fd);
	m->fd = -1;
	return ret;
}

static int map_hugepage(size_t map_len, struct rk_mem_map *m)
{
	int ret;

	m->buf = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (m->buf == MAP_FAILED) {
		ret = -errno;
		m->buf = NULL;
		log_map_failed(RK_MEM_HUGEPAGE, map_len, ret);
		return ret;
	}
	return 0;
}

static int map_host(size_t len, struct rk_mem_map *m)
{
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	ret = posix_memalign(&m->buf, page > 0 ? (size_t)page : 4096, len);
	if (ret) {
		m->buf = NULL;
		rk_error("allocate %zu bytes: %s", len, rk_strerror(ret));
		return -ret;
	}
	memset(m->buf, 0, len);
	return 0;
}

int rk_mem_map(enum rk_mem_kind kind, size_t len, struct rk_mem_map *map_p)
{
	struct rk_mem_map m = {.kind = kind, .len = len, .map_len = len, .fd = -1};
	bool huge = kind == RK_MEM_HUGEPAGE || kind == RK_MEM_MEMFD_HUGE;
	struct rk_hugepage_pool pool;
	int ret;

	if (!len) {
		rk_error("%s: allocate memory: length 0", rk_mem_kind_name(kind));
		return -EINVAL;
	}
	if (huge) {
		ret = rk_hugepage_check(kind, len);
		if (ret)
			return ret;
		if (rk_hugepage_pool_read(&pool))
			return -ENOENT;
		m.map_len = rk_hugepage_pages(&pool, len) * pool.page_size;
	}
	if (kind == RK_MEM_HOST)
		ret = map_host(len, &m);
	else if (kind == RK_MEM_HUGEPAGE)
		ret = map_hugepage(m.map_len, &m);
	else if (kind == RK_MEM_MEMFD || kind == RK_MEM_MEMFD_HUGE)
		ret = map_memfd(kind, m.map_len, &m);
	else
		ret = -EINVAL;
	if (ret)
		return ret;
	/* Mappings are zero from the kernel; posix_memalign()'s was cleared. */
	*map_p = m;
	return 0;
}

void rk_mem_unmap(struct rk_mem_map *map)
{
	if (!map->buf)
		return;
	if (map->kind == RK_MEM_HOST)
		free(map->buf);
	else if (munmap(map->buf, map->map_len))
		rk_warn("unmap %zu bytes of %s memory: %m", map->map_len,
			rk_mem_kind_name(map->kind));
	if (map->fd >= 0)
		close(map->fd);
	map->buf = NULL;
	map->fd = -1;
}

/* ---- on-demand paging ---- */

static const struct {
	uint32_t flag;
	const char *name;
} odp_ops[] = {
	{IBV_ODP_SUPPORT_SEND, "SEND"},   {IBV_ODP_SUPPORT_RECV, "RECV"},
	{IBV_ODP_SUPPORT_WRITE, "WRITE"}, {IBV_ODP_SUPPORT_READ, "READ"},
	{IBV_ODP_SUPPORT_ATOMIC, "ATOMIC"},
};

int rk_odp_check(const struct rk_device *dev, uint32_t rc_ops)
{
	char lacks[64] = "";
	size_t off = 0;

	if (!(dev->info.odp_caps & IBV_ODP_SUPPORT)) {
		rk_error("%s has no on-demand paging (odp_caps.general_caps lacks "
			 "IBV_ODP_SUPPORT): --odp cannot be used here",
			 dev->info.name);
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < sizeof(odp_ops) / sizeof(odp_ops[0]); i++)
		if ((rc_ops & odp_ops[i].flag) && !(dev->info.odp_rc_caps & odp_ops[i].flag))
			off += (size_t)snprintf(lacks + off, sizeof(lacks) - off, "%s%s",
						off ? "|" : "", odp_ops[i].name);
	if (off) {
		rk_error("%s has on-demand paging but not for RC %s (odp_caps.per_transport_caps."
			 "rc_odp_caps 0x%x): --odp cannot be used for this run",
			 dev->info.name, lacks, dev->info.odp_rc_caps);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* ---- regions ---- */

enum rk_mem_kind rk_mem_auto(const struct rk_device *dev, size_t len, const char *no_dm,
			     char *why, size_t why_len)
{
	struct rk_hugepage_pool pool;
	char dm[192], hp[160];

	if (no_dm)
		snprintf(dm, sizeof(dm), "%s", no_dm);
	else if (!dev || !dev->info.max_dm_size)
		snprintf(dm, sizeof(dm), "%s has no device memory", dev ? dev->info.name : "the device");
	else if (len > dev->info.max_dm_size)
		snprintf(dm, sizeof(dm), "%zu bytes are more than the %" PRIu64
			 " of %s's device memory", len, dev->info.max_dm_size, dev->info.name);
	else {
		snprintf(why, why_len, "auto chose dm: %s has %" PRIu64 " bytes of device memory",
			 dev->info.name, dev->info.max_dm_size);
		return RK_MEM_DM;
	}
	if (rk_hugepage_pool_read(&pool) || !pool.page_size) {
		snprintf(why, why_len, "auto chose host: %s, and the kernel has no huge-page pool",
			 dm);
		return RK_MEM_HOST;
	}
	pool_str(&pool, hp, sizeof(hp));
	if (rk_hugepage_room(&pool, len)) {
		snprintf(why, why_len, "auto chose hugepage: %s; %s", dm, hp);
		return RK_MEM_HUGEPAGE;
	}
	snprintf(why, why_len, "auto chose host: %s; %s, %" PRIu64 " needed", dm, hp,
		 rk_hugepage_pages(&pool, len));
	return RK_MEM_HOST;
}

static int region_dm(struct rk_device *dev, struct ibv_pd *pd, struct rk_region *r,
		     const struct rk_region_opts *o)
{
	if (o->no_dm) {
		rk_error("dm: this buffer cannot be device memory (the CPU fills and checks it); "
			 "use host, hugepage, memfd, memfd-huge or auto");
		return -EOPNOTSUPP;
	}
	if (o->odp) {
		rk_error("dm: device memory is not paged; --odp needs host-side memory");
		return -EOPNOTSUPP;
	}
	return rk_dm_alloc(dev, pd, r->len, r->access, &r->dm);
}

/* Host memory registered in one call (mem.h): here, not in mem.c, as it
 * allocates through rk_mem_map(); mem.c only registers. */
int rk_mr_alloc(struct ibv_pd *pd, size_t len, int access, struct rk_mr **mr_p)
{
	struct rk_mem_map m;
	int ret;

	ret = rk_mem_map(RK_MEM_HOST, len, &m);
	if (ret)
		return ret;
	ret = rk_mr_reg(pd, m.buf, len, access, mr_p);
	if (ret) {
		rk_mem_unmap(&m);
		return ret;
	}
	(*mr_p)->owns_buf = 1; /* host memory: free() */
	return 0;
}

int rk_region_alloc(struct rk_device *dev, struct ibv_pd *pd, size_t len, int access,
		    const struct rk_region_opts *opts, struct rk_region **region_p)
{
	static const struct rk_region_opts host = {.kind = RK_MEM_HOST};
	const struct rk_region_opts *o = opts ? opts : &host;
	struct rk_region *r;
	int ret;

	if (o->odp) {
		ret = rk_odp_check(dev, o->odp_rc ? o->odp_rc : RK_ODP_RC_ALL);
		if (ret)
			return ret;
		access |= IBV_ACCESS_ON_DEMAND;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->map.fd = -1;
	r->len = len;
	r->access = access;
	r->kind = o->kind;
	if (o->kind == RK_MEM_AUTO) {
		r->kind = rk_mem_auto(dev, len,
				      o->no_dm ? "this command cannot use device memory" :
				      o->odp ? "--odp needs host-side memory" : NULL,
				      r->why, sizeof(r->why));
		r->chosen = true;
		rk_info("%s", r->why);
	}
	if (r->kind == RK_MEM_DM) {
		ret = region_dm(dev, pd, r, o);
		if (ret)
			goto err_free_r;
		r->access = r->dm->access;
		r->lkey = r->dm->mr->lkey;
		r->rkey = r->dm->mr->rkey;
		r->base = 0;
	} else {
		ret = rk_mem_map(r->kind, len, &r->map);
		if (ret)
			goto err_free_r;
		ret = rk_mr_reg(pd, r->map.buf, len, access, &r->host);
		if (ret)
			goto err_unmap;
		r->lkey = r->host->mr->lkey;
		r->rkey = r->host->mr->rkey;
		r->base = (uint64_t)(uintptr_t)r->map.buf;
	}
	*region_p = r;
	return 0;

err_unmap:
	rk_mem_unmap(&r->map);
err_free_r:
	free(r);
	return ret;
}

int rk_region_precheck(const char *device, const struct rk_region_opts *o, size_t len)
{
	struct rk_device *dev;
	int ret;

	ret = rk_hugepage_check(o->kind, len);
	if (ret || (o->kind != RK_MEM_DM && !o->odp))
		return ret;
	if (o->kind == RK_MEM_DM && (o->no_dm || o->odp))
		return region_dm(NULL, NULL, NULL, o);
	ret = rk_device_open(device, &dev);
	if (ret)
		return ret;
	if (o->kind == RK_MEM_DM && !dev->info.max_dm_size) {
		rk_error("%s has no device memory (max_dm_size 0), so --mem dm cannot be used; "
			 "--mem auto falls back to huge pages or host memory",
			 dev->info.name);
		ret = -EOPNOTSUPP;
	} else if (o->odp) {
		ret = rk_odp_check(dev, o->odp_rc ? o->odp_rc : RK_ODP_RC_ALL);
	}
	rk_device_close(dev);
	return ret;
}

int rk_region_write(struct rk_region *r, size_t off, const void *src, size_t len)
{
	if (r->dm)
		return rk_dm_write(r->dm, off, src, len);
	if (off > r->len || len > r->len - off)
		return -ERANGE;
	memcpy((char *)r->map.buf + off, src, len);
	return 0;
}

int rk_region_read(const struct rk_region *r, size_t off, void *dst, size_t len)
{
	if (r->dm)
		return rk_dm_read(r->dm, off, dst, len);
	if (off > r->len || len > r->len - off)
		return -ERANGE;
	memcpy(dst, (const char *)r->map.buf + off, len);
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
	rk_mem_unmap(&r->map);
	free(r);
}
