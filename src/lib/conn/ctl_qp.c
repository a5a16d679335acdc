/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A control channel over a connected RC QP: each wire message travels as one
 * SEND, for RDMA CM connections, where there is no TCP socket to talk over.
 *
 * By default the channel keeps at most one receive of its own on the QP. It
 * posts it lazily, when it needs a message, and also before each SEND: were
 * a SEND to wait for its completion with no receive of ours posted, two sides
 * that both send first (a sync point) would each wait for the other's receive
 * for ever. So from a send or receive until the next message arrives, one
 * receive of the channel is on the QP; after a completed exchange (a sync),
 * none is, and the caller's own receives posted then get the peer's next
 * SEND. A SEND that finds no receive on the peer's side is retried by the
 * transport (RNR retry 7 retries for ever) until the peer gets to its own
 * send or receive: an RNR NAK in the port counters each time.
 *
 * With rk_ctl_qp_keep_receive() one or two receives stay posted, each posted
 * again once its message has been read (a message is copied out as it
 * arrives, two held at most), so the peer's next message finds one waiting
 * (no RNR NAK) while the peer sends in turn: at sync points one side answers
 * (ctl->sync_answers), and each side reads the other's message before it
 * sends the one that lets the peer go on. The caller's receives posted
 * before that read queue behind the channel's, and take the SENDs that follow
 * the peer's next control message. Completions of the caller's work that the
 * channel meets while it waits are kept for rk_ctl_qp_take_foreign(), and the
 * caller hands the channel's own to rk_ctl_qp_claim(). */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdmakit/cm.h>
#include <rdmakit/ctl_qp.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/ops.h>
#include <rdmakit/status.h>

#include "base/clock.h"
#include "conn/ctl_qp_int.h"

/* Tagged work request IDs: "C7L" for control; a receive's adds its slot. */
#define CTL_WRID_SEND 0xC710000000000001ull
#define CTL_WRID_RECV 0xC710000000000002ull

/* Receive buffers, and messages held for reading (staged, next). */
#define CTL_SLOTS 2

/* A SEND completes once the peer has posted a receive; give up after this. */
#define CTL_SEND_TIMEOUT_MS 30000

/* The caller's completions met while the channel waits (keep_receive). */
#define CTL_MAX_FOREIGN 8

struct ctl_qp {
	struct rk_ctl ctl; /* first: rk_ctl pointers are ctl_qp pointers */
	struct rk_qp *qp;
	struct rk_cq *send_cq;
	struct rk_cq *recv_cq;
	struct rk_mr *mr; /* [0, MAX): what is sent; then a MAX per receive slot */
	unsigned int posted; /* bit per receive slot */
	bool send_posted;
	unsigned int keep; /* rk_ctl_qp_keep_receive(): receives kept posted */
	struct ibv_wc foreign[CTL_MAX_FOREIGN];
	int nforeign;
	uint8_t staged[RK_WIRE_MAX_LEN]; /* the message being handed out */
	size_t staged_len;
	size_t staged_off;
	uint8_t next[RK_WIRE_MAX_LEN]; /* keep: one that came meanwhile */
	size_t next_len;
	bool has_next;
	bool (*gone)(void *arg); /* rk_ctl_qp_set_gone() */
	void *gone_arg;
};

static const struct rk_ctl_ops ctl_qp_ops;

static struct ctl_qp *ctl_qp_of(struct rk_ctl *ctl)
{
	return (struct ctl_qp *)ctl;
}

/* The channel behind ctl, or NULL where it is not one of ours (TCP). */
static struct ctl_qp *as_ctl_qp(struct rk_ctl *ctl)
{
	return ctl && ctl->ops == &ctl_qp_ops ? ctl_qp_of(ctl) : NULL;
}

/* Keep what arrived for the reads that follow (behind the message being
 * read, if any). One SEND is one message: bytes past the length its header
 * announces are dropped. */
