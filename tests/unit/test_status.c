/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Names and hints for completion statuses, events and opcodes; errno helpers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/status.h>

#include "unit.h"

struct named {
	int value;
	const char *name;
};

#define N(e)                                                                                       \
	{                                                                                          \
		e, #e                                                                              \
	}

static const struct named wc_statuses[] = {
	N(IBV_WC_SUCCESS),
	N(IBV_WC_LOC_LEN_ERR),
	N(IBV_WC_LOC_QP_OP_ERR),
	N(IBV_WC_LOC_EEC_OP_ERR),
	N(IBV_WC_LOC_PROT_ERR),
	N(IBV_WC_WR_FLUSH_ERR),
	N(IBV_WC_MW_BIND_ERR),
	N(IBV_WC_BAD_RESP_ERR),
	N(IBV_WC_LOC_ACCESS_ERR),
	N(IBV_WC_REM_INV_REQ_ERR),
	N(IBV_WC_REM_ACCESS_ERR),
	N(IBV_WC_REM_OP_ERR),
	N(IBV_WC_RETRY_EXC_ERR),
	N(IBV_WC_RNR_RETRY_EXC_ERR),
	N(IBV_WC_LOC_RDD_VIOL_ERR),
	N(IBV_WC_REM_INV_RD_REQ_ERR),
	N(IBV_WC_REM_ABORT_ERR),
	N(IBV_WC_INV_EECN_ERR),
	N(IBV_WC_INV_EEC_STATE_ERR),
	N(IBV_WC_FATAL_ERR),
	N(IBV_WC_RESP_TIMEOUT_ERR),
	N(IBV_WC_GENERAL_ERR),
	N(IBV_WC_TM_ERR),
	N(IBV_WC_TM_RNDV_INCOMPLETE),
};

static const struct named async_events[] = {
	N(IBV_EVENT_CQ_ERR),
	N(IBV_EVENT_QP_FATAL),
	N(IBV_EVENT_QP_REQ_ERR),
	N(IBV_EVENT_QP_ACCESS_ERR),
	N(IBV_EVENT_COMM_EST),
	N(IBV_EVENT_SQ_DRAINED),
	N(IBV_EVENT_PATH_MIG),
	N(IBV_EVENT_PATH_MIG_ERR),
	N(IBV_EVENT_DEVICE_FATAL),
	N(IBV_EVENT_PORT_ACTIVE),
	N(IBV_EVENT_PORT_ERR),
	N(IBV_EVENT_LID_CHANGE),
	N(IBV_EVENT_PKEY_CHANGE),
	N(IBV_EVENT_SM_CHANGE),
	N(IBV_EVENT_SRQ_ERR),
	N(IBV_EVENT_SRQ_LIMIT_REACHED),
	N(IBV_EVENT_QP_LAST_WQE_REACHED),
	N(IBV_EVENT_CLIENT_REREGISTER),
	N(IBV_EVENT_GID_CHANGE),
	N(IBV_EVENT_WQ_FATAL),
};

static const struct named cm_events[] = {
	N(RDMA_CM_EVENT_ADDR_RESOLVED),	  N(RDMA_CM_EVENT_ADDR_ERROR),
	N(RDMA_CM_EVENT_ROUTE_RESOLVED),  N(RDMA_CM_EVENT_ROUTE_ERROR),
	N(RDMA_CM_EVENT_CONNECT_REQUEST), N(RDMA_CM_EVENT_CONNECT_RESPONSE),
	N(RDMA_CM_EVENT_CONNECT_ERROR),	  N(RDMA_CM_EVENT_UNREACHABLE),
	N(RDMA_CM_EVENT_REJECTED),	  N(RDMA_CM_EVENT_ESTABLISHED),
	N(RDMA_CM_EVENT_DISCONNECTED),	  N(RDMA_CM_EVENT_DEVICE_REMOVAL),
	N(RDMA_CM_EVENT_MULTICAST_JOIN),  N(RDMA_CM_EVENT_MULTICAST_ERROR),
	N(RDMA_CM_EVENT_ADDR_CHANGE),	  N(RDMA_CM_EVENT_TIMEWAIT_EXIT),
};

/* The enums the tables above name. */
enum kind { WC_STATUS, ASYNC_EVENT, CM_EVENT };

