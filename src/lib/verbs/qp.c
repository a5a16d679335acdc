/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Queue pairs: creation and checked state transitions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <rdma/rdma_cma.h>

#include <rdmakit/qp.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>

#include "verbs/qp_int.h"

const char *rk_qp_state_str(enum ibv_qp_state state)
{
	switch (state) {
	case IBV_QPS_RESET: return "RESET";
	case IBV_QPS_INIT: return "INIT";
	case IBV_QPS_RTR: return "RTR";
	case IBV_QPS_RTS: return "RTS";
	case IBV_QPS_SQD: return "SQD";
	case IBV_QPS_SQE: return "SQE";
	case IBV_QPS_ERR: return "ERR";
	case IBV_QPS_UNKNOWN: return "UNKNOWN";
	}
	return "UNKNOWN";
}

const char *rk_transport_str(enum rk_transport transport)
{
	switch (transport) {
	case RK_RC: return "RC";
	case RK_UC: return "UC";
	case RK_UD: return "UD";
	}
	return "unknown";
}

static enum ibv_qp_type verbs_qp_type(enum rk_transport t)
{
	return t == RK_UD ? IBV_QPT_UD : t == RK_UC ? IBV_QPT_UC : IBV_QPT_RC;
}

void rk_path_defaults(struct rk_path_attr *path)
{
	memset(path, 0, sizeof(*path));
	path->min_rnr_timer = 12; /* 0.64 ms */
	path->timeout = 14;       /* 4.096 us * 2^14 = 67 ms */
	/* 6, not 7: rxe counts down only when the count is not 7, so 7 there
	 * means retry forever and a dead peer is never reported. */
	path->retry_cnt = 6;
	path->rnr_retry = 7;
	path->max_rd_atomic = 16;
	path->max_dest_rd_atomic = 16;
	path->hop_limit = 64;
}

static uint32_t random_psn(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)lrand48();
	return v & 0xffffff;
}

void rk_qp_verbs_attr(const struct rk_qp_init_attr *attr, struct rk_cq *send_cq,
		      struct rk_cq *recv_cq, struct ibv_qp_init_attr *ia)
{
	memset(ia, 0, sizeof(*ia));
	ia->send_cq = send_cq->cq;
	ia->recv_cq = recv_cq->cq;
	ia->qp_type = verbs_qp_type(attr->transport);
	ia->sq_sig_all = attr->sq_sig_all;
	ia->cap.max_send_wr = attr->max_send_wr ? attr->max_send_wr : 64;
	ia->cap.max_recv_wr = attr->max_recv_wr ? attr->max_recv_wr : 64;
	ia->cap.max_send_sge = attr->max_send_sge ? attr->max_send_sge : 1;
	ia->cap.max_recv_sge = attr->max_recv_sge ? attr->max_recv_sge : 1;
	ia->cap.max_inline_data = attr->max_inline_data;
	ia->srq = attr->srq;
	if (attr->srq) {
		ia->cap.max_recv_wr = 0;
		ia->cap.max_recv_sge = 0;
	}
}

/* Both creators: ibv_create_qp(), or ibv_create_qp_ex() with send_ops_flags
 * for the ibv_wr_* API when send_ops_flags is not 0. */
