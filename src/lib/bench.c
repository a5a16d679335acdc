/* The benchmark engine: setup of the data QPs over a connection's control
 * channel, the bandwidth and latency loops, and the checks after each round.
 *
 * Memory: one registered buffer per side, 2 x qps slots of `stride` bytes.
 * Slot i ("out") is what QP i sends and writes from, and where its READs and
 * atomic results land; slot qps + i ("in") is what the peer's QP i writes,
 * reads, sends into and operates on. The peer learns the in-slots' address
 * and rkey in the setup exchange. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <rdmakit/bench.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/mem.h>
#include <rdmakit/ops.h>
#include <rdmakit/pattern.h>
#include <rdmakit/status.h>

/* Codes in the control messages' op field (HELLO messages of wire.h). */
#define BM_SETUP 0xBE000001u
#define BM_ROUND 0xBE000002u
#define BM_RESULT 0xBE000003u
#define BM_FIN 0xBE000004u

#define STEP_SETUP 0xB000u
#define STEP_START 0xB100u
#define STEP_CHECK 0xB200u

#define UD_GRH 40
#define MAX_POST_LIST 64
#define MAX_CQ_BATCH 256
#define INLINE_ASK 1024
#define LOSSY_IDLE_MS 3000
#define LAT_STOP 0xffu
#define INFLIGHT_BYTES RK_BENCH_INFLIGHT_BYTES
#define PROGRESS_NS 200000000ull
/* Bandwidth's busy polling gives the CPU away after this many empty polls
 * in a row: on a software device (rxe, siw) the kernel threads that move the
 * packets need the CPU the pollers spin on. A knob (yield_after): on
 * hardware, 0 (never) may be better. */
#define YIELD_AFTER 8

static inline void maybe_yield(const struct rk_bench *b, uint32_t empty);

/* wr_id: QP index in bits 48..62, the number of requests a signaled
 * completion covers in the low 32 bits; bit 63 marks the end-of-round SEND. */
#define WRID_SENTINEL (1ull << 63)
#define WRID_QP(id) ((uint32_t)(((id) >> 48) & 0x7fff))
#define WRID_COUNT(id) ((uint32_t)(id))

struct bqp {
	struct rk_qp *qp;
	struct ibv_qp_ex *qpx; /* the ibv_wr_* API, when used */
	struct ibv_ah *ah;     /* UD */
	struct rk_endpoint remote;
	uint64_t raddr;        /* the peer's in-slot for this QP */
	uint32_t rkey;
	struct ibv_send_wr wr[MAX_POST_LIST];
	struct ibv_sge sge[MAX_POST_LIST];
	struct ibv_recv_wr rwr[MAX_POST_LIST];
	struct ibv_sge rsge;
	/* one round's state */
	uint64_t target, posted, completed;
	uint32_t unsig;         /* requests posted since the last signaled one */
	uint32_t carry;         /* unsignaled requests left from the last round */
	bool sentinel_posted, sentinel_done;
	uint64_t received, expected;
	bool got_sentinel;
	uint32_t rq_out;        /* receives outstanding */
	uint64_t peer_sent, peer_received;
	uint64_t bad_returns;   /* atomics latency: returned values not as due */
};

/* A bandwidth worker: a range of QPs with CQs of their own, run by one
 * thread. Latency and the server use the first worker only. */
struct bworker {
	struct rk_bench *b;
	uint32_t first, count;  /* its QPs */
	struct rk_cq *scq, *rcq;
	struct ibv_wc *wc;
	/* one round */
	const struct rk_bench_round *r;
	bool sending, receiving;
	struct rk_bench_sample *samples; /* t_ns in ticks from the round's start */
	size_t nsamples, samples_cap;
	uint64_t tk_last;       /* ticks() at its last completion */
	uint64_t done;          /* completed so far, for the progress line (atomic) */
	int ret;
	pthread_t tid;
};

struct rk_bench {
	struct rk_bench_opts o;
	struct rk_conn *conn;
	struct rk_bench_info info;
	struct bworker *w;
	uint32_t nworkers;
	int abort;            /* a worker failed: the others stop (atomic) */
	double tick_est;      /* ns per tick, measured while connecting */
	struct rk_mr *mr;
	size_t stride;
	int access;           /* remote access this side grants */
	uint64_t ops_flags;   /* for the ibv_wr_* API */
	struct bqp *q;
	uint32_t rounds;
	uint64_t *lat;
	size_t lat_cap;
	struct rk_bench_sample *samples;
	size_t nsamples, samples_cap;
	uint64_t t0, t_last, elapsed_ns;
	uint64_t tk0, tk_last;  /* ticks() at t0 and t_last: the round's scale */
	uint64_t peer_elapsed_ns;
	/* this round's send queue use: outstanding requests, doorbell batch,
	 * signaling interval (fewer outstanding for large messages) */
	uint32_t depth, plist, se;
	uint64_t next_progress;
	int wait_ms;          /* bound on waits for the peer */
};

static inline void maybe_yield(const struct rk_bench *b, uint32_t empty)
{
	uint32_t n = b->info.yield_after;

	if (n && empty % n == 0)
		sched_yield();
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Timestamps inside the latency loops. Where the kernel's clocksource is not
 * the TSC (hpet in a QEMU guest) clock_gettime() costs about a microsecond,
 * a tenth of a ping-pong on rxe; perftest reads the cycle counter, and so do
 * we on x86. Ticks become nanoseconds with the ratio measured against
 * CLOCK_MONOTONIC over the same round: no CPU frequency is trusted. */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return now_ns();
#endif
}

/* Close a round: its end in both clocks, which gives the ticks' scale. */
static void round_end(struct rk_bench *b)
{
	b->tk_last = ticks();
	b->t_last = now_ns();
	b->elapsed_ns = b->t_last - b->t0;
}

/* Nanoseconds per tick over the round (1 where ticks are nanoseconds). */
static double tick_ns(const struct rk_bench *b)
{
	if (b->tk_last <= b->tk0 || b->t_last <= b->t0)
		return 1.0;
	return (double)(b->t_last - b->t0) / (double)(b->tk_last - b->tk0);
}

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

