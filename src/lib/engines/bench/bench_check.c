/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* After a benchmark round: each QP's counts both ways (BENCH_RESULT
 * messages of wire.h), what this side can check of what arrived, and the
 * round's result. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/ctl.h>
#include <rdmakit/log.h>
#include <rdmakit/pattern.h>

#include "engines/bench/bench_int.h"

/* One sentence for what was checked, into res->check. */
static void check_summary(struct rk_bench *b, const struct rk_bench_round *r,
			  struct rk_bench_result *res, bool initiator, uint64_t peer_total,
			  uint64_t recv_total)
{
	const struct rk_bench_info *in = &b->info;
	enum rk_bench_test t = in->test;
	bool lat = in->mode == RK_BENCH_LAT;
	char *c = res->check;
	size_t cl = sizeof(res->check);

	if (t == RK_BENCH_SEND && (!initiator || in->bidir || lat) && b->srq)
		snprintf(c, cl, "received %" PRIu64 " of %" PRIu64 " SENDs%s through the SRQ, "
			 "every message's %u bytes match", recv_total, lat && initiator ?
			 recv_total + res->lost : peer_total, res->lost ? " (rest lost)" : "",
			 r->size);
	else if (t == RK_BENCH_SEND && (!initiator || in->bidir || lat))
		snprintf(c, cl, "received %" PRIu64 " of %" PRIu64 " SENDs%s, last message's %u "
			 "bytes match", recv_total, lat && initiator ? recv_total + res->lost :
			 peer_total, res->lost ? " (rest lost)" : "", r->size);
	else if (t == RK_BENCH_WRITE && (!initiator || in->bidir || lat))
		snprintf(c, cl, "%s%u bytes written match the pattern%s", lat ? "" : "last WRITE's ",
			 lat ? r->size - 1 : r->size,
			 lat && !initiator ? ", every ping answered" : "");
	else if (t == RK_BENCH_READ && initiator)
		snprintf(c, cl, "%u bytes read match the peer's pattern", r->size);
	else if (is_atomic(t) && !initiator)
		snprintf(c, cl, "word%s = %" PRIu64 " after %" PRIu64 " %s, as due",
			 in->qps > 1 ? "s (per QP), total" : "", peer_total, peer_total,
			 bench_test_verb(t));
	else if (is_atomic(t))
		snprintf(c, cl, "every %s returned the value due", bench_test_verb(t));
	else {
		res->checked_here = false;
		snprintf(c, cl, "nothing to check on this side");
	}
}

/* Check what this side can see after the round; a sentence into res->check. */
int bench_check_round(struct rk_bench *b, const struct rk_bench_round *r,
		       struct rk_bench_result *res, bool initiator)
{
	const struct rk_bench_info *in = &b->info;
	uint32_t seed = seed_of(b->rounds, r->size);
	enum rk_bench_test t = in->test;
	bool lat = in->mode == RK_BENCH_LAT;
	char *c = res->check;
	size_t cl = sizeof(res->check);
	uint64_t peer_total = 0, recv_total = 0;

