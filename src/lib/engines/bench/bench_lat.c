/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The benchmark's latency loops: SEND and WRITE ping-pongs, and READ and
 * atomics one request at a time. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>

#include <rdmakit/log.h>

#include "engines/bench/bench_int.h"

/* A wait's bound, checked every 1024 polls so the first polls (a ping-pong's
 * answer usually comes within them) read no clock: true when more than
 * limit_ns passed since the first check. */
static bool wait_over(uint64_t *start_ns, uint64_t limit_ns)
{
	uint64_t t = now_ns();

	if (!*start_ns) {
		*start_ns = t;
		return false;
	}
	return t - *start_ns > limit_ns;
}

/* Latency: the progress line, looked at every 256 iterations. */
static void lat_progress(struct rk_bench *b, const struct rk_bench_round *r, uint64_t done)
{
	if (b->o.progress && done % 256 == 0)
		bench_progress(b, r, now_ns(), done, r->iters);
}

/* One latency sample, in ticks() (scaled to ns when the round ends). */
static int add_lat(struct rk_bench *b, size_t i, uint64_t v)
{
	if (i >= b->lat_cap) {
		size_t cap = b->lat_cap ? 2 * b->lat_cap : 4096;
		uint64_t *l;

		while (cap <= i)
			cap *= 2;
		l = realloc(b->lat, cap * sizeof(*l));
		if (!l)
			return -ENOMEM;
		b->lat = l;
		b->lat_cap = cap;
	}
	b->lat[i] = v;
	return 0;
}

/* Wait (spinning) for one completion on cq with the given predicate met. */
static int wait_send_done(struct rk_bench *b, uint32_t i, bool sentinel)
{
	uint64_t start = 0;
	struct bqp *q = &b->q[i];
	int ret, got;

	for (uint32_t spin = 0;; spin++) {
		if (sentinel ? q->sentinel_done : q->completed >= q->posted)
			return 0;
		ret = bench_poll_send(b->w, &got);
		if (ret)
			return ret;
		maybe_yield(b, spin + 1);
		if ((spin & 1023) != 1023)
			continue;
		if (wait_over(&start, (uint64_t)b->wait_ms * 1000000ull)) {
			rk_error("bench: QP 0x%x: no completion within %d ms", q->qp->qp->qp_num,
				 b->wait_ms);
			return -ETIMEDOUT;
		}
		ret = bench_port_down(b, now_ns() - start);
		if (ret)
			return ret;
	}
}

/* Post one request of a ping-pong; keeps room by reaping completions. */
static int post_one(struct rk_bench *b, uint32_t i, uint32_t size, bool inl)
{
	struct bqp *q = &b->q[i];
	int ret, got;

	while (q->posted - q->completed + q->carry + 1 > b->info.tx_depth) {
		ret = bench_poll_send(b->w, &got);
		if (ret)
			return ret;
	}
	q->target = q->posted + 1 > q->target ? q->posted + 1 : q->target;
	return bench_post_batch(b, i, 1, size, inl);
}

static uint8_t lat_seq(uint64_t i)
{
	return (uint8_t)(i % 254 + 1);
}

/* The round's end in duration mode (0 when it counts iterations). */
static inline uint64_t lat_deadline(const struct rk_bench *b, const struct rk_bench_round *r)
{
	return r->duration_ms ? b->t0 + (uint64_t)r->duration_ms * 1000000ull : 0;
}

/* The pinger's clock at iteration i: the time since the last mark is
 * iteration i - 1's sample. 0, or -ENOMEM. */
static inline int lat_mark(struct rk_bench *b, uint64_t i, uint64_t *tk_prev)
{
	uint64_t tk = ticks();
	int ret = i ? add_lat(b, i - 1, tk - *tk_prev) : 0;

	*tk_prev = tk;
	return ret;
}

/* The pinger, before iteration i: 1 to go on (the clock marked), 0 when
 * the round is over (its iterations, its time, or a stop request), or a
 * negative errno. Every 64 iterations, or 10 ms after the last look where
 * iterations are slow, it reads the clock (a read costs as much as a tenth
 * of an iteration on a VM) and, when due, looks for stop requests and cuts
 * an interval; what that takes is left out of the samples (the mark is made
 * again after it). */
