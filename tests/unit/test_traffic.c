/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The traffic fields (traffic.h): ranges, and what lands in the path and in
 * an address handle's attributes. */
#include <errno.h>
#include <string.h>

#include <rdmakit/traffic.h>

#include "unit.h"

static void test_dscp_ecn(void **state)
{
	(void)state;
	assert_int_equal(rk_tclass_dscp(184), 46);
	assert_int_equal(rk_tclass_ecn(184), 0);
	assert_int_equal(rk_tclass_dscp(105), 26);
	assert_int_equal(rk_tclass_ecn(105), 1);
	assert_int_equal(rk_tclass_dscp(255), 63);
	assert_int_equal(rk_tclass_ecn(255), 3);
}

static void test_check_ranges(void **state)
{
	struct rk_traffic t = {.has_sl = true, .sl = 15, .has_flow_label = true,
			       .flow_label = RK_FLOW_LABEL_MAX, .has_hop_limit = true,
			       .hop_limit = 1};
	char why[128] = "";

	(void)state;
	assert_int_equal(rk_traffic_check(&t, why, sizeof(why)), 0);
	t.sl = 16;
	assert_int_equal(rk_traffic_check(&t, why, sizeof(why)), -ERANGE);
	assert_contains(why, "SL 16");
	t.sl = 0;
	t.flow_label = RK_FLOW_LABEL_MAX + 1;
	assert_int_equal(rk_traffic_check(&t, why, sizeof(why)), -ERANGE);
	assert_contains(why, "flow label 0x100000");
	t.flow_label = 0;
	t.hop_limit = 0;
	assert_int_equal(rk_traffic_check(&t, why, sizeof(why)), -ERANGE);
	assert_contains(why, "hop limit 0");
	/* Unset fields are not checked. */
	t.has_hop_limit = false;
	assert_int_equal(rk_traffic_check(&t, why, sizeof(why)), 0);
}

static void test_any(void **state)
{
	struct rk_traffic t = {0};

	(void)state;
	assert_false(rk_traffic_any(NULL));
	assert_false(rk_traffic_any(&t));
	t.has_tclass = true; /* class 0 asked for is still asked for */
	assert_true(rk_traffic_any(&t));
}

static void test_apply_only_set(void **state)
{
	struct rk_traffic t = {.has_tclass = true, .tclass = 104, .has_flow_label = true,
			       .flow_label = 0x12345};
	struct rk_path_attr path;

	(void)state;
	rk_path_defaults(&path);
	path.sl = 7;
	rk_traffic_apply(&t, &path);
	assert_int_equal(path.traffic_class, 104);
	assert_int_equal(path.flow_label, 0x12345);
	assert_int_equal(path.sl, 7);         /* not set: kept */
	assert_int_equal(path.hop_limit, 64); /* not set: the default */
	rk_traffic_apply(NULL, &path);
	assert_int_equal(path.traffic_class, 104);
}

static void test_apply_ah(void **state)
{
	struct rk_traffic t = {.has_tclass = true, .tclass = 40, .has_sl = true, .sl = 3,
			       .has_hop_limit = true, .hop_limit = 9, .has_flow_label = true,
			       .flow_label = 5};
	struct ibv_ah_attr ah;

	(void)state;
	memset(&ah, 0, sizeof(ah));
	ah.grh.hop_limit = 64;
	rk_traffic_apply_ah(&t, &ah); /* no GRH: only the SL */
	assert_int_equal(ah.sl, 3);
	assert_int_equal(ah.grh.traffic_class, 0);
	assert_int_equal(ah.grh.hop_limit, 64);
	ah.is_global = 1;
	rk_traffic_apply_ah(&t, &ah);
	assert_int_equal(ah.grh.traffic_class, 40);
	assert_int_equal(ah.grh.hop_limit, 9);
	assert_int_equal(ah.grh.flow_label, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dscp_ecn),
		cmocka_unit_test(test_check_ranges),
		cmocka_unit_test(test_any),
		cmocka_unit_test(test_apply_only_set),
		cmocka_unit_test(test_apply_ah),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