/* The library's name of value in an enum of kind; its hint in *hint_p. */
static const char *name_of(enum kind kind, int value, const char **hint_p)
{
	switch (kind) {
	case WC_STATUS:
		*hint_p = rk_wc_status_hint((enum ibv_wc_status)value);
		return rk_wc_status_name((enum ibv_wc_status)value);
	case ASYNC_EVENT:
		*hint_p = rk_async_event_hint((enum ibv_event_type)value);
		return rk_async_event_name((enum ibv_event_type)value);
	case CM_EVENT:
		*hint_p = rk_cm_event_hint((enum rdma_cm_event_type)value);
		return rk_cm_event_name((enum rdma_cm_event_type)value);
	}
	fail_msg("test bug: kind %d", kind);
	return NULL;
}

/* table (n rows) covers the whole enum of kind (enum_size values), in order,
 * and the library gives each value the table's name and a hint. */
static void check_names(enum kind kind, const struct named *table, size_t n, size_t enum_size)
{
	assert_int_equal(n, enum_size);
	for (size_t i = 0; i < n; i++) {
		const char *hint, *name = name_of(kind, table[i].value, &hint);

		if (table[i].value != (int)i)
			fail_msg("%s is %d, at row %zu", table[i].name, table[i].value, i);
		assert_string_equal(name, table[i].name);
		if (!hint)
			fail_msg("%s has no hint (NULL)", table[i].name);
	}
}

static void test_wc_status_names(void **state)
{
	check_names(WC_STATUS, wc_statuses, ARRAY_SIZE(wc_statuses), IBV_WC_TM_RNDV_INCOMPLETE + 1);
}

static void test_wc_status_hints(void **state)
{
	assert_string_equal(rk_wc_status_hint(IBV_WC_SUCCESS), "");
	for (size_t i = 1; i < ARRAY_SIZE(wc_statuses); i++) {
		const char *hint = rk_wc_status_hint((enum ibv_wc_status)wc_statuses[i].value);

		if (!hint || !hint[0])
			fail_msg("%s has no hint", wc_statuses[i].name);
	}
	assert_contains(rk_wc_status_hint(IBV_WC_REM_ACCESS_ERR), "rkey");
	assert_contains(rk_wc_status_hint(IBV_WC_RNR_RETRY_EXC_ERR), "receive");
	assert_contains(rk_wc_status_hint(IBV_WC_RETRY_EXC_ERR), "GID");
	assert_contains(rk_wc_status_hint(IBV_WC_WR_FLUSH_ERR), "error state");
}

static void test_unknown_values(void **state)
{
	assert_string_equal(rk_wc_status_name((enum ibv_wc_status)99), "UNKNOWN(99)");
	assert_nonempty(rk_wc_status_hint((enum ibv_wc_status)99));
	assert_string_equal(rk_wc_status_name((enum ibv_wc_status)(IBV_WC_TM_RNDV_INCOMPLETE + 1)),
			    "UNKNOWN(24)");
	assert_string_equal(rk_async_event_name((enum ibv_event_type)99), "UNKNOWN(99)");
	assert_nonempty(rk_async_event_hint((enum ibv_event_type)99));
	assert_string_equal(rk_cm_event_name((enum rdma_cm_event_type)99), "UNKNOWN(99)");
	assert_nonempty(rk_cm_event_hint((enum rdma_cm_event_type)99));
	assert_string_equal(rk_wc_opcode_name((enum ibv_wc_opcode)99), "UNKNOWN(99)");
	/* A negative value read as an unsigned one must not index the table. */
	assert_contains(rk_wc_status_name((enum ibv_wc_status) - 1), "UNKNOWN(");
}

static void test_async_event_names(void **state)
{
	check_names(ASYNC_EVENT, async_events, ARRAY_SIZE(async_events), IBV_EVENT_WQ_FATAL + 1);
	assert_nonempty(rk_async_event_hint(IBV_EVENT_PORT_ERR));
	assert_contains(rk_async_event_hint(IBV_EVENT_PORT_ERR), "down");
	assert_nonempty(rk_async_event_hint(IBV_EVENT_QP_ACCESS_ERR));
	assert_contains(rk_async_event_hint(IBV_EVENT_GID_CHANGE), "GID");
}

