/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the control channel between two sides.
 *
 * A control channel carries the wire messages of wire.h. Two kinds exist:
 * a TCP connection (tcp.h: the out-of-band exchange of LID, GID, QPN, PSN,
 * MTU and buffer, as ibv_rc_pingpong and perftest do), and, after an RDMA CM
 * connection, SEND/RECV of those messages on the connected QP itself
 * (ctl_qp.h). Sync points on the channel keep two sides' steps in order.
 */
#ifndef RDMAKIT_CTL_H
#define RDMAKIT_CTL_H

#include <stddef.h>
#include <stdint.h>

#include <rdmakit/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct rk_ctl;

/* A control channel's implementation. */
struct rk_ctl_ops {
	int (*send)(struct rk_ctl *ctl, const uint8_t *buf, size_t len);
	/* Read exactly len bytes within timeout_ms; -ECONNRESET when the peer
	 * closed (with *got_p saying how many came). */
	int (*recv)(struct rk_ctl *ctl, uint8_t *buf, size_t len, int timeout_ms, size_t *got_p);
	void (*close)(struct rk_ctl *ctl);
	/* Whether a message has begun to arrive, waiting up to timeout_ms (0:
	 * a look, no wait): 1, 0, or a negative errno. A signal may end the
	 * wait early (0). */
	int (*pending)(struct rk_ctl *ctl, int timeout_ms);
};

struct rk_ctl {
	const struct rk_ctl_ops *ops;
	char peer[80];     /* "198.18.0.2:18515", for messages */
	char local_ip[48]; /* the local address the peer talks to ("" if unknown) */
	int fd;            /* TCP: the socket; -1 otherwise */
	void *priv;
	/* rk_ctl_sync() waits for the peer's SYNC before it sends its own: one
	 * side of a channel that keeps one receive posted (ctl_qp.h), so the
	 * peer's next message can only follow a receive posted again. */
	bool sync_answers;
};

/* Send one message. */
int rk_ctl_send(struct rk_ctl *ctl, const struct rk_msg *msg);

/* Receive one message within timeout_ms: the header is checked before the
 * rest is read, so a garbled or oversized message is refused without reading
 * past it. A peer's ERROR message is logged with its text and returned as
 * -ECONNABORTED; one of code -EBUSY (a server busy with another client, to
 * try again) is returned as -EBUSY, its text logged as info. Errors:
 * -ETIMEDOUT, -ECONNRESET (closed, also mid-message), -EBADMSG /
 * -EPROTONOSUPPORT (malformed), each logged once naming the peer. */
int rk_ctl_recv(struct rk_ctl *ctl, int timeout_ms, struct rk_msg *msg_p);

/* Whether a message has begun to arrive (rk_ctl_recv would not wait for
 * its start), waiting up to timeout_ms (0: only a look): 1, 0 when none
 * came (not logged; a signal may end the wait early), or a negative errno
 * (-ECONNRESET: the channel is gone), logged. For a loop that must go on
 * while it listens for the peer. */
int rk_ctl_pending(struct rk_ctl *ctl, int timeout_ms);

/* Receive one message and require its type; -EPROTO for another type. */
int rk_ctl_expect(struct rk_ctl *ctl, enum rk_msg_type type, int timeout_ms,
		  struct rk_msg *msg_p);

/* Sync point: send SYNC(step, status) and wait for the peer's SYNC (with
 * sync_answers, the other way round). Returns
 * -EPROTO when the peer is at another step, and the peer's negative status
 * when it reported a failure (its step failed: we stop too). */
int rk_ctl_sync(struct rk_ctl *ctl, uint32_t step, int32_t status, int timeout_ms);

/* How many messages one side may send before it reads the peer's answers:
 * a TCP channel's socket buffers hold RK_CTL_WINDOW each way; an RDMA CM
 * channel keeps a single receive posted, so 1. For request/answer loops
 * over many QPs (a round trip per window rather than per message). */
#define RK_CTL_WINDOW 32
uint32_t rk_ctl_window(const struct rk_ctl *ctl);

/* Tell the peer why this side gives up (best effort; errors ignored). */
void rk_ctl_send_error(struct rk_ctl *ctl, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Close the channel and free it. NULL is ignored. */
void rk_ctl_close(struct rk_ctl *ctl);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
