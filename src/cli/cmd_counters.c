/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit counters: a port's counters (sysfs counters/ and hw_counters/, what
 * `rdma statistic` shows), once or, with --watch, their changes per interval
 * until SIGINT or SIGTERM. The engine is rk_counters_*; this file prints. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"
#include "cli_report.h"
#include "cli_serve.h"

struct counters_opts {
	struct cli_dev_opts dev;
	bool json;
	uint64_t watch_ms; /* --watch SEC in milliseconds; 0: print once */
	uint64_t count; /* intervals under --watch; 0: until stopped */
	bool hinted[RK_TROUBLE_COUNT]; /* --watch text: each trouble's hint once */
};

static const char usage_text[] =
	"rdmakit counters [-d DEV] [-i PORT] [--json] [--watch SEC [-n N]]";
static const char description[] =
	"Show a port's counters: the InfiniBand port counters (sysfs ports/N/counters)\n"
	"and the driver's hw_counters (what `rdma statistic` shows; rxe: rdma_sends,\n"
	"retry_exceeded_err, ...). --watch SEC prints the counters that changed in each\n"
	"interval, until Ctrl-C (SIGINT) or SIGTERM ends it (exit 0) or N intervals are done.\n"
	"An interval whose counters show trouble the transport recovered from\n"
	"(retransmissions, RNR NAKs, packets out of sequence, packets not sent,\n"
	"congestion) gets a note naming it, with what to look at the first time.\n"
	"With --json, one document, or under --watch one JSON object per line.";

static const char *no_counters_note(const struct rk_counters *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s port %u exposes no counters (no ports/%u/counters or "
			   "ports/%u/hw_counters in sysfs)", s->device, s->port, s->port, s->port);
	return buf;
}

static json_object *snapshot_json(const struct rk_counters *s)
{
	json_object *doc = json_object_new_object(), *groups = json_object_new_object();
	char note[160];

	cli_add_str(doc, "device", s->device);
	cli_add_int(doc, "port", s->port);
	for (int g = 0; g < RK_COUNTER_GROUPS; g++) {
		json_object *grp;

		if (!(s->groups & (1u << g)))
			continue;
		grp = json_object_new_object();
		for (int i = 0; i < s->n; i++)
			if (s->v[i].group == (enum rk_counter_group)g)
				cli_add_int(grp, s->v[i].name, (int64_t)s->v[i].value);
		json_object_object_add(groups, rk_counter_group_str((enum rk_counter_group)g), grp);
	}
	json_object_object_add(doc, "groups", groups);
	cli_add_int(doc, "skipped", s->skipped);
	json_object_object_add(doc, "note", s->groups ? NULL :
				json_object_new_string(no_counters_note(s, note, sizeof(note))));
	return doc;
}

static void snapshot_text(const struct rk_counters *s)
{
	char note[160];

	if (!s->groups) {
		printf("%s\n", no_counters_note(s, note, sizeof(note)));
		return;
	}
	printf("%s port %u\n", s->device, s->port);
	for (int g = 0; g < RK_COUNTER_GROUPS; g++) {
		int shown = 0;

		if (!(s->groups & (1u << g)))
			continue;
		printf("  %s\n", rk_counter_group_str((enum rk_counter_group)g));
		for (int i = 0; i < s->n; i++)
			if (s->v[i].group == (enum rk_counter_group)g) {
				printf("    %-32s %" PRIu64 "\n", s->v[i].name, s->v[i].value);
				shown++;
			}
		if (!shown)
			printf("    (none readable)\n");
	}
	if (s->skipped)
		printf("  (%d file%s left out: unreadable or not a number; RDMAKIT_LOG=debug "
		       "names them)\n", s->skipped, s->skipped == 1 ? "" : "s");
}

/* One interval's changes: a text line and its trouble notes, or one JSON
 * object on one line. */
static void on_interval(uint64_t i, const struct rk_counters_delta *d, void *arg)
{
	struct counters_opts *o = arg;
	double sec = (double)d->interval_ns / 1e9;

	if (o->json) {
		json_object *line = json_object_new_object(), *groups = json_object_new_object();

		cli_add_int(line, "interval", (int64_t)i);
		cli_add_seconds(line, "seconds", sec);
		for (int k = 0; k < d->n; k++)
			cli_add_grouped(groups, d->v[k].group, d->v[k].name, d->v[k].delta);
		json_object_object_add(line, "deltas", groups);
		json_object_object_add(line, "troubles", cli_troubles_json(d));
		cli_json_line(line);
	} else {
		printf("interval %" PRIu64 "  %.2f s ", i, sec);
		for (int k = 0; k < d->n; k++)
			printf("%s %s %+" PRId64, k ? "," : "", d->v[k].name, d->v[k].delta);
		printf("%s\n", d->n ? "" : " no change");
		cli_troubles_text(d, "  ", o->hinted);
	}
	fflush(stdout);
}

