/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit-mesh's stages: rounds of links over rdmakit's own QPs. MPI only
 * carries the link info (one Alltoall per round) and the barriers that keep
 * the ranks in step; every measured byte goes over the links. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include <rdmakit/counters.h>
#include <rdmakit/log.h>
#include <rdmakit/stats.h>

#include "mesh_tool.h"

/* This rank's links of one round: [0] to the peer it sends to, [1] from the
 * peer it receives from (the same link when both are one peer). */
struct round {
	int to, from;
	struct rk_mesh_link *link[2];
	char why[2][MESH_WHY]; /* why a link is missing */
};

/* Whether a link to peer can be made; why not into why. */
static bool usable(const struct mesh_ctx *c, int peer, char *why)
{
	const struct mesh_node *me = &c->nodes[c->rank], *p = &c->nodes[peer];

	if (!c->port) {
		snprintf(why, MESH_WHY, "%s has no usable RDMA port: %s", me->host, me->error_text);
		return false;
	}
	if (p->error) {
		snprintf(why, MESH_WHY, "%s has no usable RDMA port: %s", p->host, p->error_text);
		return false;
	}
	return true;
}

static void make_links(struct mesh_ctx *c, struct round *rd, struct rk_mesh_info *send)
{
	int peers[2] = {rd->to, rd->from};

	for (int k = 0; k < 2; k++) {
		int p = peers[k], ret;

		if (p < 0 || (k == 1 && rd->from == rd->to))
			continue;
		send[p].error = -ENODEV;
		if (!usable(c, p, rd->why[k]))
			continue;
		ret = rk_mesh_link_create(c->port, &rd->link[k], &send[p]);
		if (ret) {
			snprintf(rd->why[k], MESH_WHY, "creating the QP on %s: %s",
				 c->nodes[c->rank].host, strerror(-ret));
			send[p].error = ret;
		}
	}
}

static void connect_links(struct mesh_ctx *c, struct round *rd, const struct rk_mesh_info *recv)
{
	int peers[2] = {rd->to, rd->from};

	for (int k = 0; k < 2; k++) {
		if (!rd->link[k] || (k == 1 && rd->from == rd->to))
			continue;
		if (rk_mesh_link_connect(rd->link[k], &recv[peers[k]], rd->why[k], MESH_WHY)) {
			rk_mesh_link_destroy(rd->link[k]);
			rd->link[k] = NULL;
		}
	}
	if (rd->from >= 0 && rd->from == rd->to) {
		rd->link[1] = rd->link[0];
		memcpy(rd->why[1], rd->why[0], MESH_WHY);
	}
}

static int round_open(struct mesh_ctx *c, int to, int from, struct round *rd)
{
	struct rk_mesh_info *send = calloc(c->n, sizeof(*send));
	struct rk_mesh_info *recv = calloc(c->n, sizeof(*recv));
	int ret = -ENOMEM;

	memset(rd, 0, sizeof(*rd));
	rd->to = to;
	rd->from = from;
	if (send && recv) {
		make_links(c, rd, send);
		MPI_Alltoall(send, sizeof(*send), MPI_BYTE, recv, sizeof(*recv), MPI_BYTE,
			     MPI_COMM_WORLD);
		connect_links(c, rd, recv);
		ret = 0;
	}
	free(send);
	free(recv);
	MPI_Barrier(MPI_COMM_WORLD); /* every QP of the round is ready to receive */
	return ret;
}

static void round_close(struct round *rd)
{
	MPI_Barrier(MPI_COMM_WORLD); /* the peers are done with our QPs */
	if (rd->link[1] != rd->link[0])
		rk_mesh_link_destroy(rd->link[1]);
	rk_mesh_link_destroy(rd->link[0]);
}

static int pairs_done(const struct mesh_ctx *c, enum rk_mesh_sched s, int rounds)
{
	int k = 0;

	for (int r = 0; r < rounds; r++) {
		for (int x = 0; x < c->n; x++) {
			int to, from;

			if (!rk_mesh_peer(s, c->n, r, x, &to, &from) && to >= 0 &&
			    (s == RK_MESH_SHIFT || x < to))
				k++;
		}
	}
	return k;
}

