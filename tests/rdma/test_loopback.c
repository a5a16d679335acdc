/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The loopback engine (rk_loopback_run) on a real device: every step checked
 * for one and several rounds, several SGEs, event-driven completions, more
 * than the path MTU; the progress callback's order; and the ways it refuses:
 * bad options, no such device, no such GID, more SGEs than the device has.
 * On every failure the result must stay untouched. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

/* What the callback saw (no cmocka assertion inside the callback). */
struct seen {
	int opened, connected, steps;
	uint64_t rounds[RK_LOOPBACK_STEPS];
	int last_step_status;
	bool out_of_order;
	struct rk_loopback_result last;
};

static void count_event(const struct rk_loopback_result *r, enum rk_loopback_event ev,
			int step, void *arg)
{
	struct seen *s = arg;

	switch (ev) {
	case RK_LOOPBACK_OPENED:
		if (s->opened || s->connected || step != -1 || !r->device[0])
			s->out_of_order = true;
		s->opened++;
		break;
	case RK_LOOPBACK_CONNECTED:
		if (!s->opened || s->connected || !r->connected || step != -1)
			s->out_of_order = true;
		s->connected++;
		break;
	case RK_LOOPBACK_ROUND:
		if (!s->connected || step != s->steps || step < 0 || step >= RK_LOOPBACK_STEPS ||
		    r->steps[step].checked != s->rounds[step] + 1)
			s->out_of_order = true;
		else
			s->rounds[step]++;
		break;
	case RK_LOOPBACK_STEP:
		if (!s->connected || step != s->steps)
			s->out_of_order = true;
		s->steps++;
		s->last_step_status = step >= 0 && step < RK_LOOPBACK_STEPS ?
					      r->steps[step].status : -1;
		break;
	}
	s->last = *r;
}

static struct rk_loopback_opts opts_init(uint64_t size, uint64_t count, uint32_t sge,
					 bool events, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	return (struct rk_loopback_opts){
		.device = getenv("RDMAKIT_TEST_DEVICE"),
		.gid_index = -1,
		.size = size,
		.count = count,
		.sge = sge,
		.events = events,
		.on_event = count_event,
		.arg = s,
	};
}

/* A run that must succeed, with every field of the result checked. */
static void run_ok(uint64_t size, uint64_t count, uint32_t sge, bool events)
{
	struct seen s;
	struct rk_loopback_opts o = opts_init(size, count, sge, events, &s);
	struct rk_loopback_result r;
	static const char *const names[] = {"SEND", "WRITE", "READ"};

	memset(&r, 0xab, sizeof(r));
	printf("# loopback %llu bytes x %llu, %u SGEs, %s\n", (unsigned long long)size,
	       (unsigned long long)count, sge, events ? "events" : "polled");
	assert_int_equal(rk_loopback_run(&o, &r), 0);
	assert_true(r.device[0] != '\0');
	assert_int_equal(r.port_num, 1);
	assert_true(r.connected);
	assert_int_not_equal(r.qpn_a, r.qpn_b);
	assert_true(r.path_mtu >= 256 && r.path_mtu <= 4096);
	assert_int_equal(r.size, size);
	assert_int_equal(r.count, count);
	assert_int_equal(r.sge, sge);
	assert_int_equal(r.events, events);
	for (int i = 0; i < RK_LOOPBACK_STEPS; i++) {
		const struct rk_loopback_step *st = &r.steps[i];

		assert_int_equal(st->kind, i);
		assert_string_equal(st->name, names[i]);
		assert_int_equal(st->checked, count);
		assert_int_equal(st->status, 0);
		assert_int_equal(st->bad_offset, -1);
		assert_true(st->total_us > 0);
		assert_true(rk_loopback_step_avg_us(st) > 0);
		assert_int_equal(s.rounds[i], count);
	}
	assert_int_equal(r.steps[RK_LOOPBACK_SEND].byte_len, size);
	/* the callback: opened, connected, count rounds and the end of each step */
	assert_false(s.out_of_order);
	assert_int_equal(s.opened, 1);
	assert_int_equal(s.connected, 1);
	assert_int_equal(s.steps, RK_LOOPBACK_STEPS);
	assert_int_equal(s.last_step_status, 0);
	assert_int_equal(s.last.qpn_a, r.qpn_a);
	assert_int_equal(s.last.steps[RK_LOOPBACK_READ].checked, count);
}

static void test_one_round(void **state)
{
	(void)state;
	run_ok(4096, 1, 1, false);
}

