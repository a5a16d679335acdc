/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: what a connection's packets carry for the fabric's QoS: the
 * traffic class (on RoCE v2 the IP header's DS field: DSCP << 2 | ECN), the
 * service level, the flow label and the hop limit (on RoCE v2 the IP TTL).
 *
 * Each field is applied only when its has_ flag is set; otherwise the
 * library's (or RDMA CM's) default stays. The TCP exchange puts them in the
 * QP's address vector at RTR (RC, UC) and in UD address handles. RDMA CM
 * takes the traffic class as the id's type of service (RDMA_OPTION_ID_TOS,
 * set before the route is resolved, and on a listener); it derives SL, flow
 * label and hop limit itself, so rk_traffic_note() says, by name, which asked
 * field it cannot carry. On RoCE the kernel itself replaces some fields:
 * rk_traffic_note() says which.
 */
#ifndef RDMAKIT_TRAFFIC_H
#define RDMAKIT_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmakit/device.h>
#include <rdmakit/gid.h>
#include <rdmakit/qp.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_FLOW_LABEL_MAX 0xfffffu

struct rk_traffic {
	bool has_tclass;
	uint8_t tclass;      /* GRH traffic class / IP DS field byte, 0-255 */
	bool has_sl;
	uint8_t sl;          /* service level, 0-15 */
	bool has_flow_label;
	uint32_t flow_label; /* GRH flow label, 0-0xFFFFF */
	bool has_hop_limit;
	uint8_t hop_limit;   /* GRH hop limit (IP TTL on RoCE v2), 1-255 */
};

/* The DSCP of a traffic class byte (its upper 6 bits), its ECN (lower 2). */
static inline uint8_t rk_tclass_dscp(uint8_t tclass)
{
	return (uint8_t)(tclass >> 2);
}

static inline uint8_t rk_tclass_ecn(uint8_t tclass)
{
	return (uint8_t)(tclass & 3);
}

/* Whether any field is set. t may be NULL (none). */
bool rk_traffic_any(const struct rk_traffic *t);

/* Check the ranges of the fields that are set (SL 0-15, flow label 20 bits,
 * hop limit 1-255). 0, or -ERANGE with a sentence naming the field in why. */
int rk_traffic_check(const struct rk_traffic *t, char *why, size_t why_len);

/* Copy the fields that are set into path's SL, flow label, hop limit and
 * traffic class. t may be NULL (nothing changes). */
void rk_traffic_apply(const struct rk_traffic *t, struct rk_path_attr *path);

/* The same into an address handle's attributes (the GRH fields only when it
 * has a GRH): for an address handle made from a completion or from RDMA
 * CM's SIDR reply. */
void rk_traffic_apply_ah(const struct rk_traffic *t, struct ibv_ah_attr *ah);

/* Say once per process and field (rk_warn) what the way of connecting or
 * the device cannot honour of t on dev's port port_num. With cm: the SL, flow
 * label and hop limit, which RDMA CM sets from the route itself. Otherwise on
 * RoCE: an SL (on the wire only as the VLAN priority of a VLAN netdev, and
 * the GID's netdev is not one); a hop limit towards a routable GID (the
 * kernel takes it from the IP route, measured on rxe and in its core code);
 * a flow label on an IPv4 GID (IPv4 has no such field). gid may be NULL (IB
 * without GRH). */
void rk_traffic_note(const struct rk_traffic *t, struct rk_device *dev, uint8_t port_num,
		     const struct rk_gid_choice *gid, bool cm);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
