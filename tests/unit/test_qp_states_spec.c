/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The QP-state walk's report held against the IB spec (qp_states.h,
 * rk_qps_differences(), rk_qps_spec_accepts()), on a report made by hand:
 * each kind of difference is found and said, what follows the spec is not,
 * and only max are kept while all are counted. Pure logic. */
#include <errno.h>
#include <string.h>

#include <rdmakit/qp_states.h>

#include "unit.h"

static void test_spec_accepts(void **state)
{
	static const struct {
		enum ibv_qp_state s;
		bool recv, send;
	} v[] = {
		{IBV_QPS_RESET, false, false}, {IBV_QPS_INIT, true, false},
		{IBV_QPS_RTR, true, false},    {IBV_QPS_RTS, true, true},
		{IBV_QPS_SQD, true, true},     {IBV_QPS_ERR, true, true},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		assert_int_equal(rk_qps_spec_accepts(v[i].s, false), v[i].recv);
		assert_int_equal(rk_qps_spec_accepts(v[i].s, true), v[i].send);
	}
}

/* Row i of rep in state s, with a receive and a send posted there that
 * returned recv_ret and send_ret. */
static void row(struct rk_qps_report *rep, enum ibv_qp_state s, const char *label, int recv_ret,
		int send_ret)
{
	struct rk_qps_row *r = &rep->rows[rep->nrows];
	int rows = rep->nrows++;

	*r = (struct rk_qps_row){.state = s, .label = label, .recv_wr = rep->nwrs,
				 .send_wr = rep->nwrs + 1, .incoming_wr = -1, .kick_wr = -1};
	rep->wrs[rep->nwrs++] = (struct rk_qps_wr){.row = rows, .what = "recv", .raw = true,
						   .post_ret = recv_ret, .delivered_into = -1};
	rep->wrs[rep->nwrs++] = (struct rk_qps_wr){.row = rows, .is_send = true, .what = "send",
						   .raw = true, .post_ret = send_ret,
						   .delivered_into = -1};
}

static void test_differences(void **state)
{
	static struct rk_qps_report rep;
	struct rk_qps_diff d[10];
	static const char *const want[] = {
		"RESET: the raw post of a send was accepted (the spec: an immediate error)",
		"RTR: the refused send ran anyway later",
		"ERR: the recv posted in ERR was never completed (the spec: flushed)",
		("SQD: the send posted in SQD did not start when the QP returned to RTS; it ran "
		 "only after the next post"),
		("RTS: 1 request completed WR_FLUSH_ERR while the QP was in RTS (the walk had not "
		 "moved it to ERR)"),
		("RTS -> RTR was accepted, yet a send posted after it ran and was received: the QP "
		 "stayed in RTS"),
		"SQD -> RTS was accepted, yet a send posted after it did not run: the QP is not in RTS",
		"UD send-queue error: the QP went to ERR, not SQE",
	};
	static const char *const want_sqd[] = {
		"SQD: no IBV_EVENT_SQ_DRAINED came",
		"SQD: SQD -> RTS was refused (EINVAL)",
	};
	int n;

	(void)state;
	memset(&rep, 0, sizeof(rep));
	row(&rep, IBV_QPS_RESET, "RESET", -EINVAL, 0); /* the send: accepted, against it */
	row(&rep, IBV_QPS_INIT, "INIT", 0, -EINVAL);   /* as the spec says */
	row(&rep, IBV_QPS_RTR, "RTR", 0, -EINVAL);
	rep.wrs[5].delivered = true;		       /* ... but the refused send ran */
	row(&rep, IBV_QPS_RTS, "RTS", 0, 0);
	rep.wrs[6].completed = rep.wrs[7].completed = true;
	rep.wrs[7].status = IBV_WC_WR_FLUSH_ERR;	       /* flushed, the QP not in ERR */
	rep.wrs[7].completed_row = 3;
	rep.wrs[7].completed_in = IBV_QPS_RTS;
	row(&rep, IBV_QPS_SQD, "SQD", 0, 0);
	rep.wrs[8].completed = rep.wrs[9].completed = true;
	rep.rows[4].kick_wr = 9;
	rep.rows[4].drained_event = true;
	row(&rep, IBV_QPS_ERR, "ERR", 0, 0);
	rep.wrs[11].completed = true;		       /* the recv never flushed */
	rep.sqe[0] = (struct rk_qps_sqe){.transport = RK_UD, .completed = true,
					 .state_after = IBV_QPS_ERR};
	rep.sqe[1] = (struct rk_qps_sqe){.transport = RK_UC, .completed = true,
					 .state_after = IBV_QPS_SQE};
	rep.nsqe = 2;
	/* iWARP's probes: a forbidden transition accepted, the QP still sending;
	 * an allowed one accepted, the QP no longer sending. */
	rep.transitions[0] = (struct rk_qps_transition){
		.from = IBV_QPS_RTS, .to = IBV_QPS_RTR, .probed = true, .probe_completed = true,
		.probe_status = IBV_WC_SUCCESS, .probe_received = true};
	rep.transitions[1] = (struct rk_qps_transition){
		.from = IBV_QPS_SQD, .to = IBV_QPS_RTS, .spec_allows = true, .probed = true,
		.probe_post_ret = -ENOTCONN};
	rep.ntransitions = 2;

	n = rk_qps_differences(&rep, d, (int)ARRAY_SIZE(d));
	assert_int_equal(n, ARRAY_SIZE(want));
	for (int i = 0; i < n; i++)
		assert_contains(d[i].text, want[i]);
	assert_int_equal(d[0].row, 0);
	assert_int_equal(d[3].row, 4);
	assert_int_equal(d[4].row, 3);
	assert_int_equal(d[5].row, -1);
	assert_int_equal(d[7].row, -1);

	/* Only max kept, all counted; none at all when the device follows the spec. */
	memset(d, 0, sizeof(d));
	assert_int_equal(rk_qps_differences(&rep, d, 2), ARRAY_SIZE(want));
	assert_contains(d[1].text, want[1]);
	assert_int_equal(d[2].text[0], '\0');
	rep.wrs[1].post_ret = -EINVAL;
	rep.wrs[5].delivered = false;
	rep.wrs[10].completed = true;
	rep.rows[4].kick_wr = -1;
	rep.nsqe = 1;
	rep.sqe[0].state_after = IBV_QPS_SQE;
	rep.wrs[7].status = IBV_WC_SUCCESS;
	rep.transitions[0].ret = -EINVAL;
	rep.transitions[1].probe_post_ret = 0;
	rep.transitions[1].probe_completed = true;
	assert_int_equal(rk_qps_differences(&rep, d, (int)ARRAY_SIZE(d)), 0);

	/* SQD without its event, and the return to RTS refused. */
	rep.rows[4].drained_event = false;
	rep.rows[4].resume_ret = -EINVAL;
	n = rk_qps_differences(&rep, d, (int)ARRAY_SIZE(d));
	assert_int_equal(n, ARRAY_SIZE(want_sqd));
	for (int i = 0; i < n; i++)
		assert_contains(d[i].text, want_sqd[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_accepts),
		cmocka_unit_test(test_differences),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
