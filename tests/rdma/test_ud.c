/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The UD datagram engine (rk_ud_run) on a real device, server and clients in
 * one process (the server in a thread): echo over the TCP exchange and over
 * RDMA CM (SIDR), two clients on one server QP, and the ways it fails: a
 * datagram larger than the path MTU, sizes that differ, nobody listening,
 * bad options. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

#define WAIT_MS 20000
#define PORT_BASE 18720 /* this test's ports: PORT_BASE, PORT_BASE + 1, ... */

/* ---- one side of a run, in its own thread ---- */

struct side {
	struct rk_ud_opts o;
	struct rk_ud_result r;
	int ret;
	pthread_t thread;
	/* counted by the callback */
	int ready, clients, datagrams;
	uint64_t last_index;
	bool all_checked;
	bool foreign_result; /* an event carried another result than this side's */
};

/* The sides of a test (results are kilobytes: not on a thread's stack). */
static struct side sides[3];

static void count_event(const struct rk_ud_event *ev, void *arg)
{
	struct side *s = arg;

	/* No cmocka assertion here: this runs in the side's thread. */
	if (ev->result != &s->r)
		s->foreign_result = true;
	switch (ev->kind) {
	case RK_UD_READY: s->ready++; break;
	case RK_UD_CLIENT: s->clients++; break;
	case RK_UD_DATAGRAM:
		s->datagrams++;
		s->last_index = ev->index;
		s->all_checked &= ev->checked;
		break;
	}
}

static void side_init(struct side *s, bool server, bool cm, uint16_t port, uint32_t size,
		      uint32_t count)
{
	memset(s, 0, sizeof(*s));
	s->o = (struct rk_ud_opts){
		.server = server, .host = server ? NULL : fx_test_ip(), .port = port, .cm = cm,
		.device = getenv("RDMAKIT_TEST_DEVICE"), .gid_index = -1,
		.size = size, .count = count, .clients = 1,
		.timeout_ms = WAIT_MS, .wait_ms = WAIT_MS,
		.on_event = count_event, .arg = s,
	};
	s->all_checked = true;
}

static void *side_run(void *arg)
{
	struct side *s = arg;

	s->ret = rk_ud_run(&s->o, &s->r);
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

/* ---- echo ---- */

static void check_echo(const struct side *srv, const struct side *cli, uint32_t count)
{
	assert_int_equal(srv->ret, 0);
	assert_int_equal(cli->ret, 0);
	/* The server saw one rdmakit client that announced its QP. */
	assert_int_equal(srv->r.nclients, 1);
	assert_int_equal(srv->clients, 1);
	assert_int_equal(srv->ready, 1);
	assert_true(srv->r.clients[0].rdmakit);
	assert_int_equal(srv->r.clients[0].qpn, cli->r.qpn);
	assert_int_equal(srv->r.clients[0].count, count);
	assert_int_equal(srv->r.clients[0].received, count);
	assert_int_equal(srv->r.clients[0].echoed, count);
	assert_int_equal(srv->r.received, count);
	assert_true(srv->r.checked);
	assert_int_equal(srv->datagrams, count);
	/* The client reached that QP and got every datagram back, checked. */
	assert_true(cli->r.has_qp);
	assert_int_equal(cli->r.peer_qpn, srv->r.qpn);
	assert_int_equal(cli->r.peer_qkey, srv->r.qkey);
	assert_true(cli->r.peer_rdmakit);
	assert_int_equal(cli->r.sent, count);
	assert_int_equal(cli->r.received, count);
	assert_true(cli->r.checked);
	assert_int_equal(cli->ready, 1);
	assert_int_equal(cli->datagrams, count);
	assert_int_equal(cli->last_index, count);
	assert_true(cli->all_checked);
	assert_true(cli->r.elapsed_us > 0);
	assert_false(srv->foreign_result);
	assert_false(cli->foreign_result);
}

/* The server started for srv_count datagrams per client (its receive
 * ring: at least 16), the client sending count. */
static void echo_counts(bool cm, uint32_t size, uint32_t srv_count, uint32_t count)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct side *srv = &sides[0], *cli = &sides[1];

	side_init(srv, true, cm, port, size, srv_count);
	side_init(cli, false, cm, port, size, count);
	side_start(srv);
	side_start(cli); /* the client keeps trying until the server listens */
	side_join(cli);
	side_join(srv);
	printf("# %s: server QP 0x%x Q_Key 0x%x, client QP 0x%x: %u datagrams of %u bytes in "
	       "%.1f ms\n",
	       cm ? "CM" : "TCP", srv->r.qpn, srv->r.qkey, cli->r.qpn, count, size,
	       cli->r.elapsed_us / 1e3);
	check_echo(srv, cli, count);
	if (cm)
		assert_int_equal(srv->r.qkey, RDMA_UDP_QKEY);
	else
		assert_int_equal(srv->r.qkey, RK_DEFAULT_QKEY);
}

