/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit bench: bandwidth, message rate and latency between a server and a
 * client, on the library's benchmark engine (bench.h). This file holds the
 * options and the report: a table like perftest's, --json or --csv. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_gates.h"
#include "cli_json.h"
#include "cli_serve.h"
#include "cli_srq.h"

#define MIB (1024.0 * 1024.0)

struct bench_cli {
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

/* ---- report ---- */

struct report {
	const struct bench_cli *o;
	const struct rk_bench_info *info;
	json_object *doc, *results;
	bool progress_shown;
	bool tty;
	const struct rk_gates *gates; /* the units, and the thresholds to grade */
	json_object *gate_arr;        /* --json: the graded checks */
	int gate_checks, gate_failed;
	int err; /* the failed round's error, for the JSON "result" */
};

/* soak: below, with the options they serve */
static void soak_row_text(const struct report *rp, const struct rk_bench_result *r);
static void soak_result_json(json_object *j, const struct rk_bench_result *r, bool lat);
/* Bandwidth in the unit --units chose. */
static double bw_shown(const struct report *rp, double bytes_per_s)
{
	return rk_bw_in(bytes_per_s, rp->gates->unit);
}

/* The share of the link rate, where that rate is a real link's; else -1. */
static double link_pct(const struct report *rp, double bytes_per_s)
{
	const struct rk_link_rate *l = &rp->info->link;

	return l->meaningful ? rk_link_pct(bytes_per_s, l->gbps) : -1;
}

static const char *test_title(enum rk_bench_test t)
{
	static const char *const v[] = {"SEND", "RDMA WRITE", "RDMA READ", "FETCH_ADD",
					"CMP_SWAP"};

	return v[t];
}

/* The link rate a bandwidth is a share of, or why there is none. */
static void print_link(const struct report *rp)
{
	const struct rk_link_rate *l = &rp->info->link;

	if (rp->info->mode != RK_BENCH_BW)
		return;
	if (l->meaningful)
		printf("  link      %g Gb/s (%dX %s): bandwidth also as a share of it\n", l->gbps,
		       l->lanes, l->speed_name);
	else
		printf("  link      rate unknown (%s)\n", l->note);
}

static void print_columns(const struct report *rp);

static void print_header(const struct report *rp)
{
	const struct rk_bench_info *in = rp->info;
	char threads[32] = "", traffic[128];

	if (in->threads > 1)
		snprintf(threads, sizeof(threads), " on %u threads", in->threads);
	printf("rdmakit bench: %s %s, %s, %u QP%s%s%s, %s %s (%s)\n", test_title(in->test),
	       in->mode == RK_BENCH_BW ? "bandwidth" : "latency", rk_transport_str(in->transport),
	       in->qps, in->qps > 1 ? "s" : "", threads, in->bidir ? ", bidirectional" : "",
	       in->server ? "server for" : "client of", in->peer,
	       in->cm ? "RDMA CM" : "TCP exchange");
	printf("  device %s port %u", in->device, in->port_num);
	if (in->has_gid)
		printf(", GID %u %s", in->gid_index, in->gid);
	printf(", path MTU %d, QP 0x%x -> peer QP 0x%x%s%s\n", in->path_mtu, in->qpn[0],
	       in->peer_qpn[0], in->qps > 1 ? ", ..." : "",
	       cli_traffic_str(&rp->o->traffic, traffic, sizeof(traffic)));
	if (in->inline_granted)
		printf("  inline    up to %u bytes (asked %u, the QP was granted %u)\n",
		       in->inline_granted, in->inline_asked, in->inline_granted);
	else
		printf("  inline    off (%s)\n", in->inline_asked ? "the device grants none" :
								"asked for none");
	printf("  posting   %s; %u WR%s per doorbell, signaled every %u, send queue %u, "
	       "receive queue %u\n", in->wr_api_why, in->post_list, in->post_list > 1 ? "s" : "",
	       in->signal_every, in->tx_depth, in->rx_depth);
	if (in->mode == RK_BENCH_BW)
		printf("  in flight at most %" PRIu64 " KiB per QP (fewer outstanding requests for "
		       "large messages), %u outstanding READs/atomics\n", in->inflight / 1024,
		       in->max_rd_atomic);
	if (in->transport == RK_RC) {
		if (in->ack_timeout)
			printf("  timeout   local ACK timeout %.3g ms (4.096 us x 2^%u), %u "
			       "retries\n", 4.096e-3 * (double)(1ull << in->ack_timeout),
			       in->ack_timeout, in->retry_cnt);
		else
			printf("  timeout   none (--ack-timeout 0: a lost packet stalls the QP)\n");
	}
	if (in->srq)
		printf("  receives  from one SRQ shared by the %u QP%s: depth %u, limit %u%s, "
		       "refilled in lists of %u%s\n", in->qps, in->qps > 1 ? "s" : "",
		       in->srq_setup.depth, in->srq_setup.limit, in->srq_setup.limit ? " (armed)" :
		       " (none)", in->srq_setup.batch, in->srq_setup.no_refill ?
		       " - no: never refilled (--srq-no-refill)" : "");
	else if (in->srq_why[0])
		printf("  receives  --srq not used here: %s\n", in->srq_why);
	if (in->transport == RK_RC && in->rnr_retry != 7)
		printf("  RNR       %u retries (an empty receive queue at the peer fails a SEND "
		       "after them)\n", in->rnr_retry);
	printf("  memory    %s%s%s%s\n", cli_mem_text(in->mem), in->odp ? ", on-demand paging" : "",
	       in->mem_chosen ? "; " : "", in->mem_chosen ? in->mem_why : "");
	if (in->yield_after)
		printf("  polling   busy, up to %u completions per poll; the CPU yielded after %u "
		       "empty polls\n", in->cq_batch, in->yield_after);
	else
		printf("  polling   busy, up to %u completions per poll, never yielding\n",
		       in->cq_batch);
	print_link(rp);
	print_columns(rp);
}

/* The table's column names. */
static void print_columns(const struct report *rp)
{
	const struct rk_bench_info *in = rp->info;

	if (in->mode == RK_BENCH_BW) {
		char peak[32], avg[32];
		const char *unit = rk_bw_unit_str(rp->gates->unit);

		snprintf(peak, sizeof(peak), "BW peak[%s]", unit);
		snprintf(avg, sizeof(avg), "BW average[%s]", unit);
		printf(" %-10s %-12s %-16s %-18s %-14s %s%s\n", "#bytes", "#iterations", peak, avg,
		       "MsgRate[Mpps]", in->link.meaningful ? "link[%]  " : "", "check");
	} else {
		printf(" %-8s %-11s %-10s %-12s %-10s %-10s %-12s %-10s %s\n", "#bytes",
		       "#iterations", "t_min[us]", "t_median[us]", "t_avg[us]", "t_p99[us]",
		       "t_p99.9[us]", "t_max[us]", "check");
	}
	fflush(stdout);
}

static void clear_progress(struct report *rp)
{
	if (rp->progress_shown) {
		printf("\r\033[K");
		rp->progress_shown = false;
	}
}

static void on_progress(const struct rk_bench_progress *p, void *arg)
{
	struct report *rp = arg;

	if (p->elapsed_s < 1.0)
		return;
	if (p->total)
		printf("\r  %u bytes: %" PRIu64 "/%" PRIu64 " messages (%.0f%%), %.1f s, %.2f %s",
		       p->size, p->done, p->total, 100.0 * (double)p->done / (double)p->total,
		       p->elapsed_s, bw_shown(rp, p->rate), rk_bw_unit_str(rp->gates->unit));
	else if (p->duration_s * 1000 >= RK_BENCH_UNTIL_STOPPED)
		printf("\r  %u bytes: %" PRIu64 " messages, %.1f s (until stopped), %.2f %s",
		       p->size, p->done, p->elapsed_s, bw_shown(rp, p->rate),
		       rk_bw_unit_str(rp->gates->unit));
	else
		printf("\r  %u bytes: %" PRIu64 " messages, %.1f of %.0f s, %.2f %s", p->size,
		       p->done, p->elapsed_s, p->duration_s, bw_shown(rp, p->rate),
		       rk_bw_unit_str(rp->gates->unit));
	printf("\033[K");
	fflush(stdout);
	rp->progress_shown = true;
}

static const char *verdict(const struct rk_bench_result *r)
{
	return r->checked_here ? r->check : r->peer_check[0] ? "peer checked" : "-";
}

static void print_row(struct report *rp, const struct rk_bench_result *r)
{
	const struct rk_bench_info *in = rp->info;

	clear_progress(rp);
	if (in->mode == RK_BENCH_BW) {
		char peak[32], pct[16] = "";

		if (r->initiator)
			snprintf(peak, sizeof(peak), "%.2f", bw_shown(rp, r->bw_peak));
		else
			snprintf(peak, sizeof(peak), "-");
		if (in->link.meaningful)
			snprintf(pct, sizeof(pct), "%-8.1f ", link_pct(rp, r->bw_avg));
		printf(" %-10u %-12" PRIu64 " %-16s %-18.2f %-14.6f %sok: %s\n", r->round.size,
		       r->iters, peak, bw_shown(rp, r->bw_avg), r->msg_rate / 1e6, pct, verdict(r));
		if (in->bidir)
			printf(" %-10s %-12s %-16s %-18.2f %-14s (the peer's direction; both: %.2f "
			       "%s)\n", "", "", "", bw_shown(rp, r->peer_bw_avg), "",
			       bw_shown(rp, r->bw_avg + r->peer_bw_avg),
			       rk_bw_unit_str(rp->gates->unit));
	} else if (r->initiator) {
		const struct rk_bench_lat *l = &r->lat;

		printf(" %-8u %-11" PRIu64 " %-10.2f %-12.2f %-10.2f %-10.2f %-12.2f %-10.2f ok: %s\n",
		       r->round.size, r->iters, l->min, l->median, l->avg, l->p99, l->p999, l->max,
		       verdict(r));
	} else {
		printf(" %-8u %-11" PRIu64 " (answered; the client times it)  ok: %s\n",
		       r->round.size, r->iters, verdict(r));
	}
	soak_row_text(rp, r);
	fflush(stdout);
}

/* The bandwidth columns are named for --units: bw_avg_MiBps, _GBps, _Gbps. */
static void csv_header(const struct report *rp)
{
	const char *u = rk_bw_unit_name(rp->gates->unit);

	printf("test,mode,transport,qps,size,iterations,messages,seconds,bw_peak_%sps,"
	       "bw_avg_%sps,msg_rate_Mpps,lat_min_us,lat_median_us,lat_avg_us,lat_p99_us,"
	       "lat_p999_us,lat_max_us,received,lost,check\n", u, u);
}

static void csv_row(const struct report *rp, const struct rk_bench_result *r)
{
	const struct rk_bench_info *in = rp->info;
	const struct rk_bench_lat *l = &r->lat;
	const char *v = verdict(r);

	printf("%s,%s,%s,%u,%u,%" PRIu64 ",%" PRIu64 ",%.6f,%.2f,%.2f,%.6f,%.3f,%.3f,%.3f,%.3f,"
	       "%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",\"",
	       rk_bench_test_str(in->test), rk_bench_mode_str(in->mode),
	       rk_transport_str(in->transport), in->qps, r->round.size, r->iters, r->msgs,
	       r->seconds, bw_shown(rp, r->bw_peak), bw_shown(rp, r->bw_avg), r->msg_rate / 1e6,
	       l->min, l->median, l->avg, l->p99, l->p999, l->max, r->received, r->lost);
	for (; *v; v++)
		putchar(*v == '"' ? '\'' : *v);
	printf("\"\n");
	fflush(stdout);
}

static json_object *jdouble(double v)
{
	return json_object_new_double(v);
}

/* Latency statistics: a round's in full, an interval's in brief (no mean,
 * p99.9 or deviation; the median named p50). */
static json_object *lat_json(const struct rk_bench_lat *l, bool brief)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "samples", json_object_new_int64((int64_t)l->samples));
	json_object_object_add(j, "min", jdouble(l->min));
	json_object_object_add(j, brief ? "p50" : "median", jdouble(l->median));
	if (!brief)
		json_object_object_add(j, "avg", jdouble(l->avg));
	json_object_object_add(j, "p99", jdouble(l->p99));
	if (!brief)
		json_object_object_add(j, "p99_9", jdouble(l->p999));
	json_object_object_add(j, "max", jdouble(l->max));
	if (!brief)
		json_object_object_add(j, "stdev", jdouble(l->stdev));
	return j;
}

