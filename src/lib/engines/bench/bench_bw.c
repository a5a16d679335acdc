/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The benchmark's bandwidth loop: one worker per thread, each posting while
 * its send queues have room and polling its CQs in batches. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdmakit/error.h>
#include <rdmakit/log.h>

#include "engines/bench/bench_int.h"

static bool sending_done(const struct bworker *w, bool sentinel)
{
	for (uint32_t i = w->first; i < w->first + w->count; i++) {
		const struct bqp *q = &w->b->q[i];

		if (q->completed < q->target || (sentinel && !q->sentinel_done))
			return false;
	}
	return true;
}

static bool receiving_done(const struct bworker *w)
{
	for (uint32_t i = w->first; i < w->first + w->count; i++)
		if (!w->b->q[i].got_sentinel || w->b->q[i].received < w->b->q[i].expected)
			return false;
	return true;
}

static uint64_t worker_completed(const struct bworker *w)
{
	uint64_t s = 0;

	for (uint32_t i = w->first; i < w->first + w->count; i++)
		s += w->b->q[i].completed;
	return s;
}

static uint64_t worker_received(const struct bworker *w)
{
	uint64_t s = 0;

	for (uint32_t i = w->first; i < w->first + w->count; i++)
		s += w->b->q[i].received;
	return s;
}

/* Nanoseconds since the round began, estimated from ticks() (no clock
 * read): for deadlines and idle checks. Exact times come after the round. */
static uint64_t bw_now(const struct rk_bench *b, uint64_t tk)
{
	return b->t0 + (uint64_t)((double)(tk - b->tk0) * b->tick_est);
}

/* Progress, from the first worker, with every worker's count. */
static void bw_progress(struct bworker *w, uint64_t now, uint64_t total)
{
	struct rk_bench *b = w->b;
	uint64_t done = 0;

	if (!b->o.progress || now < b->next_progress)
		return;
	for (uint32_t k = 0; k < b->nworkers; k++)
		done += __atomic_load_n(&b->w[k].done, __ATOMIC_RELAXED);
	bench_progress(b, w->r, now, done, total);
}

/* The first worker, when soak_due: stop requests, and an interval with
 * every worker's count. 1 when this side stops. */
static int bw_soak(struct bworker *w)
{
	struct rk_bench *b = w->b;
	uint64_t now = now_ns(), done = 0;
	int ret, halted;

	halted = soak_look(b, now);
	if (halted < 0)
		return halted;
	for (uint32_t k = 0; k < b->nworkers; k++)
		done += __atomic_load_n(&b->w[k].done, __ATOMIC_RELAXED);
	ret = soak_cut(b, w->r, now, done);
	return ret ? ret : halted;
}

/* Time is up or a stop came: one more request where the last was
 * unsignaled, so that every request is accounted for by a completion. */
static void cut_targets(struct bworker *w)
{
	for (uint32_t i = w->first; i < w->first + w->count; i++) {
		struct bqp *q = &w->b->q[i];
		uint64_t t = q->posted + (q->unsig ? 1 : 0);

		if (t < q->target)
			q->target = t;
	}
}

