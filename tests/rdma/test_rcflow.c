/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The RC step flow (rk_rcflow_run) on a real device, server and client in one
 * process (each in a thread): single operations and the whole flow over the
 * TCP exchange and RDMA CM, with several SGEs; and the ways it fails: a wrong
 * rkey, a server that serves another operation, device memory on a device
 * without it, bad options. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

#define WAIT_MS 20000
#define PORT_BASE 18760 /* this test's ports: PORT_BASE, PORT_BASE + 1, ... */

/* ---- one side, in its own thread ---- */

struct side {
	struct rk_rcflow_opts o;
	struct rk_rcflow_result r;
	int ret;
	pthread_t thread;
	/* counted by the callback (no cmocka assertion in a thread) */
	int waiting, connected, steps;
	int last_step;
	bool out_of_order;
};

/* The sides of a test (results are kilobytes: not on a thread's stack). */
static struct side sides[3];

static void count_event(const struct rk_rcflow_result *r, enum rk_rcflow_event ev, int step,
			void *arg)
{
	struct side *s = arg;

	if (r != &s->r)
		s->out_of_order = true;
	switch (ev) {
	case RK_RCFLOW_WAITING: s->waiting++; break;
	case RK_RCFLOW_CONNECTED:
		if (s->steps)
			s->out_of_order = true;
		s->connected++;
		break;
	case RK_RCFLOW_STEP:
		if (step != s->steps || !s->connected)
			s->out_of_order = true;
		s->steps++;
		s->last_step = step;
		break;
	}
}

static void side_init(struct side *s, bool server, bool cm, uint16_t port, const char *op,
		      uint64_t size)
{
	memset(s, 0, sizeof(*s));
	s->o.server = server;
	s->o.host = server ? NULL : fx_test_ip();
	s->o.port = port;
	s->o.cm = cm;
	s->o.device = getenv("RDMAKIT_TEST_DEVICE");
	s->o.gid_index = -1;
	s->o.timeout_ms = WAIT_MS;
	s->o.accept_timeout_ms = WAIT_MS;
	s->o.op = RK_RCFLOW_OP_ANY;
	if (op)
		assert_int_equal(rk_rcflow_op_parse(op, &s->o.op), 0);
	s->o.size = size;
	s->o.sge = 1;
	s->o.rnr_retry = 7;
	s->o.retry = 6;
	s->o.on_event = count_event;
	s->o.arg = s;
}

/* The two sides of one connection on a fresh port: sides[0] serves srv_op
 * (NULL: any), sides[1] asks for cli_op; both size bytes. */
static void pair_init(bool cm, const char *srv_op, const char *cli_op, uint64_t size)
{
	uint16_t port = fx_next_port(PORT_BASE);

	side_init(&sides[0], true, cm, port, srv_op, size);
	side_init(&sides[1], false, cm, port, cli_op, size);
}

static void *side_run(void *arg)
{
	struct side *s = arg;

	s->ret = rk_rcflow_run(&s->o, &s->r);
	return NULL;
}

/* Run both sides to the end. */
static void run_pair(struct side *srv, struct side *cli)
{
	fx_capture_reset();
	assert_int_equal(pthread_create(&srv->thread, NULL, side_run, srv), 0);
	assert_int_equal(pthread_create(&cli->thread, NULL, side_run, cli), 0);
	assert_int_equal(pthread_join(cli->thread, NULL), 0);
	assert_int_equal(pthread_join(srv->thread, NULL), 0);
	printf("# %s %s, %u SGE%s: server %d, client %d; %d step(s)\n", srv->o.cm ? "CM" : "TCP",
	       rk_rcflow_op_name(cli->o.op), cli->o.sge, cli->o.sge > 1 ? "s" : "", srv->ret,
	       cli->ret, cli->r.done);
	assert_false(srv->out_of_order);
	assert_false(cli->out_of_order);
}

/* Both sides did every step, and every step was checked on the side the
 * bytes arrived at. */