static json_object *info_json(const struct rk_bench_info *in, const struct bench_cli *o)
{
	json_object *j = json_object_new_object(), *fp = json_object_new_object();

	json_object_object_add(j, "role", json_object_new_string(in->server ? "server" : "client"));
	json_object_object_add(j, "test", json_object_new_string(rk_bench_test_str(in->test)));
	json_object_object_add(j, "mode", json_object_new_string(rk_bench_mode_str(in->mode)));
	json_object_object_add(j, "transport",
			       json_object_new_string(rk_transport_str(in->transport)));
	json_object_object_add(j, "qps", json_object_new_int((int)in->qps));
	json_object_object_add(j, "threads", json_object_new_int((int)in->threads));
	json_object_object_add(j, "bidirectional", json_object_new_boolean(in->bidir));
	json_object_object_add(j, "connection",
			       json_object_new_string(in->cm ? "rdma_cm" : "tcp"));
	json_object_object_add(j, "peer", json_object_new_string(in->peer));
	json_object_object_add(j, "device", json_object_new_string(in->device));
	json_object_object_add(j, "port", json_object_new_int(in->port_num));
	if (in->has_gid) {
		json_object_object_add(j, "gid_index", json_object_new_int((int)in->gid_index));
		json_object_object_add(j, "gid", json_object_new_string(in->gid));
	}
	json_object_object_add(j, "path_mtu", json_object_new_int(in->path_mtu));
	json_object_object_add(j, "port_tcp", json_object_new_int((int)o->conn.port));
	json_object_object_add(j, "traffic", cli_traffic_json(&o->traffic));
	json_object_object_add(fp, "inline_asked", json_object_new_int((int)in->inline_asked));
	json_object_object_add(fp, "inline_granted", json_object_new_int((int)in->inline_granted));
	json_object_object_add(fp, "wr_api", json_object_new_boolean(in->wr_api));
	json_object_object_add(fp, "posting", json_object_new_string(in->wr_api_why));
	json_object_object_add(fp, "post_list", json_object_new_int((int)in->post_list));
	json_object_object_add(fp, "signal_every", json_object_new_int((int)in->signal_every));
	json_object_object_add(fp, "cq_batch", json_object_new_int((int)in->cq_batch));
	json_object_object_add(fp, "yield_after", json_object_new_int((int)in->yield_after));
	json_object_object_add(fp, "inflight_bytes", json_object_new_int64((int64_t)in->inflight));
	json_object_object_add(fp, "ack_timeout", json_object_new_int(in->ack_timeout));
	json_object_object_add(fp, "rnr_retry", json_object_new_int(in->rnr_retry));
	json_object_object_add(j, "srq", json_object_new_boolean(in->srq));
	if (in->srq)
		json_object_object_add(j, "srq_setup", cli_srq_json(&in->srq_setup));
	else if (in->srq_why[0])
		json_object_object_add(j, "srq_unused", json_object_new_string(in->srq_why));
	json_object_object_add(fp, "max_rd_atomic", json_object_new_int((int)in->max_rd_atomic));
	json_object_object_add(fp, "tx_depth", json_object_new_int((int)in->tx_depth));
	json_object_object_add(fp, "rx_depth", json_object_new_int((int)in->rx_depth));
	json_object_object_add(j, "fast_path", fp);
	cli_mem_json(j, in->mem, in->mem_chosen, in->mem_why, in->odp);
	return j;
}

