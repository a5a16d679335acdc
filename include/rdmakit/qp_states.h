/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the QP state machine as a device really runs it.
 *
 * rk_qps_observe() walks one RC queue pair (the subject) through RESET, INIT,
 * RTR, RTS, SQD, ERR and back through RESET, next to a peer RC QP on the same
 * device that is connected to it from the start. In each state it posts a
 * receive and a send with the raw ibv_post_recv()/ibv_post_send() (not
 * rk_post(), which refuses wrong-state posts by itself) and records what the
 * device answered, what completed while the QP was in that state, and what
 * happened to those work requests later. The peer sends to the subject in
 * INIT, RTR, RTS and SQD. It also tries transitions the spec forbids on fresh
 * QPs, and a send-queue error on UD and UC QPs (where SQE would be entered).
 *
 * Nothing is judged against the spec inside the walk: every field is what the
 * device did. The spec's rule for each state comes with the row, to compare.
 */
#ifndef RDMAKIT_QP_STATES_H
#define RDMAKIT_QP_STATES_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include <rdmakit/device.h>
#include <rdmakit/gid.h>
#include <rdmakit/qp.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_QPS_MAX_WRS	       64
#define RK_QPS_MAX_ROWS	       16
#define RK_QPS_MAX_TRANSITIONS 32
#define RK_QPS_MAX_EVENTS      96
#define RK_QPS_MAX_DIFFS       32

/* One work request the walk posted, and its fate. */
struct rk_qps_wr {
	int row;      /* the row (state) it was posted in */
	bool on_peer; /* posted on the peer, not the subject */
	bool is_send;
	bool raw;	  /* posted with the raw verb (no rdmakit state check) */
	const char *what; /* "recv", "send", "queued send", "incoming send" ... */
	int post_ret;	  /* what the post returned: 0 or a negative errno */
	bool completed;	  /* a completion for it was polled */
	enum ibv_wc_status status;
	uint32_t byte_len;
	enum ibv_qp_state completed_in; /* the subject's state when it was polled */
	int completed_row;
	bool delivered;			/* send: the other QP received its payload */
	enum ibv_qp_state delivered_in; /* the subject's state when that was polled */
	int delivered_row;
	int delivered_into; /* index of the receive WR it landed in, -1 if none */
	uint32_t slot;	    /* buffer slot (internal) */
	uint32_t len;	    /* send: bytes sent */
	bool intact;	    /* send, delivered: its len bytes arrived byte for byte */
};

/* One state of the walk. */
struct rk_qps_row {
	enum ibv_qp_state state;
	const char *label;	   /* "RESET", ..., "RTS (recovered)" */
	const char *spec;	   /* what the IB spec says about this state */
	int modify_ret;		   /* entering the state: 0 or negative errno */
	enum ibv_qp_state queried; /* ibv_query_qp() right after entering it */
	int recv_wr;		   /* index into wrs[] of the receive posted here, -1: none */
	int send_wr;		   /* the send posted here, -1: none */
	int incoming_wr;	   /* the peer's SEND posted while here, -1: none */
	int queued[8];		   /* SQD: sends queued before entering; ERR: outstanding */
	int nqueued;
	bool drained_event;   /* SQD: IBV_EVENT_SQ_DRAINED came for the subject */
	int kick_wr;	      /* SQD: a send posted after the return to RTS, only when
				 the send posted in SQD had not run by then; -1: none */
	int completions_here; /* completions polled while in this state */
	int resume_ret;	      /* SQD: what SQD -> RTS returned (0: accepted) */
};

/* A transition tried with ibv_modify_qp() on a fresh QP in state from. */
struct rk_qps_transition {
	enum ibv_qp_state from, to;
	bool spec_allows; /* the IB state table, as the Linux verbs core encodes it, allows it */
	int ret;		 /* 0 or negative errno from the device */
	enum ibv_qp_state after; /* queried afterwards */
	/* iWARP, from RTS and SQD (a QP connected through RDMA CM, whose state
	 * the query does not give): a send posted after the transition, its
	 * peer with a receive posted, shows whether the QP still sends. */
	bool probed;
	int probe_post_ret;
	bool probe_completed;
	enum ibv_wc_status probe_status;
	bool probe_received; /* the peer's receive completed SUCCESS */
};