static bool is_atomic(enum rk_bench_test t)
{
	return t == RK_BENCH_FETCH_ADD || t == RK_BENCH_CMP_SWAP;
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

/* ---- memory ---- */

static uint8_t *out_slot(struct rk_bench *b, uint32_t i)
{
	return (uint8_t *)b->mr->buf + (size_t)i * b->stride;
}

static uint8_t *in_slot(struct rk_bench *b, uint32_t i)
{
	return (uint8_t *)b->mr->buf + (size_t)(b->info.qps + i) * b->stride;
}

static size_t stride_for(uint32_t max_size)
{
	return ((size_t)max_size + UD_GRH + 63) & ~(size_t)63;
}

/* The remote access the side that is the target needs. */
static int remote_access_for(enum rk_bench_test t)
{
	switch (t) {
	case RK_BENCH_WRITE: return IBV_ACCESS_REMOTE_WRITE;
	case RK_BENCH_READ: return IBV_ACCESS_REMOTE_READ;
	case RK_BENCH_FETCH_ADD:
	case RK_BENCH_CMP_SWAP: return IBV_ACCESS_REMOTE_ATOMIC;
	default: return 0;
	}
}

/* Whether this side is the target of the peer's operations. */
static bool is_target(const struct rk_bench_info *in)
{
	if (in->server || in->bidir)
		return true;
	/* write latency: the server writes its pong into the client */
	return in->mode == RK_BENCH_LAT && in->test == RK_BENCH_WRITE;
}

static uint64_t ops_flags_for(enum rk_bench_test t)
{
	switch (t) {
	case RK_BENCH_SEND: return IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	case RK_BENCH_WRITE: return IBV_QP_EX_WITH_RDMA_WRITE;
	case RK_BENCH_READ: return IBV_QP_EX_WITH_RDMA_READ;
	case RK_BENCH_FETCH_ADD: return IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	case RK_BENCH_CMP_SWAP: return IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	}
	return 0;
}

static enum ibv_qp_type qp_type(enum rk_transport t)
{
	return t == RK_UD ? IBV_QPT_UD : t == RK_UC ? IBV_QPT_UC : IBV_QPT_RC;
}

/* ---- choosing the fast path from the device ---- */

/* Create and destroy a throwaway QP: does the provider take these caps (and
 * the ibv_wr_* API when ops is not 0)? Quiet: probing is expected to fail. */
static int probe_qp(struct rk_bench *b, uint64_t ops, uint32_t inl, uint32_t *granted_p)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	memset(&a, 0, sizeof(a));
	a.send_cq = b->w[0].scq->cq;
	a.recv_cq = b->w[0].rcq->cq;
	a.qp_type = qp_type(b->info.transport);
	a.cap.max_send_wr = b->info.tx_depth;
	a.cap.max_recv_wr = b->info.rx_depth;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = inl;
	a.pd = b->conn->pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = ops;
	}
	errno = 0;
	qp = ibv_create_qp_ex(b->conn->dev->ctx, &a);
	if (!qp)
		return errno ? -errno : -EINVAL;
	if (granted_p)
		*granted_p = a.cap.max_inline_data;
	ibv_destroy_qp(qp);
	return 0;
}

/* The inline size the provider grants, asking for want first and halving
 * while it refuses (a few creates: providers grant powers of two, or round a
 * request up, which the read-back shows). */
static int probe_inline(struct rk_bench *b, uint64_t ops, uint32_t want, uint32_t *granted_p)
{
	uint32_t ask = want, granted = 0;
	int ret;

	for (;;) {
		ret = probe_qp(b, ops, ask, &granted);
		if (!ret || !ask)
			break;
		ask /= 2;
	}
	if (ret)
		return ret;
	*granted_p = granted;
	return 0;
}

static int choose_fast_path(struct rk_bench *b)
{
	const struct rk_bench_tuning *t = &b->o.tuning;
	struct rk_bench_info *in = &b->info;
	const struct rk_device_info *di = &b->conn->dev->info;
	bool lat = in->mode == RK_BENCH_LAT;
	uint32_t granted = 0;
	int ret;

	in->tx_depth = t->tx_depth ? t->tx_depth : lat ? 64 : 512;
	in->rx_depth = t->rx_depth ? t->rx_depth : lat ? 64 : 512;
	if (in->tx_depth > (uint32_t)di->max_qp_wr)
		in->tx_depth = (uint32_t)di->max_qp_wr;
	if (in->rx_depth > (uint32_t)di->max_qp_wr)
		in->rx_depth = (uint32_t)di->max_qp_wr;
	in->post_list = t->post_list ? t->post_list : lat ? 1 : 16;
	in->signal_every = t->signal_every ? t->signal_every : lat ? 16 : 64;
	in->cq_batch = t->cq_batch ? t->cq_batch : 32;
	in->inflight = t->inflight ? t->inflight : INFLIGHT_BYTES;
	in->max_rd_atomic = (uint32_t)di->max_qp_init_rd_atom;
	/* Measured on rxe in a 2-CPU guest: bandwidth gains from yielding
	 * early (the kernel moves the packets), a ping-pong loses. */
	in->yield_after = t->yield_after >= 0 ? (uint32_t)t->yield_after : lat ? 0 : YIELD_AFTER;
	if (in->post_list > MAX_POST_LIST || in->cq_batch > MAX_CQ_BATCH) {
		rk_error("bench: post lists of at most %d and CQ batches of at most %d (asked %u, "
			 "%u)", MAX_POST_LIST, MAX_CQ_BATCH, in->post_list, in->cq_batch);
		return -EINVAL;
	}
	/* Progress needs a signaled request among those outstanding. */
	if (in->post_list + in->signal_every > in->tx_depth) {
		if (t->signal_every && t->post_list && t->tx_depth) {
			rk_error("bench: post list %u + signal every %u exceeds the send queue "
				 "depth %u: raise --tx-depth", in->post_list, in->signal_every,
				 in->tx_depth);
			return -EINVAL;
		}
		while (in->post_list + in->signal_every > in->tx_depth && in->signal_every > 1)
			in->signal_every /= 2;
		while (in->post_list + in->signal_every > in->tx_depth && in->post_list > 1)
			in->post_list /= 2;
	}
	if (in->rx_depth < 2 * in->post_list)
		in->rx_depth = 2 * in->post_list;

	b->ops_flags = ops_flags_for(in->test);
	in->wr_api = false;
	if (b->o.tuning.wr_api != 0) {
		ret = probe_qp(b, b->ops_flags, 0, NULL);
		if (!ret) {
			in->wr_api = true;
			snprintf(in->wr_api_why, sizeof(in->wr_api_why),
				 "ibv_wr_* (ibv_qp_ex, send_ops_flags 0x%" PRIx64 ") for SGE requests, "
				 "ibv_post_send lists for inline ones", b->ops_flags);
		} else if (b->o.tuning.wr_api > 0) {
			rk_error("bench: %s has no ibv_wr_* API for %s QPs (ibv_create_qp_ex with "
				 "send_ops_flags: %s)", di->name, rk_transport_str(in->transport),
				 rk_strerror(ret));
			return -EOPNOTSUPP;
		} else {
			snprintf(in->wr_api_why, sizeof(in->wr_api_why),
				 "ibv_post_send: %s refuses send_ops_flags (%s)", di->name,
				 rk_strerror(ret));
		}
	} else {
		snprintf(in->wr_api_why, sizeof(in->wr_api_why), "ibv_post_send (asked)");
	}
	in->inline_asked = b->o.tuning.inline_max < 0 ? INLINE_ASK : (uint32_t)b->o.tuning.inline_max;
	in->inline_granted = 0;
	if (in->inline_asked) {
		ret = probe_inline(b, in->wr_api ? b->ops_flags : 0, in->inline_asked, &granted);
		if (ret) {
			rk_error("bench: %s refuses a %s QP of %u/%u WRs even without inline data: "
				 "%s", di->name, rk_transport_str(in->transport), in->tx_depth,
				 in->rx_depth, rk_strerror(ret));
			return ret;
		}
		in->inline_granted = granted;
		/* Use what was asked for, at most: a provider may round up. */
		if (b->o.tuning.inline_max >= 0 && granted > in->inline_asked)
			in->inline_granted = in->inline_asked;
	}
	return 0;
}

/* ---- setup ---- */

/* Entries for qps QPs of depth each (and one more), within the device's limit. */
static int cq_size(const struct rk_device *dev, uint32_t qps, uint32_t depth)
{
	uint64_t n = (uint64_t)qps * (depth + 1);

	return n > (uint64_t)dev->info.max_cqe ? dev->info.max_cqe : (int)n;
}