static void progress(const struct mesh_ctx *c, const char *stage, enum rk_mesh_sched s,
		     int round)
{
	int total = rk_mesh_rounds(s, c->n);

	if (!c->progress)
		return;
	printf("\r\033[K%s (%s): round %d/%d, pair %d/%d", stage, rk_mesh_sched_str(s), round,
	       total, pairs_done(c, s, round), pairs_done(c, s, total));
	if (round == total)
		printf("\r\033[K");
	fflush(stdout);
}

typedef void (*round_op)(struct mesh_ctx *c, struct round *rd, enum rk_mesh_sched s);

static int run_rounds(struct mesh_ctx *c, const char *stage, enum rk_mesh_sched s, round_op op)
{
	int rounds = rk_mesh_rounds(s, c->n);

	for (int r = 0; r < rounds; r++) {
		struct round rd;
		int to, from, ret;

		ret = rk_mesh_peer(s, c->n, r, c->rank, &to, &from);
		if (!ret)
			ret = round_open(c, to, from, &rd);
		if (ret)
			return ret;
		op(c, &rd, s);
		round_close(&rd);
		if (c->rank == 0)
			progress(c, stage, s, r + 1);
	}
	return 0;
}

typedef int (*reach_fn)(struct rk_mesh_link *link, int src, int dst, uint32_t nonce,
			int timeout_ms, char *why, size_t why_len);

/* One direction of a reach round: src -> dst over link (NULL: link_why says
 * why there is none). *ok_p 1 when the checked message went through, else 0
 * with the reason in why. */
static void reach_way(const struct mesh_ctx *c, reach_fn fn, struct rk_mesh_link *link,
		      const char *link_why, int src, int dst, int8_t *ok_p, char *why)
{
	*ok_p = 0;
	if (!link)
		snprintf(why, MESH_WHY, "%s", link_why);
	else if (!fn(link, src, dst, c->nonce, (int)c->o->timeout_ms, why, MESH_WHY))
		*ok_p = 1;
}

static void reach_op(struct mesh_ctx *c, struct round *rd, enum rk_mesh_sched s)
{
	if (rd->to >= 0) {
		struct mesh_cell *cell = &c->row[rd->to];

		reach_way(c, rk_mesh_reach_send, rd->link[0], rd->why[0], c->rank, rd->to,
			  &cell->sent, cell->sent_why);
	}
	if (rd->from >= 0) {
		struct mesh_cell *cell = &c->row[rd->from];

		reach_way(c, rk_mesh_reach_recv, rd->link[1], rd->why[1], rd->from, c->rank,
			  &cell->got, cell->got_why);
	}
}

int mesh_stage_reach(struct mesh_ctx *c)
{
	return run_rounds(c, "reachability", c->o->sched, reach_op);
}

/* One ping-pong with the round's partner; the lower rank measures. */
static void latency_op(struct mesh_ctx *c, struct round *rd, enum rk_mesh_sched s)
{
	int iters = (int)c->o->lat_iters, peer = rd->to;
	bool initiator = c->rank < peer;
	double *samples;
	struct rk_rtt_stats st;
	char why[MESH_WHY];

	if (peer < 0 || !rd->link[0])
		return;
	samples = calloc(iters, sizeof(*samples));
	if (!samples)
		return;
	if (rk_mesh_pingpong(rd->link[0], initiator, iters, (int)c->o->timeout_ms, samples, why,
			     sizeof(why)))
		rk_warn("latency %s <-> %s: %s", c->nodes[c->rank].host, c->nodes[peer].host, why);
	else if (initiator && !rk_rtt_stats_compute(samples, iters, &st)) {
		c->row[peer].p50 = st.median;
		c->row[peer].p99 = st.p99;
	}
	free(samples);
}

int mesh_stage_latency(struct mesh_ctx *c)
{
	enum rk_mesh_sched s = c->o->sched == RK_MESH_SERIAL ? RK_MESH_SERIAL : RK_MESH_PAIRS;

	return run_rounds(c, "latency", s, latency_op);
}

