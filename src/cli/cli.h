/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit CLI: what a command is, the exit statuses it returns, and the
 * commands cli_main.c's table runs. */
#ifndef RDMAKIT_CLI_H
#define RDMAKIT_CLI_H

#include <rdmakit/gate.h>

/* Exit codes: 0 success, 1 the run failed, 2 bad usage, 3 the run worked but
 * a threshold was missed or could not be graded (RK_EXIT_GATE, gate.h). */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2, CLI_GATE = RK_EXIT_GATE };

/* The exit statuses, for --help epilogs. */
#define CLI_EXIT_HELP                                                                            \
	"exit status: 0 the run worked (and met every threshold given); 1 the run failed;\n"     \
	"2 bad usage; 3 (RK_EXIT_GATE) the run worked but a threshold was missed or could\n"    \
	"not be graded."

/* A subcommand: argv[0] is its name; returns the exit status. */
typedef int cli_cmd_fn(int argc, char **argv);

/* The subcommands (cmd_mesh execs rdmakit-mesh, next to this binary or in
 * PATH, with the arguments). */
cli_cmd_fn cmd_devices, cmd_counters, cmd_loopback, cmd_mesh, cmd_rc, cmd_bench, cmd_ping,
	cmd_ud, cmd_qp_states, cmd_share, cmd_memserver, cmd_blk, cmd_doctor;

#endif