static int add_sample(struct bworker *w, uint64_t tk, uint64_t count)
{
	if (w->nsamples == w->samples_cap) {
		size_t cap = w->samples_cap ? 2 * w->samples_cap : 4096;
		struct rk_bench_sample *s = realloc(w->samples, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		w->samples = s;
		w->samples_cap = cap;
	}
	w->samples[w->nsamples].t_ns = tk - w->b->tk0; /* ticks until the round ends */
	w->samples[w->nsamples].count = count;
	w->nsamples++;
	return 0;
}

/* Post in batches on the worker's QPs while their send queues have room;
 * with sentinel, end each QP's SEND round once all its requests completed. */
static int post_ready(struct bworker *w, bool inl, bool sentinel)
{
	struct rk_bench *b = w->b;
	int ret;

	for (uint32_t i = w->first; i < w->first + w->count; i++) {
		struct bqp *q = &b->q[i];

		for (;;) {
			uint64_t out = q->posted - q->completed + q->carry;
			uint64_t room = b->depth > out ? b->depth - out : 0;
			uint64_t left = q->target - q->posted;
			uint32_t n = b->plist;

			if (!left)
				break;
			if (left < n)
				n = (uint32_t)left;
			if (room < n)
				break;
			ret = bench_post_batch(b, i, n, w->r->size, inl);
			if (ret)
				return ret;
		}
		if (sentinel && !q->sentinel_posted && q->completed == q->target) {
			ret = bench_post_sentinel(b, i);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Bandwidth, one worker (a thread of its own when there are several): post
 * in batches while its send queues have room, poll its CQs in batches;
 * receive (SEND) where the peer sends. */
static int bw_worker_run(struct bworker *w)
{
	struct rk_bench *b = w->b;
	const struct rk_bench_round *r = w->r;
	bool sending = w->sending, receiving = w->receiving;
	bool inl = use_inline(b, r->size);
	bool send_test = b->info.test == RK_BENCH_SEND;
	bool lossy = b->info.transport != RK_RC;
	uint64_t deadline = r->duration_ms ? b->t0 + (uint64_t)r->duration_ms * 1000000ull : 0;
	uint64_t total = r->iters * b->info.qps, last_count = 0;
	uint64_t last_activity = b->t0, now = b->t0;
	uint64_t idle_ns = (uint64_t)(lossy ? LOSSY_IDLE_MS : b->wait_ms) * 1000000ull;
	bool stopping = !deadline, cut = false;
	uint64_t tk_next_sample = 0, tk_sample_gap = 0;
	uint32_t empty = 0;
	int ret, got;

	if (r->duration_ms == RK_BENCH_UNTIL_STOPPED)
		tk_sample_gap = (uint64_t)(10e6 / b->tick_est);
	for (;;) {
		bool active = false;
		uint64_t tk;

		if (__atomic_load_n(&b->abort, __ATOMIC_RELAXED))
			return -ECANCELED;
		if (sending) {
			ret = post_ready(w, inl, send_test && stopping);
			if (ret)
				return ret;
			ret = bench_poll_send(w, &got);
			if (ret)
				return ret;
			active |= got > 0;
		}
		if (receiving) {
			ret = bench_poll_recv(w, &got, true);
			if (ret)
				return ret;
			active |= got > 0;
		}
		tk = ticks();
		now = bw_now(b, tk);
		if (sending) {
			uint64_t c = worker_completed(w);

			if (c != last_count) {
				last_count = c;
				w->tk_last = tk;
				__atomic_store_n(&w->done, c, __ATOMIC_RELAXED);
				/* Until stopped: a point per 10 ms at most, or the
				 * samples would grow without end. */
				if (tk >= tk_next_sample) {
					ret = add_sample(w, tk, c);
					if (ret)
						return ret;
					tk_next_sample = tk + tk_sample_gap;
				}
			}
		} else if (receiving) {
			__atomic_store_n(&w->done, worker_received(w), __ATOMIC_RELAXED);
		}
		if (w == b->w) {
			bw_progress(w, now, total);
			if (soak_due(b, now)) {
				ret = bw_soak(w);
				if (ret < 0)
					return ret;
			}
		}
		if (active) {
			last_activity = now;
			empty = 0;
		} else {
			maybe_yield(b, ++empty);
			ret = bench_port_down(b, now - last_activity);
			if (ret)
				return ret;
		}
		if (!cut && ((deadline && now >= deadline) ||
			     __atomic_load_n(&b->halt, __ATOMIC_RELAXED))) {
			stopping = cut = true;
			cut_targets(w);
		}
		if ((!sending || (stopping && sending_done(w, send_test))) &&
		    (!receiving || receiving_done(w)))
			break;
		if (now - last_activity > idle_ns) {
			if (receiving && lossy && !sending && (stopping || now > deadline))
				break; /* the rest is lost (UC/UD); counted after the round */
			if (receiving && lossy && !sending && r->iters)
				break;
			rk_error("bench: no completion for %" PRIu64 " ms (%" PRIu64 " of %" PRIu64
				 " done): is the peer still running?",
				 (now - last_activity) / 1000000,
				 sending ? worker_completed(w) : 0, total);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

static void *bw_thread(void *arg)
{
	struct bworker *w = arg;

	w->ret = bw_worker_run(w);
	if (w->ret)
		__atomic_store_n(&w->b->abort, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* The workers' samples as one series (counts summed over workers at each
 * point), times converted from ticks to nanoseconds with scale. */
static int merge_samples(struct rk_bench *b, double scale)
{
	size_t total = 0, pos[RK_BENCH_MAX_THREADS] = {0};
	uint64_t last[RK_BENCH_MAX_THREADS] = {0}, sum = 0;

	for (uint32_t k = 0; k < b->nworkers; k++)
		total += b->w[k].nsamples;
	if (total > b->samples_cap) {
		struct rk_bench_sample *s = realloc(b->samples, total * sizeof(*s));

		if (!s)
			return -ENOMEM;
		b->samples = s;
		b->samples_cap = total;
	}
	b->nsamples = 0;
	for (;;) {
		uint32_t best = UINT32_MAX;

		for (uint32_t k = 0; k < b->nworkers; k++) {
			const struct bworker *w = &b->w[k];

			if (pos[k] < w->nsamples &&
			    (best == UINT32_MAX ||
			     w->samples[pos[k]].t_ns < b->w[best].samples[pos[best]].t_ns))
				best = k;
		}
		if (best == UINT32_MAX)
			break;
		{
			const struct rk_bench_sample *s = &b->w[best].samples[pos[best]++];

			sum = sum - last[best] + s->count;
			last[best] = s->count;
			b->samples[b->nsamples].t_ns = (uint64_t)((double)s->t_ns * scale + 0.5);
			b->samples[b->nsamples].count = sum;
			b->nsamples++;
		}
	}
	return 0;
}

/* Bandwidth: the workers (this thread runs the first), then the round's
 * times in nanoseconds. */
int bench_run_bw(struct rk_bench *b, const struct rk_bench_round *r, bool sending,
		  bool receiving)
{
	uint64_t tk_last = b->tk0;
	double scale;
	int ret = 0, ret2;
	uint32_t started = 1;

	b->abort = 0;
	for (uint32_t k = 0; k < b->nworkers; k++) {
		struct bworker *w = &b->w[k];

		w->r = r;
		w->sending = sending;
		w->receiving = receiving;
		w->nsamples = 0;
		w->tk_last = b->tk0;
		w->done = 0;
		w->ret = 0;
	}
	for (; started < b->nworkers; started++) {
		ret = pthread_create(&b->w[started].tid, NULL, bw_thread, &b->w[started]);
		if (ret) {
			ret = -ret;
			rk_error("bench: start thread %u of %u: %s", started + 1, b->nworkers,
				 rk_strerror(ret));
			__atomic_store_n(&b->abort, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	if (!ret) {
		ret = bw_worker_run(&b->w[0]);
		if (ret)
			__atomic_store_n(&b->abort, 1, __ATOMIC_RELAXED);
	}
	for (uint32_t k = 1; k < started; k++) {
		pthread_join(b->w[k].tid, NULL);
		ret2 = b->w[k].ret;
		if (!ret || (ret == -ECANCELED && ret2 && ret2 != -ECANCELED))
			ret = ret2;
	}
	round_end(b);
	if (ret)
		return ret;
	scale = tick_ns(b);
	for (uint32_t k = 0; k < b->nworkers; k++)
		if (b->w[k].tk_last > tk_last)
			tk_last = b->w[k].tk_last;
	b->elapsed_ns = tk_last > b->tk0 ? (uint64_t)((double)(tk_last - b->tk0) * scale + 0.5) :
					   b->t_last - b->t0;
	return merge_samples(b, scale);
}
