/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The traffic option group: what every packet carries for the fabric's QoS
 * (rdmakit/traffic.h), for the commands of rdmakit and for rdmakit-mesh. */
#ifndef RDMAKIT_CLI_TRAFFIC_OPTS_H
#define RDMAKIT_CLI_TRAFFIC_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>
#include <rdmakit/traffic.h>

#include "cli_opts.h"

/* The traffic group, part of the connection group (long options only): what
 * every packet carries for the fabric's QoS (traffic.h). Read it with
 * cli_traffic() after parsing. */
struct cli_traffic_opts {
	uint64_t tclass;
	uint64_t dscp;
	uint64_t sl;
	uint64_t flow_label;
	uint64_t hop_limit;
};

#define CLI_TRAFFIC_OPTS_DEFAULT {.hop_limit = 64}

/* What --tclass says of RDMA CM: the command has --cm, connects only over
 * RDMA CM, or never uses it. */
#define CLI_TCLASS_WITH_CM "; with --cm the RDMA CM type of service"
#define CLI_TCLASS_CM_ONLY "; the RDMA CM type of service"
#define CLI_TCLASS_NO_CM ""

/* What a field not given is: not set, so the device's (or RDMA CM's). */
#define CLI_TRAFFIC_NOT_SET "not set: the device's"

/* --tclass and --dscp alone (blk attach: RDMA CM carries only the class).
 * The _KEYS forms give --tclass and --sl letters, for ping's tables that
 * speak another program's letters (rping -t, ibv_*_pingpong -l). cm is one
 * of CLI_TCLASS_*. */
#define CLI_TCLASS_OPTS(t, cm) CLI_TCLASS_OPTS_KEY(t, 0, cm)
#define CLI_TCLASS_OPTS_KEY(t, key, cm)                                                          \
	{"tclass", (key), CLI_OPT_COUNT, &(t)->tclass, 0, 255, "N",                              \
	 "traffic class of every packet: on RoCE v2 the IP DS field, DSCP << 2 | ECN (104 is "  \
	 "DSCP 26)" cm, .def = CLI_TRAFFIC_NOT_SET},                                             \
		{"dscp", 0, CLI_OPT_COUNT, &(t)->dscp, 0, 63, "N",                               \
		 "DSCP of every packet: the same as --tclass N << 2 (ECN bits 0)",               \
		 .def = CLI_TRAFFIC_NOT_SET}

#define CLI_TRAFFIC_OPTS(t, cm) CLI_TRAFFIC_OPTS_KEYS(t, 0, 0, cm)
#define CLI_TRAFFIC_OPTS_KEYS(t, tclass_key, sl_key, cm)                                         \
	CLI_TCLASS_OPTS_KEY(t, tclass_key, cm),                                                  \
		{"sl", (sl_key), CLI_OPT_COUNT, &(t)->sl, 0, 15, "N",                            \
		 "service level (InfiniBand; RoCE carries it only as a VLAN priority)",          \
		 .def = CLI_TRAFFIC_NOT_SET},                                                    \
		{"flow-label", 0, CLI_OPT_COUNT, &(t)->flow_label, 0, 0xfffff, "N",              \
		 "GRH flow label, 20 bits (decimal or 0x hex)", .def = CLI_TRAFFIC_NOT_SET},     \
		{"hop-limit", 0, CLI_OPT_COUNT, &(t)->hop_limit, 1, 255, "N",                    \
		 "GRH hop limit: on RoCE v2 the IP TTL"}

/* The traffic fields given (a default not given stays unset in *t). 0, or
 * -EINVAL after saying what is wrong on stderr ("rdmakit CMD: --tclass 104
 * (DSCP 26) and --dscp 27 disagree ..."). */
int cli_traffic(const char *cmd, const struct cli_traffic_opts *o, struct rk_traffic *t);

/* The fields set, for a connection line: ", tclass 104 (DSCP 26, ECN 0), SL 3,
 * flow label 0x12345, hop limit 9"; "" when none. Returns buf. */
const char *cli_traffic_str(const struct rk_traffic *t, char *buf, size_t len);

/* As JSON: {tclass, dscp, ecn, sl, flow_label, hop_limit}, each null when
 * not set (the device's or RDMA CM's default). */
json_object *cli_traffic_json(const struct rk_traffic *t);

#endif
