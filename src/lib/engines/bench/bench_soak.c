/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Soak runs: a round's intervals (a report every interval_ms from the loop
 * of the side that measures, and the lowest and highest of them), and stop
 * requests (a signal's flag on either side; the server's reaches the client
 * as a BENCH_FIN during the round). See bench.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/ctl.h>
#include <rdmakit/device.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/status.h>

#include "engines/bench/bench_int.h"

static void next_event(struct soak *s)
{
	s->next_event = s->next_cut < s->next_look ? s->next_cut : s->next_look;
}

void soak_begin(struct rk_bench *b, const struct rk_bench_round *r, bool measuring)
{
	struct soak *s = &b->soak;

	s->measuring = measuring && b->o.interval_ms;
	s->lat = b->info.mode == RK_BENCH_LAT;
	s->interval_ns = s->measuring ? (uint64_t)b->o.interval_ms * 1000000ull : 0;
	s->deadline = r->duration_ms ? b->t0 + (uint64_t)r->duration_ms * 1000000ull : UINT64_MAX;
	s->next_cut = s->interval_ns ? b->t0 + s->interval_ns : UINT64_MAX;
	s->next_look = b->t0 + LOOK_NS;
	next_event(s);
	s->cut_ns = b->t0;
	s->cut_msgs = 0;
	s->seen = 0;
	s->index = 0;
	s->tk_looked = b->tk0;
	s->tk_gap = (uint64_t)(10e6 / b->tick_est);
	s->halted = s->stopped = s->by_peer = false;
	s->listening = b->info.server;
	s->told = false;
	memset(&s->range, 0, sizeof(s->range));
	b->halt = 0;
	b->wc_failed = 0;
	b->port_down = 0;
}

static bool stop_asked(const struct rk_bench *b)
{
	return b->o.stop && *b->o.stop;
}

/* Server: asked to stop while the client runs the round, tell it once. */
static void tell_client(struct rk_bench *b)
{
	struct soak *s = &b->soak;
	struct rk_msg m = {.type = RK_MSG_BENCH_FIN};

	if (!s->listening || s->told || !stop_asked(b))
		return;
	s->told = s->stopped = true;
	rk_info("bench: stopping: asking %s to end round %u", b->conn->peer, b->rounds);
	if (rk_ctl_send(b->conn->ctl, &m))
		rk_warn("bench: %s was not told to stop; the round ends when it ends it",
			b->conn->peer);
}

/* Client: a message from the server during the round: its BENCH_FIN (1), or
 * anything else (an error, logged). */
static int take_fin(struct rk_bench *b)
{
	struct rk_msg m;
	int ret = rk_ctl_recv(b->conn->ctl, b->wait_ms, &m);

	if (ret)
		return ret;
	if (m.type != RK_MSG_BENCH_FIN) {
		rk_error("bench: %s sent a %s message in the middle of round %u", b->conn->peer,
			 rk_msg_type_str(m.type), b->rounds);
		return -EPROTO;
	}
	rk_info("bench: %s was asked to stop: ending round %u", b->conn->peer, b->rounds);
	b->soak.stopped = b->soak.by_peer = true;
	return 1;
}

static int halt(struct rk_bench *b)
{
	b->soak.halted = true;
	__atomic_store_n(&b->halt, 1, __ATOMIC_RELAXED);
	return 1;
}

int soak_look(struct rk_bench *b, uint64_t now)
{
	struct soak *s = &b->soak;
	int ret;

	if (now < s->next_look || s->halted)
		return s->halted;
	s->next_look = now + LOOK_NS;
	next_event(s);
	if (b->info.server) {
		/* The client ends the round; in a bidirectional one this side's
		 * direction ends here too. */
		tell_client(b);
		return b->info.bidir && stop_asked(b) ? halt(b) : 0;
	}
	if (stop_asked(b)) {
		s->stopped = true;
		return halt(b);
	}
	ret = rk_ctl_pending(b->conn->ctl, 0);
	if (ret > 0)
		ret = take_fin(b);
	return ret > 0 ? halt(b) : ret;
}

/* Latency: the statistics of samples [from, to) of b->lat (ticks), scale
 * ns per tick. */
