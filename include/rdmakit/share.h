/* rdmakit: several processes on one RDMA device.
 *
 * Three ways, as the verbs allow them:
 *  1. import: an owner passes its context's command fd over a Unix socket
 *     (SCM_RIGHTS) with its PD and MR handles and the MR's address; another
 *     process imports them (ibv_import_device, ibv_import_pd, ibv_import_mr),
 *     does RDMA with them and releases them (ibv_unimport_*), while the owner
 *     keeps ownership. Only some providers can import (mlx5 today); the others
 *     (rxe among them) answer EOPNOTSUPP.
 *  2. shared memory: one memfd mapped by several processes, each registering
 *     the same bytes with its own context, PD and MR.
 *  3. fork: ibv_fork_init() before any registration, then parent and children
 *     each create their own verbs resources after fork().
 */
#ifndef RDMAKIT_SHARE_H
#define RDMAKIT_SHARE_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- messages between cooperating processes (Unix stream sockets) ---- */

/* Send len bytes, and fd along with them (SCM_RIGHTS) when fd >= 0. */
int rk_share_msg_send(int sock, const void *buf, size_t len, int fd);

/* Receive exactly len bytes within timeout_ms (-1: forever). When fd_p is
 * given it receives a passed descriptor, or -1 when none came. -EPIPE when
 * the other side closed the socket, -ETIMEDOUT when nothing came in time. */
int rk_share_msg_recv(int sock, void *buf, size_t len, int timeout_ms, int *fd_p);

/* ---- way 1: import ---- */

/* What the owner passes next to its command fd. */
struct rk_share_handles {
	uint32_t pd_handle;
	uint32_t mr_handle;
	uint64_t mr_addr; /* the MR's address in the owner's address space */
	uint64_t mr_len;
	uint32_t lkey, rkey;
};

/* Owner: pass ctx's command fd and the PD and MR handles over sock. */
int rk_share_send_handles(int sock, struct ibv_context *ctx, const struct ibv_pd *pd,
			  const struct ibv_mr *mr);

/* Receiver: the command fd (*cmd_fd_p: give it to rk_share_import(), or
 * close it) and the handles. */
int rk_share_recv_handles(int sock, int timeout_ms, int *cmd_fd_p, struct rk_share_handles *h);

/* Objects imported from another process. dev wraps the imported context. */
struct rk_imported {
	struct rk_device *dev;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
};

/* ibv_import_device(cmd_fd), ibv_import_pd(), ibv_import_mr(). cmd_fd is
 * consumed: on success the imported context owns it, on failure it is closed.
 * A provider without import makes this -EOPNOTSUPP, logged as "EOPNOTSUPP
 * from the provider" with the way out (share the memory instead: one memfd,
 * each process with its own context, PD and MR). */
int rk_share_import(int cmd_fd, const struct rk_share_handles *h, struct rk_imported **imp_p);

/* ibv_unimport_mr(), ibv_unimport_pd(), then close the imported context: the
 * owner's objects stay as they are. NULL is ignored. */
void rk_share_unimport(struct rk_imported *imp);

/* ---- way 2: shared memory ---- */

/* An anonymous shared memory file of len bytes (memfd_create) and its mapping. */
int rk_shm_create(const char *name, size_t len, int *fd_p);

/* Map len bytes of the memory file fd, shared, read and write. */
int rk_shm_map(int fd, size_t len, void **buf_p);

/* Unmap what rk_shm_map() mapped. */
void rk_shm_unmap(void *buf, size_t len);

/* ---- way 3: fork ---- */

/* ibv_fork_init(): 0 or a negative errno (-EINVAL when memory was registered
 * before it and the kernel does not copy DMA pages on fork). Not logged: the
 * caller decides what a refusal means. */
int rk_fork_init(void);

/* ibv_is_fork_initialized() as "DISABLED", "ENABLED" or "UNNEEDED" (the
 * kernel copies DMA pages on fork, so fork is safe without ibv_fork_init). */
const char *rk_fork_status_str(enum ibv_fork_status status);

#ifdef __cplusplus
}
#endif
#endif
