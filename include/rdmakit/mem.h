/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
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

#pragma GCC visibility push(default)

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

/* Register caller-owned memory [buf, buf+len) with exactly these access flags.
 * 0 or a negative errno (logged: -EINVAL for an empty buffer). The buffer
 * stays the caller's: rk_mr_free() deregisters it and leaves it, and it must
 * outlive the MR. */
int rk_mr_reg(struct ibv_pd *pd, void *buf, size_t len, int access, struct rk_mr **mr_p);

/* Deregister (and free what rk_mr_alloc() allocated). NULL is ignored. */
void rk_mr_free(struct rk_mr *mr);

/* The access flags as "LOCAL_WRITE|REMOTE_READ" into buf ("none" when 0). */
const char *rk_access_str(int access, char *buf, size_t len);

/* True when [addr, addr+len) lies inside the MR. For checking a peer's
 * offsets before an operation is posted or served. */
int rk_mr_contains(const struct rk_mr *mr, uint64_t addr, uint64_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
