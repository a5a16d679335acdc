/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the benchmark engine behind `rdmakit bench`.
 *
 * Two processes, connected over the TCP exchange or RDMA CM (conn.h), measure
 * SEND, RDMA WRITE, RDMA READ, fetch-add and compare-swap: bandwidth with
 * message rate, or latency. The client decides what runs; the server learns
 * it over the control channel and serves it. Definitions follow perftest:
 *   bandwidth  messages x size over the time from the first post to the last
 *              completion (all QPs together); the peak is the best rate over
 *              any tenth of the run;
 *   latency    the time between consecutive iterations of a ping-pong
 *              (SEND, WRITE: halved, one way) or of one operation waited for
 *              (READ, atomics: the full round trip).
 *
 * What makes it fast is chosen from the device's real limits and reported in
 * rk_bench_info: inline data up to what the provider grants the QP, doorbell
 * batching with lists of work requests, selective signaling, completion
 * polling in batches, and the ibv_wr_* posting API where the provider has it.
 *
 * Data QPs are the engine's own, connected by an endpoint exchange over the
 * control channel (with --cm that channel is the CM-connected QP). After each
 * round the side that was written, read, sent to or operated on checks what
 * arrived (pattern, counts, the atomic word) and both sides learn the result.
 */
#ifndef RDMAKIT_BENCH_H
#define RDMAKIT_BENCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmakit/bench_stats.h>
#include <rdmakit/clients.h>
#include <rdmakit/conn.h>
#include <rdmakit/counters.h>
#include <rdmakit/gate.h>
#include <rdmakit/srq.h>
#include <rdmakit/region.h>
#include <rdmakit/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* enum rk_bench_test, enum rk_bench_mode and the limits RK_BENCH_MAX_QPS,
 * RK_BENCH_MAX_THREADS and RK_BENCH_MAX_SIZE are in wire.h: BENCH_SETUP
 * carries them and its decoding checks them, below this engine. */

/* A server registers at most this much for one client (2 slots per QP). */
#define RK_BENCH_MAX_MEM ((uint64_t)4 << 30)
/* Bandwidth keeps at most this many bytes outstanding per QP: large
 * messages get fewer outstanding requests (and smaller post lists). */
#define RK_BENCH_INFLIGHT_BYTES (1024u * 1024)

/* Local knobs; 0 (or -1 where noted) chooses from the device's limits. */
struct rk_bench_tuning {
	uint32_t tx_depth;     /* outstanding send work requests per QP */
	uint32_t rx_depth;     /* receives kept posted per QP */
	uint32_t post_list;    /* work requests per doorbell */
	uint32_t signal_every; /* one signaled completion per this many requests */
	uint32_t cq_batch;     /* completions taken per poll */
	int inline_max;        /* -1: as much as the QP is granted; 0: off */
	int wr_api;            /* -1: where the provider has it; 0: never; 1: required */
	int yield_after;       /* busy polling yields the CPU after this many empty
				  polls in a row; 0: never; -1: the default */
	uint64_t inflight;     /* bandwidth: bytes outstanding per QP at most
				  (0: RK_BENCH_INFLIGHT_BYTES) */
	int ack_timeout;       /* local ACK timeout of the data QPs, 4.096 us x
				  2^N; 0: none; -1: the library's (14, 67 ms) */
	int rnr_retry;         /* RNR retries of this side's data QPs (0..7, 7:
				  forever); -1: the library's (7) */
};

struct rk_bench_progress {
	uint32_t round;
	uint32_t size;
	double elapsed_s;
	uint64_t done;   /* messages completed so far (all QPs) */
	uint64_t total;  /* messages due (0 in duration mode) */
	double duration_s;
	double rate;     /* bytes per second so far */
};

/* A round's duration_ms for "until stopped": the round ends on a stop
 * request (rk_bench_opts.stop, or the server's) and nothing else. */
#define RK_BENCH_UNTIL_STOPPED UINT32_MAX

/* One interval of a round (rk_bench_opts.interval_ms), as the side that
 * measures saw it: the client, and in a bidirectional run the server too
 * (each its own direction). Intervals are cut at interval_ms, 2 x
 * interval_ms, ... from the round's start; the last one runs from the last
 * cut to the round's end (its last completion): partial when a stop request
 * or the duration ended the round between two cuts, and never empty of time
 * (a cut that falls on the round's end is not made). So the messages (and
 * bytes) of a round's intervals add up to the round's own, exactly. */
