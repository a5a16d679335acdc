/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit ping: ping-pong with round-trip statistics, in three protocols
 * (the engines are in the library: ping.h, rping.h, pingpong.h):
 *   native    rdmakit to rdmakit: SEND a ping, SEND it back, over the TCP
 *             exchange or RDMA CM;
 *   rping     librdmacm's rping: the client advertises its buffers, the
 *             server RDMA-READs the ping and RDMA-WRITEs the pong back;
 *   pingpong  ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong and
 *             ibv_srq_pingpong: their TCP text exchange, then SEND/RECV turns
 *             (RC, UC or UD; RC QPs over one SRQ).
 * Each protocol's own options are accepted in its mode, so rdmakit stands in
 * for rping or ibv_*_pingpong in existing scripts. This file parses options,
 * calls one engine and prints its result. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_gates.h"
#include "cli_json.h"
#include "cli_report.h"
#include "cli_serve.h"

enum proto { PROTO_NATIVE, PROTO_RPING, PROTO_PINGPONG };

struct ping_opts {
	struct cli_dev_opts dev;
	struct cli_conn_opts conn;
	struct rk_traffic traffic; /* from conn.traffic */
	const char *proto;
	bool client; /* rping -c */
	const char *addr; /* rping -a */
	const char *source; /* rping -I */
	bool debug; /* rping -d */
	const char *transport;
	uint64_t size;
	uint64_t count;
	uint64_t interval_ms; /* -I SEC */
	uint64_t mtu;
	uint64_t rx_depth;
	uint64_t num_qp; /* --transport srq: QPs (ibv_srq_pingpong -q) */
	bool validate;
	bool verbose;
	bool events;
	bool json;
	bool persist;
	struct cli_gate_opts gate; /* --max-rtt-p99 */
};

/* What the printing needs besides the engine's result. */
struct ping_view {
	const struct ping_opts *o;
	enum proto proto;
	enum rk_transport transport;
	uint32_t srq_qps; /* pingpong --transport srq: its QPs; 0 otherwise */
	const char *who;
	struct rk_gates gates;
	bool listened; /* the server listened: a failure after it is a client's */
};

/* In the order of enum proto and enum rk_transport (srq: RC over an SRQ). */
static const char *const proto_names[] = {"native", "rping", "pingpong", NULL};
static const char *const pp_transports[] = {"rc", "uc", "ud", "srq", NULL};
#define PP_SRQ 3

/* One verbose line per round. */
static void print_round(const struct ping_view *v, const struct rk_ping_result *res,
			const struct rk_ping_round *rd)
{
	const char *note = NULL;
	char prev[48];

	if (rd->unchecked_first)
		note = "first ping (the client's own content)";
	else if (rd->checked)
		note = v->proto == PROTO_RPING && v->o->conn.server ? "checked: rping's pattern" :
								 "checked";
	if (res->count)
		printf("%s: round %" PRIu64 "/%" PRIu64, v->who, rd->index + 1, res->count);
	else
		printf("%s: round %" PRIu64, v->who, rd->index + 1);
	printf(": %u bytes, %s %.1f us%s%s", rd->size ? rd->size : res->size,
	       v->o->conn.server ? "served in" : "rtt", rd->us, note ? ", " : "", note ? note : "");
	if (rd->data)
		printf(" [%s]", rk_preview(rd->data, rd->len, prev, sizeof(prev)));
	printf("\n");
}

static void print_connected(const struct ping_view *v, const struct rk_ping_result *r)
{
	char t[128], peer[64];

	cli_traffic_str(&v->o->traffic, t, sizeof(t));
	cli_peer_qp_str(r->peer_qpn, peer, sizeof(peer));
	if (v->proto == PROTO_NATIVE)
		printf("%s: connected to %s (%s): QP 0x%x <-> %s, path MTU %d%s; %" PRIu64
		       " pings of %u bytes%s\n",
		       v->who, r->peer, r->cm ? "RDMA CM" : "TCP exchange", r->qpn, peer,
		       r->path_mtu, t, r->count, r->size, r->validate ? ", data checked" : "");
	else if (v->proto == PROTO_RPING)
		printf("%s: connected to %s (RDMA CM, rping protocol): QP 0x%x <-> %s, "
		       "path MTU %d%s\n",
		       v->who, r->peer, r->qpn, peer, r->path_mtu, t);
	else
		printf("%s: %s QP 0x%x <-> peer QP 0x%x%s, path MTU %d%s; %" PRIu64
		       " exchanges of %u bytes%s\n",
		       v->who, rk_transport_str(v->transport), r->qpn, r->peer_qpn,
		       r->qps ? " (the first of the QPs over one SRQ)" : "", r->path_mtu, t,
		       r->count, r->size, r->validate ? ", data checked" : "");
}

