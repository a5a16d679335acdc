/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what the three ping engines (ping.c, rping.c,
 * pingpong.c) share. */
#ifndef RDMAKIT_LIB_PING_INT_H
#define RDMAKIT_LIB_PING_INT_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <rdmakit/cq.h>
#include <rdmakit/mem.h>
#include <rdmakit/ops.h>
#include <rdmakit/ping.h>

/* Shared by the library's own files only: not exported from the .so. */
#pragma GCC visibility push(hidden)

/* The work request ids the engines post with. */
#define PING_WR_SEND 1
#define PING_WR_RECV 2
#define PING_WR_RDMA 3

/* One engine run: the options with defaults applied, and the result. */
struct ping_run {
	struct rk_ping_opts o;
	struct rk_ping_result *res;
};

/* Copy the options, apply defaults (port, timeout), clear the result. */
void ping_run_init(struct ping_run *r, const struct rk_ping_opts *o, uint16_t default_port,
		   struct rk_ping_result *res);

/* Tell the caller about a stage (not rounds). */
void ping_report(const struct ping_run *r, enum rk_ping_stage stage);

/* Record a round's time and tell the caller. -ENOMEM. */
int ping_round_done(struct ping_run *r, const struct rk_ping_round *round);

/* A data check that failed: log where, keep it in the result; -EIO. */
int ping_mismatch(struct ping_run *r, uint64_t round, ssize_t off, const uint8_t *got,
		  uint8_t want, const char *what);

/* Client: the pause between rounds (none after the last). */
void ping_pause(const struct ping_run *r, uint64_t round);

/* Finish: keep ret in the result and return it. */
int ping_finish(struct ping_run *r, int ret);

/* Post a signalled SEND (wr_id PING_WR_SEND; ah and rqpn for UD) or a
 * receive (PING_WR_RECV) of len bytes at off in mr. */
int ping_post_send(struct rk_qp *qp, const struct rk_mr *mr, size_t off, uint32_t len,
		   struct ibv_ah *ah, uint32_t rqpn);
int ping_post_recv(struct rk_qp *qp, const struct rk_mr *mr, size_t off, uint32_t len);

/* A peer's message refused by a decoder: say why (fmt) in why; -EBADMSG. */
static inline __attribute__((format(printf, 3, 4))) int ping_bad_msg(char *why, size_t why_len,
								     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

#pragma GCC visibility pop

#endif
