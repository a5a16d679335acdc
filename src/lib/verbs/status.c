/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Names and hints for completion statuses, opcodes, async and CM events.
 * Tables indexed by the enum, with an "UNKNOWN(n)" fallback. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>

#include <rdmakit/status.h>
#include <rdmakit/log.h>

struct name_hint {
	const char *name;
	const char *hint;
	const char *const *counters; /* port counters that explain it, NULL-terminated */
};

#define ENTRY(e, h) [e] = {#e, h, NULL}
/* The same with the counters (sysfs hw_counters or counters, any driver's names) that
 * move when this happens: rxe's, mlx5's and the IB port counters'. Absent names are
 * harmless: a device shows the ones it has. */
#define ENTRY_C(e, h, ...) [e] = {#e, h, (const char *const[]){__VA_ARGS__, NULL}}
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct name_hint wc_status[] = {
	ENTRY(IBV_WC_SUCCESS, ""),
	ENTRY_C(IBV_WC_LOC_LEN_ERR,
	      "a message did not fit: the receive buffer posted is smaller than what the peer "
	      "sent, or a send is longer than the port MTU on UD",
	      "resp_local_length_error"),
	ENTRY_C(IBV_WC_LOC_QP_OP_ERR,
	      "the local QP could not run this request: too many SGEs, inline data over the "
	      "QP's limit, an operation the QP type does not support, or its port went down "
	      "(look for IBV_EVENT_PORT_ERR)",
	      "link_downed", "req_cqe_error"),
	ENTRY(IBV_WC_LOC_EEC_OP_ERR, "local EE context error (reliable datagram; unused today)"),
	ENTRY(IBV_WC_LOC_PROT_ERR,
	      "a local SGE is outside its MR, uses the wrong lkey, or the MR belongs to another "
	      "PD"),
	ENTRY_C(IBV_WC_WR_FLUSH_ERR,
	      "flushed: the QP went to the error state (an earlier request failed, or it was "
	      "moved to ERR) and outstanding requests were cancelled",
	      "req_cqe_flush_error", "resp_cqe_flush_error"),
	ENTRY(IBV_WC_MW_BIND_ERR, "memory window bind failed: check the MR's MW_BIND access"),
	ENTRY_C(IBV_WC_BAD_RESP_ERR,
	      "the peer answered with an unexpected transport opcode: peer confused or a "
	      "mismatched PSN",
	      "rcvd_seq_err", "packet_seq_err", "out_of_sequence"),
	ENTRY(IBV_WC_LOC_ACCESS_ERR,
	      "local access violation: a local MR lacks LOCAL_WRITE for data written into it "
	      "(receives, READ and atomic results)"),
	ENTRY_C(IBV_WC_REM_INV_REQ_ERR,
	      "the peer found the request invalid: its receive buffer is too small, the "
	      "operation is not enabled on its QP, or the length is over its limits",
	      "req_remote_invalid_request", "resp_local_length_error"),
	ENTRY_C(IBV_WC_REM_ACCESS_ERR,
	      "the peer's MR lacks the access flag for this operation, or the rkey/address is "
	      "outside it",
	      "req_remote_access_errors", "resp_remote_access_errors"),
	ENTRY_C(IBV_WC_REM_OP_ERR,
	      "the peer could not complete the operation: a fault on its side (for example its "
	      "receive buffer's lkey was bad; rxe also reports a SEND longer than the receive "
	      "buffer posted so)",
	      "resp_cqe_error"),
	ENTRY_C(IBV_WC_RETRY_EXC_ERR,
	      "no answer from the peer: its process is gone, the link is down, the GID/route "
	      "is wrong (mismatched GID index, unreachable address), or the path MTU is above "
	      "what a link carries (netdev MTUs differ: send_err counts the packets dropped)",
	      "retry_exceeded_err", "completer_retry_err", "send_err",
	      "local_ack_timeout_err", "req_transport_retries_exceeded", "link_downed"),
	ENTRY_C(IBV_WC_RNR_RETRY_EXC_ERR,
	      "the peer posted no receive in time (receiver not ready): post receives before "
	      "the sender sends",
	      "retry_rnr_exceeded_err", "rcvd_rnr_err", "send_rnr_err",
	      "rnr_nak_retry_err", "req_rnr_retries_exceeded", "out_of_buffer"),
	ENTRY(IBV_WC_LOC_RDD_VIOL_ERR, "reliable datagram domain violation (unused today)"),
	ENTRY(IBV_WC_REM_INV_RD_REQ_ERR, "invalid reliable datagram request at the peer"),
	ENTRY(IBV_WC_REM_ABORT_ERR, "the peer aborted the operation"),
	ENTRY(IBV_WC_INV_EECN_ERR, "invalid EE context number (reliable datagram)"),
	ENTRY(IBV_WC_INV_EEC_STATE_ERR, "invalid EE context state (reliable datagram)"),
	ENTRY(IBV_WC_FATAL_ERR, "fatal device error: the device or driver must be reset"),
	ENTRY_C(IBV_WC_RESP_TIMEOUT_ERR, "the peer's response timed out",
	      "local_ack_timeout_err"),
	ENTRY(IBV_WC_GENERAL_ERR, "a general error the device did not classify; see dmesg"),
	ENTRY(IBV_WC_TM_ERR, "tag matching error"),
	ENTRY(IBV_WC_TM_RNDV_INCOMPLETE, "tag matching rendezvous incomplete"),
};

