/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit bench's report: the header and a row per size in a table like
 * perftest's, --json or --csv; soak intervals and their summary; the graded
 * thresholds; the --clients report. cmd_bench.c runs it round by round. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_bench_report.h"
#include "cli_cmdline.h"
#include "cli_gates.h"
#include "cli_json.h"
#include "cli_serve.h"
#include "cli_srq.h"

#define MIB (1024.0 * 1024.0)

/* soak: below */
static void soak_row_text(const struct cli_bench_report *rp, const struct rk_bench_result *r);
static void soak_result_json(json_object *j, const struct rk_bench_result *r, bool lat);
/* Bandwidth in the unit --units chose. */
static double bw_shown(const struct cli_bench_report *rp, double bytes_per_s)
{
	return rk_bw_in(bytes_per_s, rp->gates->unit);
}

/* The share of the link rate, where that rate is a real link's; else -1. */
static double link_pct(const struct cli_bench_report *rp, double bytes_per_s)
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
static void print_link(const struct cli_bench_report *rp)
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

static void print_columns(const struct cli_bench_report *rp);

/* Whether each data QP had an RDMA CM connection of its own: --cm on an
 * iWARP device, the engine's rule (rk_bench_info has no member for it: its
 * layout is ABI). */
static bool cm_per_qp(const struct rk_bench_info *in)
{
	struct rk_device *dev;
	bool yes;

	if (!in->cm || rk_device_open(in->device, &dev))
		return false;
	yes = rk_device_is_iwarp(dev);
	rk_device_close(dev);
	return yes;
}

