/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit CLI: the command line the commands share: the option groups (device,
 * connection, output, memory) and the parse that answers --help and --version
 * and checks the role and HOST. */
#ifndef RDMAKIT_CLI_CMDLINE_H
#define RDMAKIT_CLI_CMDLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include <rdmakit/region.h>
#include <rdmakit/traffic.h>

#include "cli_opts.h"
#include "cli_traffic_opts.h"

/* Device, port and GID options, shared by every command that uses a device. */
struct cli_dev_opts {
	const char *device; /* NULL: the first device */
	uint64_t port;
	int64_t gid_index;  /* -1: choose */
};

#define CLI_DEV_OPTS_DEFAULT {.device = NULL, .port = 1, .gid_index = -1}

/* Device and port only, for commands that address no peer (no GID). */
#define CLI_DEV_PORT_OPTS(o)                                                                     \
	{"device", 'd', CLI_OPT_STRING, &(o)->device, 0, 0, "DEV", "RDMA device",                \
	 .def = "the first one"},                                                                \
		{"ib-port", 'i', CLI_OPT_COUNT, &(o)->port, 1, 255, "PORT", "device port"}

#define CLI_DEV_OPTS(o)                                                                          \
	CLI_DEV_PORT_OPTS(o),                                                                    \
		{"gid-index", 'g', CLI_OPT_INT, &(o)->gid_index, -1, 255, "IDX",                  \
		 "GID index; -1 chooses by itself (RoCE: a RoCE v2 GID on the route; "           \
		 "InfiniBand: 0; iWARP: none, RDMA CM addresses it)"}

/* The connection group, shared by every client/server command (like fabtests'
 * CS_OPTS): the role, the port, TCP exchange or RDMA CM, the two waits, and
 * the traffic group. A command keeps one in its options and points the rows
 * below into it. */
struct cli_conn_opts {
	bool server;
	uint64_t port;
	bool cm;
	uint64_t timeout; /* s: a client keeps trying to connect; both: bound on every wait */
	uint64_t wait;    /* s: a server's wait for a client; 0: forever */
	struct cli_traffic_opts traffic;
};

/* The rows one at a time, for a command whose help says more (flag: bool *,
 * port: uint64_t *). */
#define CLI_SERVER_OPT(flag) {"server", 'S', CLI_OPT_FLAG, (flag), 0, 0, NULL, "be the server"}
#define CLI_PORT_OPT(port, help) {"port", 'p', CLI_OPT_COUNT, (port), 1, 65535, "PORT", (help)}
#define CLI_CM_OPT(flag, help) {"cm", 'c', CLI_OPT_FLAG, (flag), 0, 0, NULL, (help)}

/* --server, --port and --cm as rc, bench and native ping have them, and the
 * traffic group. */
#define CLI_CONN_OPTS(c)                                                                         \
	CLI_SERVER_OPT(&(c)->server), CLI_PORT_OPT(&(c)->port, "TCP or RDMA CM port"),           \
		CLI_CM_OPT(&(c)->cm, "connect with RDMA CM instead of the TCP exchange"),        \
		CLI_TRAFFIC_OPTS(&(c)->traffic, CLI_TCLASS_WITH_CM)

/* --timeout (short letter key, or 0) and --wait. */
#define CLI_WAIT_OPTS(c, key)                                                                    \
	{"timeout", (key), CLI_OPT_COUNT, &(c)->timeout, 1, 3600, "SEC",                         \
	 "client: keep trying to connect this long; both: bound on every wait"},                 \
		{"wait", 'w', CLI_OPT_COUNT, &(c)->wait, 0, 86400, "SEC",                        \
		 "server: give up when no client came in SEC seconds", .def = "0: forever"}

/* The output group: --json, one document on stdout. */
#define CLI_JSON_OPT(flag) CLI_JSON_OPT_KEY(flag, 'j')
/* key 0 for a table that speaks another program's letters (pingpong's -j is
 * its --dm). */
#define CLI_JSON_OPT_KEY(flag, key)                                                              \
	{"json", (key), CLI_OPT_FLAG, (flag), 0, 0, NULL, "print one JSON document"}

/* The memory group of rc, bench and memserver: --mem KIND, --odp (long
 * options only). */
struct cli_mem_opts {
	const char *mem; /* a name of rk_mem_kind_parse() */
	bool odp;
};

