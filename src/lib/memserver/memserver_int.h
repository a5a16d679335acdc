/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: the memory server's state, shared by its session
 * store (memserver_session.c) and its event loop (memserver.c). */
#ifndef RDMAKIT_LIB_MEMSERVER_INT_H
#define RDMAKIT_LIB_MEMSERVER_INT_H

#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <rdmakit/memserver.h>

#define MS_MAX_DEVS 8

/* A device connections came through: its PD (session MRs, QPs) and the one
 * completion channel of all its connections' CQs. */
struct ms_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	int max_qp_rd_atom;
};

struct ms_session {
	struct ms_session *next;
	uint64_t id;
	uint64_t size;
	void *mem;
	struct rk_mem_map map; /* memory of opts.mem's kind (buf NULL: anonymous or a file) */
	enum rk_mem_kind kind;
	bool odp;          /* registered with on-demand paging */
	int fd;            /* the --state-dir file, or -1 */
	char *path;        /* its name, or NULL */
	struct ms_dev *dev; /* where mr is registered, or NULL */
	struct ibv_mr *mr;
	unsigned int nconn;
	uint64_t mask;     /* queues connected */
	char client[64];
	time_t created;
	time_t idle_since; /* 0 while connected */
	int64_t expire_ms; /* monotonic; -1 while connected */
	bool adopted;
};

struct ms_conn {
	struct ms_conn *next;
	struct rdma_cm_id *id;
	struct ms_session *sess;
	uint16_t queue;
	bool new_session;
	struct ms_dev *dev;
	struct ibv_cq *cq;
	struct ibv_mr *msg_mr;
	/* The one SEND: the region, or the ERROR message (memproto.h step 4)
	 * when fail says the region could not be made after the accept. */
	struct {
		union {
			struct rk_mem_region region;
			uint8_t error[RK_MEM_REJECT_LEN];
		} out;
		/* RK_MEM_REQ_SENDS_FIRST: the client's request SENDs land here. */
		struct rk_mem_req hello[RK_MEM_REQ_SENDS];
	} msg;
	int fail;
	char why[RK_MEM_REJECT_TEXT];
	bool established;
	bool await_hello; /* RK_MEM_REQ_SENDS_FIRST and not received yet */
	char peer[64];
};

struct ms_counter_base {
	char device[64];
	uint8_t port;
	uint64_t xmit_words, rcv_words; /* UINT64_MAX: no data counters */
	uint64_t sent_pkts, rcvd_pkts;  /* UINT64_MAX: no hw_counters */
};

struct rk_memserver {
	struct rk_memserver_opts o;
	uint16_t port;
	struct rdma_event_channel *ch;
	/* One, or [::] IPv6-only and 0.0.0.0 beside it (listen_any()). */
	struct rdma_cm_id *listeners[2];
	int nlisteners;
	int stopfd;
	int sigfd;
	sigset_t oldmask;
	struct ms_dev devs[MS_MAX_DEVS];
	int ndevs;
	struct ms_session *sessions;
	int nsessions;
	struct ms_conn *conns;
	unsigned int nconns;
	time_t started;
	uint64_t accepted, rejected, disconnected, expired, sessions_made;
	int nbase;
	struct ms_counter_base base[RK_MEMSERVER_MAX_COUNTERS];
};

/* Session store (memserver_session.c). Errors are returned with a reason a
 * client can read in why. A new session has no memory until it is
 * registered (the server accepts its connection first). */
int ms_session_new(struct rk_memserver *srv, uint64_t size, const char *client,
		   struct ms_session **s_p, char *why, size_t why_len);
struct ms_session *ms_session_find(struct rk_memserver *srv, uint64_t id);
/* -EXDEV when s's region is registered on a device other than dev. */
int ms_session_check_dev(const struct ms_session *s, const struct ms_dev *dev, char *why,
			 size_t why_len);
/* Allocate s's memory if it has none yet, and register it on dev, once
 * (REMOTE_READ and REMOTE_WRITE; read_only, a test's fault: without
 * REMOTE_WRITE). */
int ms_session_register(struct rk_memserver *srv, struct ms_session *s, struct ms_dev *dev,
			bool read_only, char *why, size_t why_len);
/* Forget s's registration (its device is going away). */
void ms_session_unregister(struct ms_session *s);
/* Unlink from the store and free; gone also removes its --state-dir file. */
void ms_session_free(struct rk_memserver *srv, struct ms_session *s, bool gone);
/* A connection came or went: the session's count, mask and --keep clock. */
void ms_session_attach(struct ms_session *s, uint16_t queue);
void ms_session_detach(struct rk_memserver *srv, struct ms_session *s, uint16_t queue);
/* Free the sessions whose --keep ran out; returns ms until the next one
 * runs out, or -1 for none. */
int ms_sessions_expire(struct rk_memserver *srv);
/* Adopt the session files of --state-dir. */
int ms_sessions_adopt(struct rk_memserver *srv);

/* Port data counters (memserver_session.c). */
void ms_counters_baseline(struct rk_memserver *srv);

#endif
