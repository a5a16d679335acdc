/* Traffic class, SL, flow label and hop limit of a connection's packets:
 * checked, put into the path attributes, and what cannot be honoured said. */
#include <errno.h>
#include <net/if.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include <rdmakit/traffic.h>
#include <rdmakit/log.h>

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

/* The netdev of a RoCE GID, "" when none is known. A VLAN netdev is listed
 * in /proc/net/vlan (8021q). */
static bool gid_netdev(struct rk_device *dev, uint8_t port_num, const struct rk_gid_choice *gid,
		       char name[IF_NAMESIZE], bool *vlan_p)
{
	struct ibv_gid_entry e;
	char path[64];

	name[0] = 0;
	if (!gid || ibv_query_gid_ex(dev->ctx, port_num, gid->index, &e, 0) ||
	    !e.ndev_ifindex || !if_indextoname(e.ndev_ifindex, name))
		return false;
	snprintf(path, sizeof(path), "/proc/net/vlan/%s", name);
	*vlan_p = access(path, F_OK) == 0;
	return true;
}

static atomic_bool noted_sl_roce, noted_cm;

void rk_traffic_note(const struct rk_traffic *t, struct rk_device *dev, uint8_t port_num,
		     const struct rk_gid_choice *gid, bool cm)
{
	char ndev[IF_NAMESIZE];
	bool vlan = false;

	if (!t)
		return;
	if (cm && (t->has_sl || t->has_flow_label || t->has_hop_limit) &&
	    !atomic_exchange(&noted_cm, true)) {
		rk_warn("RDMA CM sets %s%s%s%s%s from the route itself (the SL from the traffic "
			"class, the hop limit from the IP route): not honoured on this connection; "
			"the TCP exchange honours them",
			t->has_sl ? "the SL" : "",
			t->has_sl && (t->has_flow_label || t->has_hop_limit) ? ", " : "",
			t->has_flow_label ? "the flow label" : "",
			t->has_flow_label && t->has_hop_limit ? ", " : "",
			t->has_hop_limit ? "the hop limit" : "");
		return;
	}
	if (cm || !t->has_sl || !rk_port_is_roce(dev, port_num))
		return;
	if (gid_netdev(dev, port_num, gid, ndev, &vlan) && vlan)
		return;
	if (atomic_exchange(&noted_sl_roce, true))
		return;
	rk_warn("SL %u is not on the wire: RoCE has no SL field and carries it only as the VLAN "
		"priority of a VLAN netdev; %s of %s port %u %s",
		t->sl, ndev[0] ? ndev : "the netdev", dev->info.name, port_num,
		ndev[0] ? "is not a VLAN (use --tclass/--dscp to mark RoCE traffic)" :
			  "is unknown (use --tclass/--dscp to mark RoCE traffic)");
}

int rk_traffic_check_qp(const struct rk_traffic *t, const struct rk_qp *qp)
{
	int n = 0;

	if (!t)
		return 0;
	if (t->has_tclass && qp->path.traffic_class != t->tclass) {
		rk_warn("QP 0x%x carries traffic class %u (DSCP %u), not the %u (DSCP %u) asked "
			"for: RDMA CM took it from %s",
			qp->qp->qp_num, qp->path.traffic_class, rk_tclass_dscp(qp->path.traffic_class),
			t->tclass, rk_tclass_dscp(t->tclass),
			qp->cm_id ? "the connection's path" : "the address vector");
		n++;
	}
	return n;
}
