/* The client's plan against the server's (bench.h, rk_bench_plan_match()):
 * perftest users give both sides the same options; a server checks the ones
 * it was given and names the first that differs. Pure logic. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/bench.h>

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