struct rk_bench_interval {
	uint32_t round;
	uint32_t size;
	uint32_t index;          /* from 0 within the round */
	double start_s, end_s;   /* seconds from the round's start */
	uint64_t msgs;           /* bandwidth: messages completed in it (all this
				    side's QPs); latency: iterations */
	uint64_t bytes;          /* msgs x size */
	double bw, msg_rate;     /* bytes and messages per second over it */
	struct rk_bench_lat lat; /* latency: its iterations' statistics */
	bool last;               /* the round's last (ends at the round's end) */
	int status;              /* 0, or the negative errno that failed the round in it */
	char error[320];         /* failed: what, the completion status by name, and its hint */
};

/* A round's intervals in brief: the lowest and highest interval by
 * bandwidth (latency: by p99), over every interval that ran at least half
 * interval_ms (a short last one, cut off by a stop, would say little). */
struct rk_bench_interval_range {
	uint32_t count;          /* intervals reported */
	uint32_t ranked;         /* of those, ranked for min and max */
	struct rk_bench_interval min, max;
};

/* The run as the client plans it. The client announces it in its SETUP; a
 * server checks the fields its own command line gave (perftest habit: the
 * same options on both sides) and refuses a client that asks otherwise,
 * naming the option and both values. */
struct rk_bench_plan {
	enum rk_bench_test test;
	enum rk_bench_mode mode;
	enum rk_transport transport;
	uint32_t qps;
	uint32_t threads;         /* the client's (the server answers with one) */
	bool bidir;
	uint32_t nsizes;          /* the sizes, as rk_bench_plan_sizes() sums them */
	uint32_t min_size, max_size;
	uint32_t sizes_hash;
	uint64_t iters;           /* per QP and size; 0: the run goes by duration_ms */
	uint32_t duration_ms;     /* per size; 0: by iters; RK_BENCH_UNTIL_STOPPED */
};

/* Which fields of a server's plan its command line gave. */
enum {
	RK_BENCH_GIVEN_TEST = 1u << 0,
	RK_BENCH_GIVEN_MODE = 1u << 1,
	RK_BENCH_GIVEN_TRANSPORT = 1u << 2,
	RK_BENCH_GIVEN_SIZES = 1u << 3,
	RK_BENCH_GIVEN_ITERS = 1u << 4,
	RK_BENCH_GIVEN_DURATION = 1u << 5,
	RK_BENCH_GIVEN_QPS = 1u << 6,
	RK_BENCH_GIVEN_THREADS = 1u << 7,
	RK_BENCH_GIVEN_BIDIR = 1u << 8,
};

/* The sizes of a plan (n >= 1, in the order run): their count, smallest,
 * largest and a hash of the list. Pure logic. */
void rk_bench_plan_sizes(struct rk_bench_plan *p, const uint32_t *sizes, uint32_t n);

/* Whether the client's plan matches the server's in every field given (bits
 * RK_BENCH_GIVEN_*): 0, or -EINVAL with why naming the first that does not,
 * as the option: "--size: client 4096, server 65536". Pure logic. */
int rk_bench_plan_match(const struct rk_bench_plan *server, uint32_t given,
			const struct rk_bench_plan *client, char *why, size_t why_len);

/* Sizes in one run, at most. */
#define RK_BENCH_MAX_SIZES 64

/* The sizes as a command takes them (rdmakit bench --size): one size "N",
 * a sweep "LO..HI" of powers of two, or a list "A,B,C"; each 1 ..
 * RK_BENCH_MAX_SIZE with k/M/G (1024^n) suffixes. Writes up to
 * RK_BENCH_MAX_SIZES sizes and returns their count, or -EINVAL with why
 * naming the option ("option --size: '4x' is not a number ..."). Pure
 * logic. */
int rk_bench_sizes_parse(const char *text, uint32_t *sizes, char *why, size_t why_len);

