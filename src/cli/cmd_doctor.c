/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit doctor: why RDMA does not work on this host (or between two), and
 * what to change (the checks are rk_doctor_run()'s; this prints them as they
 * come); doctor --server serves the peer's side (rk_doctor_serve()). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"
#include "cli_serve.h"

struct doctor_opts {
	const char *device;
	bool json;
	struct cli_conn_opts conn; /* server, port, timeout, wait */
};

/* What the run saw: the JSON checks, the first failure. */
struct doctor_out {
	bool json;
	json_object *checks;
	char first_fail[256];
	int first_err;
	int nfail;
};

static const char usage_text[] = "rdmakit doctor [-d DEV] [--json] [HOST]\n"
				 "       rdmakit doctor --server [-d DEV] [-p PORT] [--wait SEC]";
static const char description[] =
	"Check what RDMA needs on this host, in order, and say for each check PASS, WARN or\n"
	"FAIL with what was seen and the command or setting that fixes it: the kernel's RDMA\n"
	"modules; /dev/infiniband and this user's access to it; a user-space provider for\n"
	"each device; each port's state; on RoCE its netdev, the netdev's IP addresses, a\n"
	"RoCE v2 GID for each and the MTUs; on InfiniBand the LID and subnet manager; the\n"
	"locked-memory limit; the huge page pool; firewall rules dropping UDP 4791 (RoCE v2)\n"
	"or TCP 18515; error counters that moved since boot; software devices (rxe, siw).\n"
	"With HOST, then the path to HOST, where `rdmakit doctor --server` runs: TCP reach,\n"
	"RDMA CM's route and the device it picks, both sides' GID and its type, the MTUs\n"
	"of the two ends and the path, a SEND, an RDMA WRITE and an RDMA READ with every\n"
	"byte checked, a 2-second bandwidth and latency probe, and a one-line verdict.\n"
	"--server serves doctor clients one after another until SIGINT or SIGTERM.";
static const char epilog[] =
	"exit status: 0 every check passed (or could not be made: SKIP); 1 a check failed;\n"
	"2 bad usage; 3 warnings only. --server: 0 when stopped by a signal, 1 when it\n"
	"could not listen or --wait passed without a client.";

static void on_check(const struct rk_doctor_check *c, void *arg)
{
	struct doctor_out *out = arg;
	json_object *j;

	if (c->status == RK_DOCTOR_FAIL && !out->nfail++) {
		snprintf(out->first_fail, sizeof(out->first_fail), "%s", c->title);
		out->first_err = c->err;
	}
	if (!out->json) {
		printf("%s %s: %s", rk_doctor_status_str(c->status), c->title, c->seen);
		if (c->fix[0])
			printf("; fix: %s", c->fix);
		printf("\n");
		fflush(stdout);
		return;
	}
	j = json_object_new_object();
	cli_add_str(j, "id", c->id);
	cli_add_str(j, "title", c->title);
	if (c->device[0])
		cli_add_str(j, "device", c->device);
	if (c->port)
		cli_add_int(j, "port", c->port);
	cli_add_str(j, "status", rk_doctor_status_str(c->status));
	cli_add_str(j, "seen", c->seen);
	if (c->fix[0])
		cli_add_str(j, "fix", c->fix);
	if (c->err)
		cli_add_str(j, "errno", cli_errno_name(c->err));
	json_object_array_add(out->checks, j);
}

/* doctor --server's callbacks' argument. */
struct serve_ctx {
	const struct doctor_opts *o;
	json_object *clients; /* --json: each client's record */
};

static void served_line(const struct rk_doctor_served *c, void *arg)
{
	json_object *clients = ((struct serve_ctx *)arg)->clients, *j;

	if (clients) {
		j = json_object_new_object();
		cli_add_str(j, "peer", c->peer);
		cli_add_str(j, "kind", c->probe ? "reach" : "client");
		if (!c->probe) {
			if (c->device[0]) {
				cli_add_str(j, "device", c->device);
				cli_add_int(j, "port", c->port_num);
				cli_add_int(j, "path_mtu", c->path_mtu);
			}
			cli_add_str(j, "result", c->status ? "failed" : "ok");
			if (c->status) {
				cli_add_str(j, "error", c->error[0] ? c->error :
					    rk_strerror(c->status));
				cli_add_str(j, "errno", cli_errno_name(c->status));
			}
		}
		json_object_array_add(clients, j);
		return;
	}
	if (c->probe)
		printf("doctor server: %s checked that TCP reaches this port\n", c->peer);
	else if (!c->status)
		printf("doctor server: served %s on %s port %u (path MTU %d): SEND, WRITE and "
		       "READ checked, probe done\n",
		       c->peer, c->device, c->port_num, c->path_mtu);
	else
		printf("doctor server: client %s failed: %s\n", c->peer,
		       c->error[0] ? c->error : rk_strerror(c->status));
	fflush(stdout);
}

static void on_listening(void *arg)
{
	const struct doctor_opts *o = ((struct serve_ctx *)arg)->o;

	if (o->json)
		return;
	cli_waiting_text("doctor server", 0, "doctor client",
			 o->conn.port ? o->conn.port : RK_DEFAULT_PORT, false);
	fflush(stdout);
}

