/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit bench: bandwidth, message rate and latency between a server and a
 * client, on the library's benchmark engine (bench.h). This file holds the
 * options and the run's flow; cli_bench_report.c prints the report. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_bench_perftest.h"
#include "cli_bench_report.h"
#include "cli_cmdline.h"
#include "cli_json.h"
#include "cli_gates.h"
#include "cli_serve.h"
#include "cli_srq.h"

struct bench_cli {
	const char *proto;    /* native or perftest */
	struct cli_dev_opts dev;
	struct cli_conn_opts conn;
	struct rk_traffic traffic; /* from conn.traffic */
	const char *test;
	const char *mode;
	const char *transport;
	const char *sizes;
	uint64_t iters;
	int64_t duration;     /* -1: not given; 0: until stopped */
	bool persist;         /* server: one client after another until stopped */
	uint64_t clients;     /* server: this many clients at once; 0: one */
	uint64_t interval_ms; /* soak: a record every this long (-I SEC); 0: none */
	uint64_t qps;
	uint64_t threads;
	bool bidir;
	uint64_t tx_depth, rx_depth, post_list, signal_every, cq_batch;
	int64_t inline_max;
	int64_t yield_after;
	uint64_t inflight;
	int64_t ack_timeout;
	int64_t rnr_retry;
	struct cli_srq_opts srq;
	const char *wr_api;
	struct cli_mem_opts mem;
	bool json;
	bool csv;
	struct cli_gate_opts gate;
};

static const char usage_text[] =
	"rdmakit bench --server [options]\n       rdmakit bench HOST [options]";
static const char description[] =
	"Bandwidth, message rate and latency between a server and a client, as perftest\n"
	"measures them (ib_send_bw, ib_write_lat, ...), in one command. The client says\n"
	"what runs; the server learns it and serves it. After every size the side that\n"
	"was written, read, sent to or operated on checks what arrived.\n"
	"  --op send|write|read|fetch-add|cmp-swap   --mode bw|lat\n"
	"  --transport rc|uc|ud (UC: send, write; UD: send)\n"
	"  --size 65536 | 2..8M (powers of two) | 64,4k,64k\n"
	"Bandwidth counts messages x size from the first post to the last completion;\n"
	"latency is half the round trip of a SEND/WRITE ping-pong and the full round\n"
	"trip of a READ or atomic. Inline data, post lists, selective signaling, batched\n"
	"polling and the ibv_wr_* API are chosen from what the device grants, and shown.\n"
	"Soak: --duration 0 runs until Ctrl-C or SIGTERM (either side; the summary is\n"
	"printed and the exit status is 0); --interval SEC prints a record every SEC\n"
	"seconds (bandwidth and message rate, or latency p50/p99) and the summary gives\n"
	"the lowest and highest interval. A failed interval names the error; exit 1.\n"
	"As with perftest, the server may be given the same run options as the client\n"
	"(--op, --mode, --transport, --size, --count, --duration, --qps, --threads,\n"
	"--bidir): each one given is checked against what the client asks, and a client\n"
	"that asks otherwise is refused by name on both sides (\"--size: client 4096,\n"
	"server 65536\"; the client exits 1, the server as for any failed client).";
static const char epilog[] =
	"thresholds (client): each size's result is graded; a figure equal to the limit meets it.\n"
	"  --expect-bw RATE   average bandwidth at least RATE: 90Gb (10^9 bits/s), 11.5GB\n"
	"                     (10^9 bytes/s), 1000MiB (2^20 bytes/s), or a bare number in --units\n"
	"  --min-link-pct N   average bandwidth at least N% of the port's link rate, as\n"
	"                     `rdmakit devices` shows it; where that rate is unknown or made up\n"
	"                     (rxe, siw) the gate cannot be graded, and a gate not graded fails\n"
	"  --max-lat-p99 US   latency p99 (the t_p99 column) at most US microseconds\n"
	CLI_EXIT_HELP;

/* ---- options ---- */

