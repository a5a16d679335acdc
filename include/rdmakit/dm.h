/* rdmakit: device (on-chip) memory, and regions that are either host or
 * device memory behind one interface. */
#ifndef RDMAKIT_DM_H
#define RDMAKIT_DM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>
#include <rdmakit/mem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device (on-chip) memory, registered zero-based: remote and local addresses
 * are offsets from 0. */
struct rk_dm {
	struct ibv_dm *dm;
	struct ibv_mr *mr;
	size_t len;
	int access;
};

/* Allocate len bytes of device memory and register them zero-based with
 * access (IBV_ACCESS_ZERO_BASED is added). -EOPNOTSUPP, logged with the
 * device's max_dm_size, when the device has none (rxe: max_dm_size 0);
 * -ENOSPC when len is above max_dm_size. */
int rk_dm_alloc(struct rk_device *dev, struct ibv_pd *pd, size_t len, int access,
		struct rk_dm **dm_p);

/* Copy len bytes from src into device memory at off. */
int rk_dm_write(struct rk_dm *dm, size_t off, const void *src, size_t len);

/* Copy len bytes of device memory at off into dst. */
int rk_dm_read(struct rk_dm *dm, size_t off, void *dst, size_t len);

/* Deregister and free. NULL is ignored. */
void rk_dm_free(struct rk_dm *dm);

/* A buffer served to a peer: host memory or device memory, one interface. */
struct rk_region {
	struct rk_mr *host;  /* one of host and dm is set */
	struct rk_dm *dm;
	size_t len;
	uint32_t lkey;
	uint32_t rkey;
	uint64_t base;       /* what address 0 of the region is for RDMA: the host
				address, or 0 for zero-based device memory */
};

/* Allocate a region of len bytes with access: device memory when want_dm,
 * else host memory. With fallback, a device without device memory gets host
 * memory instead, and *fell_back_p (if given) says so. */
int rk_region_alloc(struct rk_device *dev, struct ibv_pd *pd, size_t len, int access,
		    bool want_dm, bool fallback, bool *fell_back_p, struct rk_region **region_p);

/* Copy in and out of the region at off (bounds checked: -ERANGE). */
int rk_region_write(struct rk_region *r, size_t off, const void *src, size_t len);
int rk_region_read(const struct rk_region *r, size_t off, void *dst, size_t len);

/* A local SGE over [off, off+len) of the region. */
struct ibv_sge rk_region_sge(const struct rk_region *r, size_t off, uint32_t len);

/* True when a peer's [addr, addr+len) lies inside the region as exposed. */
bool rk_region_contains(const struct rk_region *r, uint64_t addr, uint64_t len);

/* Free the region and its memory. NULL is ignored. */
void rk_region_free(struct rk_region *r);

#ifdef __cplusplus
}
#endif
#endif
