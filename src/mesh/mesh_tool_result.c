/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit-mesh on rank 0: the rows of every rank assembled into matrices,
 * the verdicts, and the comparison with a baseline run. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mesh_tool.h"

int mesh_result_build(struct mesh_result *r, int n, struct mesh_node *nodes,
		      const struct mesh_cell *rows)
{
	size_t nn = (size_t)n * n;

	r->n = n;
	r->nodes = nodes;
	r->names = calloc(n, sizeof(*r->names));
	r->port_mtu = calloc(n, sizeof(*r->port_mtu));
	r->reach = calloc(nn, sizeof(*r->reach));
	r->why = calloc(nn, sizeof(*r->why));
	r->why_p = calloc(nn, sizeof(*r->why_p));
	r->bw_why = calloc(nn, sizeof(*r->bw_why));
	r->bw = calloc(nn * 6, sizeof(double));
	r->retested = calloc(nn, sizeof(*r->retested));
	r->evidence = calloc(nn, sizeof(*r->evidence));
	if (!r->names || !r->port_mtu || !r->reach || !r->why || !r->why_p || !r->bw_why || !r->bw || !r->retested ||
	    !r->evidence)
		return -ENOMEM;
	r->p50 = r->bw + nn;
	r->p99 = r->bw + 2 * nn;
	r->bw0 = r->bw + 3 * nn;
	r->p500 = r->bw + 4 * nn;
	r->p990 = r->bw + 5 * nn;
	for (int i = 0; i < n; i++) {
		char *name = malloc(96);

		if (!name)
			return -ENOMEM;
		snprintf(name, 96, "%s (rank %d)", nodes[i].host, i);
		r->names[i] = name;
		r->port_mtu[i] = nodes[i].error ? 0 : nodes[i].port_mtu;
	}
	mesh_result_fill(r, rows, true);
	return 0;
}

/* Ordered pair i -> j: reachable when i's SEND completed and j checked it. */
static void fill_reach(struct mesh_result *r, const struct mesh_cell *rows, int i, int j)
{
	int n = r->n, c = i * n + j;
	const struct mesh_cell *s = &rows[i * n + j], *d = &rows[j * n + i];

	const struct mesh_node *down = r->nodes[i].error ? &r->nodes[i]
				       : r->nodes[j].error ? &r->nodes[j] : NULL;

	/* not tried (no reach stage): reachable unless an end has no port */
	r->reach[c] = i == j || (!down && ((s->sent == 1 && d->got == 1) ||
					   (s->sent < 0 && d->got < 0)));
	r->why[c][0] = 0;
	if (!r->reach[c] && down)
		snprintf(r->why[c], MESH_WHY, "%s has no usable RDMA port: %s", down->host,
			 down->error_text);
	else if (!r->reach[c])
		snprintf(r->why[c], MESH_WHY, "%s", s->sent == 0 ? s->sent_why : d->got_why);
	r->why_p[c] = r->why[c];
}

void mesh_result_fill(struct mesh_result *r, const struct mesh_cell *rows, bool first)
{
	int n = r->n;

	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			int c = i * n + j, lo = i < j ? c : j * n + i;

			fill_reach(r, rows, i, j);
			r->bw[c] = rows[c].bw;
			snprintf(r->bw_why[c], MESH_WHY, "%s", r->reach[c] ? rows[c].bw_why : "");
			r->p50[c] = rows[lo].p50;
			r->p99[c] = rows[lo].p99;
			if (first) {
				r->bw0[c] = r->bw[c];
				r->p500[c] = r->p50[c];
				r->p990[c] = r->p99[c];
			}
			r->retested[c] = rows[c].retested || rows[j * n + i].retested;
			if (r->retested[c])
				snprintf(r->evidence[c], sizeof(r->evidence[c]), "%s: %s; %s: %s",
					 r->names[i], rows[c].counters[0] ? rows[c].counters : "none",
					 r->names[j],
					 rows[j * n + i].counters[0] ? rows[j * n + i].counters : "none");
		}
	}
}

void mesh_result_free(struct mesh_result *r)
{
	for (int i = 0; r->names && i < r->n; i++)
		free((char *)r->names[i]);
	free(r->names);
	free(r->port_mtu);
	free(r->reach);
	free(r->why);
	free(r->why_p);
	free(r->bw_why);
	free(r->bw);
	free(r->retested);
	free(r->evidence);
	free(r->out);
	memset(r, 0, sizeof(*r));
}

static int status_of(const struct mesh_result *r)
{
	int status = MESH_CLEAN;

	for (int i = 0; i < r->nout; i++) {
		if (r->out[i].kind == RK_MESH_UNREACHABLE)
			return MESH_UNREACHABLE;
		status = MESH_OUTLIERS;
	}
	return status;
}