static void watch_end_print(const struct counters_opts *o, uint64_t done)
{
	const char *why = cli_stop_signal ? cli_stop_name() : "count";

	if (o->json) {
		json_object *line = json_object_new_object();

		cli_add_str(line, "end", why);
		cli_add_int(line, "intervals", (int64_t)done);
		cli_json_print(line); /* the outcome, on a line after the intervals' */
	} else if (cli_stop_signal) {
		printf("stopped by %s after %" PRIu64 " interval%s\n", why, done,
		       done == 1 ? "" : "s");
	} else {
		printf("done: %" PRIu64 " interval%s\n", done, done == 1 ? "" : "s");
	}
	fflush(stdout);
}

/* Print the changes every --watch interval until --count or a stop signal
 * (rk_counters_watch()). Returns the exit code. */
static int watch(struct counters_opts *o, const struct rk_device *dev,
		 const struct rk_counters *first)
{
	const struct rk_counters_watch_opts wo = {
		.port_num = first->port, .interval_ms = (uint32_t)o->watch_ms,
		.count = o->count, .on_interval = on_interval, .arg = o,
	};
	uint64_t done;
	int ret;

	if (!o->json)
		printf("watching %s port %u every %g s (Ctrl-C stops)\n", first->device,
		       first->port, (double)o->watch_ms / 1000.0);
	fflush(stdout);
	cli_stop_signals(true);
	cli_json_lines = o->json;
	ret = rk_counters_watch(dev, &wo, &done);
	if (!ret)
		watch_end_print(o, done);
	cli_stop_signals(false);
	if (ret)
		fprintf(stderr, "rdmakit counters: reading the counters failed after %" PRIu64
				" interval%s: %s\n", done, done == 1 ? "" : "s", rk_strerror(ret));
	return ret ? cli_fail(ret) : CLI_OK;
}

int cmd_counters(int argc, char **argv)
{
	struct counters_opts o = {.dev = CLI_DEV_OPTS_DEFAULT};
	const struct cli_opt opts[] = {
		CLI_DEV_PORT_OPTS(&o.dev),
		{"json", 'j', CLI_OPT_FLAG, &o.json, 0, 0, NULL,
		 "print one JSON document (under --watch: one object per line)"},
		{"watch", 0, CLI_OPT_SECONDS, &o.watch_ms, 100, 86400000, "SEC",
		 "print the changes every SEC seconds (fractions allowed: 0.5) until SIGINT or "
		 "SIGTERM",
		 .def = "none: print once"},
		{"count", 'n', CLI_OPT_COUNT, &o.count, 1, 1000000000, "N",
		 "with --watch: stop after N intervals", .def = "none: until stopped"},
		CLI_OPT_END,
	};
	struct rk_counters *snap;
	struct rk_device *dev;
	char note[160];
	int ret;

	ret = cli_parse_noargs("counters", usage_text, description, opts, argc, argv);
	if (ret >= 0)
		return ret;
	if (o.count && !o.watch_ms) {
		fprintf(stderr, "rdmakit counters: --count counts --watch intervals: give --watch "
				"SEC too\n");
		return CLI_USAGE;
	}
	ret = rk_device_open(o.dev.device, &dev);
	if (ret)
		return cli_fail(ret);
	ret = rk_counters_read(dev, (uint8_t)o.dev.port, &snap);
	if (ret) {
		rk_device_close(dev);
		return cli_fail(ret);
	}
	if (o.watch_ms && !snap->groups) {
		/* Nothing will ever change: say so once instead of printing empty intervals. */
		if (o.json)
			cli_json_print(snapshot_json(snap));
		else
			printf("%s: nothing to watch\n", no_counters_note(snap, note, sizeof(note)));
		rk_counters_free(snap);
	} else if (o.watch_ms) {
		ret = watch(&o, dev, snap);
		rk_counters_free(snap);
	} else {
		if (o.json)
			cli_json_print(snapshot_json(snap));
		else
			snapshot_text(snap);
		rk_counters_free(snap);
	}
	rk_device_close(dev);
	return ret;
}