static void test_rounds_sges_events(void **state)
{
	(void)state;
	run_ok(1, 3, 1, false);
	run_ok(4097, 2, 3, false); /* above any path MTU: several packets */
	run_ok(1 << 20, 2, 16, true);
}

/* Without a callback the engine runs the same. */
static void test_no_callback(void **state)
{
	struct seen s;
	struct rk_loopback_opts o = opts_init(64, 2, 0, false, &s); /* sge 0 means 1 */
	struct rk_loopback_result r;

	(void)state;
	o.on_event = NULL;
	o.arg = NULL;
	assert_int_equal(rk_loopback_run(&o, &r), 0);
	assert_int_equal(r.sge, 1);
	assert_int_equal(r.steps[RK_LOOPBACK_WRITE].checked, 2);
	assert_int_equal(s.opened, 0);
}

/* A refused run: the errno (0: any), the message, the result untouched and how far
 * the callback got (opened: the device was open when it was refused). */
static void run_refused(struct rk_loopback_opts *o, int want, const char *msg, int opened)
{
	struct seen *s = o->arg;
	struct rk_loopback_result r, untouched;
	int ret;

	memset(&r, 0x5a, sizeof(r));
	untouched = r;
	fx_capture_reset();
	ret = rk_loopback_run(o, &r);
	if (want)
		assert_int_equal(ret, want);
	else
		assert_true(ret < 0);
	assert_true(fx_capture_has(msg));
	assert_memory_equal(&r, &untouched, sizeof(r));
	assert_int_equal(s->opened, opened);
	assert_int_equal(s->connected, 0);
	assert_int_equal(s->steps, 0);
}

static void test_bad_options(void **state)
{
	struct seen s;
	struct rk_loopback_opts o;

	(void)state;
	o = opts_init(0, 1, 1, false, &s);
	run_refused(&o, -EINVAL, "size 0 is outside 1..1073741824 bytes", 0);
	o = opts_init(RK_LOOPBACK_MAX_SIZE + 1, 1, 1, false, &s);
	run_refused(&o, -EINVAL, "size 1073741825 is outside", 0);
	o = opts_init(64, 0, 1, false, &s);
	run_refused(&o, -EINVAL, "count 0 is outside 1..10000000", 0);
	o = opts_init(64, 1, RK_LOOPBACK_MAX_SGE + 1, false, &s);
	run_refused(&o, -EINVAL, "65 SGEs: at most 64", 0);
	o = opts_init(2, 1, 4, false, &s);
	run_refused(&o, -EINVAL, "no more than the 2 bytes", 0);
}

static void test_no_device_no_gid(void **state)
{
	struct seen s;
	struct rk_loopback_opts o;

	(void)state;
	o = opts_init(64, 1, 1, false, &s);
	o.device = "nosuchdev0";
	run_refused(&o, -ENODEV, "no RDMA device named 'nosuchdev0'", 0);
	o = opts_init(64, 1, 1, false, &s);
	o.gid_index = 200;
	run_refused(&o, 0, "no GID at index 200", 0);
	o = opts_init(64, 1, 1, false, &s);
	o.port_num = 2;
	run_refused(&o, 0, "no port 2", 0);
}

/* More SGEs than the device gathers: refused once the device is open. */
static void test_sge_above_device(void **state)
{
	struct rk_device *dev;
	struct seen s;
	struct rk_loopback_opts o;
	char msg[96];
	int max_sge;

	(void)state;
	assert_int_equal(rk_device_open(getenv("RDMAKIT_TEST_DEVICE"), &dev), 0);
	max_sge = dev->info.max_sge;
	rk_device_close(dev);
	if (max_sge >= RK_LOOPBACK_MAX_SGE) {
		printf("# the device gathers %d SGEs: none above it to try\n", max_sge);
		skip();
	}
	o = opts_init(4096, 1, (uint32_t)max_sge + 1, false, &s);
	snprintf(msg, sizeof(msg), "sge %d is above the device's limit of %d SGEs",
		 max_sge + 1, max_sge);
	run_refused(&o, -EINVAL, msg, 1);
	/* the device's own limit works */
	run_ok(4096, 1, (uint32_t)max_sge, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_round),
		cmocka_unit_test(test_rounds_sges_events),
		cmocka_unit_test(test_no_callback),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_no_device_no_gid),
		cmocka_unit_test(test_sge_above_device),
	};

	return fx_run("loopback engine tests", tests);
}
