/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rk_gid_choose() over synthetic GID tables, and the GID helpers. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>

#include <rdmakit/gid.h>

#include "unit.h"

#define V4_GID "::ffff:198.18.0.1"
#define V6_GID "2001:db8::1"
#define LL_GID "fe80::201:2ff:fe03:405"

static union ibv_gid gid_of(const char *text)
{
	union ibv_gid g;

	if (inet_pton(AF_INET6, text, g.raw) != 1)
		fail_msg("test bug: '%s' is not an IPv6 address", text);
	return g;
}

/* Append one valid entry, as rk_gid_table_read() fills it. */
static void add(struct rk_gid_table *t, uint32_t index, enum rk_gid_type type, const char *gid)
{
	struct rk_gid_entry *e = &t->entries[t->count++];

	memset(e, 0, sizeof(*e));
	e->index = index;
	e->type = type;
	e->gid = gid_of(gid);
	e->ndev_ifindex = type == RK_GID_IB ? 0 : 2;
	rk_gid_entry_set_ip(e);
}

static struct rk_gid_table *new_table(uint8_t link_layer, int n)
{
	struct rk_gid_table *t = NULL;

	assert_int_equal(rk_gid_table_new(1, link_layer, n, &t), 0);
	assert_non_null(t);
	assert_int_equal(t->count, 0);
	assert_int_equal(t->link_layer, link_layer);
	return t;
}

/* rxe: one RoCE v2 GID per address, link-local first. */
static struct rk_gid_table *rxe_table(void)
{
	struct rk_gid_table *t = new_table(IBV_LINK_LAYER_ETHERNET, 2);

	add(t, 0, RK_GID_ROCE_V2, LL_GID);
	add(t, 1, RK_GID_ROCE_V2, V4_GID);
	return t;
}

/* mlx5: RoCE v1 and v2 of each address at consecutive indexes, v1 first. */
static struct rk_gid_table *mlx5_table(void)
{
	struct rk_gid_table *t = new_table(IBV_LINK_LAYER_ETHERNET, 6);

	add(t, 0, RK_GID_ROCE_V1, LL_GID);
	add(t, 1, RK_GID_ROCE_V2, LL_GID);
	add(t, 2, RK_GID_ROCE_V1, V4_GID);
	add(t, 3, RK_GID_ROCE_V2, V4_GID);
	add(t, 4, RK_GID_ROCE_V1, V6_GID);
	add(t, 5, RK_GID_ROCE_V2, V6_GID);
	return t;
}

static int choose(const struct rk_gid_table *t, int index, const char *ip, int family,
		  struct rk_gid_choice *c)
{
	struct rk_gid_want want = {.index = index, .ip = ip, .family = family};

	return rk_gid_choose(t, &want, c);
}

/* The choice is index/type, its GID is the table's, and why names the index. */
static void assert_choice(const struct rk_gid_table *t, const struct rk_gid_choice *c,
			  uint32_t index, enum rk_gid_type type)
{
	const struct rk_gid_entry *e = rk_gid_table_find(t, index);
	char idx[32];

	assert_int_equal(c->index, index);
	assert_string_equal(rk_gid_type_str(c->type), rk_gid_type_str(type));
	assert_non_null(e);
	assert_memory_equal(c->gid.raw, e->gid.raw, sizeof(c->gid.raw));
	assert_nonempty(c->why);
	snprintf(idx, sizeof(idx), "index %u", index);
	assert_contains(c->why, idx);
}

/* Choosing with the want {index, ip, family} picks the GID at want_index, of
 * want_type (and assert_choice() holds); *c is the choice. A failure names
 * the want. */
static void choose_ok(const struct rk_gid_table *t, int index, const char *ip, int family,
		      uint32_t want_index, enum rk_gid_type want_type, struct rk_gid_choice *c)
{
	int ret = choose(t, index, ip, family, c);

	if (ret)
		fail_msg("want index %d, ip %s, family %d: %d", index, ip ? ip : "NULL", family,
			 ret);
	if (c->index != want_index || c->type != want_type)
		fail_msg("want index %d, ip %s, family %d: chose index %u (%s), expected %u (%s)",
			 index, ip ? ip : "NULL", family, c->index, rk_gid_type_str(c->type),
			 want_index, rk_gid_type_str(want_type));
	assert_choice(t, c, want_index, want_type);
}