/* The values of the options that take one of a few (cli_opt.choices), in
 * the order of their enums. */
static const char *const bench_ops[] = {"send", "write", "read", "fetch-add", "cmp-swap", NULL};
static const char *const bench_modes[] = {"bw", "lat", NULL};
static const char *const bench_transports[] = {"rc", "uc", "ud", NULL};
static const char *const bench_wr_apis[] = {"off", "on", "auto", NULL};
static const char *const bench_protos[] = {"native", "perftest", NULL};

/* What the options come to: the sizes to run and the thresholds (the
 * engine's options hold the rest). */
struct bench_plan {
	uint32_t sizes[RK_BENCH_MAX_SIZES];
	int nsizes;
	struct rk_gates gates; /* --units and the thresholds */
};

/* A server checks a client's plan against the run options given on its own
 * command line (perftest habit: the same options on both sides). */
static uint32_t given_opts(const struct bench_cli *o)
{
	return (o->test ? RK_BENCH_GIVEN_TEST : 0) | (o->mode ? RK_BENCH_GIVEN_MODE : 0) |
	       (o->transport ? RK_BENCH_GIVEN_TRANSPORT : 0) |
	       (o->sizes ? RK_BENCH_GIVEN_SIZES : 0) | (o->iters ? RK_BENCH_GIVEN_ITERS : 0) |
	       (o->duration >= 0 ? RK_BENCH_GIVEN_DURATION : 0) |
	       (cli_opts_given(&o->qps) ? RK_BENCH_GIVEN_QPS : 0) |
	       (cli_opts_given(&o->threads) ? RK_BENCH_GIVEN_THREADS : 0) |
	       (o->bidir ? RK_BENCH_GIVEN_BIDIR : 0);
}

/* The run as asked (the client's; a server's are what it checks the
 * client's against), checked by the engine's rules and made the engine's
 * options *bo (rk_bench_ask_opts()). CLI_OK, or CLI_USAGE after saying what is wrong. */
static int check_run_opts(const struct bench_cli *o, struct bench_plan *p,
			  struct rk_bench_opts *bo)
{
	/* The parser took only the choices' values. */
	struct rk_bench_ask a = {
		.server = o->conn.server,
		.test = o->test ? cli_opt_choice(bench_ops, o->test) : RK_BENCH_WRITE,
		.mode = o->mode ? cli_opt_choice(bench_modes, o->mode) : RK_BENCH_BW,
		.transport = o->transport ? cli_opt_choice(bench_transports, o->transport) : RK_RC,
		.qps = (uint32_t)o->qps, .threads = (uint32_t)o->threads, .bidir = o->bidir,
		.sizes = o->sizes, .iters = o->iters, .duration_s = o->duration,
		.interval_s = (double)o->interval_ms / 1000.0, .odp = o->mem.odp,
		.gates = &p->gates, .given = given_opts(o),
	};
	char why[200];

