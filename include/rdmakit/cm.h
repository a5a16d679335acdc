/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: connections through RDMA CM (librdmacm).
 *
 * The client resolves address and route, creates its QP on the device CM
 * found, and connects with its request (op, size, offset, its own buffer) in
 * the private data; the server gets the request, creates its QP, and accepts
 * with its buffer (address, length, rkey) in the private data. CM moves both
 * QPs to RTS. Every CM event that ends a connection (REJECTED, UNREACHABLE,
 * ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, ...) is logged by name, with its
 * status and the peer's reject reason where there is one.
 */
#ifndef RDMAKIT_CM_H
#define RDMAKIT_CM_H

#include <stdbool.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>

#include <rdmakit/device.h>
#include <rdmakit/cq.h>
#include <rdmakit/qp.h>
#include <rdmakit/mem.h>
#include <rdmakit/wire.h>
#include <rdmakit/traffic.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct rk_cm {
	struct rdma_event_channel *channel;
	struct rdma_cm_id *id;
	struct rk_device *dev;     /* wraps id->verbs; not the owner of the context */
	uint8_t port_num;
	struct rk_gid_choice gid;  /* the GID CM uses (its sgid), as rdmakit would name it */
	bool has_peer;
	struct rk_wire_buf peer;   /* the peer's private data */
	char peer_addr[64];
	bool listening;
	bool connected;
};

/* Client: resolve host:port to a device, port and route within timeout_ms. */
int rk_cm_resolve(const char *host, uint16_t port, int timeout_ms, struct rk_cm **cm_p);

/* Server: bind to bind_ip (NULL: any) and port, and listen. */
int rk_cm_listen(const char *bind_ip, uint16_t port, struct rk_cm **listener_p);

/* Server: wait up to timeout_ms for a connect request on a listener. The new
 * connection carries the client's private data in ->peer (checked: a request
 * without rdmakit's CM_HELLO is rejected and -EBADMSG returned). */
int rk_cm_get_request(struct rk_cm *listener, int timeout_ms, struct rk_cm **cm_p);

/* Create the connection's RC QP as an rk_qp, in INIT. The QP is rdmakit's,
 * not attached to the id: connect and accept move it to RTR and RTS with
 * RDMA CM's attributes, but at the smaller path MTU of the two ports (RoCE's
 * CM would give both sides the client's); rdmakit's CM_HELLO carries each
 * side's MTU, and with another program's peer the MTU is CM's. */
int rk_cm_create_qp(struct rk_cm *cm, struct ibv_pd *pd, struct rk_cq *send_cq,
		    struct rk_cq *recv_cq, const struct rk_qp_init_attr *attr, struct rk_qp **qp_p);

/* Client: connect with mine as private data; waits for the server's reply,
 * connects the QP and fills cm->peer from the reply's private data. No retry inside: -ECONNREFUSED
 * (no listener) and -EHOSTUNREACH may pass once the server is up, so the
 * caller may destroy, resolve afresh and try again, as after -EBUSY (a server
 * busy with another client); -ECONNABORTED is a server that rejected the
 * request (its reason is logged), -ETIMEDOUT no answer. */
int rk_cm_connect(struct rk_cm *cm, struct rk_qp *qp, const struct rk_wire_buf *mine,
		  int timeout_ms);

/* Client: a connect that retries while the server is not up yet. Calls
 * attempt(arg) (resolve, set up, connect: whatever one try is) until it
 * returns 0 or an error not worth a retry (rk_cm_retry_worth()), or until
 * timeout_ms since the first try would pass before the next one. Between
 * tries it sleeps RK_CM_RETRY_INTERVAL_MS, then calls reset(arg) (NULL:
 * none) to undo the failed try; an error from reset ends the loop. Logs
 * nothing itself: the caller knows what to suggest. *tries_p (may be NULL)
 * gets the number of tries. Returns attempt's last result or reset's error. */
#define RK_CM_RETRY_INTERVAL_MS 200
int rk_cm_connect_retry(int timeout_ms, int (*attempt)(void *arg), int (*reset)(void *arg),
			void *arg, int *tries_p);

/* Whether a connect error may pass once the server is up: -ECONNREFUSED (no
 * listener yet, or SIDR "no listener"), -EHOSTUNREACH, and -EBUSY (a server
 * of one client that has one: it may be done soon). */
bool rk_cm_retry_worth(int err);

/* Server: accept with mine as private data and wait for ESTABLISHED. */
int rk_cm_accept(struct rk_cm *cm, struct rk_qp *qp, const struct rk_wire_buf *mine,
		 int timeout_ms);

