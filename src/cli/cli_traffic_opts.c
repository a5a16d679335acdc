/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The traffic option group (--tclass, --dscp, --sl, --flow-label,
 * --hop-limit), shared by rdmakit and rdmakit-mesh. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli_traffic_opts.h"

int cli_traffic(const char *cmd, const struct cli_traffic_opts *o, struct rk_traffic *t)
{
	bool tclass = cli_opts_given(&o->tclass), dscp = cli_opts_given(&o->dscp);

	*t = (struct rk_traffic){0};
	if (tclass && dscp && rk_tclass_dscp((uint8_t)o->tclass) != o->dscp) {
		fprintf(stderr,
			"rdmakit %s: --tclass %" PRIu64 " (DSCP %u) and --dscp %" PRIu64
			" disagree: give one of them (--tclass = --dscp << 2 | ECN)\n",
			cmd, o->tclass, rk_tclass_dscp((uint8_t)o->tclass), o->dscp);
		return -EINVAL;
	}
	t->has_tclass = tclass || dscp;
	t->tclass = (uint8_t)(tclass ? o->tclass : o->dscp << 2);
	t->has_sl = cli_opts_given(&o->sl);
	t->sl = (uint8_t)o->sl;
	t->has_flow_label = cli_opts_given(&o->flow_label);
	t->flow_label = (uint32_t)o->flow_label;
	t->has_hop_limit = cli_opts_given(&o->hop_limit);
	t->hop_limit = (uint8_t)o->hop_limit;
	return 0;
}

const char *cli_traffic_str(const struct rk_traffic *t, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	if (t->has_tclass)
		n += (size_t)snprintf(buf + n, len - n, ", tclass %u (DSCP %u, ECN %u)", t->tclass,
				      rk_tclass_dscp(t->tclass), rk_tclass_ecn(t->tclass));
	if (t->has_sl && n < len)
		n += (size_t)snprintf(buf + n, len - n, ", SL %u", t->sl);
	if (t->has_flow_label && n < len)
		n += (size_t)snprintf(buf + n, len - n, ", flow label 0x%x", t->flow_label);
	if (t->has_hop_limit && n < len)
		snprintf(buf + n, len - n, ", hop limit %u", t->hop_limit);
	return buf;
}

static void add_field(json_object *o, const char *key, bool set, int64_t v)
{
	json_object_object_add(o, key, set ? json_object_new_int64(v) : NULL);
}

json_object *cli_traffic_json(const struct rk_traffic *t)
{
	json_object *o = json_object_new_object();

	add_field(o, "tclass", t->has_tclass, t->tclass);
	add_field(o, "dscp", t->has_tclass, rk_tclass_dscp(t->tclass));
	add_field(o, "ecn", t->has_tclass, rk_tclass_ecn(t->tclass));
	add_field(o, "sl", t->has_sl, t->sl);
	add_field(o, "flow_label", t->has_flow_label, t->flow_label);
	add_field(o, "hop_limit", t->has_hop_limit, t->hop_limit);
	return o;
}