static int qp_create(struct ibv_pd *pd, struct rk_device *dev, struct rk_cq *send_cq,
		     struct rk_cq *recv_cq, const struct rk_qp_init_attr *attr,
		     uint64_t send_ops_flags, struct rk_qp **qp_p)
{
	struct ibv_qp_init_attr ia;
	uint8_t port = attr->port_num ? attr->port_num : 1;
	struct rk_qp *qp;
	int ret;

	if (!rk_device_port(dev, port)) {
		rk_error("%s has no port %u (ports 1..%u)", dev->info.name, port,
			 dev->info.phys_port_cnt);
		return -EINVAL;
	}
	if (rk_port_is_roce(dev, port) && !attr->gid) {
		rk_error("create QP on %s port %u: RoCE needs a GID (choose one with "
			 "rk_gid_choose())", dev->info.name, port);
		return -EINVAL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;

	rk_qp_verbs_attr(attr, send_cq, recv_cq, &ia);
	if (send_ops_flags) {
		struct ibv_qp_init_attr_ex iax;

		memset(&iax, 0, sizeof(iax));
		iax.send_cq = ia.send_cq;
		iax.recv_cq = ia.recv_cq;
		iax.qp_type = ia.qp_type;
		iax.sq_sig_all = ia.sq_sig_all;
		iax.cap = ia.cap;
		iax.srq = ia.srq;
		iax.pd = pd;
		iax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		iax.send_ops_flags = send_ops_flags;
		errno = 0;
		qp->qp = ibv_create_qp_ex(dev->ctx, &iax);
		ia.cap = iax.cap;
	} else {
		qp->qp = ibv_create_qp(pd, &ia);
	}
	if (!qp->qp) {
		ret = errno ? -errno : -ENOMEM;
		rk_error("create %s QP on %s (send %u x %u SGE, recv %u x %u SGE, inline %u): "
			 "%m (device limits: %d WRs, %d SGEs)",
			 rk_transport_str(attr->transport), dev->info.name, ia.cap.max_send_wr,
			 ia.cap.max_send_sge, ia.cap.max_recv_wr, ia.cap.max_recv_sge,
			 ia.cap.max_inline_data, dev->info.max_qp_wr, dev->info.max_sge);
		free(qp);
		return ret;
	}
	qp->dev = dev;
	qp->pd = pd;
	qp->transport = attr->transport;
	qp->port_num = port;
	qp->state = IBV_QPS_RESET;
	qp->cap = ia.cap;
	qp->psn = random_psn();
	qp->qkey = attr->qkey ? attr->qkey : RK_DEFAULT_QKEY;
	if (attr->gid) {
		qp->has_gid = true;
		qp->gid = *attr->gid;
	}
	rk_path_defaults(&qp->path);
	*qp_p = qp;
	return 0;
}

int rk_qp_create(struct ibv_pd *pd, struct rk_device *dev, struct rk_cq *send_cq,
		 struct rk_cq *recv_cq, const struct rk_qp_init_attr *attr, struct rk_qp **qp_p)
{
	return qp_create(pd, dev, send_cq, recv_cq, attr, 0, qp_p);
}

int rk_qp_create_ex(struct ibv_pd *pd, struct rk_device *dev, struct rk_cq *send_cq,
		    struct rk_cq *recv_cq, const struct rk_qp_init_attr *attr,
		    uint64_t send_ops_flags, struct rk_qp **qp_p)
{
	if (!send_ops_flags)
		return -EINVAL;
	return qp_create(pd, dev, send_cq, recv_cq, attr, send_ops_flags, qp_p);
}

void rk_qp_destroy(struct rk_qp *qp)
{
	int ret;

	if (!qp)
		return;
	if (qp->cm_id) {
		struct qp_hooked *h = (struct qp_hooked *)qp;

		h->destroy(qp);
		free(h);
		return;
	}
	ret = ibv_destroy_qp(qp->qp);
	if (ret)
		rk_warn("destroy QP 0x%x: %s", qp->qp->qp_num, rk_strerror(rk_verbs_err(ret)));
	free(qp);
}

void rk_qp_local_endpoint(const struct rk_qp *qp, struct rk_endpoint *ep)
{
	const struct rk_port_info *pi = rk_device_port(qp->dev, qp->port_num);

	memset(ep, 0, sizeof(*ep));
	ep->transport = qp->transport;
	ep->link_layer = pi->link_layer;
	ep->lid = pi->lid;
	if (qp->has_gid) {
		ep->gid = qp->gid.gid;
		ep->gid_type = qp->gid.type;
		ep->gid_index = qp->gid.index;
	}
	ep->qpn = qp->qp->qp_num;
	ep->psn = qp->psn;
	ep->mtu = pi->active_mtu;
	ep->qkey = qp->qkey;
}

#define WHY(...)                                                                                 \
	do {                                                                                     \
		if (why)                                                                         \
			snprintf(why, why_len, __VA_ARGS__);                                     \
	} while (0)

int rk_endpoint_check(const struct rk_endpoint *local, const struct rk_endpoint *remote,
		      char *why, size_t why_len)
{
	if (local->transport != remote->transport) {
		WHY("the peer uses %s, this side %s", rk_transport_str(remote->transport),
		    rk_transport_str(local->transport));
		return -EPROTO;
	}
	if (local->link_layer != remote->link_layer) {
		WHY("the peer's port is %s, this one %s", rk_link_layer_str(remote->link_layer),
		    rk_link_layer_str(local->link_layer));
		return -EPROTO;
	}
	if (remote->qpn == 0 || remote->qpn > 0xffffff) {
		WHY("the peer's QPN 0x%x is not a valid QP number", remote->qpn);
		return -EINVAL;
	}
	if (remote->psn > 0xffffff) {
		WHY("the peer's PSN 0x%x does not fit in 24 bits", remote->psn);
		return -EINVAL;
	}
	if (local->link_layer == IBV_LINK_LAYER_ETHERNET) {
		if (rk_gid_is_zero(&remote->gid)) {
			WHY("the peer sent no GID; RoCE needs one in every packet's GRH (does the "
			    "peer's port have an IP address?)");
			return -EINVAL;
		}
		if (local->gid_type != remote->gid_type) {
			WHY("this side uses a %s GID (index %u), the peer a %s GID (index %u); both "
			    "must use the same type: pick matching GID indexes",
			    rk_gid_type_str(local->gid_type), local->gid_index,
			    rk_gid_type_str(remote->gid_type), remote->gid_index);
			return -EPROTO;
		}
	} else if (remote->lid == 0 && rk_gid_is_zero(&remote->gid)) {
		WHY("the peer sent LID 0 and no GID (its port is not active, or no subnet manager "
		    "assigned a LID)");
		return -EINVAL;
	}
	return 0;
}

int rk_path_mtu(enum ibv_mtu local, enum ibv_mtu remote, enum ibv_mtu want, enum ibv_mtu *mtu_p,
		char *why, size_t why_len)
{
	enum ibv_mtu m;

	if (!rk_mtu_bytes(local) || !rk_mtu_bytes(remote)) {
		WHY("invalid active MTU (this side %d, the peer %d)", (int)local, (int)remote);
		return -EINVAL;
	}
	m = local < remote ? local : remote;
	if (want) {
		if (!rk_mtu_bytes(want)) {
			WHY("path MTU code %d is not a valid MTU", (int)want);
			return -EINVAL;
		}
		if (want > local || want > remote) {
			WHY("path MTU %d is above the active MTU of %s (%d); at most %d fits",
			    rk_mtu_bytes(want), want > local ? "this side" : "the peer",
			    rk_mtu_bytes(want > local ? local : remote), rk_mtu_bytes(m));
			return -EINVAL;
		}
		m = want;
	}
	*mtu_p = m;
	return 0;
}

#undef WHY

static int qp_modify(struct rk_qp *qp, struct ibv_qp_attr *attr, int mask, const char *hint)
{
	enum ibv_qp_state from = qp->state;
	int ret;

	ret = rk_verbs_err(ibv_modify_qp(qp->qp, attr, mask));
	if (ret) {
		rk_error("modify QP 0x%x %s -> %s: %s%s%s%s", qp->qp->qp_num,
			 rk_qp_state_str(from), rk_qp_state_str(attr->qp_state), rk_strerror(ret),
			 hint && hint[0] ? " (" : "", hint ? hint : "", hint && hint[0] ? ")" : "");
		/* The device may have moved the QP (for example to ERR); ask it. */
		rk_qp_query_state(qp, NULL);
		return ret;
	}
	qp->state = attr->qp_state;
	return 0;
}

/* The transitions the IB spec allows into each state, for error messages. */
static const char *allowed_from(enum ibv_qp_state to)
{
	switch (to) {
	case IBV_QPS_INIT: return "INIT is reached from RESET or INIT";
	case IBV_QPS_RTR: return "RTR is reached only from INIT";
	case IBV_QPS_RTS: return "RTS is reached from RTR, SQD or SQE";
	case IBV_QPS_SQD: return "SQD is reached from RTS";
	default: return "";
	}
}

int rk_qp_to_init(struct rk_qp *qp, int access)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = qp->port_num;
	if (qp->transport == RK_UD) {
		a.qkey = qp->qkey;
		mask |= IBV_QP_QKEY;
	} else {
		if (qp->transport == RK_UC &&
		    (access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC))) {
			rk_error("QP 0x%x: UC supports remote WRITE only, not READ or atomics",
				 qp->qp->qp_num);
			return -EINVAL;
		}
		a.qp_access_flags = (unsigned int)access;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	ret = qp_modify(qp, &a, mask, qp->state == IBV_QPS_RESET ? "" : allowed_from(a.qp_state));
	if (ret)
		return ret;
	qp->access = access;
	return 0;
}

