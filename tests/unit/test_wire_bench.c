/* The benchmark's exchange messages (BENCH_SETUP, BENCH_ROUND, BENCH_RESULT,
 * BENCH_FIN): round trips, the exact byte layout, and refusal of every field
 * out of range, of truncated and padded messages, and of another
 * bench_version. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdmakit/bench.h>
#include <rdmakit/wire.h>

#include "unit.h"

/* A SETUP with every field distinct and the wide ones at their extremes. */
static struct rk_msg setup_msg(void)
{
	struct rk_msg m;
	struct rk_wire_bench_setup *s = &m.u.bench_setup;

	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_BENCH_SETUP;
	s->ep.transport = RK_UC;
	s->ep.link_layer = IBV_LINK_LAYER_ETHERNET;
	s->ep.gid_type = RK_GID_ROCE_V2;
	s->ep.mtu = IBV_MTU_1024;
	s->ep.lid = 0x1234;
	s->ep.qpn = 0xfedcba;
	s->ep.psn = 0x123456;
	s->ep.qkey = 0x11111111;
	s->ep.gid_index = 3;
	for (int i = 0; i < 16; i++)
		s->ep.gid.raw[i] = (uint8_t)(0xa0 + i);
	s->buf_addr = 0xfedcba9876543210ull;
	s->buf_len = 0x8000000000000001ull;
	s->rkey = 0xdeadbeef;
	s->max_size = RK_BENCH_MAX_SIZE;
	s->test = RK_BENCH_WRITE;
	s->mode = RK_BENCH_BW;
	s->transport = RK_UC;
	s->bidir = 1;
	s->qps = RK_BENCH_MAX_QPS;
	s->qp = RK_BENCH_MAX_QPS - 1;
	return m;
}

static struct rk_msg round_msg(void)
{
	struct rk_msg m;

	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_BENCH_ROUND;
	m.u.bench_round.round = 0x01020304;
	m.u.bench_round.size = 65536;
	m.u.bench_round.duration_ms = 0x0a0b0c0d;
	m.u.bench_round.iters = UINT32_MAX;
	return m;
}

static struct rk_msg result_msg(void)
{
	struct rk_msg m;

	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_BENCH_RESULT;
	m.u.bench_result.round = 7;
	m.u.bench_result.qp = RK_BENCH_MAX_QPS - 1;
	m.u.bench_result.elapsed_ns = 0x1122334455667788ull;
	m.u.bench_result.completed = 0xffffffffffffffffull;
	m.u.bench_result.received = 0x8000000000000000ull;
	return m;
}

static size_t encode_ok(const struct rk_msg *m, uint8_t *buf, size_t len)
{
	int ret = rk_wire_encode(m, buf, len);

	if (ret <= 0)
		fail_msg("encode %s: %d", rk_msg_type_str(m->type), ret);
	assert_int_equal((size_t)ret, rk_wire_len(m->type));
	return (size_t)ret;
}

static void decode_ok(const uint8_t *buf, size_t n, struct rk_msg *m)
{
	char why[256] = "";
	int ret = rk_wire_decode(buf, n, m, why, sizeof(why));

	if (ret)
		fail_msg("decode: %d (%s)", ret, why);
}

/* Decode must fail with code, say something containing needle, and leave
 * the output alone. */
static void decode_fails(const uint8_t *buf, size_t n, int code, const char *needle)
{
	struct rk_msg m, untouched;
	char why[256] = "";
	int ret;

	memset(&m, 0xa5, sizeof(m));
	untouched = m;
	ret = rk_wire_decode(buf, n, &m, why, sizeof(why));
	if (ret != code)
		fail_msg("decode of %zu bytes: %d, expected %d (%s)", n, ret, code, why);
	assert_nonempty(why);
	assert_contains(why, needle);
	assert_memory_equal(&m, &untouched, sizeof(m));
}

/* Encode m with one field changed by the caller must be refused, buffer
 * untouched. */