static void print_listening(const struct ping_view *v)
{
	uint64_t port = v->o->conn.port;

	if (v->proto == PROTO_NATIVE)
		cli_waiting_text("server", 0, "ping client", port, v->o->conn.cm);
	else if (v->proto == PROTO_RPING)
		printf("server: waiting for an rping client on port %" PRIu64 " (RDMA CM)\n", port);
	else
		printf("server: waiting for an ibv_%s_pingpong client on TCP port %" PRIu64 "\n",
		       pp_transports[v->srq_qps ? PP_SRQ : v->transport], port);
}

/* pingpong: both sides' addresses, as ibv_*_pingpong prints them. */
static void print_addresses(const struct ping_view *v, const struct rk_ping_result *r)
{
	union ibv_gid mine = {0};
	char gid[64];

	if (r->has_gid)
		mine = r->gid.gid;
	printf("%s: local address: LID %u, QPN 0x%06x, PSN 0x%06x, GID %s (index %d)\n", v->who,
	       r->lid, r->qpn, r->psn, rk_gid_str(&mine, gid, sizeof(gid)),
	       r->has_gid ? (int)r->gid.index : -1);
	printf("%s: %s at %s: LID %u, QPN 0x%06x, PSN 0x%06x, GID %s\n", v->who,
	       v->o->conn.server ? "client" : "server", r->peer, r->peer_lid, r->peer_qpn,
	       r->peer_psn, rk_gid_str(&r->peer_gid, gid, sizeof(gid)));
	if (r->qps > 1)
		printf("%s: and %u more QPs each side, the same but for QPN and PSN\n", v->who,
		       r->qps - 1);
}

/* The engines' progress callback: text lines (none with --json). */
static void on_progress(const struct rk_ping_progress *p, void *arg)
{
	struct ping_view *v = arg;

	if (p->stage == RK_PING_LISTENING)
		v->listened = true;
	if (v->o->json)
		return;
	switch (p->stage) {
	case RK_PING_LISTENING:
		print_listening(v);
		break;
	case RK_PING_ADDRESSES:
		print_addresses(v, p->result);
		break;
	case RK_PING_CONNECTED:
		print_connected(v, p->result);
		break;
	case RK_PING_ROUND:
		if (v->o->verbose)
			print_round(v, p->result, p->round);
		break;
	}
	fflush(stdout);
}

/* ---- output ---- */

static void summary_text(const struct ping_view *v, const struct rk_ping_result *r)
{
	struct rk_rtt_stats st;
	const char *what = v->o->conn.server ? "round" : "rtt";

	if (!rk_ping_result_stats(r, &st))
		printf("%s: %zu round%s of %u bytes, %s min %.1f / median %.1f / p99 %.1f / max "
		       "%.1f us (mean %.1f)\n",
		       v->who, r->rounds, r->rounds == 1 ? "" : "s", r->size, what, st.min,
		       st.median, st.p99, st.max, st.mean);
	cli_counters_text(&r->counters, "");
	if (r->error) {
		printf("%s: FAILED after %zu round%s (%s)\n", v->who, r->rounds,
		       r->rounds == 1 ? "" : "s", rk_strerror(r->error));
		return;
	}
	printf("%s: %s%s%s%s%s: OK\n", v->who,
	       r->first_unchecked ? "data checked in every round after the first (the client's "
				    "own content; each later ping is the pong sent back)" :
	       r->checked ? "data checked in every round" :
	       v->proto == PROTO_PINGPONG ? "data not checked (use -c)" : "data not checked (use -V)",
	       r->peer_left ? "; the client disconnected, as rping does" : "",
	       r->rounds ? "" : "; no rounds",
	       !r->stopped ? "" : v->o->conn.server ? "; the client stopped before its count" :
						      "; stopped by ",
	       r->stopped && !v->o->conn.server ? cli_stop_name() : "");
}

