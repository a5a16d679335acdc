/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The port counters (counters.h) on a real device: a snapshot has the
 * groups the port exposes; SENDs between the fixture's two QPs show up in
 * the difference of two snapshots and in a run's changes
 * (rk_run_counters_start/stop); and a failed completion, seen through
 * rk_wc_check(), is counted among the run's failures with its status.
 * rk_port_refresh() queries the port again. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

#define NSENDS 20
#define SIZE 100

static struct fx F;

static int setup(void **state)
{
	(void)state;
	return fx_open_connected(&F, IBV_ACCESS_REMOTE_WRITE, 1, false, IBV_ACCESS_REMOTE_WRITE);
}

static int teardown(void **state)
{
	(void)state;
	fx_close(&F);
	return 0;
}

/* NSENDS SENDs of SIZE bytes from A to B, each received and checked. */
static void send_some(void)
{
	for (int i = 0; i < NSENDS; i++) {
		struct ibv_sge sa = rk_sge(F.mr_a, 0, SIZE), sb = rk_sge(F.mr_b, 0, SIZE);
		struct rk_wr wr = {.op = RK_OP_SEND, .wr_id = (uint64_t)i, .sg = &sa, .nsge = 1,
				   .flags = IBV_SEND_SIGNALED};
		struct ibv_wc wc;

		rk_pattern_fill(F.mr_a->buf, SIZE, (uint32_t)i);
		assert_int_equal(rk_post_recv(F.qp_b, 100 + (uint64_t)i, &sb, 1), 0);
		assert_int_equal(rk_post(F.qp_a, &wr), 0);
		assert_int_equal(fx_wait(F.cq_a, &wc), 0);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(fx_wait(F.cq_b, &wc), 0);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		assert_int_equal(rk_pattern_check(F.mr_b->buf, SIZE, (uint32_t)i), -1);
	}
}

/* hw_counters may be served from a cache up to lifespan_ms old. */
static void wait_lifespan(const struct rk_counters *snap)
{
	struct timespec ts = {.tv_sec = snap->lifespan_ms / 1000,
			      .tv_nsec = (long)(snap->lifespan_ms % 1000) * 1000000L + 1000000L};

	nanosleep(&ts, NULL);
}

static void test_snapshot_and_diff(void **state)
{
	struct rk_counters *before, *after;
	struct rk_counters_delta *d;
	const struct rk_counter_delta *sent;
	uint64_t v;

	(void)state;
	assert_int_equal(rk_counters_read(F.dev, F.port, &before), 0);
	printf("# %s port %u: %d counters, groups 0x%x, lifespan %u ms\n", before->device,
	       before->port, before->n, before->groups, before->lifespan_ms);
	/* rxe has hw_counters; an IB port has counters too. */
	assert_int_not_equal(before->groups, 0);
	assert_string_equal(before->device, F.dev->info.name);
	assert_int_equal(before->port, F.port);
	assert_true(before->n > 0);
	/* Sorted by group, then name. */
	for (int i = 1; i < before->n; i++) {
		const struct rk_counter *a = &before->v[i - 1], *b = &before->v[i];

		assert_true(a->group < b->group ||
			    (a->group == b->group && strcmp(a->name, b->name) < 0));
	}
	assert_int_equal(rk_counters_get(before, before->v[0].group, before->v[0].name, &v), 0);
	assert_int_equal(v, before->v[0].value);
	assert_int_equal(rk_counters_get(before, RK_COUNTERS_HW, "no_such_counter", &v), -ENOENT);

	wait_lifespan(before);
	send_some();
	wait_lifespan(before);
	assert_int_equal(rk_counters_read(F.dev, F.port, &after), 0);
	assert_int_equal(rk_counters_diff(before, after, true, &d), 0);
	assert_true(d->interval_ns > 0);
	for (int i = 0; i < d->n; i++)
		assert_int_not_equal(d->v[i].delta, 0);
	sent = rk_counters_delta_find(d, "sent_pkts");
	if (!sent) /* an IB port's counter of the same meaning */
		sent = rk_counters_delta_find(d, "port_xmit_packets");
	assert_non_null(sent);
	printf("# %s +%lld over %d SENDs\n", sent->name, (long long)sent->delta, NSENDS);
	assert_true(sent->delta >= NSENDS);
	assert_int_equal(sent->after - sent->before, (uint64_t)sent->delta);
	rk_counters_delta_free(d);
	rk_counters_free(after);
	rk_counters_free(before);
}

/* rk_counters_watch(): intervals numbered from 1, the SENDs made during the
 * first show in the changes that follow, and a stop request (stop.h) ends
 * a watch without a count. */
struct watch_seen {
	uint64_t calls, last, sum_ns;
	int64_t sent;
	bool send_in_first;
	volatile sig_atomic_t *stop_at_2;
};