static int create_local(struct rk_bench *b)
{
	struct rk_bench_info *in = &b->info;
	struct rk_device *dev = b->conn->dev;
	struct rk_qp_init_attr qa;
	int ret;

	in->path_mtu = 0;
	in->device[0] = '\0';
	snprintf(in->device, sizeof(in->device), "%s", dev->info.name);
	in->port_num = b->conn->port_num;
	in->has_gid = b->conn->has_gid;
	if (in->has_gid) {
		in->gid_index = b->conn->gid.index;
		rk_gid_str(&b->conn->gid.gid, in->gid, sizeof(in->gid));
	}
	/* Workers, each with its own CQs: probing needs the first's. The QPs
	 * are split into contiguous ranges. CQs are sized for the deepest use. */
	b->nworkers = in->threads;
	b->w = calloc(b->nworkers, sizeof(*b->w));
	if (!b->w)
		return -ENOMEM;
	in->tx_depth = b->o.tuning.tx_depth ? b->o.tuning.tx_depth : 512;
	in->rx_depth = b->o.tuning.rx_depth ? b->o.tuning.rx_depth : 512;
	for (uint32_t k = 0; k < b->nworkers; k++) {
		struct bworker *w = &b->w[k];

		w->b = b;
		w->first = (uint32_t)((uint64_t)k * in->qps / b->nworkers);
		w->count = (uint32_t)((uint64_t)(k + 1) * in->qps / b->nworkers) - w->first;
		ret = rk_cq_create(dev, cq_size(dev, w->count, in->tx_depth), false, &w->scq);
		if (!ret)
			ret = rk_cq_create(dev, cq_size(dev, w->count, in->rx_depth), false,
					   &w->rcq);
		if (ret)
			return ret;
	}
	ret = choose_fast_path(b);
	if (ret)
		return ret;
	for (uint32_t k = 0; k < b->nworkers; k++) {
		b->w[k].wc = calloc(in->cq_batch, sizeof(*b->w[k].wc));
		if (!b->w[k].wc)
			return -ENOMEM;
	}

	b->stride = stride_for(in->max_size);
	b->access = is_target(in) ? remote_access_for(in->test) : 0;
	ret = rk_mr_alloc(b->conn->pd, 2 * in->qps * b->stride, IBV_ACCESS_LOCAL_WRITE | b->access,
			  &b->mr);
	if (ret)
		return ret;

	memset(&qa, 0, sizeof(qa));
	qa.transport = in->transport;
	qa.port_num = b->conn->port_num;
	qa.max_send_wr = in->tx_depth;
	qa.max_recv_wr = in->rx_depth;
	qa.max_inline_data = in->inline_granted;
	qa.gid = b->conn->has_gid ? &b->conn->gid : NULL;
	b->q = calloc(in->qps, sizeof(*b->q));
	if (!b->q)
		return -ENOMEM;
	for (uint32_t i = 0, k = 0; i < in->qps; i++) {
		struct bqp *q = &b->q[i];
		struct bworker *w;

		while (i >= b->w[k].first + b->w[k].count)
			k++;
		w = &b->w[k];
		if (in->wr_api)
			ret = rk_qp_create_ex(b->conn->pd, dev, w->scq, w->rcq, &qa, b->ops_flags,
					      &q->qp);
		else
			ret = rk_qp_create(b->conn->pd, dev, w->scq, w->rcq, &qa, &q->qp);
		if (ret)
			return ret;
		if (in->wr_api)
			q->qpx = ibv_qp_to_qp_ex(q->qp->qp);
		/* What the provider granted this QP, not what was asked. */
		if (q->qp->cap.max_inline_data < in->inline_granted)
			in->inline_granted = q->qp->cap.max_inline_data;
		in->qpn[i] = q->qp->qp->qp_num;
	}
	return 0;
}

static void setup_msg(struct rk_bench *b, uint32_t i, struct rk_msg *m)
{
	const struct rk_bench_info *in = &b->info;

	memset(m, 0, sizeof(*m));
	m->type = RK_MSG_HELLO;
	rk_qp_local_endpoint(b->q[i].qp, &m->u.hello.ep);
	m->u.hello.buf.addr = (uintptr_t)in_slot(b, 0);
	m->u.hello.buf.len = (uint64_t)in->qps * b->stride;
	m->u.hello.buf.rkey = b->mr->mr->rkey;
	m->u.hello.buf.op = BM_SETUP;
	m->u.hello.buf.size = in->max_size;
	m->u.hello.buf.offset = (uint64_t)in->test | (uint64_t)in->mode << 8 |
				(uint64_t)in->transport << 16 | (uint64_t)in->bidir << 24 |
				(uint64_t)in->qps << 32 | (uint64_t)i << 48;
}

/* Server: what the client asks for, from its first SETUP. */
static int learn_setup(struct rk_bench *b, const struct rk_msg *m, char *why, size_t why_len)
{
	struct rk_bench_info *in = &b->info;
	uint64_t v = m->u.hello.buf.offset;

	if (m->u.hello.buf.op != BM_SETUP) {
		snprintf(why, why_len, "expected a bench SETUP message (op 0x%x), got op 0x%x",
			 BM_SETUP, m->u.hello.buf.op);
		return -EPROTO;
	}
	in->test = (enum rk_bench_test)(v & 0xff);
	in->mode = (enum rk_bench_mode)((v >> 8) & 0xff);
	in->transport = (enum rk_transport)((v >> 16) & 0xff);
	in->bidir = (v >> 24) & 0xff;
	in->qps = (uint32_t)((v >> 32) & 0xffff);
	in->max_size = m->u.hello.buf.size;
	if (((v >> 24) & 0xff) > 1 || ((v >> 48) & 0xffff) != 0) {
		snprintf(why, why_len, "malformed SETUP parameters 0x%" PRIx64, v);
		return -EBADMSG;
	}
	if (in->max_size < 1 || in->max_size > RK_BENCH_MAX_SIZE) {
		snprintf(why, why_len, "size %u is outside 1..%u", in->max_size, RK_BENCH_MAX_SIZE);
		return -EINVAL;
	}
	if ((uint64_t)in->qps * stride_for(in->max_size) > RK_BENCH_MAX_MEM / 2) {
		snprintf(why, why_len, "%u QPs of %u bytes would need %" PRIu64 " bytes here, more "
			 "than the %" PRIu64 " a bench server registers", in->qps, in->max_size,
			 2 * (uint64_t)in->qps * stride_for(in->max_size), RK_BENCH_MAX_MEM);
		return -E2BIG;
	}
	return rk_bench_check(in->test, in->mode, in->transport, in->qps, in->bidir, why,
			      why_len);
}

/* A peer's SETUP for QP i: its endpoint and in-slots. */
static int take_peer_setup(struct rk_bench *b, uint32_t i, const struct rk_msg *m, char *why,
			   size_t why_len)
{
	const struct rk_wire_buf *pb = &m->u.hello.buf;
	struct rk_endpoint local;
	uint64_t want_len = (uint64_t)b->info.qps * b->stride;
	uint64_t v = pb->offset;
	enum ibv_mtu mtu;
	int ret;

	if (pb->op != BM_SETUP || ((v >> 48) & 0xffff) != i ||
	    ((v >> 32) & 0xffff) != b->info.qps) {
		snprintf(why, why_len, "SETUP message %u is not the one due (op 0x%x, params 0x%" PRIx64
			 ")", i, pb->op, v);
		return -EPROTO;
	}
	if (pb->size != b->info.max_size || pb->len < want_len) {
		snprintf(why, why_len, "the peer's buffer (%" PRIu64 " bytes for size %u) does not "
			 "fit %u QPs of %u bytes", pb->len, pb->size, b->info.qps,
			 b->info.max_size);
		return -EPROTO;
	}
	rk_qp_local_endpoint(b->q[i].qp, &local);
	ret = rk_endpoint_check(&local, &m->u.hello.ep, why, why_len);
	if (ret)
		return ret;
	ret = rk_path_mtu(local.mtu, m->u.hello.ep.mtu, 0, &mtu, why, why_len);
	if (ret)
		return ret;
	b->info.path_mtu = rk_mtu_bytes(mtu);
	if (b->info.transport == RK_UD && b->info.max_size > (uint32_t)b->info.path_mtu) {
		snprintf(why, why_len, "UD messages fit in one packet: size %u is above the path MTU "
			 "%d", b->info.max_size, b->info.path_mtu);
		return -EMSGSIZE;
	}
	b->q[i].remote = m->u.hello.ep;
	b->q[i].raddr = pb->addr + (uint64_t)i * b->stride;
	b->q[i].rkey = pb->rkey;
	b->info.peer_qpn[i] = m->u.hello.ep.qpn;
	return 0;
}

