/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit share: several processes on one RDMA device, three ways.
 *
 *   import  an owner passes its context's command fd, PD and MR handles over a
 *           Unix socket; each user imports them, does RDMA, unimports.
 *   shm     one memfd mapped by every worker, each with its own context, PD
 *           and MR over the same bytes; a peer process writes through one
 *           worker's MR and all see it; all workers do RDMA on it at once.
 *   fork    ibv_fork_init() first; parent and children each create their own
 *           resources after fork() and do RDMA with each other; and what
 *           ibv_fork_init() says when memory was registered before it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"

static const char usage_text[] =
	"rdmakit share import|shm|fork [-d DEV] [-g IDX] [-P N] [-s SIZE] [--json]";
static const char description[] =
	"Several processes on one RDMA device.\n"
	"  import  the owner passes its context's command fd with PD and MR handles over a Unix\n"
	"          socket (SCM_RIGHTS); N user processes import them (ibv_import_device/pd/mr),\n"
	"          RDMA-READ and -WRITE the owner's MR, and unimport; the owner checks the bytes.\n"
	"          Providers without import (rxe, all but mlx5 today) answer EOPNOTSUPP.\n"
	"  shm     one memfd mapped by N workers, each with its own context, PD and MR over the\n"
	"          same bytes; a peer process RDMA-WRITEs through worker 0's MR and every worker\n"
	"          sees the bytes; then all workers WRITE and READ at once while the peer writes\n"
	"          into each worker's MR; every byte checked by every worker.\n"
	"  fork    ibv_fork_init() before any registration; N children and the parent each open\n"
	"          the device after fork() and do RDMA with each other, checked; and what\n"
	"          ibv_fork_init() returns in a process that registered memory before calling it.";

/* Text as it happens: the way's facts, then every step. */
static void on_progress(enum rk_share_stage stage, const struct rk_share_result *res, void *arg)
{
	const struct rk_share_import_info *im = &res->import;
	char tag[24] = "";

	(void)arg;
	if (stage == RK_SHARE_STEP) {
		const struct rk_share_step *s = &res->steps[res->nsteps - 1];

		if (s->process >= 0)
			snprintf(tag, sizeof(tag), " [%d]", s->process);
		printf("%-8s%-5s %s: %s\n", s->name, tag, s->ok ? "ok" : "FAILED", s->detail);
	} else if (res->way == RK_SHARE_SHM) {
		printf("shm: one memfd of %zu bytes; %u workers each map it and register it with "
		       "their own context, PD and MR; the peer is the parent process\n",
		       res->shared_bytes, res->procs);
	} else if (res->way == RK_SHARE_FORK) {
		printf("fork: %u children and the parent each open the device after fork() and "
		       "do RDMA with each other\n",
		       res->procs);
	} else {
		printf("import: the owner (pid %d) has %s's context (command fd %d), PD handle %u, "
		       "MR handle %u at %p (%" PRIu64 " bytes); %u users import them\n",
		       im->owner_pid, im->device, im->cmd_fd, im->pd_handle, im->mr_handle,
		       (void *)(uintptr_t)im->mr_addr, im->mr_len, res->procs);
	}
	fflush(stdout);
}

static json_object *fork_json(const struct rk_share_fork_info *f)
{
	json_object *j = json_object_new_object();

	cli_add_int(j, "fork_init_ret", f->init_ret);
	cli_add_str(j, "status", rk_fork_status_str(f->status));
	cli_add_int(j, "late_fork_init_ret", f->late_ret);
	cli_add_str(j, "late_status", rk_fork_status_str(f->late_status));
	json_object_object_add(j, "rdmav_fork_safe",
			       f->has_fork_safe ? json_object_new_string(f->fork_safe) : NULL);
	cli_add_bool(j, "late_as_documented", f->late_as_documented);
	return j;
}