	/* Interval records are text or JSON lines. */
	if (!o->conn.server && o->interval_ms && o->csv) {
		fprintf(stderr, "rdmakit bench: option --interval: records are text or --json "
				"lines, not CSV\n");
		return CLI_USAGE;
	}
	if (cli_gates_parse("bench", &o->gate, &p->gates) != CLI_OK)
		return CLI_USAGE;
	if (rk_bench_ask_opts(&a, bo, p->sizes, &p->nsizes, why, sizeof(why))) {
		fprintf(stderr, "rdmakit bench: %s\n", why);
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* Options of either side, each checked, into the engine's options:
 * CLI_OK, or CLI_USAGE after saying what is wrong. */
static int check_opts(struct bench_cli *o, struct bench_plan *p, const char *host,
		      struct rk_bench_opts *bo)
{
	int wr = cli_opt_choice(bench_wr_apis, o->wr_api);

	if (o->json && o->csv) {
		fprintf(stderr, "rdmakit bench: --json and --csv exclude each other\n");
		return CLI_USAGE;
	}
	if (o->clients && o->csv) {
		fprintf(stderr, "rdmakit bench: option --clients reports in text or --json, not "
				"--csv\n");
		return CLI_USAGE;
	}
	if (cli_srq_check("bench", &o->srq) ||
	    cli_traffic("bench", &o->conn.traffic, &o->traffic) != CLI_OK ||
	    check_run_opts(o, p, bo) != CLI_OK ||
	    cli_mem_parse("bench", &o->mem, ((1u << (RK_MEM_AUTO + 1)) - 1) & ~(1u << RK_MEM_DM),
			  &bo->mem.kind))
		return CLI_USAGE;
	bo->conn = (struct rk_conn_opts){
		CLI_CONN_FIELDS(&o->conn, &o->dev, o->conn.server ? NULL : host),
		.accept_timeout_ms = CLI_WAIT_MS(&o->conn), .traffic = o->traffic,
	};
	bo->tuning = (struct rk_bench_tuning){
		.tx_depth = (uint32_t)o->tx_depth, .rx_depth = (uint32_t)o->rx_depth,
		.post_list = (uint32_t)o->post_list, .signal_every = (uint32_t)o->signal_every,
		.cq_batch = (uint32_t)o->cq_batch, .inline_max = (int)o->inline_max,
		.wr_api = wr == 2 ? -1 : wr, .yield_after = (int)o->yield_after,
		.inflight = o->inflight, .ack_timeout = (int)o->ack_timeout,
		.rnr_retry = (int)o->rnr_retry,
	};
	bo->srq = o->srq.srq;
	bo->xrc = o->srq.xrc;
	cli_srq_fill(&o->srq, &bo->srq_opts);
	bo->mem.odp = o->mem.odp;
	return CLI_OK;
}

/* Connected: the header, a row per round (the client's sizes, or the
 * server's rounds until the client is done), the verdict. CLI_OK or
 * CLI_FAILED. */
static int run_rounds(struct rk_bench *b, struct cli_bench_report *rp,
		      const struct bench_plan *p, const struct rk_bench_plan *plan)
{
	bool server = rp->o->server;
	int ret, status = CLI_OK;

	cli_stop_signals(true);
	cli_bench_head(rp, rk_bench_get_info(b));
	for (int i = 0; server || i < p->nsizes; i++) {
		struct rk_bench_round round = {0};
		struct rk_bench_result res;

		if (!server) {
			round.size = p->sizes[i];
			round.iters = plan->iters;
			round.duration_ms = plan->duration_ms;
		}
		ret = rk_bench_run(b, &round, &res);
		cli_bench_clear_progress(rp);
		if (ret == 1)
			break;
		if (ret) {
			status = CLI_FAILED;
			cli_bench_failed(rp, &res, ret);
			break;
		}
		cli_bench_result(rp, &res);
		/* Stopped: no more rounds (a server serves until the client's FIN). */
		if (!server && (res.stopped || cli_stop_signal))
			break;
	}
	cli_stop_signals(false);
	return status;
}

struct bench_run {
	const struct bench_cli *o;
	struct cli_bench_report_opts ro; /* what the report takes from o */
	const struct bench_plan *p;
	struct rk_bench_opts *bo;
	bool listened; /* the server listened: a failure after it is a client's */
};

/* The server listens, its device checked: say so now, not before (without
 * a device it failed first, and never waited). */
static void on_listening(void *arg)
{
	struct bench_run *run = arg;
	const struct bench_cli *o = run->o;

	run->listened = true;
	if (!o->json && !o->csv)
		cli_waiting_text("bench server", o->clients, "client", o->conn.port, o->conn.cm);
	fflush(stdout);
}

/* Connect, run every round and report: the exit status, or CLI_STOPPED when
 * a stop signal ended a --persist server's wait for a client. */
static int serve_one(void *arg, bool *listened)
{
	struct bench_run *run = arg;
	struct cli_bench_report rp = {.o = &run->ro, .gates = &run->p->gates};
	struct rk_bench *b;
	int ret, status;

	cli_bench_hooks(&rp, run->bo);
	run->listened = false;
	run->bo->conn.on_listening = on_listening;
	run->bo->conn.arg = run;
	ret = rk_bench_connect(run->bo, &b);
	*listened = run->listened;
	if (ret)
		return ret == -EINTR && cli_stop_signal ? CLI_STOPPED : cli_fail(ret);
	status = run_rounds(b, &rp, run->p, &run->bo->plan);
	rk_bench_close(b);
	return cli_bench_end(&rp, status);
}

/* --clients N: the server of several clients at once. */
static int serve_clients(void *arg)
{
	struct bench_run *run = arg;
	const struct bench_cli *o = run->o;
	struct cli_bench_report rp = {.o = &run->ro, .gates = &run->p->gates};
	struct rk_bench_clients rep;
	int ret, status;

	run->bo->conn.on_listening = on_listening;
	run->bo->conn.arg = run;
	cli_stop_signals(true);
	run->bo->stop = &cli_stop_signal;
	ret = rk_bench_serve_clients(run->bo, (uint32_t)o->clients,
				     o->json ? NULL : cli_bench_client_end, NULL, &rep);
	cli_stop_signals(false);
	if (ret)
		return cli_fail(ret);
	status = cli_bench_clients(&rp, &rep);
	rk_bench_clients_free(&rep);
	return status;
}

/* --proto perftest: what perftest's ib_write_bw -R runs (WRITE bandwidth, RC,
 * one QP, one size, through RDMA CM), so any other run option is refused by
 * name; then the run (cli_bench_perftest.c). */
static int bench_perftest(struct bench_cli *o, const char *host)
{
	struct cli_bench_perftest a = {0};
	uint32_t sizes[RK_BENCH_MAX_SIZES];
	const char *bad = NULL;
	char why[200];
	int n;

	if (o->test && strcmp(o->test, "write"))
		bad = "--op (perftest's exchange here is ib_write_bw's: write)";
	else if (o->mode && strcmp(o->mode, "bw"))
		bad = "--mode (ib_write_bw measures bandwidth: bw)";
	else if (o->transport && strcmp(o->transport, "rc"))
		bad = "--transport (ib_write_bw -R connects RC QPs: rc)";
	else if (o->qps != 1 || o->threads != 1)
		bad = "--qps/--threads (one QP)";
	else if (o->bidir)
		bad = "--bidir";
	else if (o->duration >= 0 || o->interval_ms)
		bad = "--duration/--interval (perftest runs by -n here: --count)";
	else if (o->clients || o->persist)
		bad = "--clients/--persist (one client)";
	else if (o->csv)
		bad = "--csv (text or --json)";
	else if (o->srq.srq || o->srq.xrc)
		bad = "--srq/--xrc";
	if (bad) {
		fprintf(stderr, "rdmakit bench: --proto perftest runs ib_write_bw -R's test only; "
				"option %s does not apply\n", bad);
		return CLI_USAGE;
	}
	n = rk_bench_sizes_parse(o->sizes ? o->sizes : "65536", sizes, why, sizeof(why));
	if (n < 0) {
		fprintf(stderr, "rdmakit bench: %s\n", why);
		return CLI_USAGE;
	}
	if (n != 1) {
		fprintf(stderr, "rdmakit bench: option --size: --proto perftest runs one size "
				"(perftest's -s), not %d\n", n);
		return CLI_USAGE;
	}
	if (cli_traffic("bench", &o->conn.traffic, &o->traffic) != CLI_OK)
		return CLI_USAGE;
	a = (struct cli_bench_perftest){
		.server = o->conn.server, .host = o->conn.server ? NULL : host,
		.port = cli_opts_given(&o->conn.port) ? o->conn.port : RK_PERFTEST_DEFAULT_PORT,
		.device = o->dev.device, .size = sizes[0], .iters = o->iters ? o->iters : 5000,
		.tx_depth = (uint32_t)o->tx_depth, .timeout_ms = (int)o->conn.timeout * 1000,
		.accept_timeout_ms = CLI_WAIT_MS(&o->conn), .traffic = o->traffic, .json = o->json,
	};
	return cli_bench_perftest(&a);
}

/* The run options: the client's, and a server's to check the client's
 * against (perftest habit: the same options on both sides). */
#define BENCH_RUN_OPTS(o)                                                                   \
	{"op", 'o', CLI_OPT_STRING, &(o)->test, 0, 0, "OP",                                 \
	 "send|write|read|fetch-add|cmp-swap (client)", .choices = bench_ops,               \
	 .def = "write"},                                                                   \
	{"mode", 'm', CLI_OPT_STRING, &(o)->mode, 0, 0, "MODE",                             \
	 "bw (bandwidth and message rate) or lat (client)", .choices = bench_modes,         \
	 .def = "bw"},                                                                      \
	{"transport", 'T', CLI_OPT_STRING, &(o)->transport, 0, 0, "TR", "rc|uc|ud (client)", \
	 .choices = bench_transports, .def = "rc"},                                         \
	{"size", 's', CLI_OPT_STRING, &(o)->sizes, 0, 0, "SIZES",                           \
	 "one size, LO..HI powers of two, or a list A,B,C (client)",                        \
	 .def = "65536 for bw, 2 for lat, 8 for atomics"},                                  \
	{"count", 'n', CLI_OPT_COUNT, &(o)->iters, 1, UINT32_MAX, "N",                      \
	 "iterations per QP and size (client)", .def = "5000 for bw, 1000 for lat"},        \
	{"duration", 'D', CLI_OPT_INT, &(o)->duration, 0, 3600, "SEC",                      \
	 "run each size SEC seconds instead of --count; 0: until stopped (client)",         \
	 .def = "none, runs by --count"}

/* Old spellings, each failing with a message naming the new one (issue 16). */
#define BENCH_OLD_SPELLINGS                                                               \
	CLI_OPT_GONE_ROW("test", 0, "--test is now -o/--op"),                             \
	CLI_OPT_GONE_ROW("sizes", 0, "--sizes is now -s/--size"),                         \
	CLI_OPT_GONE_ROW("iters", 0, "--iters is now -n/--count")

/* perftest's spellings (ib_write_bw ...), so that its command lines meet an
 * answer (issue 35): each one that means one of bench's options one to one
 * is that option; -F is taken and ignored; -t and -e are refused naming
 * bench's way. -t is perftest's --tx-depth, so bench gives -t no meaning at
 * all (elsewhere -t is --timeout; taking "-t 128" as 128 s was silent and
 * wrong), and -x, -R, -a, -u, -l, -r, -Q mean here what they mean in
 * perftest and nothing else anywhere (docs_check: one letter, one meaning).
 * perftest's letters that bench gives other meanings (-c, -I, -m, -S, -T,
 * -o, -g) stay bench's. */
#define BENCH_PERFTEST_SPELLINGS(o)                                                        \
	CLI_OPT_ALIAS_ROW("", 'x', &(o)->dev.gid_index, NULL, "perftest's"),               \
	CLI_OPT_ALIAS_ROW("ib-dev", 0, &(o)->dev.device, NULL, "perftest's"),              \
	CLI_OPT_ALIAS_ROW("rdma_cm", 'R', &(o)->conn.cm, NULL, "perftest's"),              \
	CLI_OPT_ALIAS_ROW("all", 'a', &(o)->sizes, "2..8M", "perftest's (2 to 2^23 bytes)"), \
	CLI_OPT_ALIAS_ROW("bidirectional", 0, &(o)->bidir, NULL, "perftest's"),            \
	CLI_OPT_ALIAS_ROW("qp-timeout", 'u', &(o)->ack_timeout, NULL,                      \
			  "perftest's (4.096 us x 2^N)"),                                  \
	CLI_OPT_ALIAS_ROW("post_list", 'l', &(o)->post_list, NULL, "perftest's"),          \
	CLI_OPT_ALIAS_ROW("", 'r', &(o)->rx_depth, NULL, "perftest's"),                    \
	CLI_OPT_ALIAS_ROW("cq-mod", 'Q', &(o)->signal_every, NULL, "perftest's"),          \
	CLI_OPT_ALIAS_ROW("inline_size", 0, &(o)->inline_max, NULL, "perftest's -I"),      \
	CLI_OPT_ALIAS_ROW("use_hugepages", 0, &(o)->mem.mem, "hugepage", "perftest's"),    \
	CLI_OPT_ALIAS_ROW("report_gbits", 0, &(o)->gate.units, "Gb", "perftest's"),        \
	CLI_OPT_IGNORED_ROW("CPU-freq", 'F',                                               \
			    "-F (perftest's --CPU-freq) ignored: bench trusts no CPU "     \
			    "frequency, it scales the cycle counter by CLOCK_MONOTONIC "   \
			    "over each round"),                                            \
	CLI_OPT_FOREIGN_ROW("", 't',                                                       \
			    "-t is perftest's --tx-depth; rdmakit: --tx-depth N; the "     \
			    "timeout is --timeout SEC, the test -o/--op"),                 \
	CLI_OPT_FOREIGN_ROW("events", 'e',                                                 \
			    "-e/--events is perftest's: bench polls its completions "      \
			    "(--yield-after N lets the CPU go)")

int cmd_bench(int argc, char **argv)
{
	struct bench_cli o = {
		.dev = CLI_DEV_OPTS_DEFAULT,
		.conn = {.port = RK_DEFAULT_PORT, .timeout = 10, .traffic = CLI_TRAFFIC_OPTS_DEFAULT},
		.qps = 1,
		.threads = 1,
		.inline_max = -1,
		.yield_after = -1,
		.ack_timeout = -1,
		.rnr_retry = -1,
		.srq = CLI_SRQ_OPTS_DEFAULT,
		.duration = -1,
		.wr_api = "auto", .mem = {.mem = "host"},
	};
	const struct cli_opt opts[] = {
		{"proto", 0, CLI_OPT_STRING, &o.proto, 0, 0, "PROTO",
		 "native (rdmakit on both sides) or perftest (ib_write_bw -R's exchange: WRITE "
		 "bandwidth against perftest, either side; implies --cm, port 18515)",
		 .choices = bench_protos, .def = "native"},
		CLI_CONN_OPTS(&o.conn),
		CLI_DEV_OPTS(&o.dev),
		BENCH_RUN_OPTS(&o),
		{"interval", 'I', CLI_OPT_SECONDS, &o.interval_ms, 1000, 3600000, "SEC",
		 "soak: a record every SEC seconds (fractions allowed), the lowest and highest in "
		 "the summary (client, with --duration)", .def = "none"},
		{"qps", 'q', CLI_OPT_COUNT, &o.qps, 1, RK_BENCH_MAX_QPS, "N",
		 "queue pairs, bandwidth only (client)"},
		{"threads", 0, CLI_OPT_COUNT, &o.threads, 1, RK_BENCH_MAX_THREADS, "N",
		 "bandwidth: client threads, each driving its share of the QPs with CQs of its "
		 "own (at most --qps)"},
		{"bidir", 'b', CLI_OPT_FLAG, &o.bidir, 0, 0, NULL,
		 "both directions at once, bandwidth only (client)"},
		{"tx-depth", 0, CLI_OPT_COUNT, &o.tx_depth, 0, 65536, "N",
		 "send queue depth per QP", .def = "0: 512 for bw, 64 for lat"},
		{"rx-depth", 0, CLI_OPT_COUNT, &o.rx_depth, 0, 65536, "N",
		 "receives kept posted per QP", .def = "0: 512 for bw, 64 for lat"},
		{"post-list", 0, CLI_OPT_COUNT, &o.post_list, 0, 64, "N",
		 "work requests per doorbell", .def = "0: 16 for bw, 1 for lat"},
		{"signal-every", 0, CLI_OPT_COUNT, &o.signal_every, 0, 65536, "N",
		 "one signaled completion per N requests", .def = "0: 64 for bw, 16 for lat"},
		{"cq-batch", 0, CLI_OPT_COUNT, &o.cq_batch, 0, 256, "N",
		 "completions taken per poll", .def = "0: 32"},
		{"inline", 0, CLI_OPT_INT, &o.inline_max, -1, 65536, "BYTES",
		 "inline data up to BYTES; 0: off",
		 .def = "-1: as much as the device grants the QP"},
		{"inflight", 0, CLI_OPT_SIZE, &o.inflight, 0, (uint64_t)1 << 32, "BYTES",
		 "bandwidth: bytes outstanding per QP at most", .def = "0: 1M"},
		{"ack-timeout", 0, CLI_OPT_INT, &o.ack_timeout, -1, 31, "N",
		 "data QPs' local ACK timeout, 4.096 us x 2^N; 0: none", .def = "-1: 14 (67 ms)"},
		{"rnr-retry", 0, CLI_OPT_INT, &o.rnr_retry, -1, 7, "N",
		 "data QPs' RNR retries (7: forever): with few, a peer whose receive queue or SRQ "
		 "is empty fails this side's SENDs with IBV_WC_RNR_RETRY_EXC_ERR", .def = "-1: 7"},
		CLI_SRQ_OPTS(&o.srq),
		{"yield-after", 0, CLI_OPT_INT, &o.yield_after, -1, 1 << 30, "N",
		 "busy polling yields the CPU after N empty polls; 0: never",
		 .def = "-1: 8 for bw, never for lat"},
		{"wr-api", 0, CLI_OPT_STRING, &o.wr_api, 0, 0, "WHEN",
		 "ibv_wr_* posting API: auto (where the provider has it), on, off",
		 .choices = bench_wr_apis},
		CLI_MEM_OPTS(&o.mem, cli_mem_kinds_no_dm,
			     "this side's data buffer: host, hugepage, memfd, memfd-huge, auto "
			     "(hugepage while the pool has room, else host; never dm)"),
		CLI_WAIT_OPTS(&o.conn, 0),
		CLI_JSON_OPT(&o.json),
		{"csv", 0, CLI_OPT_FLAG, &o.csv, 0, 0, NULL, "print CSV, one row per size"},
		CLI_UNITS_OPT(&o.gate), CLI_BW_GATE_OPTS(&o.gate), CLI_LAT_GATE_OPT(&o.gate),
		CLI_PERSIST_OPT(&o.persist), CLI_CLIENTS_OPT(&o.clients),
		BENCH_OLD_SPELLINGS,
		BENCH_PERFTEST_SPELLINGS(&o),
		CLI_OPT_END,
	};
	struct bench_plan p;
	struct rk_bench_opts bo = {0};
	struct bench_run run;
	int first, ret;

	ret = cli_parse_epilog("bench", usage_text, description, epilog, opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	ret = cli_check_role_args("bench", o.conn.server, argc, argv, first);
	if (ret >= 0)
		return ret;
	if (o.proto && !strcmp(o.proto, "perftest"))
		return bench_perftest(&o, argv[first]);
	if (check_opts(&o, &p, argv[first], &bo) != CLI_OK ||
	    cli_persist_check("bench", o.persist, o.conn.server, o.conn.wait) ||
	    cli_clients_check("bench", o.clients, o.conn.server, o.persist))
		return CLI_USAGE;
	run.o = &o;
	run.ro = (struct cli_bench_report_opts){
		.json = o.json, .csv = o.csv, .server = o.conn.server, .interval_ms = o.interval_ms,
		.port = o.conn.port, .wait_s = o.conn.wait, .traffic = o.traffic,
	};
	run.p = &p;
	run.bo = &bo;
	return cli_serve("bench server", o.json, o.persist, serve_one,
			 o.clients ? serve_clients : NULL, &run);
}
