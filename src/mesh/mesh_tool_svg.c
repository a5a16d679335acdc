/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit-mesh's heat map: one self-contained SVG, a panel per matrix, a
 * <title> per cell (the tooltip), no script. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mesh_tool.h"

#define CELL 44
#define LABEL 150
#define GAP 40
#define TOP 60

static void xml(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* Green (at or better than the reference) through yellow to red (at the
 * threshold or worse), as plain #rrggbb (SVG 1.1 knows no hsl()). */
static void color(double goodness, double threshold, char *buf, size_t len)
{
	static const int stops[3][3] = {{0xd7, 0x30, 0x27}, {0xfe, 0xe0, 0x8b}, {0x1a, 0x98, 0x50}};
	double q = (goodness - threshold) / (1 - threshold);
	int lo, rgb[3];

	q = q < 0 ? 0 : q > 1 ? 1 : q;
	lo = q < 0.5 ? 0 : 1;
	q = q < 0.5 ? q * 2 : (q - 0.5) * 2;
	for (int k = 0; k < 3; k++)
		rgb[k] = (int)(stops[lo][k] + (stops[lo + 1][k] - stops[lo][k]) * q + 0.5);
	snprintf(buf, len, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

struct panel {
	const char *title;
	const double *m;   /* NULL: reachability */
	bool high_good;
	double ref, limit; /* limit as a fraction of ref (goodness scale) */
	const char *unit;
};

static void cell(FILE *f, const struct mesh_result *r, const struct panel *p, int x0, int i,
		 int j)
{
	int n = r->n, c = i * n + j, x = x0 + LABEL + j * CELL, y = TOP + i * CELL;
	double v = p->m ? p->m[c] : NAN;
	char fill[48] = "#d0d0d0", text[32] = "";

	if (i != j && !r->reach[c])
		snprintf(fill, sizeof(fill), "#202020");
	else if (i != j && !p->m)
		snprintf(fill, sizeof(fill), "#1a9850");
	else if (i != j && !isnan(v)) {
		color(p->high_good ? v / p->ref : p->ref / v, p->limit, fill, sizeof(fill));
		snprintf(text, sizeof(text), "%.0f", v);
	}
	fprintf(f, "<g><title>");
	xml(f, r->nodes[i].host);
	fprintf(f, " %s ", p->m && !p->high_good ? "&lt;-&gt;" : "-&gt;");
	xml(f, r->nodes[j].host);
	if (i == j)
		fprintf(f, ": itself");
	else if (!r->reach[c]) {
		fprintf(f, ": unreachable: ");
		xml(f, r->why[c]);
	} else if (!p->m)
		fprintf(f, ": reachable");
	else if (isnan(v))
		fprintf(f, ": not measured");
	else
		fprintf(f, ": %.1f %s%s", v, p->unit, r->retested[c] ? " (re-tested)" : "");
	fprintf(f, "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
		   "stroke=\"#fff\"/>", x, y, CELL, CELL, fill);
	if (text[0])
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s</text>",
			x + CELL / 2, y + CELL / 2 + 4, text);
	fprintf(f, "</g>\n");
}

static void panel(FILE *f, const struct mesh_result *r, const struct panel *p, int x0)
{
	int n = r->n;

	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">", x0, TOP - 34);
	xml(f, p->title);
	fprintf(f, "</text>\n");
	for (int i = 0; i < n; i++) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">", x0 + LABEL - 6,
			TOP + i * CELL + CELL / 2 + 4);
		xml(f, r->nodes[i].host);
		fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%d"
			   "</text>\n", x0 + LABEL + i * CELL + CELL / 2, TOP - 8, i);
		for (int j = 0; j < n; j++)
			cell(f, r, p, x0, i, j);
	}
}

int mesh_report_svg(const struct mesh_result *r, const char *file)
{
	struct panel panels[3] = {
		{"reachability (row -> column)", NULL, true, 1, 0, ""},
	};
	int np = 1, width, x = 10;
	FILE *f = fopen(file, "w");

	if (!f) {
		fprintf(stderr, "rdmakit-mesh: --svg: cannot write %s: %m\n", file);
		return -errno;
	}
	if (!isnan(r->stats.bw_ref))
		panels[np++] = (struct panel){"bandwidth MB/s (row sends to column)", r->bw, true,
					      r->stats.bw_ref, r->t.bw_low, "MB/s"};
	if (!isnan(r->stats.lat_ref))
		panels[np++] = (struct panel){"latency p50 us (per pair)", r->p50, false,
					      r->stats.lat_ref, 1 / r->t.lat_high, "us"};
	width = 20 + np * (LABEL + r->n * CELL + GAP);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
		   "width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n<title>rdmakit-mesh: %d nodes, "
		   "%d outlier%s</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n", width,
		TOP + r->n * CELL + 40, r->n, r->nout, r->nout == 1 ? "" : "s");
	for (int k = 0; k < np; k++, x += LABEL + r->n * CELL + GAP)
		panel(f, r, &panels[k], x);
	fprintf(f, "<text x=\"10\" y=\"%d\" font-size=\"11\">green: at the fabric reference; red: at "
		   "the outlier threshold or worse; black: unreachable. Hover a cell for its value."
		   "</text>\n</svg>\n", TOP + r->n * CELL + 24);
	return fclose(f) ? -EIO : 0;
}
