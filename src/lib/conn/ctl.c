/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The control channel: wire messages over any byte transport, and sync
 * points that keep two sides' steps in order. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/ctl.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>

int rk_ctl_send(struct rk_ctl *ctl, const struct rk_msg *msg)
{
	uint8_t buf[RK_WIRE_MAX_LEN];
	int n, ret;

	n = rk_wire_encode(msg, buf, sizeof(buf));
	if (n < 0) {
		rk_error("encode %s message for %s: %s", rk_msg_type_str(msg->type), ctl->peer,
			 rk_strerror(n));
		return n;
	}
	ret = ctl->ops->send(ctl, buf, (size_t)n);
	if (ret)
		rk_error("send %s message to %s: %s", rk_msg_type_str(msg->type), ctl->peer,
			 rk_strerror(ret));
	return ret;
}

static int recv_part(struct rk_ctl *ctl, uint8_t *buf, size_t len, size_t have, size_t total,
		     int timeout_ms)
{
	size_t got = 0;
	int ret;

	ret = ctl->ops->recv(ctl, buf, len, timeout_ms, &got);
	if (ret == -ECONNRESET) {
		if (have + got == 0)
			rk_error("%s closed the control connection", ctl->peer);
		else
			rk_error("%s closed the control connection in the middle of a message "
				 "(%zu of %zu bytes): truncated exchange message",
				 ctl->peer, have + got, total);
	} else if (ret == -ETIMEDOUT) {
		rk_error("no message from %s within %d ms%s", ctl->peer, timeout_ms,
			 have ? " (a message stopped half way)" : "");
	} else if (ret) {
		rk_error("receive from %s: %s", ctl->peer, rk_strerror(ret));
	}
	return ret;
}

/* A message that does not parse: logged, ret handed back. */
static int bad_message(const struct rk_ctl *ctl, int ret, const char *why)
{
	rk_error("bad exchange message from %s: %s", ctl->peer, why);
	return ret;
}

int rk_ctl_recv(struct rk_ctl *ctl, int timeout_ms, struct rk_msg *msg_p)
{
	uint8_t buf[RK_WIRE_MAX_LEN];
	struct rk_msg msg;
	char why[200];
	size_t len;
	int ret;

	ret = recv_part(ctl, buf, RK_WIRE_HDR_LEN, 0, RK_WIRE_HDR_LEN, timeout_ms);
	if (ret)
		return ret;
	/* Judge the header before reading on: a garbled length must not make us
	 * read (or wait for) bytes that are not a message. */
	ret = rk_wire_check_header(buf, RK_WIRE_HDR_LEN, &len, why, sizeof(why));
	if (ret)
		return bad_message(ctl, ret, why);
	/* A header-only message (BENCH_FIN) has no rest to read: asking for 0
	 * bytes would make the QP channel wait for the next SEND. */
	if (len > RK_WIRE_HDR_LEN) {
		ret = recv_part(ctl, buf + RK_WIRE_HDR_LEN, len - RK_WIRE_HDR_LEN, RK_WIRE_HDR_LEN,
				len, timeout_ms);
		if (ret)
			return ret;
	}
	ret = rk_wire_decode(buf, len, &msg, why, sizeof(why));
	if (ret)
		return bad_message(ctl, ret, why);
	if (msg.type == RK_MSG_ERROR && msg.u.error.code == -EBUSY) {
		/* busy with another client: the caller may try again */
		rk_info("%s: %s", ctl->peer, msg.u.error.text);
		return -EBUSY;
	}
	if (msg.type == RK_MSG_ERROR) {
		rk_error("%s gave up: %s (%s)", ctl->peer, msg.u.error.text,
			 rk_strerror(msg.u.error.code));
		return -ECONNABORTED;
	}
	*msg_p = msg;
	return 0;
}

int rk_ctl_pending(struct rk_ctl *ctl, int timeout_ms)
{
	int ret;

	if (!ctl->ops->pending) {
		rk_error("control channel to %s: cannot tell whether a message waits",
			 ctl->peer);
		return -EOPNOTSUPP;
	}
	ret = ctl->ops->pending(ctl, timeout_ms);
	if (ret == -ECONNRESET)
		rk_error("%s closed the control connection", ctl->peer);
	else if (ret < 0)
		rk_error("look for a message from %s: %s", ctl->peer, rk_strerror(ret));
	return ret;
}

int rk_ctl_expect(struct rk_ctl *ctl, enum rk_msg_type type, int timeout_ms,
		  struct rk_msg *msg_p)
{
	struct rk_msg msg;
	int ret;

	ret = rk_ctl_recv(ctl, timeout_ms, &msg);
	if (ret)
		return ret;
	if (msg.type != type) {
		rk_error("%s sent a %s message where a %s was due", ctl->peer,
			 rk_msg_type_str(msg.type), rk_msg_type_str(type));
		return -EPROTO;
	}
	*msg_p = msg;
	return 0;
}

uint32_t rk_ctl_window(const struct rk_ctl *ctl)
{
	return ctl->fd >= 0 ? RK_CTL_WINDOW : 1;
}

int rk_ctl_sync(struct rk_ctl *ctl, uint32_t step, int32_t status, int timeout_ms)
{
	struct rk_msg mine = {.type = RK_MSG_SYNC}, msg;
	int ret;

	mine.u.sync.step = step;
	mine.u.sync.status = status;
	if (ctl->sync_answers) {
		ret = rk_ctl_expect(ctl, RK_MSG_SYNC, timeout_ms, &msg);
		if (!ret)
			ret = rk_ctl_send(ctl, &mine);
	} else {
		ret = rk_ctl_send(ctl, &mine);
		if (!ret)
			ret = rk_ctl_expect(ctl, RK_MSG_SYNC, timeout_ms, &msg);
	}
	if (ret)
		return ret;
	if (msg.u.sync.step != step) {
		rk_error("%s is at step %u, this side at step %u: the two sides disagree on the "
			 "flow (different --op?)",
			 ctl->peer, msg.u.sync.step, step);
		return -EPROTO;
	}
	if (msg.u.sync.status < 0) {
		rk_error("%s failed step %u: %s", ctl->peer, step, rk_strerror(msg.u.sync.status));
		return msg.u.sync.status;
	}
	return 0;
}

void rk_ctl_send_error(struct rk_ctl *ctl, int code, const char *fmt, ...)
{
	uint8_t buf[RK_WIRE_MAX_LEN];
	struct rk_msg msg;
	va_list ap;
	int n;

	if (!ctl)
		return;
	va_start(ap, fmt);
	rk_msg_verror(&msg, code, fmt, ap);
	va_end(ap);
	/* Quietly: the peer may well be gone, which is why we are here. */
	n = rk_wire_encode(&msg, buf, sizeof(buf));
	if (n > 0)
		ctl->ops->send(ctl, buf, (size_t)n);
}

void rk_ctl_close(struct rk_ctl *ctl)
{
	if (!ctl)
		return;
	ctl->ops->close(ctl);
}
