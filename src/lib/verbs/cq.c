/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Completion queues: busy polling, or sleeping on a completion channel. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdmakit/cq.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/status.h>

#include "base/clock.h"

int rk_cq_create(struct rk_device *dev, int depth, bool events, struct rk_cq **cq_p)
{
	struct rk_cq *cq;
	int ret;

	if (depth < 1) {
		rk_error("CQ depth must be at least 1 (got %d)", depth);
		return -EINVAL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	if (events) {
		cq->channel = ibv_create_comp_channel(dev->ctx);
		if (!cq->channel) {
			ret = errno ? -errno : -ENOMEM;
			rk_error("create completion channel on %s: %m", dev->info.name);
			goto err_free_cq;
		}
	}
	cq->cq = ibv_create_cq(dev->ctx, depth, NULL, cq->channel, 0);
	if (!cq->cq) {
		ret = errno ? -errno : -ENOMEM;
		rk_error("create CQ of %d entries on %s: %m (device maximum %d)", depth,
			 dev->info.name, dev->info.max_cqe);
		goto err_destroy_channel;
	}
	cq->depth = cq->cq->cqe;
	*cq_p = cq;
	return 0;

err_destroy_channel:
	if (cq->channel)
		ibv_destroy_comp_channel(cq->channel);
err_free_cq:
	free(cq);
	return ret;
}

void rk_cq_destroy(struct rk_cq *cq)
{
	int ret;

	if (!cq)
		return;
	if (cq->unacked_events)
		ibv_ack_cq_events(cq->cq, cq->unacked_events);
	ret = ibv_destroy_cq(cq->cq);
	if (ret)
		rk_warn("destroy CQ: %s (a QP still uses it?)", rk_strerror(rk_verbs_err(ret)));
	if (cq->channel && ibv_destroy_comp_channel(cq->channel))
		rk_warn("destroy completion channel: %m");
	free(cq);
}

static int cq_poll_once(struct rk_cq *cq, struct ibv_wc *wc, int max, int *n_p)
{
	int n = ibv_poll_cq(cq->cq, max, wc);

	if (n < 0) {
		rk_error("poll CQ: %s", rk_strerror(n == -1 ? -EIO : n));
		return n == -1 ? -EIO : n;
	}
	*n_p = n;
	return 0;
}

/* Sleep on the channel until the CQ has an event or the deadline passes.
 * Arm first, then re-check the CQ: a completion that arrived before arming
 * raises no event. */
static int cq_wait_event(struct rk_cq *cq, struct ibv_wc *wc, int max, int64_t deadline,
			 int *n_p)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int ret, n = 0;

	for (;;) {
		if (!cq->armed) {
			ret = ibv_req_notify_cq(cq->cq, 0);
			if (ret) {
				ret = rk_verbs_err(ret);
				rk_error("arm CQ: %s", rk_strerror(ret));
				return ret;
			}
			cq->armed = true;
		}
		ret = cq_poll_once(cq, wc, max, &n);
		if (ret || n) {
			*n_p = n;
			return ret;
		}
		for (;;) {
			struct pollfd pfd = {.fd = cq->channel->fd, .events = POLLIN};
			int wait = -1;

			if (deadline >= 0) {
				int64_t left = deadline - now_ms();

				if (left <= 0)
					return -ETIMEDOUT;
				wait = left > 1000000 ? 1000000 : (int)left;
			}
			ret = poll(&pfd, 1, wait);
			if (ret > 0)
				break;
			if (ret < 0 && errno != EINTR) {
				ret = -errno;
				rk_error("wait for completion event: %m");
				return ret;
			}
		}
		if (ibv_get_cq_event(cq->channel, &ev_cq, &ev_ctx)) {
			ret = errno ? -errno : -EIO;
			rk_error("get completion event: %m");
			return ret;
		}
		cq->armed = false;
		/* Acknowledge in batches: each ack takes a lock. */
		if (++cq->unacked_events >= 16) {
			ibv_ack_cq_events(cq->cq, cq->unacked_events);
			cq->unacked_events = 0;
		}
	}
}

int rk_cq_poll(struct rk_cq *cq, struct ibv_wc *wc, int max, int timeout_ms, int *n_p)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int n = 0, ret;

	if (max < 1)
		return -EINVAL;
	if (cq->channel && timeout_ms != 0) {
		ret = cq_wait_event(cq, wc, max, deadline, &n);
		if (ret)
			return ret;
		*n_p = n;
		return 0;
	}
	for (unsigned int spins = 0;; spins++) {
		ret = cq_poll_once(cq, wc, max, &n);
		if (ret)
			return ret;
		if (n) {
			*n_p = n;
			return 0;
		}
		/* Check the clock only now and then: it costs more than a poll. */
		if (deadline >= 0 && (spins & 1023) == 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
	}
}

