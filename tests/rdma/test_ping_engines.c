/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The ping engines on a real device, called as a library user would: both
 * roles in one process (the server in a thread). Native ping over the TCP
 * exchange and over RDMA CM; the rping protocol against the library's own
 * rping server (until the client leaves, and with a count, where the server
 * must wait for the client to leave first; from a source address);
 * ibv_*_pingpong's protocol on RC,
 * UC and UD; and what bad options and a missing server give. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/stop.h>

#include "fixture.h"

#define WAIT_MS 20000

struct side {
	struct rk_ping_opts o;
	struct rk_ping_result res;
	int (*run)(const struct rk_ping_opts *, struct rk_ping_result *);
	int ret;
	/* what the progress callback saw */
	int listening, addresses, connected, rounds, checked_rounds;
	uint64_t last_index;
	bool data_seen;
	pthread_t thread;
};

/* A fresh port for each pair (test_cm uses those from 18620). */
static uint16_t next_port(void)
{
	static uint16_t used;

	return (uint16_t)(18720 + used++);
}

static void progress(const struct rk_ping_progress *p, void *arg)
{
	struct side *s = arg;

	switch (p->stage) {
	case RK_PING_LISTENING:
		s->listening++;
		break;
	case RK_PING_ADDRESSES:
		s->addresses++;
		break;
	case RK_PING_CONNECTED:
		s->connected++;
		break;
	case RK_PING_ROUND:
		s->rounds++;
		s->checked_rounds += p->round->checked;
		s->last_index = p->round->index;
		s->data_seen |= p->round->data != NULL;
		break;
	}
}

static void side_init(struct side *s, int (*run)(const struct rk_ping_opts *,
						 struct rk_ping_result *),
		      bool server, uint16_t port)
{
	memset(s, 0, sizeof(*s));
	s->run = run;
	s->o.server = server;
	s->o.host = server ? NULL : fx_test_ip();
	s->o.port = port;
	s->o.gid_index = -1;
	s->o.timeout_ms = WAIT_MS;
	s->o.accept_timeout_ms = WAIT_MS;
	s->o.progress = progress;
	s->o.arg = s;
}

static void *serve(void *arg)
{
	struct side *s = arg;

	s->ret = s->run(&s->o, &s->res);
	return NULL;
}

/* Run the server in a thread and the client here; both results kept. */
static void run_pair(struct side *srv, struct side *cli)
{
	assert_int_equal(pthread_create(&srv->thread, NULL, serve, srv), 0);
	cli->ret = cli->run(&cli->o, &cli->res);
	pthread_join(srv->thread, NULL);
	printf("# server: %d, %zu rounds; client: %d, %zu rounds\n", srv->ret, srv->res.rounds,
	       cli->ret, cli->res.rounds);
}

static void sides_free(struct side *srv, struct side *cli)
{
	rk_ping_result_free(&srv->res);
	rk_ping_result_free(&cli->res);
}

/* A good run of n rounds, as each side's result and callback show it. */
static void assert_rounds(struct side *s, uint64_t n, bool checked)
{
	struct rk_rtt_stats st;

	assert_int_equal(s->ret, 0);
	assert_int_equal(s->res.error, 0);
	assert_int_equal(s->res.rounds, n);
	assert_int_equal(s->rounds, (int)n);
	assert_int_equal(s->last_index, n - 1);
	assert_int_equal(s->connected, 1);
	assert_int_equal(s->res.checked, checked);
	assert_true(s->res.device[0] != '\0');
	assert_true(s->res.qpn != 0);
	/* iWARP shows neither side the peer's QPN (its CM carries none). */
	assert_true(s->res.peer_qpn != 0 || fx_iwarp_dev());
	assert_int_equal(rk_ping_result_stats(&s->res, &st), 0);
	assert_true(st.min > 0 && st.min <= st.median && st.median <= st.max);
	assert_int_equal(s->res.bad_offset, -1);
}

/* A server and its client of one engine on a fresh port. */
static void sides_init(struct side *srv, struct side *cli,
		       int (*run)(const struct rk_ping_opts *, struct rk_ping_result *))
{
	uint16_t port = next_port();

	side_init(srv, run, true, port);
	side_init(cli, run, false, port);
}

/* Native sides over RDMA CM or the TCP exchange; the client checks data
 * (size and count travel in its request). */
