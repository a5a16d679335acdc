/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Public calls that only the library's own engines used (issue 33), on the
 * host where they need no device: CM's connect-with-retry loop, device
 * memory's bounds and its refusal on a device without any, the NULLs that
 * free and unimport ignore, and ibv_fork_init(). The control channel's are in
 * test_ctl.c; the device halves are tests/rdma/test_api.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rdmakit/cm.h>
#include <rdmakit/dm.h>
#include <rdmakit/share.h>

#include "unit.h"

/* ---- rk_cm_connect_retry ---- */

struct tries {
	int results[8]; /* what each attempt returns, in turn */
	int attempts, resets;
	int reset_ret;
};

static int attempt(void *arg)
{
	struct tries *t = arg;

	return t->results[t->attempts++];
}

static int reset(void *arg)
{
	struct tries *t = arg;

	t->resets++;
	return t->reset_ret;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* No listener twice, then connected: three tries, two resets between them,
 * an interval slept before each retry. */
static void test_cm_retry_until_connected(void **state)
{
	struct tries t = {.results = {-ECONNREFUSED, -EBUSY, 0}};
	int64_t t0 = now_ms();
	int tries = 0;

	(void)state;
	assert_int_equal(rk_cm_connect_retry(5000, attempt, reset, &t, &tries), 0);
	assert_int_equal(tries, 3);
	assert_int_equal(t.attempts, 3);
	assert_int_equal(t.resets, 2);
	assert_true(now_ms() - t0 >= 2 * RK_CM_RETRY_INTERVAL_MS);
}

/* A reject is not worth a retry: one try, no reset, its error. */
static void test_cm_retry_not_worth(void **state)
{
	struct tries t = {.results = {-ECONNABORTED, 0}};
	int tries = 0;

	(void)state;
	assert_int_equal(rk_cm_connect_retry(5000, attempt, reset, &t, &tries), -ECONNABORTED);
	assert_int_equal(tries, 1);
	assert_int_equal(t.resets, 0);
}

/* The timeout ends the tries (0 ms: the first one only), and reset's error
 * ends them too. */
static void test_cm_retry_timeout_and_reset_error(void **state)
{
	struct tries t = {.results = {-ECONNREFUSED, -ECONNREFUSED, 0}};
	struct tries u = {.results = {-EHOSTUNREACH, 0}, .reset_ret = -ENOMEM};
	int tries = 0;

	(void)state;
	assert_int_equal(rk_cm_connect_retry(0, attempt, reset, &t, &tries), -ECONNREFUSED);
	assert_int_equal(tries, 1);
	assert_int_equal(t.resets, 0);
	assert_int_equal(rk_cm_connect_retry(5000, attempt, reset, &u, NULL), -ENOMEM);
	assert_int_equal(u.attempts, 1);
	assert_int_equal(u.resets, 1);
}

/* ---- device memory without a device ---- */

/* A device whose max_dm_size is 0 is refused before any verbs call;
 * copies outside the memory are -ERANGE before any either. */
static void test_dm_refusals(void **state)
{
	struct rk_device dev;
	struct rk_dm dm = {.len = 64};
	struct rk_dm *got = NULL;
	uint8_t b[32] = {0};

	(void)state;
	memset(&dev, 0, sizeof(dev));
	snprintf(dev.info.name, sizeof(dev.info.name), "nodm0");
	assert_int_equal(rk_dm_alloc(&dev, NULL, 4096, IBV_ACCESS_LOCAL_WRITE, &got), -EOPNOTSUPP);
	assert_null(got);
	assert_int_equal(rk_dm_write(&dm, 40, b, 32), -ERANGE);
	assert_int_equal(rk_dm_read(&dm, 65, b, 0), -ERANGE);
	assert_int_equal(rk_dm_read(&dm, 33, b, 32), -ERANGE);
	rk_dm_free(NULL);
	rk_share_unimport(NULL);
}

/* ibv_fork_init() before any registration: accepted. */
static void test_fork_init(void **state)
{
	(void)state;
	assert_int_equal(rk_fork_init(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cm_retry_until_connected),
		cmocka_unit_test(test_cm_retry_not_worth),
		cmocka_unit_test(test_cm_retry_timeout_and_reset_error),
		cmocka_unit_test(test_dm_refusals),
		cmocka_unit_test(test_fork_init),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
