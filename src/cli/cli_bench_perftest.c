/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit bench --proto perftest: RDMA WRITE bandwidth against perftest's
 * ib_write_bw -R, either side (the library's perftest.h), and its report. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_bench_perftest.h"
#include "cli_json.h"
#include "cli_serve.h"

static void on_listening(void *arg)
{
	const struct cli_bench_perftest *a = arg;

	if (!a->json)
		cli_waiting_text("bench server (perftest's exchange)", 0, "client", a->port, true);
	fflush(stdout);
}

static void report_text(const struct cli_bench_perftest *a, const struct rk_perftest_result *r)
{
	const struct rk_perftest_report *p = &r->report;

	printf("rdmakit bench: RDMA WRITE bandwidth, RC, 1 QP, %s %s (RDMA CM, perftest's "
	       "exchange as ib_write_bw -R; the peer says perftest %s)\n",
	       a->server ? "server for" : "client of", r->peer, r->peer_version);
	printf("  device %s port %u, path MTU %d, QP 0x%x -> peer QP 0x%x, page (cycle buffer) %u",
	       r->device, r->port_num, r->path_mtu, r->qpn, r->peer_qpn, r->cycle_buffer);
	if (!a->server)
		printf(", the server's buffer 0x%" PRIx64 " rkey 0x%x", r->peer_vaddr, r->peer_rkey);
	printf("\n");
	printf(" %-10s %-12s %-16s %-18s %-14s %s\n", "#bytes", "#iterations", "BW peak[MB/s]",
	       "BW average[MB/s]", "MsgRate[Mpps]", "from");
	printf(" %-10" PRIu64 " %-12" PRIu64 " %-16.2f %-18.2f %-14.6f %s\n", p->size, p->iters,
	       p->bw_peak, p->bw_avg, p->msg_rate,
	       a->server ? "the client's report" : "measured here");
	printf("rdmakit bench: ok\n");
}

static void report_json(const struct cli_bench_perftest *a, const struct rk_perftest_result *r,
			int ret)
{
	json_object *doc = json_object_new_object();
	json_object *res = json_object_new_object();

	cli_add_str(doc, "role", a->server ? "server" : "client");
	cli_add_str(doc, "proto", "perftest");
	cli_add_str(doc, "test", "write");
	cli_add_str(doc, "mode", "bw");
	cli_add_str(doc, "connection", "cm");
	cli_add_int(doc, "port", a->port);
	if (r->device[0]) {
		cli_add_str(doc, "device", r->device);
		cli_add_int(doc, "port_num", r->port_num);
		cli_add_str(doc, "peer", r->peer);
	}
	if (r->peer_version[0])
		cli_add_str(doc, "peer_version", r->peer_version);
	if (r->qpn) {
		cli_add_int(doc, "qpn", r->qpn);
		cli_add_int(doc, "peer_qpn", r->peer_qpn);
		cli_add_int(doc, "path_mtu", r->path_mtu);
	}
	if (r->measured) {
		cli_add_int(res, "size", (int64_t)r->report.size);
		cli_add_int(res, "iterations", (int64_t)r->report.iters);
		cli_add_double(res, "bw_peak_MiBps", r->report.bw_peak);
		cli_add_double(res, "bw_avg_MiBps", r->report.bw_avg);
		cli_add_double(res, "msg_rate_Mpps", r->report.msg_rate);
		cli_add_str(res, "from", a->server ? "client_report" : "measured");
		if (!a->server)
			cli_add_double(res, "seconds", r->seconds);
		json_object_object_add(doc, "results", res);
	} else {
		json_object_put(res);
	}
	cli_add_result(doc, ret);
	cli_json_print(doc);
}

int cli_bench_perftest(const struct cli_bench_perftest *a)
{
	struct rk_perftest_opts po = {
		.server = a->server, .host = a->host, .port = (uint16_t)a->port,
		.device = a->device, .size = a->size, .iters = a->iters, .tx_depth = a->tx_depth,
		.timeout_ms = a->timeout_ms, .accept_timeout_ms = a->accept_timeout_ms,
		.traffic = a->traffic, .on_listening = on_listening, .arg = (void *)a,
	};
	struct rk_perftest_result r;
	int ret;

	cli_stop_signals(true);
	ret = rk_perftest_run(&po, &r);
	cli_stop_signals(false);
	if (a->json) {
		report_json(a, &r, ret);
		return ret ? cli_fail(ret) : CLI_OK;
	}
	if (ret) {
		printf("rdmakit bench: failed: %s\n", r.error);
		return cli_fail(ret);
	}
	report_text(a, &r);
	return CLI_OK;
}
