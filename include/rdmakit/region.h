/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the buffers commands expose and move, in one of several kinds of
 * memory, allocated and registered by one call.
 *
 *   host       page-aligned ordinary memory
 *   hugepage   anonymous huge pages from the kernel's pool (MAP_HUGETLB)
 *   memfd      a memfd_create() file mapped shared: another process can map
 *              the same pages through the file descriptor
 *   memfd-huge the same with MFD_HUGETLB: huge pages from the pool
 *   dm         device (on-chip) memory, registered zero-based (dm.h)
 *   auto       dm where the device has it and the size fits (and the caller
 *              can use it), else hugepage when the pool has room, else host;
 *              the region says which and why
 *
 * On-demand paging (IBV_ACCESS_ON_DEMAND) is asked for per region and is
 * checked against what the device reports for RC first (rk_odp_check()).
 */
#ifndef RDMAKIT_REGION_H
#define RDMAKIT_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>
#include <rdmakit/dm.h>
#include <rdmakit/mem.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

enum rk_mem_kind {
	RK_MEM_HOST,
	RK_MEM_HUGEPAGE,
	RK_MEM_MEMFD,
	RK_MEM_MEMFD_HUGE,
	RK_MEM_DM,
	RK_MEM_AUTO,
};

/* "host", "hugepage", "memfd", "memfd-huge", "dm", "auto"; "unknown". */
const char *rk_mem_kind_name(enum rk_mem_kind kind);

/* The name into its kind: 0, or -EINVAL for any other name. */
int rk_mem_kind_parse(const char *name, enum rk_mem_kind *kind_p);

/* The kernel's default huge-page pool, from /proc/meminfo. */
struct rk_hugepage_pool {
	uint64_t page_size;  /* bytes (Hugepagesize); 0 when the kernel has none */
	uint64_t total;      /* HugePages_Total */
	uint64_t free;       /* HugePages_Free */
	uint64_t reserved;   /* HugePages_Rsvd: free but promised to mappings */
};

/* Read the pool. -ENOENT (not logged) when /proc/meminfo cannot be read. */
int rk_hugepage_pool_read(struct rk_hugepage_pool *pool_p);

/* Pages of the pool that len bytes take (rounded up); 0 when page_size is 0. */
uint64_t rk_hugepage_pages(const struct rk_hugepage_pool *pool, size_t len);

/* Whether the pool has len bytes free now (free pages not reserved). */
bool rk_hugepage_room(const struct rk_hugepage_pool *pool, size_t len);

/* 0 when the pool has len bytes (0: one page) free for kind (HUGEPAGE, MEMFD_HUGE; any
 * other kind: 0); else -ENOMEM (-EOPNOTSUPP: no pool at all), logged with how
 * many pages of what size are free and how to reserve them. */
int rk_hugepage_check(enum rk_mem_kind kind, size_t len);

/* Memory of a host-side kind, mapped and not registered. */
struct rk_mem_map {
	enum rk_mem_kind kind; /* HOST, HUGEPAGE, MEMFD or MEMFD_HUGE */
	void *buf;
	size_t len;            /* asked for */
	size_t map_len;        /* mapped: len rounded up to the page (huge page) size */
	int fd;                /* memfd kinds: the file (close-on-exec); else -1 */
};

/* Map len bytes (> 0) of kind, zeroed. Huge-page kinds that find the pool
 * short fail with -ENOMEM, logged with how many pages of what size are free
 * and how to reserve more (sysctl vm.nr_hugepages=N). */
int rk_mem_map(enum rk_mem_kind kind, size_t len, struct rk_mem_map *map_p);

/* Unmap (and close the memfd). A map with buf NULL is ignored. */
void rk_mem_unmap(struct rk_mem_map *map);

/* The RC operations a region serves, for the on-demand-paging check: a mask
 * of IBV_ODP_SUPPORT_SEND, _RECV, _WRITE, _READ, _ATOMIC. */
#define RK_ODP_RC_ALL                                                                        \
	(IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |                \
	 IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC)

/* 0 when dev reports on-demand paging with every RC op in rc_ops; else
 * -EOPNOTSUPP, logged by name: "rxe0 has no on-demand paging
 * (odp_caps.general_caps lacks IBV_ODP_SUPPORT)", or the ops it lacks for RC. */
int rk_odp_check(const struct rk_device *dev, uint32_t rc_ops);

/* How to make a region. */
struct rk_region_opts {
	enum rk_mem_kind kind;
	bool no_dm;      /* the caller cannot use device memory: auto never picks it */
	bool odp;        /* register with IBV_ACCESS_ON_DEMAND (after rk_odp_check()) */
	uint32_t odp_rc; /* the RC ops to check for odp (0: RK_ODP_RC_ALL) */
};

/* A registered buffer of one kind. */
struct rk_region {
	enum rk_mem_kind kind;  /* what it is: never RK_MEM_AUTO */
	bool chosen;            /* auto chose kind */
	char why[200];          /* auto: what it chose and why; else "" */
	struct rk_mem_map map;  /* host-side kinds */
	struct rk_mr *host;     /* host-side kinds: the registration of map */
	struct rk_dm *dm;       /* RK_MEM_DM */
	size_t len;
	uint32_t lkey;
	uint32_t rkey;
	int access;             /* IBV_ACCESS_* registered with */
	uint64_t base;          /* what address 0 of the region is for RDMA: the
				   host address, or 0 for zero-based device memory */
};

/* Decide what auto gives for len bytes on dev without allocating: the kind,
 * and why into why. no_dm (NULL: device memory is considered) says why
 * device memory is not. */
enum rk_mem_kind rk_mem_auto(const struct rk_device *dev, size_t len, const char *no_dm,
			     char *why, size_t why_len);

/* Allocate len bytes of the kind opts says (NULL: host) and register them
 * on pd with access (plus IBV_ACCESS_ON_DEMAND with opts->odp). Errors are
 * logged once, naming what was wrong: -EOPNOTSUPP device memory or ODP the
 * device lacks (or dm with no_dm, or dm with odp), -ENOSPC more device
 * memory than the device has, -ENOMEM huge pages short (see rk_mem_map()),
 * or the registration's error. */
int rk_region_alloc(struct rk_device *dev, struct ibv_pd *pd, size_t len, int access,
		    const struct rk_region_opts *opts, struct rk_region **region_p);

/* Before connecting: what opts asks that this machine cannot give, said at
 * once rather than when a peer has come. The huge-page pool is checked for
 * len bytes (0: one page), device memory and on-demand paging on the device
 * called device (NULL: the first; a connection may end up on another, where
 * rk_region_alloc() checks again). 0, or the error rk_region_alloc() would
 * give, logged. */
int rk_region_precheck(const char *device, const struct rk_region_opts *opts, size_t len);

/* Copy in and out of the region at off: 0, or -ERANGE when [off, off+len)
 * is outside it; device memory's copies as rk_dm_write() and rk_dm_read(). */
int rk_region_write(struct rk_region *r, size_t off, const void *src, size_t len);
int rk_region_read(const struct rk_region *r, size_t off, void *dst, size_t len);

/* A local SGE over [off, off+len) of the region (its base and lkey; not
 * bounds-checked: see rk_region_contains()). */
struct ibv_sge rk_region_sge(const struct rk_region *r, size_t off, uint32_t len);

/* True when a peer's [addr, addr+len) lies inside the region as exposed. */
bool rk_region_contains(const struct rk_region *r, uint64_t addr, uint64_t len);

/* Deregister and free the region and its memory. NULL is ignored. */
void rk_region_free(struct rk_region *r);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
