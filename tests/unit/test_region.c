/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Memory kinds, the parts that need no verbs device: names, the huge-page
 * pool's arithmetic, what auto chooses, the on-demand-paging check against
 * a device's reported caps, and mapping host, memfd and (with the pool
 * empty) huge-page memory; whether a peer's range lies inside a region. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <rdmakit/region.h>

#include "unit.h"

static void test_kind_names(void **state)
{
	static const char *const names[] = {"host", "hugepage", "memfd", "memfd-huge", "dm",
					    "auto"};
	enum rk_mem_kind k;

	(void)state;
	for (int i = RK_MEM_HOST; i <= RK_MEM_AUTO; i++) {
		assert_string_equal(rk_mem_kind_name((enum rk_mem_kind)i), names[i]);
		assert_int_equal(rk_mem_kind_parse(names[i], &k), 0);
		assert_int_equal(k, i);
	}
	k = RK_MEM_DM;
	assert_int_equal(rk_mem_kind_parse("HOST", &k), -EINVAL);
	assert_int_equal(rk_mem_kind_parse("huge", &k), -EINVAL);
	assert_int_equal(rk_mem_kind_parse("", &k), -EINVAL);
	assert_int_equal(rk_mem_kind_parse(NULL, &k), -EINVAL);
	assert_int_equal(k, RK_MEM_DM); /* untouched on failure */
	assert_string_equal(rk_mem_kind_name((enum rk_mem_kind)99), "unknown");
}

static void test_pool_arithmetic(void **state)
{
	struct rk_hugepage_pool p = {.page_size = 2 << 20, .total = 8, .free = 3, .reserved = 1};
	struct rk_hugepage_pool none = {0};

	(void)state;
	assert_int_equal(rk_hugepage_pages(&p, 1), 1);
	assert_int_equal(rk_hugepage_pages(&p, 2 << 20), 1);
	assert_int_equal(rk_hugepage_pages(&p, (2 << 20) + 1), 2);
	assert_int_equal(rk_hugepage_pages(&none, 4096), 0);
	/* free 3, one of them promised to a mapping: room for 2 pages */
	assert_true(rk_hugepage_room(&p, 4 << 20));
	assert_false(rk_hugepage_room(&p, (4 << 20) + 1));
	assert_false(rk_hugepage_room(&p, 0));
	assert_false(rk_hugepage_room(&none, 4096));
}

static void test_auto(void **state)
{
	struct rk_device dev = {0};
	char why[200];

	(void)state;
	snprintf(dev.info.name, sizeof(dev.info.name), "devx");
	dev.info.max_dm_size = 1 << 20;
	assert_int_equal(rk_mem_auto(&dev, 4096, NULL, why, sizeof(why)), RK_MEM_DM);
	assert_contains(why, "auto chose dm: devx has 1048576 bytes of device memory");
	/* too big for the device memory, or not wanted: never dm */
	assert_int_not_equal(rk_mem_auto(&dev, 2 << 20, NULL, why, sizeof(why)), RK_MEM_DM);
	assert_contains(why, "2097152 bytes are more than the 1048576 of devx's device memory");
	assert_int_not_equal(rk_mem_auto(&dev, 4096, "not here", why, sizeof(why)), RK_MEM_DM);
	assert_contains(why, "not here");
	dev.info.max_dm_size = 0;
	assert_int_not_equal(rk_mem_auto(&dev, 4096, NULL, why, sizeof(why)), RK_MEM_DM);
	assert_contains(why, "devx has no device memory");
}

static void test_odp_check(void **state)
{
	struct rk_device dev = {0};

	(void)state;
	snprintf(dev.info.name, sizeof(dev.info.name), "devx");
	assert_int_equal(rk_odp_check(&dev, IBV_ODP_SUPPORT_SEND), -EOPNOTSUPP);
	dev.info.odp_caps = IBV_ODP_SUPPORT;
	dev.info.odp_rc_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV;
	assert_int_equal(rk_odp_check(&dev, IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV), 0);
	assert_int_equal(rk_odp_check(&dev, IBV_ODP_SUPPORT_WRITE), -EOPNOTSUPP);
	assert_int_equal(rk_odp_check(&dev, RK_ODP_RC_ALL), -EOPNOTSUPP);
}

static void test_map(void **state)
{
	struct rk_hugepage_pool pool;
	struct rk_mem_map m;
	unsigned char *b;

	(void)state;
	assert_int_equal(rk_mem_map(RK_MEM_HOST, 0, &m), -EINVAL);
	assert_int_equal(rk_mem_map(RK_MEM_HOST, 10000, &m), 0);
	assert_int_equal(m.fd, -1);
	b = m.buf;
	assert_int_equal(b[0] | b[9999], 0);
	rk_mem_unmap(&m);
	assert_int_equal(rk_mem_map(RK_MEM_MEMFD, 10000, &m), 0);
	assert_true(m.fd >= 0);
	b = m.buf;
	assert_int_equal(b[0] | b[9999], 0);
	b[9999] = 7; /* the file holds what was written through the mapping */
	assert_int_equal(pread(m.fd, b, 1, 9999), 1);
	assert_int_equal(b[0], 7);
	rk_mem_unmap(&m);
	assert_null(m.buf);
	/* Huge pages where the pool has none: refused, not crashed. */
	if (rk_hugepage_pool_read(&pool) || !pool.page_size || pool.free)
		return;
	assert_int_equal(rk_mem_map(RK_MEM_HUGEPAGE, 4096, &m), -ENOMEM);
	assert_int_equal(rk_hugepage_check(RK_MEM_MEMFD_HUGE, 0), -ENOMEM);
	assert_int_equal(rk_hugepage_check(RK_MEM_HOST, 1 << 30), 0);
}

/* rk_region_contains(): a peer's [addr, addr+len) inside the region as
 * exposed, for a host region (base: its address) and zero-based device
 * memory (base 0), with no overflow on huge lengths. */
static void test_contains(void **state)
{
	struct rk_region host = {.kind = RK_MEM_HOST, .len = 4096, .base = 0x7f0000001000};
	struct rk_region dm = {.kind = RK_MEM_DM, .len = 256, .base = 0};
	uint64_t b = host.base;

	(void)state;
	assert_true(rk_region_contains(&host, b, 4096)); /* exact fit */
	assert_true(rk_region_contains(&host, b + 4095, 1)); /* last byte */
	assert_true(rk_region_contains(&host, b + 100, 0));
	assert_false(rk_region_contains(&host, b + 4096, 1)); /* one past the end */
	assert_false(rk_region_contains(&host, b + 1, 4096)); /* runs one over */
	assert_false(rk_region_contains(&host, b - 1, 1)); /* before the start */
	assert_false(rk_region_contains(&host, b, 4097));
	assert_false(rk_region_contains(&host, b + 100, UINT64_MAX - 50)); /* would wrap */
	assert_false(rk_region_contains(&host, 0, 1));
	assert_true(rk_region_contains(&dm, 0, 256));
	assert_true(rk_region_contains(&dm, 255, 1));
	assert_false(rk_region_contains(&dm, 256, 1));
	assert_false(rk_region_contains(&dm, b, 1)); /* a host address: not in it */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_pool_arithmetic),
		cmocka_unit_test(test_auto),
		cmocka_unit_test(test_odp_check),
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_contains),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
