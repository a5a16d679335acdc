/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit blk: attach, detach and list rkblk disks (the kernel module), the
 * way nvme-cli does for /dev/nvme-fabrics. The work is rk_blk_*(). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"

static const char blk_usage[] =
	"rdmakit blk attach HOST [-p PORT] --size SIZE [--queues N]\n"
	"                        [--queue-depth N] [--reconnect-delay S]\n"
	"                        [--loss-timeout S] [--tclass N | --dscp N] [--json]\n"
	"       rdmakit blk detach rkblkN [--json]\n"
	"       rdmakit blk list [--json]";

/* --json: {"result": "ok", "disk": NAME}; a failure's document is main()'s
 * (cli_json.h). */
static void disk_done(bool json, const char *name)
{
	json_object *doc;

	if (!json)
		return;
	doc = json_object_new_object();
	cli_add_str(doc, "disk", name);
	cli_json_print(doc);
}

static int blk_attach(int argc, char **argv)
{
	uint64_t port = RK_MEM_DEFAULT_PORT, size = 0, queues = 0, depth = 0, delay = 0;
	int64_t loss = -1;
	bool json = false;
	struct cli_traffic_opts tc = CLI_TRAFFIC_OPTS_DEFAULT;
	struct rk_traffic t;
	const struct cli_opt opts[] = {
		CLI_PORT_OPT(&port, "the memserver's port"),
		{"size", 's', CLI_OPT_SIZE, &size, 4096, UINT64_MAX, "SIZE",
		 "the disk's size (k, M, G; a multiple of 4096)", .def = "none, required"},
		{"queues", 0, CLI_OPT_COUNT, &queues, 1, RK_MEM_MAX_QUEUES, "N",
		 "RC connections, one blk-mq hardware queue each", .def = "one per online CPU"},
		{"queue-depth", 0, CLI_OPT_COUNT, &depth, 1, RK_BLK_MAX_QUEUE_DEPTH, "N",
		 "requests in flight per queue", .def = "the module's, 128"},
		{"reconnect-delay", 0, CLI_OPT_COUNT, &delay, 1, RK_BLK_MAX_RECONNECT_DELAY, "S",
		 "seconds between reconnection attempts", .def = "the module's, 2"},
		{"loss-timeout", 0, CLI_OPT_INT, &loss, 0, RK_BLK_MAX_LOSS_TIMEOUT, "S",
		 "seconds without the server before I/O fails", .def = "the module's, 60"},
		CLI_TCLASS_OPTS(&tc, CLI_TCLASS_CM_ONLY),
		CLI_JSON_OPT(&json),
		CLI_OPT_END,
	};
	struct rk_blk_attach_opts o;
	char name[32], msg[RK_BLK_ANSWER_MAX];
	int first, ret;

	ret = cli_parse("blk attach", blk_usage,
			"Attach a disk of --size bytes served by the memserver at HOST.", opts,
			argc, argv, &first);
	if (ret >= 0)
		return ret;
	if (first != argc - 1) {
		fprintf(stderr, "rdmakit blk attach: give the memserver's address (HOST)\n");
		return CLI_USAGE;
	}
	if (!size) {
		fprintf(stderr, "rdmakit blk attach: option --size is required\n");
		return CLI_USAGE;
	}
	if (cli_traffic("blk attach", &tc, &t) != CLI_OK)
		return CLI_USAGE;
	rk_blk_attach_defaults(&o);
	o.host = argv[first];
	o.port = (uint16_t)port;
	o.size = size;
	o.queues = (unsigned int)queues;
	o.queue_depth = (unsigned int)depth;
	o.reconnect_delay = (unsigned int)delay;
	o.loss_timeout = (int)loss;
	o.tos = t.has_tclass ? t.tclass : -1;
	ret = rk_blk_attach(NULL, &o, name, sizeof(name), msg, sizeof(msg));
	if (ret == -EINVAL && strncmp(msg, "error:", 6)) {
		fprintf(stderr, "rdmakit blk attach: %s\n", msg);
		return CLI_USAGE;
	}
	if (ret) {
		fprintf(stderr, "rdmakit blk attach: %s\n", msg);
		return cli_fail(ret);
	}
	if (json)
		disk_done(json, name);
	else
		printf("%s\n", name);
	return CLI_OK;
}