static inline int lat_next(struct rk_bench *b, const struct rk_bench_round *r, uint64_t i,
			   uint64_t deadline, uint64_t *tk_prev)
{
	uint64_t now = 0, tk = ticks();
	int ret;

	if (r->iters && i == r->iters)
		return 0;
	if (i % 64 == 0 || tk - b->soak.tk_looked > b->soak.tk_gap) {
		b->soak.tk_looked = tk;
		now = now_ns();
		b->soak.seen = i;
		if (r->duration_ms && now >= deadline)
			return 0;
		if (soak_due(b, now)) {
			ret = soak_look(b, now);
			if (ret)
				return ret < 0 ? ret : 0;
		}
	}
	ret = lat_mark(b, i, tk_prev);
	if (ret)
		return ret;
	if (now && soak_due(b, now)) {
		ret = soak_cut(b, r, now, i);
		*tk_prev = ticks();
		if (ret)
			return ret;
	}
	return 1;
}

/* The ponger, every 64 iterations or 10 ms: a server asked to stop tells
 * the client. */
static inline int lat_pong_look(struct rk_bench *b, uint64_t i)
{
	uint64_t now, tk = ticks();

	if (i % 64 && tk - b->soak.tk_looked <= b->soak.tk_gap)
		return 0;
	b->soak.tk_looked = tk;
	now = now_ns();
	return soak_due(b, now) ? soak_look(b, now) : 0;
}

/* One spin of a wait for the peer; every 1024 spins, reap send completions
 * and look at the clock. 0, a negative errno, or 1 once the wait is over
 * its bound (the caller says what it waited for). */
static inline int lat_spin(struct rk_bench *b, uint32_t spin, uint64_t *wait_start)
{
	int ret, got;

	maybe_yield(b, spin + 1);
	if ((spin & 1023) != 1023)
		return 0;
	ret = bench_poll_send(b->w, &got);
	if (ret)
		return ret;
	if (wait_over(wait_start, (uint64_t)b->wait_ms * 1000000ull))
		return 1;
	return bench_port_down(b, now_ns() - *wait_start);
}

/* SEND latency: wait for the peer's next SEND (or its end-of-round one). */
static inline int wait_send(struct rk_bench *b)
{
	struct bqp *q = &b->q[0];
	uint64_t wait_start = 0;
	int ret, got;

	for (uint32_t spin = 0;; spin++) {
		uint64_t before = q->received;
		bool sentinel = q->got_sentinel;

		ret = bench_poll_recv(b->w, &got, false);
		if (ret)
			return ret;
		if (q->received != before || q->got_sentinel != sentinel)
			return 0;
		ret = lat_spin(b, spin, &wait_start);
		if (ret < 0)
			return ret;
		if (ret) {
			rk_error("bench: no SEND from %s within %d ms", b->conn->peer, b->wait_ms);
			return -ETIMEDOUT;
		}
	}
}

/* WRITE latency: spin on the in-slot's last byte until it is want (or, for
 * the ponger, the stop marker). */
static inline int wait_write(struct rk_bench *b, volatile uint8_t *mine, uint8_t want, bool pinger)
{
	uint64_t wait_start = 0;
	int ret;

	for (uint32_t spin = 0;; spin++) {
		uint8_t v = *mine;

		if (v == want || (!pinger && v == LAT_STOP))
			return 0;
		ret = lat_spin(b, spin, &wait_start);
		if (ret < 0)
			return ret;
		if (ret) {
			rk_error("bench: no RDMA WRITE from %s within %d ms (last byte 0x%02x, "
				 "waiting for 0x%02x)", b->conn->peer, b->wait_ms, v, want);
			return -ETIMEDOUT;
		}
	}
}

/* A ping-pong's next message to the peer: a SEND (a receive posted back
 * in its place), or a WRITE whose last byte is want. */
static inline int pp_post(struct rk_bench *b, const struct rk_bench_round *r, bool write,
			  uint8_t *out, uint8_t want, bool inl)
{
	int ret;

	if (write)
		*out = want;
	ret = post_one(b, 0, r->size, inl);
	if (!ret && !write)
		ret = bench_refill_recvs(b->w);
	return ret;
}

