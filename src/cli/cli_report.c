/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The port counters a run moved (struct rk_run_counters, counters.h), as
 * every command that reports a run prints them: one text line, and after a
 * failed completion its hint with the counters that explain it, or on a run
 * that worked a note for each trouble the transport recovered from (status.h);
 * or a JSON object. Counters are per port: the deltas are port-wide. */
#include <inttypes.h>
#include <stdio.h>

#include <rdmakit/error.h>

#include "cli_json.h"
#include "cli_report.h"

static const char *none_note(const struct rk_run_counters *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s port %u exposes no counters (no ports/%u/counters or "
			   "ports/%u/hw_counters in sysfs)", c->device, c->port, c->port, c->port);
	return buf;
}

/* The failure's hint, citing its counters, or saying none of them moved. */
static void failure_text(const struct rk_run_counters *c, const struct rk_run_failure *f,
			 const char *indent)
{
	char cite[512];

	printf("%s%s", indent, rk_wc_status_name(f->status));
	if (f->count > 1)
		printf(" (x%" PRIu32 ")", f->count);
	printf(": %s", rk_wc_status_hint(f->status));
	if (c->state != RK_RUN_COUNTERS_READ)
		printf("\n");
	else if (rk_run_counters_cite(c, f->status, cite, sizeof(cite)))
		printf("; counters: %s\n", cite);
	else if (*rk_wc_status_counters(f->status))
		printf("; none of the counters that tell of it moved on %s port %u\n", c->device,
		       c->port);
	else
		printf("\n");
}

void cli_troubles_text(const struct rk_counters_delta *d, const char *indent, bool *hinted)
{
	char cite[512];

	for (int t = 0; t < RK_TROUBLE_COUNT; t++) {
		const struct rk_trouble_desc *desc = rk_trouble_desc(t);

		if (!rk_counters_trouble(d, t, cite, sizeof(cite)))
			continue;
		printf("%snote: %s (%s)", indent, desc->name, cite);
		if (!hinted || !hinted[t])
			printf(": %s", desc->hint);
		printf("\n");
		if (hinted)
			hinted[t] = true;
	}
}

void cli_counters_text(const struct rk_run_counters *c, const char *indent)
{
	static bool said_none;
	char line[2048], note[192];

	if (c->state == RK_RUN_COUNTERS_UNREAD) {
		if (c->error)
			printf("%sport counters: not read (%s)\n", indent, rk_strerror(c->error));
		return;
	}
	if (c->state == RK_RUN_COUNTERS_NONE) {
		/* Once: every round and run of this device would say the same. */
		if (!said_none)
			printf("%sport counters: %s\n", indent, none_note(c, note, sizeof(note)));
		said_none = true;
	} else {
		rk_run_counters_str(c, line, sizeof(line));
		printf("%sport counters (%s port %u, port-wide, %.2f s): %s", indent, c->device,
		       c->port, (double)c->interval_ns / 1e9, c->n ? line : "no change");
		if (c->left_out)
			printf(" (and %d more)", c->left_out);
		printf("\n");
	}
	for (int i = 0; i < c->nfailures; i++)
		failure_text(c, &c->failures[i], indent);
	if (!c->nfailures) {
		struct rk_counter_delta v[RK_RUN_COUNTERS_MAX];
		struct rk_counters_delta d;

		rk_run_counters_delta(c, v, &d);
		cli_troubles_text(&d, indent, NULL);
	}
}

/* The counters named that moved in d (rises only: went up), as an object. */
static json_object *cited_json(const struct rk_counters_delta *d, const char *const *names,
			       bool rises_only)
{
	json_object *cited = json_object_new_object();

	for (const char *const *n = names; *n; n++) {
		const struct rk_counter_delta *r = rk_counters_delta_find(d, *n);

		if (r && r->delta && (!rises_only || r->delta > 0))
			cli_add_int(cited, r->name, r->delta);
	}
	return cited;
}

