/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the RC step flow, client and server.
 *
 * A server exposes one buffer (host or device memory) with exactly the
 * access the client's operation needs; a client connects (TCP exchange or
 * RDMA CM, through rk_conn_establish()) and works on it: SEND, SEND or WRITE
 * with immediate, RDMA WRITE, RDMA READ, fetch-add, compare-swap, or the
 * whole flow ("all": the server SENDs, the client READs, WRITEs, then
 * fetch-add and compare-swap). Steps are kept in order by sync points on the
 * control channel: prepare, sync "ready", act, sync "done" with this side's
 * status, finish. Every byte moved is checked by the side it arrives at, and
 * after each step each side reads back its buffer.
 */
#ifndef RDMAKIT_RCFLOW_H
#define RDMAKIT_RCFLOW_H

#include <stdbool.h>
#include <stdint.h>

#include <rdmakit/clients.h>
#include <rdmakit/counters.h>
#include <rdmakit/gid.h>
#include <rdmakit/traffic.h>
#include <rdmakit/srq.h>
#include <rdmakit/region.h>
#include <rdmakit/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_RCFLOW_OP_ANY 0u     /* server: serve what the client asks for */
#define RK_RCFLOW_OP_ALL RK_WIRE_OP_RC_ALL /* the whole flow; single ops are rk_op + 1 */
#define RK_RCFLOW_MAX_SGE 64
#define RK_RCFLOW_MAX_STEPS 5

/* Faults for tests. Client: WRONG_RKEY, OUTSIDE; server: NO_ACCESS, NO_RECV. */
enum rk_rcflow_inject {
	RK_RCFLOW_INJECT_NONE,
	RK_RCFLOW_INJECT_WRONG_RKEY, /* target the server's buffer with a wrong rkey */
	RK_RCFLOW_INJECT_OUTSIDE,    /* target just past the end of the server's buffer */
	RK_RCFLOW_INJECT_NO_ACCESS,  /* register the buffer without remote access */
	RK_RCFLOW_INJECT_NO_RECV,    /* post no receive for the client's SEND */
};

enum rk_rcflow_step_kind {
	RK_STEP_SEND_C2S,
	RK_STEP_SEND_IMM_C2S,
	RK_STEP_SEND_S2C,
	RK_STEP_WRITE,
	RK_STEP_WRITE_IMM,
	RK_STEP_READ,
	RK_STEP_FADD,
	RK_STEP_CSWAP,
};

struct rk_rcflow_result;

enum rk_rcflow_event {
	RK_RCFLOW_WAITING,   /* server: listening for a client */
	RK_RCFLOW_CONNECTED, /* both: connected; the result's connection fields are set */
	RK_RCFLOW_STEP,      /* both: a step ended (its record is result->steps[step]) */
};

struct rk_rcflow_opts {
	bool server;
	const char *host;        /* client: the server's name or address */
	uint16_t port;           /* 0: RK_DEFAULT_PORT */
	bool cm;                 /* RDMA CM instead of the TCP exchange */
	const char *device;      /* NULL: the first device (CM: by address) */
	uint8_t port_num;        /* 0 means 1 */
	int gid_index;           /* -1: choose */
	int timeout_ms;          /* client: keep trying to connect this long; both:
				    bound on every wait */
	int accept_timeout_ms;   /* server: wait this long for a client (-1: forever) */
	uint32_t op;             /* rk_rcflow_op_parse(); server: RK_RCFLOW_OP_ANY or
				    the only op it serves */
	uint64_t size;           /* client: bytes per operation; server: its buffer */
	int sge;                 /* split local buffers into so many SGEs (0 means 1) */
	bool events;             /* completion channel instead of busy polling */
	enum rk_mem_kind mem;    /* this side's buffer (region.h); dm: server only */
	bool odp;                /* register it with on-demand paging */
	enum rk_rcflow_inject inject;
	uint8_t rnr_retry;       /* TCP exchange: RNR retries (7: forever) */
	uint8_t retry;           /* TCP exchange: transport retries */
	struct rk_traffic traffic; /* traffic class, SL, flow label, hop limit (traffic.h) */
	const char *auth_file;   /* shared secret (auth.h); NULL: none */
	/* Server: its QP receives from a shared receive queue (srq.h; slot_size
	 * is the engine's: size), a client's SEND lands in one of its slots, is
	 * checked there and copied into the buffer. With --clients, each
	 * client's connection has an SRQ of its own. TCP exchange only (over
	 * RDMA CM the control messages use the QP's receives): -EINVAL. */
	bool srq;
	struct rk_srq_opts srq_opts;
	bool xrc;                /* refused by name (-EOPNOTSUPP) */
	/* Optional: called as the run goes. */
	void (*on_event)(const struct rk_rcflow_result *r, enum rk_rcflow_event ev, int step,
			 void *arg);
	void *arg;
};

/* What one step did, as this side saw it. */
struct rk_rcflow_step {
	enum rk_rcflow_step_kind kind;
	int status;          /* 0 or a negative errno */
	uint32_t bytes;
	bool checked;        /* content compared with what the peer put there */
	int64_t bad_offset;  /* -1: every byte matched */
	bool has_word;       /* atomics: the 8-byte word */
	uint64_t word_before, word_after;
	bool has_imm;
	uint32_t imm;
	char preview[72];    /* the buffer afterwards */
};