int rk_cq_wait(struct rk_cq *cq, struct ibv_wc *wc, int n, int timeout_ms, int *got_p)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int got = 0, ret = 0;

	if (n < 1 || n > 64)
		return -EINVAL;
	while (got < n) {
		int left = -1, k;

		if (deadline >= 0) {
			int64_t l = deadline - now_ms();

			left = l < 0 ? 0 : (int)l;
		}
		ret = rk_cq_poll(cq, wc + got, n - got, left, &k);
		if (ret)
			break;
		got += k;
	}
	if (got_p)
		*got_p = got;
	return ret;
}

/* Take the kept early receive if it is one of want. */
static int take_early(struct rk_cq_ids *w, const uint64_t *want, int n, bool *done,
		      struct ibv_wc *recv_wc_p)
{
	for (int k = 0; w->has_early && k < n; k++) {
		if (want[k] != w->early.wr_id)
			continue;
		done[k] = true;
		if (recv_wc_p)
			*recv_wc_p = w->early;
		w->has_early = false;
		return 1;
	}
	return 0;
}

/* Account for one completion: 1 when it was wanted, 0 when kept early or
 * claimed (w->claim). */
/* A failed completion that a peer's leaving causes (its QP torn down: no
 * answer, or a NAK from that QP in error on its way out), where w->gone()
 * says within half a second that the peer left: its leaving is what
 * happened, whichever of the two news came first. */
static bool left_meanwhile(struct rk_cq_ids *w, const struct ibv_wc *wc)
{
	switch (wc->status) {
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
		break;
	default:
		return false;
	}
	for (int i = 0; i < 50; i++) {
		if (w->gone(w->gone_arg)) {
			rk_debug("%s (wr_id %" PRIu64 ") on QP 0x%x: the peer left",
				 rk_wc_status_name(wc->status), (uint64_t)wc->wr_id, wc->qp_num);
			return true;
		}
		usleep(10000);
	}
	return false;
}

static int wait_ids_one(struct rk_cq_ids *w, const struct ibv_wc *wc, const uint64_t *want,
			int n, bool *done, const char *what, struct ibv_wc *recv_wc_p)
{
	int k, ret;

	for (k = 0; k < n; k++)
		if (!done[k] && want[k] == wc->wr_id)
			break;
	if (k == n && w->claim && w->claim(w->claim_arg, wc) != 1)
		return 0;
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return -ECONNRESET;
	if (wc->status != IBV_WC_SUCCESS && w->gone && left_meanwhile(w, wc))
		return -ECONNRESET;
	ret = rk_wc_check(wc, what);
	if (ret)
		return ret;
	if (k == n && (wc->opcode & IBV_WC_RECV) && !w->has_early) {
		w->early = *wc;
		w->has_early = true;
		return 0;
	}
	if (k == n) {
		rk_error("%s: a completion for wr_id %" PRIu64 " was not due", what,
			 (uint64_t)wc->wr_id);
		return -EPROTO;
	}
	done[k] = true;
	if ((wc->opcode & IBV_WC_RECV) && recv_wc_p)
		*recv_wc_p = *wc;
	return 1;
}

int rk_cq_wait_ids(struct rk_cq_ids *w, const uint64_t *want, int n, int timeout_ms,
		   const char *what, struct ibv_wc *recv_wc_p)
{
	int64_t deadline = now_ms() + timeout_ms;
	bool done[RK_CQ_WAIT_IDS_MAX] = {false};
	bool gone_seen = false;
	int left;

	if (!w || !want || n < 1 || n > RK_CQ_WAIT_IDS_MAX)
		return -EINVAL;
	left = n - take_early(w, want, n, done, recv_wc_p);
	while (left) {
		struct ibv_wc wc[4];
		int got, ret, slice = ms_left(deadline);

		if (w->gone && slice > 100)
			slice = 100;
		ret = rk_cq_poll(w->cq, wc, 4, slice, &got);
		if (ret == -ETIMEDOUT) {
			/* The peer left: one more slice for what it sent before it
			 * did (rxe may post those completions after the CM event). */
			if (gone_seen)
				return -ECONNRESET;
			if (w->gone && w->gone(w->gone_arg)) {
				gone_seen = true;
				continue;
			}
			if (now_ms() < deadline)
				continue;
			rk_error("%s: no completion within %d ms (peer gone or stuck?)", what,
				 timeout_ms);
			return ret;
		}
		if (ret)
			return ret;
		for (int i = 0; i < got; i++) {
			ret = wait_ids_one(w, &wc[i], want, n, done, what, recv_wc_p);
			if (ret < 0)
				return ret;
			left -= ret;
		}
	}
	return 0;
}
