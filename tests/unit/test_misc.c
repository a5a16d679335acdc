/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Endpoint checks, path MTU, operation names, SGE splitting, MR bounds,
 * access strings, data patterns and MTU conversions. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <rdmakit/cm.h>
#include <rdmakit/device.h>
#include <rdmakit/mem.h>
#include <rdmakit/ops.h>
#include <rdmakit/pattern.h>
#include <rdmakit/qp.h>

#include "unit.h"

/* ---- rk_endpoint_check ---- */

/* An RC endpoint on link_layer: QPN qpn, PSN psn, MTU mtu, the rest 0. */
static struct rk_endpoint rc_ep(uint8_t link_layer, uint32_t qpn, uint32_t psn, enum ibv_mtu mtu)
{
	struct rk_endpoint ep;

	memset(&ep, 0, sizeof(ep));
	ep.transport = RK_RC;
	ep.link_layer = link_layer;
	ep.qpn = qpn;
	ep.psn = psn;
	ep.mtu = mtu;
	return ep;
}

static struct rk_endpoint roce_ep(uint32_t qpn, enum rk_gid_type type, uint32_t index,
				  const char *gid)
{
	struct rk_endpoint ep = rc_ep(IBV_LINK_LAYER_ETHERNET, qpn, 0x123456, IBV_MTU_1024);

	if (inet_pton(AF_INET6, gid, ep.gid.raw) != 1)
		fail_msg("test bug: '%s' is not an IPv6 address", gid);
	ep.gid_type = type;
	ep.gid_index = index;
	return ep;
}

static struct rk_endpoint ib_ep(uint32_t qpn, uint16_t lid)
{
	struct rk_endpoint ep = rc_ep(IBV_LINK_LAYER_INFINIBAND, qpn, 1, IBV_MTU_4096);

	ep.lid = lid;
	ep.gid_type = RK_GID_IB;
	return ep;
}

/* rk_endpoint_check(l, r) refuses with err, why naming each string after
 * err (up to a NULL). */
static void __attribute__((sentinel))
endpoint_refused(const struct rk_endpoint *l, const struct rk_endpoint *r, int err, ...)
{
	char why[256] = "";
	const char *say;
	int ret = rk_endpoint_check(l, r, why, sizeof(why));
	va_list ap;

	if (ret != err)
		fail_msg("QPN 0x%x and 0x%x: %d, expected %d (%s)", l->qpn, r->qpn, ret, err, why);
	va_start(ap, err);
	while ((say = va_arg(ap, const char *)))
		assert_contains(why, say);
	va_end(ap);
}

static void test_endpoint_good_pairs(void **state)
{
	struct rk_endpoint l = roce_ep(0x11, RK_GID_ROCE_V2, 1, "::ffff:198.18.0.1");
	struct rk_endpoint r = roce_ep(0x22, RK_GID_ROCE_V2, 3, "::ffff:198.18.0.2");
	char why[256] = "";

	assert_int_equal(rk_endpoint_check(&l, &r, why, sizeof(why)), 0);
	assert_int_equal(rk_endpoint_check(&r, &l, why, sizeof(why)), 0);

	/* UD and UC too, and the extreme valid QPN and PSN. */
	l.transport = r.transport = RK_UD;
	r.qpn = 0xffffff;
	r.psn = 0xffffff;
	assert_int_equal(rk_endpoint_check(&l, &r, why, sizeof(why)), 0);
	l.transport = r.transport = RK_UC;
	r.psn = 0;
	assert_int_equal(rk_endpoint_check(&l, &r, why, sizeof(why)), 0);

	/* IB: by LID, or by GID with LID 0. */
	l = ib_ep(0x33, 1);
	r = ib_ep(0x44, 7);
	assert_int_equal(rk_endpoint_check(&l, &r, why, sizeof(why)), 0);
	r.lid = 0;
	assert_int_equal(inet_pton(AF_INET6, "fe80::2:c903:ab:cdef", r.gid.raw), 1);
	assert_int_equal(rk_endpoint_check(&l, &r, why, sizeof(why)), 0);

	/* why may be NULL. */
	assert_int_equal(rk_endpoint_check(&l, &r, NULL, 0), 0);
}