static void native_sides(struct side *srv, struct side *cli, bool cm, uint32_t size,
			 uint64_t count)
{
	sides_init(srv, cli, rk_ping_run);
	srv->o.cm = cli->o.cm = cm;
	cli->o.size = size;
	cli->o.count = count;
	cli->o.validate = true;
}

static void native(bool cm, bool events)
{
	struct side srv, cli;

	native_sides(&srv, &cli, cm, 4096, 5);
	srv.o.events = cli.o.events = events;
	run_pair(&srv, &cli);
	assert_rounds(&cli, 5, true);
	assert_rounds(&srv, 5, true);
	/* The server learned size, count and checking from the request. */
	assert_int_equal(srv.res.size, 4096);
	assert_int_equal(srv.res.count, 5);
	assert_int_equal(srv.listening, 1);
	assert_int_equal(cli.checked_rounds, 5);
	assert_int_equal(srv.res.cm, cm);
	/* iWARP: no peer QPN either side can see (0). */
	assert_int_equal(cli.res.peer_qpn, fx_iwarp_dev() ? 0 : srv.res.qpn);
	assert_int_equal(srv.res.peer_qpn, fx_iwarp_dev() ? 0 : cli.res.qpn);
	sides_free(&srv, &cli);
}

static void test_native_tcp(void **state)
{
	(void)state;
	native(false, false);
}

static void test_native_cm_events(void **state)
{
	(void)state;
	native(true, true);
}

/* rping's sides, size 4096, both checking data. */
static void rping_sides(struct side *srv, struct side *cli, uint64_t srv_count,
			uint64_t cli_count)
{
	sides_init(srv, cli, rk_rping_run);
	srv->o.size = 4096;
	srv->o.count = srv_count;
	srv->o.validate = true;
	cli->o.size = 4096;
	cli->o.count = cli_count;
	cli->o.validate = true;
}

static void rping_pair(struct side *srv, struct side *cli, uint64_t srv_count,
		       uint64_t cli_count)
{
	rping_sides(srv, cli, srv_count, cli_count);
	run_pair(srv, cli);
}

/* The server serves until the client leaves, checking rping's pattern. */
static void test_rping_until_client_leaves(void **state)
{
	struct side srv, cli;

	(void)state;
	rping_pair(&srv, &cli, 0, 7);
	assert_rounds(&cli, 7, true);
	assert_rounds(&srv, 7, true);
	assert_true(srv.res.peer_left);
	assert_true(cli.data_seen && srv.data_seen);
	assert_true(srv.res.cm && cli.res.cm);
	sides_free(&srv, &cli);
}

/* With a count the server still lets the client disconnect first: both end
 * well, and the server saw the client leave; many times over, as the race
 * it avoids was rare. */
static void test_rping_count_waits_for_client(void **state)
{
	(void)state;
	for (int i = 0; i < 10; i++) {
		struct side srv, cli;

		rping_pair(&srv, &cli, 3, 3);
		assert_rounds(&cli, 3, true);
		assert_rounds(&srv, 3, true);
		assert_true(srv.res.peer_left);
		sides_free(&srv, &cli);
	}
}

/* A client that wants more pings than the server's count: both fail. */
static void test_rping_client_wants_more(void **state)
{
	struct side srv, cli;

	(void)state;
	rping_pair(&srv, &cli, 2, 3);
	assert_int_equal(srv.ret, -EPROTO);
	assert_int_equal(srv.res.rounds, 2);
	assert_int_not_equal(cli.ret, 0);
	assert_int_equal(cli.res.error, cli.ret);
	assert_int_equal(cli.res.rounds, 2);
	sides_free(&srv, &cli);
}

static volatile sig_atomic_t stop_flag;

static void stop_after_3(const struct rk_ping_progress *p, void *arg)
{
	progress(p, arg);
	if (p->stage == RK_PING_ROUND && p->round->index == 2)
		stop_flag = 1;
}

/* run_pair() with a stop request (stop.h) after the client's third round. */
static void run_pair_stopped(struct side *srv, struct side *cli)
{
	cli->o.progress = stop_after_3;
	stop_flag = 0;
	rk_stop_watch(&stop_flag);
	run_pair(srv, cli);
	rk_stop_watch(NULL);
}

/* rping's client without a count runs until a stop request (Ctrl-C in the
 * command): it ends well with the rounds done, and the server sees it go. */
static void test_rping_client_stopped(void **state)
{
	struct side srv, cli;

	(void)state;
	rping_sides(&srv, &cli, 0, 0);
	run_pair_stopped(&srv, &cli);
	assert_rounds(&cli, 3, true);
	assert_true(cli.res.stopped);
	assert_rounds(&srv, 3, true);
	assert_true(srv.res.peer_left);
	assert_false(srv.res.stopped);
	sides_free(&srv, &cli);
}

