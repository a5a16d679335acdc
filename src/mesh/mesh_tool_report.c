/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit-mesh's reports, rank 0: text (verdicts first), JSON (schema
 * rdmakit-mesh/1), CSV matrices and an SVG heat map. One result feeds all. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include <rdmakit/version.h>

#include "mesh_tool.h"

/* Counter changes seen while re-testing the cells an outlier covers. */
static void evidence(const struct mesh_result *r, const struct rk_mesh_outlier *o, char *buf,
		     size_t len)
{
	int n = r->n;
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			int c = i * n + j;
			bool mine = o->node >= 0 ? (i == o->node || j == o->node)
						 : (i == o->src && j == o->dst);

			if (!mine || !r->retested[c] || !r->evidence[c][0] || used >= len - 1)
				continue;
			if (o->node >= 0 && i > j)
				continue; /* both cells of a pair carry the same text */
			used += snprintf(buf + used, len - used, "%s%s", used ? " | " : "",
					 r->evidence[c]);
		}
	}
}

/* Rates with three significant digits (a lossy link's 0.0163 MB/s shows), times in 0.1 us. */
static void print_matrix(const struct mesh_result *r, const double *m, const char *title, bool rate)
{
	int n = r->n;

	printf("\n%s\n      ", title);
	for (int j = 0; j < n; j++)
		printf(" %9d", j);
	printf("\n");
	for (int i = 0; i < n; i++) {
		printf("  %3d ", i);
		for (int j = 0; j < n; j++) {
			double v = m[i * n + j];

			if (i == j)
				printf(" %9s", "-");
			else if (isnan(v))
				printf(" %9s", r->reach[i * n + j] ? "n/a" : "X");
			else if (rate)
				printf(" %9.3g", v);
			else
				printf(" %9.1f", v);
		}
		printf("\n");
	}
}

static void print_verdicts(const struct mesh_result *r)
{
	char ev[1024];

	if (!r->nout) {
		printf("verdict: clean: every pair reachable, no node or link stands out\n");
		return;
	}
	printf("verdict: %d outlier%s\n", r->nout, r->nout == 1 ? "" : "s");
	for (int i = 0; i < r->nout; i++) {
		const struct rk_mesh_outlier *o = &r->out[i];

		printf("  [%s] %s\n", rk_mesh_kind_str(o->kind), o->reason);
		evidence(r, o, ev, sizeof(ev));
		if (ev[0])
			printf("    counters while re-tested: %s\n", ev);
	}
}

void mesh_report_text(const struct mesh_result *r, const struct mesh_opts *o)
{
	int n = r->n, retested = 0;
	char traffic[128];

	for (int c = 0; c < n * n; c++)
		retested += r->retested[c] && c / n < c % n;

	printf("rdmakit-mesh: %d nodes, schedule %s, stages %s%s\n", n,
	       rk_mesh_sched_str(o->sched), o->stages,
	       cli_traffic_str(&o->traffic, traffic, sizeof(traffic)));
	print_verdicts(r);
	if (retested)
		printf("re-tested one at a time: %d pair%s (the matrices hold the re-tests)\n",
		       retested, retested == 1 ? "" : "s");
	if (r->baseline_note[0])
		printf("baseline: %s\n", r->baseline_note);
	for (int c = 0; o->do_bw && c < n * n; c++)
		if (r->bw_why[c][0])
			printf("bandwidth %s -> %s failed: %s\n", r->names[c / n], r->names[c % n],
			       r->bw_why[c]);
	if (o->do_bw && !isnan(r->stats.bw_ref))
		printf("reference: bandwidth %.3g MB/s (matrix median %.3g, MAD %.3g)\n",
		       r->stats.bw_ref, r->stats.bw_median, r->stats.bw_mad);
	if (o->do_lat && !isnan(r->stats.lat_ref))
		printf("reference: p50 latency %.1f us (matrix median %.1f, MAD %.1f), p99 %.1f us\n",
		       r->stats.lat_ref, r->stats.lat_median, r->stats.lat_mad, r->stats.p99_ref);
	if (o->quiet)
		return;
	printf("\nnodes:\n");
	for (int i = 0; i < n; i++)
		printf("  %3d %-20s %-8s MTU %-4d %s%s\n", i, r->nodes[i].host, r->nodes[i].device,
		       r->port_mtu[i], r->nodes[i].gid,
		       r->nodes[i].error ? r->nodes[i].error_text : "");
	if (o->do_bw)
		print_matrix(r, r->bw, "bandwidth MB/s (row sends to column; X unreachable):", true);
	if (o->do_lat) {
		print_matrix(r, r->p50, "latency p50 us (per pair, half round trip):", false);
		print_matrix(r, r->p99, "latency p99 us:", false);
	}
}

/* ---- JSON ---- */

static json_object *num_or_null(double v)
{
	return isnan(v) ? NULL : json_object_new_double(round(v * 1000) / 1000);
}

