/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what a listener's busy refusals (conn.c) and the
 * SRQ ping-pong engine need of tcp.c. */
#ifndef RDMAKIT_LIB_TCP_INT_H
#define RDMAKIT_LIB_TCP_INT_H

#include <rdmakit/ctl.h>

#pragma GCC visibility push(hidden)

/* Refuse every client already waiting on listen_fd, without waiting for
 * more: each is sent an ERROR message of code (a negative errno) and reason,
 * then closed. Returns how many were refused. */
int rk_tcp_refuse_waiting(int listen_fd, int code, const char *reason);

/* Close a TCP control channel with a reset (SO_LINGER 0): the peer's read
 * fails (ECONNRESET) instead of ending, for a peer that never checks for the
 * end (ibv_srq_pingpong's client spins on it). NULL and other channels: as
 * rk_ctl_close(). */
void rk_tcp_close_reset(struct rk_ctl *ctl);

#pragma GCC visibility pop

#endif
