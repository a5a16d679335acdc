/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: one connected RC (or UC) queue pair between two processes, set up
 * either way users know: the out-of-band TCP exchange, or RDMA CM.
 *
 * The client sends a request (what it wants done to the server's buffer) and
 * the server answers with the buffer it exposes. The server creates that
 * buffer only once it knows the request, so it registers exactly the access
 * the request needs. Tools supply two callbacks:
 *   client: prepare(conn, &request, &qp_access, why) once the device and PD
 *           are known; a non-zero return ends the client's setup (why, if
 *           set, is logged once by the connection);
 *   server: on_request(conn, &peer_request, &reply, &qp_access) the same,
 *           after the request was received; a non-zero return refuses the
 *           client (its reason is sent to it) and ends the server's setup.
 * After rk_conn_establish() the QP is in RTS on both sides and conn->ctl
 * carries sync points and messages (TCP socket, or the QP itself with CM).
 */
#ifndef RDMAKIT_CONN_H
#define RDMAKIT_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <rdmakit/device.h>
#include <rdmakit/gid.h>
#include <rdmakit/cq.h>
#include <rdmakit/qp.h>
#include <rdmakit/wire.h>
#include <rdmakit/ctl.h>
#include <rdmakit/cm.h>
#include <rdmakit/auth.h>
#include <rdmakit/traffic.h>
#include <rdmakit/srq.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* The default TCP/CM port, as ibv_rc_pingpong and perftest use. */
#define RK_DEFAULT_PORT 18515

/* What a server of one client tells the others while it serves that one
 * (code -EBUSY); their connect tries again until its timeout passes (a
 * server of N clients says it has N). */
#define RK_CONN_BUSY "the server is busy with another client (it serves one at a time)"

struct rk_conn;

struct rk_conn_opts {
	bool server;
	const char *host;        /* client: the server's name or address */
	const char *bind_ip;     /* server: NULL for any address */
	uint16_t port;           /* 0 means RK_DEFAULT_PORT */
	bool cm;                 /* RDMA CM instead of the TCP exchange */
	const char *device;      /* TCP: NULL for the first device; CM: the device the
				    address must resolve to (NULL: any) */
	uint8_t port_num;        /* TCP: 0 means 1 */
	int gid_index;           /* TCP: -1 chooses by the address the peer talks to */
	int timeout_ms;          /* client: keep trying this long for a server that is
				    not up yet; both: bound on every wait after that */
	int accept_timeout_ms;   /* server: wait this long for a client (-1: forever) */
	bool events;             /* completion channel instead of busy polling */
	enum rk_transport transport; /* RK_RC (default) or RK_UC; CM is RC only */
	int cq_depth;            /* 0 means 128 */
	struct rk_qp_init_attr qp; /* caps; transport, port and GID are filled in */
	struct rk_path_attr *path; /* NULL: rk_path_defaults() */
	/* Traffic class, SL, flow label, hop limit (traffic.h): over TCP in
	 * the QP's address vector (over path); with CM the class as the id's
	 * type of service, and what CM cannot carry is warned about. */
	struct rk_traffic traffic;
	int (*prepare)(struct rk_conn *conn, struct rk_wire_buf *request, int *qp_access,
		       char *why, size_t why_len, void *arg);
	int (*on_request)(struct rk_conn *conn, const struct rk_wire_buf *request,
			  struct rk_wire_buf *reply, int *qp_access, char *reason,
			  size_t reason_len, void *arg);
	/* Free what prepare/on_request made on conn->pd; called by
	 * rk_conn_close() (also when setup fails) before the PD goes. */
	void (*release)(struct rk_conn *conn, void *arg);
	/* Server: called once it listens, before it waits for a client (a
	 * failure before that is the server's own, not a client's). */
	void (*on_listening)(void *arg);
	void *arg;
	/* A file with a shared secret (auth.h): the two sides prove they hold
	 * it before the server sends its buffer's address and rkey; a side
	 * without it is refused. NULL: no authentication. */
	const char *auth_file;
	/* Not NULL: the QP receives from a shared receive queue of its own
	 * (conn->srq, srq.h), created with these options on the connection's
	 * PD and filled before the QP exists. */
	const struct rk_srq_opts *srq;
	/* RDMA CM: receives the control channel keeps posted from the start
	 * (rk_ctl_qp_keep_receive(): 0 lazily, 1 for an engine with receives
	 * of its own on the connection's QP, 2 for one with none there), each
	 * side's up before it connects or accepts, the server answering at
	 * sync points: no control message meets an empty receive queue. */
	unsigned int ctl_keep_receives;
};