static void test_endpoint_transport_mismatch(void **state)
{
	struct rk_endpoint l = roce_ep(0x11, RK_GID_ROCE_V2, 1, "::ffff:198.18.0.1");
	struct rk_endpoint r = roce_ep(0x22, RK_GID_ROCE_V2, 1, "::ffff:198.18.0.2");

	r.transport = RK_UD;
	endpoint_refused(&l, &r, -EPROTO, "RC", "UD", NULL);
	assert_int_equal(rk_endpoint_check(&l, &r, NULL, 0), -EPROTO);
}

static void test_endpoint_link_layer_mismatch(void **state)
{
	struct rk_endpoint l = roce_ep(0x11, RK_GID_ROCE_V2, 1, "::ffff:198.18.0.1");
	struct rk_endpoint r = ib_ep(0x22, 5);

	endpoint_refused(&l, &r, -EPROTO, "Ethernet", "InfiniBand", NULL);
}

static void test_endpoint_roce_zero_gid(void **state)
{
	struct rk_endpoint l = roce_ep(0x11, RK_GID_ROCE_V2, 1, "::ffff:198.18.0.1");
	struct rk_endpoint r = roce_ep(0x22, RK_GID_ROCE_V2, 1, "::");

	endpoint_refused(&l, &r, -EINVAL, "GID", NULL);
	/* A LID does not help on RoCE. */
	r.lid = 5;
	endpoint_refused(&l, &r, -EINVAL, NULL);
}

static void test_endpoint_gid_type_mismatch(void **state)
{
	struct rk_endpoint l = roce_ep(0x11, RK_GID_ROCE_V1, 2, "::ffff:198.18.0.1");
	struct rk_endpoint r = roce_ep(0x22, RK_GID_ROCE_V2, 3, "::ffff:198.18.0.2");

	endpoint_refused(&l, &r, -EPROTO, "RoCE v1", "RoCE v2", "index 2", "index 3", NULL);
}

static void test_endpoint_ib_no_address(void **state)
{
	struct rk_endpoint l = ib_ep(0x11, 1);
	struct rk_endpoint r = ib_ep(0x22, 0);

	endpoint_refused(&l, &r, -EINVAL, "LID 0", NULL);
}

static void test_endpoint_bad_qpn_psn(void **state)
{
	struct rk_endpoint l = roce_ep(0x11, RK_GID_ROCE_V2, 1, "::ffff:198.18.0.1");
	struct rk_endpoint r = roce_ep(0x22, RK_GID_ROCE_V2, 1, "::ffff:198.18.0.2");

	r.qpn = 0;
	endpoint_refused(&l, &r, -EINVAL, "QPN", NULL);
	r.qpn = 0x1000000;
	endpoint_refused(&l, &r, -EINVAL, "0x1000000", NULL);
	r.qpn = 0xffffffff;
	endpoint_refused(&l, &r, -EINVAL, NULL);

	r.qpn = 0x22;
	r.psn = 0x1000000;
	endpoint_refused(&l, &r, -EINVAL, "PSN", "24 bits", NULL);

	/* Same on IB. */
	l = ib_ep(0x11, 1);
	r = ib_ep(0, 2);
	endpoint_refused(&l, &r, -EINVAL, NULL);
}

static void test_endpoint_short_why(void **state)
{
	struct rk_endpoint l = roce_ep(0x11, RK_GID_ROCE_V1, 2, "::ffff:198.18.0.1");
	struct rk_endpoint r = roce_ep(0x22, RK_GID_ROCE_V2, 3, "::ffff:198.18.0.2");
	char why[16];

	memset(why, 'x', sizeof(why));
	assert_int_equal(rk_endpoint_check(&l, &r, why, 10), -EPROTO);
	assert_int_equal(strlen(why), 9);
	assert_int_equal(why[10], 'x');
}

/* ---- rk_path_mtu ---- */

