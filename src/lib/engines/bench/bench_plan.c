/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What a command asks of a run, checked (rk_bench_ask_check()) and turned
 * into the engine's options (rk_bench_ask_opts()), and the
 * client's plan against the server's (rk_bench_plan_match()):
 * perftest users give both sides the same options; a server checks the ones
 * it was given and names the first that differs. Pure logic. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/bench.h>
#include <rdmakit/units.h>

void rk_bench_plan_sizes(struct rk_bench_plan *p, const uint32_t *sizes, uint32_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a over the sizes' bytes */

	p->nsizes = n;
	p->min_size = n ? sizes[0] : 0;
	p->max_size = n ? sizes[0] : 0;
	for (uint32_t i = 0; i < n; i++) {
		if (sizes[i] < p->min_size)
			p->min_size = sizes[i];
		if (sizes[i] > p->max_size)
			p->max_size = sizes[i];
		for (int b = 0; b < 4; b++) {
			h ^= (sizes[i] >> (8 * b)) & 0xffu;
			h *= 16777619u;
		}
	}
	p->sizes_hash = h;
}

static void sizes_text(const struct rk_bench_plan *p, char *buf, size_t len)
{
	if (p->nsizes == 1)
		snprintf(buf, len, "%u", p->min_size);
	else
		snprintf(buf, len, "%u sizes %u..%u", p->nsizes, p->min_size, p->max_size);
}

static void duration_text(const struct rk_bench_plan *p, char *buf, size_t len)
{
	if (!p->duration_ms)
		snprintf(buf, len, "none (runs by --count)");
	else if (p->duration_ms == RK_BENCH_UNTIL_STOPPED)
		snprintf(buf, len, "0 (until stopped)");
	else if (p->duration_ms % 1000)
		snprintf(buf, len, "%.3f", p->duration_ms / 1000.0);
	else
		snprintf(buf, len, "%u", p->duration_ms / 1000);
}

static void iters_text(const struct rk_bench_plan *p, char *buf, size_t len)
{
	if (p->iters)
		snprintf(buf, len, "%" PRIu64, p->iters);
	else
		snprintf(buf, len, "none (runs by --duration)");
}

/* A field's value as the option takes it, into buf. */
static void field_text(const struct rk_bench_plan *p, uint32_t field, char *buf, size_t len)
{
	static const char *const transports[] = {"rc", "uc", "ud"};

	switch (field) {
	case RK_BENCH_GIVEN_TEST:
		snprintf(buf, len, "%s", rk_bench_test_str(p->test));
		break;
	case RK_BENCH_GIVEN_MODE:
		snprintf(buf, len, "%s", rk_bench_mode_str(p->mode));
		break;
	case RK_BENCH_GIVEN_TRANSPORT:
		snprintf(buf, len, "%s",
			 (unsigned int)p->transport <= RK_UD ? transports[p->transport] : "?");
		break;
	case RK_BENCH_GIVEN_SIZES:
		sizes_text(p, buf, len);
		break;
	case RK_BENCH_GIVEN_ITERS:
		iters_text(p, buf, len);
		break;
	case RK_BENCH_GIVEN_DURATION:
		duration_text(p, buf, len);
		break;
	case RK_BENCH_GIVEN_QPS:
		snprintf(buf, len, "%u", p->qps);
		break;
	case RK_BENCH_GIVEN_THREADS:
		snprintf(buf, len, "%u", p->threads ? p->threads : 1);
		break;
	default:
		snprintf(buf, len, "%s", p->bidir ? "on" : "off");
		break;
	}
}

int rk_bench_plan_match(const struct rk_bench_plan *server, uint32_t given,
			const struct rk_bench_plan *client, char *why, size_t why_len)
{
	static const struct {
		uint32_t field;
		const char *option;
	} fields[] = {
		{RK_BENCH_GIVEN_TEST, "op"},       {RK_BENCH_GIVEN_MODE, "mode"},
		{RK_BENCH_GIVEN_TRANSPORT, "transport"}, {RK_BENCH_GIVEN_SIZES, "size"},
		{RK_BENCH_GIVEN_ITERS, "count"},   {RK_BENCH_GIVEN_DURATION, "duration"},
		{RK_BENCH_GIVEN_QPS, "qps"},       {RK_BENCH_GIVEN_THREADS, "threads"},
		{RK_BENCH_GIVEN_BIDIR, "bidir"},
	};
	char c[48], s[48];

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		bool sizes = fields[i].field == RK_BENCH_GIVEN_SIZES;

		if (!(given & fields[i].field))
			continue;
		/* Two values are the same when the option would take the same
		 * text, and a list of sizes also in the same order. */
		field_text(client, fields[i].field, c, sizeof(c));
		field_text(server, fields[i].field, s, sizeof(s));
		if (!strcmp(c, s) && (!sizes || client->sizes_hash == server->sizes_hash))
			continue;
		if (!strcmp(c, s))
			snprintf(why, why_len, "--%s: client %s, server %s (the lists differ)",
				 fields[i].option, c, s);
		else
			snprintf(why, why_len, "--%s: client %s, server %s", fields[i].option, c, s);
		return -EINVAL;
	}
	return 0;
}

