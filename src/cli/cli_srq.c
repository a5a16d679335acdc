/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The shared receive queue options and report (cli_srq.h). */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "cli_json.h"
#include "cli_report.h"
#include "cli_srq.h"

int cli_srq_check(const char *cmd, const struct cli_srq_opts *o)
{
	const char *orphan = NULL;

	if (!o->srq) {
		if (cli_opts_given(&o->depth))
			orphan = "--srq-depth";
		else if (cli_opts_given(&o->limit))
			orphan = "--srq-limit";
		else if (o->no_refill)
			orphan = "--srq-no-refill";
	}
	if (orphan) {
		fprintf(stderr, "rdmakit %s: option %s needs --srq\n", cmd, orphan);
		return CLI_USAGE;
	}
	if (o->srq && o->limit > 0 && o->depth && (uint64_t)o->limit >= o->depth) {
		fprintf(stderr, "rdmakit %s: option --srq-limit: %" PRId64 " is not below "
				"--srq-depth %" PRIu64 " (the event comes when fewer are posted)\n",
			cmd, o->limit, o->depth);
		return CLI_USAGE;
	}
	return 0;
}

void cli_srq_fill(const struct cli_srq_opts *o, struct rk_srq_opts *so)
{
	so->depth = (uint32_t)o->depth;
	so->limit = o->limit < 0 ? 0 : o->limit == 0 ? RK_SRQ_NO_LIMIT : (uint32_t)o->limit;
	so->batch = 0;
	so->slot_size = 0;
	so->no_refill = o->no_refill;
}

void cli_srq_text(const struct rk_srq_stats *st, const char *indent)
{
	char line[320];

	rk_srq_stats_str(st, line, sizeof(line));
	printf("%sSRQ: %s\n", indent, line);
	if (st->limit_events)
		printf("%sIBV_EVENT_SRQ_LIMIT_REACHED (x%u): the device had fewer than %u "
		       "receives left; the first came with %" PRIu64 " posted in all, %u of them "
		       "not yet polled\n", indent, st->limit_events, st->limit,
		       st->posted_at_limit, st->unpolled_at_limit);
	if (st->no_refill && st->low == 0)
		printf("%sthe SRQ ran empty (refill held off): a sender finds no receive and "
		       "gets RNR NAKs; with few RNR retries its SENDs fail with "
		       "IBV_WC_RNR_RETRY_EXC_ERR\n", indent);
}

json_object *cli_srq_json(const struct rk_srq_stats *st)
{
	json_object *j = json_object_new_object();

	cli_add_int(j, "depth", st->depth);
	cli_add_int(j, "max_wr", st->max_wr);
	cli_add_int(j, "limit", st->limit);
	cli_add_int(j, "batch", st->batch);
	cli_add_bool(j, "refill", !st->no_refill);
	cli_add_int(j, "posted", (int64_t)st->posted);
	cli_add_int(j, "taken", (int64_t)st->completed);
	cli_add_int(j, "refills", (int64_t)st->refills);
	cli_add_int(j, "fewest_posted", st->low);
	cli_add_int(j, "limit_armed", st->armed);
	cli_add_int(j, "limit_events", st->limit_events);
	if (st->limit_events) {
		json_object *ev = json_object_new_object();

		cli_add_str(ev, "event", "IBV_EVENT_SRQ_LIMIT_REACHED");
		cli_add_int(ev, "posted", (int64_t)st->posted_at_limit);
		cli_add_int(ev, "unpolled", st->unpolled_at_limit);
		cli_add_int(ev, "limit", st->limit);
		json_object_object_add(j, "limit_event", ev);
	}
	cli_add_int(j, "srq_errors", st->errors);
	return j;
}

void cli_run_text(const struct rk_run_counters *c, const struct rk_srq_stats *srq,
		  const char *indent)
{
	cli_counters_text(c, indent);
	if (srq)
		cli_srq_text(srq, indent);
}

void cli_run_json(json_object *doc, const char *prefix, const struct rk_run_counters *c,
		  const struct rk_srq_stats *srq)
{
	char key[64];

	snprintf(key, sizeof(key), "%scounters", prefix);
	json_object_object_add(doc, key, cli_counters_json(c));
	snprintf(key, sizeof(key), "%ssrq", prefix);
	if (srq)
		json_object_object_add(doc, key, cli_srq_json(srq));
}