static void add_stats(json_object *doc, const char *key, const struct rk_ping_result *r)
{
	struct rk_rtt_stats st;
	json_object *t;

	if (rk_ping_result_stats(r, &st))
		return;
	t = json_object_new_object();
	cli_add_double(t, "min", st.min);
	cli_add_double(t, "median", st.median);
	cli_add_double(t, "p99", st.p99);
	cli_add_double(t, "max", st.max);
	cli_add_double(t, "mean", st.mean);
	json_object_object_add(doc, key, t);
}

static void add_connection(json_object *doc, const struct rk_ping_result *r)
{
	cli_add_str(doc, "device", r->device);
	cli_add_str(doc, "peer", r->peer);
	cli_add_int(doc, "qpn", r->qpn);
	cli_add_peer_qpn(doc, "peer_qpn", r->peer_qpn);
	cli_add_int(doc, "path_mtu", r->path_mtu);
	if (r->has_gid)
		json_object_object_add(doc, "gid", cli_gid_json(&r->gid));
}

static json_object *summary_json(const struct ping_view *v, const struct rk_ping_result *r)
{
	json_object *doc = json_object_new_object();

	cli_add_str(doc, "role", v->who);
	cli_add_str(doc, "proto", proto_names[v->proto]);
	cli_add_str(doc, "transport", rk_transport_str(v->transport));
	if (v->srq_qps)
		cli_add_int(doc, "srq_qps", v->srq_qps);
	cli_add_str(doc, "connection", r->cm ? "cm" : "tcp");
	json_object_object_add(doc, "traffic", cli_traffic_json(&v->o->traffic));
	if (r->device[0])
		add_connection(doc, r);
	cli_add_int(doc, "size", r->size);
	cli_add_int(doc, "count", (int64_t)r->count);
	cli_add_int(doc, "rounds", (int64_t)r->rounds);
	cli_add_bool(doc, "validated", r->checked);
	if (r->bad_offset >= 0) {
		cli_add_int(doc, "bad_round", (int64_t)r->bad_round + 1);
		cli_add_int(doc, "bad_offset", r->bad_offset);
	}
	add_stats(doc, v->o->conn.server ? "round_us" : "rtt_us", r);
	if (r->peer_left)
		cli_add_bool(doc, "peer_disconnected", true);
	if (r->first_unchecked)
		cli_add_bool(doc, "first_round_unchecked", true);
	if (r->stopped && v->o->conn.server)
		cli_add_bool(doc, "client_stopped", true);
	else if (r->stopped)
		cli_add_str(doc, "stopped_by", cli_stop_name());
	json_object_object_add(doc, "counters", cli_counters_json(&r->counters));
	cli_add_result(doc, r->error);
	return doc;
}

static const char usage_text[] =
	"rdmakit ping --server [options]  |  rdmakit ping HOST [options]\n"
	"       rdmakit ping --proto rping -s|-c [-a ADDR] [-I ADDR] [-p PORT] [-C COUNT] [-S SIZE]\n"
	"                    [-t TOS] [-P] [-V] [-v] [-d]\n"
	"       rdmakit ping --proto pingpong [--transport rc|uc|ud|srq] [-d DEV] [-i PORT]\n"
	"                    [-g IDX] [-p PORT] [-s SIZE] [-n ITERS] [-m MTU] [-q NUM_QP] [HOST]";
static const char description[] =
	"RC ping-pong with round-trip statistics (min, median, p99, max).\n"
	"  --proto native    (default) rdmakit to rdmakit: the client SENDs a ping, the\n"
	"                    server SENDs it back; TCP exchange, or RDMA CM with --cm\n"
	"  --proto rping     librdmacm's rping: the client advertises its buffers, the\n"
	"                    server RDMA-READs the ping and RDMA-WRITEs the pong back;\n"
	"                    takes rping's options (-s server, -c client, -a, -I, -p, -C, -S,\n"
	"                    -t, -P, -V, -v, -d)\n"
	"  --proto pingpong  ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong and\n"
	"                    ibv_srq_pingpong (--transport rc|uc|ud|srq): their TCP text\n"
	"                    exchange, then SEND/RECV turns; takes their options (-d, -i, -g,\n"
	"                    -p, -s, -n, -m, -r, -l, -e, -c, and srq's -q); no HOST means server\n"
	"Each mode's options are listed with --proto MODE --help.";
static const char epilog[] =
	"threshold (client, every mode): --max-rtt-p99 US: the round-trip time p99 (the\n"
	"summary's p99) at most US microseconds; a figure equal to the limit meets it.\n"
	CLI_EXIT_HELP;