int mesh_verdicts(struct mesh_result *r, const struct mesh_opts *o)
{
	struct rk_mesh_input in = {.n = r->n, .names = r->names,
				   .reach = r->reach, .reach_why = r->why_p,
				   .bw = o->do_bw ? r->bw : NULL,
				   .p50 = o->do_lat ? r->p50 : NULL,
				   .p99 = o->do_lat ? r->p99 : NULL,
				   .port_mtu = r->port_mtu};
	int ret = rk_mesh_verdicts(&in, &r->t, &r->out, &r->nout, &r->stats);

	if (ret) {
		fprintf(stderr, "rdmakit-mesh: verdicts: %s\n", strerror(-ret));
		return ret;
	}
	r->exit_status = status_of(r);
	return 0;
}

/* ---- --baseline OLD.json ---- */

static double cell_of(json_object *matrix, int i, int j)
{
	json_object *row = json_object_array_get_idx(matrix, i);
	json_object *v = row ? json_object_array_get_idx(row, j) : NULL;

	return v && json_object_is_type(v, json_type_double) ? json_object_get_double(v)
	       : v && json_object_is_type(v, json_type_int) ? (double)json_object_get_int64(v)
							    : NAN;
}

static int add_regression(struct mesh_result *r, enum rk_mesh_metric m, int i, int j, double now,
			  double was, double lim, const char *file)
{
	struct rk_mesh_outlier *v = realloc(r->out, (r->nout + 1) * sizeof(*v)), *o;
	bool bw = m == RK_MESH_BW;

	if (!v)
		return -ENOMEM;
	r->out = v;
	o = &r->out[r->nout++];
	memset(o, 0, sizeof(*o));
	o->kind = RK_MESH_REGRESSION;
	o->metric = m;
	o->node = -1;
	o->src = i;
	o->dst = j;
	o->value = now;
	o->expected = lim;
	snprintf(o->reason, sizeof(o->reason),
		 "%s %s %s: %s %.1f %s, was %.1f in %s (%s %.0f%%)", r->names[i], bw ? "->" : "<->",
		 r->names[j], bw ? "bandwidth" : "p50 latency", now, bw ? "MB/s" : "us", was, file,
		 bw ? "below" : "above", bw ? r->t.bw_low * 100 : r->t.lat_high * 100);
	return 0;
}

static int compare(struct mesh_result *r, json_object *matrices, const char *file)
{
	json_object *bw = NULL, *p50 = NULL;
	int n = r->n, ret = 0;

	json_object_object_get_ex(matrices, "bandwidth_mbps", &bw);
	json_object_object_get_ex(matrices, "latency_p50_us", &p50);
	for (int i = 0; i < n && !ret; i++) {
		for (int j = 0; j < n && !ret; j++) {
			int c = i * n + j;
			double was = bw ? cell_of(bw, i, j) : NAN;

			if (i != j && !isnan(was) && r->bw[c] < r->t.bw_low * was)
				ret = add_regression(r, RK_MESH_BW, i, j, r->bw[c], was,
						     r->t.bw_low * was, file);
			was = p50 && i < j ? cell_of(p50, i, j) : NAN;
			if (!ret && !isnan(was) && r->p50[c] > r->t.lat_high * was)
				ret = add_regression(r, RK_MESH_LAT_P50, i, j, r->p50[c], was,
						     r->t.lat_high * was, file);
		}
	}
	return ret;
}

int mesh_baseline(struct mesh_result *r, const struct mesh_opts *o)
{
	json_object *doc, *schema = NULL, *nodes = NULL, *matrices = NULL;
	int ret = -EINVAL;

	if (!o->baseline)
		return 0;
	doc = json_object_from_file(o->baseline);
	if (!doc) {
		fprintf(stderr, "rdmakit-mesh: --baseline %s: cannot read it as JSON: %s\n",
			o->baseline, json_util_get_last_err());
		return -EINVAL;
	}
	if (!json_object_object_get_ex(doc, "schema", &schema) ||
	    strcmp(json_object_get_string(schema), "rdmakit-mesh/1"))
		fprintf(stderr, "rdmakit-mesh: --baseline %s: not an rdmakit-mesh/1 document\n",
			o->baseline);
	else if (!json_object_object_get_ex(doc, "nodes", &nodes) ||
		 (int)json_object_array_length(nodes) != r->n)
		fprintf(stderr, "rdmakit-mesh: --baseline %s: has %d nodes, this run %d\n",
			o->baseline, nodes ? (int)json_object_array_length(nodes) : 0, r->n);
	else if (!json_object_object_get_ex(doc, "matrices", &matrices))
		fprintf(stderr, "rdmakit-mesh: --baseline %s: no matrices\n", o->baseline);
	else
		ret = compare(r, matrices, o->baseline);
	json_object_put(doc);
	if (!ret) {
		snprintf(r->baseline_note, sizeof(r->baseline_note), "compared with %s",
			 o->baseline);
		r->exit_status = status_of(r);
	}
	return ret;
}