static void stage(struct ctl_qp *c, const struct ibv_wc *wc, unsigned int slot)
{
	const uint8_t *buf = (const uint8_t *)c->mr->buf + (1 + slot) * RK_WIRE_MAX_LEN;
	size_t n = wc->byte_len < RK_WIRE_MAX_LEN ? wc->byte_len : RK_WIRE_MAX_LEN;

	if (n >= RK_WIRE_HDR_LEN) {
		uint32_t announced;

		memcpy(&announced, buf + 8, sizeof(announced));
		announced = ntohl(announced);
		if (announced >= RK_WIRE_HDR_LEN && announced < n) {
			rk_warn("control message from %s: the SEND carried %zu bytes, %u more "
				"than its header announces; the rest is dropped",
				c->ctl.peer, n, (unsigned int)(n - announced));
			n = announced;
		}
	}
	if (c->staged_off < c->staged_len) {
		memcpy(c->next, buf, n);
		c->next_len = n;
		c->has_next = true;
		return;
	}
	memcpy(c->staged, buf, n);
	c->staged_len = n;
	c->staged_off = 0;
}

/* The message being read is done: the one behind it, if any, is next. */
static void promote(struct ctl_qp *c)
{
	if (c->staged_off < c->staged_len || !c->has_next)
		return;
	memcpy(c->staged, c->next, c->next_len);
	c->staged_len = c->next_len;
	c->staged_off = 0;
	c->has_next = false;
}

/* A completion of the channel's what ("SEND", "receive"): flushed means the
 * QP went to ERR, the connection is gone (-ECONNRESET, not an error here). */
static int ctl_wc_check(const struct ctl_qp *c, const struct ibv_wc *wc, const char *what)
{
	char op[64];

	if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		rk_debug("control channel to %s: %s flushed on QP 0x%x", c->ctl.peer, what,
			 wc->qp_num);
		return -ECONNRESET;
	}
	snprintf(op, sizeof(op), "control message %s", what);
	return rk_wc_check(wc, op);
}

/* One completion within timeout_ms; with a gone check, waited for in
 * slices of at most 100 ms: the peer's leaving is -ECONNRESET after one
 * more slice (for what it sent before it left). */
static int wait_one(struct ctl_qp *c, struct rk_cq *cq, int timeout_ms, struct ibv_wc *wc)
{
	int64_t deadline = timeout_ms < 0 ? INT64_MAX : now_ms() + timeout_ms;
	int n, ret;

	if (!c->gone)
		return rk_cq_wait(cq, wc, 1, timeout_ms, &n);
	for (;;) {
		int64_t left = deadline - now_ms();

		ret = rk_cq_wait(cq, wc, 1, left < 100 ? (left > 0 ? (int)left : 0) : 100, &n);
		if (ret != -ETIMEDOUT)
			return ret;
		if (c->gone(c->gone_arg)) {
			ret = rk_cq_wait(cq, wc, 1, 100, &n);
			return ret == -ETIMEDOUT ? -ECONNRESET : ret;
		}
		if (now_ms() >= deadline)
			return -ETIMEDOUT;
	}
}

static int post_recv(struct ctl_qp *c);

/* One of the channel's own completions: 1 when wc is not the channel's,
 * else 0 or the completion's error. */
static int take_own(struct ctl_qp *c, const struct ibv_wc *wc)
{
	unsigned int slot;
	int ret;

	if (wc->wr_id == CTL_WRID_SEND) {
		c->send_posted = false;
		return ctl_wc_check(c, wc, "SEND");
	}
	if (wc->wr_id < CTL_WRID_RECV || wc->wr_id >= CTL_WRID_RECV + CTL_SLOTS)
		return 1;
	slot = (unsigned int)(wc->wr_id - CTL_WRID_RECV);
	c->posted &= ~(1u << slot);
	ret = ctl_wc_check(c, wc, "receive");
	if (ret)
		return ret;
	stage(c, wc, slot);
	return 0;
}

/* Take one completion from cq within timeout_ms: the channel's SEND or
 * receive, or (keep_receive) one of the caller's, kept for it. -ETIMEDOUT
 * (not logged) when none came. */