/* --proto picks the option table, so it is read first. */
static const char *find_proto(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--proto") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--proto=", 8))
			return argv[i] + 8;
	}
	return "native";
}

/* The role and positional arguments each mode takes. -1 to go on, or
 * CLI_USAGE after saying what is wrong; *host_p is the server to reach. */
static int check_rping_args(struct ping_opts *o, const char **host_p)
{
	const char *host = *host_p;

	if (o->conn.server == o->client) {
		fprintf(stderr, "rdmakit ping: --proto rping needs -s (server) or -c (client), as "
				"rping does\n");
		return CLI_USAGE;
	}
	if (o->conn.server && host) {
		fprintf(stderr, "rdmakit ping: the rping server listens on -a ADDR, not on '%s'\n",
			host);
		return CLI_USAGE;
	}
	if (o->conn.server && o->source) {
		fprintf(stderr, "rdmakit ping: option --source (-I) is the rping client's; the "
				"server listens on -a ADDR\n");
		return CLI_USAGE;
	}
	if (!o->conn.server && host && o->addr) {
		fprintf(stderr, "rdmakit ping: give the server once: -a %s or %s\n", o->addr, host);
		return CLI_USAGE;
	}
	*host_p = o->conn.server ? o->addr : host ? host : o->addr;
	if (!o->conn.server && !*host_p) {
		fprintf(stderr, "rdmakit ping: the rping client needs the server's address "
				"(-a ADDR)\n");
		return CLI_USAGE;
	}
	return -1;
}

static int check_pp_args(struct ping_view *v, struct ping_opts *o, const char *host)
{
	/* The parser took only these values. */
	int t = cli_opt_choice(pp_transports, o->transport);

	v->transport = t == PP_SRQ ? RK_RC : (enum rk_transport)t;
	v->srq_qps = t == PP_SRQ ? (uint32_t)o->num_qp : 0;
	if (v->srq_qps && o->count < o->num_qp) {
		fprintf(stderr,
			"rdmakit ping: option --iters: %" PRIu64 " exchanges are fewer than the "
			"%" PRIu64 " QPs (-q), and the client starts with one on every QP\n",
			o->count, o->num_qp);
		return CLI_USAGE;
	}
	if (v->srq_qps && o->interval_ms) {
		fprintf(stderr, "rdmakit ping: option --interval: no pause between rounds with "
				"--transport srq, whose QPs ping at once\n");
		return CLI_USAGE;
	}
	if (!rk_mtu_from_bytes((int)o->mtu)) {
		fprintf(stderr, "rdmakit ping: option --mtu: %" PRIu64 " is not 256, 512, 1024, "
				"2048 or 4096\n", o->mtu);
		return CLI_USAGE;
	}
	if (o->conn.server && host)
		return cli_check_role("ping", true, host);
	o->conn.server = !host;
	return -1;
}

static int check_args(struct ping_view *v, struct ping_opts *o, const char **host_p)
{
	if (v->proto == PROTO_RPING)
		return check_rping_args(o, host_p);
	if (v->proto == PROTO_PINGPONG)
		return check_pp_args(v, o, *host_p);
	return cli_check_role("ping", o->conn.server, *host_p);
}

/* ---- thresholds ---- */

/* --max-rtt-p99: the client's. -1 to go on, or CLI_USAGE after saying why. */
static int check_gates(struct ping_view *v)
{
	if (cli_gates_parse("ping", &v->o->gate, &v->gates) != CLI_OK)
		return CLI_USAGE;
	if (v->o->conn.server && rk_gates_any(&v->gates)) {
		fprintf(stderr, "rdmakit ping: the client grades the round trips it timed: give "
				"--max-rtt-p99 to the client\n");
		return CLI_USAGE;
	}
	return -1;
}

/* Grade a run that worked against the thresholds: a line each (text), or
 * the document's "gates" and "gates_passed". The exit status. */
static int grade(const struct ping_view *v, const struct rk_ping_result *r, int status,
		 json_object *doc)
{
	struct rk_gate_figures f = {0};
	struct rk_rtt_stats st;
	json_object *arr = doc ? json_object_new_array() : NULL;
	int checks = 0, failed = 0;

	if (!rk_gates_any(&v->gates)) {
		json_object_put(arr);
		return status;
	}
	if (status == CLI_OK) {
		f.has_rtt = !rk_ping_result_stats(r, &st);
		f.rtt_p99_us = f.has_rtt ? st.p99 : 0;
		failed = cli_gates_grade(&v->gates, &f, 0, v->who, stdout, arr, &checks);
	}
	return cli_gates_end(v->who, status, checks, failed, doc ? NULL : stdout, doc, arr);
}

