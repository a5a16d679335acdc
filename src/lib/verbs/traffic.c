/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Traffic class, SL, flow label and hop limit of a connection's packets:
 * checked, put into the path attributes, and what cannot be honoured said. */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include <rdmakit/traffic.h>
#include <rdmakit/log.h>
#include "verbs/traffic_int.h"

bool rk_traffic_any(const struct rk_traffic *t)
{
	return t && (t->has_tclass || t->has_sl || t->has_flow_label || t->has_hop_limit);
}

int rk_traffic_check(const struct rk_traffic *t, char *why, size_t why_len)
{
	if (t->has_sl && t->sl > 15) {
		snprintf(why, why_len, "SL %u is above 15", t->sl);
		return -ERANGE;
	}
	if (t->has_flow_label && t->flow_label > RK_FLOW_LABEL_MAX) {
		snprintf(why, why_len, "flow label 0x%x does not fit in 20 bits (at most 0x%x)",
			 t->flow_label, RK_FLOW_LABEL_MAX);
		return -ERANGE;
	}
	if (t->has_hop_limit && t->hop_limit == 0) {
		snprintf(why, why_len, "hop limit 0: a packet must live for one hop at least");
		return -ERANGE;
	}
	return 0;
}

void rk_traffic_apply(const struct rk_traffic *t, struct rk_path_attr *path)
{
	if (!t)
		return;
	if (t->has_tclass)
		path->traffic_class = t->tclass;
	if (t->has_sl)
		path->sl = t->sl;
	if (t->has_flow_label)
		path->flow_label = t->flow_label;
	if (t->has_hop_limit)
		path->hop_limit = t->hop_limit;
}

void rk_traffic_apply_ah(const struct rk_traffic *t, struct ibv_ah_attr *ah)
{
	if (!t)
		return;
	if (t->has_sl)
		ah->sl = t->sl;
	if (!ah->is_global)
		return;
	if (t->has_tclass)
		ah->grh.traffic_class = t->tclass;
	if (t->has_flow_label)
		ah->grh.flow_label = t->flow_label;
	if (t->has_hop_limit)
		ah->grh.hop_limit = t->hop_limit;
}

/* The netdev of a RoCE GID, "" when none is known; whether it is a VLAN (a
 * VLAN netdev is listed in /proc/net/vlan, 8021q). */
static void gid_netdev(struct rk_device *dev, uint8_t port_num, const struct rk_gid_choice *gid,
		       char name[IF_NAMESIZE], bool *vlan_p)
{
	struct ibv_gid_entry e;
	char path[64];

	name[0] = 0;
	*vlan_p = false;
	if (!gid || ibv_query_gid_ex(dev->ctx, port_num, gid->index, &e, 0) ||
	    !e.ndev_ifindex || !if_indextoname(e.ndev_ifindex, name))
		return;
	snprintf(path, sizeof(path), "/proc/net/vlan/%s", name);
	*vlan_p = access(path, F_OK) == 0;
}

static atomic_bool noted_cm, noted_sl, noted_hop, noted_flow, noted_tclass;

/* RDMA CM: what it does not take from us, once. */
static void note_cm(const struct rk_traffic *t)
{
	if (!(t->has_sl || t->has_flow_label || t->has_hop_limit) ||
	    atomic_exchange(&noted_cm, true))
		return;
	rk_warn("RDMA CM sets %s%s%s%s%s of the QP it connects from the route itself (the SL from "
		"the traffic class, the hop limit from the IP route): not honoured here; the TCP "
		"exchange takes them",
		t->has_sl ? "the SL" : "",
		t->has_sl && (t->has_flow_label || t->has_hop_limit) ? ", " : "",
		t->has_flow_label ? "the flow label" : "",
		t->has_flow_label && t->has_hop_limit ? ", " : "",
		t->has_hop_limit ? "the hop limit" : "");
}

