/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit-mesh's pure logic: schedules (every pair met exactly once, no rank
 * twice in a round) and verdicts on synthetic matrices. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdmakit/mesh.h>

#include "unit.h"

#define NMAX 9

/* pairs and serial: every unordered pair exactly once, partners mutual,
 * byes only for odd n (one per round). */
static void check_partner_schedule(enum rk_mesh_sched s, int n)
{
	int met[NMAX][NMAX] = {{0}};
	int rounds = rk_mesh_rounds(s, n);

	for (int r = 0; r < rounds; r++) {
		int byes = 0;

		for (int x = 0; x < n; x++) {
			int to, from, to2, from2;

			assert_int_equal(rk_mesh_peer(s, n, r, x, &to, &from), 0);
			assert_int_equal(to, from);
			if (to < 0) {
				byes++;
				continue;
			}
			assert_int_not_equal(to, x);
			assert_int_equal(rk_mesh_peer(s, n, r, to, &to2, &from2), 0);
			if (to2 != x)
				fail_msg("%s n=%d round %d: %d meets %d but %d meets %d",
					 rk_mesh_sched_str(s), n, r, x, to, to, to2);
			met[x][to]++;
		}
		if (s == RK_MESH_PAIRS)
			assert_int_equal(byes, n % 2);
		else
			assert_int_equal(byes, n - 2);
	}
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++)
			if (met[a][b] != (a != b))
				fail_msg("%s n=%d: %d met %d %d times", rk_mesh_sched_str(s), n, a,
					 b, met[a][b]);
}

static void sched_pairs(void **state)
{
	for (int n = 2; n <= NMAX; n++) {
		assert_int_equal(rk_mesh_rounds(RK_MESH_PAIRS, n), n % 2 ? n : n - 1);
		check_partner_schedule(RK_MESH_PAIRS, n);
	}
}

static void sched_serial(void **state)
{
	for (int n = 2; n <= NMAX; n++) {
		assert_int_equal(rk_mesh_rounds(RK_MESH_SERIAL, n), n * (n - 1) / 2);
		check_partner_schedule(RK_MESH_SERIAL, n);
	}
}

/* shift: round d has r -> r+d and r <- r-d; every ordered pair sent once. */
static void sched_shift(void **state)
{
	for (int n = 2; n <= NMAX; n++) {
		int sent[NMAX][NMAX] = {{0}};

		assert_int_equal(rk_mesh_rounds(RK_MESH_SHIFT, n), n - 1);
		for (int r = 0; r < n - 1; r++) {
			for (int x = 0; x < n; x++) {
				int to, from;

				assert_int_equal(rk_mesh_peer(RK_MESH_SHIFT, n, r, x, &to, &from), 0);
				assert_int_equal(to, (x + r + 1) % n);
				assert_int_equal(from, (x - r - 1 + n) % n);
				sent[x][to]++;
			}
		}
		for (int a = 0; a < n; a++)
			for (int b = 0; b < n; b++)
				assert_int_equal(sent[a][b], a != b);
	}
}

static void sched_bad_input(void **state)
{
	int to, from;
	enum rk_mesh_sched s;

	assert_int_equal(rk_mesh_peer(RK_MESH_PAIRS, 1, 0, 0, &to, &from), -EINVAL);
	assert_int_equal(rk_mesh_peer(RK_MESH_PAIRS, 4, 3, 0, &to, &from), -EINVAL);
	assert_int_equal(rk_mesh_peer(RK_MESH_SHIFT, 4, 0, 4, &to, &from), -EINVAL);
	assert_int_equal(rk_mesh_peer(RK_MESH_SERIAL, 4, -1, 0, &to, &from), -EINVAL);
	assert_int_equal(rk_mesh_sched_parse("shift", &s), 0);
	assert_int_equal(s, RK_MESH_SHIFT);
	assert_int_equal(rk_mesh_sched_parse("ring", &s), -EINVAL);
}

static void median_mad(void **state)
{
	const double v[] = {1, NAN, 3, 2, 100};
	const double e[] = {NAN, NAN};

	assert_close(rk_mesh_median(v, 5), 2.5);
	/* deviations from 2.5: 1.5 0.5 0.5 97.5 -> median 1.0 */
	assert_close(rk_mesh_mad(v, 5), 1.0);
	assert_true(isnan(rk_mesh_median(e, 2)));
}

/* An n x n bandwidth matrix: base everywhere, NAN on the diagonal. */
static void fill(double *m, int n, double base)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			m[i * n + j] = i == j ? NAN : base + (i * 7 + j * 3) % 5;
}

/* n x n p50 and p99 latency matrices from fill() at 20 and 40 us, made
 * symmetric: latency is per pair. */
static void fill_latency(double *p50, double *p99, int n)
{
	fill(p50, n, 20);
	fill(p99, n, 40);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++) {
			p50[i * n + j] = p50[j * n + i];
			p99[i * n + j] = p99[j * n + i];
		}
}

/* An input of only an n x n bandwidth matrix, bw, filled at 1000. */
static struct rk_mesh_input bw_input(double *bw, int n)
{
	fill(bw, n, 1000);
	return (struct rk_mesh_input){.n = n, .bw = bw};
}