static void echo(bool cm, uint32_t size, uint32_t count)
{
	echo_counts(cm, size, count, count);
}

/* 3000 datagrams through a server whose ring has 16 receives (it was
 * started for 1; the client announces 3000): the client keeps few
 * unanswered, so none is dropped for want of a receive (all at once, the
 * 17th was lost and the server took the next one for corrupt data). */
static void test_many_small_ring(void **state)
{
	(void)state;
	echo_counts(false, 100, 1, 3000);
	echo_counts(true, 100, 1, 3000);
}

static void test_echo_tcp(void **state)
{
	(void)state;
	echo(false, 100, 50);
}

static void test_echo_cm(void **state)
{
	(void)state;
	echo(true, 256, 40);
}

/* Two clients on one server QP over TCP, the first to host1 (NULL: the test
 * address): each gets its own datagrams back. */
static void two_clients(const char *host1)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct side *srv = &sides[0], *c1 = &sides[1], *c2 = &sides[2];

	side_init(srv, true, false, port, 64, 10);
	srv->o.clients = 2;
	side_init(c1, false, false, port, 64, 10);
	if (host1)
		c1->o.host = host1;
	side_init(c2, false, false, port, 64, 10);
	side_start(srv);
	side_start(c1);
	side_start(c2);
	side_join(c1);
	side_join(c2);
	side_join(srv);
	assert_int_equal(srv->ret, 0);
	assert_int_equal(c1->ret, 0);
	assert_int_equal(c2->ret, 0);
	assert_int_equal(srv->r.nclients, 2);
	assert_int_equal(srv->r.received, 20);
	assert_int_not_equal(c1->r.qpn, c2->r.qpn);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(srv->r.clients[i].echoed, 10);
		assert_true(srv->r.clients[i].qpn == c1->r.qpn ||
			    srv->r.clients[i].qpn == c2->r.qpn);
	}
	assert_int_equal(c1->r.received, 10);
	assert_int_equal(c2->r.received, 10);
}

static void test_two_clients(void **state)
{
	(void)state;
	two_clients(NULL);
}

/* IPv6 (the link-local address of the test netdev): one TCP server answers
 * an IPv6 and an IPv4 client, each from the GID carrying the address it
 * reached (from the QP's default GID, the IPv4 one, the address handle to
 * the IPv6 client's GID was refused); over RDMA CM the wildcard listener
 * takes IPv6 (bound to IPv4's, it refused every IPv6 client). */
static void test_ipv6(void **state)
{
	const char *ip6 = fx_test_ip6();
	struct side *srv = &sides[0], *c6 = &sides[1], *c4 = &sides[2];
	uint16_t port;
	int v6 = 0;

	(void)state;
	if (!ip6)
		fail_msg("no IPv6 link-local address on the netdev of %s", fx_test_ip());
	printf("# IPv6: %s\n", ip6);
	two_clients(ip6);
	assert_true(c6->r.checked);
	assert_true(c4->r.checked);
	for (int i = 0; i < 2; i++)
		v6 += strstr(srv->r.clients[i].addr, "fe80:") != NULL;
	assert_int_equal(v6, 1);

	port = fx_next_port(PORT_BASE);
	side_init(srv, true, true, port, 100, 10);
	side_init(c6, false, true, port, 100, 10);
	c6->o.host = ip6;
	side_start(srv);
	side_start(c6);
	side_join(c6);
	side_join(srv);
	check_echo(srv, c6, 10);
}

/* ---- failures ---- */