static json_object *matrix_json(const struct mesh_result *r, const double *m)
{
	json_object *rows = json_object_new_array();

	for (int i = 0; i < r->n; i++) {
		json_object *row = json_object_new_array();

		for (int j = 0; j < r->n; j++)
			json_object_array_add(row, i == j ? NULL : num_or_null(m[i * r->n + j]));
		json_object_array_add(rows, row);
	}
	return rows;
}

/* One string per cell ("" / null when none). */
static json_object *text_json(const struct mesh_result *r, char (*text)[MESH_WHY])
{
	json_object *rows = json_object_new_array();

	for (int i = 0; i < r->n; i++) {
		json_object *row = json_object_new_array();

		for (int j = 0; j < r->n; j++) {
			const char *t = text[i * r->n + j];

			json_object_array_add(row, t[0] ? json_object_new_string(t) : NULL);
		}
		json_object_array_add(rows, row);
	}
	return rows;
}

static json_object *reach_json(const struct mesh_result *r, bool errors)
{
	json_object *rows = json_object_new_array();

	for (int i = 0; i < r->n; i++) {
		json_object *row = json_object_new_array();

		for (int j = 0; j < r->n; j++) {
			int c = i * r->n + j;

			if (errors)
				json_object_array_add(row, r->reach[c] ? NULL
							   : json_object_new_string(r->why[c]));
			else
				json_object_array_add(row, json_object_new_boolean(r->reach[c]));
		}
		json_object_array_add(rows, row);
	}
	return rows;
}

