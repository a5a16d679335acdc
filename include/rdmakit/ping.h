/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: ping-pong with round-trip statistics.
 *
 * Three engines share the options, the progress report and the result
 * defined here:
 *   rk_ping_run()      native: rdmakit to rdmakit, the client SENDs a ping,
 *                      the server SENDs it back; TCP exchange or RDMA CM
 *                      (rk_conn); the client's request tells the server the
 *                      size, count and whether to check data;
 *   rk_rping_run()     librdmacm's rping protocol (rping.h);
 *   rk_pingpong_run()  ibv_rc/uc/ud_pingpong's protocol (pingpong.h).
 * Each fills a struct rk_ping_result (also when it fails: the rounds done
 * so far and the error), and reports its stages and every round through an
 * optional callback. The engines print nothing; errors are logged.
 */
#ifndef RDMAKIT_PING_H
#define RDMAKIT_PING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/counters.h>
#include <rdmakit/gid.h>
#include <rdmakit/qp.h>
#include <rdmakit/stats.h>
#include <rdmakit/traffic.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_PING_MAX_SIZE (16u << 20)     /* native and pingpong: bytes per ping */
#define RK_PING_MAX_COUNT 1000000000ull

struct rk_ping_result;

/* What the progress callback is told about. */
enum rk_ping_stage {
	RK_PING_LISTENING, /* server: a client may connect now */
	RK_PING_ADDRESSES, /* pingpong: both sides' addresses known (lid, psn, peer_*) */
	RK_PING_CONNECTED, /* connected: device, peer, QPNs, MTU, size, count set */
	RK_PING_ROUND,     /* one round done: round */
};

struct rk_ping_round {
	uint64_t index;       /* from 0 */
	uint32_t size;        /* bytes of this round */
	double us;            /* client: round-trip time; server: time to serve it */
	bool checked;         /* its data was checked */
	bool unchecked_first; /* pingpong server: the first ping, which it cannot know */
	const void *data;     /* rping: the pong (client) or the ping read (server) */
	size_t len;
};

struct rk_ping_progress {
	enum rk_ping_stage stage;
	const struct rk_ping_result *result; /* the run so far */
	const struct rk_ping_round *round;   /* RK_PING_ROUND only */
};

typedef void (*rk_ping_progress_fn)(const struct rk_ping_progress *progress, void *arg);

/* The options of all three engines; each says which it reads. */
struct rk_ping_opts {
	bool server;
	const char *host;        /* client: the server; rping server: the address
				    to listen on (NULL: any) */
	const char *source;      /* rping client: the local address to connect from
				    (rping -I; NULL: the route's); the other
				    engines refuse it */
	uint16_t port;           /* 0: the protocol's default port */
	bool cm;                 /* native: RDMA CM instead of the TCP exchange */
	const char *device;      /* native over TCP, pingpong: NULL for the first */
	uint8_t port_num;        /* 0 means 1 */
	int gid_index;           /* -1 chooses by the address the peer talks to */
	enum rk_transport transport; /* pingpong: RK_RC, RK_UC or RK_UD */
	uint32_t srq_qps;        /* pingpong RC: this many QPs over one SRQ, as
				    ibv_srq_pingpong -q (pingpong.h); 0: one QP */
	uint32_t size;           /* bytes per ping (native server: the client says;
				    rping server: the largest it serves) */
	uint64_t count;          /* rounds (native server: the client says;
				    rping: 0 is the client forever, the server
				    until the client leaves) */
	unsigned int interval_ms; /* client: pause between rounds */
	int mtu;                 /* pingpong RC/UC: path MTU in bytes, 0: 1024 */
	uint32_t rx_depth;       /* pingpong: receives kept posted, 0: 500 */
	bool validate;           /* check the data of every round */
	bool events;             /* sleep on a completion channel, not polling */
	int timeout_ms;          /* client: keep trying to connect this long; both:
				    bound on every wait; 0: 10 s */
	int accept_timeout_ms;   /* server: wait this long for a client (<= 0: forever) */
	/* Traffic class, SL, flow label, hop limit (traffic.h): every protocol;
	 * over RDMA CM (native --cm, rping) the class only, the rest warned. */
	struct rk_traffic traffic;
	rk_ping_progress_fn progress; /* NULL: none */
	void *arg;
};

/* What a run did. */
struct rk_ping_result {
	bool cm;                 /* connected through RDMA CM */
	char device[64];         /* empty until connected */
	char peer[80];
	uint32_t qpn, peer_qpn;  /* pingpong SRQ: its first QP's */
	uint32_t qps;            /* pingpong SRQ: QPs over the SRQ; 0 otherwise */
	int path_mtu;            /* bytes */
	bool has_gid;
	struct rk_gid_choice gid;
	/* pingpong's addresses (RK_PING_ADDRESSES) */
	uint16_t lid, peer_lid;
	uint32_t psn, peer_psn;
	union ibv_gid peer_gid;
	/* the run */
	uint32_t size;           /* bytes per ping as run */
	uint64_t count;          /* rounds due (0: until the peer stops) */
	bool validate;           /* data is checked (native: as the two agreed) */
	double *us;              /* one sample per round, in microseconds */
	size_t rounds;
	size_t cap;
	bool checked;            /* every round's data was checked */
	bool first_unchecked;    /* pingpong server: all but the first */
	int64_t bad_offset;      /* first differing byte (-1: none) */
	uint64_t bad_round;      /* its round, from 0 */
	bool peer_left;          /* rping server: the client disconnected */
	bool stopped;            /* native and rping client: a stop request (stop.h)
				    ended it before its count; native server:
				    the client said it stopped so */
	int error;               /* 0, or the run's negative errno */
	/* The port's counters from when the device was known (before the QP
	 * connects) to the end of the run, success or not: port-wide. */
	struct rk_run_counters counters;
};

/* Native ping (above). The client sends opts->count pings of opts->size
 * bytes; the server serves one client. A stop request (stop.h) ends the
 * client's run after the round under way: it tells the server (a SEND of
 * no bytes), and both end well with the rounds done and result->stopped
 * (the command's Ctrl-C, as ping(8)'s). Returns 0 or a negative errno, also
 * kept in result->error; *result is always filled (free it with
 * rk_ping_result_free()). */
int rk_ping_run(const struct rk_ping_opts *opts, struct rk_ping_result *result);

/* Statistics of the result's rounds: -EINVAL when there are none. */
int rk_ping_result_stats(const struct rk_ping_result *result, struct rk_rtt_stats *stats_p);

/* Free the samples; the result can be reused. NULL ignored. */
void rk_ping_result_free(struct rk_ping_result *result);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
