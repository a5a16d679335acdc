/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: attach, detach and list rkblk disks (the kernel module in
 * kernel/, a block device over memory served by `rdmakit memserver`).
 *
 * The module's control file /dev/rkblk-ctl takes one command per open: the
 * caller writes it and reads one answer line ("rkblk0", "ok", or "error:
 * ..."). Each disk's state is in /sys/block/rkblkN/rkblk/. Options are
 * checked here first, with a reason that names the option, so a mistake is
 * caught before the module sees it; the module checks them again.
 */
#ifndef RDMAKIT_BLK_H
#define RDMAKIT_BLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_BLK_CTL "/dev/rkblk-ctl"
#define RK_BLK_SYSFS "/sys/block"
#define RK_BLK_ANSWER_MAX 256

/* Limits of the attach string (notes/rkblk-contract.md). */
#define RK_BLK_MAX_QUEUE_DEPTH 1024
#define RK_BLK_MAX_RECONNECT_DELAY 3600
#define RK_BLK_MAX_LOSS_TIMEOUT 86400

struct rk_blk_attach_opts {
	const char *host;          /* IPv4 or IPv6 literal of the memserver */
	uint16_t port;             /* 0: the module's default (7471) */
	uint64_t size;             /* bytes, a non-zero multiple of 4096 */
	unsigned int queues;       /* 0: the module's default (one per online CPU) */
	unsigned int queue_depth;  /* 0: the module's default (128) */
	unsigned int reconnect_delay; /* seconds; 0: the module's default (2) */
	int loss_timeout;          /* seconds; -1: the module's default (60); 0 is valid */
	int tos;                   /* RDMA CM type of service (traffic class) 0..255; -1: none */
};

/* Defaults: everything the module's own, host NULL, size 0. */
void rk_blk_attach_defaults(struct rk_blk_attach_opts *o);

/* Check o and build "attach host=...,port=...,size=..." into buf. Returns 0,
 * or -EINVAL with why naming the option ("--size: 5000 is not a multiple of
 * 4096"), or -ENOSPC when buf is too small. online_cpus bounds --queues (0:
 * not checked). */
int rk_blk_attach_string(const struct rk_blk_attach_opts *o, unsigned int online_cpus, char *buf,
			 size_t len, char *why, size_t why_len);

/* Send one command to the control file ctl (NULL: RK_BLK_CTL) and read its
 * answer line (without the newline) into answer. Returns 0 when the module
 * accepted the command, the write's negative errno when it refused it
 * (answer holds its "error: ..." line), or another negative errno when the
 * file could not be used (answer says why: a missing file is "the rkblk
 * module is not loaded (modprobe rkblk; ...)", and how to load it). */
int rk_blk_command(const char *ctl, const char *cmd, char *answer, size_t len);

/* Attach: check, build the string, send it. On success name holds the
 * disk's name ("rkblk0"); on failure msg says why (ours or the module's). */
int rk_blk_attach(const char *ctl, const struct rk_blk_attach_opts *o, char *name,
		  size_t name_len, char *msg, size_t msg_len);

/* Detach disk name ("rkblkN", checked). msg as for rk_blk_attach(). */
int rk_blk_detach(const char *ctl, const char *name, char *msg, size_t msg_len);

struct rk_blk_disk {
	char name[32];
	char state[16];    /* live, reconnecting, dead, deleting */
	char server[80];   /* ADDR:PORT */
	char session[20];  /* 16 hex digits */
	uint64_t size, queues, queue_depth, inflight, errors, reconnects;
	uint64_t reconnect_delay, loss_timeout;
	uint64_t path_mtu; /* bytes, of the last connect; 0: none (iWARP) */
	int64_t tos;       /* -1: none given */
	char missing[160]; /* attributes that could not be read, "" when none */
};

/* The rkblk disks under sysfs (NULL: RK_BLK_SYSFS), sorted by name. *disks_p
 * is malloc'd (free() it); 0 disks is success. */
int rk_blk_list(const char *sysfs, struct rk_blk_disk **disks_p, int *n_p);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
