/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The SRQ helper (srq.h) on the device: a QP that receives from an SRQ,
 * SENDs from the fixture's QP A landing in the SRQ's slots byte for byte,
 * the limit event taken from the device's async event queue and counted on
 * the SRQ, a refill in lists that arms the limit again, bad options refused,
 * and XRC refused by name (rxe has none). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

#define SLOT 256

static struct fx F;

/* The fixture (its failures are logged by the library), and after it. */
static int setup(void **state)
{
	return fx_open(&F, 0, 1, false);
}

static int teardown(void **state)
{
	fx_close(&F);
	return 0;
}

static void bad_options(void **state)
{
	struct rk_srq *s = NULL;

	assert_int_equal(rk_srq_create(F.pd, F.dev, &(struct rk_srq_opts){.depth = 8, .limit = 8,
				       .slot_size = SLOT}, &s), -EINVAL);
	assert_true(strstr(F.last_log, "--srq-limit 8: the limit must be below the SRQ's depth 8"));
	assert_int_equal(rk_srq_create(F.pd, F.dev, &(struct rk_srq_opts){.depth = 8}, &s),
			 -EINVAL);
	assert_int_equal(rk_srq_create(F.pd, F.dev, &(struct rk_srq_opts){.depth = 128, .batch = 65,
				       .slot_size = SLOT}, &s), -EINVAL);
	assert_null(s);
}

/* A QP on F's PD receiving from srq, connected to F's QP A. */
static struct rk_qp *srq_qp(struct rk_srq *srq)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC, .port_num = F.port,
				     .gid = F.has_gid ? &F.gid : NULL, .srq = rk_srq_verbs(srq)};
	struct rk_endpoint ea, er;
	struct rk_qp *qp;

	assert_int_equal(rk_qp_create(F.pd, F.dev, F.cq_b, F.cq_b, &qa, &qp), 0);
	rk_qp_local_endpoint(F.qp_a, &ea);
	rk_qp_local_endpoint(qp, &er);
	assert_int_equal(rk_qp_connect(F.qp_a, 0, &er, NULL), 0);
	assert_int_equal(rk_qp_connect(qp, 0, &ea, NULL), 0);
	return qp;
}

static void send_from_a(uint32_t i)
{
	uint8_t *p = (uint8_t *)F.mr_a->buf + (size_t)i * SLOT;
	struct ibv_sge sg = rk_sge(F.mr_a, (size_t)i * SLOT, SLOT);
	struct rk_wr wr = {.op = RK_OP_SEND, .wr_id = 100 + i, .sg = &sg, .nsge = 1,
			   .flags = IBV_SEND_SIGNALED};
	struct ibv_wc wc;

	rk_pattern_fill(p, SLOT, 0x5a000000u + i);
	assert_int_equal(rk_post(F.qp_a, &wr), 0);
	assert_int_equal(fx_wait(F.cq_a, &wc), 0);
	assert_string_equal(rk_wc_status_name(wc.status), "IBV_WC_SUCCESS");
}

static void limit_event(uint32_t limit)
{
	struct rk_async_event ev;

	/* The device raised it when fewer than limit receives were left. */
	assert_int_equal(rk_async_event_wait(F.dev, FX_WAIT_MS, &ev), 0);
	assert_string_equal(rk_async_event_name(ev.type), "IBV_EVENT_SRQ_LIMIT_REACHED");
	assert_true(ev.has_srq);
	assert_int_equal(ev.srq_limit, limit);
}

static void shared_receives(void **state)
{
	struct rk_srq_opts o = {.depth = 8, .limit = 4, .batch = 4, .slot_size = SLOT,
				.wr_id_base = 1000};
	struct rk_srq_stats st;
	struct rk_srq *srq;
	struct rk_qp *qp;
	struct ibv_wc wc;

	assert_int_equal(rk_srq_create(F.pd, F.dev, &o, &srq), 0);
	assert_int_equal(rk_srq_fill(srq), 0);
	assert_int_equal(rk_srq_posted(srq), 8);
	qp = srq_qp(srq);
	/* 5 SENDs take 5 of the 8: 3 left, below the limit of 4 */
	for (uint32_t i = 0; i < 5; i++) {
		const void *data;

		send_from_a(i);
		assert_int_equal(fx_wait(F.cq_b, &wc), 0);
		assert_string_equal(rk_wc_status_name(wc.status), "IBV_WC_SUCCESS");
		assert_int_equal(wc.qp_num, qp->qp->qp_num);
		assert_true(wc.wr_id >= 1000 && wc.wr_id < 1008);
		assert_int_equal(wc.byte_len, SLOT);
		assert_int_equal(rk_srq_take(srq, &wc, &data), 0);
		assert_int_equal(rk_pattern_check(data, SLOT, 0x5a000000u + i), -1);
		rk_srq_release(srq, &wc);
	}
	limit_event(4);
	rk_srq_get_stats(srq, &st);
	assert_int_equal(st.limit_events, 1);
	assert_int_equal(st.posted_at_limit, 8);
	assert_int_equal(st.completed, 5);
	assert_int_equal(st.low, 3);
	assert_int_equal(st.armed, 1);
	/* a refill posts one list of 4 (5 free; the fifth waits for a full
	 * list) and, above the limit again, arms it again */
	assert_int_equal(rk_srq_refill(srq), 0);
	assert_int_equal(rk_srq_posted(srq), 7);
	rk_srq_get_stats(srq, &st);
	assert_int_equal(st.posted, 12);
	assert_int_equal(st.refills, 1);
	assert_int_equal(st.armed, 2);
	/* a completion that is not one of its slots is refused */
	wc.wr_id = 7;
	assert_int_equal(rk_srq_take(srq, &wc, &(const void *){NULL}), -EPROTO);
	rk_qp_destroy(qp);
	rk_srq_destroy(srq);
}

static void xrc_refused(void **state)
{
	char why[160], want[160];

	if (F.dev->info.device_cap_flags & IBV_DEVICE_XRC) {
		assert_int_equal(rk_srq_xrc_check(F.dev, why, sizeof(why)), 0);
		return;
	}
	assert_int_equal(rk_srq_xrc_check(F.dev, why, sizeof(why)), -EOPNOTSUPP);
	snprintf(want, sizeof(want), "%s has no XRC (IBV_DEVICE_XRC not in its capabilities)",
		 F.dev->info.name);
	assert_string_equal(why, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_options),
		cmocka_unit_test(shared_receives),
		cmocka_unit_test(xrc_refused),
	};

	return cmocka_run_group_tests_name("srq", tests, setup, teardown) ? 1 : 0;
}