static void encode_refused(const struct rk_msg *m)
{
	uint8_t buf[RK_WIRE_MAX_LEN], before[sizeof(buf)];

	memset(buf, 0x5a, sizeof(buf));
	memcpy(before, buf, sizeof(buf));
	assert_int_equal(rk_wire_encode(m, buf, sizeof(buf)), -EINVAL);
	assert_memory_equal(buf, before, sizeof(buf));
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static void test_len_and_names(void **state)
{
	(void)state;
	assert_int_equal(rk_wire_len(RK_MSG_BENCH_SETUP), 88);
	assert_int_equal(rk_wire_len(RK_MSG_BENCH_ROUND), 32);
	assert_int_equal(rk_wire_len(RK_MSG_BENCH_RESULT), 44);
	assert_int_equal(rk_wire_len(RK_MSG_BENCH_FIN), 12);
	for (int t = RK_MSG_BENCH_SETUP; t <= RK_MSG_BENCH_FIN; t++)
		assert_true(rk_wire_len((enum rk_msg_type)t) <= RK_WIRE_MAX_LEN);
	assert_int_equal(rk_wire_len((enum rk_msg_type)(RK_MSG_BENCH_FIN + 1)), 0);
	assert_string_equal(rk_msg_type_str(RK_MSG_BENCH_SETUP), "BENCH_SETUP");
	assert_string_equal(rk_msg_type_str(RK_MSG_BENCH_ROUND), "BENCH_ROUND");
	assert_string_equal(rk_msg_type_str(RK_MSG_BENCH_RESULT), "BENCH_RESULT");
	assert_string_equal(rk_msg_type_str(RK_MSG_BENCH_FIN), "BENCH_FIN");
}

/* Field by field: the structs have padding a copy need not keep. */
static void setup_equal(const struct rk_wire_bench_setup *a, const struct rk_wire_bench_setup *b)
{
	assert_int_equal(a->ep.transport, b->ep.transport);
	assert_int_equal(a->ep.link_layer, b->ep.link_layer);
	assert_int_equal(a->ep.gid_type, b->ep.gid_type);
	assert_int_equal(a->ep.mtu, b->ep.mtu);
	assert_int_equal(a->ep.lid, b->ep.lid);
	assert_int_equal(a->ep.qpn, b->ep.qpn);
	assert_int_equal(a->ep.psn, b->ep.psn);
	assert_int_equal(a->ep.qkey, b->ep.qkey);
	assert_int_equal(a->ep.gid_index, b->ep.gid_index);
	assert_memory_equal(a->ep.gid.raw, b->ep.gid.raw, sizeof(a->ep.gid.raw));
	assert_int_equal(a->buf_addr, b->buf_addr);
	assert_int_equal(a->buf_len, b->buf_len);
	assert_int_equal(a->rkey, b->rkey);
	assert_int_equal(a->max_size, b->max_size);
	assert_int_equal(a->test, b->test);
	assert_int_equal(a->mode, b->mode);
	assert_int_equal(a->transport, b->transport);
	assert_int_equal(a->bidir, b->bidir);
	assert_int_equal(a->qps, b->qps);
	assert_int_equal(a->qp, b->qp);
}

static void test_round_trips(void **state)
{
	const struct rk_msg msgs[] = {setup_msg(), round_msg(), result_msg(),
				      {.type = RK_MSG_BENCH_FIN}};
	uint8_t buf[RK_WIRE_MAX_LEN];
	struct rk_msg m;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
		size_t n = encode_ok(&msgs[i], buf, sizeof(buf));

		memset(&m, 0xa5, sizeof(m));
		decode_ok(buf, n, &m);
		assert_int_equal(m.type, msgs[i].type);
		switch (m.type) {
		case RK_MSG_BENCH_SETUP:
			setup_equal(&m.u.bench_setup, &msgs[i].u.bench_setup);
			break;
		case RK_MSG_BENCH_ROUND:
			assert_int_equal(m.u.bench_round.round, msgs[i].u.bench_round.round);
			assert_int_equal(m.u.bench_round.size, msgs[i].u.bench_round.size);
			assert_int_equal(m.u.bench_round.duration_ms,
					 msgs[i].u.bench_round.duration_ms);
			assert_int_equal(m.u.bench_round.iters, msgs[i].u.bench_round.iters);
			break;
		case RK_MSG_BENCH_RESULT:
			assert_int_equal(m.u.bench_result.round, msgs[i].u.bench_result.round);
			assert_int_equal(m.u.bench_result.qp, msgs[i].u.bench_result.qp);
			assert_int_equal(m.u.bench_result.elapsed_ns,
					 msgs[i].u.bench_result.elapsed_ns);
			assert_int_equal(m.u.bench_result.completed,
					 msgs[i].u.bench_result.completed);
			assert_int_equal(m.u.bench_result.received,
					 msgs[i].u.bench_result.received);
			break;
		default:
			break;
		}
	}
}

