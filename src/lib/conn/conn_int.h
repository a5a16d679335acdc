/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what the server of several clients (clients.c)
 * needs of conn.c's listener. */
#ifndef RDMAKIT_LIB_CONN_INT_H
#define RDMAKIT_LIB_CONN_INT_H

#include <rdmakit/conn.h>

#pragma GCC visibility push(hidden)

/* A listener's server that has all the clients it serves (served of them):
 * from now until rk_conn_listener_close(), every other client that comes is
 * answered busy (-EBUSY) at once, and tries again until its timeout. */
void rk_conn_listener_refuse_others(struct rk_conn_listener *l, unsigned int served);

#pragma GCC visibility pop

#endif
