/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: queue pairs and their state machine.
 *
 * Transitions are explicit and checked before ibv_modify_qp() is called:
 * RESET -> INIT -> RTR -> RTS, RTS -> SQD, any -> ERR, any -> RESET, and
 * recovery ERR -> RESET -> INIT -> RTR -> RTS with the attributes used last.
 * A failed modify is logged with its likely cause (no GID on RoCE, a GID
 * index that is not the chosen one, GID types that differ between the sides).
 */
#ifndef RDMAKIT_QP_H
#define RDMAKIT_QP_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>
#include <rdmakit/gid.h>
#include <rdmakit/cq.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

enum rk_transport {
	RK_RC = 0,
	RK_UC,
	RK_UD,
};

/* Default Q_Key for UD QPs (the value ibv_ud_pingpong and udaddy use). */
#define RK_DEFAULT_QKEY 0x11111111u

/* What one side tells the other to connect (carried by the TCP exchange or CM). */
struct rk_endpoint {
	enum rk_transport transport;
	uint8_t link_layer;       /* IBV_LINK_LAYER_* of the port */
	uint16_t lid;             /* 0 on RoCE */
	union ibv_gid gid;        /* the chosen GID; all zero when none (IB without GRH) */
	enum rk_gid_type gid_type;
	uint32_t gid_index;       /* informative: the index on the sender's side */
	uint32_t qpn;
	uint32_t psn;             /* the sender's initial send PSN (24 bits) */
	enum ibv_mtu mtu;         /* the sender's active MTU */
	uint32_t qkey;            /* UD only */
};

struct rk_qp_init_attr {
	enum rk_transport transport;
	uint8_t port_num;           /* 0 means 1 */
	uint32_t max_send_wr;       /* 0 means 64 */
	uint32_t max_recv_wr;       /* 0 means 64 */
	uint32_t max_send_sge;      /* 0 means 1 */
	uint32_t max_recv_sge;      /* 0 means 1 */
	uint32_t max_inline_data;
	bool sq_sig_all;
	const struct rk_gid_choice *gid; /* required on RoCE; on IB NULL means no GRH */
	uint32_t qkey;              /* UD only; 0 means RK_DEFAULT_QKEY */
	struct ibv_srq *srq;        /* receives from this shared receive queue (srq.h;
				       max_recv_wr and max_recv_sge are then unused) */
};

/* Path and retry attributes for RTR and RTS. rk_path_defaults() fills them. */
struct rk_path_attr {
	enum ibv_mtu path_mtu;  /* 0: the smaller of both sides' active MTU */
	uint8_t min_rnr_timer;  /* RC: encoded RNR NAK timer */
	uint8_t timeout;        /* RC: 4.096 us * 2^timeout local ACK timeout */
	uint8_t retry_cnt;      /* RC: transport retries */
	uint8_t rnr_retry;      /* RC: RNR retries, 7 = infinite */
	uint8_t max_rd_atomic;  /* RC: outstanding READ/atomic we issue */
	uint8_t max_dest_rd_atomic; /* RC: outstanding READ/atomic we serve */
	uint8_t sl;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;    /* GRH flow label (20 bits) */
};

struct rdma_cm_id;

struct rk_qp {
	struct ibv_qp *qp;
	struct rdma_cm_id *cm_id; /* set on a QP made for RDMA CM (rk_cm_create_qp()) */
	struct rk_device *dev;
	struct ibv_pd *pd;
	enum rk_transport transport;
	uint8_t port_num;
	enum ibv_qp_state state;  /* as of our last modify or query */
	bool has_gid;
	struct rk_gid_choice gid;
	uint32_t psn;             /* our initial send PSN */
	uint32_t qkey;
	struct ibv_qp_cap cap;    /* what the provider actually granted */
	/* remembered for recovery */
	int access;
	bool has_remote;
	struct rk_endpoint remote;
	struct rk_path_attr path;
};

/* Default path attributes: MTU auto, timeout 14 (about 67 ms), retry_cnt 6,
 * rnr_retry 7, min_rnr_timer 12, 16 outstanding READ/atomics (capped by the
 * device), hop limit 64. */
void rk_path_defaults(struct rk_path_attr *path);

/* Create a QP in RESET. send_cq and recv_cq may be the same. */
int rk_qp_create(struct ibv_pd *pd, struct rk_device *dev, struct rk_cq *send_cq,
		 struct rk_cq *recv_cq, const struct rk_qp_init_attr *attr, struct rk_qp **qp_p);

