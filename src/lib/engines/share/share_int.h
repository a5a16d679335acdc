/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Private to the share engine (share_proc.c, share_ways.c): the messages
 * between its processes, one process's verbs resources, spawning and reaping. */
#ifndef RDMAKIT_SHARE_INT_H
#define RDMAKIT_SHARE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdmakit/cm.h>
#include <rdmakit/cq.h>
#include <rdmakit/mem.h>
#include <rdmakit/ops.h>
#include <rdmakit/port.h>
#include <rdmakit/qp.h>
#include <rdmakit/share.h>

/* Shared by the library's own files only: not exported from the .so. */
#pragma GCC visibility push(hidden)

#define SH_MSG_WAIT_MS 30000
#define SH_WC_WAIT_MS  10000

enum sh_msg_type { SH_HELLO = 1, SH_READY, SH_CHECK, SH_GO, SH_DONE, SH_BYE };

struct sh_msg {
	uint32_t type;
	int32_t ret;
	int64_t bad;   /* first bad byte, -1: all good */
	uint64_t addr; /* HELLO: buffer address; GO: remote WRITE target */
	uint64_t len;
	uint32_t rkey;
	uint32_t seed;	       /* CHECK: seed of the first slice; GO: WRITE seed */
	uint64_t first, count; /* CHECK: slices; GO: local slice to WRITE from */
	uint64_t raddr;	       /* GO: remote READ source */
	uint64_t rslice;       /* GO: local slice the READ lands in */
	uint32_t rseed;	       /* GO: what the READ must bring */
	int32_t fork_status;
	struct rk_endpoint ep;
	char cm_addr[64]; /* HELLO from the peer on iWARP: its listener's address */
	uint16_t cm_port; /* and port */
	char text[160];
};

/* One process's verbs resources over a buffer. */
struct sh_node {
	struct rk_port_sel sel;
	struct ibv_pd *pd;
	struct rk_cq *cq;
	struct rk_mr *mr;
	struct rk_qp *qp[RK_SHARE_MAX_PROCS];
	int nqp;
	/* iWARP: the QPs connect through RDMA CM, one id each (the peer's from
	 * its listener); PD, CQ and MR are then on the CM's device context. */
	struct rk_cm *listener;
	struct rk_cm *cm[RK_SHARE_MAX_PROCS];
};

/* A child process as its parent sees it. */
struct sh_proc {
	pid_t pid;
	int sock;
	struct sh_msg hello;
};

int sh_send(int sock, const struct sh_msg *m);
/* Receive a message of type want; from names the sender in errors. */
int sh_recv(int sock, uint32_t want, struct sh_msg *m, const char *from);

/* Open the device, PD, CQ, an MR over buf and nqp RC QPs. sh_node_close()
 * undoes it, also after a failure part way. */
int sh_node_open(struct sh_node *n, const struct rk_share_opts *o, void *buf, size_t len, int nqp);
/* iWARP: PD, CQ and the MR over buf on dev (an RDMA CM id's); no QPs yet
 * (the caller makes them on its CM ids). */
int sh_node_open_on(struct sh_node *n, struct rk_device *dev, void *buf, size_t len);
/* Whether o's device is iWARP; its name in name (len bytes). */
int sh_device_iwarp(const struct rk_share_opts *o, bool *iwarp_p, char *name, size_t len);
void sh_node_close(struct sh_node *n);

/* Post a signaled WRITE or READ of len bytes between local and remote. */
int sh_rdma(struct rk_qp *qp, struct rk_mr *mr, enum rk_op op, uint64_t wr_id, void *local,
	    uint64_t raddr, uint32_t rkey, uint32_t len);
/* Wait for n good completions. */
int sh_wait(struct rk_cq *cq, int n, const char *what);

/* Start n children running fn(idx, sock, arg); the parent keeps the other
 * socket ends in p[]. p[] starts with pid 0 and sock -1. */
int sh_spawn(struct sh_proc *p, int n, int (*fn)(int idx, int sock, void *arg), void *arg);
/* Tell the children to stop (or kill them), collect them; returns how many failed. */
int sh_reap(struct sh_proc *p, int n, bool kill_them);
void sh_procs_init(struct sh_proc *p, int n);

/* shm and fork: spawn procs workers over shared memory (shm_fd >= 0) or
 * their own buffers (-1), be their peer, check everything. */
int sh_run_workers(const struct rk_share_opts *o, int shm_fd, struct rk_share_result *res);

/* Record a step in res and tell the progress callback. */
void sh_step(const struct rk_share_opts *o, struct rk_share_result *res, const char *name, int who,
	     bool ok, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#pragma GCC visibility pop

#endif