/* A send-queue error on a UD or UC QP: where the spec's SQE would show. */
struct rk_qps_sqe {
	enum rk_transport transport;
	int post_ret;
	bool completed;
	enum ibv_wc_status status;     /* the failed send's completion */
	enum ibv_qp_state state_after; /* queried after the error */
	bool tried_resume;	       /* SQE -> RTS was tried (only when SQE was seen) */
	int resume_ret;
	enum ibv_qp_state state_final;
};

/* One thing that arrived, in order. */
struct rk_qps_event {
	int row;
	enum ibv_qp_state subject_state;
	bool is_async; /* an async event rather than a completion */
	enum ibv_event_type async_type;
	int wr; /* completion: index into wrs[], -1 if unknown */
	enum ibv_wc_status status;
};

struct rk_qps_report {
	char device[64];
	uint32_t subject_qpn, peer_qpn;
	struct rk_qps_row rows[RK_QPS_MAX_ROWS];
	int nrows;
	struct rk_qps_wr wrs[RK_QPS_MAX_WRS];
	int nwrs;
	struct rk_qps_event events[RK_QPS_MAX_EVENTS];
	int nevents;
	struct rk_qps_transition transitions[RK_QPS_MAX_TRANSITIONS];
	int ntransitions;
	struct rk_qps_sqe sqe[2];
	int nsqe;
	/* iWARP: the QPs walked through RTS, SQD and ERR, connected through RDMA
	 * CM to the device's own address (subject_qpn is the unconnected QP's);
	 * connected_from: the first row of that part. */
	bool cm_walked;
	uint32_t cm_subject_qpn, cm_peer_qpn;
	int connected_from;
	bool sqd_unreachable; /* iWARP: a connected QP was refused SQD: no transitions from it */
	char not_walked[160]; /* what the walk could not do on this device, and why; "": none */
};

/* Run the walk on dev's port (gid: required on RoCE, NULL on IB without GRH)
 * and fill *rep. Takes a few seconds: the peer's retransmissions and the
 * waits that show nothing arriving are real time. Returns 0 when the walk
 * could run to the end (whatever the device did), or a negative errno when
 * setting it up failed (logged). On iWARP (gid NULL), whose QPs reach RTS
 * only through RDMA CM, one QP is walked unconnected (RESET, INIT, RTR, RTS
 * tried, ERR, RESET); then a pair connected through RDMA CM to the device's
 * own address (a listener and a connecting side in this process) through
 * RTS, SQD, back to RTS, and a second pair through RTS, ERR and RESET; the
 * transitions from RTS and SQD on fresh connected pairs (rk_qps_transition's
 * probe). SQE (UD and UC QPs) iWARP has not: nsqe stays 0. */
int rk_qps_observe(struct rk_device *dev, uint8_t port, const struct rk_gid_choice *gid,
		   struct rk_qps_report *rep);

/* A short phrase for what happened to a work request after it was posted:
 * "refused (EINVAL), never ran", "refused (EINVAL), yet ran in RTS",
 * "completed SUCCESS in RTR", "flushed (WR_FLUSH_ERR) in ERR", "never completed" ... */
const char *rk_qps_fate_str(const struct rk_qps_report *rep, int wr, char *buf, size_t len);

/* ---- The report held against the spec (qp_states_spec.c) ---- */

/* What the IB spec says a post in state returns: true, accepted; false,
 * an immediate error (RESET refuses both; INIT and RTR refuse sends). */
bool rk_qps_spec_accepts(enum ibv_qp_state state, bool is_send);

struct rk_qps_diff {
	int row;	/* index into rows[], -1: a send-queue error probe (sqe[]) */
	char text[240]; /* "RTR: the raw post of a send was accepted (the spec: an
			   immediate error)" */
};

/* Where the device in rep differs from the spec: a post accepted or refused
 * against the state's rule, a refused request that ran anyway, a request
 * posted in ERR that was never flushed, a send in SQD that waited for the
 * next post, a UD/UC send-queue error that did not enter SQE. Keeps the
 * first max in diffs and returns how many there are (0: none). */
int rk_qps_differences(const struct rk_qps_report *rep, struct rk_qps_diff *diffs, int max);

/* "EINVAL" for -EINVAL, "0" for 0. */
const char *rk_qps_errno_name(int ret);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
