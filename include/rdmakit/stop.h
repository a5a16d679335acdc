/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A stop request for the library's blocking waits, set from a signal handler:
 * how a server that serves until SIGINT or SIGTERM gets out of waiting for
 * its next client. */
#ifndef RDMAKIT_STOP_H
#define RDMAKIT_STOP_H

#include <signal.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Watch flag (NULL: stop watching). Once it is non-zero, a wait that a signal
 * interrupts (EINTR) returns -EINTR instead of waiting on: waiting for a TCP
 * client, for an RDMA CM event. The caller's handler sets the flag; install
 * it without SA_RESTART or not, poll() is never restarted. */
void rk_stop_watch(volatile sig_atomic_t *flag);

/* Whether the watched flag is set. */
bool rk_stop_requested(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
