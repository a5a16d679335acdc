/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Thresholds that grade a run: each gate's figure against its limit. */
#include <stdio.h>

#include <rdmakit/gate.h>

static const char *const names[RK_GATE_KINDS] = {
	[RK_GATE_BW] = "expect-bw",
	[RK_GATE_LINK_PCT] = "min-link-pct",
	[RK_GATE_LAT_P99] = "max-lat-p99",
	[RK_GATE_RTT_P99] = "max-rtt-p99",
};

const char *rk_gate_name(enum rk_gate_kind kind)
{
	return (unsigned int)kind < RK_GATE_KINDS ? names[kind] : "?";
}

bool rk_gates_any(const struct rk_gates *g)
{
	return g->min_bw > 0 || g->min_link_pct > 0 || g->max_lat_p99_us > 0 ||
	       g->max_rtt_p99_us > 0;
}

/* A check of kind against limit (in unit), not yet graded. */
static struct rk_gate_check check_of(enum rk_gate_kind kind, const char *unit, bool at_most,
				     double limit)
{
	return (struct rk_gate_check){
		.kind = kind, .name = names[kind], .unit = unit, .at_most = at_most,
		.limit = limit,
	};
}

/* Grade c with figure (in c's unit), or leave it ungraded saying why. */
static void grade(struct rk_gate_check *c, bool known, double figure, const char *why)
{
	if (!known) {
		snprintf(c->note, sizeof(c->note), "%s", why);
		return;
	}
	c->graded = true;
	c->figure = figure;
	c->passed = c->at_most ? figure <= c->limit : figure >= c->limit;
}

static void eval_link(const struct rk_gates *g, const struct rk_gate_figures *f,
		      struct rk_gate_check *c)
{
	*c = check_of(RK_GATE_LINK_PCT, "%", false, g->min_link_pct);
	if (!f->has_bw)
		grade(c, false, 0, "this run measured no bandwidth");
	else if (!(f->link_gbps > 0))
		snprintf(c->note, sizeof(c->note), "link rate unknown%s%s",
			 f->link_note && f->link_note[0] ? ": " : "",
			 f->link_note ? f->link_note : "");
	else
		grade(c, true, rk_link_pct(f->bw, f->link_gbps), NULL);
}

int rk_gates_eval(const struct rk_gates *g, const struct rk_gate_figures *f,
		  struct rk_gate_check *checks)
{
	struct rk_gate_check *c = checks;

	if (g->min_bw > 0) {
		/* Compared in bytes per second, shown in the gates' unit. */
		*c = check_of(RK_GATE_BW, rk_bw_unit_str(g->unit), false,
			      rk_bw_in(g->min_bw, g->unit));
		grade(c, f->has_bw, rk_bw_in(f->bw, g->unit), "this run measured no bandwidth");
		if (c->graded)
			c->passed = f->bw >= g->min_bw;
		c++;
	}
	if (g->min_link_pct > 0)
		eval_link(g, f, c++);
	if (g->max_lat_p99_us > 0) {
		*c = check_of(RK_GATE_LAT_P99, "us", true, g->max_lat_p99_us);
		grade(c++, f->has_lat, f->lat_p99_us, "this run measured no latency");
	}
	if (g->max_rtt_p99_us > 0) {
		*c = check_of(RK_GATE_RTT_P99, "us", true, g->max_rtt_p99_us);
		grade(c++, f->has_rtt, f->rtt_p99_us, "this run measured no round trips");
	}
	return (int)(c - checks);
}

int rk_gate_check_str(const struct rk_gate_check *c, char *buf, size_t len)
{
	const char *bound = c->at_most ? "at most" : "at least";

	if (!c->graded)
		return snprintf(buf, len, "%s: cannot grade (%s), limit %s %g %s: not passed",
				c->name, c->note, bound, c->limit, c->unit);
	return snprintf(buf, len, "%s: %.6g %s, limit %s %g %s: %s", c->name, c->figure, c->unit,
			bound, c->limit, c->unit, c->passed ? "passed" : "MISSED");
}