static const struct name_hint async_events[] = {
	ENTRY(IBV_EVENT_CQ_ERR, "a CQ overran: make it deeper than the work outstanding on it"),
	ENTRY(IBV_EVENT_QP_FATAL, "a QP hit a fatal error and moved to ERR"),
	ENTRY(IBV_EVENT_QP_REQ_ERR,
	      "a request the QP received broke the transport rules (invalid request)"),
	ENTRY(IBV_EVENT_QP_ACCESS_ERR,
	      "an incoming request violated access: wrong rkey, address or access flags"),
	ENTRY(IBV_EVENT_COMM_EST, "the first message arrived on a QP in RTR"),
	ENTRY(IBV_EVENT_SQ_DRAINED, "the send queue drained after a move to SQD"),
	ENTRY(IBV_EVENT_PATH_MIG, "the connection migrated to its alternate path"),
	ENTRY(IBV_EVENT_PATH_MIG_ERR, "migrating to the alternate path failed"),
	ENTRY(IBV_EVENT_DEVICE_FATAL, "the device failed: close and reopen it"),
	ENTRY(IBV_EVENT_PORT_ACTIVE, "a port became active"),
	ENTRY(IBV_EVENT_PORT_ERR,
	      "a port went down: link or cable down, or the netdev under a RoCE port is down"),
	ENTRY(IBV_EVENT_LID_CHANGE, "the port's LID changed: reconnect peers addressed by LID"),
	ENTRY(IBV_EVENT_PKEY_CHANGE, "the port's P_Key table changed"),
	ENTRY(IBV_EVENT_SM_CHANGE, "the subnet manager changed"),
	ENTRY(IBV_EVENT_SRQ_ERR, "a shared receive queue failed"),
	ENTRY(IBV_EVENT_SRQ_LIMIT_REACHED, "a shared receive queue ran below its limit"),
	ENTRY(IBV_EVENT_QP_LAST_WQE_REACHED, "the last WQE of a QP on an SRQ was reached"),
	ENTRY(IBV_EVENT_CLIENT_REREGISTER, "the subnet manager asks clients to re-register"),
	ENTRY(IBV_EVENT_GID_CHANGE,
	      "the GID table changed (an IP address was added or removed): re-check GID indexes"),
	ENTRY(IBV_EVENT_WQ_FATAL, "a work queue hit a fatal error"),
};