static int reap(struct ctl_qp *c, struct rk_cq *cq, int timeout_ms)
{
	struct ibv_wc wc;
	int ret;

	ret = wait_one(c, cq, timeout_ms, &wc);
	if (ret)
		return ret;
	ret = take_own(c, &wc);
	if (ret <= 0)
		return ret;
	if (c->keep && c->nforeign < CTL_MAX_FOREIGN) {
		c->foreign[c->nforeign++] = wc;
		return 0;
	}
	rk_error("control channel to %s: unexpected completion wr_id 0x%llx (%s) on QP 0x%x "
		 "while waiting for a control message; keep other work off this QP's CQs while "
		 "the control channel is in use",
		 c->ctl.peer, (unsigned long long)wc.wr_id,
		 wc.status == IBV_WC_SUCCESS ? rk_wc_opcode_name(wc.opcode)
					     : rk_wc_status_name(wc.status),
		 wc.qp_num);
	return -EPROTO;
}

/* A disconnected QP (CM moved it to ERR) ends the channel: -ECONNRESET. Asked
 * of the device before each post, since not every provider flushes a request
 * posted in ERR (rxe leaves such a receive waiting for ever). */
static int check_connected(struct ctl_qp *c)
{
	enum ibv_qp_state state;
	int ret;

	ret = rk_qp_query_state(c->qp, &state);
	if (ret)
		return ret;
	/* INIT, RTR: a receive posted before the connection is established. */
	if (state == IBV_QPS_RTS || state == IBV_QPS_INIT || state == IBV_QPS_RTR)
		return 0;
	rk_debug("control channel to %s: QP 0x%x is in %s", c->ctl.peer, c->qp->qp->qp_num,
		 rk_qp_state_str(state));
	return -ECONNRESET;
}

static unsigned int count_posted(const struct ctl_qp *c)
{
	return (unsigned int)__builtin_popcount(c->posted);
}

/* Messages held for reading: what is staged (unread) and the one behind. */
static unsigned int count_held(const struct ctl_qp *c)
{
	return (c->staged_off < c->staged_len) + c->has_next;
}

/* Post the channel's receives up to what it keeps (1 when lazy), never more
 * than there is room to hold what they bring. */
static int post_recv(struct ctl_qp *c)
{
	unsigned int want = c->keep ? c->keep : 1;
	struct ibv_sge sge;
	int ret;

	while (count_posted(c) < want && count_posted(c) + count_held(c) < CTL_SLOTS) {
		unsigned int slot = (c->posted & 1u) ? 1 : 0;

		ret = check_connected(c);
		if (ret)
			return ret;
		sge = rk_sge(c->mr, (1 + slot) * RK_WIRE_MAX_LEN, RK_WIRE_MAX_LEN);
		ret = rk_post_recv(c->qp, CTL_WRID_RECV + slot, &sge, 1);
		if (ret)
			return ret;
		c->posted |= 1u << slot;
	}
	return 0;
}

static int ctl_qp_send(struct rk_ctl *ctl, const uint8_t *buf, size_t len)
{
	struct ctl_qp *c = ctl_qp_of(ctl);
	int64_t deadline = now_ms() + CTL_SEND_TIMEOUT_MS;
	struct ibv_sge sge;
	struct rk_wr wr;
	int ret;

	if (len > RK_WIRE_MAX_LEN) {
		rk_error("control message to %s: %zu bytes, more than the %d a message may have",
			 ctl->peer, len, RK_WIRE_MAX_LEN);
		return -EMSGSIZE;
	}
	/* Our receive goes first, so that the peer's SEND can land while ours
	 * waits (unless a message is still being read: one receive at a time).
	 * Not for a side that answers at sync points: the peer sent first, and
	 * a receive left posted would take the peer's next data SEND. */
	if (c->staged_off == c->staged_len && !ctl->sync_answers) {
		ret = post_recv(c);
		if (ret)
			return ret;
	}
	/* The send buffer is free only once the previous SEND completed. */
	while (c->send_posted) {
		ret = reap(c, c->send_cq, ms_left(deadline));
		if (ret)
			goto err_timeout;
	}
	ret = check_connected(c);
	if (ret)
		return ret;
	memcpy(c->mr->buf, buf, len);
	sge = rk_sge(c->mr, 0, (uint32_t)len);
	memset(&wr, 0, sizeof(wr));
	wr.op = RK_OP_SEND;
	wr.wr_id = CTL_WRID_SEND;
	wr.sg = &sge;
	wr.nsge = 1;
	wr.flags = IBV_SEND_SIGNALED;
	ret = rk_post(c->qp, &wr);
	if (ret)
		return ret;
	c->send_posted = true;
	while (c->send_posted) {
		ret = reap(c, c->send_cq, ms_left(deadline));
		if (ret)
			goto err_timeout;
	}
	return 0;

err_timeout:
	if (ret == -ETIMEDOUT)
		rk_error("control message to %s: the SEND on QP 0x%x did not complete within %d "
			 "ms: the peer posted no receive (is it still running, and at the same "
			 "step?)",
			 ctl->peer, c->qp->qp->qp_num, CTL_SEND_TIMEOUT_MS);
	return ret;
}