/* Create a QP in RESET through ibv_create_qp_ex() with send_ops_flags
 * (IBV_QP_EX_WITH_*, not 0), so that the ibv_wr_* posting API works on it
 * (ibv_qp_to_qp_ex(qp->qp)). A provider without that API fails the create
 * (-EOPNOTSUPP or its own errno), logged like rk_qp_create(). */
int rk_qp_create_ex(struct ibv_pd *pd, struct rk_device *dev, struct rk_cq *send_cq,
		    struct rk_cq *recv_cq, const struct rk_qp_init_attr *attr,
		    uint64_t send_ops_flags, struct rk_qp **qp_p);

/* Destroy the QP. NULL is ignored. */
void rk_qp_destroy(struct rk_qp *qp);

/* Our side of the connection, to send to the peer. */
void rk_qp_local_endpoint(const struct rk_qp *qp, struct rk_endpoint *ep);

/* Check a peer's endpoint against ours without touching the QP: same
 * transport, same link layer, a GID on RoCE, the same GID type, a LID on IB.
 * Pure logic; on failure writes a sentence into why (when non-NULL).
 * -EPROTO for a mismatch, -EINVAL for a missing field. */
int rk_endpoint_check(const struct rk_endpoint *local, const struct rk_endpoint *remote,
		      char *why, size_t why_len);

/* Path MTU for two endpoints: want (0: automatic) checked against both sides'
 * active MTU. -EINVAL with a reason in why when want exceeds either side. */
int rk_path_mtu(enum ibv_mtu local, enum ibv_mtu remote, enum ibv_mtu want, enum ibv_mtu *mtu_p,
		char *why, size_t why_len);

/* RESET -> INIT with the given remote access flags (IBV_ACCESS_REMOTE_*). */
int rk_qp_to_init(struct rk_qp *qp, int access);

/* INIT -> RTR towards remote (ignored for UD). path NULL means defaults. */
int rk_qp_to_rtr(struct rk_qp *qp, const struct rk_endpoint *remote,
		 const struct rk_path_attr *path);

/* RTR -> RTS (or SQD -> RTS to resume after a drain). */
int rk_qp_to_rts(struct rk_qp *qp);

/* RTS -> SQD: stop taking new sends once those queued are done. */
int rk_qp_to_sqd(struct rk_qp *qp);

/* Any state -> ERR: outstanding requests complete with IBV_WC_WR_FLUSH_ERR. */
int rk_qp_to_err(struct rk_qp *qp);

/* Any state -> RESET: the queues are emptied without completions. */
int rk_qp_to_reset(struct rk_qp *qp);

/* INIT, RTR and RTS in one call. */
int rk_qp_connect(struct rk_qp *qp, int access, const struct rk_endpoint *remote,
		  const struct rk_path_attr *path);

/* ERR (or any state) -> RESET -> INIT -> RTR -> RTS with the access, peer and
 * path of the last rk_qp_connect()/rk_qp_to_rtr(). -EINVAL if never connected.
 * Both sides must recover for an RC connection to work again. */
int rk_qp_recover(struct rk_qp *qp);

/* RTS -> RTS changing only the remote access flags (for a QP that RDMA CM
 * connected with its own defaults): 0 (qp->access is access now) or the
 * modify's negative errno (logged). */
int rk_qp_set_access(struct rk_qp *qp, int access);

/* Ask the device for the QP's current state (updates qp->state). */
int rk_qp_query_state(struct rk_qp *qp, enum ibv_qp_state *state_p);

/* Address handle for sending UD datagrams to remote, from the QP's GID, on
 * the QP's PD. 0 or a negative errno (logged: -EINVAL for a peer without a
 * GID on RoCE). *ah_p is the caller's, for ibv_destroy_ah(). */
int rk_ah_create(struct rk_qp *qp, const struct rk_endpoint *remote, struct ibv_ah **ah_p);

/* The same from another GID of the QP's port (NULL: the QP's): a UD QP
 * is bound to no GID, so one QP can answer peers of either IP family. */
int rk_ah_create_from(struct rk_qp *qp, const struct rk_gid_choice *sgid,
		      const struct rk_endpoint *remote, struct ibv_ah **ah_p);

/* "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR". */
const char *rk_qp_state_str(enum ibv_qp_state state);

/* "RC", "UC", "UD". */
const char *rk_transport_str(enum rk_transport transport);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