	for (uint32_t i = 0; i < in->qps; i++) {
		peer_total += b->q[i].peer_sent;
		recv_total += b->q[i].received;
	}
	res->checked_here = true;
	for (uint32_t i = 0; i < in->qps; i++) {
		struct bqp *q = &b->q[i];
		const uint8_t *data = in_slot(b, i) + (in->transport == RK_UD ? UD_GRH : 0);
		uint32_t len = r->size;
		ssize_t bad;

		if (lat && t == RK_BENCH_WRITE)
			len = r->size - 1; /* the last byte carries the sequence */
		if (t == RK_BENCH_SEND && (!initiator || in->bidir || lat)) {
			/* receiver of SENDs */
			uint64_t due = lat && initiator ? q->completed : q->peer_sent;

			if (q->received > due || (in->transport == RK_RC && q->received != due)) {
				snprintf(c, cl, "QP 0x%x received %" PRIu64 " SENDs where the peer sent "
					 "%" PRIu64, in->qpn[i], q->received, due);
				return -EBADMSG;
			}
			res->lost += due - q->received;
			if (b->srq && q->bad_data) {
				snprintf(c, cl, "QP 0x%x: %" PRIu64 " SENDs from the SRQ not as due (the "
					 "first: %u bytes, byte %" PRId64 " differs from the pattern)",
					 in->qpn[i], q->bad_data, q->bad_len, q->bad_at);
				return -EBADMSG;
			}
			if (!b->srq && q->received && (bad = rk_pattern_check(data, len, seed)) >= 0) {
				snprintf(c, cl, "QP 0x%x: the last SEND's byte %zd differs from the "
					 "pattern", in->qpn[i], bad);
				return -EBADMSG;
			}
		} else if (t == RK_BENCH_WRITE && (!initiator || in->bidir || lat)) {
			if ((q->peer_sent || lat) && len &&
			    (bad = rk_pattern_check(data, len, seed)) >= 0) {
				snprintf(c, cl, "QP 0x%x: byte %zd of the written slot differs from the "
					 "pattern (expected 0x%02x, found 0x%02x)", in->qpn[i], bad,
					 rk_pattern_byte((size_t)bad, seed), data[bad]);
				return -EBADMSG;
			}
			if (lat && !initiator && q->received != q->peer_sent) {
				snprintf(c, cl, "answered %" PRIu64 " WRITEs where the peer sent %"
					 PRIu64, q->received, q->peer_sent);
				return -EBADMSG;
			}
		} else if (t == RK_BENCH_READ && initiator) {
			if ((bad = rk_pattern_check(out_slot(b, i), len, seed)) >= 0) {
				snprintf(c, cl, "QP 0x%x: byte %zd read differs from the peer's pattern",
					 in->qpn[i], bad);
				return -EBADMSG;
			}
		} else if (is_atomic(t) && (!initiator || in->bidir)) {
			uint64_t word;

			memcpy(&word, in_slot(b, i), 8);
			if (word != q->peer_sent) {
				snprintf(c, cl, "QP 0x%x: the word is %" PRIu64 " after the peer's %"
					 PRIu64 " %s; expected %" PRIu64, in->qpn[i], word,
					 q->peer_sent, t == RK_BENCH_FETCH_ADD ? "adds of 1" :
					 "compare-swaps (n -> n+1)", q->peer_sent);
				return -EBADMSG;
			}
		}
		if (is_atomic(t) && initiator) {
			uint64_t word;

			memcpy(&word, out_slot(b, i), 8);
			if (q->bad_returns || (q->completed && word != q->completed - 1)) {
				snprintf(c, cl, "QP 0x%x: the last %s returned %" PRIu64 ", expected %"
					 PRIu64 " (%" PRIu64 " returns not as due)", in->qpn[i],
					 bench_test_verb(t), word, q->completed - 1, q->bad_returns);
				return -EBADMSG;
			}
		}
	}
	check_summary(b, r, res, initiator, peer_total, recv_total);
	return 0;
}

/* Lock-step exchange of each QP's counts (through the stop protocol:
 * the server listens for its stop request until the client's first comes). */
static int send_result(struct rk_bench *b, uint32_t i)
{
	struct rk_msg m;

	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_BENCH_RESULT;
	m.u.bench_result.round = b->rounds;
	m.u.bench_result.qp = i;
	m.u.bench_result.elapsed_ns = b->elapsed_ns;
	m.u.bench_result.completed = b->q[i].completed;
	m.u.bench_result.received = b->q[i].received;
	return rk_ctl_send(b->conn->ctl, &m);
}

