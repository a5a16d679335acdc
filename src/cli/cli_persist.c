/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --persist: a server that serves one client after another until SIGINT or
 * SIGTERM (rc, ping, bench), the stop signals it shares with bench's soak
 * runs, and the line a server prints as it starts to wait (cli_serve.h). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>

#include <rdmakit/stop.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"
#include "cli_serve.h"

volatile sig_atomic_t cli_stop_signal;

static void on_stop_signal(int sig)
{
	cli_stop_signal = sig;
}

void cli_stop_signals(bool on)
{
	static struct sigaction old_int, old_term;
	static int depth; /* a --persist server's loop around a bench run's */
	/* SA_RESETHAND: a second signal kills a run that does not end. */
	struct sigaction sa = {.sa_handler = on_stop_signal, .sa_flags = SA_RESETHAND};

	if (on ? depth++ > 0 : --depth > 0)
		return;
	if (on) {
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		rk_stop_watch(&cli_stop_signal);
	} else {
		rk_stop_watch(NULL);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
}

const char *cli_stop_name(void)
{
	return cli_stop_signal == SIGTERM ? "SIGTERM" :
	       cli_stop_signal == SIGINT  ? "SIGINT" :
					    "a signal";
}

static void persist_summary(const char *who, bool json, unsigned served, unsigned failed)
{
	if (json) {
		json_object *j = json_object_new_object();

		cli_add_str(j, "record", "persist");
		cli_add_int(j, "served", served);
		cli_add_int(j, "failed", failed);
		cli_add_str(j, "stopped_by", cli_stop_name());
		cli_json_print(j);
	} else {
		printf("%s: served %u client%s (%u failed), stopped by %s\n", who, served,
		       served == 1 ? "" : "s", failed, cli_stop_name());
	}
}

int cli_persist(const char *who, bool json, cli_serve_fn serve, void *arg)
{
	unsigned served = 0, failed = 0;
	int status = CLI_OK;

	cli_json_lines = cli_json_records = json; /* each client's report a line */
	cli_stop_signals(true);
	while (!cli_stop_signal) {
		bool listened = false;
		int st = serve(arg, &listened);

		if (st == CLI_STOPPED)
			break;
		if (!listened) { /* the server itself could not serve */
			status = st;
			break;
		}
		served++;
		failed += st != CLI_OK;
		fflush(stdout);
	}
	cli_stop_signals(false);
	cli_json_records = false; /* the summary, or the server's failure, is the outcome */
	if (status == CLI_OK)
		persist_summary(who, json, served, failed);
	return status;
}

int cli_persist_check(const char *cmd, bool persist, bool server, uint64_t wait_s)
{
	if (cli_server_only(cmd, "--persist", persist, server))
		return -EINVAL;
	if (persist && wait_s) {
		fprintf(stderr, "rdmakit %s: option --persist serves until SIGINT or SIGTERM; "
				"--wait %" PRIu64 " is for a server of one client\n", cmd, wait_s);
		return -EINVAL;
	}
	return 0;
}

int cli_serve(const char *who, bool json, bool persist, cli_serve_fn serve,
	      int (*all)(void *arg), void *arg)
{
	bool listened;

	if (persist)
		return cli_persist(who, json, serve, arg);
	if (all)
		return all(arg);
	return serve(arg, &listened);
}

void cli_waiting_text(const char *who, uint64_t n, const char *what, uint64_t port, bool cm)
{
	const char *how = cm ? "RDMA CM" : "TCP exchange";

	if (n)
		printf("%s: waiting for %" PRIu64 " %ss on port %" PRIu64 " (%s)\n", who, n, what,
		       port, how);
	else
		printf("%s: waiting for a %s on port %" PRIu64 " (%s)\n", who, what, port, how);
}