/* Native ping: a stop request after round 3 of 100 ends the client well,
 * and its SEND of no bytes ends the server well too, over the TCP exchange
 * and over RDMA CM. */
static void test_native_client_stopped(void **state)
{
	(void)state;
	/* On iWARP, RDMA CM only (its QPs connect no other way). */
	for (int cm = fx_iwarp_dev() ? 1 : 0; cm < 2; cm++) {
		struct side srv, cli;

		native_sides(&srv, &cli, cm, 64, 100);
		run_pair_stopped(&srv, &cli);
		assert_rounds(&cli, 3, true);
		assert_rounds(&srv, 3, true);
		assert_true(cli.res.stopped);
		assert_true(srv.res.stopped);
		sides_free(&srv, &cli);
	}
}

/* A lone side of engine run with source set: want, and nothing listened. */
static void source_refused(int (*run)(const struct rk_ping_opts *, struct rk_ping_result *),
			   bool server, const char *source, int want)
{
	struct side s;

	side_init(&s, run, server, next_port());
	s.o.size = 64;
	s.o.count = 1;
	s.o.source = source;
	assert_int_equal(run(&s.o, &s.res), want);
	assert_int_equal(s.res.error, want);
	assert_int_equal(s.listening + s.connected, 0);
	rk_ping_result_free(&s.res);
}

/* rping -I: the client connects from the address given; one that no RDMA
 * device has fails (ENODEV), and the other engines refuse a source. */
static void test_rping_source_address(void **state)
{
	struct side srv, cli;

	(void)state;
	sides_init(&srv, &cli, rk_rping_run);
	srv.o.size = cli.o.size = 64;
	cli.o.count = 2;
	cli.o.source = fx_test_ip();
	run_pair(&srv, &cli);
	assert_rounds(&cli, 2, false);
	assert_rounds(&srv, 2, false);
	sides_free(&srv, &cli);

	source_refused(rk_rping_run, false, "127.0.0.1", -ENODEV);
	source_refused(rk_rping_run, false, "nonsense", -EINVAL);
	source_refused(rk_rping_run, true, fx_test_ip(), -EINVAL);
	source_refused(rk_ping_run, false, fx_test_ip(), -EINVAL);
	source_refused(rk_pingpong_run, false, fx_test_ip(), -EINVAL);
}

static void pingpong(enum rk_transport t, uint32_t size)
{
	struct side srv, cli;

	sides_init(&srv, &cli, rk_pingpong_run);
	srv.o.transport = cli.o.transport = t;
	srv.o.size = cli.o.size = size;
	srv.o.count = cli.o.count = 6;
	srv.o.rx_depth = cli.o.rx_depth = 4;
	srv.o.validate = cli.o.validate = true;
	run_pair(&srv, &cli);
	assert_rounds(&cli, 6, true);
	assert_rounds(&srv, 6, true);
	/* The server cannot check the client's first ping, and says so. */
	assert_true(srv.res.first_unchecked);
	assert_false(cli.res.first_unchecked);
	assert_int_equal(srv.checked_rounds, 5);
	assert_int_equal(cli.checked_rounds, 6);
	assert_int_equal(srv.addresses, 1);
	assert_int_equal(cli.addresses, 1);
	assert_int_equal(cli.res.peer_qpn, srv.res.qpn);
	assert_int_equal(cli.res.peer_psn, srv.res.psn);
	assert_int_equal(cli.res.path_mtu, 1024);
	sides_free(&srv, &cli);
}

static void test_pingpong_rc(void **state)
{
	(void)state;
	pingpong(RK_RC, 4096);
}

static void test_pingpong_uc(void **state)
{
	(void)state;
	pingpong(RK_UC, 4096);
}

static void test_pingpong_ud(void **state)
{
	(void)state;
	pingpong(RK_UD, 512);
}

/* ibv_srq_pingpong's: 4 RC QPs over one SRQ of 8 receives (refilled as
 * it goes), every byte checked, the server on a completion channel; then
 * sides with another -q each refuse the other. */
