/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the out-of-band TCP exchange: a control channel (ctl.h) over a
 * TCP connection, as ibv_rc_pingpong and perftest exchange their addresses.
 */
#ifndef RDMAKIT_TCP_H
#define RDMAKIT_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include <rdmakit/ctl.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Listen for TCP control connections on port (all addresses when bind_ip is
 * NULL). *fd_p is the listening socket. */
int rk_tcp_listen(const char *bind_ip, uint16_t port, int *fd_p);

/* Accept one control connection within timeout_ms (-1: wait forever). */
int rk_tcp_accept(int listen_fd, int timeout_ms, struct rk_ctl **ctl_p);

/* Connect to host:port. While nothing listens there yet (refused, or
 * unreachable for now), keep trying every 200 ms for up to retry_ms, then give
 * up with a message that says so and the last try's error (-ECONNREFUSED,
 * -EHOSTUNREACH ...), the one the message names. */
int rk_tcp_connect(const char *host, uint16_t port, int retry_ms, struct rk_ctl **ctl_p);

/* Whether the peer of a TCP control channel closed or reset its end, seen
 * without waiting or reading (POLLRDHUP). False for other channels, whose
 * peer's leaving RDMA CM tells (rk_cm_peer_left()). For a wait that no
 * message is due in, e.g. rk_cq_ids.gone while two sides work the QP. */
bool rk_tcp_peer_closed(const struct rk_ctl *ctl);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