static void write_bw(struct mesh_ctx *c, struct rk_mesh_link *link, int peer, const char *why)
{
	struct mesh_cell *cell = &c->row[peer];

	cell->bw = NAN;
	cell->bw_why[0] = 0;
	if (!link) {
		snprintf(cell->bw_why, MESH_WHY, "%s", why);
		return;
	}
	if (rk_mesh_write_bw(link, (int)c->o->bw_iters, (int)c->o->window, (int)c->o->timeout_ms,
			     &cell->bw, cell->bw_why, MESH_WHY)) {
		/* the pair connected but the WRITEs did not get through: graded as
		 * 0 MB/s (re-tested, then flagged), the reason kept in the JSON */
		cell->bw = 0;
		rk_warn("bandwidth %s -> %s: %s", c->nodes[c->rank].host, c->nodes[peer].host,
			cell->bw_why);
	}
}

/* pairs and serial: the lower rank writes, then the higher (each alone on
 * the pair); shift: every rank writes to r+d at once, as mpiGraph. */
static void bandwidth_op(struct mesh_ctx *c, struct round *rd, enum rk_mesh_sched s)
{
	if (s == RK_MESH_SHIFT) {
		if (rd->to >= 0)
			write_bw(c, rd->link[0], rd->to, rd->why[0]);
		return;
	}
	for (int phase = 0; phase < 2; phase++) {
		bool mine = rd->to >= 0 && (phase == 0) == (c->rank < rd->to);

		if (mine)
			write_bw(c, rd->link[0], rd->to, rd->why[0]);
		if (phase == 0)
			MPI_Barrier(MPI_COMM_WORLD);
	}
}

int mesh_stage_bandwidth(struct mesh_ctx *c)
{
	return run_rounds(c, "bandwidth", c->o->sched, bandwidth_op);
}

/* A re-test's counter changes, the troubles they show named first (a long
 * list is cut at its end): "[retransmissions] completer_retry_err +3, ...". */
static void retest_counters(const struct rk_run_counters *rc, char *buf, size_t len)
{
	size_t off = 0;
	char cite[8];
	int k = 0;

	buf[0] = '\0';
	for (int t = 0; t < RK_TROUBLE_COUNT && off < len; t++)
		if (rk_run_counters_trouble(rc, t, cite, sizeof(cite)))
			off += (size_t)snprintf(buf + off, len - off, "%s%s", k++ ? ", " : "[",
						rk_trouble_desc(t)->name);
	if (k && off < len)
		off += (size_t)snprintf(buf + off, len - off, "] ");
	if (off < len)
		rk_run_counters_str(rc, buf + off, len - off);
}

static void retest_one(struct mesh_ctx *c, int src, int dst)
{
	int peer = c->rank == src ? dst : c->rank == dst ? src : -1;
	struct rk_run_counters rc;
	struct round rd;
	bool counting = peer >= 0 && c->port;

	memset(&rc, 0, sizeof(rc));
	if (counting)
		rk_run_counters_start(&rc, c->port->sel.dev, c->port->sel.port_num);
	if (c->o->do_lat && !round_open(c, peer, peer, &rd)) {
		latency_op(c, &rd, RK_MESH_PAIRS);
		round_close(&rd);
	}
	if (c->o->do_bw && !round_open(c, peer, peer, &rd)) {
		bandwidth_op(c, &rd, RK_MESH_PAIRS);
		round_close(&rd);
	}
	if (!counting)
		return;
	rk_run_counters_stop(&rc);
	c->row[peer].retested = 1;
	if (rc.state == RK_RUN_COUNTERS_READ)
		retest_counters(&rc, c->row[peer].counters, sizeof(c->row[peer].counters));
	else
		snprintf(c->row[peer].counters, sizeof(c->row[peer].counters),
			 "no port counters on %s", c->nodes[c->rank].device);
}

int mesh_retest(struct mesh_ctx *c, const int *cells, int k)
{
	for (int i = 0; i < k; i++) {
		retest_one(c, cells[i] / c->n, cells[i] % c->n);
		if (c->rank == 0 && c->progress) {
			printf("\r\033[Kre-test: pair %d/%d", i + 1, k);
			if (i + 1 == k)
				printf("\r\033[K");
			fflush(stdout);
		}
	}
	return 0;
}