/* The pinger's end of a ping-pong, signaled (its completion covers every
 * ping): the end-of-round SEND, or a WRITE of the stop marker. */
static int pp_stop(struct rk_bench *b, const struct rk_bench_round *r, bool write, uint8_t *out,
		   bool inl)
{
	struct bqp *q = &b->q[0];
	int ret;

	if (!write) {
		ret = bench_post_sentinel(b, 0);
		return ret ? ret : wait_send_done(b, 0, true);
	}
	*out = LAT_STOP;
	q->target = q->posted + 1;
	ret = post_one(b, 0, r->size, inl);
	return ret ? ret : wait_send_done(b, 0, false);
}

/* SEND and WRITE latency: a ping-pong; the pinger times consecutive pings.
 * SENDs are answered by SENDs; with write each side writes the other's
 * in-slot and spins on its own in-slot's last byte for the answer. */
static inline int pingpong(struct rk_bench *b, const struct rk_bench_round *r, bool pinger,
			   bool write)
{
	struct bqp *q = &b->q[0];
	bool inl = use_inline(b, r->size);
	volatile uint8_t *mine = in_slot(b, 0) + r->size - 1;
	uint8_t *out = out_slot(b, 0) + r->size - 1;
	uint64_t deadline = lat_deadline(b, r), tk_prev = 0;
	uint64_t i = 0;
	int ret;

	/* In a ping-pong every request is signaled on its own schedule; target
	 * follows posted so the last one of a run is signaled. */
	q->target = UINT64_MAX;
	for (;;) {
		uint8_t want = lat_seq(i);

		if (pinger) {
			ret = lat_next(b, r, i, deadline, &tk_prev);
			if (ret < 0)
				return ret;
			if (!ret)
				break;
			if (!write)
				q->target = r->iters ? r->iters : UINT64_MAX;
			ret = pp_post(b, r, write, out, want, inl);
			if (ret)
				return ret;
		}
		ret = write ? wait_write(b, mine, want, pinger) : wait_send(b);
		if (ret)
			return ret;
		if (!pinger) {
			if (write ? *mine == LAT_STOP : q->got_sentinel)
				break;
			ret = pp_post(b, r, write, out, want, inl);
			if (!ret)
				ret = lat_pong_look(b, i);
			if (ret < 0)
				return ret;
		}
		if (write)
			q->received++; /* a SEND's receive counts itself */
		i++;
		if (pinger)
			lat_progress(b, r, i);
	}
	if (!pinger) {
		round_end(b);
		return 0;
	}
	ret = lat_mark(b, i, &tk_prev);
	if (ret)
		return ret;
	round_end(b);
	ret = pp_stop(b, r, write, out, inl);
	if (ret)
		return ret;
	q->completed = i; /* the pings, every one answered */
	return 0;
}

int bench_run_send_lat(struct rk_bench *b, const struct rk_bench_round *r, bool pinger)
{
	return pingpong(b, r, pinger, false);
}

int bench_run_write_lat(struct rk_bench *b, const struct rk_bench_round *r, bool pinger)
{
	return pingpong(b, r, pinger, true);
}

/* READ and atomics latency: one request at a time, each waited for. */
int bench_run_rdma_lat(struct rk_bench *b, const struct rk_bench_round *r)
{
	struct bqp *q = &b->q[0];
	volatile uint64_t *ret_word = (volatile uint64_t *)out_slot(b, 0);
	uint64_t deadline = lat_deadline(b, r), tk_prev = 0;
	uint64_t i = 0;
	int ret;

	for (;; i++) {
		ret = lat_next(b, r, i, deadline, &tk_prev);
		if (ret < 0)
			return ret;
		if (!ret)
			break;
		q->target = q->posted + 1; /* signaled */
		ret = bench_post_batch(b, 0, 1, r->size, false);
		if (ret)
			return ret;
		ret = wait_send_done(b, 0, false);
		if (ret)
			return ret;
		if (is_atomic(b->info.test) && *ret_word != i)
			q->bad_returns++;
		lat_progress(b, r, i + 1);
	}
	ret = lat_mark(b, i, &tk_prev);
	if (ret)
		return ret;
	round_end(b);
	return 0;
}