/* ---- what a command asks for, checked (rk_bench_ask_check()) ---- */

static int size_parse(const char *text, uint32_t *out, char *why, size_t why_len)
{
	char err[160];
	uint64_t v;

	if (rk_parse_u64(text, 1, RK_BENCH_MAX_SIZE, 1024, &v, err, sizeof(err))) {
		snprintf(why, why_len, "option --size: %s", err);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

int rk_bench_sizes_parse(const char *text, uint32_t *sizes, char *why, size_t why_len)
{
	char buf[512], *dots, *save = NULL, *tok;
	int n = 0;

	if (strlen(text) >= sizeof(buf)) {
		snprintf(why, why_len, "option --size: too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", text);
	dots = strstr(buf, "..");
	if (dots) {
		uint32_t lo, hi;

		*dots = '\0';
		if (size_parse(buf, &lo, why, why_len) || size_parse(dots + 2, &hi, why, why_len))
			return -EINVAL;
		n = rk_bench_sweep(lo, hi, sizes, RK_BENCH_MAX_SIZES);
		if (n < 0) {
			snprintf(why, why_len, "option --size: '%s' is not a sweep of powers of two "
				 "(LO..HI with LO <= HI, e.g. 2..8M)", text);
			return -EINVAL;
		}
		return n;
	}
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == RK_BENCH_MAX_SIZES) {
			snprintf(why, why_len, "option --size: at most %d sizes", RK_BENCH_MAX_SIZES);
			return -EINVAL;
		}
		if (size_parse(tok, &sizes[n], why, why_len))
			return -EINVAL;
		n++;
	}
	if (!n || text[strlen(text) - 1] == ',' || text[0] == ',' || strstr(text, ",,")) {
		snprintf(why, why_len, "option --size: '%s' is not a list of sizes", text);
		return -EINVAL;
	}
	return n;
}

/* The test, mode, transport, threads and sizes: the sizes' default filled
 * in. */
static int ask_run(const struct rk_bench_ask *a, uint32_t *sizes, int *nsizes_p, char *why,
		   size_t why_len)
{
	bool atomic = a->test >= RK_BENCH_FETCH_ADD;
	int n = 1;

	if (a->iters && a->duration_s >= 0) {
		snprintf(why, why_len, "give --count or --duration, not both");
		return -EINVAL;
	}
	if (rk_bench_check(a->test, a->mode, a->transport, a->qps, a->bidir, why, why_len))
		return -EINVAL;
	if (a->threads > 1 && (a->mode != RK_BENCH_BW || a->threads > a->qps)) {
		snprintf(why, why_len, "option --threads: %s",
			 a->mode != RK_BENCH_BW ? "threads are for bandwidth (--mode bw)" :
						  "each thread needs a QP of its own: raise --qps");
		return -EINVAL;
	}
	if (a->sizes) {
		n = rk_bench_sizes_parse(a->sizes, sizes, why, why_len);
		if (n < 0)
			return n;
	} else {
		sizes[0] = atomic ? 8 : a->mode == RK_BENCH_LAT ? 2 : 65536;
	}
	for (int i = 0; i < n; i++) {
		if (atomic && sizes[i] != 8) {
			snprintf(why, why_len, "option --size: atomics work on 8 bytes (got %u)",
				 sizes[i]);
			return -EINVAL;
		}
	}
	*nsizes_p = n;
	return 0;
}

/* --interval and --duration 0, beyond their ranges. */
static int ask_soak(const struct rk_bench_ask *a, int nsizes, char *why, size_t why_len)
{
	const char *w = NULL;

	if (a->server && a->interval_s > 0)
		w = "option --interval: the client measures and prints the intervals; give it to "
		    "the client";
	else if (a->server)
		return 0;
	else if (a->interval_s > 0 && a->duration_s < 0)
		w = "option --interval: needs --duration SEC (0: until stopped); a run of --count "
		    "has no intervals";
	else if (a->duration_s == 0 && nsizes > 1)
		w = "--duration 0 runs one size until stopped: give one size";
	else if (a->duration_s == 0 && a->bidir)
		w = "--duration 0 is not for --bidir (the server's direction ends by the duration)";
	if (w) {
		snprintf(why, why_len, "%s", w);
		return -EINVAL;
	}
	if (a->interval_s > 0 && a->duration_s > 0 && a->interval_s > (double)a->duration_s) {
		snprintf(why, why_len, "option --interval: %g s is longer than --duration %" PRId64
			 " s", a->interval_s, a->duration_s);
		return -EINVAL;
	}
	return 0;
}

int rk_bench_ask_check(const struct rk_bench_ask *a, uint32_t *sizes, int *nsizes_p,
		       uint64_t *iters_p, char *why, size_t why_len)
{
	uint64_t iters = a->iters;
	int n = 0, ret;

	ret = ask_run(a, sizes, &n, why, why_len);
	if (ret)
		return ret;
	if (!a->server && !iters && a->duration_s < 0)
		iters = a->mode == RK_BENCH_LAT ? 1000 : 5000;
	ret = ask_soak(a, n, why, why_len);
	if (ret)
		return ret;
	*nsizes_p = n;
	*iters_p = iters;
	return 0;
}

/* Beyond the run itself: the buffer's on-demand paging and the thresholds. */
static int ask_extras(const struct rk_bench_ask *a, char *why, size_t why_len)
{
	const struct rk_gates *g = a->gates;
	const char *w = NULL;

	if (a->odp && a->transport != RK_RC)
		w = "option --odp: for --transport rc only";
	else if (!g || !rk_gates_any(g))
		return 0;
	else if (a->server)
		w = "the client grades what it measured: give --expect-bw, --min-link-pct and "
		    "--max-lat-p99 to the client";
	else if (a->mode != RK_BENCH_BW && (g->min_bw > 0 || g->min_link_pct > 0))
		w = "--expect-bw and --min-link-pct grade bandwidth (--mode bw)";
	else if (a->mode != RK_BENCH_LAT && g->max_lat_p99_us > 0)
		w = "--max-lat-p99 grades latency (--mode lat)";
	if (!w)
		return 0;
	snprintf(why, why_len, "%s", w);
	return -EINVAL;
}

int rk_bench_ask_opts(const struct rk_bench_ask *a, struct rk_bench_opts *bo, uint32_t *sizes,
		      int *nsizes_p, char *why, size_t why_len)
{
	uint32_t s[RK_BENCH_MAX_SIZES], max = 0;
	uint64_t iters;
	int n, ret;

	ret = rk_bench_ask_check(a, s, &n, &iters, why, why_len);
	if (!ret)
		ret = ask_extras(a, why, why_len);
	if (ret)
		return ret;
	for (int i = 0; i < n; i++)
		max = s[i] > max ? s[i] : max;
	*bo = (struct rk_bench_opts){
		.test = a->test, .mode = a->mode, .transport = a->transport, .qps = a->qps,
		.threads = a->threads, .bidir = a->bidir, .max_size = max,
		/* the plan: the client announces it, a server checks what it was given */
		.plan = {.test = a->test, .mode = a->mode, .transport = a->transport,
			 .qps = a->qps, .threads = a->threads, .bidir = a->bidir, .iters = iters,
			 .duration_ms = a->duration_s == 0 ? RK_BENCH_UNTIL_STOPPED :
					a->duration_s > 0 ? (uint32_t)a->duration_s * 1000 : 0},
		.expect = a->server ? a->given : 0,
		.interval_ms = (uint32_t)(a->interval_s * 1000.0 + 0.5),
	};
	rk_bench_plan_sizes(&bo->plan, s, (uint32_t)n);
	memcpy(sizes, s, sizeof(s[0]) * (size_t)n);
	*nsizes_p = n;
	return 0;
}

void rk_bench_gate_figures(const struct rk_bench_info *in, const struct rk_bench_result *r,
			   struct rk_gate_figures *f)
{
	*f = (struct rk_gate_figures){
		.has_bw = in->mode == RK_BENCH_BW,
		.bw = r->bw_avg,
		.has_lat = in->mode == RK_BENCH_LAT && r->initiator,
		.lat_p99_us = r->lat.p99,
		.link_gbps = in->link.meaningful ? in->link.gbps : 0,
		.link_note = in->link.note,
	};
}