/* The verdicts on in, under the default thresholds: there must be want of
 * them. They stay in the test's *state until the next verdicts() or
 * free_verdicts(), its teardown (a failed assertion leaks nothing). */
static const struct rk_mesh_outlier *verdicts(void **state, const struct rk_mesh_input *in,
					      int want)
{
	struct rk_mesh_thresholds t;
	struct rk_mesh_outlier *o = NULL;
	int n = -1, ret;

	free(*state);
	rk_mesh_thresholds_default(&t);
	ret = rk_mesh_verdicts(in, &t, &o, &n, NULL);
	*state = o;
	assert_int_equal(ret, 0);
	for (int i = 0; i < n; i++)
		print_message("  %s: %s\n", rk_mesh_kind_str(o[i].kind), o[i].reason);
	assert_int_equal(n, want);
	return o;
}

static int free_verdicts(void **state)
{
	free(*state);
	return 0;
}

static void clean_matrix(void **state)
{
	double bw[16], p50[16], p99[16];
	struct rk_mesh_input in = {.n = 4, .bw = bw, .p50 = p50, .p99 = p99};

	fill(bw, 4, 1000);
	fill_latency(p50, p99, 4);
	verdicts(state, &in, 0);
}

static void slow_sender_row(void **state)
{
	double bw[16];
	struct rk_mesh_input in = bw_input(bw, 4);
	const struct rk_mesh_outlier *o;

	for (int j = 0; j < 4; j++)
		if (j != 2)
			bw[2 * 4 + j] = 300;
	o = verdicts(state, &in, 1);
	assert_int_equal(o[0].kind, RK_MESH_SENDER);
	assert_int_equal(o[0].metric, RK_MESH_BW);
	assert_int_equal(o[0].node, 2);
	assert_close(o[0].value, 300);
	assert_contains(o[0].reason, "node 2 sends slowly");
}

/* The verdicts on an even n x n bandwidth matrix (n <= 4) and the nodes'
 * port MTUs. */
static const struct rk_mesh_outlier *mtu_verdicts(void **state, const int *mtu, int n, int want)
{
	double bw[16];
	struct rk_mesh_input in = bw_input(bw, n);

	in.port_mtu = mtu;
	return verdicts(state, &in, want);
}

/* One node's port MTU unlike the majority's: a config outlier naming both;
 * without a majority, the nodes below the largest; unknown (0) not graded. */
static void port_mtu_unlike_the_others(void **state)
{
	static const int mtu[4] = {1024, 1024, 4096, 1024};
	const struct rk_mesh_outlier *o = mtu_verdicts(state, mtu, 4, 1);

	assert_int_equal(o[0].kind, RK_MESH_CONFIG);
	assert_int_equal(o[0].metric, RK_MESH_PORT_MTU);
	assert_int_equal(o[0].node, 2);
	assert_close(o[0].value, 4096);
	assert_close(o[0].expected, 1024);
	assert_contains(o[0].reason, "node 2: port MTU 4096 where 3 of 4 nodes have 1024");
	assert_string_equal(rk_mesh_kind_str(o[0].kind), "config");
	assert_string_equal(rk_mesh_metric_str(o[0].metric), "port_mtu");
}

static void port_mtu_no_majority(void **state)
{
	static const int mtu[4] = {1024, 4096, 0, 2048};
	const struct rk_mesh_outlier *o = mtu_verdicts(state, mtu, 4, 2);

	assert_int_equal(o[0].node, 0);
	assert_close(o[0].expected, 4096);
	assert_contains(o[0].reason, "node 0: port MTU 1024, below the largest in the fabric (4096)");
	assert_int_equal(o[1].node, 3);
	assert_close(o[1].value, 2048);
}

static void port_mtu_alike(void **state)
{
	static const int mtu[3] = {4096, 0, 4096};

	mtu_verdicts(state, mtu, 3, 0);
}

static void slow_receiver_column_three(void **state)
{
	double bw[9];
	struct rk_mesh_input in = bw_input(bw, 3);
	const struct rk_mesh_outlier *o;

	bw[0 * 3 + 1] = 200;
	bw[2 * 3 + 1] = 210;
	o = verdicts(state, &in, 1);
	assert_int_equal(o[0].kind, RK_MESH_RECEIVER);
	assert_int_equal(o[0].node, 1);
}

static void single_link_and_asymmetric(void **state)
{
	double bw[16];
	struct rk_mesh_input in = bw_input(bw, 4);
	const struct rk_mesh_outlier *o;

	bw[0 * 4 + 3] = 100; /* 0 <-> 3 slow both ways: a link */
	bw[3 * 4 + 0] = 120;
	o = verdicts(state, &in, 1);
	assert_int_equal(o[0].kind, RK_MESH_LINK);
	assert_int_equal(o[0].src, 0);
	assert_int_equal(o[0].dst, 3);

	in = bw_input(bw, 4);
	bw[1 * 4 + 2] = 100; /* one low cell: only 1 -> 2 */
	o = verdicts(state, &in, 1);
	assert_int_equal(o[0].kind, RK_MESH_ASYMMETRIC);
	assert_int_equal(o[0].src, 1);
	assert_int_equal(o[0].dst, 2);
	assert_contains(o[0].reason, "while node 2 -> node 1 runs at");
}