static const struct name_hint cm_events[] = {
	ENTRY(RDMA_CM_EVENT_ADDR_RESOLVED, ""),
	ENTRY(RDMA_CM_EVENT_ADDR_ERROR,
	      "the address could not be resolved to an RDMA device: is the IP on an interface "
	      "with an RDMA device (rdma link) and is there a route to it?"),
	ENTRY(RDMA_CM_EVENT_ROUTE_RESOLVED, ""),
	ENTRY(RDMA_CM_EVENT_ROUTE_ERROR, "no route to the peer (neighbour or path resolution failed)"),
	ENTRY(RDMA_CM_EVENT_CONNECT_REQUEST, ""),
	ENTRY(RDMA_CM_EVENT_CONNECT_RESPONSE, ""),
	ENTRY(RDMA_CM_EVENT_CONNECT_ERROR, "the connection failed while being set up"),
	ENTRY(RDMA_CM_EVENT_UNREACHABLE,
	      "the peer did not answer the connection request: no server, or it is unreachable"),
	ENTRY(RDMA_CM_EVENT_REJECTED,
	      "the peer rejected the connection: no listener on that port, or the server refused "
	      "(see the reason)"),
	ENTRY(RDMA_CM_EVENT_ESTABLISHED, ""),
	ENTRY(RDMA_CM_EVENT_DISCONNECTED, "the peer disconnected"),
	ENTRY(RDMA_CM_EVENT_DEVICE_REMOVAL, "the RDMA device was removed"),
	ENTRY(RDMA_CM_EVENT_MULTICAST_JOIN, ""),
	ENTRY(RDMA_CM_EVENT_MULTICAST_ERROR, "a multicast group failed"),
	ENTRY(RDMA_CM_EVENT_ADDR_CHANGE, "the local address moved to another device"),
	ENTRY(RDMA_CM_EVENT_TIMEWAIT_EXIT, ""),
};

/* What the transport recovered from (enum rk_trouble): rxe's and mlx5's
 * counters; those that only move with a failed completion are not here. */
#define TROUBLE(e, n, h, ...) [e] = {n, h, (const char *const[]){__VA_ARGS__, NULL}}
static const struct rk_trouble_desc troubles[] = {
	TROUBLE(RK_TROUBLE_RETRANSMIT, "retransmissions",
		"the transport resent packets: an ACK came later than the local ACK timeout, "
		"or a packet was lost; when duplicate_request moves and nothing is out of "
		"sequence, the packets had arrived and only their ACKs were late: a longer local "
		"ACK timeout (the QP's timeout; rdmakit bench --ack-timeout) avoids the resends",
		"completer_retry_err", "local_ack_timeout_err", "duplicate_request"),
	TROUBLE(RK_TROUBLE_RNR, "RNR NAKs",
		"a SEND found no receive posted at the peer and was sent again after the RNR "
		"timer, a wait of its own: the receiver posts its receives late or too few",
		"rcvd_rnr_err", "send_rnr_err", "rnr_nak_retry_err"),
	TROUBLE(RK_TROUBLE_SEQUENCE, "packets out of sequence",
		"a packet came out of order or after one was lost, and the responder asked for "
		"the rest again (a NAK): look for drops on the path (netdev, switch)",
		"out_of_seq_request", "rcvd_seq_err", "out_of_sequence", "packet_seq_err"),
	TROUBLE(RK_TROUBLE_NOT_SENT, "packets not sent",
		"the device could not put packets on the wire (rxe: the network device refused "
		"them, its transmit queue full or a packet over its MTU), and the transport "
		"sent them again",
		"send_err"),
	TROUBLE(RK_TROUBLE_CONGESTION, "congestion",
		"the network marked packets with ECN and the senders slowed down (DCQCN): "
		"other traffic on the links, or a slow port",
		"np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled"),
};

static const char *name_of(const struct name_hint *table, size_t n, unsigned int v,
			   char *unknown, size_t unknown_len)
{
	if (v < n && table[v].name)
		return table[v].name;
	snprintf(unknown, unknown_len, "UNKNOWN(%u)", v);
	return unknown;
}

static const char *hint_of(const struct name_hint *table, size_t n, unsigned int v)
{
	if (v < n && table[v].hint)
		return table[v].hint;
	return "an unknown value: newer than this rdmakit";
}

static __thread char unknown_buf[32];

const char *rk_wc_status_name(enum ibv_wc_status status)
{
	return name_of(wc_status, COUNT(wc_status), status, unknown_buf, sizeof(unknown_buf));
}