/* What a command asks of a run, before defaults (rdmakit bench's options). */
struct rk_bench_ask {
	bool server;
	enum rk_bench_test test;
	enum rk_bench_mode mode;
	enum rk_transport transport;
	uint32_t qps, threads;
	bool bidir;
	const char *sizes;        /* rk_bench_sizes_parse() text; NULL: the default
				     (8 for atomics, 2 for latency, 65536) */
	uint64_t iters;           /* 0: not given */
	int64_t duration_s;       /* -1: not given; 0: until stopped */
	double interval_s;        /* soak records every this many seconds (whole
				     milliseconds); 0: none */
	/* Checked by rk_bench_ask_opts() only: */
	bool odp;                 /* the data buffer with on-demand paging (RC only) */
	const struct rk_gates *gates; /* thresholds (the client's, each for the mode
					 it grades); NULL: none */
	uint32_t given;           /* a server: the fields its command line gave
				     (RK_BENCH_GIVEN_*), to check the client's against */
};

/* The ask checked as a whole, as perftest users give it: test, mode and
 * transport together (rk_bench_check()), --count or --duration, --threads
 * within --qps and for bandwidth, atomics on 8 bytes, and the soak options
 * (--interval on the client within --duration, --duration 0 for one size
 * and one direction). Fills sizes (RK_BENCH_MAX_SIZES), *nsizes_p and
 * *iters_p (a client given neither --count nor --duration: 5000 for
 * bandwidth, 1000 for latency). 0, or -EINVAL with why naming the option.
 * Pure logic. */
int rk_bench_ask_check(const struct rk_bench_ask *a, uint32_t *sizes, int *nsizes_p,
		       uint64_t *iters_p, char *why, size_t why_len);

struct rk_bench_opts;

/* rk_bench_ask_check(), and what the engine's options must agree with:
 * --odp on RC only, thresholds on the client and each for the mode it
 * grades. Then *bo is set to the run the ask comes to: test, mode,
 * transport, qps, threads, bidir, max_size, the plan (sizes, iters,
 * duration_ms, which is RK_BENCH_UNTIL_STOPPED for duration_s 0), expect (a
 * server: given) and interval_ms, the rest zero (the caller adds the
 * connection, tuning, memory and callbacks). A client runs a round per
 * sizes[i] with plan.iters and plan.duration_ms. 0, or -EINVAL with why
 * naming the option (*bo, sizes and *nsizes_p untouched). Pure logic. */
int rk_bench_ask_opts(const struct rk_bench_ask *a, struct rk_bench_opts *bo, uint32_t *sizes,
		      int *nsizes_p, char *why, size_t why_len);

struct rk_bench_opts {
	struct rk_conn_opts conn; /* server/host/port/cm/device/GID/timeouts; the
				     engine sets transport and QP caps itself */
	/* client: what to run (the server learns it from the client) */
	enum rk_bench_test test;
	enum rk_bench_mode mode;
	enum rk_transport transport;
	uint32_t qps;
	uint32_t threads;         /* bandwidth: threads of this side, each with its
				     own QPs (at most qps); 0 or 1: one. The
				     server answers with one thread. */
	bool bidir;
	uint32_t max_size;        /* the largest size of all rounds */
	/* client: the rest of what it announces (sizes, iters, duration; the
	 * fields above are taken from above); server: what its command line
	 * gave, in the fields that expect names (RK_BENCH_GIVEN_*; 0: serve
	 * whatever the client asks) */
	struct rk_bench_plan plan;
	uint32_t expect;
	struct rk_bench_tuning tuning;
	/* this side's data buffer: kind (never device memory: the engine fills
	 * and checks it with the CPU, so dm is refused and auto skips it) and
	 * on-demand paging (RC only; checked for the test's ops) */
	struct rk_region_opts mem;
	/* called about every 200 ms during a round, from the engine's loop */
	void (*progress)(const struct rk_bench_progress *p, void *arg);
	void *progress_arg;
	/* Soak runs: an interval report every interval_ms (0: none), from the
	 * engine's loop on the side that measures. */
	uint32_t interval_ms;
	void (*interval)(const struct rk_bench_interval *iv, void *arg);
	void *interval_arg;
	/* A stop request, set (non-zero) from a signal handler: the running
	 * round ends as if its time were up, counted and checked as ever, and
	 * the result says it was stopped. A server that is asked to stop tells
	 * the client (BENCH_FIN during a round), which ends the round the same
	 * way and runs no more. NULL: none. Looked at about every 200 ms. */
	const volatile sig_atomic_t *stop;
	/* This side's receives (SEND runs: the server, and the client in
	 * --bidir and latency runs) come from one shared receive queue that all
	 * its data QPs drain (srq.h); srq_opts.slot_size is set by the engine.
	 * Every message received through it is checked as it arrives. */
	bool srq;
	struct rk_srq_opts srq_opts;
	/* XRC asked for: refused by name where the device lacks it (and not
	 * implemented where it has it): -EOPNOTSUPP. */
	bool xrc;
};

