/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the subcommand table. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"

/* One option table of a command that has several: the words that select
 * it ("attach", "--proto=rping"), and the program whose letters it speaks
 * (NULL: rdmakit's own; such a table is left out of the one-letter-one-
 * meaning rule, its letters are that program's). */
struct variant {
	const char *args;
	const char *speaks;
};

struct command {
	const char *name;
	cli_cmd_fn *run;
	const char *summary;
	const struct variant *variants; /* NULL: one table */
};

static const struct variant ping_variants[] = {
	{"--proto=native", NULL}, {"--proto=rping", "rping"},
	{"--proto=pingpong", "ibv_rc_pingpong"}, {NULL, NULL},
};
static const struct variant blk_variants[] = {
	{"attach", NULL}, {"detach", NULL}, {"list", NULL}, {NULL, NULL},
};

static const struct command commands[] = {
	{"devices", cmd_devices, "devices, ports, GID tables (type and IP), device memory, caps"},
	{"doctor", cmd_doctor, "why RDMA does not work here: each check PASS/WARN/FAIL and its fix"},
	{"counters", cmd_counters, "a port's counters and hw_counters; --watch shows deltas"},
	{"loopback", cmd_loopback, "two RC QPs on one device: SEND, WRITE and READ, checked"},
	{"rc", cmd_rc, "RC client/server over TCP exchange or RDMA CM: every operation"},
	{"bench", cmd_bench, "bandwidth, message rate and latency, like perftest; data checked"},
	{"ping", cmd_ping, "RC ping-pong with RTT stats; speaks rping and ibv_*_pingpong too",
	 ping_variants},
	{"ud", cmd_ud, "UD datagrams to one server QP, TCP exchange or RDMA CM (as udaddy)"},
	{"qp-states", cmd_qp_states, "what a QP does in each state (RESET .. ERR), seen on the device"},
	{"share", cmd_share, "several processes on one device: import, shared memory, fork"},
	{"blk", cmd_blk, "attach, detach and list rkblk disks (the kernel module)", blk_variants},
	{"mesh", cmd_mesh, "check every pair of N nodes over MPI (rdmakit-mesh; mpirun -np N)"},
	{"memserver", cmd_memserver, "remote memory for the rkblk module: one region per session"},
};

static const char description[] = "RDMA toolkit over libibverbs and librdmacm.";

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* RDMAKIT_HELP_FORMAT=tsv (cli_opts.h): the commands as records for the man
 * pages and the completion: "command NAME SUMMARY", then per table of a
 * command with several "variant NAME ARGS SPEAKS". */
static void usage_tsv(FILE *out)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const struct variant *v = commands[i].variants;

		fprintf(out, "command\t%s\t%s\n", commands[i].name, commands[i].summary);
		for (; v && v->args; v++)
			fprintf(out, "variant\t%s\t%s\t%s\n", commands[i].name, v->args,
				v->speaks ? v->speaks : "");
	}
}

static void usage(FILE *out)
{
	if (cli_opts_help_tsv()) {
		fprintf(out, "description\t%s\n", description);
		usage_tsv(out);
		return;
	}
	fprintf(out, "usage: rdmakit COMMAND [OPTIONS]\n\n%s\n\ncommands:\n", description);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'rdmakit COMMAND --help' (or 'rdmakit help COMMAND') describes a "
		     "command's\noptions; --version prints the version.\nRDMAKIT_LOG=error|warn|"
		     "info|debug sets how much the library logs.\n");
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	fprintf(stderr, "rdmakit: unknown command '%s' (see rdmakit --help)\n", name);
	return NULL;
}

/* "rdmakit help CMD [WORDS]": "rdmakit CMD [WORDS] --help" (git's habit; a
 * table chosen by words, "help blk attach", "help ping --proto rping"). */
static int help_command(int argc, char **argv)
{
	const struct command *c = find_command(argv[0]);
	char *args[8];
	int n = 0;

	if (!c)
		return CLI_USAGE;
	if (argc > 6) {
		fprintf(stderr, "rdmakit help: '%s' is one command and the words of a table\n",
			argv[0]);
		return CLI_USAGE;
	}
	for (int i = 0; i < argc; i++)
		args[n++] = argv[i];
	args[n++] = "--help";
	args[n] = NULL;
	return c->run(n, args);
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "help") && argc > 2)
		return help_command(argc - 2, argv + 2);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return cli_version();
	cli_json_init();
	c = find_command(argv[1]);
	return c ? cli_json_finish(c->run(argc - 1, argv + 1)) : CLI_USAGE;
}
