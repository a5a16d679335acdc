/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what a listener's busy refusals (conn.c) need of
 * tcp.c. */
#ifndef RDMAKIT_LIB_TCP_INT_H
#define RDMAKIT_LIB_TCP_INT_H

#pragma GCC visibility push(hidden)

/* Refuse every client already waiting on listen_fd, without waiting for
 * more: each is sent an ERROR message of code (a negative errno) and reason,
 * then closed. Returns how many were refused. */
int rk_tcp_refuse_waiting(int listen_fd, int code, const char *reason);

#pragma GCC visibility pop

#endif