/* The port's active MTU in bytes. */
static int port_mtu(void)
{
	const struct rk_port_info *pi;
	struct rk_device *dev;
	int mtu;

	assert_int_equal(rk_device_open(getenv("RDMAKIT_TEST_DEVICE"), &dev), 0);
	pi = rk_device_port(dev, 1);
	assert_non_null(pi);
	mtu = rk_mtu_bytes(pi->active_mtu);
	rk_device_close(dev);
	return mtu;
}

/* Above the path MTU: refused before anything is sent, no server needed. */
static void test_larger_than_mtu(void **state)
{
	struct side *cli = &sides[1];
	int mtu = port_mtu();

	(void)state;
	if (mtu >= RK_UD_MAX_SIZE) {
		printf("# SKIP: the port's MTU is %d bytes, no datagram size is above it\n", mtu);
		skip();
	}
	side_init(cli, false, false, fx_next_port(PORT_BASE), (uint32_t)mtu + 1, 1);
	fx_capture_reset();
	cli->ret = rk_ud_run(&cli->o, &cli->r);
	assert_int_equal(cli->ret, -EMSGSIZE);
	assert_true(fx_capture_has("larger than the path MTU"));
	assert_false(cli->r.has_qp);
	assert_int_equal(cli->r.sent, 0);
	assert_int_equal(cli->ready, 0);
	/* The same over CM, where the size is checked on the device CM chose. */
	side_init(cli, false, true, fx_next_port(PORT_BASE), (uint32_t)mtu + 1, 1);
	cli->ret = rk_ud_run(&cli->o, &cli->r);
	assert_int_equal(cli->ret, -EMSGSIZE);
}

/* A client that sends 200-byte datagrams to a 100-byte server is refused. */
static void test_size_differs(void **state)
{
	uint16_t port = fx_next_port(PORT_BASE);
	struct side *srv = &sides[0], *cli = &sides[1];

	(void)state;
	side_init(srv, true, true, port, 100, 5);
	side_init(cli, false, true, port, 200, 5);
	cli->o.timeout_ms = 5000;
	fx_capture_reset();
	side_start(srv);
	side_start(cli);
	side_join(cli);
	side_join(srv);
	assert_int_equal(srv->ret, -EMSGSIZE);
	assert_int_not_equal(cli->ret, 0);
	assert_true(fx_capture_has("this server takes 100-byte ones"));
	assert_int_equal(srv->r.nclients, 0);
	assert_int_equal(cli->r.received, 0);
}

/* Nothing listens: the CM client retries, then says so. */
static void test_nobody_listens(void **state)
{
	struct side *cli = &sides[1];

	(void)state;
	side_init(cli, false, true, fx_next_port(PORT_BASE), 100, 1);
	cli->o.timeout_ms = 1500;
	fx_capture_reset();
	cli->ret = rk_ud_run(&cli->o, &cli->r);
	fx_check_refused("nobody listens", cli->ret, -ECONNREFUSED, "nothing listens there");
	assert_int_equal(cli->ready, 0);
}

/* Options refused with -EINVAL before anything is opened. */
static void test_bad_options(void **state)
{
	static const struct {
		const char *what;
		bool server;
		uint32_t size;
		int clients;
		bool no_host;
		const char *msg; /* NULL: not checked */
	} cases[] = {
		{"size 0", false, 0, 1, false, NULL},
		{"size above RK_UD_MAX_SIZE", false, RK_UD_MAX_SIZE + 1, 1, false, NULL},
		{"clients above RK_UD_MAX_CLIENTS", true, 100, RK_UD_MAX_CLIENTS + 1, false, NULL},
		{"a client without a host", false, 100, 1, true, "server's address"},
	};
	struct side *s = &sides[0];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		side_init(s, cases[i].server, false, fx_next_port(PORT_BASE), cases[i].size, 1);
		s->o.clients = cases[i].clients;
		if (cases[i].no_host)
			s->o.host = NULL;
		fx_capture_reset();
		fx_check_refused(cases[i].what, rk_ud_run(&s->o, &s->r), -EINVAL, cases[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_tcp),
		cmocka_unit_test(test_echo_cm),
		cmocka_unit_test(test_two_clients),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_many_small_ring),
		cmocka_unit_test(test_larger_than_mtu),
		cmocka_unit_test(test_size_differs),
		cmocka_unit_test(test_nobody_listens),
		cmocka_unit_test(test_bad_options),
	};

	return fx_run("UD engine tests", tests);
}