/* The bytes, as wire.h documents them: network byte order, fixed offsets. */
static void test_layout(void **state)
{
	struct rk_msg m = setup_msg();
	uint8_t buf[RK_WIRE_MAX_LEN], want[RK_WIRE_MAX_LEN];
	size_t n;

	(void)state;
	n = encode_ok(&m, buf, sizeof(buf));
	assert_int_equal(buf[6], 0x00);
	assert_int_equal(buf[7], RK_MSG_BENCH_SETUP);
	assert_int_equal(buf[11], 88);
	assert_int_equal(buf[12], RK_UC);                   /* endpoint as in HELLO */
	put_be32(want, 0xfedcba);
	assert_memory_equal(buf + 20, want, 4);             /* qpn */
	put_be64(want, 0xfedcba9876543210ull);
	assert_memory_equal(buf + 52, want, 8);             /* buf_addr */
	put_be64(want, 0x8000000000000001ull);
	assert_memory_equal(buf + 60, want, 8);             /* buf_len */
	put_be32(want, 0xdeadbeef);
	assert_memory_equal(buf + 68, want, 4);             /* rkey */
	put_be32(want, RK_BENCH_MAX_SIZE);
	assert_memory_equal(buf + 72, want, 4);             /* max_size */
	assert_int_equal(buf[76] << 8 | buf[77], RK_WIRE_BENCH_VERSION);
	assert_int_equal(buf[78], RK_BENCH_WRITE);
	assert_int_equal(buf[79], RK_BENCH_BW);
	assert_int_equal(buf[80], RK_UC);
	assert_int_equal(buf[81], 1);
	assert_int_equal(buf[82] << 8 | buf[83], RK_BENCH_MAX_QPS);
	assert_int_equal(buf[84] << 8 | buf[85], RK_BENCH_MAX_QPS - 1);
	assert_int_equal(buf[86] | buf[87], 0);
	assert_int_equal(n, 88);

	m = round_msg();
	n = encode_ok(&m, buf, sizeof(buf));
	assert_int_equal(n, 32);
	put_be32(want, 0x01020304);
	put_be32(want + 4, 65536);
	put_be32(want + 8, 0x0a0b0c0d);
	put_be64(want + 12, UINT32_MAX);
	assert_memory_equal(buf + 12, want, 20);

	m = result_msg();
	n = encode_ok(&m, buf, sizeof(buf));
	assert_int_equal(n, 44);
	put_be32(want, 7);
	put_be32(want + 4, RK_BENCH_MAX_QPS - 1);
	put_be64(want + 8, 0x1122334455667788ull);
	put_be64(want + 16, 0xffffffffffffffffull);
	put_be64(want + 24, 0x8000000000000000ull);
	assert_memory_equal(buf + 12, want, 32);
}

/* One byte patched into an encoded SETUP, then decoded. */
struct setup_patch {
	size_t off;
	int width; /* 1, 2 or 4 bytes */
	uint32_t value;
	int code;
	const char *needle;
};

static void test_setup_fields_refused(void **state)
{
	static const struct setup_patch patches[] = {
		{78, 1, RK_BENCH_CMP_SWAP + 1, -EBADMSG, "BENCH_SETUP: test 5"},
		{79, 1, 2, -EBADMSG, "BENCH_SETUP: mode 2"},
		{80, 1, 3, -EBADMSG, "BENCH_SETUP: transport 3"},
		{81, 1, 2, -EBADMSG, "BENCH_SETUP: bidir 2"},
		{82, 2, 0, -EBADMSG, "BENCH_SETUP: qps 0"},
		{82, 2, RK_BENCH_MAX_QPS + 1, -EBADMSG, "BENCH_SETUP: qps 65"},
		{84, 2, RK_BENCH_MAX_QPS, -EBADMSG, "BENCH_SETUP: qp 64 is not below qps 64"},
		{72, 4, 0, -EBADMSG, "BENCH_SETUP: max_size 0"},
		{72, 4, RK_BENCH_MAX_SIZE + 1, -EBADMSG, "BENCH_SETUP: max_size 1073741825"},
		{86, 2, 1, -EBADMSG, "BENCH_SETUP: reserved bytes 86-87"},
		{18, 2, 1, -EBADMSG, "BENCH_SETUP: reserved bytes 18-19"},
		{15, 1, 0, -EBADMSG, "BENCH_SETUP: mtu 0"},
		{12, 1, 3, -EBADMSG, "BENCH_SETUP: transport 3 is not RC"},
		{20, 4, 0x1000000, -EBADMSG, "BENCH_SETUP: qpn 0x1000000"},
		{76, 2, 1, -EPROTONOSUPPORT, "BENCH_SETUP: bench_version 1, this side speaks 2"},
		{76, 2, 3, -EPROTONOSUPPORT, "bench_version 3"},
	};
	struct rk_msg m = setup_msg();
	uint8_t good[RK_WIRE_MAX_LEN], buf[RK_WIRE_MAX_LEN];
	size_t n;

	(void)state;
	n = encode_ok(&m, good, sizeof(good));
	for (size_t i = 0; i < ARRAY_SIZE(patches); i++) {
		const struct setup_patch *p = &patches[i];

		memcpy(buf, good, n);
		if (p->width == 1)
			buf[p->off] = (uint8_t)p->value;
		else if (p->width == 2)
			put_be16(buf + p->off, (uint16_t)p->value);
		else
			put_be32(buf + p->off, p->value);
		decode_fails(buf, n, p->code, p->needle);
	}
}