static json_object *nodes_json(const struct mesh_result *r)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < r->n; i++) {
		json_object *o = json_object_new_object();
		const struct mesh_node *nd = &r->nodes[i];

		json_object_object_add(o, "rank", json_object_new_int(i));
		json_object_object_add(o, "host", json_object_new_string(nd->host));
		json_object_object_add(o, "device", json_object_new_string(nd->device));
		json_object_object_add(o, "gid", nd->gid[0] ? json_object_new_string(nd->gid) : NULL);
		json_object_object_add(o, "port_mtu", r->port_mtu[i] ?
				       json_object_new_int(r->port_mtu[i]) : NULL);
		json_object_object_add(o, "error",
				       nd->error ? json_object_new_string(nd->error_text) : NULL);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *params_json(const struct mesh_result *r, const struct mesh_opts *o)
{
	json_object *p = json_object_new_object(), *t = json_object_new_object();
	json_object *stages = json_object_new_array();

	if (o->do_reach)
		json_object_array_add(stages, json_object_new_string("reach"));
	if (o->do_lat)
		json_object_array_add(stages, json_object_new_string("latency"));
	if (o->do_bw)
		json_object_array_add(stages, json_object_new_string("bandwidth"));
	json_object_object_add(p, "schedule", json_object_new_string(rk_mesh_sched_str(o->sched)));
	json_object_object_add(p, "stages", stages);
	json_object_object_add(p, "latency_iters", json_object_new_int64((int64_t)o->lat_iters));
	json_object_object_add(p, "bw_size", json_object_new_int64((int64_t)o->bw_size));
	json_object_object_add(p, "bw_iters", json_object_new_int64((int64_t)o->bw_iters));
	json_object_object_add(p, "window", json_object_new_int64((int64_t)o->window));
	json_object_object_add(p, "timeout_ms", json_object_new_int64((int64_t)o->timeout_ms));
	json_object_object_add(p, "retest", json_object_new_boolean(!o->no_retest));
	json_object_object_add(t, "bw_low", json_object_new_double(r->t.bw_low));
	json_object_object_add(t, "lat_high", json_object_new_double(r->t.lat_high));
	json_object_object_add(t, "lat_jitter", json_object_new_double(r->t.lat_jitter));
	json_object_object_add(p, "thresholds", t);
	json_object_object_add(p, "traffic", cli_traffic_json(&o->traffic));
	return p;
}

static json_object *pair_or_null(int v)
{
	return v < 0 ? NULL : json_object_new_int(v);
}

static json_object *outliers_json(const struct mesh_result *r)
{
	json_object *a = json_object_new_array();
	char ev[1024];

	for (int i = 0; i < r->nout; i++) {
		const struct rk_mesh_outlier *o = &r->out[i];
		json_object *x = json_object_new_object();

		json_object_object_add(x, "kind", json_object_new_string(rk_mesh_kind_str(o->kind)));
		json_object_object_add(x, "metric",
				       json_object_new_string(rk_mesh_metric_str(o->metric)));
		json_object_object_add(x, "node", pair_or_null(o->node));
		json_object_object_add(x, "host", o->node >= 0
				       ? json_object_new_string(r->nodes[o->node].host) : NULL);
		json_object_object_add(x, "src", pair_or_null(o->src));
		json_object_object_add(x, "dst", pair_or_null(o->dst));
		json_object_object_add(x, "value", num_or_null(o->value));
		json_object_object_add(x, "expected", num_or_null(o->expected));
		json_object_object_add(x, "reason", json_object_new_string(o->reason));
		evidence(r, o, ev, sizeof(ev));
		json_object_object_add(x, "counters", ev[0] ? json_object_new_string(ev) : NULL);
		json_object_array_add(a, x);
	}
	return a;
}

static json_object *stats_json(const struct mesh_result *r)
{
	json_object *s = json_object_new_object();

	json_object_object_add(s, "bw_reference_mbps", num_or_null(r->stats.bw_ref));
	json_object_object_add(s, "bw_median_mbps", num_or_null(r->stats.bw_median));
	json_object_object_add(s, "bw_mad_mbps", num_or_null(r->stats.bw_mad));
	json_object_object_add(s, "lat_reference_us", num_or_null(r->stats.lat_ref));
	json_object_object_add(s, "lat_median_us", num_or_null(r->stats.lat_median));
	json_object_object_add(s, "lat_mad_us", num_or_null(r->stats.lat_mad));
	json_object_object_add(s, "p99_reference_us", num_or_null(r->stats.p99_ref));
	return s;
}

json_object *mesh_report_doc(const struct mesh_result *r, const struct mesh_opts *o)
{
	json_object *doc = json_object_new_object(), *m = json_object_new_object();

	json_object_object_add(doc, "schema", json_object_new_string("rdmakit-mesh/1"));
	json_object_object_add(doc, "rdmakit_version", json_object_new_string(rk_version()));
	json_object_object_add(doc, "nodes", nodes_json(r));
	json_object_object_add(doc, "parameters", params_json(r, o));
	json_object_object_add(m, "reach", reach_json(r, false));
	json_object_object_add(m, "reach_errors", reach_json(r, true));
	if (o->do_bw) {
		json_object_object_add(m, "bandwidth_mbps", matrix_json(r, r->bw));
		json_object_object_add(m, "bandwidth_first_mbps", matrix_json(r, r->bw0));
		json_object_object_add(m, "bandwidth_errors", text_json(r, r->bw_why));
	}
	if (o->do_lat) {
		json_object_object_add(m, "latency_p50_us", matrix_json(r, r->p50));
		json_object_object_add(m, "latency_p99_us", matrix_json(r, r->p99));
		json_object_object_add(m, "latency_p50_first_us", matrix_json(r, r->p500));
	}
	json_object_object_add(doc, "matrices", m);
	json_object_object_add(doc, "statistics", stats_json(r));
	json_object_object_add(doc, "outliers", outliers_json(r));
	json_object_object_add(doc, "baseline",
			       r->baseline_note[0] ? json_object_new_string(o->baseline) : NULL);
	json_object_object_add(doc, "exit_status", json_object_new_int(r->exit_status));
	return doc;
}

int mesh_report_json(const struct mesh_result *r, const struct mesh_opts *o)
{
	json_object *doc = mesh_report_doc(r, o);
	int ret = 0;

	if (json_object_to_file_ext(o->json, doc, JSON_C_TO_STRING_PRETTY)) {
		fprintf(stderr, "rdmakit-mesh: --json-file %s: %s\n", o->json, json_util_get_last_err());
		ret = -EIO;
	}
	json_object_put(doc);
	return ret;
}

/* ---- CSV ---- */

static int csv_one(const struct mesh_result *r, const char *dir, const char *name,
		   const double *m)
{
	char path[4096];
	FILE *f;
	int n = r->n;

	snprintf(path, sizeof(path), "%s/%s.csv", dir, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "rdmakit-mesh: --csv: cannot write %s: %m\n", path);
		return -errno;
	}
	fprintf(f, "%s", name);
	for (int j = 0; j < n; j++)
		fprintf(f, ",%s", r->nodes[j].host);
	fprintf(f, "\n");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s", r->nodes[i].host);
		for (int j = 0; j < n; j++) {
			int c = i * n + j;

			if (!m)
				fprintf(f, ",%d", r->reach[c] ? 1 : 0);
			else if (i == j || isnan(m[c]))
				fprintf(f, ",");
			else
				fprintf(f, ",%.3f", m[c]);
		}
		fprintf(f, "\n");
	}
	return fclose(f) ? -EIO : 0;
}

int mesh_report_csv(const struct mesh_result *r, const char *dir)
{
	int ret;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "rdmakit-mesh: --csv: cannot make %s: %m\n", dir);
		return -errno;
	}
	ret = csv_one(r, dir, "reach", NULL);
	if (!ret && !isnan(r->stats.bw_ref))
		ret = csv_one(r, dir, "bandwidth_mbps", r->bw);
	if (!ret && !isnan(r->stats.lat_ref))
		ret = csv_one(r, dir, "latency_p50_us", r->p50);
	if (!ret && !isnan(r->stats.lat_ref))
		ret = csv_one(r, dir, "latency_p99_us", r->p99);
	return ret;
}