static json_object *result_json(const struct rk_bench_info *in, const struct rk_bench_result *r)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "size", json_object_new_int64(r->round.size));
	json_object_object_add(j, "iterations", json_object_new_int64((int64_t)r->iters));
	json_object_object_add(j, "iterations_asked", json_object_new_int64((int64_t)r->round.iters));
	json_object_object_add(j, "duration_ms", json_object_new_int64(r->round.duration_ms));
	json_object_object_add(j, "measured_here", json_object_new_boolean(r->initiator));
	json_object_object_add(j, "messages", json_object_new_int64((int64_t)r->msgs));
	json_object_object_add(j, "bytes", json_object_new_int64((int64_t)r->bytes));
	json_object_object_add(j, "seconds", jdouble(r->seconds));
	if (in->mode == RK_BENCH_BW) {
		json_object_object_add(j, "bw_avg_MiBps", jdouble(r->bw_avg / MIB));
		json_object_object_add(j, "bw_peak_MiBps", jdouble(r->bw_peak / MIB));
		json_object_object_add(j, "bw_avg_Gbps", jdouble(r->bw_avg * 8 / 1e9));
		json_object_object_add(j, "msg_rate_Mpps", jdouble(r->msg_rate / 1e6));
		if (in->bidir) {
			json_object_object_add(j, "peer_messages",
					       json_object_new_int64((int64_t)r->peer_msgs));
			json_object_object_add(j, "peer_bw_avg_MiBps", jdouble(r->peer_bw_avg / MIB));
		}
	}
	if (in->mode == RK_BENCH_LAT && r->initiator)
		json_object_object_add(j, "latency_us", lat_json(&r->lat, false));
	json_object_object_add(j, "received", json_object_new_int64((int64_t)r->received));
	json_object_object_add(j, "lost", json_object_new_int64((int64_t)r->lost));
	json_object_object_add(j, "checked_here", json_object_new_boolean(r->checked_here));
	json_object_object_add(j, "check", json_object_new_string(r->check));
	json_object_object_add(j, "peer_check", json_object_new_string(r->peer_check));
	cli_run_json(j, "", &r->counters, in->srq ? &r->srq : NULL);
	soak_result_json(j, r, in->mode == RK_BENCH_LAT);
	return j;
}