/* Is the chosen GID still at its index? Addresses can be removed at run time. */
static int check_sgid(struct rk_qp *qp)
{
	struct ibv_gid_entry e;
	char a[64], b[64];
	int ret;

	ret = ibv_query_gid_ex(qp->dev->ctx, qp->port_num, qp->gid.index, &e, 0);
	if (ret) {
		ret = rk_verbs_err(ret);
		rk_error("QP 0x%x: sgid_index %u is not a valid GID of %s port %u any more (%s); "
			 "was the interface's address removed?",
			 qp->qp->qp_num, qp->gid.index, qp->dev->info.name, qp->port_num,
			 rk_strerror(ret));
		return -ENOENT;
	}
	if (memcmp(e.gid.raw, qp->gid.gid.raw, 16)) {
		rk_error("QP 0x%x: sgid_index %u now holds %s, not the chosen GID %s",
			 qp->qp->qp_num, qp->gid.index, rk_gid_str(&e.gid, a, sizeof(a)),
			 rk_gid_str(&qp->gid.gid, b, sizeof(b)));
		return -ESTALE;
	}
	return 0;
}

static void fill_ah(const struct rk_qp *qp, const struct rk_endpoint *remote,
		    const struct rk_path_attr *path, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = remote->lid;
	ah->sl = path->sl;
	ah->port_num = qp->port_num;
	if (qp->has_gid && !rk_gid_is_zero(&remote->gid)) {
		ah->is_global = 1;
		ah->grh.dgid = remote->gid;
		ah->grh.sgid_index = (uint8_t)qp->gid.index;
		ah->grh.hop_limit = path->hop_limit;
		ah->grh.traffic_class = path->traffic_class;
		ah->grh.flow_label = path->flow_label;
	}
}

