/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A shared receive queue with its buffers, refilled in lists, its limit
 * armed and its async events counted (srq.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/mem.h>
#include <rdmakit/srq.h>

#include "verbs/device_int.h"
#include "verbs/srq_int.h"

struct rk_srq {
	struct ibv_srq *srq;
	struct rk_device *dev;
	struct rk_mr *mr;
	pthread_mutex_t lock;
	struct rk_srq_stats st;  /* limit_events, posted_at_limit, errors: under reg_lock */
	uint32_t *free_slots;    /* a stack of slots not posted */
	uint32_t nfree;
	bool *in_use;            /* posted or taken, per slot */
	bool filled;             /* the first fill was made */
	bool need_arm;           /* the limit fired: arm again once above it */
	struct ibv_recv_wr wr[RK_SRQ_MAX_BATCH];
	struct ibv_sge sge[RK_SRQ_MAX_BATCH];
	uint64_t base;           /* wr_id of slot 0 */
	struct rk_srq *next;     /* in the registry */
};

/* Live SRQs, for the async event path (which sees only the ibv_srq). */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rk_srq *reg_head;

static bool srq_async_event(struct ibv_srq *srq, enum ibv_event_type type, uint32_t *posted_p,
			    uint32_t *limit_p);

static void reg_add(struct rk_srq *s)
{
	device_srq_event_hook(srq_async_event);
	pthread_mutex_lock(&reg_lock);
	s->next = reg_head;
	reg_head = s;
	pthread_mutex_unlock(&reg_lock);
}

static void reg_del(struct rk_srq *s)
{
	pthread_mutex_lock(&reg_lock);
	for (struct rk_srq **p = &reg_head; *p; p = &(*p)->next) {
		if (*p == s) {
			*p = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
}

static uint32_t outstanding(const struct rk_srq *s)
{
	return (uint32_t)(s->st.posted - s->st.completed);
}

/* device.c's async event reader, through the hook: an event of SRQ srq
 * (SRQ_LIMIT_REACHED or SRQ_ERR) for the rk_srq that owns it, counted there.
 * Returns true and sets *posted_p and *limit_p when srq is an rk_srq's. */
static bool srq_async_event(struct ibv_srq *srq, enum ibv_event_type type, uint32_t *posted_p,
			    uint32_t *limit_p)
{
	bool found = false;

	pthread_mutex_lock(&reg_lock);
	for (struct rk_srq *s = reg_head; s; s = s->next) {
		if (s->srq != srq)
			continue;
		found = true;
		*posted_p = __atomic_load_n(&s->st.posted, __ATOMIC_RELAXED) -
			    __atomic_load_n(&s->st.completed, __ATOMIC_RELAXED);
		*limit_p = s->st.limit;
		if (type == IBV_EVENT_SRQ_LIMIT_REACHED) {
			if (!s->st.limit_events++) {
				s->st.posted_at_limit = __atomic_load_n(&s->st.posted,
									__ATOMIC_RELAXED);
				s->st.unpolled_at_limit = *posted_p;
			}
			__atomic_store_n(&s->need_arm, true, __ATOMIC_RELAXED);
		} else if (type == IBV_EVENT_SRQ_ERR) {
			s->st.errors++;
		}
		break;
	}
	pthread_mutex_unlock(&reg_lock);
	return found;
}

int rk_srq_xrc_check(const struct rk_device *dev, char *why, size_t why_len)
{
	if (dev->info.device_cap_flags & IBV_DEVICE_XRC)
		return 0;
	snprintf(why, why_len, "%s has no XRC (IBV_DEVICE_XRC not in its capabilities)",
		 dev->info.name);
	return -EOPNOTSUPP;
}

int rk_srq_xrc_refuse(const char *what, const char *device)
{
	struct rk_device *dev;
	char why[160];
	int ret;

	ret = rk_device_open(device, &dev);
	if (ret)
		return ret;
	if (rk_srq_xrc_check(dev, why, sizeof(why)))
		rk_error("%s --xrc: %s", what, why);
	else
		rk_error("%s --xrc: %s has XRC, but rdmakit does not implement XRC QPs", what,
			 dev->info.name);
	rk_device_close(dev);
	return -EOPNOTSUPP;
}

static int arm_limit(struct rk_srq *s)
{
	struct ibv_srq_attr a = {.srq_limit = s->st.limit};
	int ret;

	ret = ibv_modify_srq(s->srq, &a, IBV_SRQ_LIMIT);
	if (ret) {
		ret = rk_verbs_err(ret);
		rk_error("arm the SRQ limit %u on %s: %s", s->st.limit, s->dev->info.name,
			 rk_strerror(ret));
		return ret;
	}
	s->st.armed++;
	return 0;
}

/* The options checked against the device; the chosen values into s->st. */
static int srq_params(struct rk_srq *s, struct rk_device *dev, const struct rk_srq_opts *o)
{
	struct ibv_device_attr a;
	int ret;

	ret = ibv_query_device(dev->ctx, &a);
	if (ret) {
		ret = rk_verbs_err(ret);
		rk_error("query device %s: %s", dev->info.name, rk_strerror(ret));
		return ret;
	}
	if (a.max_srq <= 0 || a.max_srq_wr <= 0) {
		rk_error("%s has no shared receive queues (max_srq %d, max_srq_wr %d)",
			 dev->info.name, a.max_srq, a.max_srq_wr);
		return -EOPNOTSUPP;
	}
	s->st.depth = o->depth ? o->depth : RK_SRQ_DEFAULT_DEPTH;
	if (s->st.depth > (uint32_t)a.max_srq_wr) {
		if (o->depth) {
			rk_error("--srq-depth %u: %s allows max_srq_wr %d", o->depth,
				 dev->info.name, a.max_srq_wr);
			return -EINVAL;
		}
		s->st.depth = (uint32_t)a.max_srq_wr;
	}
	s->st.batch = o->batch ? o->batch : RK_SRQ_DEFAULT_BATCH;
	if (s->st.batch > s->st.depth)
		s->st.batch = s->st.depth;
	if (s->st.batch > RK_SRQ_MAX_BATCH) {
		rk_error("SRQ refill lists of at most %d (asked %u)", RK_SRQ_MAX_BATCH, o->batch);
		return -EINVAL;
	}
	s->st.limit = o->limit == RK_SRQ_NO_LIMIT ? 0 : o->limit ? o->limit : s->st.depth / 4;
	if (o->limit != RK_SRQ_NO_LIMIT && s->st.limit >= s->st.depth) {
		rk_error("--srq-limit %u: the limit must be below the SRQ's depth %u", s->st.limit,
			 s->st.depth);
		return -EINVAL;
	}
	if (!o->slot_size) {
		rk_error("SRQ slots of 0 bytes");
		return -EINVAL;
	}
	s->st.slot_size = o->slot_size;
	s->base = o->wr_id_base;
	s->st.no_refill = o->no_refill;
	s->st.low = UINT32_MAX;
	return 0;
}

static int srq_buffers(struct rk_srq *s, struct ibv_pd *pd)
{
	uint32_t n = s->st.depth;
	int ret;

	s->free_slots = calloc(n, sizeof(*s->free_slots));
	s->in_use = calloc(n, sizeof(*s->in_use));
	if (!s->free_slots || !s->in_use)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++)
		s->free_slots[k] = n - 1 - k; /* slot 0 on top */
	s->nfree = n;
	ret = rk_mr_alloc(pd, (size_t)n * s->st.slot_size, IBV_ACCESS_LOCAL_WRITE, &s->mr);
	if (ret)
		return ret;
	for (uint32_t k = 0; k < RK_SRQ_MAX_BATCH; k++) {
		s->wr[k].sg_list = &s->sge[k];
		s->wr[k].num_sge = 1;
		s->sge[k].length = s->st.slot_size;
		s->sge[k].lkey = s->mr->mr->lkey;
	}
	return 0;
}

int rk_srq_create(struct ibv_pd *pd, struct rk_device *dev, const struct rk_srq_opts *opts,
		  struct rk_srq **srq_p)
{
	struct ibv_srq_init_attr ia;
	struct rk_srq *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dev = dev;
	pthread_mutex_init(&s->lock, NULL);
	ret = srq_params(s, dev, opts);
	if (ret)
		goto err_free;
	ret = srq_buffers(s, pd);
	if (ret)
		goto err_free;
	memset(&ia, 0, sizeof(ia));
	ia.srq_context = s;
	ia.attr.max_wr = s->st.depth;
	ia.attr.max_sge = 1;
	s->srq = ibv_create_srq(pd, &ia);
	if (!s->srq) {
		ret = errno ? -errno : -EIO;
		rk_error("create an SRQ of %u receives on %s: %s", s->st.depth, dev->info.name,
			 rk_strerror(ret));
		goto err_free;
	}
	s->st.max_wr = ia.attr.max_wr;
	reg_add(s);
	if (s->st.limit) {
		ret = arm_limit(s);
		if (ret)
			goto err_destroy;
	}
	rk_debug("SRQ on %s: depth %u (granted %u), limit %u, refill lists of %u%s",
		 dev->info.name, s->st.depth, s->st.max_wr, s->st.limit, s->st.batch,
		 s->st.no_refill ? ", never refilled" : "");
	*srq_p = s;
	return 0;

err_destroy:
	reg_del(s);
	ibv_destroy_srq(s->srq);
err_free:
	rk_mr_free(s->mr);
	free(s->free_slots);
	free(s->in_use);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return ret;
}

void rk_srq_destroy(struct rk_srq *s)
{
	int ret;

	if (!s)
		return;
	reg_del(s);
	ret = ibv_destroy_srq(s->srq);
	if (ret)
		rk_warn("destroy the SRQ on %s: %s (a QP still uses it?)", s->dev->info.name,
			rk_strerror(rk_verbs_err(ret)));
	rk_mr_free(s->mr);
	free(s->free_slots);
	free(s->in_use);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

struct ibv_srq *rk_srq_verbs(const struct rk_srq *s)
{
	return s->srq;
}

/* Post n free slots as one list. Under the lock. */
static int post_slots(struct rk_srq *s, uint32_t n)
{
	struct ibv_recv_wr *bad;
	int ret;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t slot = s->free_slots[s->nfree - 1 - k];

		s->wr[k].wr_id = s->base + slot;
		s->sge[k].addr = (uintptr_t)s->mr->buf + (size_t)slot * s->st.slot_size;
		s->wr[k].next = k + 1 < n ? &s->wr[k + 1] : NULL;
	}
	ret = ibv_post_srq_recv(s->srq, &s->wr[0], &bad);
	if (ret) {
		ret = rk_verbs_err(ret);
		rk_error("post %u receives on the SRQ of %s (%u posted): %s", n, s->dev->info.name,
			 outstanding(s), rk_strerror(ret));
		return ret;
	}
	for (uint32_t k = 0; k < n; k++)
		s->in_use[s->free_slots[s->nfree - 1 - k]] = true;
	s->nfree -= n;
	__atomic_add_fetch(&s->st.posted, n, __ATOMIC_RELAXED);
	return 0;
}

/* Post free slots in lists of batch while at least min are free. Under the lock. */
static int post_free(struct rk_srq *s, uint32_t min)
{
	int ret;

	while (s->nfree && s->nfree >= min) {
		uint32_t n = s->nfree < s->st.batch ? s->nfree : s->st.batch;

		ret = post_slots(s, n);
		if (ret)
			return ret;
		if (s->filled)
			s->st.refills++;
	}
	return 0;
}

int rk_srq_fill(struct rk_srq *s)
{
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	if (!s->filled || !s->st.no_refill)
		ret = post_free(s, 1);
	s->filled = true;
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int rk_srq_take(struct rk_srq *s, const struct ibv_wc *wc, const void **buf_p)
{
	uint64_t slot = wc->wr_id - s->base;
	uint32_t posted;

	pthread_mutex_lock(&s->lock);
	if (wc->wr_id < s->base || slot >= s->st.depth || !s->in_use[slot]) {
		pthread_mutex_unlock(&s->lock);
		rk_error("a receive completion on QP 0x%x with wr_id %" PRIu64 ", not one of the "
			 "SRQ's %u slots posted", wc->qp_num, (uint64_t)wc->wr_id, s->st.depth);
		return -EPROTO;
	}
	__atomic_add_fetch(&s->st.completed, 1, __ATOMIC_RELAXED);
	posted = outstanding(s);
	if (posted < s->st.low)
		s->st.low = posted;
	pthread_mutex_unlock(&s->lock);
	*buf_p = (const uint8_t *)s->mr->buf + (size_t)slot * s->st.slot_size;
	return 0;
}

void rk_srq_release(struct rk_srq *s, const struct ibv_wc *wc)
{
	uint64_t slot = wc->wr_id - s->base;

	pthread_mutex_lock(&s->lock);
	if (wc->wr_id >= s->base && slot < s->st.depth && s->in_use[slot]) {
		s->in_use[slot] = false;
		s->free_slots[s->nfree++] = (uint32_t)slot;
	}
	pthread_mutex_unlock(&s->lock);
}

int rk_srq_refill(struct rk_srq *s)
{
	int ret = 0;

	if (s->st.no_refill)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (s->nfree >= s->st.batch)
		ret = post_free(s, s->st.batch);
	if (!ret && s->st.limit && __atomic_load_n(&s->need_arm, __ATOMIC_RELAXED) &&
	    outstanding(s) > s->st.limit) {
		__atomic_store_n(&s->need_arm, false, __ATOMIC_RELAXED);
		ret = arm_limit(s);
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

uint32_t rk_srq_posted(struct rk_srq *s)
{
	uint32_t n;

	pthread_mutex_lock(&s->lock);
	n = outstanding(s);
	pthread_mutex_unlock(&s->lock);
	return n;
}

void rk_srq_get_stats(struct rk_srq *s, struct rk_srq_stats *st)
{
	pthread_mutex_lock(&reg_lock);
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	if (st->low == UINT32_MAX)
		st->low = outstanding(s);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&reg_lock);
}

void rk_srq_stats_str(const struct rk_srq_stats *st, char *buf, size_t len)
{
	char lim[96];

	if (!st->limit)
		snprintf(lim, sizeof(lim), "no limit");
	else if (st->limit_events)
		snprintf(lim, sizeof(lim), "limit %u (armed %ux, reached %ux)", st->limit,
			 st->armed, st->limit_events);
	else
		snprintf(lim, sizeof(lim), "limit %u (armed %ux, never reached)", st->limit,
			 st->armed);
	snprintf(buf, len, "depth %u, %s, refill lists of %u%s, posted %" PRIu64 ", taken %"
		 PRIu64 ", fewest posted %u%s", st->depth, lim, st->batch,
		 st->no_refill ? " (refill held off: --srq-no-refill)" : "", st->posted,
		 st->completed, st->low, st->errors ? ", IBV_EVENT_SRQ_ERR seen" : "");
}