struct ping_run {
	struct ping_view *v;
	const char *host;
};

/* Run the mode's engine and print its result: the exit status, or
 * CLI_STOPPED when a stop signal ended a --persist server's wait. */
static int run(void *arg, bool *listened)
{
	struct ping_view *v = ((struct ping_run *)arg)->v;
	const char *host = ((struct ping_run *)arg)->host;
	const struct ping_opts *o = v->o;
	struct rk_ping_opts po = {
		CLI_CONN_FIELDS(&o->conn, &o->dev, host), .accept_timeout_ms = CLI_WAIT_MS(&o->conn),
		.transport = v->transport, .srq_qps = v->srq_qps, .size = (uint32_t)o->size,
		.count = o->count,
		.interval_ms = (unsigned)o->interval_ms, .mtu = (int)o->mtu,
		.rx_depth = (uint32_t)o->rx_depth, .validate = o->validate, .events = o->events,
		.traffic = o->traffic, .source = o->source, .progress = on_progress,
		.arg = (void *)v,
	};
	struct rk_ping_result res;
	json_object *doc = NULL;
	/* Ctrl-C ends a client with its summary, as ping(8)'s (rping's pings
	 * until then by default); pingpong's exchange has no way to say so. */
	bool stoppable = v->proto != PROTO_PINGPONG && !o->conn.server;
	int ret, status;

	v->listened = false;
	if (stoppable)
		cli_stop_signals(true);
	if (v->proto == PROTO_NATIVE)
		ret = rk_ping_run(&po, &res);
	else if (v->proto == PROTO_RPING)
		ret = rk_rping_run(&po, &res);
	else
		ret = rk_pingpong_run(&po, &res);
	if (stoppable)
		cli_stop_signals(false);
	*listened = v->listened;
	if (ret == -EINTR && cli_stop_signal && o->conn.server) {
		rk_ping_result_free(&res);
		return CLI_STOPPED;
	}
	if (o->json)
		doc = summary_json(v, &res);
	else
		summary_text(v, &res);
	status = grade(v, &res, ret ? CLI_FAILED : CLI_OK, doc);
	if (doc)
		cli_json_print(doc);
	rk_ping_result_free(&res);
	return status;
}

#define OPT_PROTO(o)                                                                             \
	{"proto", 0, CLI_OPT_STRING, &(o)->proto, 0, 0, "MODE",                                 \
	 "native, rping or pingpong (each takes its own options)", .choices = proto_names,       \
	 .def = "native"}
/* Rows of every mode; the letters of --interval, --timeout, --json and
 * --persist are the mode's (rping's -I is its source address, -t its TOS, -P
 * its persistent server; ibv_rc_pingpong's -t is --ts, -j --dm). */
#define OPT_COMMON(o, interval_key, timeout_key, json_key, persist_key)                          \
	{"interval", (interval_key), CLI_OPT_SECONDS, &(o)->interval_ms, 0, 60000, "SEC",        \
	 "client: pause between rounds in seconds, as ping -i (0.2: 200 ms)",                    \
	 .def = "0: no pause"},                                                                  \
		{"verbose", 'v', CLI_OPT_FLAG, &(o)->verbose, 0, 0, NULL, "print every round"},    \
		{"events", 'e', CLI_OPT_FLAG, &(o)->events, 0, 0, NULL,                            \
		 "sleep on a completion channel instead of polling"},                              \
		CLI_WAIT_OPTS(&(o)->conn, (timeout_key)),                                         \
		CLI_JSON_OPT_KEY(&(o)->json, (json_key)),                                         \
		CLI_PERSIST_OPT_KEY(&(o)->persist, (persist_key)), CLI_RTT_GATE_OPT(&(o)->gate)

/* Parse with the option table of v->proto, after its defaults: those of
 * the program it speaks for. -1 to go on, or the exit code. */