/* doctor --server: until a signal (or --wait SEC without a client). */
static int serve(const struct doctor_opts *o)
{
	struct rk_doctor_server_opts so = {
		.port = (uint16_t)o->conn.port,
		.device = o->device,
		.timeout_ms = o->conn.timeout ? (int)o->conn.timeout * 1000 : 0,
		.wait_ms = CLI_WAIT_MS(&o->conn),
		.on_listening = on_listening,
	};
	struct serve_ctx ctx = {o, o->json ? json_object_new_array() : NULL};
	struct rk_doctor_serve_total t;
	json_object *doc;
	int ret;

	cli_stop_signals(true);
	ret = rk_doctor_serve(&so, served_line, &ctx, &t);
	cli_stop_signals(false);
	if (!o->json && (!ret || t.served + t.failed + t.probes)) {
		printf("doctor server: served %d client%s (%d failed), %d reach check%s%s%s\n",
		       t.served + t.failed, t.served + t.failed == 1 ? "" : "s", t.failed, t.probes,
		       t.probes == 1 ? "" : "s", ret ? "" : ", stopped by ",
		       ret ? "" : cli_stop_name());
	} else if (o->json) {
		doc = json_object_new_object();
		cli_add_str(doc, "role", "server");
		cli_add_int(doc, "served", t.served + t.failed);
		cli_add_int(doc, "failed", t.failed);
		cli_add_int(doc, "reach_checks", t.probes);
		json_object_object_add(doc, "clients", ctx.clients);
		if (!ret)
			cli_add_str(doc, "stopped_by", cli_stop_name());
		cli_add_result(doc, ret);
		cli_json_print(doc);
	}
	return ret ? cli_fail(ret) : CLI_OK;
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor_opts o = {0};
	const struct cli_opt opts[] = {
		{"device", 'd', CLI_OPT_STRING, &o.device, 0, 0, "DEV",
		 "only this device (with HOST: the one the route must take)",
		 .def = "every device"},
		CLI_SERVER_OPT(&o.conn.server),
		{"port", 'p', CLI_OPT_COUNT, &o.conn.port, 1, 65535, "PORT",
		 "TCP port of the doctor server", .def = "18515"},
		{"timeout", 't', CLI_OPT_COUNT, &o.conn.timeout, 1, 3600, "SEC",
		 "bound on each wait of the path's checks (both sides)", .def = "5"},
		{"wait", 'w', CLI_OPT_COUNT, &o.conn.wait, 0, 86400, "SEC",
		 "server: give up when no client came in SEC seconds", .def = "0: forever"},
		CLI_JSON_OPT(&o.json),
		CLI_OPT_END,
	};
	struct rk_doctor_opts dopts = {0};
	struct doctor_out out = {0};
	struct rk_doctor_summary sum;
	json_object *doc, *s;
	char why[512];
	int ret, status, first;

	ret = cli_parse_epilog("doctor", usage_text, description, epilog, opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	if (first + 1 < argc || (o.conn.server && first < argc)) {
		fprintf(stderr, "rdmakit doctor: unexpected argument '%s' (%s)\n",
			argv[o.conn.server ? first : first + 1],
			o.conn.server ? "the server takes no HOST" : "one HOST at most");
		return CLI_USAGE;
	}
	if (!o.conn.server && o.conn.wait) {
		fprintf(stderr, "rdmakit doctor: --wait is the server's (with --server)\n");
		return CLI_USAGE;
	}
	if (o.conn.server)
		return serve(&o);
	dopts.device = o.device;
	if (first < argc) {
		dopts.host = argv[first];
		dopts.port = (uint16_t)o.conn.port;
		dopts.timeout_ms = o.conn.timeout ? (int)o.conn.timeout * 1000 : 0;
	} else if (o.conn.port || o.conn.timeout) {
		fprintf(stderr, "rdmakit doctor: %s is for the path to a HOST (or --server)\n",
			o.conn.port ? "-p/--port" : "-t/--timeout");
		return CLI_USAGE;
	}
	out.json = o.json;
	if (o.json)
		out.checks = json_object_new_array();
	ret = rk_doctor_run(&dopts, on_check, &out, &sum);
	if (ret) {
		json_object_put(out.checks);
		return cli_fail(ret);
	}
	status = rk_doctor_exit_status(&sum);
	snprintf(why, sizeof(why), "%d check%s failed, the first: %s", out.nfail,
		 out.nfail == 1 ? "" : "s", out.first_fail);
	if (!o.json) {
		printf("doctor: %d passed, %d warning%s, %d failed, %d skipped\n", sum.pass,
		       sum.warn, sum.warn == 1 ? "" : "s", sum.fail, sum.skip);
		if (sum.verdict[0])
			printf("verdict: %s\n", sum.verdict);
	} else {
		doc = json_object_new_object();
		if (o.device)
			cli_add_str(doc, "device", o.device);
		if (dopts.host) {
			cli_add_str(doc, "host", dopts.host);
			cli_add_int(doc, "port", dopts.port ? dopts.port : RK_DEFAULT_PORT);
		}
		json_object_object_add(doc, "checks", out.checks);
		s = json_object_new_object();
		cli_add_int(s, "pass", sum.pass);
		cli_add_int(s, "warn", sum.warn);
		cli_add_int(s, "fail", sum.fail);
		cli_add_int(s, "skip", sum.skip);
		json_object_object_add(doc, "summary", s);
		cli_add_str(doc, "verdict", sum.fail ? "FAIL" : sum.warn ? "WARN" : "PASS");
		if (sum.verdict[0])
			cli_add_str(doc, "verdict_line", sum.verdict);
		cli_add_str(doc, "result", sum.fail ? "failed" : "ok");
		if (sum.fail) {
			cli_add_str(doc, "error", why);
			cli_add_str(doc, "errno",
				    cli_errno_name(out.first_err ? out.first_err : -EIO));
		}
		cli_json_print(doc);
	}
	if (sum.fail) {
		fprintf(stderr, "rdmakit doctor: %s\n", why);
		cli_fail(out.first_err ? out.first_err : -EIO);
	}
	return status;
}
