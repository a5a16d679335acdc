/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit memserver: remote memory for the rkblk module (and any client of
 * memproto.h); the engine is rk_memserver_*(), this file parses options and
 * prints its status. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"

struct memserver_opts {
	uint64_t port;
	const char *bind;
	const char *device;
	uint64_t max_size;
	uint64_t max_clients;
	uint64_t keep;
	struct cli_opt_list allow;
	const char *state_dir;
	struct cli_mem_opts mem;
	bool json;
	const char *inject;
};

static const char usage_text[] =
	"rdmakit memserver [-p PORT] [--bind ADDR] [--max-size SIZE] [--max-clients N] "
	"[--keep SEC] [--allow CIDR]... [--state-dir DIR] [--mem KIND] [--odp] [-d DEV] [--json]\n"
	"                          [--inject FAULT]";
static const char description[] =
	"Serve memory to remote-memory clients (the rkblk module): each client session\n"
	"gets its own zeroed region of the size it asks, registered for RDMA READ and WRITE,\n"
	"shared by all its queues and kept --keep seconds after its last connection closes.\n"
	"Runs until SIGINT or SIGTERM; prints its status then, and on SIGUSR1.";

static void when(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!t || !gmtime_r(&t, &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void queues_str(uint64_t mask, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int q = 0; q < 64 && n < len; q++)
		if (mask & (1ull << q))
			n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", q);
}

static void counters_text(const struct rk_memserver_status *st)
{
	printf("bytes moved: the device ports' data counters since the server started (all of the "
	       "port's traffic; one-sided RDMA is not seen per session):\n");
	if (!st->ncounters)
		printf("  no RDMA device port found\n");
	for (int i = 0; i < st->ncounters; i++) {
		const struct rk_memserver_counters *c = &st->counters[i];

		if (c->available)
			printf("  %s port %u: sent %" PRIu64 " bytes, received %" PRIu64 " bytes\n",
			       c->device, c->port, c->xmit_bytes, c->rcv_bytes);
		else if (c->has_packets)
			printf("  %s port %u: no data counters on this device; packets sent %" PRIu64
			       ", received %" PRIu64 " (hw_counters sent_pkts, rcvd_pkts)\n",
			       c->device, c->port, c->sent_packets, c->rcvd_packets);
		else
			printf("  %s port %u: not available (no counters/port_xmit_data and "
			       "port_rcv_data on this device)\n", c->device, c->port);
	}
}

static void status_text(const struct rk_memserver_status *st)
{
	char t1[32], t2[32], q[200];

	when(st->started, t1, sizeof(t1));
	printf("memserver on port %u since %s: %d session%s, %u connection%s, %" PRIu64
	       " bytes held\n", st->port, t1, st->nsessions, st->nsessions == 1 ? "" : "s",
	       st->connections, st->connections == 1 ? "" : "s", st->bytes);
	printf("  sessions made %" PRIu64 ", accepted %" PRIu64 ", rejected %" PRIu64
	       ", disconnected %" PRIu64 ", expired %" PRIu64 "\n", st->sessions_made,
	       st->accepted, st->rejected, st->disconnected, st->expired);
	for (int i = 0; i < st->nsessions; i++) {
		const struct rk_memserver_session_info *s = &st->sessions[i];

		when(s->created, t1, sizeof(t1));
		when(s->idle_since, t2, sizeof(t2));
		queues_str(s->queue_mask, q, sizeof(q));
		printf("  session %016" PRIx64 "  client %s  size %" PRIu64 " (%s)  queues %u%s%s%s  "
		       "created %s  idle since %s%s\n", s->id, s->client, s->size,
		       cli_mem_text(s->mem), s->queues,
		       s->queues ? " (" : "", q, s->queues ? ")" : "", t1, t2,
		       s->adopted ? "  (adopted from --state-dir)" : "");
	}
	counters_text(st);
	fflush(stdout);
}

static json_object *when_json(time_t t)
{
	char buf[32];

	if (!t)
		return NULL;
	when(t, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static json_object *session_json(const struct rk_memserver_session_info *s)
{
	json_object *j = json_object_new_object(), *q = json_object_new_array();
	char id[20];

	snprintf(id, sizeof(id), "%016" PRIx64, s->id);
	cli_add_str(j, "id", id);
	cli_add_str(j, "client", s->client);
	cli_add_int(j, "size", (int64_t)s->size);
	cli_add_str(j, "memory", rk_mem_kind_name(s->mem));
	for (int i = 0; i < 64; i++)
		if (s->queue_mask & (1ull << i))
			json_object_array_add(q, json_object_new_int(i));
	json_object_object_add(j, "queues_connected", q);
	json_object_object_add(j, "created", when_json(s->created));
	json_object_object_add(j, "idle_since", when_json(s->idle_since));
	json_object_object_add(j, "expires", when_json(s->expires));
	cli_add_bool(j, "adopted", s->adopted);
	return j;
}

static json_object *counters_json(const struct rk_memserver_status *st)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < st->ncounters; i++) {
		const struct rk_memserver_counters *c = &st->counters[i];
		json_object *j = json_object_new_object();

		cli_add_str(j, "device", c->device);
		cli_add_int(j, "port", c->port);
		cli_add_bool(j, "available", c->available);
		if (c->available) {
			cli_add_int(j, "xmit_bytes", (int64_t)c->xmit_bytes);
			cli_add_int(j, "rcv_bytes", (int64_t)c->rcv_bytes);
		}
		if (c->has_packets) {
			cli_add_int(j, "sent_packets", (int64_t)c->sent_packets);
			cli_add_int(j, "rcvd_packets", (int64_t)c->rcvd_packets);
		}
		json_object_array_add(a, j);
	}
	return a;
}

/* On SIGUSR1 a record, printed now; at the end the outcome (final). */
static void status_json(const struct rk_memserver_status *st, bool final)
{
	json_object *doc = json_object_new_object(), *ss = json_object_new_array();
	json_object *tot = json_object_new_object();

	cli_add_int(doc, "port", st->port);
	json_object_object_add(doc, "started", when_json(st->started));
	for (int i = 0; i < st->nsessions; i++)
		json_object_array_add(ss, session_json(&st->sessions[i]));
	json_object_object_add(doc, "sessions", ss);
	cli_add_int(tot, "sessions", st->nsessions);
	cli_add_int(tot, "connections", (int)st->connections);
	cli_add_int(tot, "bytes", (int64_t)st->bytes);
	cli_add_int(tot, "sessions_made", (int64_t)st->sessions_made);
	cli_add_int(tot, "accepted", (int64_t)st->accepted);
	cli_add_int(tot, "rejected", (int64_t)st->rejected);
	cli_add_int(tot, "disconnected", (int64_t)st->disconnected);
	cli_add_int(tot, "expired", (int64_t)st->expired);
	json_object_object_add(doc, "totals", tot);
	cli_add_str(doc, "port_counters_note",
		    "device port data counters since the server started, all traffic of the port, "
		    "in bytes (the counters count 4-byte words); one-sided RDMA is not seen per "
		    "session; sent_packets/rcvd_packets: the hw_counters packet counts, where the "
		    "device has no data counters (rxe)");
	json_object_object_add(doc, "port_counters", counters_json(st));
	if (final)
		cli_json_print(doc);
	else
		cli_json_now(doc);
}

static void status(struct rk_memserver *srv, const struct memserver_opts *o, bool final)
{
	struct rk_memserver_status *st;

	if (rk_memserver_status(srv, &st)) {
		fprintf(stderr, "rdmakit memserver: no memory for the status\n");
		return;
	}
	if (o->json)
		status_json(st, final);
	else
		status_text(st);
	rk_memserver_status_free(st);
}

static void print_status(struct rk_memserver *srv, void *arg)
{
	status(srv, arg, false);
}

static int parse_allow(const struct cli_opt_list *l, struct rk_cidr *out)
{
	char why[160];

	for (int i = 0; i < l->n; i++) {
		if (rk_cidr_parse(l->v[i], &out[i], why, sizeof(why))) {
			fprintf(stderr, "rdmakit memserver: option --allow: %s\n", why);
			return CLI_USAGE;
		}
	}
	return -1;
}

/* --inject's values (rk_memserver_inject_parse()). */
static const char *const faults[] = {"region-magic", "region-length", "region-short",
				     "region-wrap", "wrong-rkey", "read-only", "register-fail",
				     NULL};

int cmd_memserver(int argc, char **argv)
{
	struct memserver_opts o = {.port = RK_MEM_DEFAULT_PORT, .max_size = 1ull << 30,
				   .max_clients = 16, .keep = 60, .mem = {.mem = "host"}};
	enum rk_mem_kind kind;
	const struct cli_opt opts[] = {
		CLI_PORT_OPT(&o.port, "RDMA CM port to listen on"),
		{"bind", 0, CLI_OPT_STRING, &o.bind, 0, 0, "ADDR",
		 "listen on this local address only", .def = "every address, IPv4 and IPv6"},
		{"max-size", 0, CLI_OPT_SIZE, &o.max_size, 4096, UINT64_MAX, "SIZE",
		 "largest region one session may ask for (k, M, G)"},
		{"max-clients", 0, CLI_OPT_COUNT, &o.max_clients, 0, 1000000, "N",
		 "sessions at once; 0: no limit"},
		{"keep", 0, CLI_OPT_COUNT, &o.keep, 0, 86400 * 7, "SEC",
		 "keep a session this long after its last connection closed"},
		{"allow", 0, CLI_OPT_LIST, &o.allow, 0, 0, "CIDR",
		 "accept only clients in this block (IPv4 or IPv6; repeatable)"},
		{"state-dir", 0, CLI_OPT_STRING, &o.state_dir, 0, 0, "DIR",
		 "keep regions in files here, adopted again after a restart"},
		{"device", 'd', CLI_OPT_STRING, &o.device, 0, 0, "DEV",
		 "serve only requests that come through this RDMA device"},
		CLI_MEM_OPTS(&o.mem, cli_mem_kinds_no_dm,
			     "the sessions' memory: host (anonymous), hugepage (MAP_HUGETLB, from "
			     "the kernel's pool), memfd, memfd-huge, auto (hugepage while the pool "
			     "has room for a session, else host); not with --state-dir"),
		{"json", 'j', CLI_OPT_FLAG, &o.json, 0, 0, NULL, "status as JSON"},
		{"inject", 0, CLI_OPT_STRING, &o.inject, 0, 0, "FAULT",
		 "for tests of clients: every region message gets this wrong: region-magic, "
		 "region-length, region-short, region-wrap, wrong-rkey; read-only: the region "
		 "registered without remote write", .choices = faults},
		CLI_OPT_END,
	};
	struct rk_cidr allow[CLI_OPT_LIST_MAX];
	struct rk_memserver_opts so;
	struct rk_memserver *srv;
	char why[200];
	int first, ret;

	ret = cli_parse("memserver", usage_text, description, opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	if (first < argc) {
		fprintf(stderr, "rdmakit memserver: takes no HOST ('%s')\n", argv[first]);
		return CLI_USAGE;
	}
	ret = parse_allow(&o.allow, allow);
	if (ret >= 0)
		return ret;
	if (cli_mem_parse("memserver", &o.mem, ((1u << (RK_MEM_AUTO + 1)) - 1) & ~(1u << RK_MEM_DM),
			  &kind))
		return CLI_USAGE;
	so = (struct rk_memserver_opts){
		.bind = o.bind, .port = (uint16_t)o.port, .device = o.device,
		.max_size = o.max_size, .max_clients = (unsigned int)o.max_clients,
		.keep_s = (unsigned int)o.keep, .allow = allow, .nallow = o.allow.n,
		.state_dir = o.state_dir, .mem = kind, .odp = o.mem.odp, .signals = true,
		.on_status = print_status, .arg = &o};
	if (o.inject)
		rk_memserver_inject_parse(o.inject, &so.inject); /* a choice: it parses */
	if (rk_memserver_check(&so, why, sizeof(why))) {
		fprintf(stderr, "rdmakit memserver: %s\n", why);
		return CLI_USAGE;
	}
	if (!getenv("RDMAKIT_LOG"))
		rk_log_set_level(RK_LOG_INFO);
	ret = rk_memserver_create(&so, &srv);
	if (ret)
		return cli_fail(ret);
	if (o.inject)
		rk_warn("--inject %s: a fault on purpose, for tests of clients", o.inject);
	ret = rk_memserver_run(srv);
	status(srv, &o, true);
	rk_memserver_destroy(srv);
	return ret ? cli_fail(ret) : CLI_OK;
}