static int parse_mode(const struct ping_view *v, struct ping_opts *po, int argc, char **argv,
		      int *first_p)
{
	struct ping_opts o = *po;
	const struct cli_opt native_opts[] = {
		OPT_PROTO(&o),
		CLI_CONN_OPTS(&o.conn),
		CLI_DEV_OPTS(&o.dev),
		{"size", 's', CLI_OPT_SIZE, &o.size, 1, RK_PING_MAX_SIZE, "BYTES",
		 "client: bytes per ping"},
		{"count", 'n', CLI_OPT_COUNT, &o.count, 1, 1000000000, "N", "client: pings"},
		{"validate", 'V', CLI_OPT_FLAG, &o.validate, 0, 0, NULL,
		 "check every byte of every ping and pong"},
		OPT_COMMON(&o, 'I', 't', 'j', 0),
		CLI_OPT_END,
	};
	const struct cli_opt rping_opts[] = {
		OPT_PROTO(&o),
		{"server", 's', CLI_OPT_FLAG, &o.conn.server, 0, 0, NULL,
		 "be the server (rping -s)"},
		{"client", 'c', CLI_OPT_FLAG, &o.client, 0, 0, NULL, "be the client (rping -c)"},
		{"addr", 'a', CLI_OPT_STRING, &o.addr, 0, 0, "ADDR",
		 "client: the server's address; server: the address to listen on"},
		{"source", 'I', CLI_OPT_STRING, &o.source, 0, 0, "ADDR",
		 "client: the local address to connect from (rping -I)"},
		CLI_PORT_OPT(&o.conn.port, "RDMA CM port"),
		CLI_TRAFFIC_OPTS_KEYS(&o.conn.traffic, 't', 0, CLI_TCLASS_CM_ONLY),
		{"debug", 'd', CLI_OPT_FLAG, &o.debug, 0, 0, NULL,
		 "the library's debug messages on stderr (rping -d)"},
		{"count", 'C', CLI_OPT_COUNT, &o.count, 0, 1000000000, "N",
		 "pings", .def = "0: client forever; server until the client leaves"},
		{"size", 'S', CLI_OPT_SIZE, &o.size, RK_RPING_MIN_SIZE, RK_RPING_MAX_SIZE, "BYTES",
		 "ping size (server: the largest it serves)"},
		{"validate", 'V', CLI_OPT_FLAG, &o.validate, 0, 0, NULL,
		 "client: compare each pong with its ping; server: check rping's pattern"},
		OPT_COMMON(&o, 0, 0, 'j', 'P'),
		CLI_OPT_END,
	};
	const struct cli_opt pp_opts[] = {
		OPT_PROTO(&o),
		{"transport", 0, CLI_OPT_STRING, &o.transport, 0, 0, "T",
		 "rc, uc, ud or srq: as ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong, "
		 "ibv_srq_pingpong (RC QPs over one SRQ)",
		 .choices = pp_transports},
		{"server", 0, CLI_OPT_FLAG, &o.conn.server, 0, 0, NULL,
		 "be the server (as giving no HOST)"},
		CLI_PORT_OPT(&o.conn.port, "TCP port of the exchange"),
		CLI_TRAFFIC_OPTS_KEYS(&o.conn.traffic, 0, 'l', CLI_TCLASS_NO_CM),
		CLI_DEV_OPTS(&o.dev),
		/* Their long names for -d and -g, so their scripts run as they are. */
		{"ib-dev", 0, CLI_OPT_STRING, &o.dev.device, 0, 0, "DEV", "the same as --device"},
		{"gid-idx", 0, CLI_OPT_INT, &o.dev.gid_index, -1, 255, "IDX",
		 "the same as --gid-index"},
		{"size", 's', CLI_OPT_SIZE, &o.size, 1, RK_PING_MAX_SIZE, "BYTES",
		 "message size (both sides the same)", .def = "4096; 2048 with --transport ud"},
		{"iters", 'n', CLI_OPT_COUNT, &o.count, 1, 1000000000, "N",
		 "exchanges (both sides the same)"},
		{"mtu", 'm', CLI_OPT_COUNT, &o.mtu, 256, 4096, "BYTES", "path MTU (RC, UC)"},
		{"rx-depth", 'r', CLI_OPT_COUNT, &o.rx_depth, 1, 8192, "N",
		 "receives kept posted (srq: in the SRQ)"},
		{"num-qp", 'q', CLI_OPT_COUNT, &o.num_qp, 1, RK_PP_SRQ_MAX_QP, "N",
		 "--transport srq: QPs over the SRQ (both sides the same)"},
		{"chk", 'c', CLI_OPT_FLAG, &o.validate, 0, 0, NULL,
		 "check received data: the pong is the ping; the server: each ping after the "
		 "first is its last pong"},
		OPT_COMMON(&o, 'I', 0, 0, 0),
		/* Theirs that rdmakit does not do: refused by name, not taken as
		 * rdmakit's -t (--timeout) and -j (--json). */
		CLI_OPT_FOREIGN_ROW("ts", 't',
				    "-t/--ts (completion timestamps) is ibv_rc_pingpong's, not "
				    "rdmakit's; the timeout is --timeout SEC"),
		CLI_OPT_FOREIGN_ROW("dm", 'j',
				    "-j/--dm (device memory) is ibv_rc_pingpong's, not rdmakit "
				    "ping's (rdmakit rc --server --mem dm has it); JSON is --json"),
		CLI_OPT_FOREIGN_ROW("odp", 'o',
				    "-o/--odp is ibv_rc_pingpong's, not rdmakit ping's (rdmakit rc "
				    "and bench have --odp)"),
		CLI_OPT_FOREIGN_ROW("new_send", 'N',
				    "-N/--new_send is ibv_rc_pingpong's: rdmakit ping posts "
				    "with ibv_post_send (rdmakit bench --wr-api on has the "
				    "ibv_wr_* API)"),
		CLI_OPT_END,
	};
	int ret;

	switch (v->proto) {
	case PROTO_NATIVE: o.conn.port = RK_DEFAULT_PORT; o.size = 64; o.count = 10; break;
	case PROTO_RPING: o.conn.port = RK_RPING_DEFAULT_PORT; o.size = 64; o.count = 0; break;
	default: o.conn.port = RK_PP_DEFAULT_PORT; o.size = 4096; o.count = 1000; break;
	}
	ret = cli_parse_epilog("ping", usage_text, description, epilog,
			       v->proto == PROTO_NATIVE ? native_opts :
			       v->proto == PROTO_RPING ? rping_opts : pp_opts, argc, argv, first_p);
	/* Here, where the options' addresses are the table's. */
	if (ret < 0 && cli_traffic("ping", &o.conn.traffic, &o.traffic) != CLI_OK)
		ret = CLI_USAGE;
	if (ret < 0 && v->proto == PROTO_PINGPONG && cli_opts_given(&o.num_qp) &&
	    strcmp(o.transport, "srq")) {
		fprintf(stderr, "rdmakit ping: option --num-qp (-q) is ibv_srq_pingpong's: give "
				"--transport srq\n");
		ret = CLI_USAGE;
	}
	/* ibv_ud_pingpong's own default: a datagram is one packet. */
	if (ret < 0 && v->proto == PROTO_PINGPONG && !cli_opts_given(&o.size) &&
	    !strcmp(o.transport, "ud"))
		o.size = 2048;
	*po = o;
	return ret;
}