static int connect_qp(struct rk_bench *b, uint32_t i)
{
	struct bqp *q = &b->q[i];
	struct rk_path_attr path;
	int ret;

	/* As many outstanding READs and atomics as the device takes (the
	 * library's default is 16). */
	rk_path_defaults(&path);
	path.max_rd_atomic = (uint8_t)(b->conn->dev->info.max_qp_init_rd_atom > 255 ? 255 :
				       b->conn->dev->info.max_qp_init_rd_atom);
	path.max_dest_rd_atomic = (uint8_t)(b->conn->dev->info.max_qp_rd_atom > 255 ? 255 :
					    b->conn->dev->info.max_qp_rd_atom);
	b->info.max_rd_atomic = path.max_rd_atomic;
	/* Soft-RoCE arms its retransmit timer once and lets it expire under a
	 * steady stream of multi-packet messages: with 67 ms it fires about
	 * every period and resends the window (measured: no loss of throughput,
	 * but --ack-timeout 18 makes the counters quiet). */
	if (b->o.tuning.ack_timeout >= 0)
		path.timeout = (uint8_t)b->o.tuning.ack_timeout;
	b->info.ack_timeout = path.timeout;
	b->info.retry_cnt = path.retry_cnt;
	ret = rk_qp_connect(q->qp, b->access, &q->remote, &path);
	if (ret)
		return ret;
	if (b->info.transport == RK_UD)
		return rk_ah_create(q->qp, &q->remote, &q->ah);
	return 0;
}

/* Fixed parts of the work requests, so that the loops touch only wr_id,
 * flags and the atomics' operands. */
static void prebuild(struct rk_bench *b, uint32_t i)
{
	struct bqp *q = &b->q[i];
	static const enum ibv_wr_opcode opc[] = {
		[RK_BENCH_SEND] = IBV_WR_SEND,
		[RK_BENCH_WRITE] = IBV_WR_RDMA_WRITE,
		[RK_BENCH_READ] = IBV_WR_RDMA_READ,
		[RK_BENCH_FETCH_ADD] = IBV_WR_ATOMIC_FETCH_AND_ADD,
		[RK_BENCH_CMP_SWAP] = IBV_WR_ATOMIC_CMP_AND_SWP,
	};

	for (uint32_t k = 0; k < MAX_POST_LIST; k++) {
		struct ibv_send_wr *w = &q->wr[k];

		memset(w, 0, sizeof(*w));
		q->sge[k].addr = (uintptr_t)out_slot(b, i);
		q->sge[k].lkey = b->mr->mr->lkey;
		w->sg_list = &q->sge[k];
		w->num_sge = 1;
		w->opcode = opc[b->info.test];
		w->next = k + 1 < MAX_POST_LIST ? &q->wr[k + 1] : NULL;
		if (is_atomic(b->info.test)) {
			w->wr.atomic.remote_addr = q->raddr;
			w->wr.atomic.rkey = q->rkey;
			w->wr.atomic.compare_add = 1;
		} else if (b->info.transport == RK_UD) {
			w->wr.ud.ah = q->ah;
			w->wr.ud.remote_qpn = q->remote.qpn;
			w->wr.ud.remote_qkey = q->remote.qkey ? q->remote.qkey : RK_DEFAULT_QKEY;
		} else {
			w->wr.rdma.remote_addr = q->raddr;
			w->wr.rdma.rkey = q->rkey;
		}
		q->rwr[k].wr_id = i;
		q->rwr[k].sg_list = &q->rsge;
		q->rwr[k].num_sge = 1;
		q->rwr[k].next = k + 1 < MAX_POST_LIST ? &q->rwr[k + 1] : NULL;
	}
	q->rsge.addr = (uintptr_t)in_slot(b, i);
	q->rsge.length = (uint32_t)b->stride;
	q->rsge.lkey = b->mr->mr->lkey;
}

static int exchange_setup(struct rk_bench *b)
{
	struct rk_ctl *ctl = b->conn->ctl;
	struct rk_msg m;
	char why[200] = "";
	int ret = 0;

	/* Lock-step, one message each way per QP: the CM control channel keeps
	 * a single receive posted. The server read the client's first SETUP
	 * before it created its QPs. */
	for (uint32_t i = 0; i < b->info.qps; i++) {
		if (!b->info.server) {
			setup_msg(b, i, &m);
			ret = rk_ctl_send(ctl, &m);
			if (ret)
				return ret;
			ret = rk_ctl_expect(ctl, RK_MSG_HELLO, b->wait_ms, &m);
			if (ret)
				return ret;
			ret = take_peer_setup(b, i, &m, why, sizeof(why));
		} else {
			if (i > 0) {
				ret = rk_ctl_expect(ctl, RK_MSG_HELLO, b->wait_ms, &m);
				if (ret)
					return ret;
				ret = take_peer_setup(b, i, &m, why, sizeof(why));
			}
			if (!ret) {
				setup_msg(b, i, &m);
				ret = rk_ctl_send(ctl, &m);
				if (ret)
					return ret;
			}
		}
		if (ret) {
			rk_error("bench setup with %s: %s", b->conn->peer, why);
			rk_ctl_send_error(ctl, ret, "%s", why);
			return ret;
		}
	}
	for (uint32_t i = 0; i < b->info.qps; i++) {
		ret = connect_qp(b, i);
		if (ret) {
			rk_ctl_send_error(ctl, ret, "the %s could not connect its QP 0x%x",
					  b->info.server ? "server" : "client", b->info.qpn[i]);
			return ret;
		}
		prebuild(b, i);
	}
	return rk_ctl_sync(ctl, STEP_SETUP, 0, b->wait_ms);
}

