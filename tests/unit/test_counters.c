/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Port counters and link rates, the pure parts: parsing a counter file's text,
 * reading a port directory laid out as sysfs lays it out (a temporary copy, so
 * unreadable entries and junk values can be placed), deltas between snapshots,
 * citing the counters that explain a failed completion, and decoding
 * active_speed/active_width. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdmakit/counters.h>
#include <rdmakit/device.h>
#include <rdmakit/status.h>

#include "unit.h"

static void test_parse(void **state)
{
	static const char *const bad[] = {"", "N/A\n", "-1\n", "+1", " 12", "12abc", "0x10",
					  "1 2\n"};
	uint64_t v = 77;

	assert_int_equal(rk_counter_parse("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(rk_counter_parse("12345\n", &v), 0);
	assert_int_equal(v, 12345);
	assert_int_equal(rk_counter_parse("18446744073709551615\n", &v), 0);
	assert_true(v == UINT64_MAX);
	v = 77;
	assert_int_equal(rk_counter_parse("18446744073709551616\n", &v), -ERANGE);
	assert_int_equal(v, 77);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (rk_counter_parse(bad[i], &v) != -EINVAL)
			fail_msg("'%s' parsed as a number", bad[i]);
		assert_int_equal(v, 77);
	}
	assert_int_equal(rk_counter_parse(NULL, &v), -EINVAL);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void sub(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
	assert_int_equal(mkdir(out, 0700), 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void test_read_dir(void **state)
{
	char root[] = "/tmp/rk_counters_XXXXXX", port[512], empty[512], pc[600], hw[600],
	     junk[700];
	struct rk_counters *s;
	uint64_t v;

	assert_non_null(mkdtemp(root));
	sub(port, sizeof(port), root, "port1");
	sub(empty, sizeof(empty), root, "port2");
	sub(pc, sizeof(pc), port, "counters");
	sub(hw, sizeof(hw), port, "hw_counters");
	put(pc, "port_xmit_data", "1000\n");
	put(hw, "rdma_sends", "5\n");
	put(hw, "rdma_recvs", "7\n");
	put(hw, "lifespan", "10\n"); /* a setting, not a counter */
	put(hw, "not_a_number", "N/A\n");
	sub(junk, sizeof(junk), hw, "a_directory"); /* opens, but read() fails */

	assert_int_equal(rk_counters_read_dir(port, "dev0", 1, &s), 0);
	assert_string_equal(s->device, "dev0");
	assert_int_equal(s->port, 1);
	assert_int_equal(s->groups, (1u << RK_COUNTERS_PORT) | (1u << RK_COUNTERS_HW));
	assert_int_equal(s->n, 3);
	assert_int_equal(s->skipped, 2);
	/* Sorted by group, then name. */
	assert_string_equal(s->v[0].name, "port_xmit_data");
	assert_int_equal(s->v[0].group, RK_COUNTERS_PORT);
	assert_string_equal(s->v[1].name, "rdma_recvs");
	assert_string_equal(s->v[2].name, "rdma_sends");
	assert_int_equal(rk_counters_get(s, RK_COUNTERS_HW, "rdma_sends", &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(rk_counters_get(s, RK_COUNTERS_PORT, "rdma_sends", &v), -ENOENT);
	assert_int_equal(rk_counters_get(s, RK_COUNTERS_HW, "lifespan", &v), -ENOENT);
	assert_int_equal(s->lifespan_ms, 10);
	rk_counters_free(s);

	/* A port with neither group: an empty snapshot, not an error. */
	assert_int_equal(rk_counters_read_dir(empty, "dev0", 2, &s), 0);
	assert_int_equal(s->groups, 0);
	assert_int_equal(s->n, 0);
	assert_int_equal(s->skipped, 0);
	assert_int_equal(s->lifespan_ms, 0);
	rk_counters_free(s);

	assert_int_equal(nftw(root, remove_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
	assert_int_equal(rk_counters_read_dir(root, "dev0", 1, &s), -ENOENT);
}

#define C(n, g, v) {.name = n, .group = g, .value = v}

static void test_diff(void **state)
{
	struct rk_counter b[] = {
		C("link_downed", RK_COUNTERS_PORT, 3),
		C("rdma_sends", RK_COUNTERS_HW, 10),
		C("send_err", RK_COUNTERS_HW, 9),
	};
	struct rk_counter a[] = {
		C("link_downed", RK_COUNTERS_PORT, 3),
		C("rdma_recvs", RK_COUNTERS_HW, 4), /* new */
		C("rdma_sends", RK_COUNTERS_HW, 25),
		C("send_err", RK_COUNTERS_HW, 2), /* went back: reset */
	};
	struct rk_counters before = {.taken_ns = 1000, .n = 3, .v = b};
	struct rk_counters after = {.taken_ns = 2001000, .n = 4, .v = a};
	struct rk_counters_delta *d;
	const struct rk_counter_delta *c;

	assert_int_equal(rk_counters_diff(&before, &after, false, &d), 0);
	assert_int_equal(d->n, 4);
	assert_true(d->interval_ns == 2000000);
	assert_int_equal(d->v[0].delta, 0);
	c = rk_counters_delta_find(d, "rdma_recvs");
	assert_non_null(c);
	assert_true(c->is_new);
	assert_int_equal(c->before, 0);
	assert_int_equal(c->delta, 4);
	c = rk_counters_delta_find(d, "rdma_sends");
	assert_non_null(c);
	assert_false(c->is_new);
	assert_int_equal(c->before, 10);
	assert_int_equal(c->after, 25);
	assert_int_equal(c->delta, 15);
	c = rk_counters_delta_find(d, "send_err");
	assert_non_null(c);
	assert_int_equal(c->delta, -7);
	assert_null(rk_counters_delta_find(d, "no_such"));
	rk_counters_delta_free(d);

	assert_int_equal(rk_counters_diff(&before, &after, true, &d), 0);
	assert_int_equal(d->n, 3);
	assert_string_equal(d->v[0].name, "rdma_recvs");
	assert_string_equal(d->v[1].name, "rdma_sends");
	assert_string_equal(d->v[2].name, "send_err");
	rk_counters_delta_free(d);

	/* Two readings of a port without counters. */
	before.n = after.n = 0;
	assert_int_equal(rk_counters_diff(&before, &after, true, &d), 0);
	assert_int_equal(d->n, 0);
	rk_counters_delta_free(d);
}

static void test_cite(void **state)
{
	struct rk_counter_delta v[] = {
		{.name = "rdma_sends", .group = RK_COUNTERS_HW, .delta = 10},
		{.name = "retry_exceeded_err", .group = RK_COUNTERS_HW, .delta = 1},
		{.name = "completer_retry_err", .group = RK_COUNTERS_HW, .delta = 0},
		{.name = "send_err", .group = RK_COUNTERS_HW, .delta = 7},
		{.name = "rcvd_rnr_err", .group = RK_COUNTERS_HW, .delta = 3},
	};
	struct rk_counters_delta d = {.n = (int)ARRAY_SIZE(v), .v = v};
	char buf[128], tiny[8];

	assert_int_equal(rk_counters_cite(&d, IBV_WC_RETRY_EXC_ERR, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "retry_exceeded_err +1, send_err +7");
	assert_int_equal(rk_counters_cite(&d, IBV_WC_RNR_RETRY_EXC_ERR, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "rcvd_rnr_err +3");
	assert_int_equal(rk_counters_cite(&d, IBV_WC_SUCCESS, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(rk_counters_cite(&d, IBV_WC_REM_ACCESS_ERR, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* A short buffer is cut, never overrun. */
	assert_int_equal(rk_counters_cite(&d, IBV_WC_RETRY_EXC_ERR, tiny, sizeof(tiny)), 2);
	assert_string_equal(tiny, "retry_e");
}

/* A run's changes: only those that moved, by value, sorted as the snapshot. */
static void test_run_fill(void **state)
{
	struct rk_counter b[] = {
		C("link_downed", RK_COUNTERS_PORT, 3),
		C("rdma_sends", RK_COUNTERS_HW, 10),
		C("retry_exceeded_err", RK_COUNTERS_HW, 4),
		C("send_err", RK_COUNTERS_HW, 9),
	};
	struct rk_counter a[] = {
		C("link_downed", RK_COUNTERS_PORT, 3),
		C("rdma_recvs", RK_COUNTERS_HW, 20), /* new: from 0 */
		C("rdma_sends", RK_COUNTERS_HW, 30),
		C("retry_exceeded_err", RK_COUNTERS_HW, 5),
		C("send_err", RK_COUNTERS_HW, 2), /* went back: reset */
	};
	struct rk_counters before = {.taken_ns = 1000, .groups = 3, .n = 4, .v = b};
	struct rk_counters after = {.taken_ns = 500001000, .groups = 3, .n = 5, .v = a};
	struct rk_run_counters c = {0};
	const struct rk_run_counter *r;
	char buf[256], tiny[20];

	rk_run_counters_fill(&c, &before, &after);
	assert_int_equal(c.state, RK_RUN_COUNTERS_READ);
	assert_true(c.interval_ns == 500000000);
	assert_int_equal(c.n, 4);
	assert_int_equal(c.left_out, 0);
	assert_string_equal(c.v[0].name, "rdma_recvs");
	assert_int_equal(c.v[0].group, RK_COUNTERS_HW);
	assert_int_equal(c.v[0].delta, 20);
	r = rk_run_counters_find(&c, "rdma_sends");
	assert_non_null(r);
	assert_int_equal(r->delta, 20);
	r = rk_run_counters_find(&c, "send_err");
	assert_non_null(r);
	assert_int_equal(r->delta, -7);
	assert_null(rk_run_counters_find(&c, "link_downed")); /* did not move */

	assert_int_equal(rk_run_counters_str(&c, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "rdma_recvs +20, rdma_sends +20, retry_exceeded_err +1, "
				 "send_err -7");
	/* Cut, never overrun; the count says how many fit whole. */
	assert_int_equal(rk_run_counters_str(&c, tiny, sizeof(tiny)), 1);
	assert_string_equal(tiny, "rdma_recvs +20, rdm");
	assert_int_equal(rk_run_counters_str(&c, tiny, 0), 0);

	/* The hint's citation: the counters of that status that moved. */
	assert_int_equal(rk_run_counters_cite(&c, IBV_WC_RETRY_EXC_ERR, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "retry_exceeded_err +1, send_err -7");
	assert_int_equal(rk_run_counters_cite(&c, IBV_WC_RNR_RETRY_EXC_ERR, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");

	/* No change at all, then a port without counters. */
	rk_run_counters_fill(&c, &before, &before);
	assert_int_equal(c.state, RK_RUN_COUNTERS_READ);
	assert_int_equal(c.n, 0);
	assert_int_equal(rk_run_counters_str(&c, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	before.groups = after.groups = 0;
	before.n = after.n = 0;
	rk_run_counters_fill(&c, &before, &after);
	assert_int_equal(c.state, RK_RUN_COUNTERS_NONE);
	assert_int_equal(c.n, 0);
}

/* More changes than a run keeps: counted, not lost silently. */
static void test_run_left_out(void **state)
{
	enum { N = RK_RUN_COUNTERS_MAX + 5 };
	struct rk_counter b[N], a[N];
	struct rk_counters before = {.groups = 2, .n = N, .v = b};
	struct rk_counters after = {.groups = 2, .n = N, .v = a};
	struct rk_run_counters c = {0};

	for (int i = 0; i < N; i++) {
		snprintf(b[i].name, sizeof(b[i].name), "c%03d", i);
		snprintf(a[i].name, sizeof(a[i].name), "c%03d", i);
		b[i].group = a[i].group = RK_COUNTERS_HW;
		b[i].value = 100;
		a[i].value = 100 + (uint64_t)i + 1;
	}
	rk_run_counters_fill(&c, &before, &after);
	assert_int_equal(c.n, RK_RUN_COUNTERS_MAX);
	assert_int_equal(c.left_out, 5);
	assert_string_equal(c.v[RK_RUN_COUNTERS_MAX - 1].name, "c063");
	assert_int_equal(c.v[RK_RUN_COUNTERS_MAX - 1].delta, RK_RUN_COUNTERS_MAX);
}

/* Failed completions are counted per status as rk_wc_check() logs them;
 * a device whose port has no sysfs directory leaves the run's counters
 * unread with the error, and stop does nothing. */
static void test_run_unread(void **state)
{
	struct ibv_wc wc = {.status = IBV_WC_RETRY_EXC_ERR, .qp_num = 0x11};
	struct rk_device dev = {0};
	struct rk_run_counters c = {0};
	uint32_t n0 = rk_wc_failures(IBV_WC_RETRY_EXC_ERR);
	uint32_t r0 = rk_wc_failures(IBV_WC_RNR_RETRY_EXC_ERR);

	assert_int_equal(rk_wc_check(&wc, "test"), -ETIMEDOUT);
	assert_int_equal(rk_wc_check(&wc, "test"), -ETIMEDOUT);
	assert_int_equal(rk_wc_failures(IBV_WC_RETRY_EXC_ERR), n0 + 2);
	assert_int_equal(rk_wc_failures(IBV_WC_RNR_RETRY_EXC_ERR), r0);
	wc.status = IBV_WC_SUCCESS;
	assert_int_equal(rk_wc_check(&wc, "test"), 0);
	assert_int_equal(rk_wc_failures(IBV_WC_SUCCESS), 0);
	assert_int_equal(rk_wc_failures((enum ibv_wc_status)999), 0);

	snprintf(dev.info.name, sizeof(dev.info.name), "rk_no_such_dev9");
	assert_int_equal(rk_run_counters_start(&c, &dev, 1), -ENOENT);
	assert_int_equal(c.state, RK_RUN_COUNTERS_UNREAD);
	assert_int_equal(c.error, -ENOENT);
	assert_string_equal(c.device, "rk_no_such_dev9");
	rk_run_counters_stop(&c);
	assert_int_equal(c.state, RK_RUN_COUNTERS_UNREAD);
	assert_int_equal(c.nfailures, 0);
}

static bool listed(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

static void test_status_counters(void **state)
{
	static const char *const rnr[] = {"rcvd_rnr_err", "send_rnr_err",
					  "retry_rnr_exceeded_err", "rnr_nak_retry_err"};
	const char *const *l;

	for (size_t i = 0; i < ARRAY_SIZE(rnr); i++)
		if (!listed(rk_wc_status_counters(IBV_WC_RNR_RETRY_EXC_ERR), rnr[i]))
			fail_msg("RNR_RETRY_EXC_ERR does not cite %s", rnr[i]);
	l = rk_wc_status_counters(IBV_WC_RETRY_EXC_ERR);
	assert_true(listed(l, "retry_exceeded_err"));
	assert_true(listed(l, "local_ack_timeout_err"));
	l = rk_wc_status_counters(IBV_WC_REM_ACCESS_ERR);
	assert_true(listed(l, "req_remote_access_errors"));
	assert_true(listed(l, "resp_remote_access_errors"));
	/* Never NULL: empty where nothing is known, and past the table's end. */
	assert_non_null(rk_wc_status_counters(IBV_WC_SUCCESS));
	assert_null(rk_wc_status_counters(IBV_WC_SUCCESS)[0]);
	assert_null(rk_wc_status_counters((enum ibv_wc_status)999)[0]);
}

/* A run that worked: the troubles it moved, rises only, each described. */
static void test_run_troubles(void **state)
{
	struct rk_counter b[] = {
		C("completer_retry_err", RK_COUNTERS_HW, 5),
		C("duplicate_request", RK_COUNTERS_HW, 100),
		C("out_of_seq_request", RK_COUNTERS_HW, 9),
	};
	struct rk_counter a[ARRAY_SIZE(b) + 1];
	struct rk_counters before = {.groups = 2, .n = 3, .v = b};
	struct rk_counters after = {.taken_ns = 1000, .groups = 2, .n = 4, .v = a};
	struct rk_run_counters c = {0};
	static const struct {
		enum rk_trouble t;
		int n;
		const char *text;
	} want[] = {
		{RK_TROUBLE_RETRANSMIT, 2, "completer_retry_err +10, duplicate_request +360"},
		{RK_TROUBLE_RNR, 0, ""},      /* none of its counters moved */
		{RK_TROUBLE_SEQUENCE, 0, ""}, /* out_of_seq_request went down */
		{RK_TROUBLE_NOT_SENT, 1, "send_err +4"},
		{RK_TROUBLE_CONGESTION, 0, ""},
		{RK_TROUBLE_COUNT, 0, ""}, /* none such */
	};
	struct rk_counter_delta view_v[RK_RUN_COUNTERS_MAX];
	struct rk_counters_delta view, *watch;
	const struct rk_trouble_desc *d;
	char buf[128];

	(void)state;
	memcpy(a, b, sizeof(b));
	a[0].value += 10;
	a[1].value += 360;
	a[2].value = 1; /* went back: reset */
	a[3] = (struct rk_counter)C("send_err", RK_COUNTERS_HW, 4); /* new: from 0 */
	rk_run_counters_fill(&c, &before, &after);
	rk_run_counters_delta(&c, view_v, &view);
	assert_int_equal(view.n, c.n);
	/* The same from a run's changes, their view, and a watch's interval. */
	assert_int_equal(rk_counters_diff(&before, &after, true, &watch), 0);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct rk_counters_delta *deltas[] = {&view, watch};
		int n = rk_run_counters_trouble(&c, want[i].t, buf, sizeof(buf));

		if (n != want[i].n || strcmp(buf, want[i].text))
			fail_msg("trouble %d: %d cited, \"%s\"; want %d, \"%s\"", want[i].t, n, buf,
				 want[i].n, want[i].text);
		for (size_t k = 0; k < ARRAY_SIZE(deltas); k++) {
			n = rk_counters_trouble(deltas[k], want[i].t, buf, sizeof(buf));
			if (n != want[i].n || strcmp(buf, want[i].text))
				fail_msg("trouble %d, delta %zu: %d cited, \"%s\"; want %d, \"%s\"",
					 want[i].t, k, n, buf, want[i].n, want[i].text);
		}
	}
	rk_counters_delta_free(watch);
	/* A failure's citation still shows a counter that went down. */
	assert_int_equal(rk_run_counters_cite(&c, IBV_WC_RETRY_EXC_ERR, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "completer_retry_err +10, send_err +4");

	for (int t = 0; t < RK_TROUBLE_COUNT; t++) {
		d = rk_trouble_desc(t);
		if (!d || !d->name || !d->hint || !d->hint[0] || !d->counters[0])
			fail_msg("trouble %d is not fully described", t);
	}
	assert_true(listed(rk_trouble_desc(RK_TROUBLE_RETRANSMIT)->counters,
			   "local_ack_timeout_err"));
	assert_true(listed(rk_trouble_desc(RK_TROUBLE_RNR)->counters, "rnr_nak_retry_err"));
	assert_string_equal(rk_trouble_desc(RK_TROUBLE_RNR)->name, "RNR NAKs");
	assert_null(rk_trouble_desc(RK_TROUBLE_COUNT));
}

static void test_speed_width(void **state)
{
	static const struct {
		uint32_t speed;
		const char *name;
		double gbps;
	} s[] = {
		{1, "SDR", 2.5},   {2, "DDR", 5},	  {4, "QDR", 10},   {8, "FDR10", 10},
		{16, "FDR", 14},   {32, "EDR", 25},	  {64, "HDR", 50},  {128, "NDR", 100},
		{256, "XDR", 200}, {0, "unknown", 0}, {3, "unknown", 0}, {512, "unknown", 0},
	};
	static const int w[][2] = {{1, 1}, {2, 4}, {4, 8}, {8, 12}, {16, 2}, {0, 0}, {3, 0}, {32, 0}};
	const char *name;

	for (size_t i = 0; i < ARRAY_SIZE(s); i++) {
		double g = rk_speed_lane_gbps(s[i].speed, &name);

		if (g != s[i].gbps || strcmp(name, s[i].name))
			fail_msg("speed %u: %s %.1f Gb/s, expected %s %.1f", s[i].speed, name, g,
				 s[i].name, s[i].gbps);
	}
	assert_true(rk_speed_lane_gbps(32, NULL) == 25);
	for (size_t i = 0; i < ARRAY_SIZE(w); i++)
		assert_int_equal(rk_width_lanes((uint8_t)w[i][0]), w[i][1]);
}

/* The grading only: a device record filled in by hand, no verbs call made. */
static void test_link_rate(void **state)
{
	struct rk_port_info port = {.port_num = 1, .state = IBV_PORT_ACTIVE,
				    .active_speed_ex = 32, .active_width = 2};
	struct rk_device dev = {.ports = &port};
	struct rk_link_rate r;

	dev.info.phys_port_cnt = 1;
	dev.info.vendor_id = 0x02c9;
	assert_int_equal(rk_port_link_rate(&dev, 1, &r), 0);
	assert_true(r.gbps == 100);
	assert_int_equal(r.lanes, 4);
	assert_string_equal(r.speed_name, "EDR");
	assert_true(r.meaningful);
	assert_string_equal(r.note, "");

	dev.info.vendor_id = 0xffffff; /* rxe */
	assert_int_equal(rk_port_link_rate(&dev, 1, &r), 0);
	assert_true(r.gbps == 100);
	assert_false(r.meaningful);
	assert_contains(r.note, "emulated device (Soft-RoCE)");

	dev.info.vendor_id = 0x02c9;
	port.state = IBV_PORT_DOWN;
	assert_int_equal(rk_port_link_rate(&dev, 1, &r), 0);
	assert_false(r.meaningful);
	assert_contains(r.note, "not ACTIVE");

	port.state = IBV_PORT_ACTIVE;
	port.active_width = 3;
	assert_int_equal(rk_port_link_rate(&dev, 1, &r), 0);
	assert_false(r.meaningful);
	assert_true(r.gbps == 0);
	assert_contains(r.note, "does not know");

	assert_int_equal(rk_port_link_rate(&dev, 2, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_read_dir),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_cite),
		cmocka_unit_test(test_run_fill),
		cmocka_unit_test(test_run_left_out),
		cmocka_unit_test(test_run_unread),
		cmocka_unit_test(test_status_counters),
		cmocka_unit_test(test_run_troubles),
		cmocka_unit_test(test_speed_width),
		cmocka_unit_test(test_link_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
