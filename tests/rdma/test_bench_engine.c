/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The bench engine (rk_bench_connect, rk_bench_run, rk_bench_close) on a
 * real device, server and client in one process (each in a thread): a
 * bandwidth round of WRITEs and a latency round of SENDs, each checked by
 * the side that was written or sent to; a server of two clients at once
 * (rk_bench_serve_clients, the shared listener of clients.c); and a server
 * that refuses a client whose plan differs from its own. Tiny runs: a few
 * hundred iterations. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

#define WAIT_MS 20000
#define PORT_BASE 18800 /* this test's ports: PORT_BASE, PORT_BASE + 1, ... */
#define MAX_ROUNDS 4

/* ---- one side, in its own thread ---- */

struct side {
	struct rk_bench_opts o;
	/* client: the rounds to run */
	struct rk_bench_round rounds[MAX_ROUNDS];
	int nrounds;
	/* what came back (results are kilobytes: not on a thread's stack) */
	struct rk_bench_info info;
	struct rk_bench_result res[MAX_ROUNDS];
	int nres;
	int ret;
	pthread_t thread;
};

static struct side sides[3];

static void side_init(struct side *s, bool server, uint16_t port, enum rk_bench_test test,
		      enum rk_bench_mode mode, uint32_t size, uint64_t iters)
{
	memset(s, 0, sizeof(*s));
	s->o.conn.server = server;
	s->o.conn.host = server ? NULL : fx_test_ip();
	s->o.conn.port = port;
	s->o.conn.device = getenv("RDMAKIT_TEST_DEVICE");
	s->o.conn.gid_index = -1;
	s->o.conn.timeout_ms = WAIT_MS;
	s->o.conn.accept_timeout_ms = WAIT_MS;
	s->o.test = test;
	s->o.mode = mode;
	s->o.transport = RK_RC;
	s->o.qps = 1;
	s->o.threads = 1;
	s->o.max_size = size;
	s->o.tuning.inline_max = -1;
	s->o.tuning.wr_api = -1;
	s->o.tuning.yield_after = -1;
	s->o.tuning.ack_timeout = -1;
	s->o.plan = (struct rk_bench_plan){.test = test, .mode = mode, .transport = RK_RC,
					   .qps = 1, .threads = 1, .iters = iters};
	rk_bench_plan_sizes(&s->o.plan, &size, 1);
	s->rounds[0] = (struct rk_bench_round){.size = size, .iters = iters};
	s->nrounds = 1;
}

/* Connect, run the rounds (a server: until the client is done), close. */
static void *side_run(void *arg)
{
	struct side *s = arg;
	struct rk_bench *b;

	s->ret = rk_bench_connect(&s->o, &b);
	if (s->ret)
		return NULL;
	s->info = *rk_bench_get_info(b);
	for (int i = 0; s->o.conn.server || i < s->nrounds; i++) {
		if (s->nres == MAX_ROUNDS) {
			s->ret = -E2BIG;
			break;
		}
		s->ret = rk_bench_run(b, &s->rounds[i < s->nrounds ? i : 0], &s->res[s->nres]);
		if (s->ret == 1) {
			s->ret = 0;
			break;
		}
		if (s->ret)
			break;
		s->nres++;
	}
	rk_bench_close(b);
	return NULL;
}

static void side_start(struct side *s)
{
	assert_int_equal(pthread_create(&s->thread, NULL, side_run, s), 0);
}

static void side_join(struct side *s)
{
	assert_int_equal(pthread_join(s->thread, NULL), 0);
}

static void run_pair(struct side *srv, struct side *cli)
{
	side_start(srv);
	side_start(cli);
	side_join(cli);
	side_join(srv);
	printf("# server %s, client %s\n", rk_strerror(srv->ret), rk_strerror(cli->ret));
}

/* Both sides ran one round of size x iters, connected to each other. */
static void check_one_round(const struct side *srv, const struct side *cli, uint32_t size,
			    uint64_t iters)
{
	assert_int_equal(srv->ret, 0);
	assert_int_equal(cli->ret, 0);
	assert_int_equal(srv->nres, 1);
	assert_int_equal(cli->nres, 1);
	assert_true(srv->info.server);
	assert_false(cli->info.server);
	assert_int_equal(cli->info.peer_qpn[0], srv->info.qpn[0]);
	assert_int_equal(srv->info.peer_qpn[0], cli->info.qpn[0]);
	for (int i = 0; i < 2; i++) {
		const struct rk_bench_result *r = i ? &cli->res[0] : &srv->res[0];

		assert_int_equal(r->round.size, size);
		assert_int_equal(r->iters, iters);
		assert_true(r->seconds > 0);
		assert_false(r->stopped);
	}
	assert_true(cli->res[0].initiator);
	assert_false(srv->res[0].initiator);
}

/* WRITE bandwidth: every message completed and counted, the server (the
 * side written to) checks its slot against the pattern and the client hears
 * "passed". */
static void test_write_bw(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct side *srv = &sides[0], *cli = &sides[1];
	char want[120];

	(void)state;
	side_init(srv, true, port, RK_BENCH_WRITE, RK_BENCH_BW, 16384, 200);
	side_init(cli, false, port, RK_BENCH_WRITE, RK_BENCH_BW, 16384, 200);
	run_pair(srv, cli);
	check_one_round(srv, cli, 16384, 200);
	assert_int_equal(cli->res[0].msgs, 200);
	assert_int_equal(cli->res[0].bytes, 200 * 16384);
	assert_true(cli->res[0].bw_avg > 0);
	assert_true(cli->res[0].bw_peak >= cli->res[0].bw_avg * 0.999);
	assert_true(cli->res[0].msg_rate > 0);
	snprintf(want, sizeof(want), "last WRITE's %u bytes written match the pattern", 16384);
	assert_true(srv->res[0].checked_here);
	assert_string_equal(srv->res[0].check, want);
	assert_string_equal(cli->res[0].peer_check, "passed");
	assert_false(cli->res[0].checked_here);
}

