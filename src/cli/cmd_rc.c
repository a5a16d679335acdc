/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit rc: a server exposes one buffer (host or device memory); a client
 * connects over the TCP exchange or RDMA CM and works on it step by step (the
 * engine is rk_rcflow_run(), rcflow.h). This file parses the options and
 * prints each step and the result. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"
#include "cli_serve.h"
#include "cli_report.h"
#include "cli_srq.h"

struct rc_opts {
	struct cli_dev_opts dev;
	struct cli_conn_opts conn;
	struct rk_traffic traffic; /* from conn.traffic */
	const char *op;
	uint64_t size;
	uint64_t sge;
	bool events;
	struct cli_mem_opts mem;
	const char *inject;
	uint64_t rnr_retry;
	uint64_t retry;
	bool json;
	const char *auth_file;
	bool persist;
	uint64_t clients; /* server: this many clients at once; 0: one */
	bool listened; /* the server listened: a failure after it is a client's */
	struct cli_srq_opts srq;
};

static const char usage_text[] =
	"rdmakit rc --server [options]\n       rdmakit rc HOST [options]";
static const char description[] =
	"RC client and server. The server exposes one buffer (host memory, huge pages, a\n"
	"memfd or device memory: --mem) with exactly the access the client's operation\n"
	"needs; the client connects by the out-of-band TCP exchange (default) or RDMA CM\n"
	"(--cm) and runs --op on it:\n"
	"  send, send-imm   the client SENDs its buffer into the server's\n"
	"  write, write-imm the client RDMA-WRITEs the server's buffer\n"
	"  read             the client RDMA-READs the server's buffer\n"
	"  fetch-add        the client adds 1 to the server's first 8-byte word\n"
	"  cmp-swap         the client swaps that word if it holds the expected value\n"
	"  all              the server SENDs a message, the client READs, WRITEs, then\n"
	"                   fetch-add and compare-swap, each side showing its buffer\n"
	"Every byte moved is checked by the receiving side.";

/* ---- output ---- */

static void print_connected(const struct rc_opts *o, const struct rk_rcflow_result *r)
{
	const char *who = o->conn.server ? "server" : "client";
	char gid[64], flags[128], traffic[128], peer[64];

	printf("%s: %s port %u", who, r->device, r->port_num);
	if (r->has_gid)
		printf(", GID %u %s %s", r->gid.index, rk_gid_type_str(r->gid.type),
		       rk_gid_str(&r->gid.gid, gid, sizeof(gid)));
	printf(" (%s)\n", r->cm ? "RDMA CM" : "TCP exchange");
	if (r->has_gid && r->gid.why[0])
		printf("  %s\n", r->gid.why);
	printf("connected to %s: QP 0x%x <-> %s, path MTU %d%s\n", r->peer, r->qpn,
	       cli_peer_qp_str(r->peer_qpn, peer, sizeof(peer)), r->path_mtu,
	       cli_traffic_str(&o->traffic, traffic, sizeof(traffic)));
	if (r->mem_why[0])
		printf("%s memory: %s\n", who, r->mem_why);
	if (o->conn.server)
		printf("exposing %" PRIu64 " bytes of %s, rkey 0x%x, access %s; client asks for "
		       "%s\n",
		       o->size, cli_mem_text(r->mem), r->rkey,
		       rk_access_str(r->access, flags, sizeof(flags)), rk_rcflow_op_name(r->op));
	else
		printf("server exposes %" PRIu64 " bytes of %s at 0x%" PRIx64 ", rkey 0x%x; "
		       "running %s from %" PRIu64 " bytes of %s%s\n",
		       r->reply.len, r->reply.flags & RK_BUF_DM ? "device memory" : "host-side memory",
		       r->reply.addr, r->reply.rkey, rk_rcflow_op_name(r->op), o->size,
		       cli_mem_text(r->mem), r->odp ? " (on-demand paging)" : "");
}

