/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit ud: UD datagrams (the engine is rk_ud_run(), ud.h). One server QP
 * serves several clients, each SENDs its datagrams and gets each back; the
 * clients find the server by the TCP exchange or by RDMA CM in RDMA_PS_UDP
 * (SIDR), which is udaddy's protocol: rdmakit ud and udaddy work with each
 * other in either role. This file parses the options and prints the report. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"
#include "cli_srq.h"

struct ud_opts {
	struct cli_dev_opts dev;
	struct cli_conn_opts conn;
	struct rk_traffic traffic; /* from conn.traffic */
	uint64_t size;
	uint64_t count;
	uint64_t clients;
	bool events;
	bool verbose;
	bool json;
	struct cli_srq_opts srq;
};

static const char *const server_client_note[] = {
	" (not rdmakit, e.g. udaddy: its data is not a pattern that can be checked)",
	" (rdmakit: its data is checked)",
};

/* Progress lines as the engine goes (text output only). */
static void on_event(const struct rk_ud_event *ev, void *arg)
{
	const struct ud_opts *o = arg;
	const struct rk_ud_result *r = ev->result;
	const struct rk_ud_peer *c = ev->client;
	char t[128];

	cli_traffic_str(&o->traffic, t, sizeof(t));
	if (ev->kind == RK_UD_READY && o->conn.server)
		printf("server: UD QP 0x%x on %s port %u, Q_Key 0x%x%s; waiting for %" PRIu64
		       " client%s on port %" PRIu64 " (%s), %" PRIu64 "-byte datagrams\n",
		       r->qpn, r->device, r->port_num, r->qkey, t, o->clients,
		       o->clients > 1 ? "s" : "", o->conn.port,
		       o->conn.cm ? "RDMA CM, RDMA_PS_UDP" : "TCP exchange", o->size);
	else if (ev->kind == RK_UD_READY)
		printf("client: UD QP 0x%x on %s port %u -> server %s QP 0x%x, Q_Key 0x%x (%s)%s; "
		       "%" PRIu64 " datagrams of %" PRIu64 " bytes%s\n",
		       r->qpn, r->device, r->port_num, r->peer, r->peer_qpn, r->peer_qkey,
		       o->conn.cm ? "RDMA CM, RDMA_PS_UDP" : "TCP exchange", t, o->count, o->size,
		       r->peer_rdmakit ? ", echoes checked" :
		       " (the server is not rdmakit, e.g. udaddy: its answers are not checked)");
	else if (ev->kind == RK_UD_CLIENT)
		printf("server: client %d: %s%s\n", r->nclients, c->addr,
		       server_client_note[c->rdmakit]);
	else if (o->verbose && o->conn.server)
		printf("server: datagram %" PRIu64 "/%" PRIu64 " from %s (QP 0x%x, imm 0x%x), "
		       "%" PRIu64 " bytes%s, echoed\n",
		       ev->index, ev->of, c->addr, c->qpn, ev->imm, o->size,
		       ev->checked ? ", checked" : "");
	else if (o->verbose)
		printf("client: echo %" PRIu64 "/%" PRIu64 " from QP 0x%x, %" PRIu64 " bytes%s\n",
		       ev->index, ev->of, ev->src_qpn, o->size, ev->checked ? ", checked" : "");
	fflush(stdout);
}

static json_object *report_json(const struct ud_opts *o, const struct rk_ud_result *r,
				int result)
{
	json_object *doc = json_object_new_object();

	cli_add_str(doc, "role", o->conn.server ? "server" : "client");
	cli_add_str(doc, "connection", o->conn.cm ? "cm" : "tcp");
	json_object_object_add(doc, "traffic", cli_traffic_json(&o->traffic));
	cli_add_int(doc, "size", (int64_t)o->size);
	cli_add_int(doc, "count", (int64_t)o->count);
	if (r->has_qp) {
		cli_add_str(doc, "device", r->device);
		cli_add_int(doc, "qpn", r->qpn);
		cli_add_int(doc, "qkey", r->qkey);
	}
	if (o->conn.server) {
		json_object *cl = json_object_new_array();

		for (int i = 0; i < r->nclients; i++) {
			const struct rk_ud_peer *c = &r->clients[i];
			json_object *j = json_object_new_object();

			cli_add_str(j, "addr", c->addr);
			cli_add_int(j, "qpn", c->qpn);
			cli_add_bool(j, "rdmakit", c->rdmakit);
			cli_add_int(j, "received", (int64_t)c->received);
			cli_add_int(j, "echoed", (int64_t)c->echoed);
			json_object_array_add(cl, j);
		}
		json_object_object_add(doc, "clients", cl);
	} else {
		cli_add_str(doc, "peer", r->peer);
		cli_add_int(doc, "peer_qpn", r->peer_qpn);
		cli_add_int(doc, "peer_qkey", r->peer_qkey);
		cli_add_int(doc, "sent", (int64_t)r->sent);
	}
	cli_add_int(doc, "received", (int64_t)r->received);
	cli_add_bool(doc, "validated", !result && r->checked);
	cli_add_double(doc, "elapsed_us", r->elapsed_us);
	cli_run_json(doc, "", &r->counters, r->srq ? &r->srq_stats : NULL);
	cli_add_result(doc, result);
	return doc;
}

