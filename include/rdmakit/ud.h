/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: UD datagrams, server and client.
 *
 * One server UD QP serves several clients: each client SENDs its datagrams
 * (with immediate data: its QPN, as udaddy does) to the server's QP through
 * an address handle, and the server answers each with the same bytes through
 * an address handle back to the sender. Clients find the server by the TCP
 * exchange (a HELLO each way) or by RDMA CM in RDMA_PS_UDP (a SIDR request
 * and reply), which is udaddy's protocol: rdmakit's UD and udaddy work with
 * each other in either role. rdmakit's own datagrams carry a pattern made
 * from the client's QPN and the datagram's number, checked on both sides;
 * a peer that announces nothing (udaddy) is served unchecked.
 *
 * A UD datagram is one packet: a size above the path MTU is refused
 * (-EMSGSIZE) before anything is sent.
 */
#ifndef RDMAKIT_UD_H
#define RDMAKIT_UD_H

#include <stdbool.h>
#include <stdint.h>

#include <rdmakit/counters.h>
#include <rdmakit/traffic.h>
#include <rdmakit/srq.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_UD_MAX_CLIENTS 64
#define RK_UD_MAX_SIZE	  4096
#define RK_UD_CM_PORT	  7174 /* udaddy's RDMA CM port */

struct rk_ud_event;

struct rk_ud_opts {
	bool server;
	const char *host;      /* client: the server's name or address */
	uint16_t port;         /* 0: RK_DEFAULT_PORT (TCP) or RK_UD_CM_PORT (cm) */
	bool cm;               /* RDMA CM in RDMA_PS_UDP instead of the TCP exchange */
	const char *device;    /* NULL: the first device (CM client: by address) */
	uint8_t port_num;      /* 0 means 1 */
	int gid_index;         /* -1: choose */
	uint32_t size;         /* bytes per datagram, 1..RK_UD_MAX_SIZE */
	uint32_t count;        /* datagrams per client (a CM client that announces
				  nothing, such as udaddy, is expected to send this many) */
	int clients;           /* server: serve this many clients, then stop (1..64) */
	bool events;           /* sleep on a completion channel instead of polling */
	int timeout_ms;        /* client: keep trying to connect this long; both:
				  bound on every wait */
	int wait_ms;           /* server: give up when no client came this long (<= 0: forever) */
	/* Traffic class, SL, flow label, hop limit of the datagrams (traffic.h):
	 * in every address handle, with CM too (the SIDR exchange itself
	 * carries only the class, as the id's type of service). */
	struct rk_traffic traffic;
	/* Optional: called as the run goes (see enum rk_ud_event). */
	void (*on_event)(const struct rk_ud_event *ev, void *arg);
	void *arg;
	/* Server: the QP's receives come from a shared receive queue (srq.h;
	 * srq_opts.depth 0: as many as the receive queue would have, at most
	 * 256; slot_size and wr_id_base are the engine's). */
	bool srq;
	struct rk_srq_opts srq_opts;
	bool xrc;              /* refused by name (-EOPNOTSUPP) */
};

/* One client as the server knows it. */
struct rk_ud_peer {
	char addr[80];
	bool rdmakit;      /* announced itself: its datagrams carry rdmakit's pattern */
	uint32_t qpn;      /* 0 until known (udaddy announces nothing) */
	uint64_t count;    /* datagrams it announced (or opts.count) */
	uint64_t received, echoed;
};

/* What a run did. Filled as far as the run got, also when it fails. */
struct rk_ud_result {
	bool has_qp;        /* the fields below up to qkey are valid */
	char device[64];
	uint8_t port_num;
	uint32_t qpn;
	uint32_t qkey;
	/* server */
	int nclients;
	struct rk_ud_peer clients[RK_UD_MAX_CLIENTS];
	/* client */
	char peer[80];
	uint32_t peer_qpn, peer_qkey;
	bool peer_rdmakit;
	uint64_t sent;       /* server: datagrams echoed */
	uint64_t received;
	bool checked;        /* every datagram's bytes were checked */
	double elapsed_us;   /* first datagram to last answer (client), or the whole
				serving time (server) */
	/* The port's counters from when the QP was made to the end of the run,
	 * success or not: port-wide. */
	struct rk_run_counters counters;
	bool srq;            /* server: receives came from the SRQ below */
	struct rk_srq_stats srq_stats;
};

enum rk_ud_event_kind {
	RK_UD_READY,    /* server: listening, QP made; client: connected to the server */
	RK_UD_CLIENT,   /* server: a client came (ev->client) */
	RK_UD_DATAGRAM, /* server: a datagram was echoed; client: an answer came */
};

struct rk_ud_event {
	enum rk_ud_event_kind kind;
	const struct rk_ud_result *result;
	const struct rk_ud_peer *client; /* server: CLIENT and DATAGRAM */
	uint64_t index;                  /* DATAGRAM: 1-based */
	uint64_t of;                     /* DATAGRAM: out of so many */
	uint32_t src_qpn;                /* DATAGRAM: where it came from */
	uint32_t imm;                    /* DATAGRAM: its immediate data (0: none) */
	bool checked;                    /* DATAGRAM: its bytes were checked */
};

/* Run the server or the client as opts says; *result is zeroed, then filled
 * as the run goes. Returns 0 when every datagram was sent and echoed, or a
 * negative errno, logged once: -EINVAL bad options, -EMSGSIZE a size above
 * the path MTU or a peer with another size, -EIO a byte that differs,
 * -ETIMEDOUT nothing came in time, -ECONNREFUSED nothing listens (CM). */
int rk_ud_run(const struct rk_ud_opts *opts, struct rk_ud_result *result);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