/* What was set up, for the report's header. */
struct rk_bench_info {
	bool server;
	enum rk_bench_test test;
	enum rk_bench_mode mode;
	enum rk_transport transport;
	uint32_t qps;
	uint32_t threads;         /* this side's */
	bool bidir;
	uint32_t max_size;
	bool cm;
	char peer[80];
	char device[64];
	uint8_t port_num;
	bool has_gid;
	uint32_t gid_index;
	char gid[48];
	int path_mtu;             /* bytes */
	struct rk_link_rate link; /* the port's link rate: grade against it only
				     when link.meaningful (not on rxe) */
	uint32_t inline_asked;
	uint32_t inline_granted;  /* what the provider granted the data QPs */
	uint32_t tx_depth, rx_depth, post_list, signal_every, cq_batch;
	uint32_t yield_after;     /* 0: never yields */
	uint64_t inflight;        /* bytes outstanding per QP at most (bandwidth) */
	uint8_t ack_timeout;      /* the data QPs' local ACK timeout exponent */
	uint8_t retry_cnt;
	bool wr_api;
	char wr_api_why[120];     /* why it is used or not */
	uint32_t max_rd_atomic;
	uint8_t rnr_retry;        /* the data QPs' RNR retries (7: forever) */
	bool srq;                 /* this side's receives come from a shared receive
				     queue (SEND runs where this side receives) */
	char srq_why[120];        /* --srq given but not used here: why */
	struct rk_srq_stats srq_setup; /* srq: as created */
	enum rk_mem_kind mem;     /* this side's data buffer (never RK_MEM_AUTO) */
	bool mem_chosen;          /* by auto, for the reason in mem_why */
	char mem_why[200];
	bool odp;                 /* registered with on-demand paging */
	uint32_t qpn[RK_BENCH_MAX_QPS];
	uint32_t peer_qpn[RK_BENCH_MAX_QPS];
	/* (cm on an iWARP device: each data QP had an RDMA CM connection of its
	 * own; retransmission is TCP's, so ack_timeout, retry_cnt and rnr_retry
	 * do not apply, and no immediate data is used. No member says so: the
	 * struct's layout is ABI, see docs/library.md.) */
};

/* One round: one size, a number of iterations per QP or a duration. */
struct rk_bench_round {
	uint32_t size;
	uint64_t iters;       /* per QP; 0 when duration_ms is set */
	uint32_t duration_ms;
};

struct rk_bench_result {
	uint32_t index;          /* round number, from 0 */
	struct rk_bench_round round;
	bool initiator;          /* this side posted the measured operations */
	uint64_t iters;          /* per QP, as run (duration mode: the fewest of any QP) */
	uint64_t msgs;           /* messages completed, all QPs (this side's, or the
				    client's as reported to the server) */
	uint64_t bytes;
	double seconds;
	double bw_avg, bw_peak;  /* bytes per second */
	double msg_rate;         /* messages per second */
	uint64_t peer_msgs;      /* bidirectional: what the peer completed */
	double peer_bw_avg;
	uint64_t received;       /* SEND: messages this side received; lat: pongs served */
	uint64_t lost;           /* UC/UD: sent by the peer, never received */
	struct rk_bench_lat lat; /* latency mode */
	bool checked_here;       /* this side checked something after the round */
	char check[200];         /* what this side checked, and how it came out */
	char peer_check[120];    /* the peer's verdict ("" when it checked nothing) */
	/* The port's counters over this round (the server: from waiting for it),
	 * success or not: port-wide. */
	struct rk_run_counters counters;
	bool stopped;            /* a stop request ended the round early */
	bool stopped_by_peer;    /* ... the peer's (its BENCH_FIN) */
	struct rk_bench_interval_range intervals; /* interval_ms set, this side measuring */
	uint64_t start_ns;       /* CLOCK_MONOTONIC at the round's start on this side
				    (after the start sync) */
	/* info.srq: the SRQ since it was created (also when the round fails):
	 * limit events, fewest posted, what was posted and taken. */
	struct rk_srq_stats srq;
};

