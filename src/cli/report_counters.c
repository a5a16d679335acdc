/* The port counters a run moved (struct rk_run_counters, counters.h), as
 * every command that reports a run prints them: one text line, and after a
 * failed completion its hint with the counters that explain it; or a JSON
 * object. Counters are per port: the deltas are port-wide. */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

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
}

static json_object *failure_json(const struct rk_run_counters *c, const struct rk_run_failure *f)
{
	json_object *j = json_object_new_object(), *cited = json_object_new_object();

	json_object_object_add(j, "status", json_object_new_string(rk_wc_status_name(f->status)));
	json_object_object_add(j, "count", json_object_new_int64(f->count));
	json_object_object_add(j, "hint", json_object_new_string(rk_wc_status_hint(f->status)));
	for (const char *const *n = rk_wc_status_counters(f->status); *n; n++) {
		const struct rk_run_counter *r = rk_run_counters_find(c, *n);

		if (r)
			json_object_object_add(cited, r->name, json_object_new_int64(r->delta));
	}
	json_object_object_add(j, "counters", cited);
	return j;
}

json_object *cli_counters_json(const struct rk_run_counters *c)
{
	json_object *j, *deltas, *failures;
	char note[192], text[32];
	double sec = (double)c->interval_ns / 1e9;

	if (c->state == RK_RUN_COUNTERS_UNREAD && !c->error)
		return NULL;
	j = json_object_new_object();
	json_object_object_add(j, "device", json_object_new_string(c->device));
	json_object_object_add(j, "port", json_object_new_int(c->port));
	json_object_object_add(j, "scope", json_object_new_string("port-wide"));
	if (c->state == RK_RUN_COUNTERS_UNREAD) {
		json_object_object_add(j, "error", json_object_new_string(rk_strerror(c->error)));
		return j;
	}
	snprintf(text, sizeof(text), "%.3f", sec);
	json_object_object_add(j, "seconds", json_object_new_double_s(sec, text));
	deltas = json_object_new_object();
	for (int i = 0; i < c->n; i++) {
		const char *gname = rk_counter_group_str(c->v[i].group);
		json_object *grp;

		if (!json_object_object_get_ex(deltas, gname, &grp)) {
			grp = json_object_new_object();
			json_object_object_add(deltas, gname, grp);
		}
		json_object_object_add(grp, c->v[i].name, json_object_new_int64(c->v[i].delta));
	}
	json_object_object_add(j, "deltas", deltas);
	json_object_object_add(j, "left_out", json_object_new_int(c->left_out));
	failures = json_object_new_array();
	for (int i = 0; i < c->nfailures; i++)
		json_object_array_add(failures, failure_json(c, &c->failures[i]));
	json_object_object_add(j, "failures", failures);
	json_object_object_add(j, "note", c->state == RK_RUN_COUNTERS_NONE ?
				json_object_new_string(none_note(c, note, sizeof(note))) : NULL);
	return j;
}
