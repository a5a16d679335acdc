/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: posting work requests.
 *
 * One descriptor, struct rk_wr, covers every operation; the helpers below
 * fill it for the common cases. Scatter/gather lists are plain ibv_sge arrays.
 */
#ifndef RDMAKIT_OPS_H
#define RDMAKIT_OPS_H

#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/qp.h>
#include <rdmakit/mem.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

enum rk_op {
	RK_OP_SEND = 0,
	RK_OP_SEND_IMM,
	RK_OP_WRITE,
	RK_OP_WRITE_IMM,
	RK_OP_READ,
	RK_OP_FETCH_ADD,
	RK_OP_CMP_SWAP,
};

/* Send flags (IBV_SEND_*) are passed through; RK_WR_* mirror the common ones. */
#define RK_WR_SIGNALED IBV_SEND_SIGNALED
#define RK_WR_INLINE   IBV_SEND_INLINE
#define RK_WR_FENCE    IBV_SEND_FENCE

struct rk_wr {
	enum rk_op op;
	uint64_t wr_id;
	const struct ibv_sge *sg; /* local buffers; atomics: one 8-byte SGE */
	int nsge;
	unsigned int flags;       /* IBV_SEND_*; SIGNALED unless the QP signals all */
	uint64_t remote_addr;     /* WRITE, READ, atomics */
	uint32_t rkey;
	uint32_t imm;             /* host order; sent big-endian */
	uint64_t compare_add;     /* FETCH_ADD: add; CMP_SWAP: compare */
	uint64_t swap;            /* CMP_SWAP */
	struct ibv_ah *ah;        /* UD */
	uint32_t remote_qpn;      /* UD */
	uint32_t remote_qkey;     /* UD */
};

/* Post one work request on the send queue. The provider's refusal (for
 * example a send in a state before RTS) comes back as a negative errno and is
 * logged with the QP's state. */
int rk_post(struct rk_qp *qp, const struct rk_wr *wr);

/* Post one receive of nsge pieces. */
int rk_post_recv(struct rk_qp *qp, uint64_t wr_id, const struct ibv_sge *sg, int nsge);

/* Fill an SGE covering [off, off+len) of an MR. */
struct ibv_sge rk_sge(const struct rk_mr *mr, size_t off, uint32_t len);

/* Split [off, off+len) of mr into n nearly equal consecutive SGEs (n >= 1,
 * n <= len unless len is 0). Returns n, or -EINVAL. */
int rk_sge_split(const struct rk_mr *mr, size_t off, uint32_t len, int n, struct ibv_sge *sg);

/* Split one SGE (of an MR, a region, device memory: rk_sge(),
 * rk_region_sge()) into n nearly equal consecutive ones, the first
 * whole.length % n one byte longer. n >= 1 and n <= whole.length unless the
 * length is 0. Returns n, or -EINVAL. The one splitter of rdmakit. */
int rk_sge_divide(struct ibv_sge whole, int n, struct ibv_sge *sg);

/* "SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "FETCH_ADD", "CMP_SWAP". */
const char *rk_op_str(enum rk_op op);

/* Parse the names above (also lower case with '-': "write-imm"). -EINVAL. */
int rk_op_parse(const char *text, enum rk_op *op_p);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