/* A want, the GID it picks, and words the choice's why says and does not. */
struct choice_case {
	int index;
	const char *ip;
	int family;
	uint32_t pick;
	enum rk_gid_type type;
	const char *says[3];
	const char *not_says;
};

/* choose_ok() for each case of cases[0..n) over t, and its why; a failure
 * names the want. */
static void check_choices(const struct rk_gid_table *t, const struct choice_case *cases, size_t n)
{
	struct rk_gid_choice c;

	for (size_t i = 0; i < n; i++) {
		const struct choice_case *w = &cases[i];

		choose_ok(t, w->index, w->ip, w->family, w->pick, w->type, &c);
		for (size_t j = 0; j < ARRAY_SIZE(w->says) && w->says[j]; j++)
			if (!strstr(c.why, w->says[j]))
				fail_msg("want index %d, ip %s, family %d: \"%s\" does not say \"%s\"",
					 w->index, w->ip ? w->ip : "NULL", w->family, c.why, w->says[j]);
		if (w->not_says && strstr(c.why, w->not_says))
			fail_msg("want index %d, ip %s, family %d: \"%s\" says \"%s\"", w->index,
				 w->ip ? w->ip : "NULL", w->family, c.why, w->not_says);
	}
}

static void test_rxe_default_picks_v2_ipv4(void **state)
{
	struct rk_gid_table *t = rxe_table();
	struct rk_gid_choice c;

	choose_ok(t, -1, NULL, AF_UNSPEC, 1, RK_GID_ROCE_V2, &c);
	assert_contains(c.why, "198.18.0.1");
	assert_not_contains(c.why, "link-local");

	/* No want at all means the same as "choose". */
	memset(&c, 0, sizeof(c));
	assert_int_equal(rk_gid_choose(t, NULL, &c), 0);
	assert_choice(t, &c, 1, RK_GID_ROCE_V2);
	rk_gid_table_free(t);
}

/* mlx5: what each want picks. */
static void test_mlx5_choices(void **state)
{
	static const struct choice_case cases[] = {
		/* The default: RoCE v2 of the IPv4 address, also for IPv4 asked for. */
		{-1, NULL, AF_UNSPEC, 3, RK_GID_ROCE_V2, {"RoCE v2"}},
		{-1, NULL, AF_INET, 3, RK_GID_ROCE_V2},
		/* An IP picks the v2 GID carrying it (its v1 GID has the lower index, 2),
		 * an IPv6 one even when IPv4 is the default family. */
		{-1, "198.18.0.1", AF_UNSPEC, 3, RK_GID_ROCE_V2, {"198.18.0.1", "carrying"}},
		{-1, "2001:db8::1", AF_UNSPEC, 5, RK_GID_ROCE_V2, {"2001:db8::1"}},
		/* The address wins over the family. */
		{-1, "198.18.0.1", AF_INET6, 3, RK_GID_ROCE_V2},
		/* The link-local address, asked for by name. */
		{-1, "fe80::201:2ff:fe03:405", AF_UNSPEC, 1, RK_GID_ROCE_V2},
		/* An IP no GID carries: the default, and says so; for IPv6 the global v2
		 * IPv6 GID, not the link-local one. */
		{-1, "10.0.0.99", AF_UNSPEC, 3, RK_GID_ROCE_V2, {"10.0.0.99", "no ", "carries"}},
		{-1, "2001:db8::99", AF_UNSPEC, 5, RK_GID_ROCE_V2, {"2001:db8::99", "no "}},
		/* IPv6: the global GID before the link-local one. */
		{-1, NULL, AF_INET6, 5, RK_GID_ROCE_V2, {"IPv6"}, "link-local"},
		/* An explicit index wins, even over an IP that another GID carries. */
		{2, NULL, AF_UNSPEC, 2, RK_GID_ROCE_V1, {"198.18.0.1"}},
		{0, "198.18.0.1", AF_UNSPEC, 0, RK_GID_ROCE_V1},
		{1, NULL, AF_INET6, 1, RK_GID_ROCE_V2},
		/* An empty IP means no IP. */
		{-1, "", AF_UNSPEC, 3, RK_GID_ROCE_V2},
	};
	struct rk_gid_table *t = mlx5_table();

	check_choices(t, cases, ARRAY_SIZE(cases));
	rk_gid_table_free(t);
}