static void print_step(const struct rc_opts *o, const struct rk_rcflow_result *res, int idx)
{
	const struct rk_rcflow_step *r = &res->steps[idx];
	const char *dir = r->kind == RK_STEP_SEND_S2C ? "server -> client" :
			  r->kind == RK_STEP_READ     ? "client <- server buffer" :
			  r->kind == RK_STEP_FADD || r->kind == RK_STEP_CSWAP ?
							"client on server word" :
							"client -> server";

	printf("step %d/%d %-9s %s, %u bytes%s", idx + 1, res->nsteps,
	       rk_rcflow_step_name(r->kind), dir, r->bytes, r->status ? ": FAILED" : "");
	if (r->has_imm)
		printf(", immediate 0x%x", r->imm);
	if (r->has_word && o->conn.server)
		printf(", word %" PRIu64 " -> %" PRIu64, r->word_before, r->word_after);
	else if (r->has_word)
		printf(", returned %" PRIu64, r->word_before);
	if (r->checked && r->bad_offset < 0)
		printf(r->has_word ? ", as expected" : ", checked: every byte as the peer put it");
	printf("\n");
	if (!r->status)
		printf("  %s buffer after: [%s] (%" PRIu64 " bytes)\n",
		       o->conn.server ? "server" : "client", r->preview, o->size);
}

static void on_event(const struct rk_rcflow_result *r, enum rk_rcflow_event ev, int step,
		     void *arg)
{
	struct rc_opts *o = arg;

	if (ev == RK_RCFLOW_WAITING)
		o->listened = true;
	if (o->json)
		return;
	if (ev == RK_RCFLOW_WAITING)
		cli_waiting_text("server", o->clients, "client", o->conn.port, o->conn.cm);
	else if (ev == RK_RCFLOW_CONNECTED)
		print_connected(o, r);
	else
		print_step(o, r, step);
	fflush(stdout);
}

static json_object *step_json(const struct rk_rcflow_step *r, int idx)
{
	json_object *s = json_object_new_object();

	json_object_object_add(s, "step", json_object_new_int(idx + 1));
	json_object_object_add(s, "op", json_object_new_string(rk_rcflow_step_name(r->kind)));
	json_object_object_add(s, "bytes", json_object_new_int64(r->bytes));
	json_object_object_add(s, "ok", json_object_new_boolean(r->status == 0));
	json_object_object_add(s, "checked", json_object_new_boolean(r->checked &&
								      r->bad_offset < 0));
	if (r->bad_offset >= 0)
		json_object_object_add(s, "first_bad_byte", json_object_new_int64(r->bad_offset));
	if (r->has_imm)
		json_object_object_add(s, "imm", json_object_new_int64(r->imm));
	if (r->has_word) {
		json_object_object_add(s, "word_before",
				       json_object_new_int64((int64_t)r->word_before));
		json_object_object_add(s, "word_after",
				       json_object_new_int64((int64_t)r->word_after));
	}
	json_object_object_add(s, "buffer", json_object_new_string(r->preview));
	return s;
}

static json_object *report_json(const struct rc_opts *o, const struct rk_rcflow_result *r,
				int result)
{
	json_object *doc = json_object_new_object(), *steps = json_object_new_array();

	cli_add_str(doc, "role", o->conn.server ? "server" : "client");
	cli_add_str(doc, "connection", o->conn.cm ? "cm" : "tcp");
	json_object_object_add(doc, "traffic", cli_traffic_json(&o->traffic));
	json_object_object_add(doc, "op", json_object_new_string(rk_rcflow_op_name(r->op)));
	json_object_object_add(doc, "size", json_object_new_int64((int64_t)o->size));
	json_object_object_add(doc, "sge", json_object_new_int64((int64_t)o->sge));
	json_object_object_add(doc, "events", json_object_new_boolean(o->events));
	if (r->connected) {
		json_object_object_add(doc, "device", json_object_new_string(r->device));
		json_object_object_add(doc, "port", json_object_new_int(r->port_num));
		json_object_object_add(doc, "peer", json_object_new_string(r->peer));
		json_object_object_add(doc, "qpn", json_object_new_int64(r->qpn));
		if (r->has_gid)
			json_object_object_add(doc, "gid", cli_gid_json(&r->gid));
		cli_add_peer_qpn(doc, "peer_qpn", r->peer_qpn);
		json_object_object_add(doc, "path_mtu", json_object_new_int(r->path_mtu));
		cli_mem_json(doc, r->mem, r->mem_why[0] != 0, r->mem_why, r->odp);
		json_object_object_add(doc, "fell_back", json_object_new_boolean(r->fell_back));
		json_object_object_add(doc, "rkey", json_object_new_int64(r->rkey));
	}
	for (int i = 0; i < r->done; i++)
		json_object_array_add(steps, step_json(&r->steps[i], i));
	json_object_object_add(doc, "steps", steps);
	cli_run_json(doc, "", &r->counters, r->srq ? &r->srq_stats : NULL);
	cli_add_result(doc, result);
	return doc;
}