/* RoCE: the SL, the hop limit and (IPv4) the flow label, once each. */
static void note_roce(const struct rk_traffic *t, struct rk_device *dev, uint8_t port_num,
		      const struct rk_gid_choice *gid)
{
	struct rk_gid_entry e = {.type = gid ? gid->type : RK_GID_ROCE_V2};
	char ndev[IF_NAMESIZE];
	bool vlan;

	if (gid)
		e.gid = gid->gid;
	rk_gid_entry_set_ip(&e);
	if (t->has_sl && !atomic_load(&noted_sl)) {
		gid_netdev(dev, port_num, gid, ndev, &vlan);
		if (dev->info.vendor_id == RK_VENDOR_ID_RXE && !atomic_exchange(&noted_sl, true))
			rk_warn("SL %u is not on the wire: RoCE has no SL field, and Soft-RoCE (rxe) "
				"sets no VLAN priority from it (mark RoCE traffic with --tclass/--dscp)",
				t->sl);
		else if (!vlan && !atomic_exchange(&noted_sl, true))
			rk_warn("SL %u is not on the wire: RoCE has no SL field and carries it only "
				"as the VLAN priority of a VLAN netdev; %s of %s port %u is %s (mark "
				"RoCE traffic with --tclass/--dscp)",
				t->sl, ndev[0] ? ndev : "the netdev", dev->info.name, port_num,
				ndev[0] ? "not a VLAN" : "unknown");
	}
	if (t->has_hop_limit && !atomic_exchange(&noted_hop, true)) {
		if (dev->info.vendor_id == RK_VENDOR_ID_RXE)
			rk_warn("hop limit %u is not on the wire: Soft-RoCE (rxe) sends the TTL / hop "
				"limit of the IP route to the peer (64 unless the route sets one: ip "
				"route change ROUTE hoplimit N), not the address vector's",
				t->hop_limit);
		else if (!IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)e.gid.raw))
			rk_warn("hop limit %u may not be on the wire: the kernel sets the hop limit "
				"(IP TTL) of RoCE packets to a routable GID from the IP route to the "
				"peer (set it there: ip route change ROUTE hoplimit N)",
				t->hop_limit);
	}
	if (t->has_flow_label && !atomic_exchange(&noted_flow, true)) {
		if (e.family == AF_INET)
			rk_warn("flow label 0x%x is not on the wire: RoCE v2 over IPv4 (GID %s) has "
				"no flow label field",
				t->flow_label, e.ip);
		else if (dev->info.vendor_id == RK_VENDOR_ID_RXE)
			rk_warn("flow label 0x%x is not on the wire: Soft-RoCE (rxe) sends IPv6 "
				"flow label 0",
				t->flow_label);
	}
}

void rk_traffic_note(const struct rk_traffic *t, struct rk_device *dev, uint8_t port_num,
		     const struct rk_gid_choice *gid, bool cm)
{
	if (!t)
		return;
	if (cm)
		note_cm(t);
	else if (rk_port_is_roce(dev, port_num))
		note_roce(t, dev, port_num, gid);
}

int rk_traffic_check_qp(const struct rk_traffic *t, const struct rk_qp *qp, bool cm_server)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (!t || !t->has_tclass || qp->transport == RK_UD ||
	    ibv_query_qp(qp->qp, &a, IBV_QP_AV, &ia) || !a.ah_attr.is_global ||
	    a.ah_attr.grh.traffic_class == t->tclass)
		return 0;
	if (!atomic_exchange(&noted_tclass, true))
		rk_warn("QP 0x%x carries traffic class %u (DSCP %u), not the %u (DSCP %u) asked for%s",
			qp->qp->qp_num, a.ah_attr.grh.traffic_class,
			rk_tclass_dscp(a.ah_attr.grh.traffic_class), t->tclass,
			rk_tclass_dscp(t->tclass),
			cm_server ? ": under RDMA CM a server's QP takes the traffic class of the "
				    "client's connect request (give the client --tclass/--dscp)" :
				    "");
	return 1;
}