static void test_cm_event_names(void **state)
{
	check_names(CM_EVENT, cm_events, ARRAY_SIZE(cm_events), RDMA_CM_EVENT_TIMEWAIT_EXIT + 1);
	assert_nonempty(rk_cm_event_hint(RDMA_CM_EVENT_REJECTED));
	assert_nonempty(rk_cm_event_hint(RDMA_CM_EVENT_UNREACHABLE));
	assert_nonempty(rk_cm_event_hint(RDMA_CM_EVENT_ADDR_ERROR));
	assert_nonempty(rk_cm_event_hint(RDMA_CM_EVENT_ROUTE_ERROR));
	assert_nonempty(rk_cm_event_hint(RDMA_CM_EVENT_CONNECT_ERROR));
}

static void test_wc_opcode_names(void **state)
{
	assert_string_equal(rk_wc_opcode_name(IBV_WC_SEND), "SEND");
	assert_string_equal(rk_wc_opcode_name(IBV_WC_RDMA_WRITE), "RDMA_WRITE");
	assert_string_equal(rk_wc_opcode_name(IBV_WC_RDMA_READ), "RDMA_READ");
	assert_string_equal(rk_wc_opcode_name(IBV_WC_COMP_SWAP), "COMP_SWAP");
	assert_string_equal(rk_wc_opcode_name(IBV_WC_FETCH_ADD), "FETCH_ADD");
	assert_string_equal(rk_wc_opcode_name(IBV_WC_RECV), "RECV");
	assert_string_equal(rk_wc_opcode_name(IBV_WC_RECV_RDMA_WITH_IMM), "RECV_RDMA_WITH_IMM");
}

static void test_wc_errno(void **state)
{
	assert_int_equal(rk_wc_errno(IBV_WC_SUCCESS), 0);
	assert_int_equal(rk_wc_errno(IBV_WC_WR_FLUSH_ERR), -ECANCELED);
	assert_int_equal(rk_wc_errno(IBV_WC_RETRY_EXC_ERR), -ETIMEDOUT);
	assert_int_equal(rk_wc_errno(IBV_WC_RNR_RETRY_EXC_ERR), -ETIMEDOUT);
	assert_int_equal(rk_wc_errno(IBV_WC_REM_ACCESS_ERR), -EACCES);
	assert_int_equal(rk_wc_errno(IBV_WC_LOC_PROT_ERR), -EACCES);
	assert_int_equal(rk_wc_errno(IBV_WC_LOC_LEN_ERR), -EMSGSIZE);
	assert_int_equal(rk_wc_errno(IBV_WC_REM_INV_REQ_ERR), -EREMOTEIO);
	assert_int_equal(rk_wc_errno(IBV_WC_REM_OP_ERR), -EREMOTEIO);
	assert_int_equal(rk_wc_errno(IBV_WC_GENERAL_ERR), -EIO);
	assert_int_equal(rk_wc_errno((enum ibv_wc_status)99), -EIO);
	/* Every failure is an error. */
	for (size_t i = 1; i < ARRAY_SIZE(wc_statuses); i++) {
		int err = rk_wc_errno((enum ibv_wc_status)wc_statuses[i].value);

		if (err >= 0)
			fail_msg("rk_wc_errno(%s) = %d, expected a negative errno",
				 wc_statuses[i].name, err);
	}
}

/* Log capture. */
struct captured {
	int count;
	enum rk_log_level level;
	char msg[1024];
};

static void capture(enum rk_log_level level, const char *msg, void *arg)
{
	struct captured *c = arg;

	c->count++;
	c->level = level;
	snprintf(c->msg, sizeof(c->msg), "%s", msg);
}

static int teardown_log(void **state)
{
	rk_log_set_handler(NULL, NULL);
	return 0;
}

