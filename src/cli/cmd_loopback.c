/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit loopback: one process, two RC QPs on one device connected to each
 * other; SEND/RECV, RDMA WRITE and RDMA READ, each checked byte for byte
 * (the engine is rk_loopback_run()). */
#include <inttypes.h>
#include <stdio.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"

struct loopback_opts {
	struct cli_dev_opts dev;
	uint64_t size;
	uint64_t count;
	uint64_t sge;
	bool events;
	bool json;
};

/* What the command keeps of a run: the result as far as the engine told. */
struct cli_loopback {
	const struct loopback_opts *o;
	struct rk_loopback_result seen;
};

static const char usage_text[] = "rdmakit loopback [-d DEV] [-g IDX] [-s SIZE] [-n COUNT] "
				 "[--sge N] [--events] [--json]";
static const char description[] =
	"Connect two RC queue pairs on one device to each other and move data between them:\n"
	"SEND/RECV, RDMA WRITE and RDMA READ, COUNT times each, checking every byte.\n"
	"With --sge N each side gathers/scatters its buffer as N pieces.";

static json_object *cli_loopback_json(const struct rk_loopback_result *r, int result)
{
	json_object *doc = json_object_new_object(), *steps = json_object_new_array();

	cli_add_str(doc, "device", r->device);
	cli_add_int(doc, "port", r->port_num);
	if (r->has_gid)
		json_object_object_add(doc, "gid", cli_gid_json(&r->gid));
	if (r->connected) {
		cli_add_int(doc, "qp_a", r->qpn_a);
		cli_add_int(doc, "qp_b", r->qpn_b);
		cli_add_int(doc, "path_mtu", r->path_mtu);
	}
	cli_add_int(doc, "size", (int64_t)r->size);
	cli_add_int(doc, "count", (int64_t)r->count);
	cli_add_int(doc, "sge", (int64_t)r->sge);
	cli_add_bool(doc, "events", r->events);
	for (int s = 0; s < RK_LOOPBACK_STEPS; s++) {
		const struct rk_loopback_step *st = &r->steps[s];
		json_object *j = json_object_new_object();

		cli_add_str(j, "op", st->name);
		cli_add_int(j, "checked", (int64_t)st->checked);
		cli_add_bool(j, "ok", st->checked == r->count);
		cli_add_double(j, "avg_us", rk_loopback_step_avg_us(st));
		if (st->bad_offset >= 0)
			cli_add_int(j, "first_bad_byte", st->bad_offset);
		json_object_array_add(steps, j);
	}
	json_object_object_add(doc, "steps", steps);
	cli_add_str(doc, "result", result ? "failed" : "ok");
	return doc;
}

static void cli_loopback_print_port(const struct rk_loopback_result *r)
{
	char text[64];

	printf("device %s port %u", r->device, r->port_num);
	if (r->has_gid)
		printf(", GID %u %s (%s)\n  %s\n", r->gid.index, rk_gid_type_str(r->gid.type),
		       rk_gid_str(&r->gid.gid, text, sizeof(text)), r->gid.why);
	else if (r->lid)
		printf(", LID %u\n", r->lid);
	else
		printf(", iWARP: the QPs connect through RDMA CM, to the device's own address\n");
}

static void cli_loopback_print_qps(const struct rk_loopback_result *r)
{
	printf("QP A 0x%x <-> QP B 0x%x: RC, RTS, path MTU %d; %" PRIu64 " bytes x %" PRIu64
	       ", %u SGE%s, %s completions\n",
	       r->qpn_a, r->qpn_b, r->path_mtu, r->size, r->count, r->sge, r->sge > 1 ? "s" : "",
	       r->events ? "event-driven" : "polled");
}

static void cli_loopback_print_step(const struct rk_loopback_result *r, int s)
{
	const struct rk_loopback_step *st = &r->steps[s];

	printf("%-6s %s: %" PRIu64 "/%" PRIu64 " checked, every byte matches, %.1f us avg\n",
	       st->name, st->what, st->checked, r->count, rk_loopback_step_avg_us(st));
}

/* The engine's progress: kept for the JSON of a failed run, printed as text. */
static void cli_loopback_event(const struct rk_loopback_result *r, enum rk_loopback_event ev,
			       int step, void *arg)
{
	struct cli_loopback *c = arg;

	if (ev == RK_LOOPBACK_ROUND)
		return;
	c->seen = *r;
	if (c->o->json)
		return;
	if (ev == RK_LOOPBACK_CONNECTED) {
		cli_loopback_print_port(r);
		cli_loopback_print_qps(r);
	} else if (ev == RK_LOOPBACK_STEP && !r->steps[step].status) {
		cli_loopback_print_step(r, step);
	}
}

static int cli_loopback_run(const struct loopback_opts *o)
{
	struct cli_loopback c = {.o = o};
	struct rk_loopback_opts lo = {
		.device = o->dev.device, .port_num = (uint8_t)o->dev.port,
		.gid_index = (int)o->dev.gid_index, .size = o->size, .count = o->count,
		.sge = (uint32_t)o->sge, .events = o->events,
		.on_event = cli_loopback_event, .arg = &c,
	};
	struct rk_loopback_result r;
	int ret;

	ret = rk_loopback_run(&lo, &r);
	if (ret && !c.seen.connected)
		return cli_fail(ret); /* nothing ran: the engine said why on stderr */
	if (o->json)
		cli_json_print(cli_loopback_json(ret ? &c.seen : &r, ret));
	else if (!ret)
		printf("loopback: SEND, WRITE and READ of %" PRIu64 " bytes x %" PRIu64
		       " checked byte for byte: OK\n",
		       o->size, o->count);
	else
		printf("loopback: FAILED (%s)\n", rk_strerror(ret));
	return ret ? cli_fail(ret) : CLI_OK;
}

int cmd_loopback(int argc, char **argv)
{
	struct loopback_opts o = {
		.dev = CLI_DEV_OPTS_DEFAULT, .size = 4096, .count = 1, .sge = 1,
	};
	const struct cli_opt opts[] = {
		CLI_DEV_OPTS(&o.dev),
		{"size", 's', CLI_OPT_SIZE, &o.size, 1, RK_LOOPBACK_MAX_SIZE, "BYTES",
		 "bytes per operation (4k, 1M ...)"},
		{"count", 'n', CLI_OPT_COUNT, &o.count, 1, RK_LOOPBACK_MAX_COUNT, "N",
		 "times to run each operation (10k = 10000)"},
		{"sge", 0, CLI_OPT_COUNT, &o.sge, 1, RK_LOOPBACK_MAX_SGE, "N",
		 "split each buffer into N scatter/gather pieces"},
		{"events", 'e', CLI_OPT_FLAG, &o.events, 0, 0, NULL,
		 "sleep on a completion channel instead of polling"},
		CLI_JSON_OPT(&o.json),
		CLI_OPT_END,
	};
	int ret;

	ret = cli_parse_noargs("loopback", usage_text, description, opts, argc, argv);
	if (ret >= 0)
		return ret;
	if (o.sge > o.size) {
		fprintf(stderr, "rdmakit loopback: option --sge: %" PRIu64
				" pieces do not fit in %" PRIu64 " bytes\n",
			o.sge, o.size);
		return CLI_USAGE;
	}
	return cli_loopback_run(&o);
}
