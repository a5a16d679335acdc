/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: the benchmark engine's state and steps, shared by
 * its files: bench.c (the API and the rounds), bench_setup.c (the data QPs
 * and their exchange), bench_post.c (posting and polling), bench_bw.c and
 * bench_lat.c (the loops), bench_check.c (after a round: results and checks).
 *
 * Memory: one registered buffer per side, 2 x qps slots of `stride` bytes.
 * Slot i ("out") is what QP i sends and writes from, and where its READs and
 * atomic results land; slot qps + i ("in") is what the peer's QP i writes,
 * reads, sends into and operates on. The peer learns the in-slots' address
 * and rkey in the setup exchange. */
#ifndef RDMAKIT_LIB_BENCH_INT_H
#define RDMAKIT_LIB_BENCH_INT_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <rdmakit/bench.h>
#include <rdmakit/cm.h>
#include <rdmakit/mem.h>

#include "base/clock.h"

/* Shared by the library's own files only: not exported from the .so. */
#pragma GCC visibility push(hidden)

#define STEP_SETUP 0xB000u
#define STEP_START 0xB100u
#define STEP_CHECK 0xB200u
#define STEP_CM_DATA 0xB300u /* cm_data: the server took the plan */

#define UD_GRH 40
#define MAX_POST_LIST 64
#define MAX_CQ_BATCH 256
#define INLINE_ASK 1024
#define LOSSY_IDLE_MS 3000
#define LAT_STOP 0xffu
#define INFLIGHT_BYTES RK_BENCH_INFLIGHT_BYTES
#define PROGRESS_NS 200000000ull
/* Stop requests and the peer's BENCH_FIN are looked for this often. */
#define LOOK_NS 100000000ull
/* Bandwidth's busy polling gives the CPU away after this many empty polls
 * in a row: on a software device (rxe, siw) the kernel threads that move the
 * packets need the CPU the pollers spin on. A knob (yield_after): on
 * hardware, 0 (never) may be better. */
#define YIELD_AFTER 8

/* wr_id: QP index in bits 48..62, the number of requests a signaled
 * completion covers in the low 32 bits; bit 63 marks the end-of-round SEND. */
#define WRID_SENTINEL (1ull << 63)
#define WRID_QP(id) ((uint32_t)(((id) >> 48) & 0x7fff))
#define WRID_COUNT(id) ((uint32_t)(id))

