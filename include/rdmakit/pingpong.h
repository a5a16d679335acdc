/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the protocol of libibverbs' ibv_rc_pingpong, ibv_uc_pingpong and
 * ibv_ud_pingpong, both roles, so that rdmakit talks to them.
 *
 * Each side writes one text message on a TCP connection,
 * "LLLL:QQQQQQ:PPPPPP:GGGG...G" and a NUL: LID (4 hex digits), QPN and PSN
 * (6 hex digits each), the GID as 32 hex digits of its 16 bytes in order; 52
 * bytes in all. The client writes first, the server answers with its own,
 * the client ends with "done" and a NUL. A GID of all zeros means "no GRH"
 * (InfiniBand without -g). Then the client SENDs, the server SENDs back,
 * count times; the MTU is not exchanged (both sides use their -m).
 *
 * ibv_srq_pingpong (rk_ping_opts.srq_qps QPs, RC): each side writes
 * RK_PP_SRQ_MAX_QP such messages, one per QP and all zeros past its last,
 * the server answers with as many, and the client ends with "done". Every
 * QP takes its receives from one SRQ. The client SENDs once on every QP,
 * then again on a QP once its SEND and the pong on it completed; the
 * server SENDs back on the QP a ping came on. count is the SENDs of each
 * side in all, not per QP.
 */
#ifndef RDMAKIT_PINGPONG_H
#define RDMAKIT_PINGPONG_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/ping.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_PP_MSG_LEN 52    /* "0000:000000:000000:" + 32 hex digits + NUL */
#define RK_PP_DONE "done"   /* the client's last message, sent with its NUL */
#define RK_PP_DONE_LEN 5
#define RK_PP_DEFAULT_PORT 18515
#define RK_PP_UD_QKEY 0x11111111u
#define RK_PP_GRH_LEN 40    /* ibv_ud_pingpong's receive buffers start with the GRH */
#define RK_PP_PAGE 4096     /* ibv_*_pingpong -c checks the first byte of each page */
#define RK_PP_SRQ_MAX_QP 256 /* ibv_srq_pingpong's MAX_QP: messages each way */
#define RK_PP_SRQ_DEFAULT_QPS 16

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

/* Run the protocol (rk_ping_opts: server, host, port, device, port_num,
 * gid_index, transport, srq_qps, size, count, interval_ms, mtu, rx_depth,
 * validate, events, timeout_ms, accept_timeout_ms, progress). Both sides must use the
 * same size and count. With validate the client checks each pong is its
 * ping, the server each ping after the first is its last pong (the first
 * is the client's own content); the ping has the first byte of every page
 * 0, as ibv_*_pingpong -c expects. UD: size must fit the port's MTU.
 * Returns 0 or a negative errno, also in result->error; *result always
 * filled. */
int rk_pingpong_run(const struct rk_ping_opts *opts, struct rk_ping_result *result);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