static void test_round_result_fields_refused(void **state)
{
	struct rk_msg m = round_msg();
	uint8_t buf[RK_WIRE_MAX_LEN];
	size_t n;

	(void)state;
	n = encode_ok(&m, buf, sizeof(buf));
	put_be32(buf + 16, 0);
	decode_fails(buf, n, -EBADMSG, "BENCH_ROUND: size 0 is outside");
	put_be32(buf + 16, RK_BENCH_MAX_SIZE + 1);
	decode_fails(buf, n, -EBADMSG, "BENCH_ROUND: size 1073741825 is outside");
	n = encode_ok(&m, buf, sizeof(buf));
	put_be64(buf + 24, (uint64_t)UINT32_MAX + 1);
	decode_fails(buf, n, -EBADMSG, "BENCH_ROUND: iters 4294967296 is above");

	m = result_msg();
	n = encode_ok(&m, buf, sizeof(buf));
	put_be32(buf + 16, RK_BENCH_MAX_QPS);
	decode_fails(buf, n, -EBADMSG, "BENCH_RESULT: qp 64 is not below 64");
}

/* Cut short, padded, or a header whose length is not the type's. */
static void test_truncated_and_padded(void **state)
{
	const struct rk_msg msgs[] = {setup_msg(), round_msg(), result_msg(),
				      {.type = RK_MSG_BENCH_FIN}};
	uint8_t buf[RK_WIRE_MAX_LEN + 1];
	char needle[80];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
		const char *name = rk_msg_type_str(msgs[i].type);
		size_t n = encode_ok(&msgs[i], buf, sizeof(buf));

		if (n > RK_WIRE_HDR_LEN) {
			snprintf(needle, sizeof(needle), "truncated %s message: %zu of %zu", name,
				 n - 1, n);
			decode_fails(buf, n - 1, -EBADMSG, needle);
		}
		buf[n] = 0;
		snprintf(needle, sizeof(needle), "%zu bytes of %s message followed by 1 extra", n,
			 name);
		decode_fails(buf, n + 1, -EBADMSG, needle);
		put_be32(buf + 8, (uint32_t)n + 1);
		snprintf(needle, sizeof(needle), "a %s message is %zu bytes, this one claims %zu",
			 name, n, n + 1);
		decode_fails(buf, n + 1, -EBADMSG, needle);
	}
}

/* What a decoder refuses, an encoder does not produce. */
static void test_encode_refuses(void **state)
{
	struct rk_msg m;

	(void)state;
	m = setup_msg();
	m.u.bench_setup.test = RK_BENCH_CMP_SWAP + 1;
	encode_refused(&m);
	m = setup_msg();
	m.u.bench_setup.qp = m.u.bench_setup.qps;
	encode_refused(&m);
	m = setup_msg();
	m.u.bench_setup.max_size = 0;
	encode_refused(&m);
	m = setup_msg();
	m.u.bench_setup.ep.mtu = (enum ibv_mtu)0;
	encode_refused(&m);
	m = round_msg();
	m.u.bench_round.iters = (uint64_t)UINT32_MAX + 1;
	encode_refused(&m);
	m = result_msg();
	m.u.bench_result.qp = RK_BENCH_MAX_QPS;
	encode_refused(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_len_and_names),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_setup_fields_refused),
		cmocka_unit_test(test_round_result_fields_refused),
		cmocka_unit_test(test_truncated_and_padded),
		cmocka_unit_test(test_encode_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