int rk_qp_to_rtr(struct rk_qp *qp, const struct rk_endpoint *remote,
		 const struct rk_path_attr *path)
{
	struct rk_path_attr defaults;
	struct rk_endpoint local;
	struct ibv_qp_attr a;
	char why[256], hint[400];
	int mask = IBV_QP_STATE;
	int ret;

	if (!path) {
		rk_path_defaults(&defaults);
		path = &defaults;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (qp->transport == RK_UD)
		return qp_modify(qp, &a, mask, allowed_from(IBV_QPS_RTR));

	rk_qp_local_endpoint(qp, &local);
	ret = rk_endpoint_check(&local, remote, why, sizeof(why));
	if (ret) {
		rk_error("connect QP 0x%x to QP 0x%x: %s", qp->qp->qp_num, remote->qpn, why);
		return ret;
	}
	ret = rk_path_mtu(local.mtu, remote->mtu, path->path_mtu, &a.path_mtu, why, sizeof(why));
	if (ret) {
		rk_error("connect QP 0x%x to QP 0x%x: %s", qp->qp->qp_num, remote->qpn, why);
		return ret;
	}
	if (qp->has_gid) {
		ret = check_sgid(qp);
		if (ret)
			return ret;
	}
	a.dest_qp_num = remote->qpn;
	a.rq_psn = remote->psn;
	fill_ah(qp, remote, path, &a.ah_attr);
	mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (qp->transport == RK_RC) {
		int max = qp->dev->info.max_qp_rd_atom;

		a.max_dest_rd_atomic = path->max_dest_rd_atomic;
		if (max > 0 && a.max_dest_rd_atomic > max)
			a.max_dest_rd_atomic = (uint8_t)max;
		a.min_rnr_timer = path->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (qp->state != IBV_QPS_INIT)
		snprintf(hint, sizeof(hint), "%s", allowed_from(IBV_QPS_RTR));
	else if (a.ah_attr.is_global) {
		struct rk_gid_entry mine = {.type = qp->gid.type, .gid = qp->gid.gid};
		struct rk_gid_entry theirs = {.type = remote->gid_type, .gid = remote->gid};

		rk_gid_entry_set_ip(&mine);
		rk_gid_entry_set_ip(&theirs);
		snprintf(hint, sizeof(hint),
			 "GID index %u (%s %s) of port %u must reach the peer's GID %s (its index "
			 "%u): the kernel resolves a route and neighbour for it; an IPv6 link-local "
			 "GID against an IPv4 one, or different subnets, cannot",
			 qp->gid.index, rk_gid_type_str(qp->gid.type), mine.ip, qp->port_num,
			 theirs.ip, remote->gid_index);
	}
	else
		snprintf(hint, sizeof(hint), "check the peer's LID %u and QPN 0x%x", remote->lid,
			 remote->qpn);
	ret = qp_modify(qp, &a, mask, hint);
	if (ret)
		return ret;
	qp->remote = *remote;
	qp->has_remote = true;
	qp->path = *path;
	return 0;
}

int rk_qp_to_rts(struct rk_qp *qp)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	if (qp->state == IBV_QPS_RTR) {
		a.sq_psn = qp->psn;
		mask |= IBV_QP_SQ_PSN;
		if (qp->transport == RK_RC) {
			int max = qp->dev->info.max_qp_init_rd_atom;

			a.timeout = qp->path.timeout;
			a.retry_cnt = qp->path.retry_cnt;
			a.rnr_retry = qp->path.rnr_retry;
			a.max_rd_atomic = qp->path.max_rd_atomic;
			if (max > 0 && a.max_rd_atomic > max)
				a.max_rd_atomic = (uint8_t)max;
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_MAX_QP_RD_ATOMIC;
		}
	}
	return qp_modify(qp, &a, mask, allowed_from(IBV_QPS_RTS));
}

int rk_qp_to_sqd(struct rk_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	return qp_modify(qp, &a, IBV_QP_STATE, allowed_from(IBV_QPS_SQD));
}

int rk_qp_to_err(struct rk_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	return qp_modify(qp, &a, IBV_QP_STATE, NULL);
}

int rk_qp_to_reset(struct rk_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	return qp_modify(qp, &a, IBV_QP_STATE, NULL);
}

int rk_qp_connect(struct rk_qp *qp, int access, const struct rk_endpoint *remote,
		  const struct rk_path_attr *path)
{
	int ret;

	ret = rk_qp_to_init(qp, access);
	if (ret)
		return ret;
	ret = rk_qp_to_rtr(qp, remote, path);
	if (ret)
		return ret;
	return rk_qp_to_rts(qp);
}

int rk_qp_recover(struct rk_qp *qp)
{
	struct rk_endpoint remote;
	struct rk_path_attr path;
	int ret;

	if (!qp->has_remote && qp->transport != RK_UD) {
		rk_error("recover QP 0x%x: it was never connected, so there is no peer to "
			 "reconnect to", qp->qp->qp_num);
		return -EINVAL;
	}
	remote = qp->remote;
	path = qp->path;
	ret = rk_qp_to_reset(qp);
	if (ret)
		return ret;
	return rk_qp_connect(qp, qp->access, &remote, &path);
}

int rk_qp_set_access(struct rk_qp *qp, int access)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = qp->state;
	a.qp_access_flags = (unsigned int)access;
	ret = qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS, "");
	if (!ret)
		qp->access = access;
	return ret;
}