static void interval_lat(struct rk_bench *b, uint64_t from, uint64_t to, double scale,
			 struct rk_bench_lat *out)
{
	struct soak *s = &b->soak;
	size_t n = to > from ? (size_t)(to - from) : 0;
	unsigned int factor = b->info.test == RK_BENCH_SEND || b->info.test == RK_BENCH_WRITE ? 2 : 1;

	memset(out, 0, sizeof(*out));
	if (n > s->scratch_cap) {
		uint64_t *p = realloc(s->scratch, n * sizeof(*p));

		if (!p) {
			rk_warn("bench: no memory for interval %u's latency statistics", s->index);
			return;
		}
		s->scratch = p;
		s->scratch_cap = n;
	}
	for (size_t k = 0; k < n; k++)
		s->scratch[k] = (uint64_t)((double)b->lat[from + k] * scale + 0.5);
	rk_bench_lat_stats(s->scratch, n, factor, out);
}

/* Among the intervals that ran at least half an interval: the lowest and
 * highest bandwidth (latency: p99). */
static void rank(struct soak *s, const struct rk_bench_interval *iv)
{
	struct rk_bench_interval_range *g = &s->range;
	double v = s->lat ? iv->lat.p99 : iv->bw;

	g->count++;
	if (iv->status || (iv->end_s - iv->start_s) * 2e9 < (double)s->interval_ns)
		return;
	if (!g->ranked || v < (s->lat ? g->min.lat.p99 : g->min.bw))
		g->min = *iv;
	if (!g->ranked || v > (s->lat ? g->max.lat.p99 : g->max.bw))
		g->max = *iv;
	g->ranked++;
}

/* Report the interval from the last cut to end (ns from the round's start)
 * with done messages by then; latency samples scaled by scale. */
static void report(struct rk_bench *b, const struct rk_bench_round *r, uint64_t end,
		   uint64_t done, double scale, struct rk_bench_interval *iv)
{
	struct soak *s = &b->soak;
	double secs;

	iv->round = b->rounds;
	iv->size = r->size;
	iv->index = s->index++;
	iv->start_s = (double)(s->cut_ns - b->t0) / 1e9;
	iv->end_s = (double)end / 1e9;
	iv->msgs = done > s->cut_msgs ? done - s->cut_msgs : 0;
	iv->bytes = iv->msgs * r->size;
	secs = iv->end_s - iv->start_s;
	if (secs > 0) {
		iv->bw = (double)iv->bytes / secs;
		iv->msg_rate = (double)iv->msgs / secs;
	}
	if (s->lat && !iv->status)
		interval_lat(b, s->cut_msgs, done, scale, &iv->lat);
	rank(s, iv);
	s->cut_ns = b->t0 + end;
	s->cut_msgs = done;
	if (b->o.interval)
		b->o.interval(iv, b->o.interval_arg);
}

int soak_cut(struct rk_bench *b, const struct rk_bench_round *r, uint64_t now, uint64_t done)
{
	struct soak *s = &b->soak;
	struct rk_bench_interval iv;

	s->seen = done;
	if (now < s->next_cut)
		return 0;
	/* The next mark past now: a stall longer than an interval is one long
	 * interval. A mark at or past the round's end is not cut: the last
	 * interval runs to the end. */
	while (s->next_cut <= now)
		s->next_cut += s->interval_ns;
	next_event(s);
	if (now >= s->deadline || s->halted)
		return 0;
	memset(&iv, 0, sizeof(iv));
	report(b, r, now - b->t0, done, b->tick_est, &iv);
	return 0;
}

/* This side's messages (latency: iterations) in the round so far. */
static uint64_t side_done(const struct rk_bench *b)
{
	uint64_t n = 0;

	if (b->soak.lat)
		return b->q[0].completed;
	for (uint32_t i = 0; i < b->info.qps; i++)
		n += b->q[i].completed;
	return n;
}

/* What failed the round, for its last interval. */
static void failure_text(const struct rk_bench *b, int status, char *buf, size_t len)
{
	if (__atomic_load_n(&b->port_down, __ATOMIC_RELAXED))
		snprintf(buf, len, "%s on %s port %u: %s", rk_async_event_name(IBV_EVENT_PORT_ERR),
			 b->conn->dev->info.name, b->conn->port_num,
			 rk_async_event_hint(IBV_EVENT_PORT_ERR));
	else if (__atomic_load_n(&b->wc_failed, __ATOMIC_RELAXED))
		snprintf(buf, len, "%s on QP 0x%x: %s", rk_wc_status_name(b->wc_status),
			 b->wc_qpn, rk_wc_status_hint(b->wc_status));
	else
		snprintf(buf, len, "%s", rk_strerror(status));
}

