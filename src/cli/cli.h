/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit CLI: what the subcommands share. */
#ifndef RDMAKIT_CLI_H
#define RDMAKIT_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include <rdmakit/rdmakit.h>

#include "cli_opts.h"
#include "cli_traffic_opts.h"

/* Exit codes: 0 success, 1 the run failed, 2 bad usage, 3 the run worked but
 * a threshold was missed or could not be graded (RK_EXIT_GATE, gate.h). */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2, CLI_GATE = RK_EXIT_GATE };

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
		 "GID index; -1 chooses a RoCE v2 GID by itself"}


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
		CLI_TRAFFIC_OPTS(&(c)->traffic)

/* --timeout (short letter key, or 0) and --wait. */
#define CLI_WAIT_OPTS(c, key)                                                                    \
	{"timeout", (key), CLI_OPT_COUNT, &(c)->timeout, 1, 3600, "SEC",                         \
	 "client: keep trying to connect this long; both: bound on every wait"},                 \
		{"wait", 'w', CLI_OPT_COUNT, &(c)->wait, 0, 86400, "SEC",                        \
		 "server: give up when no client came in SEC seconds (0: wait forever)"}

/* The output group: --json, one document on stdout. */
#define CLI_JSON_OPT(flag)                                                                       \
	{"json", 'j', CLI_OPT_FLAG, (flag), 0, 0, NULL, "print one JSON document"}

/* The memory group of rc, bench and memserver: --mem KIND, --odp (long
 * options only). */
struct cli_mem_opts {
	const char *mem; /* a name of rk_mem_kind_parse() */
	bool odp;
};

#define CLI_MEM_OPTS(o, help)                                                                    \
	{"mem", 0, CLI_OPT_STRING, &(o)->mem, 0, 0, "KIND", (help)},                             \
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

/* A chosen GID as JSON: {index, type, gid, why}. */
json_object *cli_gid_json(const struct rk_gid_choice *gid);

/* Add key: value to a JSON object, one call each kind (the string is copied). */
void cli_add_str(json_object *o, const char *key, const char *v);
void cli_add_int(json_object *o, const char *key, int64_t v);
void cli_add_bool(json_object *o, const char *key, bool v);
void cli_add_double(json_object *o, const char *key, double v);

/* "result": "ok" or "failed", and with a failure "error": its rk_strerror()
 * text. */
void cli_add_result(json_object *doc, int err);

/* Print a JSON document on stdout, pretty (on one line when cli_json_lines
 * is set: a server with --persist prints one document per client). Takes
 * ownership. */
void cli_json_print(json_object *doc);
extern bool cli_json_lines;
/* The same on one line always: a record of a stream (--interval, --watch). */
void cli_json_line(json_object *doc);

/* SIGINT and SIGTERM set cli_stop_signal (a second one kills), and the
 * library's waits for a client give up on it (stop.h); off restores them. */
extern volatile sig_atomic_t cli_stop_signal;
void cli_stop_signals(bool on);

/* "SIGINT", "SIGTERM" or "a signal", for the signal that stopped the run. */
const char *cli_stop_name(void);

/* One client served by a --persist server: its exit status, after printing
 * its report; CLI_STOPPED when a stop signal came while it waited for a
 * client (nothing to report). *listened says the server got as far as
 * waiting for a client (a failure before that is the server's own). */
enum { CLI_STOPPED = -100 };
typedef int (*cli_serve_fn)(void *arg, bool *listened);

/* Serve one client after another with serve(arg) until SIGINT or SIGTERM;
 * a client failing or vanishing only counts as failed. At the end a summary
 * (a line "WHO: served N clients (F failed), stopped by SIGINT", or with json
 * one line {"record": "persist", "served", "failed", "stopped_by"}); exit
 * status 0, or the server's own failure's. */
int cli_persist(const char *who, bool json, cli_serve_fn serve, void *arg);

/* Run a command's side: one client served (or a client's run) by
 * serve(arg), --persist one after another (cli_persist()), or, where all is
 * not NULL, all(arg): --clients N at once. Returns the exit status. */
int cli_serve(const char *who, bool json, bool persist, cli_serve_fn serve,
	      int (*all)(void *arg), void *arg);

/* A server's line as it starts to wait: "WHO: waiting for a WHAT on port
 * PORT (RDMA CM|TCP exchange)", or for n clients at once (n > 0) "... for N
 * WHATs ...". */
void cli_waiting_text(const char *who, uint64_t n, const char *what, uint64_t port, bool cm);