/* A round's port counters in text, under its row; and a failed round's in
 * JSON, in the document (a round that succeeded has them in its result). */
static void round_counters(const struct report *rp, const struct rk_bench_result *r, bool failed)
{
	const struct rk_srq_stats *srq = rp->info && rp->info->srq ? &r->srq : NULL;

	if (rp->o->json && failed)
		cli_run_json(rp->doc, "failed_round_", &r->counters, srq);
	else if (!rp->o->json && !rp->o->csv)
		cli_run_text(&r->counters, srq, "   ");
}

/* ---- soak: intervals, the summary of them, stop signals ---- */

/* SIGINT and SIGTERM end the run through the engine's stop request
 * (cli_stop_signals(): a second one kills). */

static json_object *interval_json(const struct rk_bench_interval *iv, bool lat)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "index", json_object_new_int64(iv->index));
	json_object_object_add(j, "start_s", jdouble(iv->start_s));
	json_object_object_add(j, "end_s", jdouble(iv->end_s));
	json_object_object_add(j, lat ? "iterations" : "messages",
			       json_object_new_int64((int64_t)iv->msgs));
	json_object_object_add(j, "bytes", json_object_new_int64((int64_t)iv->bytes));
	json_object_object_add(j, "bw_MiBps", jdouble(iv->bw / MIB));
	json_object_object_add(j, "bw_Bps", jdouble(iv->bw));
	json_object_object_add(j, "msg_rate_Mpps", jdouble(iv->msg_rate / 1e6));
	if (lat && !iv->status)
		json_object_object_add(j, "latency_us", lat_json(&iv->lat, true));
	json_object_object_add(j, "last", json_object_new_boolean(iv->last));
	json_object_object_add(j, "ok", json_object_new_boolean(!iv->status));
	if (iv->status)
		json_object_object_add(j, "error", json_object_new_string(iv->error));
	return j;
}

static void interval_text(const struct report *rp, const struct rk_bench_interval *iv, bool lat)
{
	printf(" [%3u] %7.2f-%7.2f s %10" PRIu64 " %s", iv->index, iv->start_s, iv->end_s,
	       iv->msgs, lat ? "iters" : "msgs ");
	if (iv->status)
		printf("  FAILED: %s\n", iv->error);
	else if (lat)
		printf("  p50 %.2f us  p99 %.2f us  max %.2f us\n", iv->lat.median, iv->lat.p99,
		       iv->lat.max);
	else
		printf("  %10.2f %s  %.6f Mpps\n", bw_shown(rp, iv->bw),
		       rk_bw_unit_str(rp->gates->unit), iv->msg_rate / 1e6);
}