/* No IPv4 at all: a global IPv6 GID beats the link-local one at a lower index. */
static void test_ipv6_global_before_link_local(void **state)
{
	struct rk_gid_table *t = new_table(IBV_LINK_LAYER_ETHERNET, 2);
	struct rk_gid_choice c;

	add(t, 0, RK_GID_ROCE_V2, LL_GID);
	add(t, 1, RK_GID_ROCE_V2, V6_GID);
	choose_ok(t, -1, NULL, AF_UNSPEC, 1, RK_GID_ROCE_V2, &c);
	rk_gid_table_free(t);
}

static void test_link_local_only_when_nothing_else(void **state)
{
	static const struct choice_case cases[] = {
		{-1, NULL, AF_UNSPEC, 1, RK_GID_ROCE_V2, {"link-local"}},
		{-1, NULL, AF_INET6, 1, RK_GID_ROCE_V2, {"link-local"}},
	};
	struct rk_gid_table *t = new_table(IBV_LINK_LAYER_ETHERNET, 2);

	add(t, 0, RK_GID_ROCE_V1, LL_GID);
	add(t, 1, RK_GID_ROCE_V2, LL_GID);
	check_choices(t, cases, ARRAY_SIZE(cases));
	rk_gid_table_free(t);
}

static void test_v1_only_table(void **state)
{
	static const struct choice_case cases[] = {
		{-1, NULL, AF_UNSPEC, 2, RK_GID_ROCE_V1, {"RoCE v1"}},
		{-1, NULL, AF_INET6, 1, RK_GID_ROCE_V1},
		{-1, "198.18.0.1", AF_UNSPEC, 2, RK_GID_ROCE_V1},
	};
	struct rk_gid_table *t = new_table(IBV_LINK_LAYER_ETHERNET, 3);

	add(t, 0, RK_GID_ROCE_V1, LL_GID);
	add(t, 1, RK_GID_ROCE_V1, V6_GID);
	add(t, 2, RK_GID_ROCE_V1, V4_GID);
	check_choices(t, cases, ARRAY_SIZE(cases));
	rk_gid_table_free(t);
}

static void test_lowest_index_among_equals(void **state)
{
	struct rk_gid_table *t = new_table(IBV_LINK_LAYER_ETHERNET, 3);
	struct rk_gid_choice c;

	/* Not in index order in the array. */
	add(t, 7, RK_GID_ROCE_V2, "::ffff:198.18.0.7");
	add(t, 4, RK_GID_ROCE_V2, "::ffff:198.18.0.4");
	add(t, 9, RK_GID_ROCE_V1, "::ffff:198.18.0.9");
	choose_ok(t, -1, NULL, AF_UNSPEC, 4, RK_GID_ROCE_V2, &c);
	choose_ok(t, -1, "198.18.0.7", AF_UNSPEC, 7, RK_GID_ROCE_V2, &c);
	rk_gid_table_free(t);
}

static void test_explicit_index_missing(void **state)
{
	struct rk_gid_table *t = new_table(IBV_LINK_LAYER_ETHERNET, 2);
	struct rk_gid_choice c, before;

	add(t, 3, RK_GID_ROCE_V2, V4_GID);
	add(t, 7, RK_GID_ROCE_V2, V6_GID);
	memset(&c, 0x5a, sizeof(c));
	before = c;
	assert_int_equal(choose(t, 5, NULL, AF_UNSPEC, &c), -ENOENT);
	assert_int_equal(choose(t, 0, NULL, AF_UNSPEC, &c), -ENOENT);
	assert_int_equal(choose(t, 1000, NULL, AF_UNSPEC, &c), -ENOENT);
	/* Written only on success. */
	assert_memory_equal(&c, &before, sizeof(c));

	choose_ok(t, 7, NULL, AF_UNSPEC, 7, RK_GID_ROCE_V2, &c);
	rk_gid_table_free(t);
}

static void test_bad_ip(void **state)
{
	static const char *const bad[] = {"198.18.0", "not-an-ip", "198.18.0.256", "fe80::1::2",
					  "198.18.0.1 "};
	struct rk_gid_table *t = mlx5_table();
	struct rk_gid_choice c;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = choose(t, -1, bad[i], AF_UNSPEC, &c);

		if (ret != -EINVAL)
			fail_msg("want->ip '%s': %d, expected -EINVAL (%d)", bad[i], ret, -EINVAL);
	}
	rk_gid_table_free(t);
}