/* -EINVAL, said on stderr, when option was given to a client (!server). */
int cli_server_only(const char *cmd, const char *option, bool given, bool server);

/* --persist is for a server, and waits until stopped (not with --wait SEC):
 * 0, or -EINVAL after saying why. */
int cli_persist_check(const char *cmd, bool persist, bool server, uint64_t wait_s);

#define CLI_PERSIST_OPT(flag) CLI_PERSIST_OPT_KEY(flag, 0)
#define CLI_PERSIST_OPT_KEY(flag, key)                                                           \
	{"persist", (key), CLI_OPT_FLAG, (flag), 0, 0, NULL,                                     \
	 "server: serve one client after another until SIGINT or SIGTERM"}

/* A server takes no HOST, a client needs one. Returns -1 when host fits the
 * role, else CLI_USAGE after saying what is wrong. */
int cli_check_role(const char *cmd, bool server, const char *host);

/* --clients N on the bench and rc servers (cli_clients.c): N clients at once. */
#define CLI_CLIENTS_OPT(n)                                                                       \
	{"clients", 0, CLI_OPT_COUNT, (n), 1, RK_CLIENTS_MAX, "N",                               \
	 "server: serve N clients at once (incast), each with its own QP and buffer; a "         \
	 "report per client and the aggregate; --wait SEC bounds their arrival"}

/* --clients is the server's, and not with --persist: 0, or -EINVAL after
 * saying why. */
int cli_clients_check(const char *cmd, uint64_t clients, bool server, bool persist);

/* As a client of a --clients server ends (text): "WHO: client N (PEER) done,
 * D UNITs CHECKED" or "... FAILED after D UNITs: ERROR". */
void cli_client_end_text(const char *who, const struct rk_client_outcome *c, const char *unit,
			 const char *checked);

/* A client's part of the text report begins "client N (PEER): "; one that
 * was not set up gets "NOT_SET_UP: ERROR" and a newline there. Returns
 * set_up: whether its part goes on. */
bool cli_client_text_head(const struct rk_client_outcome *c, bool set_up, const char *not_set_up);

/* The report of a --clients server: clients are n structs of stride bytes,
 * each beginning with its struct rk_client_outcome (rk_bench_client,
 * rk_rcflow_client). */
struct cli_clients_report {
	const char *who;       /* "bench server", "server" */
	const char *msgs_name; /* what total->msgs counts: "messages", "steps" */
	const void *clients;
	size_t stride;
	uint32_t n;
	const struct rk_clients_total *total;
	double unit_bw;        /* text: total->bw in unit */
	const char *unit;
	uint64_t wait_s;       /* the server's --wait */
	/* An arrived client's own part: its text (header and rows), and the
	 * JSON object {client, arrived, peer, ok, error} completed. */
	void (*text)(const void *client, void *arg);
	void (*json)(json_object *j, const void *client, void *arg);
	void *arg;
};

/* Print it: per client its part; the aggregate (a text line, or "aggregate"
 * in doc); the verdict: text lines naming each failed client (with its
 * error) and each missing one, and "WHO: N clients, ...: OK|FAILED", or in
 * doc "failed_clients", "missing_clients" and "ok". With doc (JSON, the
 * command's fields in it) "clients" is added and doc printed (taken).
 * CLI_OK when every wanted client came and passed, else CLI_FAILED. */
int cli_clients_report(const struct cli_clients_report *r, json_object *doc);

/* A server takes no positional argument; a client exactly one, the server's
 * address. Returns -1 when argv[first..] fits the role, else CLI_USAGE after
 * saying what is wrong. */
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

/* The port counters a run moved (cli_report.c), for every command that
 * reports a run: one line "port counters (DEV port N, port-wide, S s): name
 * +N, ..." (a port without counters says so once per process), then for each
 * failed completion of the run its name, hint and the counters that explain
 * it. Nothing when the run never read them. */
void cli_counters_text(const struct rk_run_counters *c, const char *indent);

/* The same as a JSON object {device, port, scope, seconds, deltas: {group:
 * {name: N}}, left_out, failures: [{status, count, hint, counters}], note};
 * NULL (JSON null) when the run never read them. */
json_object *cli_counters_json(const struct rk_run_counters *c);

/* What the transport recovered from, as changes d show it (rk_counters_trouble()):
 * a line "INDENTnote: NAME (COUNTERS): HINT" per trouble. With hinted (an
 * array of RK_TROUBLE_COUNT, kept across calls) a trouble's hint is given the
 * first time only. */
