/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Test fixture for tests that need a verbs device: two RC QPs on one device,
 * each with its own CQ and buffer, ready to be connected to each other. */
#ifndef RDMAKIT_TEST_FIXTURE_H
#define RDMAKIT_TEST_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <rdmakit/rdmakit.h>

#define FX_BUF 65536
#define FX_WAIT_MS 5000

struct fx {
	struct rk_device *dev;
	uint8_t port;
	struct rk_gid_choice gid;
	int has_gid;
	struct ibv_pd *pd;
	struct rk_cq *cq_a, *cq_b;
	struct rk_mr *mr_a, *mr_b;
	struct rk_qp *qp_a, *qp_b;
	char last_log[1024]; /* the last message the library logged */
	int logs;            /* how many it logged since fx_log_reset() */
};

/* Open the device (RDMAKIT_TEST_DEVICE, else the first), PD, CQs, MRs (B's
 * with remote access of remote_access) and two RC QPs in RESET with nsge
 * SGEs. Prints which device and GID the test runs against. */
int fx_open(struct fx *f, int remote_access, int nsge, bool events);

/* Destroy everything fx_open() made. */
void fx_close(struct fx *f);

/* Connect A and B to each other (INIT, RTR, RTS both). B's QP allows the
 * access flags given; A's allows none. */
int fx_connect(struct fx *f, int access_b);

/* fx_open() then fx_connect(): 0, or the error (said on stderr). */
int fx_open_connected(struct fx *f, int remote_access, int nsge, bool events, int access_b);

/* The address of the test device's netdev: RDMAKIT_TEST_IP, else 198.18.0.1. */
const char *fx_test_ip(void);

/* The IPv6 link-local address of that netdev with its scope
 * ("fe80::...%rdma0"), or NULL when it has none. */
const char *fx_test_ip6(void);

/* Start counting library log messages afresh. */
void fx_log_reset(struct fx *f);

/* Wait for exactly one completion on cq; returns its status copied into *wc. */
int fx_wait(struct rk_cq *cq, struct ibv_wc *wc);

/* Tests with several threads (a server thread, client threads): every
 * message the library logs, from any thread, kept in one text. */

/* Capture the library's log from now on (also printed on stderr). */
void fx_capture_start(void);

/* Stop capturing; the library logs as it did before. */
void fx_capture_stop(void);

/* fx_capture_start() and fx_capture_stop() as cmocka group setup and
 * teardown. */
int fx_capture_setup(void **state);
int fx_capture_teardown(void **state);

/* Forget what was captured so far. */
void fx_capture_reset(void);

/* True when a captured message contains s; says so on stderr when not. */
bool fx_capture_has(const char *s);

/* A run that must be refused: ret is want, and the log captured since
 * fx_capture_reset() says msg (NULL: not checked). A mismatch fails the test
 * naming the case (what). */
void fx_check_refused(const char *what, int ret, int want, const char *msg);

/* A fresh port for each connection a test makes: base, base + 1, ... */
uint16_t fx_next_port(uint16_t base);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t fx_now_ms(void);

/* The name of the device the tests run on when it is iWARP (sysfs node_type
 * RNIC, as Soft-iWARP's siw0): RDMAKIT_TEST_DEVICE when set, else the first
 * device when every device here is iWARP; NULL otherwise. lib.sh's iwarp_dev
 * is the same. */
const char *fx_iwarp_dev(void);

/* A test program's main: print "# WHAT against IP", then run the group of
 * tests with the library's log captured (fx_capture_setup/teardown). Returns
 * how many tests failed. On an iWARP device with RDMAKIT_IWARP_CASES set (the
 * test's IWARP_CASES in tests/rdma/CMakeLists.txt: the cases that apply on
 * iWARP, by name) only those run, and the others are named as left out with
 * RDMAKIT_IWARP_LEFT_OUT's reason. */
int fx_run_group(const char *what, const struct CMUnitTest *tests, size_t n);
#define fx_run(what, tests) fx_run_group((what), (tests), sizeof(tests) / sizeof((tests)[0]))

#endif