int rk_bench_connect(const struct rk_bench_opts *opts, struct rk_bench **bench_p)
{
	struct rk_bench *b;
	struct rk_msg first;
	char why[200] = "";
	int ret;

	uint64_t c_t0 = now_ns(), c_tk0 = ticks();

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->o = *opts;
	b->info.server = opts->conn.server;
	b->info.cm = opts->conn.cm;
	b->info.threads = 1;
	if (!b->info.server) {
		b->info.test = opts->test;
		b->info.mode = opts->mode;
		b->info.transport = opts->transport;
		b->info.qps = opts->qps ? opts->qps : 1;
		b->info.bidir = opts->bidir;
		b->info.max_size = opts->max_size;
		ret = rk_bench_check(b->info.test, b->info.mode, b->info.transport, b->info.qps,
				     b->info.bidir, why, sizeof(why));
		if (!ret && opts->threads > 1) {
			b->info.threads = opts->threads;
			if (b->info.mode != RK_BENCH_BW) {
				snprintf(why, sizeof(why), "threads are for bandwidth; latency "
					 "is one ping-pong");
				ret = -EINVAL;
			} else if (opts->threads > RK_BENCH_MAX_THREADS ||
				   opts->threads > b->info.qps) {
				snprintf(why, sizeof(why), "%u threads need as many QPs (have %u) "
					 "and at most %d threads", opts->threads, b->info.qps,
					 RK_BENCH_MAX_THREADS);
				ret = -EINVAL;
			}
		}
		if (!ret && (uint64_t)b->info.qps * stride_for(b->info.max_size) >
				    RK_BENCH_MAX_MEM / 2) {
			snprintf(why, sizeof(why), "%u QPs of %u bytes need more than the %" PRIu64
				 " bytes a bench side registers", b->info.qps, b->info.max_size,
				 RK_BENCH_MAX_MEM);
			ret = -E2BIG;
		}
		if (!ret && (b->info.max_size < 1 || b->info.max_size > RK_BENCH_MAX_SIZE)) {
			snprintf(why, sizeof(why), "size %u is outside 1..%u", b->info.max_size,
				 RK_BENCH_MAX_SIZE);
			ret = -EINVAL;
		}
		if (ret) {
			rk_error("bench: %s", why);
			free(b);
			return ret;
		}
	}
	b->o.conn.transport = RK_RC; /* the control connection */
	ret = rk_conn_establish(&b->o.conn, &b->conn);
	if (ret) {
		free(b);
		return ret;
	}
	b->wait_ms = b->conn->timeout_ms;
	snprintf(b->info.peer, sizeof(b->info.peer), "%s", b->conn->peer);
	if (b->info.server) {
		ret = rk_ctl_expect(b->conn->ctl, RK_MSG_HELLO, b->wait_ms, &first);
		if (ret)
			goto err_close;
		ret = learn_setup(b, &first, why, sizeof(why));
		if (ret) {
			rk_error("refusing %s: %s", b->conn->peer, why);
			rk_ctl_send_error(b->conn->ctl, ret, "the server refused: %s", why);
			goto err_close;
		}
	}
	ret = create_local(b);
	if (ret) {
		rk_ctl_send_error(b->conn->ctl, ret, "the %s could not set up: %s",
				  b->info.server ? "server" : "client", rk_strerror(ret));
		goto err_close;
	}
	if (b->info.server) {
		ret = take_peer_setup(b, 0, &first, why, sizeof(why));
		if (ret) {
			rk_error("bench setup with %s: %s", b->conn->peer, why);
			rk_ctl_send_error(b->conn->ctl, ret, "%s", why);
			goto err_close;
		}
	}
	ret = exchange_setup(b);
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

const struct rk_bench_info *rk_bench_get_info(const struct rk_bench *b)
{
	return &b->info;
}

/* ---- the loops ---- */

static void progress(struct rk_bench *b, const struct rk_bench_round *r, uint64_t now,
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

/* Latency, duration mode: whether time is up, read every 64 iterations
 * (a clock read costs as much as a tenth of an iteration on a VM). */
static bool lat_time_up(uint64_t i, uint64_t deadline)
{
	return i % 64 == 0 && now_ns() >= deadline;
}

/* Latency: the progress line, looked at every 256 iterations. */
static void lat_progress(struct rk_bench *b, const struct rk_bench_round *r, uint64_t done)
{
	if (b->o.progress && done % 256 == 0)
		progress(b, r, now_ns(), done, r->iters);
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

static bool use_inline(const struct rk_bench *b, uint32_t size)
{
	return (b->info.test == RK_BENCH_SEND || b->info.test == RK_BENCH_WRITE) &&
	       size <= b->info.inline_granted;
}

/* Post n requests on QP i as one doorbell. */
static int post_batch(struct rk_bench *b, uint32_t i, uint32_t n, uint32_t size, bool inl)
{
	struct bqp *q = &b->q[i];
	uint32_t se = b->se;
	enum rk_bench_test t = b->info.test;
	int ret;

	/* Inline requests go through ibv_post_send: the rxe provider of
	 * rdma-core 44 leaves the WQE's residual length at 0 in
	 * ibv_wr_set_inline_data() (fixed upstream later), and the request then
	 * fails with IBV_WC_LOC_QP_OP_ERR. */
	if (q->qpx && !inl) {
		struct ibv_qp_ex *x = q->qpx;
		uint64_t addr = (uintptr_t)out_slot(b, i);

		ibv_wr_start(x);
		for (uint32_t k = 0; k < n; k++) {
			uint64_t p = q->posted + k;
			bool sig = (p + 1) % se == 0 || p + 1 == q->target;

			q->unsig++;
			if (sig) {
				x->wr_id = (uint64_t)i << 48 | q->unsig;
				x->wr_flags = IBV_SEND_SIGNALED;
				q->unsig = 0;
			} else {
				x->wr_id = 0;
				x->wr_flags = 0;
			}
			switch (t) {
			case RK_BENCH_SEND: ibv_wr_send(x); break;
			case RK_BENCH_WRITE: ibv_wr_rdma_write(x, q->rkey, q->raddr); break;
			case RK_BENCH_READ: ibv_wr_rdma_read(x, q->rkey, q->raddr); break;
			case RK_BENCH_FETCH_ADD:
				ibv_wr_atomic_fetch_add(x, q->rkey, q->raddr, 1);
				break;
			case RK_BENCH_CMP_SWAP:
				ibv_wr_atomic_cmp_swp(x, q->rkey, q->raddr, p, p + 1);
				break;
			}
			if (q->ah)
				ibv_wr_set_ud_addr(x, q->ah, q->remote.qpn,
						   q->remote.qkey ? q->remote.qkey : RK_DEFAULT_QKEY);
			ibv_wr_set_sge(x, b->mr->mr->lkey, addr, is_atomic(t) ? 8 : size);
		}
		ret = ibv_wr_complete(x);
	} else {
		struct ibv_send_wr *bad;

		for (uint32_t k = 0; k < n; k++) {
			struct ibv_send_wr *w = &q->wr[k];
			uint64_t p = q->posted + k;
			bool sig = (p + 1) % se == 0 || p + 1 == q->target;

			q->unsig++;
			if (sig) {
				w->wr_id = (uint64_t)i << 48 | q->unsig;
				w->send_flags = IBV_SEND_SIGNALED;
				q->unsig = 0;
			} else {
				w->wr_id = 0;
				w->send_flags = 0;
			}
			if (inl)
				w->send_flags |= IBV_SEND_INLINE;
			q->sge[k].length = is_atomic(t) ? 8 : size;
			if (t == RK_BENCH_CMP_SWAP) {
				w->wr.atomic.compare_add = p;
				w->wr.atomic.swap = p + 1;
			}
		}
		q->wr[n - 1].next = NULL;
		ret = ibv_post_send(q->qp->qp, &q->wr[0], &bad);
		if (n < MAX_POST_LIST)
			q->wr[n - 1].next = &q->wr[n];
	}
	if (ret) {
		ret = rk_verbs_err(ret);
		rk_error("post %u %s requests on QP 0x%x: %s (%" PRIu64 " outstanding, send queue "
			 "%u)", n, rk_bench_test_str(t), q->qp->qp->qp_num, rk_strerror(ret),
			 q->posted - q->completed, b->info.tx_depth);
		return ret;
	}
	q->posted += n;
	return 0;
}

/* The SEND with immediate that ends a SEND round on QP i: its immediate is
 * the number of messages sent, so the receiver knows what to expect. */
static int post_sentinel(struct rk_bench *b, uint32_t i)
{
	struct bqp *q = &b->q[i];
	uint32_t imm = htonl((uint32_t)q->completed);
	uint64_t id = WRID_SENTINEL | (uint64_t)i << 48;
	int ret;

	if (q->qpx) {
		ibv_wr_start(q->qpx);
		q->qpx->wr_id = id;
		q->qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send_imm(q->qpx, imm);
		if (q->ah)
			ibv_wr_set_ud_addr(q->qpx, q->ah, q->remote.qpn,
					   q->remote.qkey ? q->remote.qkey : RK_DEFAULT_QKEY);
		ibv_wr_set_sge(q->qpx, b->mr->mr->lkey, (uintptr_t)out_slot(b, i), 1);
		ret = ibv_wr_complete(q->qpx);
	} else {
		struct ibv_send_wr w = q->wr[0], *bad;
		struct ibv_sge sge = q->sge[0];

		sge.length = 1;
		w.sg_list = &sge;
		w.next = NULL;
		w.wr_id = id;
		w.opcode = IBV_WR_SEND_WITH_IMM;
		w.imm_data = imm;
		w.send_flags = IBV_SEND_SIGNALED;
		ret = ibv_post_send(q->qp->qp, &w, &bad);
	}
	if (ret) {
		ret = rk_verbs_err(ret);
		rk_error("post the end-of-round SEND on QP 0x%x: %s", q->qp->qp->qp_num,
			 rk_strerror(ret));
		return ret;
	}
	q->sentinel_posted = true;
	return 0;
}

static int post_recvs(struct rk_bench *b, uint32_t i, uint32_t n)
{
	struct bqp *q = &b->q[i];
	struct ibv_recv_wr *bad;
	int ret;

	while (n) {
		uint32_t k = n < b->info.post_list ? n : b->info.post_list;

		if (k > MAX_POST_LIST)
			k = MAX_POST_LIST;
		q->rwr[k - 1].next = NULL;
		ret = ibv_post_recv(q->qp->qp, &q->rwr[0], &bad);
		if (k < MAX_POST_LIST)
			q->rwr[k - 1].next = &q->rwr[k];
		if (ret) {
			ret = rk_verbs_err(ret);
			rk_error("post %u receives on QP 0x%x: %s", k, q->qp->qp->qp_num,
				 rk_strerror(ret));
			return ret;
		}
		q->rq_out += k;
		n -= k;
	}
	return 0;
}

static const char *test_verb(enum rk_bench_test t)
{
	static const char *const v[] = {"SEND", "RDMA WRITE", "RDMA READ", "FETCH_ADD",
					"CMP_SWAP"};

	return v[t];
}

/* Completions of this worker's requests. */
static int poll_send(struct bworker *w, int *got_p)
{
	struct rk_bench *b = w->b;
	int n = ibv_poll_cq(w->scq->cq, (int)b->info.cq_batch, w->wc);

	if (n < 0) {
		rk_error("poll the send CQ: %s", rk_strerror(rk_verbs_err(n)));
		return -EIO;
	}
	for (int k = 0; k < n; k++) {
		const struct ibv_wc *wc = &w->wc[k];
		struct bqp *q;

		if (wc->status != IBV_WC_SUCCESS)
			return rk_wc_check(wc, test_verb(b->info.test));
		if (WRID_QP(wc->wr_id) >= b->info.qps) {
			rk_error("completion with an unknown wr_id 0x%" PRIx64, wc->wr_id);
			return -EPROTO;
		}
		q = &b->q[WRID_QP(wc->wr_id)];
		q->carry = 0;
		if (wc->wr_id & WRID_SENTINEL)
			q->sentinel_done = true;
		else
			q->completed += WRID_COUNT(wc->wr_id);
	}
	*got_p = n;
	return 0;
}

/* Top the worker's receive queues up again, in post lists. */
static int refill_recvs(struct bworker *w)
{
	struct rk_bench *b = w->b;

	for (uint32_t i = w->first; i < w->first + w->count; i++) {
		struct bqp *q = &b->q[i];
		uint32_t room = b->info.rx_depth - q->rq_out;

		if (room >= b->info.post_list) {
			int ret = post_recvs(b, i, room - room % b->info.post_list);

			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Receive completions; with refill, keeps the receive queues topped up (a
 * ping-pong refills after its answer is posted, off the critical path). */
static int poll_recv(struct bworker *w, int *got_p, bool refill)
{
	struct rk_bench *b = w->b;
	int n = ibv_poll_cq(w->rcq->cq, (int)b->info.cq_batch, w->wc);

	if (n < 0) {
		rk_error("poll the receive CQ: %s", rk_strerror(rk_verbs_err(n)));
		return -EIO;
	}
	for (int k = 0; k < n; k++) {
		const struct ibv_wc *wc = &w->wc[k];
		struct bqp *q;

		if (wc->status != IBV_WC_SUCCESS)
			return rk_wc_check(wc, "receive");
		if (wc->wr_id >= b->info.qps) {
			rk_error("receive completion with an unknown wr_id 0x%" PRIx64, wc->wr_id);
			return -EPROTO;
		}
		q = &b->q[wc->wr_id];
		q->rq_out--;
		if (wc->wc_flags & IBV_WC_WITH_IMM) {
			q->got_sentinel = true;
			q->expected = ntohl(wc->imm_data);
		} else {
			q->received++;
		}
	}
	*got_p = n;
	return n > 0 && refill ? refill_recvs(w) : 0;
}

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
	progress(b, w->r, now, done, total);
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
	bool stopping = !deadline;
	uint32_t empty = 0;
	int ret, got;

	for (;;) {
		bool active = false;
		uint64_t tk;

		if (__atomic_load_n(&b->abort, __ATOMIC_RELAXED))
			return -ECANCELED;
		if (sending) {
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
					ret = post_batch(b, i, n, r->size, inl);
					if (ret)
						return ret;
				}
				if (send_test && !q->sentinel_posted && q->completed == q->target &&
				    stopping) {
					ret = post_sentinel(b, i);
					if (ret)
						return ret;
				}
			}
			ret = poll_send(w, &got);
			if (ret)
				return ret;
			active |= got > 0;
		}
		if (receiving) {
			ret = poll_recv(w, &got, true);
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
				ret = add_sample(w, tk, c);
				if (ret)
					return ret;
			}
		} else if (receiving) {
			__atomic_store_n(&w->done, worker_received(w), __ATOMIC_RELAXED);
		}
		if (w == b->w)
			bw_progress(w, now, total);
		if (active) {
			last_activity = now;
			empty = 0;
		} else {
			maybe_yield(b, ++empty);
		}
		if (!stopping && now >= deadline) {
			/* Time is up: one more request where the last was unsignaled,
			 * so that every request is accounted for by a completion. */
			stopping = true;
			for (uint32_t i = w->first; i < w->first + w->count; i++)
				b->q[i].target = b->q[i].posted + (b->q[i].unsig ? 1 : 0);
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
static int run_bw(struct rk_bench *b, const struct rk_bench_round *r, bool sending,
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

/* Wait (spinning) for one completion on cq with the given predicate met. */
static int wait_send_done(struct rk_bench *b, uint32_t i, bool sentinel)
{
	uint64_t start = 0;
	struct bqp *q = &b->q[i];
	int ret, got;

	for (uint32_t spin = 0;; spin++) {
		if (sentinel ? q->sentinel_done : q->completed >= q->posted)
			return 0;
		ret = poll_send(b->w, &got);
		if (ret)
			return ret;
		maybe_yield(b, spin + 1);
		if ((spin & 1023) == 1023 && wait_over(&start, (uint64_t)b->wait_ms * 1000000ull)) {
			rk_error("bench: QP 0x%x: no completion within %d ms", q->qp->qp->qp_num,
				 b->wait_ms);
			return -ETIMEDOUT;
		}
	}
}

/* Post one request of a ping-pong; keeps room by reaping completions. */
static int post_one(struct rk_bench *b, uint32_t i, uint32_t size, bool inl)
{
	struct bqp *q = &b->q[i];
	int ret, got;

	while (q->posted - q->completed + q->carry + 1 > b->info.tx_depth) {
		ret = poll_send(b->w, &got);
		if (ret)
			return ret;
	}
	q->target = q->posted + 1 > q->target ? q->posted + 1 : q->target;
	return post_batch(b, i, 1, size, inl);
}

static uint8_t lat_seq(uint64_t i)
{
	return (uint8_t)(i % 254 + 1);
}

/* SEND latency: ping-pong of SENDs. The pinger times consecutive pings. */
static int run_send_lat(struct rk_bench *b, const struct rk_bench_round *r, bool pinger)
{
	struct bqp *q = &b->q[0];
	bool inl = use_inline(b, r->size);
	uint64_t deadline = r->duration_ms ? b->t0 + (uint64_t)r->duration_ms * 1000000ull : 0;
	uint64_t idle = (uint64_t)b->wait_ms * 1000000ull, tk, tk_prev = 0;
	uint64_t i = 0;
	int ret, got;

	/* In a ping-pong every request is signaled on its own schedule; target
	 * follows posted so the last one of a run is signaled. */
	q->target = UINT64_MAX;
	for (;;) {
		uint64_t wait_start = 0;

		if (pinger) {
			if (r->iters ? i == r->iters : lat_time_up(i, deadline))
				break;
			tk = ticks();
			if (i && (ret = add_lat(b, i - 1, tk - tk_prev)))
				return ret;
			tk_prev = tk;
			q->target = r->iters ? r->iters : UINT64_MAX;
			ret = post_one(b, 0, r->size, inl);
			if (!ret)
				ret = refill_recvs(b->w);
			if (ret)
				return ret;
		}
		/* wait for the peer's message */
		for (uint32_t spin = 0;; spin++) {
			uint64_t before = q->received;
			bool sentinel = q->got_sentinel;

			ret = poll_recv(b->w, &got, false);
			if (ret)
				return ret;
			if (q->received != before || q->got_sentinel != sentinel)
				break;
			maybe_yield(b, spin + 1);
			if ((spin & 1023) == 1023) {
				ret = poll_send(b->w, &got);
				if (ret)
					return ret;
				if (wait_over(&wait_start, idle)) {
					rk_error("bench: no SEND from %s within %d ms", b->conn->peer,
						 b->wait_ms);
					return -ETIMEDOUT;
				}
			}
		}
		if (!pinger) {
			if (q->got_sentinel)
				break;
			ret = post_one(b, 0, r->size, inl);
			if (!ret)
				ret = refill_recvs(b->w);
			if (ret)
				return ret;
		}
		i++;
		if (pinger)
			lat_progress(b, r, i);
	}
	if (pinger) {
		tk = ticks();
		if (i && (ret = add_lat(b, i - 1, tk - tk_prev)))
			return ret;
		round_end(b);
		ret = post_sentinel(b, 0);
		if (!ret)
			ret = wait_send_done(b, 0, true);
		if (ret)
			return ret;
		q->completed = i; /* the pings, every one answered */
	} else {
		round_end(b);
	}
	return 0;
}

/* WRITE latency: each side writes the other's in-slot and spins on its own
 * in-slot's last byte for the answer. */
static int run_write_lat(struct rk_bench *b, const struct rk_bench_round *r, bool pinger)
{
	struct bqp *q = &b->q[0];
	bool inl = use_inline(b, r->size);
	volatile uint8_t *mine = in_slot(b, 0) + r->size - 1;
	uint8_t *out = out_slot(b, 0) + r->size - 1;
	uint64_t deadline = r->duration_ms ? b->t0 + (uint64_t)r->duration_ms * 1000000ull : 0;
	uint64_t idle = (uint64_t)b->wait_ms * 1000000ull, tk, tk_prev = 0;
	uint64_t i = 0;
	int ret, got;

	q->target = UINT64_MAX;
	for (;;) {
		uint8_t want = lat_seq(i);
		uint64_t wait_start = 0;

		if (pinger) {
			if (r->iters ? i == r->iters : lat_time_up(i, deadline))
				break;
			tk = ticks();
			if (i && (ret = add_lat(b, i - 1, tk - tk_prev)))
				return ret;
			tk_prev = tk;
			*out = want;
			ret = post_one(b, 0, r->size, inl);
			if (ret)
				return ret;
		}
		for (uint32_t spin = 0;; spin++) {
			uint8_t v = *mine;

			if (v == want || (!pinger && v == LAT_STOP))
				break;
			maybe_yield(b, spin + 1);
			if ((spin & 1023) == 1023) {
				ret = poll_send(b->w, &got);
				if (ret)
					return ret;
				if (wait_over(&wait_start, idle)) {
					rk_error("bench: no RDMA WRITE from %s within %d ms (last byte "
						 "0x%02x, waiting for 0x%02x)", b->conn->peer,
						 b->wait_ms, v, want);
					return -ETIMEDOUT;
				}
			}
		}
		if (!pinger) {
			if (*mine == LAT_STOP)
				break;
			*out = want;
			ret = post_one(b, 0, r->size, inl);
			if (ret)
				return ret;
			q->received++;
		} else {
			q->received++;
			lat_progress(b, r, i + 1);
		}
		i++;
	}
	if (pinger) {
		tk = ticks();
		if (i && (ret = add_lat(b, i - 1, tk - tk_prev)))
			return ret;
		round_end(b);
		/* The stop marker, signaled: its completion covers every ping. */
		*out = LAT_STOP;
		q->target = q->posted + 1;
		ret = post_one(b, 0, r->size, inl);
		if (!ret)
			ret = wait_send_done(b, 0, false);
		if (ret)
			return ret;
		q->completed = i;
	} else {
		round_end(b);
	}
	return 0;
}

/* READ and atomics latency: one request at a time, each waited for. */
static int run_rdma_lat(struct rk_bench *b, const struct rk_bench_round *r)
{
	struct bqp *q = &b->q[0];
	volatile uint64_t *ret_word = (volatile uint64_t *)out_slot(b, 0);
	uint64_t deadline = r->duration_ms ? b->t0 + (uint64_t)r->duration_ms * 1000000ull : 0;
	uint64_t tk, tk_prev = 0;
	uint64_t i = 0;
	int ret;

	for (;; i++) {
		if (r->iters ? i == r->iters : lat_time_up(i, deadline))
			break;
		tk = ticks();
		if (i && (ret = add_lat(b, i - 1, tk - tk_prev)))
			return ret;
		tk_prev = tk;
		q->target = q->posted + 1; /* signaled */
		ret = post_batch(b, 0, 1, r->size, false);
		if (ret)
			return ret;
		ret = wait_send_done(b, 0, false);
		if (ret)
			return ret;
		if (is_atomic(b->info.test) && *ret_word != i)
			q->bad_returns++;
		lat_progress(b, r, i + 1);
	}
	tk = ticks();
	if (i && (ret = add_lat(b, i - 1, tk - tk_prev)))
		return ret;
	round_end(b);
	return 0;
}

/* ---- a round ---- */

static uint32_t seed_of(uint32_t round, uint32_t size)
{
	return 0x5eed0000u ^ (round * 7919u) ^ size;
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
		if (receiving && q->rq_out < b->info.rx_depth) {
			ret = post_recvs(b, i, b->info.rx_depth - q->rq_out);
			if (ret)
				return ret;
		}
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

/* Check what this side can see after the round; a sentence into res->check. */
static int check_round(struct rk_bench *b, const struct rk_bench_round *r,
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
			if (q->received && (bad = rk_pattern_check(data, len, seed)) >= 0) {
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
					 test_verb(t), word, q->completed - 1, q->bad_returns);
				return -EBADMSG;
			}
		}
	}
	/* One sentence for what was checked. */
	if (t == RK_BENCH_SEND && (!initiator || in->bidir || lat))
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
			 test_verb(t));
	else if (is_atomic(t))
		snprintf(c, cl, "every %s returned the value due", test_verb(t));
	else {
		res->checked_here = false;
		snprintf(c, cl, "nothing to check on this side");
	}
	return 0;
}

/* Lock-step exchange of each QP's counts. */
static int exchange_results(struct rk_bench *b, int wait_ms)
{
	struct rk_ctl *ctl = b->conn->ctl;
	struct rk_msg m, p;
	int ret;

	for (uint32_t i = 0; i < b->info.qps; i++) {
		memset(&m, 0, sizeof(m));
		m.type = RK_MSG_HELLO;
		rk_qp_local_endpoint(b->q[i].qp, &m.u.hello.ep);
		m.u.hello.buf.op = BM_RESULT;
		m.u.hello.buf.offset = b->q[i].completed;
		m.u.hello.buf.len = b->q[i].received;
		m.u.hello.buf.addr = b->elapsed_ns;
		m.u.hello.buf.size = i;
		if (!b->info.server) {
			ret = rk_ctl_send(ctl, &m);
			if (!ret)
				ret = rk_ctl_expect(ctl, RK_MSG_HELLO, wait_ms, &p);
		} else {
			ret = rk_ctl_expect(ctl, RK_MSG_HELLO, wait_ms, &p);
			if (!ret)
				ret = rk_ctl_send(ctl, &m);
		}
		if (ret)
			return ret;
		if (p.u.hello.buf.op != BM_RESULT || p.u.hello.buf.size != i) {
			rk_error("%s sent op 0x%x (QP %u) where the result of QP %u was due",
				 b->conn->peer, p.u.hello.buf.op, p.u.hello.buf.size, i);
			return -EPROTO;
		}
		b->q[i].peer_sent = p.u.hello.buf.offset;
		b->q[i].peer_received = p.u.hello.buf.len;
		if (i == 0)
			b->peer_elapsed_ns = p.u.hello.buf.addr;
	}
	return 0;
}

static void fill_result(struct rk_bench *b, const struct rk_bench_round *r,
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

static int run_round(struct rk_bench *b, const struct rk_bench_round *round,
		     struct rk_bench_result *res);

int rk_bench_run(struct rk_bench *b, const struct rk_bench_round *round,
		 struct rk_bench_result *res)
{
	int ret;

	if (b->rounds == UINT32_MAX) {
		rk_error("bench: the session with %s has ended", b->conn->peer);
		return -ENOTCONN;
	}
	ret = run_round(b, round, res);
	if (ret < 0)
		b->rounds = UINT32_MAX; /* over: nothing more to tell the peer */
	return ret;
}

static int run_round(struct rk_bench *b, const struct rk_bench_round *round,
		     struct rk_bench_result *res)
{
	struct rk_ctl *ctl = b->conn->ctl;
	const struct rk_bench_info *in = &b->info;
	struct rk_bench_round r;
	struct rk_msg m;
	char why[200];
	bool initiator, receiving, lat = in->mode == RK_BENCH_LAT;
	uint64_t peer_elapsed;
	int ret, verdict, wait_ms;

	memset(res, 0, sizeof(*res));
	if (!in->server) {
		r = *round;
		if (!round_ok(b, &r, why, sizeof(why))) {
			rk_error("bench round %u: %s", b->rounds, why);
			return -EINVAL;
		}
		memset(&m, 0, sizeof(m));
		m.type = RK_MSG_HELLO;
		rk_qp_local_endpoint(b->q[0].qp, &m.u.hello.ep);
		m.u.hello.buf.op = BM_ROUND;
		m.u.hello.buf.size = r.size;
		m.u.hello.buf.offset = r.iters;
		m.u.hello.buf.len = r.duration_ms;
		m.u.hello.buf.addr = b->rounds;
		ret = rk_ctl_send(ctl, &m);
		if (ret)
			return ret;
	} else {
		ret = rk_ctl_expect(ctl, RK_MSG_HELLO, b->wait_ms * 6, &m);
		if (ret)
			return ret;
		if (m.u.hello.buf.op == BM_FIN) {
			b->rounds = UINT32_MAX;
			return 1;
		}
		r.size = m.u.hello.buf.size;
		r.iters = m.u.hello.buf.offset;
		r.duration_ms = (uint32_t)m.u.hello.buf.len;
		if (m.u.hello.buf.op != BM_ROUND || m.u.hello.buf.addr != b->rounds ||
		    m.u.hello.buf.len > UINT32_MAX) {
			snprintf(why, sizeof(why), "a malformed ROUND message (op 0x%x, round %" PRIu64
				 ", this side at %u)", m.u.hello.buf.op, m.u.hello.buf.addr, b->rounds);
			rk_error("bench: %s from %s", why, b->conn->peer);
			rk_ctl_send_error(ctl, -EPROTO, "%s", why);
			return -EPROTO;
		}
		if (!round_ok(b, &r, why, sizeof(why))) {
			rk_error("refusing round %u from %s: %s", b->rounds, b->conn->peer, why);
			rk_ctl_send_error(ctl, -EINVAL, "the server refused: %s", why);
			return -EINVAL;
		}
	}
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
	b->next_progress = b->t0 + PROGRESS_NS;
	if (lat) {
		if (in->test == RK_BENCH_SEND)
			ret = run_send_lat(b, &r, !in->server);
		else if (in->test == RK_BENCH_WRITE)
			ret = run_write_lat(b, &r, !in->server);
		else if (!in->server)
			ret = run_rdma_lat(b, &r);
	} else if (initiator || receiving) {
		ret = run_bw(b, &r, initiator, receiving);
	}
	if (ret) {
		rk_ctl_send_error(ctl, ret, "the %s's round failed: %s",
				  in->server ? "server" : "client", rk_strerror(ret));
		return ret;
	}
	/* The passive side waits as long as the run may take. */
	wait_ms = b->wait_ms * 6 + (int)r.duration_ms;
	ret = exchange_results(b, wait_ms);
	if (ret)
		return ret;
	peer_elapsed = b->peer_elapsed_ns;
	verdict = check_round(b, &r, res, initiator);
	if (verdict)
		rk_error("bench round %u (%u bytes): check failed: %s", b->rounds, r.size,
			 res->check);
	ret = rk_ctl_sync(ctl, STEP_CHECK + b->rounds % 256, verdict, b->wait_ms);
	if (ret && !verdict) {
		snprintf(res->peer_check, sizeof(res->peer_check), "failed: %s", rk_strerror(ret));
		return ret;
	}
	if (verdict)
		return verdict;
	snprintf(res->peer_check, sizeof(res->peer_check), "passed");
	fill_result(b, &r, res, initiator, peer_elapsed);
	b->rounds++;
	return 0;
}

void rk_bench_close(struct rk_bench *b)
{
	if (!b)
		return;
	if (!b->info.server && b->rounds != UINT32_MAX && b->conn && b->q) {
		struct rk_msg m;

		memset(&m, 0, sizeof(m));
		m.type = RK_MSG_HELLO;
		rk_qp_local_endpoint(b->q[0].qp, &m.u.hello.ep);
		m.u.hello.buf.op = BM_FIN;
		rk_ctl_send(b->conn->ctl, &m);
	}
	if (b->q) {
		for (uint32_t i = 0; i < b->info.qps; i++) {
			if (b->q[i].ah)
				ibv_destroy_ah(b->q[i].ah);
			rk_qp_destroy(b->q[i].qp);
		}
	}
	rk_mr_free(b->mr);
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
	free(b);
}