static void on_watch(uint64_t interval, const struct rk_counters_delta *d, void *arg)
{
	struct watch_seen *w = arg;
	const struct rk_counter_delta *sent = rk_counters_delta_find(d, "sent_pkts");

	if (!sent)
		sent = rk_counters_delta_find(d, "port_xmit_packets");
	w->calls++;
	w->last = interval;
	w->sum_ns += d->interval_ns;
	w->sent += sent ? sent->delta : 0;
	if (interval == 1 && w->send_in_first)
		send_some();
	if (interval == 2 && w->stop_at_2)
		*w->stop_at_2 = 1;
}

static void test_watch(void **state)
{
	static volatile sig_atomic_t stop;
	struct watch_seen w = {.send_in_first = true};
	struct rk_counters_watch_opts o = {.port_num = F.port, .interval_ms = 300, .count = 3,
					   .on_interval = on_watch, .arg = &w};
	uint64_t done = 99;

	(void)state;
	assert_int_equal(rk_counters_watch(F.dev, &o, &done), 0);
	assert_int_equal(done, 3);
	assert_int_equal(w.calls, 3);
	assert_int_equal(w.last, 3);
	/* The first reading comes before the deadlines start: 3 x 300 ms at least. */
	assert_true(w.sum_ns >= 900000000ull);
	printf("# watch: 3 intervals in %.3f s, sent +%lld\n", (double)w.sum_ns / 1e9,
	       (long long)w.sent);
	assert_true(w.sent >= NSENDS);

	w = (struct watch_seen){.stop_at_2 = &stop};
	o.count = 0;
	o.interval_ms = 100;
	rk_stop_watch(&stop);
	assert_int_equal(rk_counters_watch(F.dev, &o, &done), 0);
	rk_stop_watch(NULL);
	assert_int_equal(done, 2);
	assert_int_equal(w.calls, 2);

	o.interval_ms = 0;
	assert_int_equal(rk_counters_watch(F.dev, &o, &done), -EINVAL);
	assert_int_equal(done, 0);
}

/* A run's changes: the SENDs, and a WRITE refused by B's QP (its rkey is
 * wrong) counted as a failure with its status. Last: it leaves A's QP in ERR. */
static void test_run_counters(void **state)
{
	static struct rk_run_counters c; /* kilobytes */
	struct ibv_sge sa = rk_sge(F.mr_a, 0, SIZE);
	struct rk_wr wr = {.op = RK_OP_WRITE, .wr_id = 77, .sg = &sa, .nsge = 1,
			   .remote_addr = (uint64_t)(uintptr_t)F.mr_b->buf,
			   .rkey = F.mr_b->mr->rkey ^ 0x5a5a00, .flags = IBV_SEND_SIGNALED};
	const struct rk_run_counter *sent;
	struct ibv_wc wc;
	char text[512];

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(rk_run_counters_start(&c, F.dev, F.port), 0);
	send_some();
	assert_int_equal(rk_post(F.qp_a, &wr), 0);
	assert_int_equal(fx_wait(F.cq_a, &wc), 0);
	assert_string_equal(rk_wc_status_name(wc.status), "IBV_WC_REM_ACCESS_ERR");
	assert_int_equal(rk_wc_check(&wc, "WRITE with a wrong rkey"), -EACCES);
	rk_run_counters_stop(&c);
	assert_int_equal(c.error, 0);
	assert_int_equal(c.state, RK_RUN_COUNTERS_READ);
	assert_string_equal(c.device, F.dev->info.name);
	assert_true(c.n > 0);
	rk_run_counters_str(&c, text, sizeof(text));
	printf("# the run's changes: %s\n", text);
	sent = rk_run_counters_find(&c, "sent_pkts");
	if (!sent)
		sent = rk_run_counters_find(&c, "port_xmit_packets");
	assert_non_null(sent);
	assert_true(sent->delta >= NSENDS);
	assert_int_equal(c.nfailures, 1);
	assert_int_equal(c.failures[0].status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(c.failures[0].count, 1);
}

/* rk_port_refresh(): the port queried again, into *info_p and dev->ports;
 * a port the device lacks refused (-EINVAL, logged). */
static void test_port_refresh(void **state)
{
	struct rk_port_info pi;

	(void)state;
	memset(&pi, 0, sizeof(pi));
	assert_int_equal(rk_port_refresh(F.dev, F.port, &pi), 0);
	assert_int_equal(pi.port_num, F.port);
	assert_int_equal(pi.state, IBV_PORT_ACTIVE); /* the fixture's QPs are connected on it */
	assert_int_equal(F.dev->ports[F.port - 1].state, pi.state);
	assert_int_equal(F.dev->ports[F.port - 1].active_mtu, pi.active_mtu);
	assert_int_equal(rk_port_refresh(F.dev, F.port, NULL), 0);
	assert_int_equal(rk_port_refresh(F.dev, (uint8_t)(F.dev->info.phys_port_cnt + 1), &pi),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot_and_diff),
		cmocka_unit_test(test_watch),
		cmocka_unit_test(test_run_counters),
		cmocka_unit_test(test_port_refresh),
	};

	printf("# port counters against %s\n", fx_test_ip());
	return cmocka_run_group_tests_name("counters", tests, setup, teardown) ? 1 : 0;
}
