/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Units and thresholds on the command line: reading them, printing each
 * graded check, and the exit status they come to. The grading itself is the
 * library's (gate.h). */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "cli_gates.h"
#include "cli_json.h"

const char *const cli_units[] = {"Gb", "GB", "MiB", NULL};

/* One limit option: rate (with units) or a plain number up to max. */
static int parse_limit(const char *cmd, const char *opt, const char *text, double max,
		       enum rk_bw_unit unit, bool rate, double *out)
{
	char err[200];
	int ret;

	if (!text)
		return 0;
	ret = rate ? rk_rate_parse(text, unit, out, err, sizeof(err)) :
		     rk_limit_parse(text, max, out, err, sizeof(err));
	if (ret)
		fprintf(stderr, "rdmakit %s: option --%s: %s\n", cmd, opt, err);
	return ret;
}

int cli_gates_parse(const char *cmd, const struct cli_gate_opts *o, struct rk_gates *g)
{
	*g = (struct rk_gates){.unit = RK_BW_MIB};
	if (o->units && rk_bw_unit_parse(o->units, &g->unit)) {
		fprintf(stderr, "rdmakit %s: option --units: '%s' is not one of Gb (10^9 bits/s), "
				"GB (10^9 bytes/s), MiB (2^20 bytes/s); the case tells bits from "
				"bytes\n", cmd, o->units);
		return CLI_USAGE;
	}
	if (parse_limit(cmd, "expect-bw", o->expect_bw, 0, g->unit, true, &g->min_bw) ||
	    parse_limit(cmd, "min-link-pct", o->min_link_pct, RK_GATE_PCT_MAX, g->unit, false,
			&g->min_link_pct) ||
	    parse_limit(cmd, "max-lat-p99", o->max_lat_p99, RK_GATE_US_MAX, g->unit, false,
			&g->max_lat_p99_us) ||
	    parse_limit(cmd, "max-rtt-p99", o->max_rtt_p99, RK_GATE_US_MAX, g->unit, false,
			&g->max_rtt_p99_us))
		return CLI_USAGE;
	return CLI_OK;
}

static json_object *check_json(const struct rk_gate_check *c, uint32_t size)
{
	json_object *j = json_object_new_object();

	cli_add_str(j, "name", c->name);
	if (size)
		cli_add_int(j, "size", size);
	json_object_object_add(j, "figure", c->graded ? json_object_new_double(c->figure) : NULL);
	cli_add_double(j, "limit", c->limit);
	cli_add_str(j, "unit", c->unit);
	cli_add_bool(j, "at_most", c->at_most);
	cli_add_bool(j, "graded", c->graded);
	cli_add_bool(j, "passed", c->passed);
	if (!c->graded)
		cli_add_str(j, "note", c->note);
	return j;
}

int cli_gates_grade(const struct rk_gates *g, const struct rk_gate_figures *f, uint32_t size,
		    const char *label, FILE *out, json_object *arr, int *checks_p)
{
	struct rk_gate_check checks[RK_GATE_KINDS];
	int n = rk_gates_eval(g, f, checks), failed = 0;

	for (int i = 0; i < n; i++) {
		char line[400];

		failed += !checks[i].passed;
		if (arr) {
			json_object_array_add(arr, check_json(&checks[i], size));
			continue;
		}
		rk_gate_check_str(&checks[i], line, sizeof(line));
		fprintf(out, " gate %s: %s\n", label, line);
	}
	if (out)
		fflush(out);
	if (checks_p)
		*checks_p += n;
	return failed;
}

int cli_gates_end(const char *who, int status, int checks, int failed, FILE *out,
		  json_object *doc, json_object *arr)
{
	bool passed;

	if (!checks)
		failed = 1; /* thresholds given, nothing graded: never a silent pass */
	passed = status == CLI_OK && !failed;

	if (doc) {
		json_object_object_add(doc, "gates", arr);
		cli_add_bool(doc, "gates_passed", passed);
	} else {
		json_object_put(arr);
	}
	if (out && status == CLI_OK) {
		if (!checks)
			fprintf(out, "%s: thresholds: no result to grade (exit status %d)\n", who,
				CLI_GATE);
		else if (failed)
			fprintf(out, "%s: thresholds: %d of %d not passed (exit status %d)\n", who,
				failed, checks, CLI_GATE);
		else
			fprintf(out, "%s: thresholds: all %d met\n", who, checks);
		fflush(out);
	}
	return status == CLI_OK && failed ? CLI_GATE : status;
}
