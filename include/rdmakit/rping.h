/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: librdmacm's rping protocol, both roles, so that rdmakit talks to
 * rdma-core's rping (librdmacm/examples/rping.c).
 *
 * Over an RC connection made with RDMA CM (no private data), the client
 * SENDs 16 bytes describing one of its buffers, {u64 addr, u32 rkey, u32
 * size} in network byte order: for each ping, first the buffer the server
 * RDMA-READs (the ping), then the one the server RDMA-WRITEs the pong into;
 * the server answers each with a 16-byte "go ahead" SEND. The client always
 * fills the ping with "rdma-ping-N: " and letters (rk_rping_fill); with -V
 * it compares the pong with it. The client ends the run by disconnecting;
 * rping's server serves until then, whatever its -C.
 */
#ifndef RDMAKIT_RPING_H
#define RDMAKIT_RPING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdmakit/ping.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_RPING_INFO_LEN 16
#define RK_RPING_DEFAULT_PORT 7174
/* rping's own -S bounds (rdma-core 44 and its current master): at least
 * RPING_MIN_BUFSIZE, sizeof("INT_MAX") + sizeof("rdma-ping-%d: ") = 23 as
 * rping.c is compiled (INT_MAX is not defined there, so it is stringified
 * as its name), and at most RPING_BUFSIZE - 1 = 65535 (its message says
 * "valid range is 23 to 65536", but 65536 is refused). */
#define RK_RPING_MIN_SIZE 23
#define RK_RPING_MAX_SIZE 65535

struct rk_rping_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
};

/* The 16 bytes on the wire, in network byte order. */
void rk_rping_info_encode(const struct rk_rping_info *info, uint8_t out[RK_RPING_INFO_LEN]);

/* Decode a received message of n bytes; -EBADMSG (why says so) unless n is
 * exactly RK_RPING_INFO_LEN. */
int rk_rping_info_decode(const uint8_t *buf, size_t n, struct rk_rping_info *info_p, char *why,
			 size_t why_len);

/* Fill buf as rping's client does for ping number ping (from 0):
 * "rdma-ping-<ping>: ", then letters 'A'..'z' cycling from a start that
 * moves by one each ping, and a NUL in the last byte. */
void rk_rping_fill(void *buf, size_t size, uint32_t ping);

/* Offset of the first byte that differs from rk_rping_fill(ping), or -1. */
ssize_t rk_rping_check(const void *buf, size_t size, uint32_t ping);

/* Run rping's protocol (rk_ping_opts: server, host, source, port, size,
 * count, interval_ms, validate, events, timeout_ms, accept_timeout_ms,
 * progress). Client: connects (retrying while nothing listens, up to
 * timeout_ms), pings count times (0: until an error or a stop request,
 * stop.h: then result->stopped, and 0 returned with the rounds done),
 * disconnects. Server: serves one client
 * until it disconnects (result->peer_left); with count > 0 it fails when the
 * client leaves before count pings, and after count pings it still waits for
 * the client's disconnect (as rping's server does) instead of disconnecting
 * first: a client whose last go-ahead is in flight must not see the
 * connection drop. Size: RK_RPING_MIN_SIZE..RK_RPING_MAX_SIZE. Returns 0 or
 * a negative errno, also in result->error; *result always filled. */
int rk_rping_run(const struct rk_ping_opts *opts, struct rk_ping_result *result);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