static json_object *failure_json(const struct rk_counters_delta *d, const struct rk_run_failure *f)
{
	json_object *j = json_object_new_object();

	cli_add_str(j, "status", rk_wc_status_name(f->status));
	cli_add_int(j, "count", f->count);
	cli_add_str(j, "hint", rk_wc_status_hint(f->status));
	json_object_object_add(j, "counters",
			       cited_json(d, rk_wc_status_counters(f->status), false));
	return j;
}

json_object *cli_troubles_json(const struct rk_counters_delta *d)
{
	json_object *a = json_object_new_array(), *j;
	const struct rk_trouble_desc *desc;
	char cite[8];

	for (int t = 0; t < RK_TROUBLE_COUNT; t++) {
		if (!rk_counters_trouble(d, t, cite, sizeof(cite)))
			continue;
		desc = rk_trouble_desc(t);
		j = json_object_new_object();
		cli_add_str(j, "name", desc->name);
		cli_add_str(j, "hint", desc->hint);
		json_object_object_add(j, "counters", cited_json(d, desc->counters, true));
		json_object_array_add(a, j);
	}
	return a;
}

const char *cli_peer_qp_str(uint32_t qpn, char *buf, size_t len)
{
	if (qpn)
		snprintf(buf, len, "peer QP 0x%x", qpn);
	else
		snprintf(buf, len, "peer QP not known (iWARP)");
	return buf;
}

void cli_add_peer_qpn(json_object *o, const char *key, uint32_t qpn)
{
	json_object_object_add(o, key, qpn ? json_object_new_int64(qpn) : NULL);
}

void cli_add_seconds(json_object *o, const char *key, double sec)
{
	char text[32];

	snprintf(text, sizeof(text), "%.3f", sec);
	json_object_object_add(o, key, json_object_new_double_s(sec, text));
}

void cli_add_grouped(json_object *groups, enum rk_counter_group group, const char *name,
		     int64_t delta)
{
	const char *gname = rk_counter_group_str(group);
	json_object *grp;

	if (!json_object_object_get_ex(groups, gname, &grp)) {
		grp = json_object_new_object();
		json_object_object_add(groups, gname, grp);
	}
	cli_add_int(grp, name, delta);
}

json_object *cli_counters_json(const struct rk_run_counters *c)
{
	struct rk_counter_delta v[RK_RUN_COUNTERS_MAX];
	json_object *j, *deltas, *failures;
	struct rk_counters_delta d;
	char note[192];
	double sec = (double)c->interval_ns / 1e9;

	if (c->state == RK_RUN_COUNTERS_UNREAD && !c->error)
		return NULL;
	j = json_object_new_object();
	cli_add_str(j, "device", c->device);
	cli_add_int(j, "port", c->port);
	cli_add_str(j, "scope", "port-wide");
	if (c->state == RK_RUN_COUNTERS_UNREAD) {
		cli_add_str(j, "error", rk_strerror(c->error));
		return j;
	}
	cli_add_seconds(j, "seconds", sec);
	deltas = json_object_new_object();
	for (int i = 0; i < c->n; i++)
		cli_add_grouped(deltas, c->v[i].group, c->v[i].name, c->v[i].delta);
	json_object_object_add(j, "deltas", deltas);
	cli_add_int(j, "left_out", c->left_out);
	rk_run_counters_delta(c, v, &d);
	failures = json_object_new_array();
	for (int i = 0; i < c->nfailures; i++)
		json_object_array_add(failures, failure_json(&d, &c->failures[i]));
	json_object_object_add(j, "failures", failures);
	/* After a failure its hint covers what the counters show. */
	json_object_object_add(j, "troubles",
			       c->nfailures ? json_object_new_array() : cli_troubles_json(&d));
	json_object_object_add(j, "note", c->state == RK_RUN_COUNTERS_NONE ?
				json_object_new_string(none_note(c, note, sizeof(note))) : NULL);
	return j;
}