static int take_result(struct rk_bench *b, uint32_t i, int wait_ms)
{
	const struct rk_wire_bench_result *pr;
	struct rk_msg p;
	int ret;

	ret = soak_expect(b, RK_MSG_BENCH_RESULT, wait_ms, &p);
	if (ret)
		return ret;
	pr = &p.u.bench_result;
	if (pr->qp != i || pr->round != b->rounds) {
		rk_error("%s sent the result of QP %u in round %u where QP %u of round %u "
			 "was due", b->conn->peer, pr->qp, pr->round, i, b->rounds);
		return -EPROTO;
	}
	b->q[i].peer_sent = pr->completed;
	b->q[i].peer_received = pr->received;
	if (i == 0)
		b->peer_elapsed_ns = pr->elapsed_ns;
	return 0;
}

/* Per QP, the client's result and the server's answer; the client sends a
 * window of them before it reads the answers (rk_ctl_window). */
int bench_exchange_results(struct rk_bench *b, int wait_ms)
{
	uint32_t window = b->info.server ? 1 : rk_ctl_window(b->conn->ctl);
	int ret;

	for (uint32_t first = 0; first < b->info.qps; first += window) {
		uint32_t end = first + window < b->info.qps ? first + window : b->info.qps;

		for (uint32_t i = first; i < end; i++) {
			ret = b->info.server ? take_result(b, i, wait_ms) : 0;
			if (!ret)
				ret = send_result(b, i);
			if (ret)
				return ret;
		}
		for (uint32_t i = first; !b->info.server && i < end; i++) {
			ret = take_result(b, i, wait_ms);
			if (ret)
				return ret;
		}
	}
	return 0;
}

void bench_fill_result(struct rk_bench *b, const struct rk_bench_round *r,
			struct rk_bench_result *res, bool initiator, uint64_t peer_elapsed)
{
	const struct rk_bench_info *in = &b->info;
	uint64_t msgs = 0, peer_msgs = 0, min_iters = UINT64_MAX;
	uint64_t elapsed = b->elapsed_ns;

	for (uint32_t i = 0; i < in->qps; i++) {
		msgs += b->q[i].completed;
		peer_msgs += b->q[i].peer_sent;
		res->received += b->q[i].received;
		if (b->q[i].completed < min_iters)
			min_iters = b->q[i].completed;
	}
	res->initiator = initiator;
	if (!initiator) {
		/* The server reports what the client measured. */
		msgs = peer_msgs;
		elapsed = peer_elapsed;
		min_iters = UINT64_MAX;
		for (uint32_t i = 0; i < in->qps; i++)
			if (b->q[i].peer_sent < min_iters)
				min_iters = b->q[i].peer_sent;
	}
	res->iters = min_iters == UINT64_MAX ? 0 : min_iters;
	res->msgs = msgs;
	res->bytes = msgs * r->size;
	res->seconds = (double)elapsed / 1e9;
	if (elapsed) {
		res->bw_avg = (double)res->bytes * 1e9 / (double)elapsed;
		res->msg_rate = (double)msgs * 1e9 / (double)elapsed;
	}
	if (initiator && in->mode == RK_BENCH_BW) {
		uint64_t min_count = msgs / 10;

		if (min_count < in->signal_every)
			min_count = in->signal_every;
		res->bw_peak = rk_bench_peak_rate(b->samples, b->nsamples, min_count) * r->size;
		if (res->bw_peak < res->bw_avg)
			res->bw_peak = res->bw_avg;
	}
	if (in->bidir) {
		res->peer_msgs = peer_msgs;
		if (peer_elapsed)
			res->peer_bw_avg = (double)peer_msgs * r->size * 1e9 / (double)peer_elapsed;
	}
	if (in->mode == RK_BENCH_LAT && initiator) {
		unsigned int factor =
			in->test == RK_BENCH_SEND || in->test == RK_BENCH_WRITE ? 2 : 1;
		size_t n = res->iters;
		double scale = tick_ns(b);

		for (size_t k = 0; k < n; k++)
			b->lat[k] = (uint64_t)((double)b->lat[k] * scale + 0.5);
		rk_bench_lat_stats(b->lat, n, factor, &res->lat);
	}
}