static void test_wc_check_failure_logs_once(void **state)
{
	struct captured cap = {0};
	struct ibv_wc wc;
	char qpn[32];

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = 42;
	wc.status = IBV_WC_REM_ACCESS_ERR;
	wc.qp_num = 0x1a2b;
	wc.vendor_err = 0x88;
	rk_log_set_handler(capture, &cap);
	assert_int_equal(rk_wc_check(&wc, "RDMA WRITE"), -EACCES);
	rk_log_set_handler(NULL, NULL);

	assert_int_equal(cap.count, 1);
	assert_int_equal(cap.level, RK_LOG_ERROR);
	assert_contains(cap.msg, "IBV_WC_REM_ACCESS_ERR");
	assert_contains(cap.msg, rk_wc_status_hint(IBV_WC_REM_ACCESS_ERR));
	snprintf(qpn, sizeof(qpn), "0x%x", wc.qp_num);
	assert_contains(cap.msg, qpn);
	assert_contains(cap.msg, "RDMA WRITE");
	assert_contains(cap.msg, "42");

	/* NULL what: a generic name. */
	memset(&cap, 0, sizeof(cap));
	wc.status = IBV_WC_RETRY_EXC_ERR;
	rk_log_set_handler(capture, &cap);
	assert_int_equal(rk_wc_check(&wc, NULL), -ETIMEDOUT);
	rk_log_set_handler(NULL, NULL);
	assert_int_equal(cap.count, 1);
	assert_contains(cap.msg, "IBV_WC_RETRY_EXC_ERR");
	assert_contains(cap.msg, "work request");
	assert_contains(cap.msg, qpn);
}

/* rk_log_get_level() reads back what rk_log_set_level() set, and the
 * threshold decides what reaches the handler. */
static void test_log_level(void **state)
{
	enum rk_log_level was = rk_log_get_level();
	struct captured cap = {0};

	rk_log_set_handler(capture, &cap);
	rk_log_set_level(RK_LOG_DEBUG);
	assert_int_equal(rk_log_get_level(), RK_LOG_DEBUG);
	rk_debug("debug %d", 1);
	assert_int_equal(cap.count, 1);
	assert_int_equal(cap.level, RK_LOG_DEBUG);
	assert_contains(cap.msg, "debug 1");

	rk_log_set_level(RK_LOG_ERROR);
	assert_int_equal(rk_log_get_level(), RK_LOG_ERROR);
	rk_warn("warning %d", 2);
	assert_int_equal(cap.count, 1); /* below the threshold: dropped */
	rk_error("error %d", 3);
	assert_int_equal(cap.count, 2);
	assert_contains(cap.msg, "error 3");
	rk_log_set_level(was);
	assert_int_equal(rk_log_get_level(), was);
}

static void test_wc_check_success_logs_nothing(void **state)
{
	struct captured cap = {0};
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_SUCCESS;
	wc.qp_num = 7;
	rk_log_set_handler(capture, &cap);
	assert_int_equal(rk_wc_check(&wc, "SEND"), 0);
	rk_log_set_handler(NULL, NULL);
	assert_int_equal(cap.count, 0);
}

static void test_strerror(void **state)
{
	assert_nonempty(rk_strerror(0));
	assert_string_equal(rk_strerror(-EINVAL), strerror(EINVAL));
	assert_string_equal(rk_strerror(EINVAL), strerror(EINVAL));
	assert_string_equal(rk_strerror(-ETIMEDOUT), strerror(ETIMEDOUT));
	assert_nonempty(rk_strerror(-123456));
}

static void test_verbs_err(void **state)
{
	assert_int_equal(rk_verbs_err(0), 0);
	assert_int_equal(rk_verbs_err(EINVAL), -EINVAL);
	assert_int_equal(rk_verbs_err(ENOMEM), -ENOMEM);
	errno = EAGAIN;
	assert_int_equal(rk_verbs_err(-1), -EAGAIN);
	errno = 0;
	assert_int_equal(rk_verbs_err(-1), -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wc_status_names),
		cmocka_unit_test(test_wc_status_hints),
		cmocka_unit_test(test_unknown_values),
		cmocka_unit_test(test_async_event_names),
		cmocka_unit_test(test_cm_event_names),
		cmocka_unit_test(test_wc_opcode_names),
		cmocka_unit_test(test_wc_errno),
		cmocka_unit_test_teardown(test_wc_check_failure_logs_once, teardown_log),
		cmocka_unit_test_teardown(test_wc_check_success_logs_nothing, teardown_log),
		cmocka_unit_test_teardown(test_log_level, teardown_log),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_verbs_err),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