const char *rk_wc_status_hint(enum ibv_wc_status status)
{
	return hint_of(wc_status, COUNT(wc_status), status);
}

const char *const *rk_wc_status_counters(enum ibv_wc_status status)
{
	static const char *const none[] = {NULL};

	if ((unsigned int)status < COUNT(wc_status) && wc_status[status].counters)
		return wc_status[status].counters;
	return none;
}

const struct rk_trouble_desc *rk_trouble_desc(enum rk_trouble t)
{
	return (unsigned int)t < COUNT(troubles) ? &troubles[t] : NULL;
}

const char *rk_async_event_name(enum ibv_event_type type)
{
	return name_of(async_events, COUNT(async_events), type, unknown_buf,
		       sizeof(unknown_buf));
}

const char *rk_async_event_hint(enum ibv_event_type type)
{
	return hint_of(async_events, COUNT(async_events), type);
}

const char *rk_cm_event_name(enum rdma_cm_event_type type)
{
	return name_of(cm_events, COUNT(cm_events), type, unknown_buf, sizeof(unknown_buf));
}

const char *rk_cm_event_hint(enum rdma_cm_event_type type)
{
	return hint_of(cm_events, COUNT(cm_events), type);
}

const char *rk_wc_opcode_name(enum ibv_wc_opcode opcode)
{
	switch (opcode) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_BIND_MW: return "BIND_MW";
	case IBV_WC_LOCAL_INV: return "LOCAL_INV";
	case IBV_WC_TSO: return "TSO";
	case IBV_WC_ATOMIC_WRITE: return "ATOMIC_WRITE";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	case IBV_WC_TM_ADD: return "TM_ADD";
	case IBV_WC_TM_DEL: return "TM_DEL";
	case IBV_WC_TM_SYNC: return "TM_SYNC";
	case IBV_WC_TM_RECV: return "TM_RECV";
	case IBV_WC_TM_NO_TAG: return "TM_NO_TAG";
	case IBV_WC_DRIVER1: return "DRIVER1";
	case IBV_WC_DRIVER2: return "DRIVER2";
	case IBV_WC_DRIVER3: return "DRIVER3";
	}
	snprintf(unknown_buf, sizeof(unknown_buf), "UNKNOWN(%u)", (unsigned int)opcode);
	return unknown_buf;
}

int rk_wc_errno(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_SUCCESS: return 0;
	case IBV_WC_WR_FLUSH_ERR: return -ECANCELED;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR: return -ETIMEDOUT;
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
	case IBV_WC_LOC_PROT_ERR: return -EACCES;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_ABORT_ERR:
	case IBV_WC_REM_INV_RD_REQ_ERR: return -EREMOTEIO;
	case IBV_WC_LOC_LEN_ERR: return -EMSGSIZE;
	default: return -EIO;
	}
}

/* Failed completions rk_wc_check() logged, per status, in this process (all
 * threads): rk_run_counters_start()/stop() take the difference. */
static _Atomic uint32_t wc_failed[RK_WC_STATUS_SLOTS];

_Static_assert(COUNT(wc_status) <= RK_WC_STATUS_SLOTS, "RK_WC_STATUS_SLOTS too small");

uint32_t rk_wc_failures(enum ibv_wc_status status)
{
	if ((unsigned int)status >= RK_WC_STATUS_SLOTS)
		return 0;
	return atomic_load_explicit(&wc_failed[status], memory_order_relaxed);
}

int rk_wc_check(const struct ibv_wc *wc, const char *what)
{
	if (wc->status == IBV_WC_SUCCESS)
		return 0;
	if ((unsigned int)wc->status < RK_WC_STATUS_SLOTS)
		atomic_fetch_add_explicit(&wc_failed[wc->status], 1, memory_order_relaxed);
	rk_error("%s (wr_id %llu) on QP 0x%x failed: %s, vendor error 0x%x: %s",
		 what ? what : "work request", (unsigned long long)wc->wr_id,
		 wc->qp_num, rk_wc_status_name(wc->status), wc->vendor_err,
		 rk_wc_status_hint(wc->status));
	return rk_wc_errno(wc->status);
}