/* The engine's interval callback: a text line, or a JSON object on a line. */
static void on_interval(const struct rk_bench_interval *iv, void *arg)
{
	struct report *rp = arg;
	bool lat = rp->info->mode == RK_BENCH_LAT;

	if (rp->o->json) {
		json_object *j = interval_json(iv, lat);

		json_object_object_add(j, "record", json_object_new_string("interval"));
		json_object_object_add(j, "size", json_object_new_int64(iv->size));
		cli_json_line(j);
	} else {
		interval_text(rp, iv, lat);
	}
	fflush(stdout);
}

/* The engine's callbacks: the progress line on a terminal (not with
 * interval records), intervals to on_interval, and the stop request. */
static void soak_hooks(const struct bench_cli *o, struct report *rp, struct rk_bench_opts *bo)
{
	rp->tty = isatty(STDOUT_FILENO) && !o->json && !o->csv;
	if (rp->tty && !o->interval_ms) {
		bo->progress = on_progress;
		bo->progress_arg = rp;
	}
	bo->interval = on_interval;
	bo->interval_arg = rp;
	bo->stop = &cli_stop_signal;
}

static const char *stop_text(const struct rk_bench_result *r)
{
	if (r->stopped_by_peer)
		return "the peer";
	return cli_stop_name();
}

/* Under a result's row: its intervals in brief and how it was stopped. */
static void soak_row_text(const struct report *rp, const struct rk_bench_result *r)
{
	const struct rk_bench_interval_range *g = &r->intervals;
	double every = (double)rp->o->interval_ms / 1000.0;

	if (g->ranked && rp->info->mode == RK_BENCH_LAT)
		printf("  intervals: %u of %g s; p99 lowest %.2f us (p50 %.2f) in [%u], "
		       "highest %.2f us (p50 %.2f) in [%u]\n", g->count, every,
		       g->min.lat.p99, g->min.lat.median, g->min.index, g->max.lat.p99,
		       g->max.lat.median, g->max.index);
	else if (g->ranked)
		printf("  intervals: %u of %g s; lowest %.2f %s (%.6f Mpps) in [%u], "
		       "highest %.2f %s (%.6f Mpps) in [%u]\n", g->count, every,
		       bw_shown(rp, g->min.bw), rk_bw_unit_str(rp->gates->unit),
		       g->min.msg_rate / 1e6, g->min.index, bw_shown(rp, g->max.bw),
		       rk_bw_unit_str(rp->gates->unit), g->max.msg_rate / 1e6, g->max.index);
	else if (g->count)
		printf("  intervals: %u, none of them a full half interval to rank\n", g->count);
	if (r->stopped)
		printf("  stopped by %s after %.2f s\n", stop_text(r), r->seconds);
}

/* A result's soak fields in its JSON object. */
static void soak_result_json(json_object *j, const struct rk_bench_result *r, bool lat)
{
	const struct rk_bench_interval_range *g = &r->intervals;

	if (r->round.duration_ms == RK_BENCH_UNTIL_STOPPED)
		json_object_object_add(j, "duration_ms", json_object_new_int64(0));
	json_object_object_add(j, "until_stopped", json_object_new_boolean(
				       r->round.duration_ms == RK_BENCH_UNTIL_STOPPED));
	json_object_object_add(j, "stopped", json_object_new_boolean(r->stopped));
	if (r->stopped)
		json_object_object_add(j, "stopped_by", json_object_new_string(stop_text(r)));
	if (g->count) {
		json_object *k = json_object_new_object();

		json_object_object_add(k, "count", json_object_new_int64(g->count));
		json_object_object_add(k, "ranked", json_object_new_int64(g->ranked));
		if (g->ranked) {
			json_object_object_add(k, "min", interval_json(&g->min, lat));
			json_object_object_add(k, "max", interval_json(&g->max, lat));
		}
		json_object_object_add(j, "intervals", k);
	}
}

/* ---- units and thresholds ---- */

/* The units and the link rate in the document's head; in each result, the
 * bandwidth in the unit chosen, in bytes per second, and as a share of the link. */
static void units_info_json(const struct report *rp)
{
	const struct rk_link_rate *l = &rp->info->link;
	json_object *j = json_object_new_object();

	json_object_object_add(rp->doc, "units", json_object_new_string(
						     rk_bw_unit_name(rp->gates->unit)));
	json_object_object_add(j, "rate_gbps", jdouble(l->gbps));
	json_object_object_add(j, "rate_meaningful", json_object_new_boolean(l->meaningful));
	json_object_object_add(j, "note", l->meaningful ? NULL : json_object_new_string(l->note));
	json_object_object_add(rp->doc, "link", j);
}