int cmd_ping(int argc, char **argv)
{
	struct ping_opts o = {
		.dev = CLI_DEV_OPTS_DEFAULT, .proto = find_proto(argc, argv), .conn.timeout = 10,
		.conn.traffic = CLI_TRAFFIC_OPTS_DEFAULT,
		.mtu = 1024, .rx_depth = 500, .transport = "rc", .num_qp = RK_PP_SRQ_DEFAULT_QPS,
	};
	struct ping_view v = {.o = &o};
	struct ping_run pr;
	const char *host;
	int first, ret = cli_opt_choice(proto_names, o.proto);

	v.proto = (enum proto)ret;
	if (ret < 0) {
		fprintf(stderr, "rdmakit ping: option --proto: '%s' is not native, rping or "
				"pingpong\n", o.proto);
		return CLI_USAGE;
	}
	ret = parse_mode(&v, &o, argc, argv, &first);
	if (ret >= 0)
		return ret;
	host = first < argc ? argv[first] : NULL;
	if (first < argc - 1) {
		fprintf(stderr, "rdmakit ping: one HOST only ('%s' is extra)\n", argv[first + 1]);
		return CLI_USAGE;
	}
	ret = check_args(&v, &o, &host);
	if (ret < 0)
		ret = check_gates(&v);
	if (ret >= 0)
		return ret;
	if (cli_persist_check("ping", o.persist, o.conn.server, o.conn.wait))
		return CLI_USAGE;
	if (o.debug)
		rk_log_set_level(RK_LOG_DEBUG);
	v.who = o.conn.server ? "server" : "client";
	pr.v = &v;
	pr.host = host;
	return cli_serve(v.who, o.json, o.persist, run, NULL, &pr);
}