void soak_end(struct rk_bench *b, const struct rk_bench_round *r, int status)
{
	struct soak *s = &b->soak;
	struct rk_bench_interval iv;
	uint64_t end, done;

	if (!s->measuring)
		return;
	memset(&iv, 0, sizeof(iv));
	iv.last = true;
	iv.status = status;
	if (status) {
		failure_text(b, status, iv.error, sizeof(iv.error));
		end = now_ns() - b->t0;
		done = s->lat ? s->seen : side_done(b);
	} else {
		end = b->elapsed_ns;
		done = side_done(b);
	}
	if (b->t0 + end < s->cut_ns) /* the round's last completion came before the cut */
		end = s->cut_ns - b->t0;
	report(b, r, end, done, tick_ns(b), &iv);
}

/* Server: wait for the client's message up to wait_ms (< 0: no bound),
 * telling it to stop when asked to meanwhile. 0 once a message begins. */
static int server_wait(struct rk_bench *b, int wait_ms)
{
	uint64_t until = wait_ms < 0 ? UINT64_MAX : now_ns() + (uint64_t)wait_ms * 1000000ull;

	for (;;) {
		uint64_t now = now_ns();
		int slice = 100, ret;

		tell_client(b);
		if (now >= until) {
			rk_error("no message from %s within %d ms", b->conn->peer, wait_ms);
			return -ETIMEDOUT;
		}
		if (until - now < 100000000ull)
			slice = (int)((until - now) / 1000000ull) + 1;
		ret = rk_ctl_pending(b->conn->ctl, slice);
		if (ret)
			return ret < 0 ? ret : 0;
	}
}

int soak_expect(struct rk_bench *b, enum rk_msg_type type, int wait_ms, struct rk_msg *m)
{
	struct soak *s = &b->soak;
	int ret;

	if (b->info.server && s->listening) {
		ret = server_wait(b, wait_ms);
		if (ret)
			return ret;
		s->listening = false; /* the client has ended its loop */
		return rk_ctl_expect(b->conn->ctl, type, wait_ms < 0 ? b->wait_ms : wait_ms, m);
	}
	ret = rk_ctl_recv(b->conn->ctl, wait_ms, m);
	if (!ret && !b->info.server && m->type == RK_MSG_BENCH_FIN && type != RK_MSG_BENCH_FIN &&
	    !s->by_peer) {
		rk_info("bench: %s was asked to stop: no more rounds", b->conn->peer);
		s->stopped = s->by_peer = true;
		ret = rk_ctl_recv(b->conn->ctl, wait_ms, m);
	}
	if (!ret && m->type != type) {
		rk_error("%s sent a %s message where a %s was due", b->conn->peer,
			 rk_msg_type_str(m->type), rk_msg_type_str(type));
		return -EPROTO;
	}
	return ret;
}

void soak_free(struct rk_bench *b)
{
	free(b->soak.scratch);
	b->soak.scratch = NULL;
	b->soak.scratch_cap = 0;
}

void bench_note_wc(struct rk_bench *b, const struct ibv_wc *wc)
{
	if (__atomic_exchange_n(&b->wc_failed, 1, __ATOMIC_RELAXED))
		return;
	b->wc_status = wc->status;
	b->wc_qpn = wc->qp_num;
}

int bench_port_down(struct rk_bench *b, uint64_t idle_ns)
{
	if (idle_ns < PORT_DOWN_GRACE_NS || !rk_device_port_down(b->conn->dev, b->conn->port_num))
		return 0;
	if (!__atomic_exchange_n(&b->port_down, 1, __ATOMIC_RELAXED))
		rk_error("bench: %s port %u went down (%s) and nothing completed for %" PRIu64
			 " ms since", b->conn->dev->info.name, b->conn->port_num,
			 rk_async_event_name(IBV_EVENT_PORT_ERR), idle_ns / 1000000);
	return -ENETDOWN;
}