static int blk_detach(int argc, char **argv)
{
	bool json = false;
	const struct cli_opt opts[] = {CLI_JSON_OPT(&json), CLI_OPT_END};
	char msg[RK_BLK_ANSWER_MAX];
	int first, ret;

	ret = cli_parse("blk detach", blk_usage, "Detach an rkblk disk (it must not be open).",
			opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	if (first != argc - 1) {
		fprintf(stderr, "rdmakit blk detach: give one disk name (rkblkN)\n");
		return CLI_USAGE;
	}
	ret = rk_blk_detach(NULL, argv[first], msg, sizeof(msg));
	if (ret) {
		fprintf(stderr, "rdmakit blk detach: %s\n", msg);
		return ret == -EINVAL && strncmp(msg, "error:", 6) ? CLI_USAGE : cli_fail(ret);
	}
	disk_done(json, argv[first]);
	return CLI_OK;
}

static json_object *disk_json(const struct rk_blk_disk *d)
{
	json_object *j = json_object_new_object();

	cli_add_str(j, "name", d->name);
	cli_add_str(j, "state", d->state);
	cli_add_str(j, "server", d->server);
	cli_add_str(j, "session", d->session);
	cli_add_int(j, "size", (int64_t)d->size);
	cli_add_int(j, "queues", (int64_t)d->queues);
	cli_add_int(j, "queue_depth", (int64_t)d->queue_depth);
	cli_add_int(j, "inflight", (int64_t)d->inflight);
	cli_add_int(j, "errors", (int64_t)d->errors);
	cli_add_int(j, "reconnects", (int64_t)d->reconnects);
	cli_add_int(j, "reconnect_delay", (int64_t)d->reconnect_delay);
	cli_add_int(j, "loss_timeout", (int64_t)d->loss_timeout);
	/* null, as tclass: no path MTU (iWARP, or not yet connected) */
	json_object_object_add(j, "path_mtu", d->path_mtu ?
			       json_object_new_int64((int64_t)d->path_mtu) : NULL);
	json_object_object_add(j, "tclass", d->tos >= 0 ? json_object_new_int64(d->tos) : NULL);
	if (d->missing[0])
		cli_add_str(j, "unreadable", d->missing);
	return j;
}

static int blk_list(int argc, char **argv)
{
	bool json = false;
	const struct cli_opt opts[] = {
		{"json", 'j', CLI_OPT_FLAG, &json, 0, 0, NULL, "as JSON"},
		CLI_OPT_END,
	};
	struct rk_blk_disk *disks;
	int first, n, ret;

	ret = cli_parse("blk list", blk_usage, "List the rkblk disks and their state.", opts, argc,
			argv, &first);
	if (ret >= 0)
		return ret;
	if (first != argc) {
		fprintf(stderr, "rdmakit blk list: takes no argument ('%s')\n", argv[first]);
		return CLI_USAGE;
	}
	ret = rk_blk_list(NULL, &disks, &n);
	if (ret)
		return cli_fail(ret);
	if (json) {
		json_object *doc = json_object_new_object(), *a = json_object_new_array();

		for (int i = 0; i < n; i++)
			json_object_array_add(a, disk_json(&disks[i]));
		json_object_object_add(doc, "disks", a);
		cli_json_print(doc);
	} else {
		if (!n)
			printf("no rkblk disks\n");
		for (int i = 0; i < n; i++) {
			const struct rk_blk_disk *d = &disks[i];

			printf("%s  %s  server %s  session %s  size %" PRIu64 "  queues %" PRIu64
			       "x%" PRIu64 "  inflight %" PRIu64 "  errors %" PRIu64
			       "  reconnects %" PRIu64, d->name, d->state, d->server,
			       d->session, d->size, d->queues, d->queue_depth, d->inflight,
			       d->errors, d->reconnects);
			if (d->path_mtu)
				printf("  path MTU %" PRIu64, d->path_mtu);
			if (d->tos >= 0)
				printf("  tclass %" PRId64 " (DSCP %" PRId64 ")", d->tos, d->tos >> 2);
			printf("%s%s\n", d->missing[0] ? "  unreadable: " : "", d->missing);
		}
	}
	free(disks);
	return CLI_OK;
}

int cmd_blk(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc < 2 ? stderr : stdout, "usage: %s\n\nAttach, detach and list rkblk "
			"disks (kernel/rkblk.ko) served by\nrdmakit memserver.\n'rdmakit blk "
			"SUBCOMMAND --help' lists a subcommand's options.\n", blk_usage);
		return argc < 2 ? CLI_USAGE : CLI_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return cli_version();
	if (!strcmp(argv[1], "attach"))
		return blk_attach(argc - 1, argv + 1);
	if (!strcmp(argv[1], "detach"))
		return blk_detach(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return blk_list(argc - 1, argv + 1);
	fprintf(stderr, "rdmakit blk: unknown subcommand '%s' (attach, detach or list)\n",
		argv[1]);
	return CLI_USAGE;
}