static void check_flow_ok(const struct side *srv, const struct side *cli, int nsteps)
{
	assert_int_equal(srv->ret, 0);
	assert_int_equal(cli->ret, 0);
	assert_int_equal(srv->waiting, 1);
	assert_int_equal(cli->waiting, 0);
	assert_int_equal(srv->connected, 1);
	assert_int_equal(cli->connected, 1);
	assert_int_equal(srv->r.nsteps, nsteps);
	assert_int_equal(cli->r.nsteps, nsteps);
	assert_int_equal(srv->r.done, nsteps);
	assert_int_equal(cli->r.done, nsteps);
	assert_int_equal(srv->steps, nsteps);
	assert_int_equal(cli->steps, nsteps);
	assert_int_equal(srv->r.op, cli->o.op);
	assert_true(srv->r.connected && cli->r.connected);
	/* The client reached the server's buffer through the rkey it exposed. */
	assert_int_equal(cli->r.reply.rkey, srv->r.rkey);
	assert_true(cli->r.reply.len >= cli->o.size);
	for (int i = 0; i < nsteps; i++) {
		const struct rk_rcflow_step *s = &srv->r.steps[i], *c = &cli->r.steps[i];

		assert_int_equal(s->kind, c->kind);
		assert_int_equal(s->status, 0);
		assert_int_equal(c->status, 0);
		/* Exactly one side checks content; atomics are checked on both. */
		assert_true(s->checked || c->checked);
		assert_int_equal(s->bad_offset, -1);
		assert_int_equal(c->bad_offset, -1);
	}
}

/* A fresh pair (as pair_init) with sge SGEs on both sides, run to the end:
 * every one of its nsteps steps must pass (check_flow_ok). */
static void flow_ok(bool cm, const char *srv_op, const char *cli_op, uint64_t size, uint32_t sge,
		    int nsteps)
{
	struct side *srv = &sides[0], *cli = &sides[1];

	pair_init(cm, srv_op, cli_op, size);
	srv->o.sge = sge;
	cli->o.sge = sge;
	run_pair(srv, cli);
	check_flow_ok(srv, cli, nsteps);
}