static int ctl_qp_recv(struct rk_ctl *ctl, uint8_t *buf, size_t len, int timeout_ms, size_t *got_p)
{
	struct ctl_qp *c = ctl_qp_of(ctl);
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	size_t avail;
	int ret;

	if (got_p)
		*got_p = 0;
	if (!len)
		return 0; /* nothing to read: not a reason to wait for the next SEND */
	promote(c);
	while (c->staged_off == c->staged_len) {
		ret = post_recv(c);
		if (ret)
			return ret;
		ret = reap(c, c->recv_cq, ms_left(deadline));
		if (ret)
			return ret;
	}
	avail = c->staged_len - c->staged_off;
	if (len > avail) {
		rk_error("control message from %s: the SEND carried %zu bytes, %zu short of what "
			 "its header announces",
			 ctl->peer, c->staged_len, len - avail);
		memcpy(buf, c->staged + c->staged_off, avail);
		c->staged_off = c->staged_len;
		if (got_p)
			*got_p = avail;
		return -EBADMSG;
	}
	memcpy(buf, c->staged + c->staged_off, len);
	c->staged_off += len;
	if (got_p)
		*got_p = len;
	/* Read in full: a message held behind it moves up, and the receive
	 * for the next goes up where none is (a failure shows again at the
	 * next send or receive). Not sooner, when it arrived: the caller may
	 * have receives of its own to post before it, which it does before it
	 * reads the message. */
	promote(c);
	if (c->keep)
		(void)post_recv(c);
	return 0;
}

/* A message staged, or a receive completed within timeout_ms (posting the
 * channel's receive first, as a read would). */
static int ctl_qp_pending(struct rk_ctl *ctl, int timeout_ms)
{
	struct ctl_qp *c = ctl_qp_of(ctl);
	int ret;

	if (c->staged_off < c->staged_len || c->has_next)
		return 1;
	ret = post_recv(c);
	if (ret)
		return ret;
	ret = reap(c, c->recv_cq, timeout_ms);
	if (ret == -ETIMEDOUT)
		return 0;
	if (ret)
		return ret;
	return c->staged_off < c->staged_len; /* (a SEND's completion, on a shared CQ) */
}

static void ctl_qp_close(struct rk_ctl *ctl)
{
	struct ctl_qp *c = ctl_qp_of(ctl);

	/* A receive still posted stays on the QP; the QP's owner destroys it. */
	rk_mr_free(c->mr);
	free(c);
}

static const struct rk_ctl_ops ctl_qp_ops = {
	.send = ctl_qp_send,
	.recv = ctl_qp_recv,
	.close = ctl_qp_close,
	.pending = ctl_qp_pending,
};