struct rk_conn {
	bool server;
	bool cm_mode;
	struct rk_device *dev;
	uint8_t port_num;
	bool has_gid;
	struct rk_gid_choice gid;
	struct ibv_pd *pd;
	struct rk_cq *cq;          /* send and receive completions */
	struct rk_qp *qp;
	struct rk_ctl *ctl;
	struct rk_cm *cm;          /* CM mode: the connection */
	struct rk_cm *listener;    /* CM server */
	int listen_fd;             /* TCP server */
	char peer[80];             /* the peer's address, for messages */
	struct rk_endpoint local;  /* what this side sent (TCP) */
	struct rk_endpoint remote; /* what the peer sent (TCP) */
	struct rk_wire_buf request; /* the client's request */
	struct rk_wire_buf reply;   /* the server's buffer */
	enum ibv_mtu path_mtu;
	int timeout_ms;
	void (*release)(struct rk_conn *conn, void *arg);
	void *arg;
	struct rk_auth *auth;      /* the shared secret, NULL without --auth-file */
	struct rk_srq *srq;        /* opts.srq: the QP's receive queue */
	unsigned int ctl_keep_receives; /* opts.ctl_keep_receives */
	struct conn_doorman *doorman; /* server of one client: refuses the others */
};

/* Set up the connection as described above. Every failure is logged once,
 * naming the peer; a server refusing a client tells it why. */
int rk_conn_establish(const struct rk_conn_opts *opts, struct rk_conn **conn_p);

/* A server of several clients at once (bench and rc --clients): one
 * listening socket or CM id, and a connection per client, each with its own
 * device context (TCP) or the listener's device shared (CM), PD, CQ and QP.
 *
 * rk_conn_listen() listens as opts says (opts->server set; on_listening is
 * called once it listens). rk_conn_accept() waits up to timeout_ms (-1:
 * forever) for the next client: its TCP connection or CM request, nothing
 * set up yet (-ETIMEDOUT when none came, -EINTR on a stop request). Then
 * rk_conn_establish_accepted() sets that client's connection up as
 * rk_conn_establish() would with opts (its callbacks and arg are this
 * client's), and may run on a thread of the client's own: different pending
 * connections set up concurrently. On failure it closes the pending
 * connection; a pending connection never set up goes with rk_conn_close().
 * Close the listener after its clients' connections. */
struct rk_conn_listener;

int rk_conn_listen(const struct rk_conn_opts *opts, struct rk_conn_listener **l_p);
int rk_conn_accept(struct rk_conn_listener *l, int timeout_ms, struct rk_conn **pending_p);
int rk_conn_establish_accepted(struct rk_conn *pending, const struct rk_conn_opts *opts,
			       struct rk_conn **conn_p);
void rk_conn_listener_close(struct rk_conn_listener *l);

/* Wait on the connection's CQ for the completion of wr_id (one completion,
 * within conn->timeout_ms) and check its status. what names the operation in
 * messages. A completion with another wr_id is an error (-EPROTO). */
int rk_conn_wait(struct rk_conn *conn, uint64_t wr_id, const char *what, struct ibv_wc *wc_p);

/* Tear down in reverse order: control channel, CM disconnect, the tool's
 * buffers (opts->release), QP, CQ, PD, device. NULL is ignored. */
void rk_conn_close(struct rk_conn *conn);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