/* ---- options ---- */

/* --op, --mem and --inject into f, then the whole checked as the engine
 * would (rk_rcflow_check()). */
static int parse_choices(const struct rc_opts *o, struct rk_rcflow_opts *f)
{
	char why[200];

	if (cli_mem_parse("rc", &o->mem, (1u << (RK_MEM_AUTO + 1)) - 1, &f->mem) ||
	    cli_persist_check("rc", o->persist, o->conn.server, o->conn.wait) ||
	    cli_clients_check("rc", o->clients, o->conn.server, o->persist))
		return -EINVAL;
	f->odp = o->mem.odp;
	f->op = RK_RCFLOW_OP_ANY;
	if (o->inject)
		rk_rcflow_inject_parse(o->inject, &f->inject); /* a choice: it parses */
	if ((!o->conn.server || strcmp(o->op, "any")) && rk_rcflow_op_parse(o->op, &f->op)) {
		fprintf(stderr, "rdmakit rc: option --op: any is for a server (--server)\n");
		return -EINVAL;
	}
	if (rk_rcflow_check(f, why, sizeof(why))) {
		fprintf(stderr, "rdmakit rc: %s\n", why);
		return -EINVAL;
	}
	return 0;
}

/* The engine's options from the command's (parse_choices() adds the
 * chosen operation, memory and fault). */
static void flow_opts(struct rc_opts *o, const char *host, struct rk_rcflow_opts *f)
{
	*f = (struct rk_rcflow_opts){
		CLI_CONN_FIELDS(&o->conn, &o->dev, host), .accept_timeout_ms = CLI_WAIT_MS(&o->conn),
		.size = o->size, .sge = (int)o->sge, .events = o->events,
		.rnr_retry = (uint8_t)o->rnr_retry, .retry = (uint8_t)o->retry,
		.traffic = o->traffic, .auth_file = o->auth_file, .on_event = on_event, .arg = o,
		.srq = o->srq.srq, .xrc = o->srq.xrc,
	};
	cli_srq_fill(&o->srq, &f->srq_opts);
}

struct rc_run {
	struct rc_opts *o;
	const struct rk_rcflow_opts *f;
};

/* Run the flow once and print its report: the exit status, or CLI_STOPPED
 * when a stop signal ended a --persist server's wait for a client. */
static int serve_one(void *arg, bool *listened)
{
	struct rc_run *run = arg;
	const struct rc_opts *o = run->o;
	struct rk_rcflow_result *res = malloc(sizeof(*res));
	int ret;

	if (!res)
		return cli_fail(-ENOMEM);
	run->o->listened = false;
	ret = rk_rcflow_run(run->f, res);
	*listened = o->listened;
	if (ret == -EINTR && cli_stop_signal) {
		free(res);
		return CLI_STOPPED;
	}
	if (!o->json)
		cli_run_text(&res->counters, res->srq ? &res->srq_stats : NULL, "");
	if (o->json)
		cli_json_print(report_json(o, res, ret));
	else if (!ret)
		printf("%s: %d step%s done, every byte checked: OK\n",
		       o->conn.server ? "server" : "client", res->nsteps, res->nsteps > 1 ? "s" : "");
	else
		printf("%s: FAILED (%s)\n", o->conn.server ? "server" : "client", rk_strerror(ret));
	free(res);
	return ret ? CLI_FAILED : CLI_OK;
}

