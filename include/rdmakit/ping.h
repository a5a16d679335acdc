/* rdmakit: ping-pong engines' pure logic: round-trip statistics, and the
 * wire formats of rdma-core's own ping programs, so that rdmakit can talk to
 * them.
 *
 *   ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong (libibverbs examples):
 *     each side writes one text message on a TCP connection,
 *     "LLLL:QQQQQQ:PPPPPP:GGGG...G" and a NUL: LID (4 hex digits), QPN and PSN
 *     (6 hex digits each), the GID as 32 hex digits of its 16 bytes in order;
 *     52 bytes in all. The client writes first, the server answers with its
 *     own, the client ends with "done" and a NUL. A GID of all zeros means
 *     "no GRH" (InfiniBand without -g).
 *
 *   rping (librdmacm example): the client SENDs 16 bytes describing one of
 *     its buffers, {u64 addr, u32 rkey, u32 size} in network byte order;
 *     for each ping, first the buffer to be RDMA-READ by the server, then the
 *     one the server RDMA-WRITEs the pong into, and the server answers each
 *     with a 16-byte "go ahead" SEND. With -V the client fills the ping with
 *     "rdma-ping-N: " followed by letters (rk_rping_fill) and compares the
 *     pong with it.
 */
#ifndef RDMAKIT_PING_H
#define RDMAKIT_PING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- round-trip statistics ---- */

struct rk_rtt_stats {
	size_t n;
	double min, median, p99, max, mean; /* in the samples' unit */
};

/* Statistics of n samples (not changed; a copy is sorted). The median of an
 * even count is the mean of the two middle samples; p99 is the nearest-rank
 * 99th percentile (the smallest sample with at least 99% of the samples at or
 * below it). -EINVAL for n == 0 or a NULL argument, -ENOMEM. */
int rk_rtt_stats_compute(const double *samples, size_t n, struct rk_rtt_stats *stats_p);

/* ---- ibv_*_pingpong's TCP exchange ---- */

#define RK_PP_MSG_LEN 52    /* "0000:000000:000000:" + 32 hex digits + NUL */
#define RK_PP_DONE "done"   /* the client's last message, sent with its NUL */
#define RK_PP_DONE_LEN 5
#define RK_PP_DEFAULT_PORT 18515
#define RK_PP_UD_QKEY 0x11111111u
#define RK_PP_GRH_LEN 40    /* ibv_ud_pingpong's receive buffers start with the GRH */

struct rk_pp_dest {
	uint16_t lid;
	uint32_t qpn; /* 24 bits */
	uint32_t psn; /* 24 bits */
	union ibv_gid gid;
};

/* Write the 52-byte message (with its NUL) into buf. -EINVAL when the QPN
 * or PSN does not fit in 24 bits or buf_len is below RK_PP_MSG_LEN. */
int rk_pp_encode(const struct rk_pp_dest *dest, char *buf, size_t buf_len);

/* Parse a peer's message of n bytes: exactly RK_PP_MSG_LEN bytes, four hex
 * digits, ':', six, ':', six, ':', 32, NUL. Anything else is -EBADMSG with a
 * sentence in why naming what was wrong. */
int rk_pp_parse(const char *buf, size_t n, struct rk_pp_dest *dest_p, char *why,
		size_t why_len);

/* ---- rping's buffer advertisement and -V pattern ---- */

#define RK_RPING_INFO_LEN 16
#define RK_RPING_DEFAULT_PORT 7174
#define RK_RPING_MIN_SIZE 26    /* rping refuses smaller -S */
#define RK_RPING_MAX_SIZE 65535 /* rping's RPING_BUFSIZE - 1 */

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

#ifdef __cplusplus
}
#endif
#endif