static void test_write_tcp(void **state)
{
	struct side *srv = &sides[0];

	(void)state;
	flow_ok(false, NULL, "write", 4096, 1, 1);
	assert_int_equal(srv->r.steps[0].kind, RK_STEP_WRITE);
	assert_true(srv->r.steps[0].checked);
	assert_int_equal(srv->r.steps[0].bytes, 4096);
	/* The server registered exactly what a WRITE needs. */
	assert_int_equal(srv->r.access, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_false(srv->r.dm);
}

/* The whole flow: SEND, READ, WRITE, fetch-add, compare-swap, in 3 SGEs. */
static void test_all_tcp_sge(void **state)
{
	struct side *srv = &sides[0], *cli = &sides[1];
	const struct rk_rcflow_step *fadd, *cswap;

	(void)state;
	flow_ok(false, NULL, "all", 1000, 3, 5);
	assert_int_equal(cli->r.steps[0].kind, RK_STEP_SEND_S2C);
	assert_true(cli->r.steps[0].checked);
	assert_true(cli->r.steps[1].checked); /* READ: checked where it landed */
	assert_true(srv->r.steps[2].checked); /* WRITE */
	fadd = &srv->r.steps[3];
	cswap = &srv->r.steps[4];
	assert_int_equal(fadd->kind, RK_STEP_FADD);
	assert_int_equal(fadd->word_before, 1000);
	assert_int_equal(fadd->word_after, 1001);
	assert_int_equal(cswap->word_before, 1001);
	assert_int_equal(cswap->word_after, 2000);
	/* The client's fetch-add returned the value before. */
	assert_int_equal(cli->r.steps[3].word_before, 1000);
	assert_int_equal(srv->r.access, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
}

/* RDMA CM: READ, and SEND with immediate into 2 SGEs. */
static void test_cm_ops(void **state)
{
	struct side *srv = &sides[0], *cli = &sides[1];

	(void)state;
	flow_ok(true, NULL, "read", 512, 1, 1);
	assert_true(cli->r.cm);
	assert_true(cli->r.steps[0].checked);

	if (fx_iwarp_dev()) { /* iWARP has no immediate data: a plain SEND */
		flow_ok(true, "send", "send", 300, 2, 1);
		assert_int_equal(srv->r.steps[0].kind, RK_STEP_SEND_C2S);
		assert_false(srv->r.steps[0].has_imm);
		assert_true(srv->r.steps[0].checked);
		return;
	}
	flow_ok(true, "send-imm", "send-imm", 300, 2, 1);
	assert_true(srv->r.steps[0].has_imm);
	assert_int_equal(srv->r.steps[0].imm, cli->r.steps[0].imm);
	assert_true(srv->r.steps[0].checked);
}

/* ---- failures ---- */

/* --inject wrong-rkey: the server's HCA refuses the WRITE, and both sides
 * stop at that step. */
static void test_wrong_rkey(void **state)
{
	struct side *srv = &sides[0], *cli = &sides[1];

	(void)state;
	pair_init(fx_iwarp_dev() != NULL, NULL, "write", 256); /* iWARP: RDMA CM only */
	cli->o.inject = RK_RCFLOW_INJECT_WRONG_RKEY;
	run_pair(srv, cli);
	assert_int_not_equal(cli->ret, 0);
	assert_int_not_equal(srv->ret, 0);
	assert_int_equal(cli->r.done, 1);
	assert_int_not_equal(cli->r.steps[0].status, 0);
	/* iWARP: siw answers the WRITE with a TERMINATE and drops the stream,
	 * so what is said is the reset (seen on siw0), not an access error. */
	assert_true(fx_capture_has(fx_iwarp_dev() ? "Connection reset by peer" :
						    "IBV_WC_REM_ACCESS_ERR"));
}

/* A server that serves only READ refuses a client that asks for WRITE. */
static void test_server_refuses_op(void **state)
{
	struct side *srv = &sides[0], *cli = &sides[1];

	(void)state;
	pair_init(fx_iwarp_dev() != NULL, "read", "write", 256); /* iWARP: RDMA CM only */
	run_pair(srv, cli);
	assert_int_equal(srv->ret, -EPERM);
	assert_int_not_equal(cli->ret, 0);
	assert_true(fx_capture_has("serves only read"));
	assert_false(srv->r.connected);
	assert_int_equal(cli->r.done, 0);
	assert_int_equal(cli->connected, 0);
}

/* Device memory on a device without it is refused before any client comes;
 * auto falls back to host memory. */
static void test_device_memory(void **state)
{
	struct side *srv = &sides[0], *cli = &sides[1];
	struct rk_device *dev;
	uint64_t max_dm;

	(void)state;
	assert_int_equal(rk_device_open(getenv("RDMAKIT_TEST_DEVICE"), &dev), 0);
	max_dm = dev->info.max_dm_size;
	rk_device_close(dev);
	pair_init(fx_iwarp_dev() != NULL, NULL, "write", 4096); /* iWARP: RDMA CM only */
	srv->o.mem = max_dm ? RK_MEM_DM : RK_MEM_AUTO;
	run_pair(srv, cli);
	check_flow_ok(srv, cli, 1);
	assert_int_equal(srv->r.dm, max_dm != 0);
	assert_int_equal(srv->r.fell_back, max_dm == 0);
	if (!max_dm) {
		side_init(srv, true, fx_iwarp_dev() != NULL, fx_next_port(PORT_BASE), NULL, 4096);
		srv->o.mem = RK_MEM_DM;
		fx_capture_reset();
		srv->ret = rk_rcflow_run(&srv->o, &srv->r);
		fx_check_refused("device memory without it", srv->ret, -EOPNOTSUPP,
				 "no device memory (max_dm_size 0)");
		assert_int_equal(srv->waiting, 0);
	}
}

static void test_bad_options(void **state)
{
	struct side *s = &sides[0];

	(void)state;
	side_init(s, false, false, fx_next_port(PORT_BASE), "fetch-add", 4);
	fx_capture_reset();
	fx_check_refused("fetch-add of 4 bytes", rk_rcflow_run(&s->o, &s->r), -EINVAL,
			 "atomics need at least 8 bytes");
	side_init(s, false, false, fx_next_port(PORT_BASE), "write", 4);
	s->o.sge = 5;
	fx_check_refused("5 SGEs in 4 bytes", rk_rcflow_run(&s->o, &s->r), -EINVAL, NULL);
	side_init(s, false, false, fx_next_port(PORT_BASE), NULL, 64);
	fx_check_refused("a client with no op", rk_rcflow_run(&s->o, &s->r), -EINVAL, NULL);
	assert_int_equal(rk_rcflow_op_parse("jump", &s->o.op), -EINVAL);
	assert_string_equal(rk_rcflow_op_name(RK_RCFLOW_OP_ALL), "all");
	assert_true(rk_rcflow_has_atomics(RK_RCFLOW_OP_ALL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_tcp),
		cmocka_unit_test(test_all_tcp_sge),
		cmocka_unit_test(test_cm_ops),
		cmocka_unit_test(test_wrong_rkey),
		cmocka_unit_test(test_server_refuses_op),
		cmocka_unit_test(test_device_memory),
		cmocka_unit_test(test_bad_options),
	};

	return fx_run("RC flow engine tests", tests);
}