/* ---- --clients N: the server of several clients at once ---- */

/* As each client ends (text only): a line saying how it came out. */
static void on_client_end(const struct rk_rcflow_client *c, void *arg)
{
	(void)arg;
	cli_client_end_text("server", &c->out, "step", ", every byte checked");
}

static void client_text(const void *client, void *arg)
{
	const struct rk_rcflow_client *c = client;
	const struct rc_opts *o = arg;
	const struct rk_rcflow_result *r = &c->result;
	char flags[128], peer[64];

	if (!cli_client_text_head(&c->out, r->connected, "not connected"))
		return;
	printf("QP 0x%x <-> %s", r->qpn, cli_peer_qp_str(r->peer_qpn, peer, sizeof(peer)));
	printf(", its own %" PRIu64 " bytes of %s, rkey 0x%x, access %s; %s\n", o->size,
	       cli_mem_text(r->mem), r->rkey,
	       rk_access_str(r->access, flags, sizeof(flags)), rk_rcflow_op_name(r->op));
	for (int i = 0; i < r->done; i++)
		print_step(o, r, i);
	if (r->srq)
		cli_srq_text(&r->srq_stats, "  ");
	if (c->out.status)
		printf("  FAILED: %s\n", c->out.error);
}

static void client_json(json_object *j, const void *client, void *arg)
{
	const struct rk_rcflow_client *c = client;

	cli_add_int(j, "steps_ok", c->out.done);
	cli_add_int(j, "bytes", (int64_t)c->out.bytes);
	json_object_object_add(j, "report", report_json(arg, &c->result, c->out.status));
}

static int clients_report(struct rc_opts *o, const struct rk_rcflow_clients *rep)
{
	const struct cli_clients_report r = {
		.who = "server", .msgs_name = "steps", .clients = rep->clients,
		.stride = sizeof(*rep->clients), .n = rep->wanted, .total = &rep->total,
		.unit_bw = rep->total.bw / (1024.0 * 1024.0), .unit = "MiB/s",
		.wait_s = o->conn.wait, .text = client_text, .json = client_json, .arg = o,
	};
	json_object *doc = NULL;

	if (o->json) {
		doc = json_object_new_object();
		cli_add_str(doc, "role", "server");
	}
	return cli_clients_report(&r, doc);
}

static int serve_clients(void *arg)
{
	struct rc_run *run = arg;
	struct rc_opts *o = run->o;
	struct rk_rcflow_clients rep;
	int ret, status;

	cli_stop_signals(true);
	ret = rk_rcflow_serve_clients(run->f, (uint32_t)o->clients,
				      o->json ? NULL : on_client_end, NULL, &rep);
	cli_stop_signals(false);
	if (ret)
		return cli_fail(ret);
	status = clients_report(o, &rep);
	rk_rcflow_clients_free(&rep);
	return status;
}

/* The values of --op and --inject (cli_opt.choices); rk_rcflow_check() says
 * which side may use which. */
static const char *const rc_ops[] = {"send", "send-imm", "write", "write-imm", "read",
				     "fetch-add", "cmp-swap", "all", "any", NULL};
static const char *const rc_faults[] = {"wrong-rkey", "outside", "no-access", "no-recv", NULL};

