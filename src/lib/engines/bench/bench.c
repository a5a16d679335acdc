/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The benchmark engine's API and its rounds: names and rules, connecting,
 * one round (what runs, the start, the loops, the checks), closing. The
 * steps live in bench_setup.c, bench_post.c, bench_bw.c, bench_lat.c and
 * bench_check.c (bench_int.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/pattern.h>

#include "engines/bench/bench_int.h"
#include "verbs/srq_int.h"

/* ---- names and rules ---- */

static const char *const test_names[] = {
	[RK_BENCH_SEND] = "send",	  [RK_BENCH_WRITE] = "write",
	[RK_BENCH_READ] = "read",	  [RK_BENCH_FETCH_ADD] = "fetch-add",
	[RK_BENCH_CMP_SWAP] = "cmp-swap",
};

const char *rk_bench_test_str(enum rk_bench_test test)
{
	return (unsigned int)test <= RK_BENCH_CMP_SWAP ? test_names[test] : "unknown";
}

const char *rk_bench_mode_str(enum rk_bench_mode mode)
{
	return mode == RK_BENCH_BW ? "bw" : mode == RK_BENCH_LAT ? "lat" : "unknown";
}

int rk_bench_test_parse(const char *text, enum rk_bench_test *test_p)
{
	for (unsigned int i = 0; i <= RK_BENCH_CMP_SWAP; i++) {
		if (text && !strcmp(text, test_names[i])) {
			*test_p = (enum rk_bench_test)i;
			return 0;
		}
	}
	return -EINVAL;
}

int rk_bench_mode_parse(const char *text, enum rk_bench_mode *mode_p)
{
	if (text && !strcmp(text, "bw")) {
		*mode_p = RK_BENCH_BW;
		return 0;
	}
	if (text && !strcmp(text, "lat")) {
		*mode_p = RK_BENCH_LAT;
		return 0;
	}
	return -EINVAL;
}

int rk_bench_check(enum rk_bench_test test, enum rk_bench_mode mode, enum rk_transport transport,
		   uint32_t qps, bool bidir, char *why, size_t why_len)
{
	if ((unsigned int)test > RK_BENCH_CMP_SWAP || (unsigned int)mode > RK_BENCH_LAT ||
	    (unsigned int)transport > RK_UD) {
		snprintf(why, why_len, "unknown test, mode or transport");
		return -EINVAL;
	}
	if (transport == RK_UC && test != RK_BENCH_SEND && test != RK_BENCH_WRITE) {
		snprintf(why, why_len, "UC has no %s (UC carries send and write only)",
			 rk_bench_test_str(test));
		return -EINVAL;
	}
	if (transport == RK_UD && test != RK_BENCH_SEND) {
		snprintf(why, why_len, "UD has no %s (UD carries send only)",
			 rk_bench_test_str(test));
		return -EINVAL;
	}
	if (qps < 1 || qps > RK_BENCH_MAX_QPS) {
		snprintf(why, why_len, "%u QPs: 1 to %d are possible", qps, RK_BENCH_MAX_QPS);
		return -EINVAL;
	}
	if (mode == RK_BENCH_LAT && qps > 1) {
		snprintf(why, why_len, "latency runs on one QP (asked for %u)", qps);
		return -EINVAL;
	}
	if (mode == RK_BENCH_LAT && bidir) {
		snprintf(why, why_len, "latency is a ping-pong already; --bidir is for bandwidth");
		return -EINVAL;
	}
	return 0;
}

/* Client: the plan it announces: opts->plan's sizes, iters and duration
 * (none given: the one size max_size), the rest from opts. */
static int client_plan(struct rk_bench *b, const struct rk_bench_opts *opts, char *why,
		       size_t why_len)
{
	const struct rk_bench_info *in = &b->info;
	struct rk_bench_plan *p = &b->plan;

	*p = opts->plan;
	if (!p->nsizes)
		rk_bench_plan_sizes(p, &in->max_size, 1);
	p->test = in->test;
	p->mode = in->mode;
	p->transport = in->transport;
	p->qps = in->qps;
	p->threads = opts->threads > 1 ? opts->threads : 1;
	p->bidir = in->bidir;
	if (p->max_size != in->max_size || p->nsizes > UINT16_MAX ||
	    p->iters > UINT32_MAX) {
		snprintf(why, why_len, "the plan's sizes (%u, up to %u) do not fit max_size %u, or "
			 "its iters %" PRIu64 " are above %u", p->nsizes, p->max_size,
			 in->max_size, p->iters, UINT32_MAX);
		return -EINVAL;
	}
	return 0;
}

/* Client: what it asks for, checked before anything connects. 0, or a
 * negative errno with a sentence in why. */
static int client_params(struct rk_bench *b, const struct rk_bench_opts *opts, char *why,
			 size_t why_len)
{
	struct rk_bench_info *in = &b->info;
	int ret;

	in->test = opts->test;
	in->mode = opts->mode;
	in->transport = opts->transport;
	in->qps = opts->qps ? opts->qps : 1;
	in->bidir = opts->bidir;
	in->max_size = opts->max_size;
	ret = rk_bench_check(in->test, in->mode, in->transport, in->qps, in->bidir, why, why_len);
	if (!ret && opts->threads > 1) {
		in->threads = opts->threads;
		if (in->mode != RK_BENCH_BW) {
			snprintf(why, why_len, "threads are for bandwidth; latency is one ping-pong");
			ret = -EINVAL;
		} else if (opts->threads > RK_BENCH_MAX_THREADS || opts->threads > in->qps) {
			snprintf(why, why_len, "%u threads need as many QPs (have %u) and at most %d "
				 "threads", opts->threads, in->qps, RK_BENCH_MAX_THREADS);
			ret = -EINVAL;
		}
	}
	if (!ret && (uint64_t)in->qps * stride_for(in->max_size) > RK_BENCH_MAX_MEM / 2) {
		snprintf(why, why_len, "%u QPs of %u bytes need more than the %" PRIu64 " bytes a "
			 "bench side registers", in->qps, in->max_size, RK_BENCH_MAX_MEM);
		ret = -E2BIG;
	}
	if (!ret && (in->max_size < 1 || in->max_size > RK_BENCH_MAX_SIZE)) {
		snprintf(why, why_len, "size %u is outside 1..%u", in->max_size, RK_BENCH_MAX_SIZE);
		ret = -EINVAL;
	}
	if (!ret)
		ret = client_plan(b, opts, why, why_len);
	return ret;
}

/* What bench cannot do on an iWARP device, known once the control connection
 * has its device and before it connects: 0, or -EOPNOTSUPP with why. The
 * client knows the run from its options; the server learns it from the
 * client's first SETUP (bench_setup.c) and asks again then. */
int bench_iwarp_refusal(const struct rk_bench_info *in, const struct rk_device *dev, char *why,
			size_t why_len)
{
	if (!rk_device_is_iwarp(dev))
		return 0;
	if (in->transport != RK_RC)
		snprintf(why, why_len, "%s is an iWARP device: it has only RC QPs, no %s",
			 dev->info.name, rk_transport_str(in->transport));
	else if (is_atomic(in->test) && dev->info.atomic_cap == IBV_ATOMIC_NONE)
		snprintf(why, why_len, "%s has no atomics (atomic_cap %s; iWARP)", dev->info.name,
			 rk_atomic_cap_str(dev->info.atomic_cap));
	else
		return 0;
	return -EOPNOTSUPP;
}

/* The connection's request says "bench", so that an rc or ping server
 * refuses this client by name, and this server theirs. The data QPs and
 * buffers come later, over BENCH_SETUP. */
static int bench_request(struct rk_conn *conn, struct rk_wire_buf *request, int *qp_access,
			 char *why, size_t why_len, void *arg)
{
	struct rk_bench *b = arg;
	int ret;

	ret = bench_iwarp_refusal(&b->info, conn->dev, why, why_len);
	if (ret)
		return ret;
	memset(request, 0, sizeof(*request));
	request->op = RK_WIRE_OP_BENCH;
	*qp_access = 0;
	return 0;
}

/* Server on iWARP: a listener for this session's data QPs, each of which
 * connects through RDMA CM (as perftest -R connects each of its QPs), on a
 * port the kernel picks on the control connection's own address; the reply
 * names it (offset) with a token (addr) the data requests must echo. */
static int data_listen(struct rk_bench *b, struct rk_conn *conn, struct rk_wire_buf *reply,
		       char *reason, size_t reason_len)
{
	char host[NI_MAXHOST];
	struct sockaddr *sa = rdma_get_local_addr(conn->cm->id);
	socklen_t len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						    sizeof(struct sockaddr_in);
	int ret;

	if (getnameinfo(sa, len, host, sizeof(host), NULL, 0, NI_NUMERICHOST) ||
	    getrandom(&b->data_token, sizeof(b->data_token), 0) != sizeof(b->data_token)) {
		snprintf(reason, reason_len, "the server could not set up a listener for the "
			 "data QPs");
		rk_error("bench: a listener for %s's data QPs: no local address or token",
			 conn->peer);
		return -EIO;
	}
	ret = rk_cm_listen_ps(host, 0, RDMA_PS_TCP, &b->o.conn.traffic, &b->data_listener);
	if (ret) {
		snprintf(reason, reason_len, "the server could not listen for the data QPs: %s",
			 rk_strerror(ret));
		return ret;
	}
	b->data_port = ntohs(rdma_get_src_port(b->data_listener->id));
	b->cm_data = true;
	reply->offset = b->data_port;
	reply->addr = b->data_token;
	rk_debug("bench: data QPs of %s connect to port %u", conn->peer, b->data_port);
	return 0;
}

/* The data listener goes with the connection (also when its setup fails). */
static void bench_release(struct rk_conn *conn, void *arg)
{
	struct rk_bench *b = arg;
	struct rk_cm *listener = b->data_listener;

	(void)conn;
	b->data_listener = NULL;
	rk_cm_destroy(listener);
}

/* The connection's callbacks share one arg, bench's own: the caller's
 * on_listening is called with the caller's arg from here. */
static void bench_listening(void *arg)
{
	struct rk_bench *b = arg;

	b->caller_listening(b->caller_arg);
}

static int bench_judge(struct rk_conn *conn, const struct rk_wire_buf *request,
		       struct rk_wire_buf *reply, int *qp_access, char *reason, size_t reason_len,
		       void *arg)
{
	/* 0: a bench client from before bench had its code */
	if (request->op != RK_WIRE_OP_BENCH && request->op != 0) {
		rk_wire_op_refusal("bench", request->op, reason, reason_len);
		return -EPROTO;
	}
	memset(reply, 0, sizeof(*reply));
	*qp_access = 0;
	if (conn->cm_mode && rk_device_is_iwarp(conn->dev))
		return data_listen(arg, conn, reply, reason, reason_len);
	return 0;
}

/* Connect (pending: a server's client already accepted, else as opts says). */
static int bench_connect(const struct rk_bench_opts *opts, struct rk_conn *pending,
			 struct rk_bench **bench_p)
{
	struct rk_bench *b;
	char why[200] = "";
	int ret;

	uint64_t c_t0 = now_ns(), c_tk0 = ticks();

	if (opts->xrc) {
		rk_conn_close(pending);
		return rk_srq_xrc_refuse("bench", opts->conn.device);
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		rk_conn_close(pending);
		return -ENOMEM;
	}
	b->o = *opts;
	b->info.server = opts->conn.server;
	b->info.cm = opts->conn.cm;
	b->info.threads = 1;
	if (!b->info.server) {
		ret = client_params(b, opts, why, sizeof(why));
		if (ret) {
			rk_error("bench: %s", why);
			free(b);
			return ret;
		}
	}
	ret = pending ? 0 : bench_mem_precheck(opts);
	if (ret) {
		free(b);
		return ret;
	}
	b->o.conn.transport = RK_RC; /* the control connection */
	b->o.conn.ctl_keep_receives = 2; /* the data QPs are others */
	b->o.conn.prepare = bench_request;
	b->o.conn.on_request = bench_judge;
	b->o.conn.release = bench_release;
	b->caller_listening = opts->conn.on_listening;
	b->caller_arg = opts->conn.arg;
	b->o.conn.on_listening = opts->conn.on_listening ? bench_listening : NULL;
	b->o.conn.arg = b;
	if (pending)
		ret = rk_conn_establish_accepted(pending, &b->o.conn, &b->conn);
	else
		ret = rk_conn_establish(&b->o.conn, &b->conn);
	if (ret) {
		free(b);
		return ret;
	}
	b->wait_ms = b->conn->timeout_ms;
	snprintf(b->info.peer, sizeof(b->info.peer), "%s", b->conn->peer);
	ret = bench_setup(b);
	if (ret)
		goto err_close;
	/* Ticks to nanoseconds for the loops' deadlines, over the whole
	 * connect (milliseconds at least); each round measures its own. */
	{
		uint64_t dt = now_ns() - c_t0, dtk = ticks() - c_tk0;

		b->tick_est = dt && dtk ? (double)dt / (double)dtk : 1.0;
	}
	*bench_p = b;
	return 0;

err_close:
	b->rounds = UINT32_MAX; /* nothing to tell the peer at close */
	rk_bench_close(b);
	return ret;
}

int rk_bench_connect(const struct rk_bench_opts *opts, struct rk_bench **bench_p)
{
	return bench_connect(opts, NULL, bench_p);
}

int bench_connect_accepted(struct rk_conn *pending, const struct rk_bench_opts *opts,
			   struct rk_bench **bench_p)
{
	return bench_connect(opts, pending, bench_p);
}

const struct rk_bench_info *rk_bench_get_info(const struct rk_bench *b)
{
	return &b->info;
}

void bench_progress(struct rk_bench *b, const struct rk_bench_round *r, uint64_t now,
		     uint64_t done, uint64_t total)
{
	struct rk_bench_progress p;

	if (!b->o.progress || now < b->next_progress)
		return;
	b->next_progress = now + PROGRESS_NS;
	p.round = b->rounds;
	p.size = r->size;
	p.elapsed_s = (double)(now - b->t0) / 1e9;
	p.done = done;
	p.total = total;
	p.duration_s = r->duration_ms / 1000.0;
	p.rate = p.elapsed_s > 0 ? (double)done * r->size / p.elapsed_s : 0;
	b->o.progress(&p, b->o.progress_arg);
}

static bool round_ok(struct rk_bench *b, const struct rk_bench_round *r, char *why, size_t len)
{
	if (r->size < 1 || r->size > b->info.max_size) {
		snprintf(why, len, "size %u is outside 1..%u (the size set up)", r->size,
			 b->info.max_size);
		return false;
	}
	if (is_atomic(b->info.test) && r->size != 8) {
		snprintf(why, len, "atomics work on 8 bytes (asked for %u)", r->size);
		return false;
	}
	if (b->info.transport == RK_UD && r->size > (uint32_t)b->info.path_mtu) {
		snprintf(why, len, "UD size %u is above the path MTU %d", r->size, b->info.path_mtu);
		return false;
	}
	if (!r->iters == !r->duration_ms) {
		snprintf(why, len, "give either iterations or a duration");
		return false;
	}
	if (r->iters > UINT32_MAX) {
		snprintf(why, len, "at most %u iterations per QP (asked %" PRIu64 ")", UINT32_MAX,
			 r->iters);
		return false;
	}
	return true;
}

static int prepare(struct rk_bench *b, const struct rk_bench_round *r, bool receiving)
{
	uint32_t seed = seed_of(b->rounds, r->size);
	int ret;

	for (uint32_t i = 0; i < b->info.qps; i++) {
		struct bqp *q = &b->q[i];

		q->carry = q->unsig;
		q->unsig = 0;
		q->posted = q->completed = 0;
		q->target = r->iters ? r->iters : UINT64_MAX;
		q->sentinel_posted = q->sentinel_done = false;
		q->received = 0;
		q->expected = 0;
		q->got_sentinel = false;
		q->peer_sent = q->peer_received = 0;
		q->bad_returns = 0;
		q->bad_data = 0;
		q->bad_at = -1;
		if (b->info.test == RK_BENCH_READ) {
			/* the peer reads the in-slot into its out-slot */
			memset(out_slot(b, i), 0, b->stride);
			rk_pattern_fill(in_slot(b, i), r->size, seed);
		} else {
			rk_pattern_fill(out_slot(b, i), r->size, seed);
			memset(in_slot(b, i), 0, b->stride);
		}
		if (is_atomic(b->info.test))
			memset(out_slot(b, i), 0, 8);
		if (receiving && !b->srq && q->rq_out < b->info.rx_depth) {
			ret = bench_post_recvs(b, i, b->info.rx_depth - q->rq_out);
			if (ret)
				return ret;
		}
	}
	b->round_size = r->size;
	b->round_seed = seed;
	if (receiving && b->srq) {
		ret = rk_srq_fill(b->srq);
		if (ret)
			return ret;
	}
	/* Large messages: keep at most INFLIGHT_BYTES outstanding per QP. A
	 * software device drops packets past its queues when flooded, and each
	 * drop costs an RC retransmit timeout. */
	b->depth = b->info.tx_depth;
	if (b->info.mode == RK_BENCH_BW && (uint64_t)r->size * b->depth > b->info.inflight) {
		b->depth = (uint32_t)(b->info.inflight / r->size);
		if (b->depth < 4)
			b->depth = 4;
	}
	b->plist = b->info.post_list;
	if (b->plist > b->depth / 2)
		b->plist = b->depth / 2 ? b->depth / 2 : 1;
	b->se = b->info.signal_every;
	if (b->se > b->depth - b->plist)
		b->se = b->depth - b->plist;
	if (b->info.mode == RK_BENCH_LAT)
		b->se = b->info.signal_every;
	b->nsamples = 0;
	b->t_last = 0;
	b->elapsed_ns = 0;
	return 0;
}

/* Client: check the round and tell the server what runs. */
static int client_round(struct rk_bench *b, const struct rk_bench_round *r)
{
	struct rk_msg m;
	char why[200];

	if (!round_ok(b, r, why, sizeof(why))) {
		rk_error("bench round %u: %s", b->rounds, why);
		return -EINVAL;
	}
	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_BENCH_ROUND;
	m.u.bench_round.round = b->rounds;
	m.u.bench_round.size = r->size;
	m.u.bench_round.iters = r->iters;
	m.u.bench_round.duration_ms = r->duration_ms;
	return rk_ctl_send(b->conn->ctl, &m);
}

/* Server: the client's next round into *r, or 1 when it has finished. */
static int server_round(struct rk_bench *b, struct rk_bench_round *r)
{
	struct rk_ctl *ctl = b->conn->ctl;
	struct rk_msg m;
	char why[200];
	int ret;

	ret = rk_ctl_recv(ctl, b->wait_ms * 6, &m);
	if (ret)
		return ret;
	if (m.type == RK_MSG_BENCH_FIN) {
		b->rounds = UINT32_MAX;
		return 1;
	}
	if (m.type != RK_MSG_BENCH_ROUND || m.u.bench_round.round != b->rounds) {
		snprintf(why, sizeof(why), "a %s message (round %u) where round %u was due",
			 rk_msg_type_str(m.type),
			 m.type == RK_MSG_BENCH_ROUND ? m.u.bench_round.round : 0, b->rounds);
		rk_error("bench: %s from %s", why, b->conn->peer);
		rk_ctl_send_error(ctl, -EPROTO, "%s", why);
		return -EPROTO;
	}
	r->size = m.u.bench_round.size;
	r->iters = m.u.bench_round.iters;
	r->duration_ms = m.u.bench_round.duration_ms;
	if (!round_ok(b, r, why, sizeof(why))) {
		rk_error("refusing round %u from %s: %s", b->rounds, b->conn->peer, why);
		rk_ctl_send_error(ctl, -EINVAL, "the server refused: %s", why);
		return -EINVAL;
	}
	return 0;
}

/* The round's loop for this side's part. */
static int run_loops(struct rk_bench *b, const struct rk_bench_round *r, bool initiator,
		     bool receiving)
{
	const struct rk_bench_info *in = &b->info;

	if (in->mode == RK_BENCH_LAT) {
		if (in->test == RK_BENCH_SEND)
			return bench_run_send_lat(b, r, !in->server);
		if (in->test == RK_BENCH_WRITE)
			return bench_run_write_lat(b, r, !in->server);
		if (!in->server)
			return bench_run_rdma_lat(b, r);
		return 0;
	}
	if (initiator || receiving)
		return bench_run_bw(b, r, initiator, receiving);
	return 0;
}

/* After the loops: the counts both ways, this side's check, and the sync
 * that tells each side the other's verdict. */
static int finish_round(struct rk_bench *b, const struct rk_bench_round *r,
			struct rk_bench_result *res, bool initiator)
{
	struct rk_ctl *ctl = b->conn->ctl;
	int ret, verdict, wait_ms;

	/* The passive side waits as long as the run may take: until stopped, no
	 * bound (the server listens for its own stop request meanwhile). */
	if (r->duration_ms == RK_BENCH_UNTIL_STOPPED)
		wait_ms = b->info.server ? -1 : b->wait_ms * 6;
	else
		wait_ms = b->wait_ms * 6 + (int)r->duration_ms;
	ret = bench_exchange_results(b, wait_ms);
	if (ret)
		return ret;
	verdict = bench_check_round(b, r, res, initiator);
	if (verdict)
		rk_error("bench round %u (%u bytes): check failed: %s", b->rounds, r->size,
			 res->check);
	ret = rk_ctl_sync(ctl, STEP_CHECK + b->rounds % 256, verdict, b->wait_ms);
	if (ret && !verdict) {
		snprintf(res->peer_check, sizeof(res->peer_check), "failed: %s", rk_strerror(ret));
		return ret;
	}
	if (verdict)
		return verdict;
	snprintf(res->peer_check, sizeof(res->peer_check), "passed");
	bench_fill_result(b, r, res, initiator, b->peer_elapsed_ns);
	res->stopped = b->soak.stopped;
	res->stopped_by_peer = b->soak.by_peer;
	res->intervals = b->soak.range;
	return 0;
}

static int run_round(struct rk_bench *b, const struct rk_bench_round *round,
		     struct rk_bench_result *res)
{
	struct rk_ctl *ctl = b->conn->ctl;
	const struct rk_bench_info *in = &b->info;
	struct rk_bench_round r;
	bool initiator, receiving, lat = in->mode == RK_BENCH_LAT;
	int ret;

	memset(res, 0, sizeof(*res));
	if (!in->server) {
		r = *round;
		ret = client_round(b, &r);
	} else {
		ret = server_round(b, &r);
	}
	if (ret)
		return ret;
	res->index = b->rounds;
	res->round = r;
	initiator = !in->server || in->bidir;
	receiving = in->test == RK_BENCH_SEND && (lat || in->server || in->bidir);
	ret = prepare(b, &r, receiving);
	ret = rk_ctl_sync(ctl, STEP_START + b->rounds % 256, ret, b->wait_ms);
	if (ret)
		return ret;
	b->t0 = now_ns();
	b->tk0 = ticks();
	res->start_ns = b->t0;
	b->next_progress = b->t0 + PROGRESS_NS;
	soak_begin(b, &r, lat ? !in->server : initiator);
	ret = run_loops(b, &r, initiator, receiving);
	soak_end(b, &r, ret);
	if (ret) {
		rk_ctl_send_error(ctl, ret, "the %s's round failed: %s",
				  in->server ? "server" : "client", rk_strerror(ret));
		return ret;
	}
	ret = finish_round(b, &r, res, initiator);
	if (ret)
		return ret;
	b->rounds++;
	return 0;
}

int rk_bench_run(struct rk_bench *b, const struct rk_bench_round *round,
		 struct rk_bench_result *res)
{
	struct rk_run_counters counters = {0};
	int ret;

	memset(&res->counters, 0, sizeof(res->counters));
	if (b->rounds == UINT32_MAX) {
		rk_error("bench: the session with %s has ended", b->conn->peer);
		return -ENOTCONN;
	}
	/* run_round() clears res: the round's counters go in after it. */
	rk_run_counters_start(&counters, b->conn->dev, b->conn->port_num);
	ret = run_round(b, round, res);
	rk_run_counters_stop(&counters);
	res->counters = counters;
	if (b->srq)
		rk_srq_get_stats(b->srq, &res->srq);
	if (ret < 0)
		b->rounds = UINT32_MAX; /* over: nothing more to tell the peer */
	return ret;
}

void rk_bench_close(struct rk_bench *b)
{
	if (!b)
		return;
	if (!b->info.server && b->rounds != UINT32_MAX && b->conn && b->q) {
		struct rk_msg m;

		memset(&m, 0, sizeof(m));
		m.type = RK_MSG_BENCH_FIN;
		rk_ctl_send(b->conn->ctl, &m);
	}
	if (b->q) {
		for (uint32_t i = 0; i < b->info.qps; i++) {
			if (b->q[i].ah)
				ibv_destroy_ah(b->q[i].ah);
			/* cm_data: the QP to ERR and the connection closed first */
			rk_cm_disconnect(b->q[i].cm, 1000);
			rk_qp_destroy(b->q[i].qp);
			rk_cm_destroy(b->q[i].cm);
		}
	}
	rk_srq_destroy(b->srq);
	free(b->qpn_sorted);
	rk_region_free(b->region);
	for (uint32_t k = 0; b->w && k < b->nworkers; k++) {
		rk_cq_destroy(b->w[k].scq);
		rk_cq_destroy(b->w[k].rcq);
		free(b->w[k].wc);
		free(b->w[k].samples);
	}
	free(b->w);
	rk_conn_close(b->conn);
	free(b->q);
	free(b->lat);
	free(b->samples);
	soak_free(b);
	free(b);
}
