/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to librdmakit: what a listener's busy refusals (conn.c) and the
 * memserver's own event loop need of cm.c. */
#ifndef RDMAKIT_LIB_CM_INT_H
#define RDMAKIT_LIB_CM_INT_H

#include <stddef.h>
#include <stdint.h>

#include <rdmakit/cm.h>

#pragma GCC visibility push(hidden)

/* Refuse every connect request already waiting on listener, without
 * waiting for more, as rk_cm_reject_id() does. Returns how many. */
int rk_cm_refuse_waiting(struct rk_cm *listener, int code, const char *reason);

/* Bind id (the caller's own, on its own event channel) to bind_ip (NULL:
 * every address, [::] taking IPv4 too, or 0.0.0.0 where the kernel has no
 * IPv6) and port, and listen. Errors logged, with what to check
 * (port in use, no such local address, no RDMA device on it). */
int rk_cm_bind_listen(struct rdma_cm_id *id, const char *bind_ip, uint16_t port, int backlog);

/* Refuse id's pending connect request (an id of the caller's own, e.g. from
 * its own event loop) with an rdmakit ERROR message as the REJ private data:
 * code (a negative errno) and reason, which rdmakit clients print. When the
 * transport takes no private data of that size, refuses without it (warned).
 * peer names the client in messages. Returns 0 or a negative errno (logged). */
int rk_cm_reject_id(struct rdma_cm_id *id, int code, const char *peer, const char *reason);

/* A server's check of connect request id from a client that keeps the path
 * MTU RDMA CM gave it (another program, the kernel's rkblk, an rdmakit that
 * does not say its MTU): RDMA CM over RoCE gives the server that MTU too,
 * with no regard for its own port's. When it is above this port's active
 * MTU, every packet the server sends would be larger than its link carries
 * (the connection hangs, then fails on retries). 0, or -EMSGSIZE with the
 * reason for the peer in why (it fits an ERROR message; nothing logged: the
 * caller says what it does). rk_cm_get_request*() apply it; rkblk, refused
 * so, asks again one MTU lower. */
int rk_cm_request_mtu_check(struct rdma_cm_id *id, char *why, size_t why_len);

/* A listener on an address of this host that RDMA CM binds to device's
 * port_num (the first such IPv4 address, else IPv6), on a port the kernel
 * picks: for the device connected to itself (loopback on iWARP, whose QPs
 * connect only through RDMA CM). The address into addr, the port into
 * *port_p. -ENODEV (logged) when no address of this host binds to it. */
int rk_cm_listen_on_device(const char *device, uint8_t port_num, char *addr, size_t addr_len,
			   uint16_t *port_p, struct rk_cm **listener_p);

/* ---- one device connected to itself through RDMA CM (cm_self.c) ---- */

/* A listener on the device's own address and the active side's id resolved
 * to it: what a QP pair needs on iWARP to connect inside one process. */
struct rk_cm_self {
	struct rk_cm *listener, *active;
	char addr[64];
	uint16_t port;
	struct rk_device *dev; /* the device as RDMA CM opened it: PD, CQs, MRs go on it */
};

/* One side of a connection: cq, qa and mine in; cm (the passive side's:
 * out) and qp out, both the caller's to destroy (the QP first). */
struct rk_cm_self_side {
	struct rk_cq *cq;
	struct rk_qp_init_attr qa;
	struct rk_wire_buf mine;
	struct rk_cm *cm;
	struct rk_qp *qp;
};

/* s's listener on device port_num's own address (rk_cm_listen_on_device())
 * and s->active resolved to it. What it made, also on an error,
 * rk_cm_self_close() destroys. Errors logged; -EXDEV when the address
 * resolves to another device. */
int rk_cm_self_open(const char *device, uint8_t port_num, int timeout_ms, struct rk_cm_self *s);

/* Another active id resolved to s's listener (one connection each), on
 * device: the caller destroys it. */
int rk_cm_self_resolve(const struct rk_cm_self *s, const char *device, int timeout_ms,
		       struct rk_cm **cm_p);

/* Connect a (a->cm: an active id from s) to b, whose request the listener
 * takes, each QP made with rk_cm_create_qp() on pd. Returns once both are
 * in RTS; on an error both QPs are destroyed (b->cm, when taken, is the
 * caller's still). */
int rk_cm_self_connect(struct rk_cm *listener, struct ibv_pd *pd, struct rk_cm_self_side *a,
		       struct rk_cm_self_side *b, int timeout_ms);

/* Destroy s's ids (after the QPs and what was made on s->dev). */
void rk_cm_self_close(struct rk_cm_self *s);

#pragma GCC visibility pop

#endif
