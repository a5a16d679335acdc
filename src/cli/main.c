/* rdmakit: the subcommand table. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"devices", cmd_devices, "devices, ports, GID tables (type and IP), device memory, caps"},
	{"counters", cmd_counters, "a port's counters and hw_counters; --watch shows deltas"},
	{"loopback", cmd_loopback, "two RC QPs on one device: SEND, WRITE and READ, checked"},
	{"rc", cmd_rc, "RC client/server over TCP exchange or RDMA CM: every operation"},
	{"bench", cmd_bench, "bandwidth, message rate and latency, like perftest; data checked"},
	{"ping", cmd_ping, "RC ping-pong with RTT stats; speaks rping and ibv_*_pingpong too"},
	{"ud", cmd_ud, "UD datagrams to one server QP, TCP exchange or RDMA CM (as udaddy)"},
	{"qp-states", cmd_qp_states, "what a QP does in each state (RESET .. ERR), seen on the device"},
	{"share", cmd_share, "several processes on one device: import, shared memory, fork"},
	{"blk", cmd_blk, "attach, detach and list rkblk disks (the kernel module)"},
	{"mesh", cmd_mesh, "check every pair of N nodes over MPI (runs rdmakit-mesh; mpirun -np N)"},
	{"memserver", cmd_memserver, "remote memory for the rkblk module: one region per session"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: rdmakit COMMAND [OPTIONS]\n\nRDMA toolkit over libibverbs and "
		     "librdmacm.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'rdmakit COMMAND --help' describes a command's options.\n"
		     "RDMAKIT_LOG=error|warn|info|debug sets how much the library logs.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("rdmakit %s\n", rk_version());
		return CLI_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "rdmakit: unknown command '%s' (see rdmakit --help)\n", argv[1]);
	return CLI_USAGE;
}