static void name_ends(struct ctl_qp *c)
{
	struct sockaddr *peer, *local;
	char ip[INET6_ADDRSTRLEN];
	const void *a;
	unsigned int port;

	snprintf(c->ctl.peer, sizeof(c->ctl.peer), "the peer of QP 0x%x", c->qp->qp->qp_num);
	if (!c->qp->cm_id)
		return;
	peer = rdma_get_peer_addr(c->qp->cm_id);
	local = rdma_get_local_addr(c->qp->cm_id);
	if (peer->sa_family == AF_INET) {
		a = &((struct sockaddr_in *)peer)->sin_addr;
		port = ntohs(((struct sockaddr_in *)peer)->sin_port);
		if (inet_ntop(AF_INET, a, ip, sizeof(ip)))
			snprintf(c->ctl.peer, sizeof(c->ctl.peer), "%s:%u", ip, port);
	} else if (peer->sa_family == AF_INET6) {
		a = &((struct sockaddr_in6 *)peer)->sin6_addr;
		port = ntohs(((struct sockaddr_in6 *)peer)->sin6_port);
		if (inet_ntop(AF_INET6, a, ip, sizeof(ip)))
			snprintf(c->ctl.peer, sizeof(c->ctl.peer), "[%s]:%u", ip, port);
	}
	if (local->sa_family == AF_INET)
		a = &((struct sockaddr_in *)local)->sin_addr;
	else if (local->sa_family == AF_INET6)
		a = &((struct sockaddr_in6 *)local)->sin6_addr;
	else
		return;
	if (!inet_ntop(local->sa_family, a, c->ctl.local_ip, sizeof(c->ctl.local_ip)))
		c->ctl.local_ip[0] = '\0';
}

void rk_ctl_qp_set_gone(struct rk_ctl *ctl, bool (*gone)(void *arg), void *arg)
{
	struct ctl_qp *c = ctl_qp_of(ctl);

	c->gone = gone;
	c->gone_arg = arg;
}

int rk_ctl_qp_keep_receive(struct rk_ctl *ctl, unsigned int n)
{
	struct ctl_qp *c = as_ctl_qp(ctl);

	if (!c)
		return 0;
	if (n > RK_CTL_QP_MAX_KEEP) {
		rk_error("control channel to %s: keeps at most %d receives posted, not %u",
			 ctl->peer, RK_CTL_QP_MAX_KEEP, n);
		return -EINVAL;
	}
	c->keep = n;
	return n ? post_recv(c) : 0;
}

int rk_ctl_qp_claim(struct rk_ctl *ctl, const struct ibv_wc *wc)
{
	struct ctl_qp *c = as_ctl_qp(ctl);

	return c ? take_own(c, wc) : 1;
}

bool rk_ctl_qp_take_foreign(struct rk_ctl *ctl, struct ibv_wc *wc_p)
{
	struct ctl_qp *c = as_ctl_qp(ctl);

	if (!c || !c->nforeign)
		return false;
	*wc_p = c->foreign[0];
	c->nforeign--;
	memmove(c->foreign, c->foreign + 1, (size_t)c->nforeign * sizeof(c->foreign[0]));
	return true;
}

int rk_ctl_qp_next_wc(struct rk_ctl *ctl, struct rk_cq *cq, int timeout_ms, struct ibv_wc *wc_p)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int ret, n;

	if (rk_ctl_qp_take_foreign(ctl, wc_p))
		return 0;
	do {
		ret = rk_cq_wait(cq, wc_p, 1, ms_left(deadline), &n);
		if (ret)
			return ret;
	} while (rk_ctl_qp_claim(ctl, wc_p) != 1);
	return 0;
}

int rk_ctl_qp_create(struct rk_qp *qp, struct ibv_pd *pd, struct rk_cq *send_cq,
		     struct rk_cq *recv_cq, struct rk_ctl **ctl_p)
{
	struct ctl_qp *c;
	int ret;

	if (qp->transport != RK_RC) {
		rk_error("control channel on QP 0x%x: needs a connected RC QP, not %s",
			 qp->qp->qp_num, rk_transport_str(qp->transport));
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	ret = rk_mr_alloc(pd, (1 + CTL_SLOTS) * RK_WIRE_MAX_LEN, IBV_ACCESS_LOCAL_WRITE, &c->mr);
	if (ret)
		goto err_free_ctl;
	c->ctl.ops = &ctl_qp_ops;
	c->ctl.fd = -1;
	c->ctl.priv = c;
	c->qp = qp;
	c->send_cq = send_cq;
	c->recv_cq = recv_cq;
	name_ends(c);
	*ctl_p = &c->ctl;
	return 0;

err_free_ctl:
	free(c);
	return ret;
}