/* Three nodes, one with 5 ms more latency: two of three pairs are slow, yet
 * only that node is named. */
static void latency_node_of_three(void **state)
{
	double p50[9] = {NAN, 30, 5030, 30, NAN, 5031, 5030, 5031, NAN};
	double p99[9] = {NAN, 60, 5100, 60, NAN, 5100, 5100, 5100, NAN};
	const char *names[] = {"a", "b", "c"};
	struct rk_mesh_input in = {.n = 3, .names = names, .p50 = p50, .p99 = p99};
	const struct rk_mesh_outlier *o = verdicts(state, &in, 1);

	assert_int_equal(o[0].kind, RK_MESH_LATENCY);
	assert_int_equal(o[0].metric, RK_MESH_LAT_P50);
	assert_int_equal(o[0].node, 2);
	assert_contains(o[0].reason, "c: p50 latency to every peer is high");
}

static void latency_pair_and_unstable(void **state)
{
	double p50[16], p99[16];
	struct rk_mesh_input in = {.n = 4, .p50 = p50, .p99 = p99};
	const struct rk_mesh_outlier *o;

	fill_latency(p50, p99, 4);
	p50[1 * 4 + 3] = p50[3 * 4 + 1] = 200; /* 1 <-> 3 slow */
	p99[1 * 4 + 3] = p99[3 * 4 + 1] = 400;
	p99[0 * 4 + 2] = p99[2 * 4 + 0] = 900; /* 0 <-> 2 p99 only */
	o = verdicts(state, &in, 2);
	assert_int_equal(o[0].kind, RK_MESH_LATENCY);
	assert_int_equal(o[0].src, 1);
	assert_int_equal(o[0].dst, 3);
	assert_int_equal(o[1].kind, RK_MESH_UNSTABLE);
	assert_int_equal(o[1].metric, RK_MESH_LAT_P99);
	assert_int_equal(o[1].src, 0);
	assert_int_equal(o[1].dst, 2);
}

static void unreachable_node_and_pair(void **state)
{
	bool reach[16];
	const char *why[16] = {0};
	struct rk_mesh_input in = {.n = 4, .reach = reach, .reach_why = why};
	const struct rk_mesh_outlier *o;

	for (int c = 0; c < 16; c++)
		reach[c] = true;
	for (int j = 0; j < 4; j++) {
		reach[3 * 4 + j] = reach[j * 4 + 3] = j == 3;
		why[3 * 4 + j] = why[j * 4 + 3] = "no RDMA device";
	}
	reach[0 * 4 + 1] = false;
	why[0 * 4 + 1] = "IBV_WC_RETRY_EXC_ERR";
	o = verdicts(state, &in, 2);
	assert_int_equal(o[0].kind, RK_MESH_UNREACHABLE);
	assert_int_equal(o[0].node, 3);
	assert_contains(o[0].reason, "no RDMA device");
	assert_int_equal(o[1].node, -1);
	assert_int_equal(o[1].src, 0);
	assert_int_equal(o[1].dst, 1);
	assert_contains(o[1].reason, "node 0 -> node 1: IBV_WC_RETRY_EXC_ERR");
}

static void suspects(void **state)
{
	double bw[16];
	int cells[8];
	struct rk_mesh_input in = bw_input(bw, 4);
	struct rk_mesh_thresholds t;

	rk_mesh_thresholds_default(&t);
	assert_int_equal(rk_mesh_suspects(&in, &t, cells, 8), 0);
	bw[1 * 4 + 2] = 100;
	bw[3 * 4 + 0] = 10;
	assert_int_equal(rk_mesh_suspects(&in, &t, cells, 8), 2);
	assert_int_equal(cells[0], 1 * 4 + 2);
	assert_int_equal(cells[1], 3 * 4 + 0);
	in.n = 1;
	assert_int_equal(rk_mesh_suspects(&in, &t, cells, 8), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sched_pairs),
		cmocka_unit_test(sched_serial),
		cmocka_unit_test(sched_shift),
		cmocka_unit_test(sched_bad_input),
		cmocka_unit_test(median_mad),
		cmocka_unit_test_teardown(clean_matrix, free_verdicts),
		cmocka_unit_test_teardown(slow_sender_row, free_verdicts),
		cmocka_unit_test_teardown(slow_receiver_column_three, free_verdicts),
		cmocka_unit_test_teardown(port_mtu_unlike_the_others, free_verdicts),
		cmocka_unit_test_teardown(port_mtu_no_majority, free_verdicts),
		cmocka_unit_test_teardown(port_mtu_alike, free_verdicts),
		cmocka_unit_test_teardown(single_link_and_asymmetric, free_verdicts),
		cmocka_unit_test_teardown(latency_node_of_three, free_verdicts),
		cmocka_unit_test_teardown(latency_pair_and_unstable, free_verdicts),
		cmocka_unit_test_teardown(unreachable_node_and_pair, free_verdicts),
		cmocka_unit_test(suspects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