/* What a run did. Filled as far as it got, also when it fails. */
struct rk_rcflow_result {
	uint32_t op;            /* what the client asked for (server: 0 until it asked) */
	bool connected;         /* the connection fields below are set */
	char device[64];
	uint8_t port_num;
	bool has_gid;
	struct rk_gid_choice gid;
	bool cm;
	char peer[80];
	uint32_t qpn;
	uint32_t peer_qpn;
	int path_mtu;           /* bytes */
	/* this side's buffer */
	bool dm;                /* device memory */
	enum rk_mem_kind mem;   /* what it is (never RK_MEM_AUTO) */
	bool fell_back;         /* auto chose other than device memory */
	char mem_why[200];      /* auto: what it chose and why */
	bool odp;               /* registered with on-demand paging */
	uint32_t rkey;
	int access;             /* IBV_ACCESS_* it was registered with */
	/* client: the server's buffer as it told us */
	struct rk_wire_buf reply;
	int nsteps;             /* steps in the flow */
	int done;               /* steps recorded in steps[] */
	struct rk_rcflow_step steps[RK_RCFLOW_MAX_STEPS];
	/* The port's counters from when the device was known (before the QP
	 * connects) to the end of the run, success or not: port-wide. */
	struct rk_run_counters counters;
	bool srq;                /* server: receives came from the SRQ below */
	struct rk_srq_stats srq_stats;
};

/* Run the server or the client as opts says; *result is zeroed, then filled.
 * 0 when every step was done and checked on this side, or a negative errno,
 * logged once: -EINVAL bad options (an op the size cannot hold, more SGEs
 * than bytes, dm on a client), -EOPNOTSUPP device memory or on-demand paging
 * asked of a device without it, -ENOMEM huge pages the pool lacks, a
 * connection error (see rk_conn_establish()), -EIO bytes that differ, or the
 * error of the step that failed on either side. */
int rk_rcflow_run(const struct rk_rcflow_opts *opts, struct rk_rcflow_result *result);

/* ---- a server of several clients at once (clients.h) ---- */

/* One client of rk_rcflow_serve_clients(). */
struct rk_rcflow_client {
	struct rk_client_outcome out; /* first: index, peer, status, error; done
					 and msgs: steps that passed, bytes: what
					 they moved */
	struct rk_rcflow_result result;
	struct rk_span span;     /* connected .. every step done, the server's clock */
};

struct rk_rcflow_clients {
	uint32_t wanted;
	struct rk_rcflow_client *clients; /* wanted entries: in order of arrival,
					     then the missing */
	struct rk_clients_total total;    /* msgs: steps */
};

/* Server: listen once and run the flow with up to n clients at once, each on
 * a thread of its own with its own connection (control connection or CM id,
 * QP, CQ) and its own buffer, as rk_rcflow_run() would with one; one client
 * failing or vanishing ends only its own run. opts->accept_timeout_ms bounds
 * how long the n may take to arrive (-1: none); a stop request (stop.h)
 * also closes the window. opts->on_event is called once, with
 * RK_RCFLOW_WAITING, when the server listens; on_client (NULL: none) as each
 * client ends, from its thread, one at a time. 0 with *rep filled (free it
 * with rk_rcflow_clients_free()), or a negative errno when the server could
 * not listen or opts are bad (logged), -EINVAL for n outside
 * 1..RK_CLIENTS_MAX. */
int rk_rcflow_serve_clients(const struct rk_rcflow_opts *opts, uint32_t n,
			    void (*on_client)(const struct rk_rcflow_client *c, void *arg),
			    void *arg, struct rk_rcflow_clients *rep);
void rk_rcflow_clients_free(struct rk_rcflow_clients *rep);

/* "send", ..., "cmp-swap" (rk_op_parse()) or "all" into its code. -EINVAL
 * for any other name. */
int rk_rcflow_op_parse(const char *name, uint32_t *code_p);

/* "wrong-rkey", "outside" (client), "no-access", "no-recv" (server) into
 * its fault. -EINVAL for any other name. */
int rk_rcflow_inject_parse(const char *name, enum rk_rcflow_inject *inject_p);

/* The options as a command line gives them, checked before anything is
 * opened: size, --sge within it, the op, atomics on 8 bytes, device memory
 * and --srq on the server, each --inject fault on its side. 0, or -EINVAL
 * with why naming the option. Pure logic; rk_rcflow_run() checks the same
 * (and refuses --srq with --cm). */
int rk_rcflow_check(const struct rk_rcflow_opts *o, char *why, size_t why_len);

/* The name of an op code: "all", "SEND", ...; "unknown" for anything else. */
const char *rk_rcflow_op_name(uint32_t code);

/* "SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "FETCH_ADD", "CMP_SWAP". */
const char *rk_rcflow_step_name(enum rk_rcflow_step_kind kind);

/* True when the flow of op code has fetch-add or compare-swap (they need an
 * 8-byte aligned word). */
bool rk_rcflow_has_atomics(uint32_t op);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
