/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit blk: attach, detach and list rkblk disks (the kernel module), the
 * way nvme-cli does for /dev/nvme-fabrics. The work is rk_blk_*(). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_blkconf.h"
#include "cli_cmdline.h"
#include "cli_json.h"

static const char blk_usage[] =
	"rdmakit blk attach HOST [-p PORT] --size SIZE [--queues N]\n"
	"                        [--queue-depth N] [--reconnect-delay S]\n"
	"                        [--loss-timeout S] [--tclass N | --dscp N] [--json]\n"
	"       rdmakit blk attach --all [--config FILE] [--json]\n"
	"       rdmakit blk detach rkblkN [--json]\n"
	"       rdmakit blk detach --all [--config FILE] [--json]\n"
	"       rdmakit blk list [--json]";

/* --all and --config FILE of attach and detach. */
#define CLI_BLK_ALL_OPTS(all, conf, help)                                                        \
	{"all", 0, CLI_OPT_FLAG, (all), 0, 0, NULL, (help)},                                     \
	{"config", 0, CLI_OPT_STRING, (conf), 0, 0, "FILE",                                      \
	 "with --all: the disks, one a line (HOST PORT SIZE QUEUES [OPTION=VALUE ...])"}

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

/* The disk of conf line d among the attached ones: same server and size,
 * not taken by an earlier line (two lines may name equal disks). */
static int conf_match(const struct cli_blk_conf_disk *d, const struct rk_blk_disk *disks, int n,
		      bool *taken)
{
	char server[80];

	cli_blk_conf_server(d, server, sizeof(server));
	for (int i = 0; i < n; i++)
		if (!taken[i] && disks[i].size == d->o.size && !strcmp(disks[i].server, server)) {
			taken[i] = true;
			return i;
		}
	return -1;
}

/* attach --all / detach --all: the config file read and every line
 * checked first (a bad line: nothing done, exit 2), then the attached
 * disks matched to its lines. */
static int conf_load(const char *cmd, const char *file, struct cli_blk_conf *conf,
		     struct rk_blk_disk **disks, int *n, bool **taken)
{
	char err[320];
	int ret = cli_blk_conf_read(file, conf, err, sizeof(err));

	if (ret) {
		fprintf(stderr, "rdmakit blk %s: %s\n", cmd, err);
		return ret == -EINVAL ? CLI_USAGE : cli_fail(ret);
	}
	ret = rk_blk_list(NULL, disks, n);
	if (ret) {
		cli_blk_conf_free(conf);
		return cli_fail(ret);
	}
	*taken = calloc((size_t)*n + 1, sizeof(**taken));
	if (!*taken) {
		free(*disks);
		cli_blk_conf_free(conf);
		return cli_fail(-ENOMEM);
	}
	return CLI_OK;
}

static json_object *line_json(const char *file, const struct cli_blk_conf_disk *d,
			      const char *disk, const char *what)
{
	json_object *j = json_object_new_object();
	char server[80];

	cli_blk_conf_server(d, server, sizeof(server));
	cli_add_str(j, "file", file);
	cli_add_int(j, "line", d->line);
	cli_add_str(j, "server", server);
	cli_add_int(j, "size", (int64_t)d->o.size);
	json_object_object_add(j, "disk", disk ? json_object_new_string(disk) : NULL);
	cli_add_str(j, "outcome", what);
	return j;
}

/* One line's outcome: a line of text, or an object of the document. */
static void line_done(json_object *a, const char *file, const struct cli_blk_conf_disk *d,
		      const char *disk, const char *what)
{
	if (a)
		json_object_array_add(a, line_json(file, d, disk, what));
	else if (disk)
		printf("%s:%u: %s %s\n", file, d->line, disk, what);
	else
		printf("%s:%u: %s\n", file, d->line, what);
}