static void test_path_mtu_auto(void **state)
{
	enum ibv_mtu m = 0;
	char why[256];

	assert_int_equal(rk_path_mtu(IBV_MTU_4096, IBV_MTU_1024, 0, &m, why, sizeof(why)), 0);
	assert_int_equal(m, IBV_MTU_1024);
	assert_int_equal(rk_path_mtu(IBV_MTU_1024, IBV_MTU_4096, 0, &m, why, sizeof(why)), 0);
	assert_int_equal(m, IBV_MTU_1024);
	assert_int_equal(rk_path_mtu(IBV_MTU_2048, IBV_MTU_2048, 0, &m, why, sizeof(why)), 0);
	assert_int_equal(m, IBV_MTU_2048);
	assert_int_equal(rk_path_mtu(IBV_MTU_256, IBV_MTU_4096, 0, &m, NULL, 0), 0);
	assert_int_equal(m, IBV_MTU_256);
}

static void test_path_mtu_want(void **state)
{
	enum ibv_mtu m = 0;
	char why[256];

	assert_int_equal(
		rk_path_mtu(IBV_MTU_4096, IBV_MTU_4096, IBV_MTU_1024, &m, why, sizeof(why)), 0);
	assert_int_equal(m, IBV_MTU_1024);
	/* Equal to the smaller side is fine. */
	assert_int_equal(
		rk_path_mtu(IBV_MTU_4096, IBV_MTU_2048, IBV_MTU_2048, &m, why, sizeof(why)), 0);
	assert_int_equal(m, IBV_MTU_2048);
	assert_int_equal(
		rk_path_mtu(IBV_MTU_1024, IBV_MTU_1024, IBV_MTU_1024, &m, why, sizeof(why)), 0);
	assert_int_equal(m, IBV_MTU_1024);
}

static void test_path_mtu_want_too_big(void **state)
{
	enum ibv_mtu m = IBV_MTU_512;
	char why[256] = "";

	/* Above the peer's. */
	assert_int_equal(
		rk_path_mtu(IBV_MTU_4096, IBV_MTU_1024, IBV_MTU_2048, &m, why, sizeof(why)),
		-EINVAL);
	assert_contains(why, "2048");
	assert_contains(why, "1024");
	assert_contains(why, "peer");
	assert_int_equal(m, IBV_MTU_512);

	/* Above this side's. */
	why[0] = '\0';
	assert_int_equal(
		rk_path_mtu(IBV_MTU_1024, IBV_MTU_4096, IBV_MTU_4096, &m, why, sizeof(why)),
		-EINVAL);
	assert_contains(why, "4096");
	assert_contains(why, "1024");
	assert_contains(why, "this side");
	assert_int_equal(m, IBV_MTU_512);
}