static void print_header(const struct cli_bench_report *rp)
{
	const struct rk_bench_info *in = rp->info;
	bool per_qp = cm_per_qp(in);
	char threads[32] = "", traffic[128];

	if (in->threads > 1)
		snprintf(threads, sizeof(threads), " on %u threads", in->threads);
	printf("rdmakit bench: %s %s, %s, %u QP%s%s%s, %s %s (%s)\n", test_title(in->test),
	       in->mode == RK_BENCH_BW ? "bandwidth" : "latency", rk_transport_str(in->transport),
	       in->qps, in->qps > 1 ? "s" : "", threads, in->bidir ? ", bidirectional" : "",
	       in->server ? "server for" : "client of", in->peer,
	       per_qp ? "RDMA CM, a connection per QP" : in->cm ? "RDMA CM" :
	       "TCP exchange");
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
	if (per_qp) {
		printf("  timeout   TCP's (iWARP: each data QP's RDMA CM connection runs over "
		       "TCP)\n");
	} else if (in->transport == RK_RC) {
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
	if (in->transport == RK_RC && in->rnr_retry != 7 && !per_qp)
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
static void print_columns(const struct cli_bench_report *rp)
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

static void clear_progress(struct cli_bench_report *rp)
{
	if (rp->progress_shown) {
		printf("\r\033[K");
		rp->progress_shown = false;
	}
}

static void on_progress(const struct rk_bench_progress *p, void *arg)
{
	struct cli_bench_report *rp = arg;

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

static void print_row(struct cli_bench_report *rp, const struct rk_bench_result *r)
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
static void csv_header(const struct cli_bench_report *rp)
{
	const char *u = rk_bw_unit_name(rp->gates->unit);

	printf("test,mode,transport,qps,size,iterations,messages,seconds,bw_peak_%sps,"
	       "bw_avg_%sps,msg_rate_Mpps,lat_min_us,lat_median_us,lat_avg_us,lat_p99_us,"
	       "lat_p999_us,lat_max_us,received,lost,check\n", u, u);
}

static void csv_row(const struct cli_bench_report *rp, const struct rk_bench_result *r)
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

static json_object *info_json(const struct rk_bench_info *in,
			      const struct cli_bench_report_opts *o)
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
	json_object_object_add(j, "cm_per_qp", json_object_new_boolean(cm_per_qp(in)));
	json_object_object_add(j, "peer", json_object_new_string(in->peer));
	json_object_object_add(j, "device", json_object_new_string(in->device));
	json_object_object_add(j, "port", json_object_new_int(in->port_num));
	if (in->has_gid) {
		json_object_object_add(j, "gid_index", json_object_new_int((int)in->gid_index));
		json_object_object_add(j, "gid", json_object_new_string(in->gid));
	}
	json_object_object_add(j, "path_mtu", json_object_new_int(in->path_mtu));
	json_object_object_add(j, "port_tcp", json_object_new_int((int)o->port));
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
static void round_counters(const struct cli_bench_report *rp, const struct rk_bench_result *r,
			   bool failed)
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

static void interval_text(const struct cli_bench_report *rp, const struct rk_bench_interval *iv,
			  bool lat)
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
	struct cli_bench_report *rp = arg;
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

void cli_bench_hooks(struct cli_bench_report *rp, struct rk_bench_opts *bo)
{
	const struct cli_bench_report_opts *o = rp->o;

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
static void soak_row_text(const struct cli_bench_report *rp, const struct rk_bench_result *r)
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
static void units_info_json(const struct cli_bench_report *rp)
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

static void units_result_json(const struct cli_bench_report *rp, const struct rk_bench_result *r,
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
static void grade_result(struct cli_bench_report *rp, const struct rk_bench_result *r)
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
static int gates_end(struct cli_bench_report *rp, int status)
{
	const struct cli_bench_report_opts *o = rp->o;

	if (!rk_gates_any(rp->gates))
		return status;
	if (o->json && !rp->gate_arr)
		rp->gate_arr = json_object_new_array();
	return cli_gates_end(o->server ? "bench server" : "bench client", status,
			     rp->gate_checks, rp->gate_failed, o->json ? NULL : o->csv ? stderr : stdout,
			     rp->doc, rp->gate_arr);
}

/* ---- a run's report, round by round (cmd_bench.c's run_rounds()) ---- */

void cli_bench_head(struct cli_bench_report *rp, const struct rk_bench_info *info)
{
	const struct cli_bench_report_opts *o = rp->o;

	rp->info = info;
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
}

void cli_bench_clear_progress(struct cli_bench_report *rp)
{
	clear_progress(rp);
}

void cli_bench_result(struct cli_bench_report *rp, const struct rk_bench_result *r)
{
	const struct cli_bench_report_opts *o = rp->o;

	if (o->json) {
		json_object *j = result_json(rp->info, r);

		units_result_json(rp, r, j);
		json_object_array_add(rp->results, j);
	} else if (o->csv) {
		csv_row(rp, r);
	} else {
		print_row(rp, r);
	}
	grade_result(rp, r);
	round_counters(rp, r, false);
}

void cli_bench_failed(struct cli_bench_report *rp, const struct rk_bench_result *r, int err)
{
	rp->err = err;
	round_counters(rp, r, true);
}

int cli_bench_end(struct cli_bench_report *rp, int status)
{
	const struct cli_bench_report_opts *o = rp->o;
	int gated = gates_end(rp, status);

	if (o->json)
		cli_add_result(rp->doc, status == CLI_OK ? 0 : rp->err ? rp->err : -EIO);
	if (o->json && o->interval_ms) {
		/* After the interval lines, the document on a line of its own. */
		json_object_object_add(rp->doc, "ok", json_object_new_boolean(status == CLI_OK));
		json_object_object_add(rp->doc, "record", json_object_new_string("summary"));
		cli_json_lines = true; /* the outcome, on a line after the records */
		cli_json_print(rp->doc);
	} else if (o->json) {
		json_object_object_add(rp->doc, "ok", json_object_new_boolean(status == CLI_OK));
		cli_json_print(rp->doc);
	} else if (!o->csv) {
		printf("bench %s: %s\n", o->server ? "server" : "client",
		       status == CLI_OK ? "every size checked: OK" : "FAILED");
	}
	return gated;
}

/* ---- --clients N: the server of several clients at once ---- */

void cli_bench_client_end(const struct rk_bench_client *c, void *arg)
{
	(void)arg;
	cli_client_end_text("bench server", &c->out, "round", " checked");
}

/* A client's header line and its rows, under the same columns as one
 * client's report. */
static void client_text(const void *client, void *arg)
{
	const struct rk_bench_client *c = client;
	struct cli_bench_report *rp = arg;
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
	struct cli_bench_report *rp = arg;
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

int cli_bench_clients(struct cli_bench_report *rp, const struct rk_bench_clients *rep)
{
	const struct cli_clients_report r = {
		.who = "bench server", .msgs_name = "messages", .clients = rep->clients,
		.stride = sizeof(*rep->clients), .n = rep->wanted, .total = &rep->total,
		.unit_bw = bw_shown(rp, rep->total.bw), .unit = rk_bw_unit_str(rp->gates->unit),
		.wait_s = rp->o->wait_s, .text = client_text, .json = client_json, .arg = rp,
	};
	json_object *doc = NULL;

	if (rp->o->json) {
		doc = json_object_new_object();
		cli_add_str(doc, "role", "server");
		cli_add_str(doc, "units", rk_bw_unit_name(rp->gates->unit));
	}
	return cli_clients_report(&r, doc);
}
