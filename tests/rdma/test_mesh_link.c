/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* One measured link of rdmakit-mesh (mesh_link.h) on a real device, without
 * MPI: two "ranks" in one process, each with a port of its own (device, PD,
 * MR), a fresh pair of links per test as a mesh round makes them, their
 * infos handed over in memory. Reachability with its checked message (and a
 * wrong nonce refused), the ping-pong (the peer in a thread), WRITE
 * bandwidth with the written bytes checked here, and a peer without a QP. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

#define SIZE 65536
#define WAIT_MS 5000
#define ITERS 50

static struct rk_mesh_port *port_a, *port_b;
static struct rk_mesh_link *la, *lb;

static int setup(void **state)
{
	const char *dev = getenv("RDMAKIT_TEST_DEVICE");
	int ret;

	(void)state;
	ret = rk_mesh_port_open(dev, 0, -1, SIZE, false, &port_a);
	if (!ret)
		ret = rk_mesh_port_open(dev, 0, -1, SIZE, false, &port_b);
	if (ret)
		fprintf(stderr, "rk_mesh_port_open: %s\n", rk_strerror(ret));
	return ret;
}

static int teardown(void **state)
{
	(void)state;
	rk_mesh_port_close(port_b);
	rk_mesh_port_close(port_a);
	return 0;
}

/* A fresh pair of links, connected to each other. */
static int link_pair(void **state)
{
	struct rk_mesh_info ia, ib;
	char why[256] = "";

	(void)state;
	assert_int_equal(rk_mesh_link_create(port_a, &la, &ia), 0);
	assert_int_equal(rk_mesh_link_create(port_b, &lb, &ib), 0);
	assert_int_equal(ia.error, 0);
	assert_int_equal(ib.error, 0);
	assert_int_not_equal(ia.ep.qpn, ib.ep.qpn);
	assert_int_equal(rk_mesh_link_connect(la, &ib, why, sizeof(why)), 0);
	assert_int_equal(rk_mesh_link_connect(lb, &ia, why, sizeof(why)), 0);
	assert_true(la->connected && lb->connected);
	return 0;
}

static int link_free(void **state)
{
	(void)state;
	rk_mesh_link_destroy(lb);
	rk_mesh_link_destroy(la);
	la = lb = NULL;
	return 0;
}

/* 0 -> 1 arrives checked; 1 -> 0 with another nonce than the receiver
 * expects is refused as corrupted. */
static void test_reach(void **state)
{
	char why[256] = "";

	(void)state;
	assert_int_equal(rk_mesh_reach_send(la, 0, 1, 7, WAIT_MS, why, sizeof(why)), 0);
	assert_int_equal(rk_mesh_reach_recv(lb, 0, 1, 7, WAIT_MS, why, sizeof(why)), 0);
	assert_int_equal(rk_mesh_reach_send(lb, 1, 0, 7, WAIT_MS, why, sizeof(why)), 0);
	assert_int_equal(rk_mesh_reach_recv(la, 1, 0, 8, WAIT_MS, why, sizeof(why)), -EBADMSG);
	printf("# wrong nonce: %s\n", why);
	assert_non_null(strstr(why, "arrived corrupted"));
}

struct pong {
	int ret;
	char why[256];
};

static void *ponger(void *arg)
{
	struct pong *p = arg;

	p->ret = rk_mesh_pingpong(lb, false, ITERS, WAIT_MS, NULL, p->why, sizeof(p->why));
	return NULL;
}

static void test_pingpong(void **state)
{
	static struct pong p;
	double samples[ITERS] = {0};
	char why[256] = "";
	pthread_t t;
	int ret;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(pthread_create(&t, NULL, ponger, &p), 0);
	ret = rk_mesh_pingpong(la, true, ITERS, WAIT_MS, samples, why, sizeof(why));
	assert_int_equal(pthread_join(t, NULL), 0);
	if (ret || p.ret)
		printf("# initiator: %s; peer: %s\n", why, p.why);
	assert_int_equal(ret, 0);
	assert_int_equal(p.ret, 0);
	for (int i = 0; i < ITERS; i++)
		assert_true(samples[i] > 0 && samples[i] < WAIT_MS * 1000.0);
	printf("# ping-pong: first %.1f us, last %.1f us (half round trips)\n", samples[0],
	       samples[ITERS - 1]);
}

/* WRITEs of a's [0, SIZE) into b's [SIZE, 2 SIZE): the rate, and the bytes
 * that landed. A window out of 1..64 is refused. */
static void test_write_bw(void **state)
{
	uint8_t *src = port_a->mr->buf, *dst = (uint8_t *)port_b->mr->buf + SIZE;
	char why[256] = "";
	double mbps = 0;

	(void)state;
	rk_pattern_fill(src, SIZE, 41);
	memset(dst, 0, SIZE);
	assert_int_equal(rk_mesh_write_bw(la, ITERS, 8, WAIT_MS, &mbps, why, sizeof(why)), 0);
	printf("# WRITE bandwidth: %.1f MB/s\n", mbps);
	assert_true(mbps > 0);
	assert_int_equal(rk_pattern_check(dst, SIZE, 41), -1);
	assert_int_equal(rk_mesh_write_bw(la, ITERS, 0, WAIT_MS, &mbps, why, sizeof(why)), -EINVAL);
	assert_int_equal(rk_mesh_write_bw(la, ITERS, 65, WAIT_MS, &mbps, why, sizeof(why)),
			 -EINVAL);
}

/* The peer could not make a QP: connecting to its info says so. */
static void test_peer_without_qp(void **state)
{
	struct rk_mesh_link *l;
	struct rk_mesh_info mine, peer = {.error = -ENOMEM};
	char why[256] = "";

	(void)state;
	assert_int_equal(rk_mesh_link_create(port_a, &l, &mine), 0);
	assert_int_equal(rk_mesh_link_connect(l, &peer, why, sizeof(why)), -ENOTCONN);
	assert_non_null(strstr(why, "the peer has no QP"));
	assert_false(l->connected);
	rk_mesh_link_destroy(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reach, link_pair, link_free),
		cmocka_unit_test_setup_teardown(test_pingpong, link_pair, link_free),
		cmocka_unit_test_setup_teardown(test_write_bw, link_pair, link_free),
		cmocka_unit_test(test_peer_without_qp),
	};

	printf("# mesh links against %s\n", fx_test_ip());
	return cmocka_run_group_tests_name("mesh links", tests, setup, teardown) ? 1 : 0;
}