static int blk_all(bool attach, const char *file, bool json)
{
	const char *cmd = attach ? "attach" : "detach";
	json_object *a = json ? json_object_new_array() : NULL;
	struct cli_blk_conf conf;
	struct rk_blk_disk *disks;
	bool *taken;
	char name[32], msg[RK_BLK_ANSWER_MAX];
	int n, ret, failed = 0;

	ret = conf_load(cmd, file, &conf, &disks, &n, &taken);
	if (ret != CLI_OK) {
		json_object_put(a);
		return ret;
	}
	for (int i = 0; i < conf.n; i++) {
		const struct cli_blk_conf_disk *d = &conf.disks[i];
		struct rk_blk_attach_opts o = cli_blk_conf_opts(d);
		int k = conf_match(d, disks, n, taken);

		if (attach && k >= 0) {
			line_done(a, file, d, disks[k].name, "already attached");
			continue;
		}
		if (!attach && k < 0) {
			line_done(a, file, d, NULL, "not attached");
			continue;
		}
		if (attach)
			ret = rk_blk_attach(NULL, &o, name, sizeof(name), msg, sizeof(msg));
		else
			ret = rk_blk_detach(NULL, disks[k].name, msg, sizeof(msg));
		if (ret) {
			fprintf(stderr, "rdmakit blk %s: %s:%u: %s\n", cmd, file, d->line, msg);
			line_done(a, file, d, attach ? NULL : disks[k].name, "failed");
			failed = failed ? failed : ret;
			continue;
		}
		line_done(a, file, d, attach ? name : disks[k].name,
			  attach ? "attached" : "detached");
	}
	if (a) {
		json_object *doc = json_object_new_object();

		json_object_object_add(doc, "lines", a);
		cli_json_print(doc);
	}
	free(taken);
	free(disks);
	cli_blk_conf_free(&conf);
	return failed ? cli_fail(failed) : CLI_OK;
}

/* --all: the disks come from the file (*conf), any other option or a
 * positional argument is a mistake; the outcome. -1: no --all (nor --config). */
static int blk_all_given(const char *cmd, bool all, const char **conf, bool json,
			 const struct cli_opt *opts, int first, int argc, char **argv)
{
	if (!all) {
		if (!cli_opts_given(conf))
			return -1;
		fprintf(stderr, "rdmakit blk %s: --config goes with --all\n", cmd);
		return CLI_USAGE;
	}
	for (const struct cli_opt *o = opts; o->name; o++)
		if (o->dest && cli_opts_given(o->dest) && strcmp(o->name, "all") &&
		    strcmp(o->name, "config") && strcmp(o->name, "json")) {
			fprintf(stderr, "rdmakit blk %s: --%s is not taken with --all (the disks "
				"come from the file, see --config)\n", cmd, o->name);
			return CLI_USAGE;
		}
	if (first != argc) {
		fprintf(stderr, "rdmakit blk %s: --all takes no %s ('%s'): the disks come "
			"from the file\n", cmd, strcmp(cmd, "attach") ? "disk name" : "HOST",
			argv[first]);
		return CLI_USAGE;
	}
	return blk_all(!strcmp(cmd, "attach"), *conf, json);
}

static int blk_attach(int argc, char **argv)
{
	uint64_t port = RK_MEM_DEFAULT_PORT, size = 0, queues = 0, depth = 0, delay = 0;
	int64_t loss = -1;
	bool json = false, all = false;
	const char *conf = CLI_BLK_CONF;
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
		CLI_BLK_ALL_OPTS(&all, &conf, "attach every disk of the file, but those attached"),
		CLI_JSON_OPT(&json),
		CLI_OPT_END,
	};
	struct rk_blk_attach_opts o;
	char name[32], msg[RK_BLK_ANSWER_MAX];
	int first, ret;

	ret = cli_parse("blk attach", blk_usage,
			"Attach a disk of --size bytes served by the memserver at HOST, or with "
			"--all the disks of the config file.", opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	ret = blk_all_given("attach", all, &conf, json, opts, first, argc, argv);
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
	bool json = false, all = false;
	const char *conf = CLI_BLK_CONF;
	const struct cli_opt opts[] = {
		CLI_BLK_ALL_OPTS(&all, &conf, "detach the disks of the file's lines"),
		CLI_JSON_OPT(&json),
		CLI_OPT_END,
	};
	char msg[RK_BLK_ANSWER_MAX];
	int first, ret;

	ret = cli_parse("blk detach", blk_usage, "Detach an rkblk disk (it must not be open), or "
			"with --all those of the config file's lines.", opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	ret = blk_all_given("detach", all, &conf, json, opts, first, argc, argv);
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