static void units_result_json(const struct report *rp, const struct rk_bench_result *r,
			      json_object *j)
{
	double pct = link_pct(rp, r->bw_avg);

	if (rp->info->mode != RK_BENCH_BW)
		return;
	json_object_object_add(j, "bw_unit", json_object_new_string(
						     rk_bw_unit_str(rp->gates->unit)));
	json_object_object_add(j, "bw_avg", jdouble(bw_shown(rp, r->bw_avg)));
	json_object_object_add(j, "bw_peak", jdouble(bw_shown(rp, r->bw_peak)));
	json_object_object_add(j, "bw_avg_Bps", jdouble(r->bw_avg));
	json_object_object_add(j, "bw_peak_Bps", jdouble(r->bw_peak));
	if (rp->info->bidir) {
		json_object_object_add(j, "peer_bw_avg", jdouble(bw_shown(rp, r->peer_bw_avg)));
		json_object_object_add(j, "peer_bw_avg_Bps", jdouble(r->peer_bw_avg));
	}
	json_object_object_add(j, "link_pct", pct >= 0 ? jdouble(pct) : NULL);
}

/* Grade one result against the thresholds: lines under its row (on stderr
 * with --csv), or objects in the document's "gates". */
static void grade_result(struct report *rp, const struct rk_bench_result *r)
{
	struct rk_gate_figures f;
	char label[32];

	if (!rk_gates_any(rp->gates))
		return;
	rk_bench_gate_figures(rp->info, r, &f);
	if (rp->o->json && !rp->gate_arr)
		rp->gate_arr = json_object_new_array();
	snprintf(label, sizeof(label), "%u bytes", r->round.size);
	rp->gate_failed += cli_gates_grade(rp->gates, &f, r->round.size, label,
					   rp->o->csv ? stderr : stdout, rp->gate_arr,
					   &rp->gate_checks);
}

/* The thresholds' verdict (a line, or the document's "gates_passed"): the
 * exit status, CLI_GATE when the run worked but a check did not pass. */
static int gates_end(struct report *rp, int status)
{
	const struct bench_cli *o = rp->o;

	if (!rk_gates_any(rp->gates))
		return status;
	if (o->json && !rp->gate_arr)
		rp->gate_arr = json_object_new_array();
	return cli_gates_end(o->conn.server ? "bench server" : "bench client", status,
			     rp->gate_checks, rp->gate_failed, o->json ? NULL : o->csv ? stderr : stdout,
			     rp->doc, rp->gate_arr);
}

/* ---- options ---- */

/* The values of the options that take one of a few (cli_opt.choices), in
 * the order of their enums. */
static const char *const bench_ops[] = {"send", "write", "read", "fetch-add", "cmp-swap", NULL};
static const char *const bench_modes[] = {"bw", "lat", NULL};
static const char *const bench_transports[] = {"rc", "uc", "ud", NULL};
static const char *const bench_wr_apis[] = {"off", "on", "auto", NULL};

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
static int run_rounds(struct rk_bench *b, struct report *rp, const struct bench_plan *p,
		      const struct rk_bench_plan *plan)
{
	const struct bench_cli *o = rp->o;
	int ret, status = CLI_OK;

	rp->info = rk_bench_get_info(b);
	cli_stop_signals(true);
	if (o->json) {
		rp->doc = info_json(rp->info, o);
		units_info_json(rp);
		rp->results = json_object_new_array();
		json_object_object_add(rp->doc, "results", rp->results);
	} else if (o->csv) {
		csv_header(rp);
	} else {
		print_header(rp);
	}
	for (int i = 0; o->conn.server || i < p->nsizes; i++) {
		struct rk_bench_round round = {0};
		struct rk_bench_result res;

		if (!o->conn.server) {
			round.size = p->sizes[i];
			round.iters = plan->iters;
			round.duration_ms = plan->duration_ms;
		}
		ret = rk_bench_run(b, &round, &res);
		clear_progress(rp);
		if (ret == 1)
			break;
		if (ret) {
			status = CLI_FAILED;
			rp->err = ret;
			round_counters(rp, &res, true);
			break;
		}
		if (o->json) {
			json_object *j = result_json(rp->info, &res);

			units_result_json(rp, &res, j);
			json_object_array_add(rp->results, j);
		} else if (o->csv) {
			csv_row(rp, &res);
		} else {
			print_row(rp, &res);
		}
		grade_result(rp, &res);
		round_counters(rp, &res, false);
		/* Stopped: no more rounds (a server serves until the client's FIN). */
		if (!o->conn.server && (res.stopped || cli_stop_signal))
			break;
	}
	cli_stop_signals(false);
	return status;
}

/* The verdict: the JSON document's "ok" (and the document, printed), or the
 * last line of text; the thresholds' before it. Returns the exit status. */
static int report_end(struct report *rp, int status)
{
	const struct bench_cli *o = rp->o;
	int gated = gates_end(rp, status);

	if (o->json)
		cli_add_result(rp->doc, status == CLI_OK ? 0 : rp->err ? rp->err : -EIO);
	if (o->json && o->interval_ms) {
		/* After the interval lines, the document on a line of its own. */
		json_object_object_add(rp->doc, "ok", json_object_new_boolean(status == CLI_OK));
		json_object_object_add(rp->doc, "record", json_object_new_string("summary"));
		cli_json_line(rp->doc);
	} else if (o->json) {
		json_object_object_add(rp->doc, "ok", json_object_new_boolean(status == CLI_OK));
		cli_json_print(rp->doc);
	} else if (!o->csv) {
		printf("bench %s: %s\n", o->conn.server ? "server" : "client",
		       status == CLI_OK ? "every size checked: OK" : "FAILED");
	}
	return gated;
}