static void test_empty_table(void **state)
{
	struct rk_gid_table *t = new_table(IBV_LINK_LAYER_ETHERNET, 0);
	struct rk_gid_choice c;

	assert_int_equal(choose(t, -1, NULL, AF_UNSPEC, &c), -ENOENT);
	assert_int_equal(choose(t, -1, "198.18.0.1", AF_UNSPEC, &c), -ENOENT);
	assert_int_equal(choose(t, 0, NULL, AF_UNSPEC, &c), -ENOENT);
	assert_null(rk_gid_table_find(t, 0));
	rk_gid_table_free(t);

	t = new_table(IBV_LINK_LAYER_INFINIBAND, 0);
	assert_int_equal(choose(t, -1, NULL, AF_UNSPEC, &c), -ENOENT);
	rk_gid_table_free(t);

	rk_gid_table_free(NULL);
	assert_int_equal(rk_gid_table_new(1, IBV_LINK_LAYER_ETHERNET, -1, &t), -EINVAL);
}

static void test_infiniband_port(void **state)
{
	struct rk_gid_table *t = new_table(IBV_LINK_LAYER_INFINIBAND, 2);
	struct rk_gid_choice c;

	add(t, 0, RK_GID_IB, "fe80::2:c903:ab:cdef");
	add(t, 1, RK_GID_IB, "fec0::2:c903:ab:cdef");
	choose_ok(t, -1, NULL, AF_UNSPEC, 0, RK_GID_IB, &c);
	assert_contains(c.why, "InfiniBand");

	choose_ok(t, -1, NULL, AF_INET6, 0, RK_GID_IB, &c);

	choose_ok(t, 1, NULL, AF_UNSPEC, 1, RK_GID_IB, &c);
	assert_int_equal(choose(t, 2, NULL, AF_UNSPEC, &c), -ENOENT);
	rk_gid_table_free(t);
}

static void test_table_find(void **state)
{
	struct rk_gid_table *t = mlx5_table();
	const struct rk_gid_entry *e;

	e = rk_gid_table_find(t, 4);
	assert_non_null(e);
	assert_int_equal(e->index, 4);
	assert_string_equal(e->ip, "2001:db8::1");
	assert_null(rk_gid_table_find(t, 6));
	rk_gid_table_free(t);
}

static void test_gid_str_parse_round_trip(void **state)
{
	static const char *const texts[] = {
		LL_GID, V4_GID, V6_GID, "::", "fe80::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"};
	char buf[64];
	union ibv_gid g, back;

	g = gid_of("fe80::1");
	assert_string_equal(rk_gid_str(&g, buf, sizeof(buf)),
			    "fe80:0000:0000:0000:0000:0000:0000:0001");
	g = gid_of(V4_GID);
	assert_string_equal(rk_gid_str(&g, buf, sizeof(buf)),
			    "0000:0000:0000:0000:0000:ffff:c612:0001");

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		g = gid_of(texts[i]);
		assert_ptr_equal(rk_gid_str(&g, buf, sizeof(buf)), buf);
		assert_int_equal(strlen(buf), 39);
		memset(&back, 0xa5, sizeof(back));
		assert_int_equal(rk_gid_parse(buf, &back), 0);
		assert_memory_equal(back.raw, g.raw, sizeof(g.raw));
		/* The short notation parses too. */
		assert_int_equal(rk_gid_parse(texts[i], &back), 0);
		assert_memory_equal(back.raw, g.raw, sizeof(g.raw));
	}

	/* A short buffer is truncated and terminated. */
	g = gid_of("fe80::1");
	memset(buf, 'x', sizeof(buf));
	rk_gid_str(&g, buf, 8);
	assert_string_equal(buf, "fe80:00");
}

static void test_gid_parse_rejects(void **state)
{
	static const char *const bad[] = {"",	      "198.18.0.1",	   "zzzz::1",
					  "fe80:::1", "1:2:3:4:5:6:7:8:9", "fe80::1 "};
	union ibv_gid g, before;

	memset(&g, 0x5a, sizeof(g));
	before = g;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = rk_gid_parse(bad[i], &g);

		if (ret != -EINVAL)
			fail_msg("rk_gid_parse('%s'): %d, expected -EINVAL (%d)", bad[i], ret,
				 -EINVAL);
	}
	assert_int_equal(rk_gid_parse(NULL, &g), -EINVAL);
	assert_memory_equal(g.raw, before.raw, sizeof(g.raw));
}