static void report_json(const struct rk_share_result *res, int ret)
{
	json_object *doc = json_object_new_object(), *steps = json_object_new_array();

	cli_add_str(doc, "way", rk_share_way_str(res->way));
	cli_add_int(doc, "procs", res->procs);
	cli_add_int(doc, "size", (int64_t)res->size);
	if (res->way == RK_SHARE_SHM)
		cli_add_int(doc, "shared_bytes", (int64_t)res->shared_bytes);
	if (res->way == RK_SHARE_FORK)
		json_object_object_add(doc, "fork", fork_json(&res->fork));
	if (res->way == RK_SHARE_IMPORT) {
		json_object *imp = json_object_new_object();

		if (res->import.device[0]) /* the owner was set up: import was tried */
			cli_add_bool(imp, "supported", res->import.supported);
		if (ret == -EOPNOTSUPP)
			cli_add_str(imp, "error", "EOPNOTSUPP");
		json_object_object_add(doc, "import", imp);
	}
	for (int i = 0; i < res->nsteps; i++) {
		const struct rk_share_step *s = &res->steps[i];
		json_object *j = json_object_new_object();

		cli_add_str(j, "step", s->name);
		if (s->process >= 0)
			cli_add_int(j, "process", s->process);
		cli_add_bool(j, "ok", s->ok);
		cli_add_str(j, "detail", s->detail);
		json_object_array_add(steps, j);
	}
	json_object_object_add(doc, "steps", steps);
	cli_add_str(doc, "result", ret ? "failed" : "ok");
	cli_json_print(doc);
}

/* The way, the only positional argument. Returns -1 to go on, else the exit code. */
static int parse_way(int argc, char **argv, int first, enum rk_share_way *way_p)
{
	if (first >= argc) {
		fprintf(stderr, "rdmakit share: which way? import, shm or fork (see --help)\n");
		return CLI_USAGE;
	}
	if (rk_share_way_parse(argv[first], way_p)) {
		fprintf(stderr, "rdmakit share: unknown way '%s': import, shm or fork\n",
			argv[first]);
		return CLI_USAGE;
	}
	if (first + 1 < argc) {
		fprintf(stderr, "rdmakit share: unexpected argument '%s'\n", argv[first + 1]);
		return CLI_USAGE;
	}
	return -1;
}

int cmd_share(int argc, char **argv)
{
	struct cli_dev_opts dev = CLI_DEV_OPTS_DEFAULT;
	uint64_t procs = 2, size = 4096;
	bool json = false;
	const struct cli_opt opts[] = {
		CLI_DEV_OPTS(&dev),
		{"procs", 'P', CLI_OPT_COUNT, &procs, 1, RK_SHARE_MAX_PROCS, "N",
		 "worker, child or user processes"},
		{"size", 's', CLI_OPT_SIZE, &size, RK_SHARE_MIN_SIZE, RK_SHARE_MAX_SIZE, "BYTES",
		 "bytes per RDMA operation (4k, 1M ...)"},
		CLI_JSON_OPT(&json),
		CLI_OPT_GONE_ROW("", 'p', "-p is now -P/--procs (-p is --port elsewhere)"),
		CLI_OPT_END,
	};
	struct rk_share_opts o = {0};
	struct rk_share_result *res;
	int first, ret;

	ret = cli_parse("share", usage_text, description, opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	ret = parse_way(argc, argv, first, &o.way);
	if (ret >= 0)
		return ret;
	o.device = dev.device;
	o.port_num = (uint8_t)dev.port;
	o.gid_index = (int)dev.gid_index;
	o.procs = (unsigned int)procs;
	o.size = (size_t)size;
	o.progress = json ? NULL : on_progress;
	res = malloc(sizeof(*res));
	if (!res) {
		fprintf(stderr, "rdmakit share: out of memory\n");
		return cli_fail(-ENOMEM);
	}
	ret = rk_share_run(&o, res);
	if (json)
		report_json(res, ret);
	else if (ret)
		printf("share %s: FAILED (%s)\n", rk_share_way_str(o.way), rk_strerror(ret));
	else
		printf("share %s: %u processes, every byte checked: OK\n", rk_share_way_str(o.way),
		       o.procs);
	free(res);
	return ret ? cli_fail(ret) : CLI_OK;
}