struct bench_run {
	const struct bench_cli *o;
	const struct bench_plan *p;
	struct rk_bench_opts *bo;
	bool listened; /* the server listened: a failure after it is a client's */
};

static void on_listening(void *arg)
{
	((struct bench_run *)arg)->listened = true;
}

/* Connect, run every round and report: the exit status, or CLI_STOPPED when
 * a stop signal ended a --persist server's wait for a client. */
static int serve_one(void *arg, bool *listened)
{
	struct bench_run *run = arg;
	const struct bench_cli *o = run->o;
	struct report rp = {.o = o, .gates = &run->p->gates};
	struct rk_bench *b;
	int ret, status;

	soak_hooks(o, &rp, run->bo);
	run->listened = false;
	run->bo->conn.on_listening = on_listening;
	run->bo->conn.arg = run;
	if (!o->json && !o->csv && o->conn.server)
		cli_waiting_text("bench server", 0, "client", o->conn.port, o->conn.cm);
	fflush(stdout);
	ret = rk_bench_connect(run->bo, &b);
	*listened = run->listened;
	if (ret)
		return ret == -EINTR && cli_stop_signal ? CLI_STOPPED : CLI_FAILED;
	status = run_rounds(b, &rp, run->p, &run->bo->plan);
	rk_bench_close(b);
	return report_end(&rp, status);
}

/* ---- --clients N: the server of several clients at once ---- */

/* As each client ends (text only): a line saying how it came out. */
static void on_client_end(const struct rk_bench_client *c, void *arg)
{
	(void)arg;
	cli_client_end_text("bench server", &c->out, "round", " checked");
}

/* A client's header line and its rows, under the same columns as one
 * client's report. */
static void client_text(const void *client, void *arg)
{
	const struct rk_bench_client *c = client;
	struct report *rp = arg;
	const struct rk_bench_info *in = &c->info;

	if (!cli_client_text_head(&c->out, c->connected, "not set up"))
		return;
	printf("%s %s, %s, %u QP%s%s, device %s port %u, QP 0x%x -> peer QP 0x%x%s\n",
	       test_title(in->test), in->mode == RK_BENCH_BW ? "bandwidth" : "latency",
	       rk_transport_str(in->transport), in->qps, in->qps > 1 ? "s" : "",
	       in->bidir ? ", bidirectional" : "", in->device, in->port_num, in->qpn[0],
	       in->peer_qpn[0], in->qps > 1 ? ", ..." : "");
	rp->info = in;
	print_columns(rp);
	for (uint32_t r = 0; r < c->out.done; r++)
		print_row(rp, &c->rounds[r]);
	if (c->out.status)
		printf(" FAILED: %s\n", c->out.error);
}

static void client_json(json_object *j, const void *client, void *arg)
{
	const struct rk_bench_client *c = client;
	struct report *rp = arg;
	json_object *rounds = json_object_new_array();

	if (c->connected) {
		rp->info = &c->info;
		json_object_object_add(j, "setup", info_json(&c->info, rp->o));
		json_object_object_add(j, "qpn", json_object_new_int64(c->info.qpn[0]));
		json_object_object_add(j, "peer_qpn", json_object_new_int64(c->info.peer_qpn[0]));
	}
	for (uint32_t r = 0; r < c->out.done; r++) {
		json_object *jr = result_json(&c->info, &c->rounds[r]);

		units_result_json(rp, &c->rounds[r], jr);
		json_object_array_add(rounds, jr);
	}
	json_object_object_add(j, "results", rounds);
	cli_add_int(j, "bytes", (int64_t)c->out.bytes);
	cli_add_int(j, "messages", (int64_t)c->out.msgs);
}

/* The report of a --clients run: per client, the aggregate, the verdict. */
static int clients_report(struct report *rp, const struct rk_bench_clients *rep)
{
	const struct cli_clients_report r = {
		.who = "bench server", .msgs_name = "messages", .clients = rep->clients,
		.stride = sizeof(*rep->clients), .n = rep->wanted, .total = &rep->total,
		.unit_bw = bw_shown(rp, rep->total.bw), .unit = rk_bw_unit_str(rp->gates->unit),
		.wait_s = rp->o->conn.wait, .text = client_text, .json = client_json, .arg = rp,
	};
	json_object *doc = NULL;

	if (rp->o->json) {
		doc = json_object_new_object();
		cli_add_str(doc, "role", "server");
		cli_add_str(doc, "units", rk_bw_unit_name(rp->gates->unit));
	}
	return cli_clients_report(&r, doc);
}