static void test_gid_is_link_local(void **state)
{
	union ibv_gid g;

	g = gid_of("fe80::1");
	assert_true(rk_gid_is_link_local(&g));
	g = gid_of(LL_GID);
	assert_true(rk_gid_is_link_local(&g));
	g = gid_of("febf::1"); /* still inside fe80::/10 */
	assert_true(rk_gid_is_link_local(&g));
	g = gid_of("fec0::1");
	assert_false(rk_gid_is_link_local(&g));
	g = gid_of("fe00::1");
	assert_false(rk_gid_is_link_local(&g));
	g = gid_of(V6_GID);
	assert_false(rk_gid_is_link_local(&g));
	g = gid_of(V4_GID);
	assert_false(rk_gid_is_link_local(&g));
	g = gid_of("::");
	assert_false(rk_gid_is_link_local(&g));
}

static void test_gid_is_zero(void **state)
{
	union ibv_gid g;

	memset(&g, 0, sizeof(g));
	assert_true(rk_gid_is_zero(&g));
	for (size_t i = 0; i < sizeof(g.raw); i++) {
		memset(&g, 0, sizeof(g));
		g.raw[i] = 1;
		if (rk_gid_is_zero(&g))
			fail_msg("a GID with byte %zu set is reported as zero", i);
	}
	g = gid_of(V4_GID);
	assert_false(rk_gid_is_zero(&g));
}

static void test_entry_set_ip(void **state)
{
	struct rk_gid_entry e;

	memset(&e, 0, sizeof(e));
	e.type = RK_GID_ROCE_V2;
	e.gid = gid_of(V4_GID);
	rk_gid_entry_set_ip(&e);
	assert_int_equal(e.family, AF_INET);
	assert_string_equal(e.ip, "198.18.0.1");

	e.type = RK_GID_ROCE_V1;
	rk_gid_entry_set_ip(&e);
	assert_int_equal(e.family, AF_INET);
	assert_string_equal(e.ip, "198.18.0.1");

	e.type = RK_GID_ROCE_V2;
	e.gid = gid_of(V6_GID);
	rk_gid_entry_set_ip(&e);
	assert_int_equal(e.family, AF_INET6);
	assert_string_equal(e.ip, "2001:db8::1");

	e.gid = gid_of(LL_GID);
	rk_gid_entry_set_ip(&e);
	assert_int_equal(e.family, AF_INET6);
	assert_string_equal(e.ip, LL_GID);

	/* Overwrites what was there before. */
	e.type = RK_GID_IB;
	e.gid = gid_of("fe80::2:c903:ab:cdef");
	rk_gid_entry_set_ip(&e);
	assert_int_equal(e.family, 0);
	assert_string_equal(e.ip, "");
}

static void test_gid_type_str(void **state)
{
	assert_string_equal(rk_gid_type_str(RK_GID_IB), "IB");
	assert_string_equal(rk_gid_type_str(RK_GID_ROCE_V1), "RoCE v1");
	assert_string_equal(rk_gid_type_str(RK_GID_ROCE_V2), "RoCE v2");
	assert_nonempty(rk_gid_type_str((enum rk_gid_type)42));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rxe_default_picks_v2_ipv4),
		cmocka_unit_test(test_mlx5_choices),
		cmocka_unit_test(test_ipv6_global_before_link_local),
		cmocka_unit_test(test_link_local_only_when_nothing_else),
		cmocka_unit_test(test_v1_only_table),
		cmocka_unit_test(test_lowest_index_among_equals),
		cmocka_unit_test(test_explicit_index_missing),
		cmocka_unit_test(test_bad_ip),
		cmocka_unit_test(test_empty_table),
		cmocka_unit_test(test_infiniband_port),
		cmocka_unit_test(test_table_find),
		cmocka_unit_test(test_gid_str_parse_round_trip),
		cmocka_unit_test(test_gid_parse_rejects),
		cmocka_unit_test(test_gid_is_link_local),
		cmocka_unit_test(test_gid_is_zero),
		cmocka_unit_test(test_entry_set_ip),
		cmocka_unit_test(test_gid_type_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