/* Server: refuse a request, with a reason the client will print. */
int rk_cm_reject(struct rk_cm *cm, const char *reason);

/* Disconnect (if connected) and wait briefly for DISCONNECTED. */
void rk_cm_disconnect(struct rk_cm *cm, int timeout_ms);

/* Has the peer disconnected? Looks at the connection's CM events without
 * waiting: true on DISCONNECTED (answered with our own disconnect), other
 * events are dropped with a debug line. For rk_cq_ids.gone while waiting
 * for the peer's next message. */
bool rk_cm_peer_left(struct rk_cm *cm);

/* Wait up to timeout_ms for the peer to disconnect (answered with our own
 * disconnect); other events are dropped with a debug line. True when it did.
 * For the side that received the last message of a flow: tearing down at
 * once can lose the ACK of that message, and the peer's SEND then ends in
 * IBV_WC_RETRY_EXC_ERR; the sender, whose SEND completed, leaves first. */
bool rk_cm_wait_peer_left(struct rk_cm *cm, int timeout_ms);

/* Destroy the connection or listener. Its QP (rk_qp_destroy()) and the PD,
 * CQs and MRs made on cm->dev must be freed first. NULL is ignored. */
void rk_cm_destroy(struct rk_cm *cm);

/* Other programs' protocols (rping, udaddy): their private data, or none,
 * instead of rdmakit's CM_HELLO, and UD connections in RDMA_PS_UDP.
 *
 * rk_cm_resolve_ps() and rk_cm_listen_ps() are rk_cm_resolve() and
 * rk_cm_listen() in port space ps (RDMA_PS_TCP for RC, RDMA_PS_UDP for UD
 * as udaddy uses), with traffic's class (NULL or unset: CM's default) as
 * the id's type of service (RDMA_OPTION_ID_TOS): the client's is set before
 * the route is resolved, the listener's before it listens (see traffic.h for
 * what CM does not take). */
int rk_cm_resolve_ps(const char *host, uint16_t port, enum rdma_port_space ps,
		     const struct rk_traffic *traffic, int timeout_ms, struct rk_cm **cm_p);
/* rk_cm_resolve_ps() from a local address (rping -I): source, numeric, in
 * the family of host's address, must be on an interface with an RDMA device
 * (-EINVAL when it is not an address; rdma_resolve_addr()'s errno, said
 * with a hint, when no RDMA device has it). NULL: the route's choice. */
int rk_cm_resolve_from(const char *host, uint16_t port, enum rdma_port_space ps,
		       const struct rk_traffic *traffic, const char *source, int timeout_ms,
		       struct rk_cm **cm_p);
int rk_cm_listen_ps(const char *bind_ip, uint16_t port, enum rdma_port_space ps,
		    const struct rk_traffic *traffic, struct rk_cm **listener_p);

/* rk_cm_get_request() without the CM_HELLO check: any private data (none,
 * for rping and udaddy) is kept as it came; see rk_cm_private_data(). */
int rk_cm_get_request_any(struct rk_cm *listener, int timeout_ms, struct rk_cm **cm_p);

/* The peer's private data as it came with its request (server) or its
 * accept (client after rk_cm_connect_raw()); RoCE pads it. *len_p is its
 * length (0: none); the bytes are cm's, valid until rk_cm_destroy(). */
const uint8_t *rk_cm_private_data(const struct rk_cm *cm, size_t *len_p);

/* Connect or accept with len bytes of data (0: none) as private data.
 * RC (RDMA_PS_TCP): qp from rk_cm_create_qp(); both return once it is
 * connected (in RTS: the client after its RTU, the server at ESTABLISHED).
 * UD (RDMA_PS_UDP): qp is any UD QP of the device (rk_qp_create()), in RTS
 * with the Q_Key the peer will use (RDMA_UDP_QKEY); the client's connect is
 * a SIDR request answered with the server's QPN and Q_Key (rk_cm_ud_peer());
 * the server's accept sends that answer and returns at once. */
int rk_cm_connect_raw(struct rk_cm *cm, struct rk_qp *qp, const void *data, size_t len,
		      int timeout_ms);
int rk_cm_accept_raw(struct rk_cm *cm, struct rk_qp *qp, const void *data, size_t len,
		     int timeout_ms);

/* UD client after rk_cm_connect_raw(): the server's address (for
 * ibv_create_ah()), QPN and Q_Key. -ENOTCONN before. */
int rk_cm_ud_peer(const struct rk_cm *cm, struct ibv_ah_attr *ah_p, uint32_t *qpn_p,
		  uint32_t *qkey_p);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