static void test_pingpong_srq(void **state)
{
	struct side srv, cli;

	(void)state;
	sides_init(&srv, &cli, rk_pingpong_run);
	srv.o.transport = cli.o.transport = RK_RC;
	srv.o.srq_qps = cli.o.srq_qps = 4;
	srv.o.size = cli.o.size = 4096;
	srv.o.count = cli.o.count = 40;
	srv.o.rx_depth = cli.o.rx_depth = 8;
	srv.o.validate = cli.o.validate = true;
	srv.o.events = true;
	run_pair(&srv, &cli);
	assert_rounds(&cli, 40, true);
	assert_rounds(&srv, 40, true);
	assert_true(srv.res.first_unchecked);
	assert_int_equal(srv.checked_rounds, 39);
	assert_int_equal(cli.checked_rounds, 40);
	assert_int_equal(srv.res.qps, 4);
	assert_int_equal(cli.res.qps, 4);
	assert_int_equal(cli.res.peer_qpn, srv.res.qpn);
	assert_int_equal(srv.res.peer_qpn, cli.res.qpn);
	assert_int_equal(cli.res.path_mtu, 1024);
	sides_free(&srv, &cli);

	sides_init(&srv, &cli, rk_pingpong_run);
	srv.o.transport = cli.o.transport = RK_RC;
	srv.o.size = cli.o.size = 64;
	srv.o.count = cli.o.count = 8;
	srv.o.srq_qps = 4;
	cli.o.srq_qps = 2;
	run_pair(&srv, &cli);
	assert_int_equal(srv.ret, -EPROTO);
	assert_int_not_equal(cli.ret, 0);
	assert_int_equal(srv.connected + cli.connected, 0);
	sides_free(&srv, &cli);
}

/* Bad options are refused before any I/O; a missing server is given up on
 * within the timeout. */
static void test_bad_options_and_no_server(void **state)
{
	struct side s;

	(void)state;
	side_init(&s, rk_rping_run, false, next_port());
	s.o.size = RK_RPING_MIN_SIZE - 1;
	assert_int_equal(rk_rping_run(&s.o, &s.res), -EINVAL);
	assert_int_equal(s.res.error, -EINVAL);
	side_init(&s, rk_pingpong_run, false, next_port());
	s.o.size = 64;
	s.o.count = 1;
	s.o.mtu = 1000;
	assert_int_equal(rk_pingpong_run(&s.o, &s.res), -EINVAL);
	/* ibv_srq_pingpong's bounds: RC, 1..256 QPs, a ping on each at once. */
	s.o.mtu = 1024;
	s.o.count = 16;
	s.o.srq_qps = RK_PP_SRQ_MAX_QP + 1;
	assert_int_equal(rk_pingpong_run(&s.o, &s.res), -EINVAL);
	s.o.srq_qps = 16;
	s.o.transport = RK_UC;
	assert_int_equal(rk_pingpong_run(&s.o, &s.res), -EINVAL);
	s.o.transport = RK_RC;
	s.o.count = 15;
	assert_int_equal(rk_pingpong_run(&s.o, &s.res), -EINVAL);
	s.o.count = 16;
	s.o.interval_ms = 10;
	assert_int_equal(rk_pingpong_run(&s.o, &s.res), -EINVAL);
	side_init(&s, rk_ping_run, false, next_port());
	s.o.count = 1;
	assert_int_equal(rk_ping_run(&s.o, &s.res), -EINVAL); /* size 0 */
	/* rping's smallest and largest sizes pass the check: no server there. */
	side_init(&s, rk_rping_run, false, next_port());
	s.o.size = RK_RPING_MAX_SIZE;
	s.o.count = 1;
	s.o.timeout_ms = 1000;
	assert_int_equal(rk_rping_run(&s.o, &s.res), -ECONNREFUSED);
	assert_int_equal(s.res.rounds, 0);
	assert_int_equal(s.connected, 0);
	rk_ping_result_free(&s.res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native_tcp),
		cmocka_unit_test(test_native_cm_events),
		cmocka_unit_test(test_rping_until_client_leaves),
		cmocka_unit_test(test_rping_count_waits_for_client),
		cmocka_unit_test(test_rping_client_wants_more),
		cmocka_unit_test(test_rping_source_address),
		cmocka_unit_test(test_rping_client_stopped),
		cmocka_unit_test(test_native_client_stopped),
		cmocka_unit_test(test_pingpong_rc),
		cmocka_unit_test(test_pingpong_uc),
		cmocka_unit_test(test_pingpong_ud),
		cmocka_unit_test(test_pingpong_srq),
		cmocka_unit_test(test_bad_options_and_no_server),
	};

	return fx_run("ping engines", tests);
}