int rk_qp_query_state(struct rk_qp *qp, enum ibv_qp_state *state_p)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int ret;

	ret = rk_verbs_err(ibv_query_qp(qp->qp, &a, IBV_QP_STATE, &ia));
	if (ret) {
		rk_error("query QP 0x%x: %s", qp->qp->qp_num, rk_strerror(ret));
		return ret;
	}
	/* siw's query leaves the state out (0, RESET): the last one known stands. */
	if (rk_device_is_iwarp(qp->dev) && a.qp_state == IBV_QPS_RESET)
		a.qp_state = qp->state;
	qp->state = a.qp_state;
	if (state_p)
		*state_p = a.qp_state;
	return 0;
}

int rk_ah_create(struct rk_qp *qp, const struct rk_endpoint *remote, struct ibv_ah **ah_p)
{
	return rk_ah_create_from(qp, NULL, remote, ah_p);
}

int rk_ah_create_from(struct rk_qp *qp, const struct rk_gid_choice *sgid,
		      const struct rk_endpoint *remote, struct ibv_ah **ah_p)
{
	uint32_t index = sgid ? sgid->index : qp->gid.index;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	char gid[64];
	int ret;

	if (rk_port_is_roce(qp->dev, qp->port_num) && rk_gid_is_zero(&remote->gid)) {
		rk_error("address handle for QP 0x%x: the peer sent no GID, and RoCE needs one",
			 remote->qpn);
		return -EINVAL;
	}
	fill_ah(qp, remote, &qp->path, &aa);
	if (aa.is_global)
		aa.grh.sgid_index = (uint8_t)index;
	ah = ibv_create_ah(qp->pd, &aa);
	if (!ah) {
		ret = errno ? -errno : -EINVAL;
		rk_error("create address handle to LID %u GID %s: %m (no route from GID index %u?)",
			 remote->lid, rk_gid_str(&remote->gid, gid, sizeof(gid)), index);
		return ret;
	}
	*ah_p = ah;
	return 0;
}