static int serve_clients(void *arg)
{
	struct bench_run *run = arg;
	const struct bench_cli *o = run->o;
	struct report rp = {.o = o, .gates = &run->p->gates};
	struct rk_bench_clients rep;
	int ret, status;

	if (!o->json)
		cli_waiting_text("bench server", o->clients, "client", o->conn.port, o->conn.cm);
	fflush(stdout);
	cli_stop_signals(true);
	run->bo->stop = &cli_stop_signal;
	ret = rk_bench_serve_clients(run->bo, (uint32_t)o->clients,
				     o->json ? NULL : on_client_end, NULL, &rep);
	cli_stop_signals(false);
	if (ret)
		return CLI_FAILED;
	status = clients_report(&rp, &rep);
	rk_bench_clients_free(&rep);
	return status;
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

/* Old spellings, each failing with a message naming the new one (issue 16:
 * -t is --timeout on every command). */
#define BENCH_OLD_SPELLINGS                                                               \
	CLI_OPT_GONE_ROW("", 't', "-t is now --timeout; the test is -o/--op"),            \
	CLI_OPT_GONE_ROW("test", 0, "--test is now -o/--op"),                             \
	CLI_OPT_GONE_ROW("sizes", 0, "--sizes is now -s/--size"),                         \
	CLI_OPT_GONE_ROW("iters", 0, "--iters is now -n/--count")

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
		CLI_CONN_OPTS(&o.conn),
		CLI_DEV_OPTS(&o.dev),
		BENCH_RUN_OPTS(&o),
		{"interval", 'I', CLI_OPT_SECONDS, &o.interval_ms, 1000, 3600000, "SEC",
		 "soak: a record every SEC seconds (fractions allowed), the lowest and highest in "
		 "the summary (client, with --duration)"},
		{"qps", 'q', CLI_OPT_COUNT, &o.qps, 1, RK_BENCH_MAX_QPS, "N",
		 "queue pairs, bandwidth only (client)"},
		{"threads", 0, CLI_OPT_COUNT, &o.threads, 1, RK_BENCH_MAX_THREADS, "N",
		 "bandwidth: client threads, each driving its share of the QPs with CQs of its "
		 "own (at most --qps)"},
		{"bidir", 'b', CLI_OPT_FLAG, &o.bidir, 0, 0, NULL,
		 "both directions at once, bandwidth only (client)"},
		{"tx-depth", 0, CLI_OPT_COUNT, &o.tx_depth, 0, 65536, "N",
		 "send queue depth per QP (0: 512 for bw, 64 for lat)"},
		{"rx-depth", 0, CLI_OPT_COUNT, &o.rx_depth, 0, 65536, "N",
		 "receives kept posted per QP (0: 512 for bw, 64 for lat)"},
		{"post-list", 0, CLI_OPT_COUNT, &o.post_list, 0, 64, "N",
		 "work requests per doorbell (0: 16 for bw, 1 for lat)"},
		{"signal-every", 0, CLI_OPT_COUNT, &o.signal_every, 0, 65536, "N",
		 "one signaled completion per N requests (0: 64 for bw, 16 for lat)"},
		{"cq-batch", 0, CLI_OPT_COUNT, &o.cq_batch, 0, 256, "N",
		 "completions taken per poll (0: 32)"},
		{"inline", 0, CLI_OPT_INT, &o.inline_max, -1, 65536, "BYTES",
		 "inline data up to BYTES; -1: as much as the device grants the QP; 0: off"},
		{"inflight", 0, CLI_OPT_SIZE, &o.inflight, 0, (uint64_t)1 << 32, "BYTES",
		 "bandwidth: bytes outstanding per QP at most (0: 1M)"},
		{"ack-timeout", 0, CLI_OPT_INT, &o.ack_timeout, -1, 31, "N",
		 "data QPs' local ACK timeout, 4.096 us x 2^N; 0: none; -1: 14 (67 ms)"},
		{"rnr-retry", 0, CLI_OPT_INT, &o.rnr_retry, -1, 7, "N",
		 "data QPs' RNR retries (7: forever; -1: 7): with few, a peer whose receive queue "
		 "or SRQ is empty fails this side's SENDs with IBV_WC_RNR_RETRY_EXC_ERR"},
		CLI_SRQ_OPTS(&o.srq),
		{"yield-after", 0, CLI_OPT_INT, &o.yield_after, -1, 1 << 30, "N",
		 "busy polling yields the CPU after N empty polls; 0: never; -1: 8 for bw, never for lat"},
		{"wr-api", 0, CLI_OPT_STRING, &o.wr_api, 0, 0, "WHEN",
		 "ibv_wr_* posting API: auto (where the provider has it), on, off",
		 .choices = bench_wr_apis},
		CLI_MEM_OPTS(&o.mem, "this side's data buffer: host, hugepage, memfd, memfd-huge, "
				     "auto (hugepage while the pool has room, else host; never dm)"),
		CLI_WAIT_OPTS(&o.conn, 't'),
		CLI_JSON_OPT(&o.json),
		{"csv", 0, CLI_OPT_FLAG, &o.csv, 0, 0, NULL, "print CSV, one row per size"},
		CLI_UNITS_OPT(&o.gate), CLI_BW_GATE_OPTS(&o.gate), CLI_LAT_GATE_OPT(&o.gate),
		CLI_PERSIST_OPT(&o.persist), CLI_CLIENTS_OPT(&o.clients),
		BENCH_OLD_SPELLINGS,
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
	if (check_opts(&o, &p, argv[first], &bo) != CLI_OK ||
	    cli_persist_check("bench", o.persist, o.conn.server, o.conn.wait) ||
	    cli_clients_check("bench", o.clients, o.conn.server, o.persist))
		return CLI_USAGE;
	run.o = &o;
	run.p = &p;
	run.bo = &bo;
	return cli_serve("bench server", o.json, o.persist, serve_one,
			 o.clients ? serve_clients : NULL, &run);
}