void cli_troubles_text(const struct rk_counters_delta *d, const char *indent, bool *hinted);

/* The same as an array [{name, hint, counters: {name: N}}]. */
json_object *cli_troubles_json(const struct rk_counters_delta *d);

/* key: sec as a JSON number printed with 3 decimals ("seconds": 1.002). */
void cli_add_seconds(json_object *o, const char *key, double sec);

/* name: delta into groups' object for group (made on first use): the shape
 * of "deltas" in the counters reports, {"hw_counters": {"rdma_sends": 4}}. */
void cli_add_grouped(json_object *groups, enum rk_counter_group group, const char *name,
		     int64_t delta);

/* Units and thresholds (gate.h), as given, until cli_gates_parse() reads them. */
struct cli_gate_opts {
	const char *units;        /* "MiB" (NULL: the default), "GB", "Gb" */
	const char *expect_bw;    /* RATE */
	const char *min_link_pct; /* N */
	const char *max_lat_p99;  /* US */
	const char *max_rtt_p99;  /* US */
};

#define CLI_UNITS_OPT(o)                                                                         \
	{"units", 0, CLI_OPT_STRING, &(o)->units, 0, 0, "UNIT",                                  \
	 "bandwidth in Gb (10^9 bits/s, as perftest's --report_gbits), GB (10^9 bytes/s) or "   \
	 "MiB (2^20 bytes/s)", .def = "MiB"}
#define CLI_BW_GATE_OPTS(o)                                                                      \
	{"expect-bw", 0, CLI_OPT_STRING, &(o)->expect_bw, 0, 0, "RATE",                          \
	 "client: exit 3 unless the average bandwidth is at least RATE (90Gb, 11GB, 1000MiB; "  \
	 "a bare number is in --units)"},                                                        \
		{"min-link-pct", 0, CLI_OPT_STRING, &(o)->min_link_pct, 0, 0, "N",               \
		 "client: exit 3 unless the average bandwidth is at least N% of the link rate "   \
		 "(unknown on rxe: not graded, exit 3)"}
#define CLI_LAT_GATE_OPT(o)                                                                      \
	{"max-lat-p99", 0, CLI_OPT_STRING, &(o)->max_lat_p99, 0, 0, "US",                        \
	 "client, --mode lat: exit 3 unless the latency p99 is at most US microseconds"}
#define CLI_RTT_GATE_OPT(o)                                                                      \
	{"max-rtt-p99", 0, CLI_OPT_STRING, &(o)->max_rtt_p99, 0, 0, "US",                        \
	 "client: exit 3 unless the round-trip time p99 is at most US microseconds"}

/* The exit statuses, for --help epilogs. */
#define CLI_EXIT_HELP                                                                            \
	"exit status: 0 the run worked (and met every threshold given); 1 the run failed;\n"     \
	"2 bad usage; 3 (RK_EXIT_GATE) the run worked but a threshold was missed or could\n"    \
	"not be graded."

/* Read the units and thresholds of o into g (the gates left out are 0).
 * CLI_OK, or CLI_USAGE after naming the option and the bad text. */
int cli_gates_parse(const char *cmd, const struct cli_gate_opts *o, struct rk_gates *g);

/* Grade f against g: each check as a line (" gate LABEL: ..." on out), or as
 * JSON objects appended to arr (when not NULL) with "size" when size > 0.
 * Returns how many checks did not pass; *checks_p (when not NULL) grows by
 * how many were made. */
int cli_gates_grade(const struct rk_gates *g, const struct rk_gate_figures *f, uint32_t size,
		    const char *label, FILE *out, json_object *arr, int *checks_p);

/* The end of a graded run: the text line (on out, when not NULL) or the JSON
 * fields "gates" (arr, taken) and "gates_passed" (in doc, when not NULL).
 * Returns the exit status: status itself unless the run worked and a check
 * did not pass (CLI_GATE). */
int cli_gates_end(const char *who, int status, int checks, int failed, FILE *out,
		  json_object *doc, json_object *arr);

/* A subcommand: argv[0] is its name; returns the exit status. */
typedef int cli_cmd_fn(int argc, char **argv);

/* The subcommands (cmd_mesh execs rdmakit-mesh, next to this binary or in
 * PATH, with the arguments). */
cli_cmd_fn cmd_devices, cmd_counters, cmd_loopback, cmd_mesh, cmd_rc, cmd_bench, cmd_ping,
	cmd_ud, cmd_qp_states, cmd_share, cmd_memserver, cmd_blk;

#endif
