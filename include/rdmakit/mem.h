/* rdmakit: protection domains and host-memory regions. */
#ifndef RDMAKIT_MEM_H
#define RDMAKIT_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A registered buffer. buf/len describe exactly the registered bytes. */
struct rk_mr {
	struct ibv_mr *mr;
	void *buf;
	size_t len;
	int access;     /* the IBV_ACCESS_* flags it was registered with, no more */
	int owns_buf;   /* allocated by rk_mr_alloc(), freed by rk_mr_free() */
};

/* Allocate a protection domain on dev. */
int rk_pd_alloc(struct rk_device *dev, struct ibv_pd **pd_p);

/* Free a PD; logs when verbs objects still use it. NULL is ignored. */
void rk_pd_free(struct ibv_pd *pd);

/* Allocate len bytes (page-aligned, zeroed) and register them with exactly the
 * access flags given. len must be > 0. */
int rk_mr_alloc(struct ibv_pd *pd, size_t len, int access, struct rk_mr **mr_p);

/* Register caller-owned memory [buf, buf+len) with exactly these access flags. */
int rk_mr_reg(struct ibv_pd *pd, void *buf, size_t len, int access, struct rk_mr **mr_p);

/* Deregister (and free what rk_mr_alloc() allocated). NULL is ignored. */
void rk_mr_free(struct rk_mr *mr);

/* The access flags as "LOCAL_WRITE|REMOTE_READ" into buf ("none" when 0). */
const char *rk_access_str(int access, char *buf, size_t len);

/* True when [addr, addr+len) lies inside the MR. For checking a peer's
 * offsets before an operation is posted or served. */
int rk_mr_contains(const struct rk_mr *mr, uint64_t addr, uint64_t len);

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
