/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: a shared receive queue (SRQ) that several QPs drain.
 *
 * One SRQ owns its receive buffers (depth slots of slot_size bytes in one
 * registered region) and keeps them posted: rk_srq_fill() posts every free
 * slot at the start, and rk_srq_refill() posts the slots that completions
 * gave back, in lists of `batch`, once at least `batch` are free (so the SRQ
 * never runs below depth - batch while the consumer keeps up). A QP takes
 * its receives from the SRQ when it is created with rk_qp_init_attr.srq.
 *
 * The SRQ limit is armed (ibv_modify_srq with IBV_SRQ_LIMIT): when fewer
 * than `limit` receives are posted the device raises
 * IBV_EVENT_SRQ_LIMIT_REACHED once and disarms it. The device's async event
 * path (rk_async_event_wait(), the logger of rk_async_log_start()) hands the
 * event to this SRQ, which counts it and notes how many receives it had
 * posted then (by its own count: posted minus those whose completions were
 * taken); a refill that brings it back above the limit arms it again.
 *
 * With no_refill the SRQ is posted once and never again: the demonstration
 * of the limit event and of an empty SRQ (a sender with few RNR retries
 * fails with IBV_WC_RNR_RETRY_EXC_ERR once the SRQ is dry).
 *
 * Thread safety: the SRQ's calls may be made from several threads (QPs of
 * different workers drain one SRQ); they take its lock.
 */
#ifndef RDMAKIT_SRQ_H
#define RDMAKIT_SRQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_SRQ_DEFAULT_DEPTH 512
#define RK_SRQ_DEFAULT_BATCH 16
#define RK_SRQ_MAX_BATCH 64
/* rk_srq_opts.limit: no limit armed. */
#define RK_SRQ_NO_LIMIT UINT32_MAX

struct rk_srq_opts {
	uint32_t depth;      /* receives kept posted; 0: RK_SRQ_DEFAULT_DEPTH, capped at
				the device's max_srq_wr */
	uint32_t limit;      /* the limit armed; 0: depth / 4; RK_SRQ_NO_LIMIT: none */
	uint32_t batch;      /* refill in lists of this many; 0: RK_SRQ_DEFAULT_BATCH */
	uint32_t slot_size;  /* bytes per receive buffer, at least 1 */
	bool no_refill;      /* post depth receives once, never again */
	uint64_t wr_id_base; /* receives carry wr_id wr_id_base + slot (0..depth-1) */
};

/* What the SRQ did, for a report. */
struct rk_srq_stats {
	uint32_t depth, limit, batch, slot_size; /* as created (limit 0: none) */
	uint32_t max_wr;         /* what the device granted */
	bool no_refill;
	uint64_t posted;         /* receives posted in all */
	uint64_t completed;      /* receives whose completions were taken */
	uint64_t refills;        /* refill lists posted after the first fill */
	uint32_t low;            /* fewest receives posted after a completion was taken */
	uint32_t limit_events;   /* IBV_EVENT_SRQ_LIMIT_REACHED seen */
	uint64_t posted_at_limit;   /* receives posted in all when the first came */
	uint32_t unpolled_at_limit; /* ... of which this side had not polled the
				       completions (the device had fewer than limit
				       left: it does not say how many) */
	uint32_t armed;          /* times the limit was armed */
	uint32_t errors;         /* IBV_EVENT_SRQ_ERR seen */
};

struct rk_srq;

/* Create an SRQ on pd (of dev) with its buffers, arm its limit, and post
 * nothing yet (rk_srq_fill()). -EOPNOTSUPP (logged, naming the device) where
 * the device has no SRQ (max_srq 0), -EINVAL for a depth above its max_srq_wr
 * when asked for explicitly, a batch above RK_SRQ_MAX_BATCH or depth, or a
 * limit not below depth. *srq_p is set only on success. */
int rk_srq_create(struct ibv_pd *pd, struct rk_device *dev, const struct rk_srq_opts *opts,
		  struct rk_srq **srq_p);

/* Destroy it (the QPs that use it must be gone). NULL is ignored. */
void rk_srq_destroy(struct rk_srq *srq);

/* The verbs object, for rk_qp_init_attr.srq. */
struct ibv_srq *rk_srq_verbs(const struct rk_srq *srq);

/* Post every free slot (the first fill; later, what no_refill holds back
 * stays held back after the first). 0 or a negative errno, logged. */
int rk_srq_fill(struct rk_srq *srq);

/* A successful receive completion of this SRQ: its slot's bytes (*buf_p,
 * wc->byte_len of them are valid) stay the caller's until rk_srq_release().
 * -EPROTO (logged) for a wr_id that is not one of its slots in use. */
int rk_srq_take(struct rk_srq *srq, const struct ibv_wc *wc, const void **buf_p);

/* Give back the slot of a completion taken (the buffer may be reposted). */
void rk_srq_release(struct rk_srq *srq, const struct ibv_wc *wc);

/* Post the free slots in lists of batch when at least batch are free
 * (nothing with no_refill), and arm the limit again after an event once
 * above it. 0 or a negative errno, logged. */
int rk_srq_refill(struct rk_srq *srq);

/* Receives posted and not yet taken. */
uint32_t rk_srq_posted(struct rk_srq *srq);

/* The stats so far. */
void rk_srq_get_stats(struct rk_srq *srq, struct rk_srq_stats *stats);

/* 0 when dev has XRC (IBV_DEVICE_XRC in device_cap_flags), else
 * -EOPNOTSUPP with "rxe0 has no XRC (IBV_DEVICE_XRC not in its
 * capabilities)" in why. Pure logic on dev->info. */
int rk_srq_xrc_check(const struct rk_device *dev, char *why, size_t why_len);

/* The stats as one line: "depth 512, limit 128 (armed 1x, reached 1x with 127
 * posted), posted 1040, taken 1000, fewest posted 480". */
void rk_srq_stats_str(const struct rk_srq_stats *st, char *buf, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