struct rk_bench;

/* Connect (both sides), exchange what runs and create the data QPs, memory
 * and CQs. Every failure is logged once. */
int rk_bench_connect(const struct rk_bench_opts *opts, struct rk_bench **bench_p);

/* What was set up. */
const struct rk_bench_info *rk_bench_get_info(const struct rk_bench *b);

/* Run one round. Client: round says what (duration_ms may be
 * RK_BENCH_UNTIL_STOPPED). Server: round is ignored; it waits for the
 * client's next round and returns 1 (no result) when the client has
 * finished. A failed check of what arrived is -EBADMSG on both sides. A
 * round that fails in its loop reports a last interval with the error
 * (interval_ms set) before it returns the error. After a stopped round
 * (res->stopped) the client should run no more rounds. res->counters is
 * filled also when the round fails. */
int rk_bench_run(struct rk_bench *b, const struct rk_bench_round *round,
		 struct rk_bench_result *res);

/* Client: tell the server there are no more rounds. Then, both sides, free
 * everything. NULL is ignored. */
void rk_bench_close(struct rk_bench *b);

/* ---- a server of several clients at once (clients.h) ---- */

/* One client of rk_bench_serve_clients(). */
struct rk_bench_client {
	struct rk_client_outcome out; /* first: index, peer, status, error; done:
					 rounds checked, bytes and msgs their sums */
	bool connected;           /* set up: info is set */
	struct rk_bench_info info;
	struct rk_bench_result *rounds; /* out.done of them */
};

struct rk_bench_clients {
	uint32_t wanted;
	struct rk_bench_client *clients; /* wanted entries: those that arrived in
					    order of arrival, then the missing */
	struct rk_clients_total total;   /* the aggregate, as clients.h defines it */
};

/* Server: listen once (opts->conn: server, port, cm, device; its
 * accept_timeout_ms bounds how long the n clients may take to arrive, -1
 * none; a stop request also closes the window) and serve up to n clients at
 * once, each on a thread of its own with its own control connection (or CM
 * id), data QPs, CQs and memory, run as a one-client server would run it,
 * every round checked. One client failing or vanishing ends only its own
 * run. opts->progress and opts->interval are not used (many clients at
 * once); the port counters in each result are port-wide (all clients).
 * on_client (NULL: none) is called as each client ends, from its thread,
 * one at a time. Returns 0 with *rep filled (how each client came out is in
 * rep; free it with rk_bench_clients_free()), or a negative errno when the
 * server could not listen (logged), -EINVAL for n outside 1..RK_CLIENTS_MAX. */
int rk_bench_serve_clients(const struct rk_bench_opts *opts, uint32_t n,
			   void (*on_client)(const struct rk_bench_client *c, void *arg),
			   void *arg, struct rk_bench_clients *rep);
void rk_bench_clients_free(struct rk_bench_clients *rep);

/* The figures of a round's result that thresholds grade (gate.h): the
 * average bandwidth (bandwidth mode), the latency p99 (latency mode, the
 * side that timed it), the link rate where it is a real link's. */
void rk_bench_gate_figures(const struct rk_bench_info *in, const struct rk_bench_result *r,
			   struct rk_gate_figures *f);

/* Names: "send", "write", "read", "fetch-add", "cmp-swap"; "bw", "lat". */
const char *rk_bench_test_str(enum rk_bench_test test);
const char *rk_bench_mode_str(enum rk_bench_mode mode);
int rk_bench_test_parse(const char *text, enum rk_bench_test *test_p);
int rk_bench_mode_parse(const char *text, enum rk_bench_mode *mode_p);

/* Whether the test may run on the transport in the mode (RC: all; UC: send
 * and write; UD: send), and the largest size for the transport (UD: the path
 * MTU). 0, or -EINVAL with a sentence in why. Pure logic. */
int rk_bench_check(enum rk_bench_test test, enum rk_bench_mode mode, enum rk_transport transport,
		   uint32_t qps, bool bidir, char *why, size_t why_len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