/* SEND latency: a ping-pong of 100 iterations; the statistics are in order
 * and both sides checked what they received. */
static void test_send_lat(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct side *srv = &sides[0], *cli = &sides[1];
	const struct rk_bench_lat *l = &cli->res[0].lat;

	(void)state;
	side_init(srv, true, port, RK_BENCH_SEND, RK_BENCH_LAT, 64, 100);
	side_init(cli, false, port, RK_BENCH_SEND, RK_BENCH_LAT, 64, 100);
	run_pair(srv, cli);
	check_one_round(srv, cli, 64, 100);
	printf("# SEND latency of 64 bytes: %llu samples, min %.2f, median %.2f, max %.2f us\n",
	       (unsigned long long)l->samples, l->min, l->median, l->max);
	assert_true(l->samples > 0 && l->samples <= 100);
	assert_true(l->min > 0);
	assert_true(l->min <= l->median && l->median <= l->max);
	assert_true(l->min <= l->p99 && l->p99 <= l->max);
	assert_true(cli->res[0].checked_here);
	assert_true(srv->res[0].checked_here);
	assert_non_null(strstr(srv->res[0].check, "bytes match"));
	assert_non_null(strstr(cli->res[0].check, "bytes match"));
	assert_string_equal(cli->res[0].peer_check, "passed");
	assert_string_equal(srv->res[0].peer_check, "passed");
}

/* ---- a server of two clients at once ---- */

static struct rk_bench_clients served;
static struct rk_bench_opts served_opts;
static int served_ret, served_calls;

static void on_client(const struct rk_bench_client *c, void *arg)
{
	(void)c;
	(void)arg;
	served_calls++; /* one at a time (the engine's lock) */
}

static void *serve_two(void *arg)
{
	(void)arg;
	served_ret = rk_bench_serve_clients(&served_opts, 2, on_client, NULL, &served);
	return NULL;
}

/* Each client on its own connection and QP, each round checked by the
 * server; the aggregate is the sum of the two. */
static void test_serve_two_clients(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct side *c1 = &sides[1], *c2 = &sides[2];
	pthread_t srv;

	(void)state;
	side_init(&sides[0], true, port, RK_BENCH_WRITE, RK_BENCH_BW, 4096, 100);
	served_opts = sides[0].o;
	served_calls = 0;
	memset(&served, 0, sizeof(served));
	side_init(c1, false, port, RK_BENCH_WRITE, RK_BENCH_BW, 4096, 100);
	side_init(c2, false, port, RK_BENCH_WRITE, RK_BENCH_BW, 4096, 100);
	assert_int_equal(pthread_create(&srv, NULL, serve_two, NULL), 0);
	side_start(c1);
	side_start(c2);
	side_join(c1);
	side_join(c2);
	assert_int_equal(pthread_join(srv, NULL), 0);
	assert_int_equal(served_ret, 0);
	assert_int_equal(c1->ret, 0);
	assert_int_equal(c2->ret, 0);
	assert_int_equal(served_calls, 2);
	assert_int_equal(served.wanted, 2);
	assert_int_equal(served.total.arrived, 2);
	assert_int_equal(served.total.ok, 2);
	assert_int_equal(served.total.failed, 0);
	assert_int_equal(served.total.missing, 0);
	assert_int_not_equal(served.clients[0].info.qpn[0], served.clients[1].info.qpn[0]);
	for (int i = 0; i < 2; i++) {
		const struct rk_bench_client *c = &served.clients[i];

		assert_int_equal(c->out.status, 0);
		assert_true(c->out.arrived);
		assert_true(c->connected);
		assert_int_equal(c->out.done, 1);
		assert_true(c->rounds[0].checked_here);
		assert_non_null(strstr(c->rounds[0].check, "match the pattern"));
		assert_int_equal(c->out.bytes, 100 * 4096);
	}
	assert_int_equal(served.total.bytes, 2 * 100 * 4096);
	assert_int_equal(c1->res[0].bytes + c2->res[0].bytes, served.total.bytes);
	assert_true(served.total.seconds > 0 && served.total.bw > 0);
	rk_bench_clients_free(&served);
}

/* A server told --op read refuses a client that asks for write, naming
 * the option and both values; neither side runs a round. */
static void test_plan_refused(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct side *srv = &sides[0], *cli = &sides[1];

	(void)state;
	side_init(srv, true, port, RK_BENCH_READ, RK_BENCH_BW, 4096, 100);
	srv->o.expect = RK_BENCH_GIVEN_TEST;
	side_init(cli, false, port, RK_BENCH_WRITE, RK_BENCH_BW, 4096, 100);
	fx_capture_reset();
	run_pair(srv, cli);
	assert_int_equal(srv->ret, -EINVAL);
	assert_int_not_equal(cli->ret, 0);
	assert_int_equal(srv->nres, 0);
	assert_int_equal(cli->nres, 0);
	assert_true(fx_capture_has("--op: client write, server read"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_bw),
		cmocka_unit_test(test_send_lat),
		cmocka_unit_test(test_serve_two_clients),
		cmocka_unit_test(test_plan_refused),
	};

	return fx_run("bench engine", tests);
}
