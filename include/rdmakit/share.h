/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

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

/* ---- the engine: the three ways run and checked end to end ----
 *
 * rk_share_run() forks its processes itself (workers, children, users), talks
 * to them over Unix socket pairs and checks every byte they move:
 *   RK_SHARE_IMPORT  this process owns a context, PD and MR; procs users
 *                    import them, READ and WRITE the owner's MR through a QP
 *                    of their own on the imported PD, and unimport; the
 *                    owner checks what they wrote. -EOPNOTSUPP where the
 *                    provider has no import (rxe), recorded in the result.
 *   RK_SHARE_SHM     one memfd mapped by procs workers, each with its own
 *                    context, PD and MR over the same bytes; this process
 *                    (the peer) WRITEs through worker 0's MR and every worker
 *                    sees it; then all WRITE and READ at once.
 *   RK_SHARE_FORK    what ibv_fork_init() says in a child that registered
 *                    memory before calling it; then ibv_fork_init() here and
 *                    procs children doing RDMA with this process after fork().
 * Each check is a step in the result and goes to the progress callback as it
 * happens. The engine prints nothing; errors are logged.
 */
enum rk_share_way { RK_SHARE_IMPORT, RK_SHARE_SHM, RK_SHARE_FORK };

#define RK_SHARE_MAX_PROCS 16
#define RK_SHARE_MIN_SIZE  8
#define RK_SHARE_MAX_SIZE  (16u << 20)
#define RK_SHARE_MAX_STEPS (5 * RK_SHARE_MAX_PROCS + 4)

/* One thing done and checked. */
struct rk_share_step {
	char name[12]; /* connect, write, see, serve, issue, arrived, init, late,
			  import, owner */
	int process;   /* the worker, child or user it concerns; -1: none */
	bool ok;
	char detail[512]; /* what was done and seen, as a sentence */
};

struct rk_share_result;

enum rk_share_stage {
	RK_SHARE_BEGIN, /* set up: the way's facts in the result are known */
	RK_SHARE_STEP,	/* one more step: the last of result->steps */
};

typedef void (*rk_share_progress_fn)(enum rk_share_stage stage,
				     const struct rk_share_result *result, void *arg);

struct rk_share_opts {
	enum rk_share_way way;
	const char *device; /* NULL: the first */
	uint8_t port_num;   /* 0 means 1 */
	int gid_index;	    /* -1: choose */
	unsigned int procs; /* 1 .. RK_SHARE_MAX_PROCS */
	size_t size;	    /* bytes per RDMA operation, RK_SHARE_MIN_SIZE .. _MAX_SIZE */
	rk_share_progress_fn progress; /* optional */
	void *progress_arg;
};

struct rk_share_import_info {
	bool supported; /* false: the provider answered EOPNOTSUPP */
	int owner_pid;
	char device[64];
	int cmd_fd; /* the owner's command fd */
	uint32_t pd_handle, mr_handle;
	uint64_t mr_addr, mr_len;
};

struct rk_share_fork_info {
	int init_ret;		     /* ibv_fork_init() before any registration */
	enum ibv_fork_status status; /* after it */
	int late_ret;		     /* ibv_fork_init() after a registration */
	enum ibv_fork_status late_status;
	bool late_as_documented; /* -EINVAL, or 0 where fork support is unneeded */
	bool has_fork_safe;	 /* RDMAV_FORK_SAFE was set ... */
	char fork_safe[32];	 /* ... to this */
};

struct rk_share_result {
	enum rk_share_way way;
	unsigned int procs;
	size_t size;
	size_t shared_bytes; /* shm: the memfd's size */
	struct rk_share_import_info import;
	struct rk_share_fork_info fork;
	struct rk_share_step steps[RK_SHARE_MAX_STEPS];
	int nsteps;
	int failures; /* steps not ok */
};

/* "import", "shm", "fork"; rk_share_way_parse() is its inverse (-EINVAL). */
const char *rk_share_way_str(enum rk_share_way way);
int rk_share_way_parse(const char *name, enum rk_share_way *way_p);

/* Run one way. *res is filled as far as the run went, also on failure. On
 * iWARP, shm and fork connect the processes' QPs through RDMA CM (the peer
 * listens on the device's address); import is refused there before any
 * process starts (-EPROTONOSUPPORT, logged).
 * Returns 0 when every step was ok; -EINVAL for bad options (logged, naming
 * the option); -EOPNOTSUPP for import on a provider without it; -EIO when a
 * step failed or a process exited with an error; another negative errno when
 * a verbs call, fork or a message failed. */
int rk_share_run(const struct rk_share_opts *o, struct rk_share_result *res);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