struct bqp {
	struct rk_qp *qp;
	struct rk_cm *cm;      /* cm_data: the QP's own RDMA CM connection */
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
	uint64_t bad_data;      /* SRQ: messages whose bytes were not as due */
	int64_t bad_at;         /* ... the first one's first differing byte */
	uint32_t bad_len;       /* ... its length */
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

/* A round's intervals and stop requests (bench_soak.c). Times in now_ns(). */
struct soak {
	bool measuring;         /* this side reports intervals this round */
	bool lat;               /* ... of latency (iterations and their samples) */
	uint64_t interval_ns;   /* 0: no intervals */
	uint64_t deadline;      /* the round's end by its duration; UINT64_MAX: none */
	uint64_t next_cut, next_look, next_event; /* next_event: the earlier */
	uint64_t cut_ns;        /* the last cut (the round's start at first) */
	uint64_t cut_msgs;      /* messages (latency: iterations) by the last cut */
	uint64_t seen;          /* messages by the last look (for a failed interval) */
	uint32_t index;
	uint64_t tk_looked, tk_gap; /* latency: ticks() at the last look, 10 ms of them */
	bool halted;            /* a stop request ended this side's loop */
	bool stopped, by_peer;  /* a stop request came this round (this side's, the peer's) */
	bool listening;         /* server: the client may still take a BENCH_FIN */
	bool told;              /* server: sent its BENCH_FIN this round */
	struct rk_bench_interval_range range;
	uint64_t *scratch;      /* latency: an interval's samples, in ns */
	size_t scratch_cap;
};

struct rk_bench {
	struct rk_bench_opts o;
	struct rk_bench_plan plan; /* the client's, as it announces it (server: as learnt) */
	struct rk_conn *conn;
	/* The caller's on_listening and its arg: the connection's arg is b */
	void (*caller_listening)(void *arg);
	void *caller_arg;
	struct rk_bench_info info;
	struct bworker *w;
	uint32_t nworkers;
	int abort;            /* a worker failed: the others stop (atomic) */
	double tick_est;      /* ns per tick, measured while connecting */
	struct rk_region *region; /* the data buffer */
	struct rk_mr *mr;         /* its registration (region->host) */
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
	struct soak soak;
	int halt;             /* a stop request: the workers end the round (atomic) */
	int wc_failed;        /* a completion failed: wc_status is its status (atomic) */
	enum ibv_wc_status wc_status;
	uint32_t wc_qpn;
	int port_down;        /* the round ended on IBV_EVENT_PORT_ERR (atomic) */
	struct rk_srq *srq;   /* info.srq: the data QPs' shared receive queue */
	uint64_t *qpn_sorted; /* info.srq: QPNs with their index (high 32 bits
				 the QPN, low the index), sorted: a receive
				 completion names its QP by wc.qp_num */
	uint32_t round_size;  /* this round's size and pattern seed, for the SRQ */
	uint32_t round_seed;  /* receives' check as they arrive */
	/* iWARP (--cm): each data QP has an RDMA CM connection of its own, to
	 * the server's data listener (a port of this session's, which the
	 * server's reply to the control connection names with a token the
	 * client's data requests echo); and no immediate data, so the
	 * end-of-round SEND carries its count after the round's bytes. */
	bool cm_data;
	bool no_imm;
	struct rk_cm *data_listener; /* server */
	uint16_t data_port;
	uint64_t data_token;
};

/* no_imm: the end-of-round SEND is round_size + SENTINEL_COUNT_LEN bytes,
 * the count (big-endian) after the round's pattern. */
#define SENTINEL_COUNT_LEN 4

/* Nothing completed for this long with the port down: the round ends. */
#define PORT_DOWN_GRACE_NS 1000000000ull

static inline void maybe_yield(const struct rk_bench *b, uint32_t empty)
{
	uint32_t n = b->info.yield_after;

	if (n && empty % n == 0)
		sched_yield();
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
static inline void round_end(struct rk_bench *b)
{
	b->tk_last = ticks();
	b->t_last = now_ns();
	b->elapsed_ns = b->t_last - b->t0;
}

/* Nanoseconds per tick over the round (1 where ticks are nanoseconds). */
static inline double tick_ns(const struct rk_bench *b)
{
	if (b->tk_last <= b->tk0 || b->t_last <= b->t0)
		return 1.0;
	return (double)(b->t_last - b->t0) / (double)(b->tk_last - b->tk0);
}

static inline bool is_atomic(enum rk_bench_test t)
{
	return t == RK_BENCH_FETCH_ADD || t == RK_BENCH_CMP_SWAP;
}

static inline uint8_t *out_slot(struct rk_bench *b, uint32_t i)
{
	return (uint8_t *)b->mr->buf + (size_t)i * b->stride;
}

static inline uint8_t *in_slot(struct rk_bench *b, uint32_t i)
{
	return (uint8_t *)b->mr->buf + (size_t)(b->info.qps + i) * b->stride;
}

static inline size_t stride_for(uint32_t max_size)
{
	return ((size_t)max_size + UD_GRH + 63) & ~(size_t)63;
}

static inline bool use_inline(const struct rk_bench *b, uint32_t size)
{
	return (b->info.test == RK_BENCH_SEND || b->info.test == RK_BENCH_WRITE) &&
	       size <= b->info.inline_granted;
}

static inline uint32_t seed_of(uint32_t round, uint32_t size)
{
	return 0x5eed0000u ^ (round * 7919u) ^ size;
}

/* ---- across the engine's files ---- */

/* bench.c: rk_bench_connect() for a server's client already accepted
 * (rk_conn_accept()); closes pending on failure. */
int bench_connect_accepted(struct rk_conn *pending, const struct rk_bench_opts *opts,
			   struct rk_bench **bench_p);

/* bench.c: what an iWARP device cannot run of in's test and transport: 0,
 * or -EOPNOTSUPP with why naming the device. */
int bench_iwarp_refusal(const struct rk_bench_info *in, const struct rk_device *dev, char *why,
			size_t why_len);

/* bench_setup.c: after the control connection, agree with the peer on what
 * runs (the server learns it from the client's first SETUP), create the
 * CQs, memory and data QPs, exchange their endpoints and connect them. */
int bench_setup(struct rk_bench *b);

/* bench_post.c: posting and polling. */
int bench_post_batch(struct rk_bench *b, uint32_t i, uint32_t n, uint32_t size, bool inl);
int bench_post_sentinel(struct rk_bench *b, uint32_t i);
int bench_post_recvs(struct rk_bench *b, uint32_t i, uint32_t n);
int bench_poll_send(struct bworker *w, int *got_p);
int bench_refill_recvs(struct bworker *w);
int bench_poll_recv(struct bworker *w, int *got_p, bool refill);
const char *bench_test_verb(enum rk_bench_test t);

/* bench.c: the progress line, at most every PROGRESS_NS. */
void bench_progress(struct rk_bench *b, const struct rk_bench_round *r, uint64_t now,
		    uint64_t done, uint64_t total);

/* bench_soak.c: a round's intervals and stop requests. soak_begin at the
 * round's start; soak_look (when soak_due) ends this side's loop on a stop
 * request or the server's BENCH_FIN (1; this side stops: every worker sees
 * b->halt) and, on a server asked to stop, sends that BENCH_FIN; soak_cut
 * (when due too) reports an interval with done messages or iterations so
 * far; soak_end reports the round's last interval, failed when status is. */
void soak_begin(struct rk_bench *b, const struct rk_bench_round *r, bool measuring);
int soak_look(struct rk_bench *b, uint64_t now);
int soak_cut(struct rk_bench *b, const struct rk_bench_round *r, uint64_t now, uint64_t done);
void soak_end(struct rk_bench *b, const struct rk_bench_round *r, int status);
/* The round's control messages through the stop protocol: the server waits
 * listening for its stop request; the client takes the server's BENCH_FIN
 * where it comes. Otherwise rk_ctl_expect(). wait_ms < 0: no bound. */
int soak_expect(struct rk_bench *b, enum rk_msg_type type, int wait_ms, struct rk_msg *m);
void soak_free(struct rk_bench *b);
/* A failed completion, noted once per round for the failed interval. */
void bench_note_wc(struct rk_bench *b, const struct ibv_wc *wc);

/* -ENETDOWN (logged once) when the async event thread saw this side's port
 * go down: rxe may retry into a downed netdev without ever failing the
 * request, so an idle wait must not last its whole --timeout. 0 otherwise. */
int bench_port_down(struct rk_bench *b, uint64_t idle_ns);

static inline bool soak_due(const struct rk_bench *b, uint64_t now)
{
	return now >= b->soak.next_event;
}

/* bench_bw.c: a bandwidth round on every worker. */
int bench_run_bw(struct rk_bench *b, const struct rk_bench_round *r, bool sending,
		 bool receiving);

/* bench_lat.c: the latency rounds (SEND and WRITE ping-pongs; READ and
 * atomics one at a time, this side the pinger). */
int bench_run_send_lat(struct rk_bench *b, const struct rk_bench_round *r, bool pinger);
int bench_run_write_lat(struct rk_bench *b, const struct rk_bench_round *r, bool pinger);
int bench_run_rdma_lat(struct rk_bench *b, const struct rk_bench_round *r);

/* bench_check.c: after a round, each QP's counts both ways, what this side
 * can check, and the result. */
int bench_exchange_results(struct rk_bench *b, int wait_ms);
int bench_check_round(struct rk_bench *b, const struct rk_bench_round *r,
		      struct rk_bench_result *res, bool initiator);
void bench_fill_result(struct rk_bench *b, const struct rk_bench_round *r,
		       struct rk_bench_result *res, bool initiator, uint64_t peer_elapsed);

#pragma GCC visibility pop

/* Before connecting: the memory asked for (rk_bench_opts.mem) that this
 * machine cannot give, logged (rk_region_precheck()). */
int bench_mem_precheck(const struct rk_bench_opts *o);

#endif
