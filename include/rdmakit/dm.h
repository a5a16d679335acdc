/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: device (on-chip) memory. Buffers of any kind (host, huge pages,
 * memfd, device memory) behind one interface are in region.h. */
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

#pragma GCC visibility push(default)

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

/* Copy len bytes from src into device memory at off: 0, -ERANGE when
 * [off, off+len) is outside it (nothing logged), or the copy's errno (logged). */
int rk_dm_write(struct rk_dm *dm, size_t off, const void *src, size_t len);

/* Copy len bytes of device memory at off into dst; returns as rk_dm_write(). */
int rk_dm_read(struct rk_dm *dm, size_t off, void *dst, size_t len);

/* Deregister and free. NULL is ignored. */
void rk_dm_free(struct rk_dm *dm);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
