/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit CLI: serving clients (one, --persist one after another, --clients N
 * at once) and the stop signals that end a server or a run. */
#ifndef RDMAKIT_CLI_SERVE_H
#define RDMAKIT_CLI_SERVE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include <rdmakit/clients.h>

#include "cli_opts.h"

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

/* --persist is for a server, and waits until stopped (not with --wait SEC):
 * 0, or -EINVAL after saying why. */
int cli_persist_check(const char *cmd, bool persist, bool server, uint64_t wait_s);

#define CLI_PERSIST_OPT(flag) CLI_PERSIST_OPT_KEY(flag, 0)
#define CLI_PERSIST_OPT_KEY(flag, key)                                                           \
	{"persist", (key), CLI_OPT_FLAG, (flag), 0, 0, NULL,                                     \
	 "server: serve one client after another until SIGINT or SIGTERM"}

/* --clients N on the bench and rc servers (cli_clients.c): N clients at once. */
#define CLI_CLIENTS_OPT(n)                                                                       \
	{"clients", 0, CLI_OPT_COUNT, (n), 1, RK_CLIENTS_MAX, "N",                               \
	 "server: serve N clients at once (incast), each with its own QP and buffer; a "         \
	 "report per client and the aggregate; --wait SEC bounds their arrival",                 \
	 .def = "none: one client at a time"}

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

#endif