static void report_text(const struct ud_opts *o, const struct rk_ud_result *r, int result)
{
	const char *who = o->conn.server ? "server" : "client";

	cli_run_text(&r->counters, r->srq ? &r->srq_stats : NULL, "");
	if (result) {
		printf("%s: FAILED (%s)\n", who, rk_strerror(result));
		return;
	}
	printf("%s: %" PRIu64 " datagram%s of %" PRIu64 " bytes %s in %.1f ms, %s: OK\n", who,
	       r->received, r->received == 1 ? "" : "s", o->size,
	       o->conn.server ? "received and echoed" : "sent and echoed back", r->elapsed_us / 1e3,
	       r->checked ? "every byte checked" :
	       "not checked (a peer that is not rdmakit sends no checkable pattern)");
}

static const char usage_text[] = "rdmakit ud --server [options]\n       rdmakit ud HOST [options]";
static const char description[] =
	"UD datagrams: the client SENDs COUNT datagrams (with immediate data: its QPN) to the\n"
	"server's UD QP through an address handle; the server answers each with the same\n"
	"bytes through an address handle back to the sender (receives leave 40 bytes for\n"
	"the GRH). One server QP serves --clients clients. Connection by the TCP exchange\n"
	"or by RDMA CM in RDMA_PS_UDP (--cm), which is udaddy's protocol: rdmakit ud and\n"
	"udaddy (-s HOST -C COUNT -S SIZE) work with each other either way round.\n"
	"A datagram is one packet: a size above the path MTU is refused.\n"
	"--srq (server): the QP's receives come from a shared receive queue, refilled in\n"
	"lists, its limit armed (IBV_EVENT_SRQ_LIMIT_REACHED is reported). UD has no RNR:\n"
	"a datagram that finds the SRQ empty (--srq-no-refill) is dropped, and the client\n"
	"waits for its echo in vain.";

int cmd_ud(int argc, char **argv)
{
	struct ud_opts o = {.dev = CLI_DEV_OPTS_DEFAULT, .size = 100, .count = 10, .clients = 1,
			    .conn.timeout = 10, .conn.traffic = CLI_TRAFFIC_OPTS_DEFAULT,
			    .srq = CLI_SRQ_OPTS_DEFAULT};
	const struct cli_opt opts[] = {
		CLI_SERVER_OPT(&o.conn.server),
		{"port", 'p', CLI_OPT_COUNT, &o.conn.port, 1, 65535, "PORT",
		 "TCP port, or RDMA CM port with --cm", .def = "18515; 7174 (udaddy's) with --cm"},
		CLI_CM_OPT(&o.conn.cm,
			   "RDMA CM in RDMA_PS_UDP (as udaddy) instead of the TCP exchange"),
		CLI_TRAFFIC_OPTS(&o.conn.traffic, CLI_TCLASS_WITH_CM),
		CLI_DEV_OPTS(&o.dev),
		{"size", 's', CLI_OPT_SIZE, &o.size, 1, 4096, "BYTES",
		 "bytes per datagram (at most the path MTU)"},
		{"count", 'n', CLI_OPT_COUNT, &o.count, 1, 100000, "N",
		 "datagrams per client (a udaddy client's -C)"},
		{"clients", 0, CLI_OPT_COUNT, &o.clients, 1, RK_UD_MAX_CLIENTS, "N",
		 "server: serve N clients, then stop"},
		{"events", 'e', CLI_OPT_FLAG, &o.events, 0, 0, NULL,
		 "sleep on a completion channel instead of polling"},
		{"verbose", 'v', CLI_OPT_FLAG, &o.verbose, 0, 0, NULL, "print every datagram"},
		CLI_WAIT_OPTS(&o.conn, 't'),
		CLI_JSON_OPT(&o.json),
		CLI_SRQ_OPTS_EMPTY(&o.srq, CLI_SRQ_EMPTY_UD),
		/* udaddy's -C COUNT, which --count's help cites (issue 35: -C was
		 * --clients here, which rc and bench spell out too). */
		CLI_OPT_ALIAS_ROW("", 'C', &o.count, NULL, "udaddy's"),
		CLI_OPT_END,
	};
	struct rk_ud_result *res;
	struct rk_srq_opts so;
	const char *host;
	int ret;

	ret = cli_parse_role("ud", usage_text, description, opts, argc, argv, &o.conn, &o.traffic,
			     &host);
	if (ret >= 0)
		return ret;
	if (!o.conn.server && o.clients != 1) {
		fprintf(stderr, "rdmakit ud: option --clients is the server's\n");
		return CLI_USAGE;
	}
	if (!o.conn.server && o.srq.srq) {
		fprintf(stderr, "rdmakit ud: option --srq is the server's (its QP receives "
				"from the SRQ)\n");
		return CLI_USAGE;
	}
	if (cli_srq_check("ud", &o.srq))
		return CLI_USAGE;
	if (!o.conn.port)
		o.conn.port = o.conn.cm ? RK_UD_CM_PORT : RK_DEFAULT_PORT;
	cli_srq_fill(&o.srq, &so);
	res = malloc(sizeof(*res)); /* about 7 KiB: off the stack */
	if (!res)
		return cli_fail(-ENOMEM);
	ret = rk_ud_run(&(struct rk_ud_opts){
				CLI_CONN_FIELDS(&o.conn, &o.dev, host),
				.wait_ms = (int)o.conn.wait * 1000, .size = (uint32_t)o.size,
				.count = (uint32_t)o.count, .clients = (int)o.clients,
				.events = o.events, .traffic = o.traffic,
				.on_event = o.json ? NULL : on_event, .arg = &o,
				.srq = o.srq.srq, .xrc = o.srq.xrc,
				.srq_opts = so},
			res);
	if (o.json)
		cli_json_print(report_json(&o, res, ret));
	else
		report_text(&o, res, ret);
	free(res);
	return ret ? CLI_FAILED : CLI_OK;
}