static void test_path_mtu_invalid(void **state)
{
	enum ibv_mtu m = IBV_MTU_512;
	char why[256] = "";

	assert_int_equal(
		rk_path_mtu(IBV_MTU_4096, IBV_MTU_4096, (enum ibv_mtu)9, &m, why, sizeof(why)),
		-EINVAL);
	assert_contains(why, "9");
	assert_int_equal(rk_path_mtu((enum ibv_mtu)0, IBV_MTU_4096, 0, &m, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(rk_path_mtu(IBV_MTU_4096, (enum ibv_mtu)6, 0, &m, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(rk_path_mtu(IBV_MTU_4096, (enum ibv_mtu) - 1, 0, &m, NULL, 0), -EINVAL);
	assert_int_equal(m, IBV_MTU_512);
}

/* ---- rk_op_parse / rk_op_str ---- */

static void test_op_round_trip(void **state)
{
	static const char *const names[] = {"SEND", "SEND_IMM",	 "WRITE",   "WRITE_IMM",
					    "READ", "FETCH_ADD", "CMP_SWAP"};

	for (int op = RK_OP_SEND; op <= RK_OP_CMP_SWAP; op++) {
		enum rk_op back = (enum rk_op) - 1;

		assert_string_equal(rk_op_str((enum rk_op)op), names[op]);
		assert_int_equal(rk_op_parse(rk_op_str((enum rk_op)op), &back), 0);
		assert_int_equal(back, op);
	}
	assert_string_equal(rk_op_str((enum rk_op)99), "UNKNOWN");
	assert_string_equal(rk_op_str((enum rk_op) - 1), "UNKNOWN");
}

static void test_op_parse_spellings(void **state)
{
	static const struct {
		const char *text;
		enum rk_op op;
	} ok[] = {
		{"write-imm", RK_OP_WRITE_IMM}, {"cmp-swap", RK_OP_CMP_SWAP},
		{"FETCH_ADD", RK_OP_FETCH_ADD}, {"fetch-add", RK_OP_FETCH_ADD},
		{"send", RK_OP_SEND},		{"Send_Imm", RK_OP_SEND_IMM},
		{"read", RK_OP_READ},		{"write", RK_OP_WRITE},
	};
	static const char *const bad[] = {
		"bogus", "",	  "writeimm", "write-im",
		"sendx", " send", "send ",    "a-very-long-op-name-indeed"};
	enum rk_op op;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		op = (enum rk_op) - 1;
		assert_int_equal(rk_op_parse(ok[i].text, &op), 0);
		assert_string_equal(rk_op_str(op), rk_op_str(ok[i].op));
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret;

		op = RK_OP_READ;
		ret = rk_op_parse(bad[i], &op);
		if (ret != -EINVAL || op != RK_OP_READ)
			fail_msg("rk_op_parse('%s') = %d (op %s), expected -EINVAL", bad[i], ret,
				 rk_op_str(op));
	}
	assert_int_equal(rk_op_parse(NULL, &op), -EINVAL);
}

/* ---- rk_sge_split / rk_mr_contains: a hand-built MR, no verbs calls ---- */

#define MR_LEN 8192

static uint8_t mr_buf[MR_LEN];
static struct ibv_mr fake_ibv_mr = {.lkey = 0x1234, .rkey = 0x5678};

static struct rk_mr fake_mr(void)
{
	struct rk_mr mr = {
		.mr = &fake_ibv_mr,
		.buf = mr_buf,
		.len = MR_LEN,
		.access = IBV_ACCESS_LOCAL_WRITE,
	};
	return mr;
}

static uint64_t base_addr(void)
{
	return (uint64_t)(uintptr_t)mr_buf;
}

static void test_sge_split_three(void **state)
{
	struct rk_mr mr = fake_mr();
	struct ibv_sge sg[3];
	static const uint32_t lens[] = {1366, 1365, 1365};
	uint64_t addr = base_addr();

	assert_int_equal(rk_sge_split(&mr, 0, 4096, 3, sg), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(sg[i].length, lens[i]);
		assert_int_equal(sg[i].addr, addr);
		assert_int_equal(sg[i].lkey, 0x1234);
		addr += sg[i].length;
	}
	assert_int_equal(addr, base_addr() + 4096);

	/* With an offset. */
	assert_int_equal(rk_sge_split(&mr, 100, 10, 3, sg), 3);
	assert_int_equal(sg[0].addr, base_addr() + 100);
	assert_int_equal(sg[0].length, 4);
	assert_int_equal(sg[1].addr, base_addr() + 104);
	assert_int_equal(sg[1].length, 3);
	assert_int_equal(sg[2].addr, base_addr() + 107);
	assert_int_equal(sg[2].length, 3);
}

static void test_sge_split_one(void **state)
{
	struct rk_mr mr = fake_mr();
	struct ibv_sge sg[2], one;

	memset(sg, 0xee, sizeof(sg));
	assert_int_equal(rk_sge_split(&mr, 4096, 4096, 1, sg), 1);
	assert_int_equal(sg[0].addr, base_addr() + 4096);
	assert_int_equal(sg[0].length, 4096);
	assert_int_equal(sg[0].lkey, 0x1234);
	/* Nothing past n is written. */
	assert_int_equal(sg[1].lkey, 0xeeeeeeee);

	/* rk_sge() agrees. */
	one = rk_sge(&mr, 4096, 4096);
	assert_memory_equal(&one, &sg[0], sizeof(one));
}

static void test_sge_split_one_byte_each(void **state)
{
	struct rk_mr mr = fake_mr();
	struct ibv_sge sg[16];

	assert_int_equal(rk_sge_split(&mr, 0, 16, 16, sg), 16);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(sg[i].length, 1);
		assert_int_equal(sg[i].addr, base_addr() + (uint64_t)i);
	}
	/* len 0: n empty pieces. */
	assert_int_equal(rk_sge_split(&mr, 0, 0, 3, sg), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sg[i].length, 0);
}

static void test_sge_split_invalid(void **state)
{
	struct rk_mr mr = fake_mr();
	struct ibv_sge sg[8];

	assert_int_equal(rk_sge_split(&mr, 0, 4, 5, sg), -EINVAL);
	assert_int_equal(rk_sge_split(&mr, 0, 4096, 0, sg), -EINVAL);
	assert_int_equal(rk_sge_split(&mr, 0, 4096, -1, sg), -EINVAL);
	/* Beyond the MR. */
	assert_int_equal(rk_sge_split(&mr, 8000, 200, 2, sg), -EINVAL);
	assert_int_equal(rk_sge_split(&mr, 0, MR_LEN + 1, 1, sg), -EINVAL);
	assert_int_equal(rk_sge_split(&mr, MR_LEN, 1, 1, sg), -EINVAL);
	/* Exactly to the end is fine. */
	assert_int_equal(rk_sge_split(&mr, MR_LEN - 8, 8, 2, sg), 2);
}

/* off + len must not wrap around: an offset near SIZE_MAX is outside the MR. */
static void test_sge_split_offset_overflow(void **state)
{
	struct rk_mr mr = fake_mr();
	struct ibv_sge sg[8];

	assert_int_equal(rk_sge_split(&mr, SIZE_MAX, 2, 1, sg), -EINVAL);
	assert_int_equal(rk_sge_split(&mr, SIZE_MAX - 99, 4096, 4, sg), -EINVAL);
}

/* rk_sge_divide(): n consecutive SGEs covering the whole, the first
 * length % n one byte longer, the key kept; n out of range refused. */
static void test_sge_divide(void **state)
{
	struct ibv_sge whole = {.addr = 0x10000, .length = 10, .lkey = 0x77}, sg[4];
	uint64_t at = whole.addr;

	(void)state;
	assert_int_equal(rk_sge_divide(whole, 3, sg), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(sg[i].addr, at);
		assert_int_equal(sg[i].length, i == 0 ? 4 : 3);
		assert_int_equal(sg[i].lkey, 0x77);
		at += sg[i].length;
	}
	assert_int_equal(at, whole.addr + whole.length);
	assert_int_equal(rk_sge_divide(whole, 1, sg), 1);
	assert_memory_equal(&sg[0], &whole, sizeof(whole));
	assert_int_equal(rk_sge_divide(whole, 0, sg), -EINVAL);
	assert_int_equal(rk_sge_divide(whole, 11, sg), -EINVAL); /* more parts than bytes */
	whole.length = 0;
	assert_int_equal(rk_sge_divide(whole, 4, sg), 4); /* empty: n empty SGEs */
	assert_int_equal(sg[3].length, 0);
}

/* rk_cm_retry_worth(): the errors a server that is not up yet, or busy, gives. */
static void test_cm_retry_worth(void **state)
{
	(void)state;
	assert_true(rk_cm_retry_worth(-ECONNREFUSED));
	assert_true(rk_cm_retry_worth(-EHOSTUNREACH));
	assert_true(rk_cm_retry_worth(-EBUSY));
	assert_false(rk_cm_retry_worth(0));
	assert_false(rk_cm_retry_worth(-ETIMEDOUT));
	assert_false(rk_cm_retry_worth(-ECONNABORTED));
	assert_false(rk_cm_retry_worth(ECONNREFUSED)); /* errors are negative */
}

static void test_mr_contains(void **state)
{
	struct rk_mr mr = fake_mr();
	uint64_t b = base_addr();

	assert_true(rk_mr_contains(&mr, b, MR_LEN)); /* exact fit */
	assert_true(rk_mr_contains(&mr, b, 1));
	assert_true(rk_mr_contains(&mr, b + MR_LEN - 1, 1)); /* last byte */
	assert_true(rk_mr_contains(&mr, b + 100, 200));
	assert_false(rk_mr_contains(&mr, b + MR_LEN, 1)); /* one past the end */
	assert_false(rk_mr_contains(&mr, b + 1, MR_LEN)); /* runs one over */
	assert_false(rk_mr_contains(&mr, b - 1, 1));	  /* before the start */
	assert_false(rk_mr_contains(&mr, b - 1, 2));
	assert_false(rk_mr_contains(&mr, b, MR_LEN + 1)); /* longer than the MR */
	assert_false(rk_mr_contains(&mr, b, UINT64_MAX));
	assert_false(rk_mr_contains(&mr, b + 100, UINT64_MAX - 50)); /* addr + len wraps */
	assert_false(rk_mr_contains(&mr, UINT64_MAX, 1));
	assert_false(rk_mr_contains(&mr, UINT64_MAX - 10, 100));
	assert_false(rk_mr_contains(&mr, 0, 1));
}

/* ---- rk_access_str ---- */

static void test_access_str(void **state)
{
	char buf[128];

	assert_string_equal(rk_access_str(0, buf, sizeof(buf)), "none");
	assert_ptr_equal(rk_access_str(0, buf, sizeof(buf)), buf);
	assert_string_equal(
		rk_access_str(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, buf, sizeof(buf)),
		"LOCAL_WRITE|REMOTE_READ");
	assert_string_equal(rk_access_str(IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE |
						  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
					  buf, sizeof(buf)),
			    "LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC");
	assert_string_equal(rk_access_str(IBV_ACCESS_REMOTE_WRITE, buf, sizeof(buf)),
			    "REMOTE_WRITE");
	/* Unknown bits as hex, after the names. */
	assert_string_equal(rk_access_str(1 << 30, buf, sizeof(buf)), "0x40000000");
	assert_string_equal(rk_access_str(IBV_ACCESS_LOCAL_WRITE | (1 << 30), buf, sizeof(buf)),
			    "LOCAL_WRITE|0x40000000");
}

static void test_access_str_short_buffer(void **state)
{
	char buf[6];

	memset(buf, 'x', sizeof(buf));
	rk_access_str(IBV_ACCESS_LOCAL_WRITE, buf, sizeof(buf));
	assert_string_equal(buf, "LOCAL");
	memset(buf, 'x', sizeof(buf));
	rk_access_str(0, buf, 3);
	assert_string_equal(buf, "no");
	/* len 0 writes nothing. */
	memset(buf, 'x', sizeof(buf));
	rk_access_str(IBV_ACCESS_LOCAL_WRITE, buf, 0);
	assert_int_equal(buf[0], 'x');
}

/* ---- patterns ---- */

#define PAT_LEN 4096

/* Static, so that a failed assertion (a longjmp) leaks nothing. */
static uint8_t pat_buf[3 * 65536];

static void test_pattern_fill_check(void **state)
{
	uint8_t *buf = pat_buf;

	rk_pattern_fill(buf, PAT_LEN, 7);
	assert_int_equal(rk_pattern_check(buf, PAT_LEN, 7), -1);
	for (size_t i = 0; i < PAT_LEN; i++)
		if (buf[i] != rk_pattern_byte(i, 7))
			fail_msg("byte %zu is 0x%02x, rk_pattern_byte says 0x%02x", i, buf[i],
				 rk_pattern_byte(i, 7));

	/* The first corrupted byte is found. */
	buf[3000] ^= 1;
	buf[1000] ^= 0x80;
	assert_int_equal(rk_pattern_check(buf, PAT_LEN, 7), 1000);
	assert_int_equal(rk_pattern_check(buf, 1000, 7), -1);
	buf[1000] ^= 0x80;
	assert_int_equal(rk_pattern_check(buf, PAT_LEN, 7), 3000);
	buf[0] ^= 0xff;
	assert_int_equal(rk_pattern_check(buf, PAT_LEN, 7), 0);
	assert_int_equal(rk_pattern_check(buf, 0, 7), -1);

	/* Zeroed (stale) memory does not pass. */
	memset(buf, 0, PAT_LEN);
	assert_true(rk_pattern_check(buf, PAT_LEN, 7) >= 0);
}

static void test_pattern_seeds_differ(void **state)
{
	uint8_t a[256], b[256];

	for (uint32_t s = 0; s < 1000; s++) {
		rk_pattern_fill(a, sizeof(a), s);
		rk_pattern_fill(b, sizeof(b), s + 1);
		if (rk_buf_diff(a, b, sizeof(a)) < 0)
			fail_msg("seeds %u and %u give the same pattern", s, s + 1);
		if (rk_pattern_check(a, sizeof(a), s + 1) < 0)
			fail_msg("a seed-%u buffer passes the check for seed %u", s, s + 1);
	}
	rk_pattern_fill(a, sizeof(a), 1);
	rk_pattern_fill(b, sizeof(b), 0xffffffffu);
	assert_true(rk_buf_diff(a, b, sizeof(a)) >= 0);
}

/* Stale data written with another seed must not match. The seed only shifts
 * x linearly and the byte only reads bits 0-7 and 24-31 of x, so a seed
 * delta d with d * 40503 == 256 (mod 2^32) leaves the pattern unchanged. */
static void test_pattern_seed_collision(void **state)
{
	static const uint32_t pairs[][2] = {
		{0, 1735886592u},
		{1, 1735886593u},
		{5, 5 + 2u * 1735886592u},
	};
	uint8_t *buf = pat_buf;

	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++) {
		rk_pattern_fill(buf, PAT_LEN, pairs[i][0]);
		if (rk_pattern_check(buf, PAT_LEN, pairs[i][1]) < 0)
			fail_msg("a %d-byte buffer of seed %u passes rk_pattern_check for seed %u",
				 PAT_LEN, pairs[i][0], pairs[i][1]);
	}
}

static void test_pattern_shift_detected(void **state)
{
	uint8_t *buf = pat_buf;

	/* Data one byte late. */
	rk_pattern_fill(buf + 1, PAT_LEN, 3);
	buf[0] = rk_pattern_byte(0, 3);
	assert_true(rk_pattern_check(buf, PAT_LEN, 3) >= 0);
	assert_true(rk_pattern_check(buf, PAT_LEN, 3) <= 1);
	/* Data one byte early. */
	rk_pattern_fill(buf, PAT_LEN + 1, 3);
	assert_true(rk_pattern_check(buf + 1, PAT_LEN, 3) >= 0);
	/* Shifts of a whole 256 bytes too. */
	rk_pattern_fill(buf, PAT_LEN, 3);
	assert_true(rk_pattern_check(buf + 256, PAT_LEN - 256, 3) >= 0);
}

static void test_pattern_large_offsets(void **state)
{
	/* The pattern must not repeat with a period of 64 KiB. */
	const size_t len = sizeof(pat_buf);
	uint8_t *buf = pat_buf;

	rk_pattern_fill(buf, len, 9);
	assert_int_equal(rk_pattern_check(buf, len, 9), -1);
	assert_true(rk_buf_diff(buf, buf + 65536, 65536) >= 0);
	assert_true(rk_buf_diff(buf, buf + 131072, 65536) >= 0);
}

/* rk_text_fill(): the prefix, then readable characters a peer can
 * regenerate from the seed; the prefix is cut to len. */
static void test_text_fill(void **state)
{
	char a[64], b[64];

	(void)state;
	rk_text_fill(a, sizeof(a), "hello ", 5);
	assert_memory_equal(a, "hello ", 6);
	for (size_t i = 6; i < sizeof(a); i++)
		if (!isalnum((unsigned char)a[i]))
			fail_msg("byte %zu is 0x%02x, not a letter or digit", i, (unsigned char)a[i]);
	rk_text_fill(b, sizeof(b), "hello ", 5);
	assert_memory_equal(a, b, sizeof(a)); /* the same seed: the same text */
	rk_text_fill(b, sizeof(b), "hello ", 6);
	assert_memory_equal(a, b, 6);
	assert_memory_not_equal(a + 6, b + 6, sizeof(a) - 6);
	memset(b, 0, sizeof(b));
	rk_text_fill(b, 3, "hello ", 5);
	assert_memory_equal(b, "hel\0", 4);
}

static void test_buf_diff(void **state)
{
	uint8_t a[512], b[512];

	rk_pattern_fill(a, sizeof(a), 11);
	memcpy(b, a, sizeof(b));
	assert_int_equal(rk_buf_diff(a, b, sizeof(a)), -1);
	assert_int_equal(rk_buf_diff(a, b, 0), -1);
	b[511] ^= 1;
	assert_int_equal(rk_buf_diff(a, b, sizeof(a)), 511);
	assert_int_equal(rk_buf_diff(a, b, 511), -1);
	b[123] ^= 0x40;
	assert_int_equal(rk_buf_diff(a, b, sizeof(a)), 123);
	b[0] = (uint8_t)~a[0];
	assert_int_equal(rk_buf_diff(a, b, sizeof(a)), 0);
	/* A copy shifted by one byte differs early. */
	memcpy(b + 1, a, sizeof(a) - 1);
	b[0] = a[0];
	assert_true(rk_buf_diff(a, b, sizeof(a)) >= 0);
	assert_true(rk_buf_diff(a, b, sizeof(a)) <= 2);
}

/* ---- MTU conversions ---- */

static void test_mtu_conversions(void **state)
{
	static const struct {
		enum ibv_mtu mtu;
		int bytes;
	} t[] = {
		{IBV_MTU_256, 256},   {IBV_MTU_512, 512},   {IBV_MTU_1024, 1024},
		{IBV_MTU_2048, 2048}, {IBV_MTU_4096, 4096},
	};
	static const int bad_bytes[] = {0, -1, 1, 128, 255, 1500, 4095, 8192, 9000};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		assert_int_equal(rk_mtu_bytes(t[i].mtu), t[i].bytes);
		assert_int_equal(rk_mtu_from_bytes(t[i].bytes), t[i].mtu);
		assert_int_equal(rk_mtu_from_bytes(rk_mtu_bytes(t[i].mtu)), t[i].mtu);
	}
	assert_int_equal(rk_mtu_bytes((enum ibv_mtu)0), 0);
	assert_int_equal(rk_mtu_bytes((enum ibv_mtu)6), 0);
	assert_int_equal(rk_mtu_bytes((enum ibv_mtu) - 1), 0);
	assert_int_equal(rk_mtu_bytes((enum ibv_mtu)100), 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad_bytes); i++)
		if (rk_mtu_from_bytes(bad_bytes[i]) != 0)
			fail_msg("rk_mtu_from_bytes(%d) = %d, expected 0", bad_bytes[i],
				 (int)rk_mtu_from_bytes(bad_bytes[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoint_good_pairs),
		cmocka_unit_test(test_endpoint_transport_mismatch),
		cmocka_unit_test(test_endpoint_link_layer_mismatch),
		cmocka_unit_test(test_endpoint_roce_zero_gid),
		cmocka_unit_test(test_endpoint_gid_type_mismatch),
		cmocka_unit_test(test_endpoint_ib_no_address),
		cmocka_unit_test(test_endpoint_bad_qpn_psn),
		cmocka_unit_test(test_endpoint_short_why),
		cmocka_unit_test(test_path_mtu_auto),
		cmocka_unit_test(test_path_mtu_want),
		cmocka_unit_test(test_path_mtu_want_too_big),
		cmocka_unit_test(test_path_mtu_invalid),
		cmocka_unit_test(test_op_round_trip),
		cmocka_unit_test(test_op_parse_spellings),
		cmocka_unit_test(test_sge_split_three),
		cmocka_unit_test(test_sge_split_one),
		cmocka_unit_test(test_sge_split_one_byte_each),
		cmocka_unit_test(test_sge_split_invalid),
		cmocka_unit_test(test_sge_split_offset_overflow),
		cmocka_unit_test(test_sge_divide),
		cmocka_unit_test(test_cm_retry_worth),
		cmocka_unit_test(test_mr_contains),
		cmocka_unit_test(test_access_str),
		cmocka_unit_test(test_access_str_short_buffer),
		cmocka_unit_test(test_pattern_fill_check),
		cmocka_unit_test(test_pattern_seeds_differ),
		cmocka_unit_test(test_pattern_seed_collision),
		cmocka_unit_test(test_pattern_shift_detected),
		cmocka_unit_test(test_pattern_large_offsets),
		cmocka_unit_test(test_text_fill),
		cmocka_unit_test(test_buf_diff),
		cmocka_unit_test(test_mtu_conversions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