/* The kinds --mem offers (cli_mem_parse() checks them): all of them, or
 * all but dm (device memory, which bench and memserver do not take). */
extern const char *const cli_mem_kinds[];
extern const char *const cli_mem_kinds_no_dm[];

#define CLI_MEM_OPTS(o, kinds, help)                                                             \
	{"mem", 0, CLI_OPT_STRING, &(o)->mem, 0, 0, "KIND", (help), .values = (kinds)},          \
		{"odp", 0, CLI_OPT_FLAG, &(o)->odp, 0, 0, NULL,                                  \
		 "register the buffer with on-demand paging (IBV_ACCESS_ON_DEMAND); refused "    \
		 "where the device reports none for the RC ops the run needs"}

/* --mem's name into *kind_p when it is one of the kinds whose bits
 * (1u << RK_MEM_*) are in allow: 0, else -EINVAL after saying why on stderr. */
int cli_mem_parse(const char *cmd, const struct cli_mem_opts *o, unsigned int allow,
		  enum rk_mem_kind *kind_p);

/* "host memory", "huge pages", "memfd memory", "memfd huge pages", "device memory". */
const char *cli_mem_text(enum rk_mem_kind kind);

/* "memory": kind, "memory_chosen_by_auto", "memory_why" (when chosen), "odp". */
void cli_mem_json(json_object *doc, enum rk_mem_kind kind, bool chosen, const char *why,
		  bool odp);

/* -EINVAL, said on stderr, when option was given to a client (!server). */
int cli_server_only(const char *cmd, const char *option, bool given, bool server);

/* A server takes no HOST, a client needs one. Returns -1 when host fits the
 * role, else CLI_USAGE after saying what is wrong. */
int cli_check_role(const char *cmd, bool server, const char *host);

/* A server takes no positional argument; a client exactly one, the server's
 * address ("one HOST only ('b' is extra)" for more). Returns -1 when
 * argv[first..] fits the role, else CLI_USAGE after saying what is wrong. */
int cli_check_role_args(const char *cmd, bool server, int argc, char **argv, int first);

/* cli_parse(), then cli_check_role_args() for the role the options chose
 * (conn is the options' targets), then cli_traffic() into *traffic.
 * *host_p is the server's address for a client, NULL for a server.
 * Returns -1 to continue, or the exit code. */
int cli_parse_role(const char *cmd, const char *usage, const char *description,
		   const struct cli_opt *opts, int argc, char **argv,
		   const struct cli_conn_opts *conn, struct rk_traffic *traffic,
		   const char **host_p);

/* The connection fields that the engines' options share (rk_conn_opts,
 * rk_ping_opts, rk_rcflow_opts, rk_ud_opts), as designated initializers from
 * a command's connection (c) and device (d) groups and the server's address
 * (host_): role, address, port, RDMA CM, device, port, GID index and
 * --timeout. The server's wait for a client is named by each engine. */
#define CLI_CONN_FIELDS(c, d, host_)                                                             \
	.server = (c)->server, .host = (host_), .port = (uint16_t)(c)->port, .cm = (c)->cm,     \
	.device = (d)->device, .port_num = (uint8_t)(d)->port,                                   \
	.gid_index = (int)(d)->gid_index, .timeout_ms = (int)(c)->timeout * 1000

/* --wait SEC as the engines' accept_timeout_ms: -1 (forever) for 0. */
#define CLI_WAIT_MS(c) ((c)->wait ? (int)(c)->wait * 1000 : -1)

/* --version: "rdmakit VERSION" on stdout; CLI_OK. */
int cli_version(void);

/* Parse options; handles --help and --version. Returns -1 to continue, or the exit code. */
int cli_parse(const char *cmd, const char *usage, const char *description,
	      const struct cli_opt *opts, int argc, char **argv, int *first_arg_p);

/* cli_parse() with an epilog, printed after the options by --help. */
int cli_parse_epilog(const char *cmd, const char *usage, const char *description,
		     const char *epilog, const struct cli_opt *opts, int argc, char **argv,
		     int *first_arg_p);

/* cli_parse() for a command that takes no positional argument: one is refused
 * with a message. Returns -1 to continue, or the exit code. */
int cli_parse_noargs(const char *cmd, const char *usage, const char *description,
		     const struct cli_opt *opts, int argc, char **argv);

#endif