int cmd_rc(int argc, char **argv)
{
	struct rc_opts o = {
		.dev = CLI_DEV_OPTS_DEFAULT,
		.conn = {.port = RK_DEFAULT_PORT, .timeout = 10, .traffic = CLI_TRAFFIC_OPTS_DEFAULT},
		.size = 4096, .sge = 1, .mem = {.mem = "host"}, .rnr_retry = 7, .retry = 6,
		.srq = CLI_SRQ_OPTS_DEFAULT,
	};
	const struct cli_opt opts[] = {
		CLI_CONN_OPTS(&o.conn),
		CLI_DEV_OPTS(&o.dev),
		{"op", 'o', CLI_OPT_STRING, &o.op, 0, 0, "OP",
		 "send|send-imm|write|write-imm|read|fetch-add|cmp-swap|all, or for a server any "
		 "(serve what the client runs)", .choices = rc_ops,
		 .def = "all (client), any (server)"},
		{"size", 's', CLI_OPT_SIZE, &o.size, 1, 1u << 30, "BYTES",
		 "bytes per operation; the server's buffer size"},
		{"sge", 0, CLI_OPT_COUNT, &o.sge, 1, RK_RCFLOW_MAX_SGE, "N",
		 "split local buffers into N scatter/gather pieces"},
		{"events", 'e', CLI_OPT_FLAG, &o.events, 0, 0, NULL,
		 "sleep on a completion channel instead of polling"},
		CLI_MEM_OPTS(&o.mem, cli_mem_kinds,
			     "this side's buffer: host, hugepage (MAP_HUGETLB, from the kernel's "
			     "pool), memfd, memfd-huge, dm (device memory; server), auto (dm, else "
			     "hugepage, else host)"),
		CLI_WAIT_OPTS(&o.conn, 't'),
		{"inject", 0, CLI_OPT_STRING, &o.inject, 0, 0, "FAULT",
		 "for tests: wrong-rkey|outside (client), no-access|no-recv (server)",
		 .choices = rc_faults},
		{"rnr-retry", 0, CLI_OPT_COUNT, &o.rnr_retry, 0, 7, "N",
		 "RNR retries before IBV_WC_RNR_RETRY_EXC_ERR (7: forever; TCP exchange)"},
		{"retry", 0, CLI_OPT_COUNT, &o.retry, 0, 7, "N",
		 "transport retries before IBV_WC_RETRY_EXC_ERR (TCP exchange; rxe takes 7 as "
		 "forever)"},
		CLI_JSON_OPT(&o.json),
		{"auth-file", 0, CLI_OPT_STRING, &o.auth_file, 0, 0, "PATH",
		 "shared secret (mode 600): both sides prove they hold it before the server "
		 "sends its buffer's address and rkey"},
		CLI_PERSIST_OPT(&o.persist), CLI_CLIENTS_OPT(&o.clients),
		CLI_OPT_GONE_ROW("", 'm', "-m is now --mem (-m is bench's --mode)"),
		CLI_SRQ_OPTS(&o.srq),
		CLI_OPT_END,
	};
	struct rk_rcflow_opts f;
	struct rc_run run;
	const char *host;
	int ret;

	ret = cli_parse_role("rc", usage_text, description, opts, argc, argv, &o.conn, &o.traffic,
			     &host);
	if (ret >= 0)
		return ret;
	if (!o.op)
		o.op = o.conn.server ? "any" : "all";
	/* CM's QP carries the steps' control messages too, which rely on RNR
	 * retry 7: were these ignored, a demonstration would silently pass. */
	if (o.conn.cm && (cli_opts_given(&o.rnr_retry) || cli_opts_given(&o.retry))) {
		fprintf(stderr, "rdmakit rc: option --%s is for the TCP exchange's QP; over RDMA "
			"CM the QP also carries the control messages and keeps RNR retry 7 and "
			"retry 6\n", cli_opts_given(&o.rnr_retry) ? "rnr-retry" : "retry");
		return CLI_USAGE;
	}
	flow_opts(&o, host, &f);
	if (cli_srq_check("rc", &o.srq) || parse_choices(&o, &f))
		return CLI_USAGE;
	run.o = &o;
	run.f = &f;
	return cli_serve("server", o.json, o.persist, serve_one, o.clients ? serve_clients : NULL,
			 &run);
}
