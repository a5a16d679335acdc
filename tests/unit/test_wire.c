/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Exchange messages: round trips, the exact byte layout, and decoding of
 * everything a confused or hostile peer might send. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdmakit/bench.h>
#include <rdmakit/ops.h>
#include <rdmakit/rcflow.h>
#include <rdmakit/wire.h>

#include "unit.h"

/* A HELLO with every field distinct and the wide ones at their extremes. */
static struct rk_msg hello_msg(void)
{
	struct rk_msg m;

	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_HELLO;
	m.u.hello.ep.transport = RK_UD;
	m.u.hello.ep.link_layer = IBV_LINK_LAYER_ETHERNET;
	m.u.hello.ep.gid_type = RK_GID_ROCE_V2;
	m.u.hello.ep.mtu = IBV_MTU_4096;
	m.u.hello.ep.lid = 0xbeef;
	m.u.hello.ep.qpn = 0xffffff;
	m.u.hello.ep.psn = 0xabcdef;
	m.u.hello.ep.qkey = 0x89abcdef;
	m.u.hello.ep.gid_index = 0x01020304;
	for (int i = 0; i < 16; i++)
		m.u.hello.ep.gid.raw[i] = (uint8_t)(0xf0 + i);
	m.u.hello.buf.addr = 0xfedcba9876543210ull;
	m.u.hello.buf.len = 0x8000000000000001ull;
	m.u.hello.buf.rkey = 0xdeadbeef;
	m.u.hello.buf.flags = RK_BUF_DM | RK_BUF_ZERO_BASED;
	m.u.hello.buf.op = 0x11223344;
	m.u.hello.buf.size = 0x55667788;
	m.u.hello.buf.offset = 0xc000000000000abcull;
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

/* Encode in into buf (RK_WIRE_MAX_LEN bytes), decode that into out; the
 * length. */
static size_t round_trip(const struct rk_msg *in, uint8_t *buf, struct rk_msg *out)
{
	size_t n = encode_ok(in, buf, RK_WIRE_MAX_LEN);

	decode_ok(buf, n, out);
	return n;
}

/* Decode must fail with code, say something containing needle, and leave
 * *msg_p alone. */
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
	if (needle)
		assert_contains(why, needle);
	assert_memory_equal(&m, &untouched, sizeof(m));
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

/* ---- lengths and names ---- */

static void test_len_and_names(void **state)
{
	assert_int_equal(rk_wire_len(RK_MSG_HELLO), RK_WIRE_HELLO_LEN);
	assert_int_equal(rk_wire_len(RK_MSG_HELLO), 92);
	/* Header plus 40 bytes of buffer fields, whatever RK_WIRE_CM_HELLO_LEN says;
	 * it must still fit RC's 56 bytes of CM private data. */
	assert_int_equal(rk_wire_len(RK_MSG_CM_HELLO), 52);
	assert_true(rk_wire_len(RK_MSG_CM_HELLO) <= 56);
	assert_int_equal(rk_wire_len(RK_MSG_SYNC), RK_WIRE_SYNC_LEN);
	assert_int_equal(rk_wire_len(RK_MSG_ERROR), RK_WIRE_ERROR_LEN);
	assert_int_equal(rk_wire_len((enum rk_msg_type)0), 0);
	assert_int_equal(rk_wire_len((enum rk_msg_type)(RK_MSG_AUTH_OK + 1)), 0);
	for (int t = RK_MSG_HELLO; t <= RK_MSG_ERROR; t++)
		assert_true(rk_wire_len((enum rk_msg_type)t) <= RK_WIRE_MAX_LEN);

	assert_string_equal(rk_msg_type_str(RK_MSG_HELLO), "HELLO");
	assert_string_equal(rk_msg_type_str(RK_MSG_CM_HELLO), "CM_HELLO");
	assert_string_equal(rk_msg_type_str(RK_MSG_SYNC), "SYNC");
	assert_string_equal(rk_msg_type_str(RK_MSG_ERROR), "ERROR");
	assert_string_equal(rk_msg_type_str((enum rk_msg_type)0), "UNKNOWN");
	assert_string_equal(rk_msg_type_str((enum rk_msg_type)99), "UNKNOWN");
}

/* ---- round trips ---- */

static void test_round_trip_hello(void **state)
{
	struct rk_msg in = hello_msg(), out;
	uint8_t buf[RK_WIRE_MAX_LEN];

	round_trip(&in, buf, &out);
	assert_int_equal(out.type, RK_MSG_HELLO);
	assert_int_equal(out.u.hello.ep.transport, RK_UD);
	assert_int_equal(out.u.hello.ep.link_layer, IBV_LINK_LAYER_ETHERNET);
	assert_int_equal(out.u.hello.ep.gid_type, RK_GID_ROCE_V2);
	assert_int_equal(out.u.hello.ep.mtu, IBV_MTU_4096);
	assert_int_equal(out.u.hello.ep.lid, 0xbeef);
	assert_int_equal(out.u.hello.ep.qpn, 0xffffff);
	assert_int_equal(out.u.hello.ep.psn, 0xabcdef);
	assert_int_equal(out.u.hello.ep.qkey, 0x89abcdef);
	assert_int_equal(out.u.hello.ep.gid_index, 0x01020304);
	assert_memory_equal(out.u.hello.ep.gid.raw, in.u.hello.ep.gid.raw, 16);
	assert_int_equal(out.u.hello.buf.addr, 0xfedcba9876543210ull);
	assert_int_equal(out.u.hello.buf.len, 0x8000000000000001ull);
	assert_int_equal(out.u.hello.buf.rkey, 0xdeadbeef);
	assert_int_equal(out.u.hello.buf.flags, RK_BUF_DM | RK_BUF_ZERO_BASED);
	assert_int_equal(out.u.hello.buf.op, 0x11223344);
	assert_int_equal(out.u.hello.buf.size, 0x55667788);
	assert_int_equal(out.u.hello.buf.offset, 0xc000000000000abcull);
	/* Both were zeroed first, so nothing else may differ either. */
	assert_memory_equal(&out, &in, sizeof(in));

	/* The other extremes: everything 24-bit at its maximum, the rest at 0. */
	in.u.hello.ep.transport = RK_RC;
	in.u.hello.ep.link_layer = IBV_LINK_LAYER_INFINIBAND;
	in.u.hello.ep.gid_type = RK_GID_IB;
	in.u.hello.ep.mtu = IBV_MTU_256;
	in.u.hello.ep.psn = 0xffffff;
	in.u.hello.ep.lid = 0xffff;
	in.u.hello.ep.qkey = 0;
	in.u.hello.buf.flags = 0;
	in.u.hello.buf.addr = UINT64_MAX;
	round_trip(&in, buf, &out);
	assert_memory_equal(&out, &in, sizeof(in));
}

static void test_round_trip_cm_hello(void **state)
{
	struct rk_msg in, out;
	uint8_t buf[RK_WIRE_MAX_LEN];

	memset(&in, 0, sizeof(in));
	in.type = RK_MSG_CM_HELLO;
	in.u.cm.addr = 0x8877665544332211ull;
	in.u.cm.len = 0x0123456789abcdefull;
	in.u.cm.rkey = 0xcafef00d;
	in.u.cm.flags = RK_BUF_DM;
	in.u.cm.op = 3;
	in.u.cm.size = 0xfffffffe;
	in.u.cm.offset = 0xa000000000000001ull;
	round_trip(&in, buf, &out);
	assert_int_equal(out.u.cm.addr, 0x8877665544332211ull);
	assert_int_equal(out.u.cm.len, 0x0123456789abcdefull);
	assert_int_equal(out.u.cm.rkey, 0xcafef00d);
	assert_int_equal(out.u.cm.flags, RK_BUF_DM);
	assert_int_equal(out.u.cm.op, 3);
	assert_int_equal(out.u.cm.size, 0xfffffffe);
	assert_int_equal(out.u.cm.offset, 0xa000000000000001ull);
	assert_memory_equal(&out, &in, sizeof(in));

	/* Same relative order as in a HELLO: buf_addr right after the header. */
	assert_int_equal(buf[12], 0x88);
	assert_int_equal(buf[19], 0x11);
	assert_int_equal(buf[44], 0xa0);
	assert_int_equal(buf[51], 0x01);
}

/* The four AUTH messages: header, then the 32 bytes as they are. */
static void test_round_trip_auth(void **state)
{
	static const enum rk_msg_type types[] = {RK_MSG_AUTH_BEGIN, RK_MSG_AUTH_CHALLENGE,
						 RK_MSG_AUTH_RESPONSE, RK_MSG_AUTH_OK};
	static const char *const names[] = {"AUTH_BEGIN", "AUTH_CHALLENGE", "AUTH_RESPONSE",
					    "AUTH_OK"};
	uint8_t buf[RK_WIRE_MAX_LEN];

	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		struct rk_msg in, out;
		size_t n;

		memset(&in, 0, sizeof(in));
		in.type = types[i];
		for (int b = 0; b < RK_WIRE_AUTH_DATA; b++)
			in.u.auth.data[b] = (uint8_t)(0xff - b * 7 - i);
		n = encode_ok(&in, buf, sizeof(buf));
		assert_int_equal(n, 44);
		assert_int_equal(rk_wire_len(types[i]), RK_WIRE_AUTH_LEN);
		assert_string_equal(rk_msg_type_str(types[i]), names[i]);
		/* type at 6, length at 8, data from 12 */
		assert_int_equal(buf[6] << 8 | buf[7], types[i]);
		assert_int_equal(buf[11], 44);
		assert_memory_equal(buf + 12, in.u.auth.data, RK_WIRE_AUTH_DATA);
		decode_ok(buf, n, &out);
		assert_memory_equal(&out, &in, sizeof(in));
		decode_fails(buf, n - 1, -EBADMSG, "truncated");
		buf[11] = 45;
		decode_fails(buf, n, -EBADMSG, "claims 45");
	}

	/* A CM_HELLO may carry the authentication flag. */
	{
		struct rk_msg in, out;

		memset(&in, 0, sizeof(in));
		in.type = RK_MSG_CM_HELLO;
		in.u.cm.flags = RK_BUF_AUTH;
		round_trip(&in, buf, &out);
		assert_int_equal(out.u.cm.flags, RK_BUF_AUTH);
	}

	/* And the sender's MTU, codes 1-5 (bits 16-18, the flags' byte at 33);
	 * 6 and 7 are no MTU. */
	{
		struct rk_msg in, out;
		size_t n;

		memset(&in, 0, sizeof(in));
		in.type = RK_MSG_CM_HELLO;
		in.u.cm.flags = RK_BUF_AUTH | (uint32_t)IBV_MTU_4096 << RK_BUF_MTU_SHIFT;
		n = round_trip(&in, buf, &out);
		assert_int_equal(out.u.cm.flags, in.u.cm.flags);
		assert_int_equal(buf[33], IBV_MTU_4096);
		buf[33] = 6;
		decode_fails(buf, n, -EBADMSG, "MTU code 6 is not 1-5");
		in.u.cm.flags = 7u << RK_BUF_MTU_SHIFT;
		assert_int_equal(rk_wire_encode(&in, buf, sizeof(buf)), -EINVAL);
	}
}

static void test_round_trip_sync(void **state)
{
	static const struct {
		uint32_t step;
		int32_t status;
	} cases[] = {{0, 0}, {0xffffffff, INT32_MIN}, {0x12345678, -110}, {7, INT32_MAX}};
	uint8_t buf[RK_WIRE_MAX_LEN];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rk_msg in, out;

		memset(&in, 0, sizeof(in));
		in.type = RK_MSG_SYNC;
		in.u.sync.step = cases[i].step;
		in.u.sync.status = cases[i].status;
		round_trip(&in, buf, &out);
		assert_int_equal(out.type, RK_MSG_SYNC);
		assert_int_equal(out.u.sync.step, cases[i].step);
		assert_int_equal(out.u.sync.status, cases[i].status);
		assert_memory_equal(&out, &in, sizeof(in));
	}
}

static void test_round_trip_error(void **state)
{
	struct rk_msg in, out;
	uint8_t buf[RK_WIRE_MAX_LEN];
	size_t n;

	memset(&in, 0, sizeof(in));
	in.type = RK_MSG_ERROR;
	in.u.error.code = -EPROTO;
	snprintf(in.u.error.text, sizeof(in.u.error.text),
		 "the peer uses RC, this side UD: ~all printable~ {}");
	n = round_trip(&in, buf, &out);
	assert_int_equal(out.type, RK_MSG_ERROR);
	assert_int_equal(out.u.error.code, -EPROTO);
	assert_string_equal(out.u.error.text, in.u.error.text);
	assert_memory_equal(&out, &in, sizeof(in));
	/* NUL-padded to the end. */
	for (size_t i = 16 + strlen(in.u.error.text); i < n; i++)
		assert_int_equal(buf[i], 0);

	/* Empty text. */
	memset(in.u.error.text, 0, sizeof(in.u.error.text));
	n = round_trip(&in, buf, &out);
	assert_string_equal(out.u.error.text, "");
}

static void test_error_text_truncated(void **state)
{
	struct rk_msg in, out;
	uint8_t buf[RK_WIRE_MAX_LEN];
	size_t n;

	/* All 112 bytes used and no NUL: the last one gives way to the NUL. */
	memset(&in, 0, sizeof(in));
	in.type = RK_MSG_ERROR;
	in.u.error.code = 1;
	memset(in.u.error.text, 'x', sizeof(in.u.error.text));
	n = encode_ok(&in, buf, sizeof(buf));
	assert_int_equal(buf[n - 1], 0);
	assert_int_equal(buf[n - 2], 'x');
	decode_ok(buf, n, &out);
	assert_int_equal(strlen(out.u.error.text), RK_WIRE_ERROR_TEXT - 1);

	/* 111 characters fit exactly. */
	in.u.error.text[RK_WIRE_ERROR_TEXT - 1] = '\0';
	n = round_trip(&in, buf, &out);
	assert_memory_equal(&out, &in, sizeof(in));
}

/* rk_msg_error(): text that fits is kept whole; longer text is cut to the
 * field and ends in "...". */
static void test_error_text_cut_marked(void **state)
{
	char fits[RK_WIRE_ERROR_TEXT], want[RK_WIRE_ERROR_TEXT];
	struct rk_msg m;

	(void)state;
	memset(fits, 'a', sizeof(fits) - 1);
	fits[sizeof(fits) - 1] = '\0';
	rk_msg_error(&m, -ERANGE, "%s", fits);
	assert_int_equal(m.type, RK_MSG_ERROR);
	assert_int_equal(m.u.error.code, -ERANGE);
	assert_string_equal(m.u.error.text, fits);

	rk_msg_error(&m, -ERANGE, "%sb", fits);
	memcpy(want, fits, sizeof(want));
	memcpy(want + sizeof(want) - 4, "...", 4);
	assert_string_equal(m.u.error.text, want);

	rk_msg_error(&m, 0, "short %d", 7);
	assert_string_equal(m.u.error.text, "short 7");
}

static void __attribute__((format(printf, 3, 4)))
verror(struct rk_msg *m, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rk_msg_verror(m, code, fmt, ap);
	va_end(ap);
}

/* rk_msg_verror(), for a caller with its own varargs: the same message as
 * rk_msg_error(), cut the same way. */
static void test_error_verror(void **state)
{
	char fits[RK_WIRE_ERROR_TEXT];
	struct rk_msg a, b;

	(void)state;
	verror(&a, -EBUSY, "busy with %d of %s", 2, "clients");
	assert_int_equal(a.type, RK_MSG_ERROR);
	assert_int_equal(a.u.error.code, -EBUSY);
	assert_string_equal(a.u.error.text, "busy with 2 of clients");
	memset(fits, 'a', sizeof(fits) - 1);
	fits[sizeof(fits) - 1] = '\0';
	verror(&a, -ERANGE, "%sb", fits);
	rk_msg_error(&b, -ERANGE, "%sb", fits);
	assert_string_equal(a.u.error.text, b.u.error.text);
}

/* ---- the exact layout ---- */

static void test_hello_layout(void **state)
{
	static const uint8_t expected[RK_WIRE_HELLO_LEN] = {
		/* 0: magic "RDKT", version 1, type HELLO, length 92 */
		0x52, 0x44, 0x4b, 0x54, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x5c,
		/* 12: transport UD, link layer Ethernet, RoCE v2, MTU 4096, LID, reserved */
		0x02, 0x02, 0x02, 0x05, 0xbe, 0xef, 0x00, 0x00,
		/* 20: qpn, psn, qkey, gid_index */
		0x00, 0xff, 0xff, 0xff, 0x00, 0xab, 0xcd, 0xef, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x02,
		0x03, 0x04,
		/* 36: gid */
		0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd,
		0xfe, 0xff,
		/* 52: buf_addr, buf_len */
		0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x01,
		/* 68: rkey, buf_flags, op, size */
		0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x03, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
		0x77, 0x88,
		/* 84: offset */
		0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0xbc};
	struct rk_msg m = hello_msg(), out;
	uint8_t buf[RK_WIRE_MAX_LEN + 8];

	/* Encode writes exactly its length and not a byte beyond. */
	memset(buf, 0x77, sizeof(buf));
	assert_int_equal(rk_wire_encode(&m, buf, sizeof(buf)), RK_WIRE_HELLO_LEN);
	for (size_t i = 0; i < RK_WIRE_HELLO_LEN; i++)
		if (buf[i] != expected[i])
			fail_msg("byte %zu is 0x%02x, expected 0x%02x", i, buf[i], expected[i]);
	for (size_t i = RK_WIRE_HELLO_LEN; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0x77);

	/* And the hand-written bytes decode to the same message. */
	decode_ok(expected, sizeof(expected), &out);
	assert_memory_equal(&out, &m, sizeof(m));
}

static void test_sync_error_layout(void **state)
{
	static const uint8_t sync[] = {0x52, 0x44, 0x4b, 0x54, 0x00, 0x01, 0x00, 0x03, 0x00, 0x00,
				       0x00, 0x14, 0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe};
	struct rk_msg m;
	uint8_t buf[RK_WIRE_MAX_LEN];

	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_SYNC;
	m.u.sync.step = 0x01020304;
	m.u.sync.status = -2;
	assert_int_equal(rk_wire_encode(&m, buf, sizeof(buf)), sizeof(sync));
	assert_memory_equal(buf, sync, sizeof(sync));

	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_ERROR;
	m.u.error.code = -5;
	strcpy(m.u.error.text, "no");
	assert_int_equal(rk_wire_encode(&m, buf, sizeof(buf)), RK_WIRE_ERROR_LEN);
	assert_memory_equal(buf + 6, "\x00\x04\x00\x00\x00\x80\xff\xff\xff\xfbno\0", 13);
}

/* ---- headers ---- */

static void test_check_header(void **state)
{
	struct rk_msg m = hello_msg();
	uint8_t buf[RK_WIRE_MAX_LEN];
	char why[256] = "";
	size_t len = 12345;

	encode_ok(&m, buf, sizeof(buf));
	/* The header alone is enough to learn the length. */
	assert_int_equal(rk_wire_check_header(buf, RK_WIRE_HDR_LEN, &len, why, sizeof(why)), 0);
	assert_int_equal(len, RK_WIRE_HELLO_LEN);

	len = 12345;
	assert_int_equal(rk_wire_check_header(buf, 11, &len, why, sizeof(why)), -EBADMSG);
	assert_contains(why, "truncated header: 11 of 12 bytes");
	assert_int_equal(len, 12345);
	assert_int_equal(rk_wire_check_header(buf, 0, &len, NULL, 0), -EBADMSG);
	assert_int_equal(rk_wire_check_header(NULL, 0, &len, why, sizeof(why)), -EBADMSG);
	assert_contains(why, "0 of 12");
}

static void test_truncated(void **state)
{
	struct rk_msg m = hello_msg();
	uint8_t buf[RK_WIRE_MAX_LEN];
	char expect[64];
	size_t n = encode_ok(&m, buf, sizeof(buf));

	for (size_t i = 0; i < n; i++) {
		if (i < RK_WIRE_HDR_LEN)
			snprintf(expect, sizeof(expect), "truncated header: %zu of 12 bytes", i);
		else
			snprintf(expect, sizeof(expect), "truncated HELLO message: %zu of 92 bytes",
				 i);
		decode_fails(buf, i, -EBADMSG, expect);
	}
}

static void test_oversized(void **state)
{
	struct rk_msg m = hello_msg();
	uint8_t buf[RK_WIRE_MAX_LEN + 1];
	uint8_t big[4096];
	size_t n = encode_ok(&m, buf, sizeof(buf));

	decode_fails(buf, n + 1, -EBADMSG, "92 bytes of HELLO message followed by 1 extra");

	/* A header that claims 4096, with all 4096 bytes there. */
	memset(big, 0, sizeof(big));
	memcpy(big, buf, n);
	put_be32(big + 8, 4096);
	decode_fails(big, sizeof(big), -EBADMSG, "oversized");
	decode_fails(big, sizeof(big), -EBADMSG, "4096");
	put_be32(big + 8, 0xffffffff);
	decode_fails(big, sizeof(big), -EBADMSG, "oversized");
}

static void test_bad_magic(void **state)
{
	struct rk_msg m = hello_msg();
	uint8_t buf[RK_WIRE_MAX_LEN];
	char text[] = "0000:000011:000001:00000000:fe800000000000000000000000000001";
	size_t n = encode_ok(&m, buf, sizeof(buf));

	buf[0] = 0x00;
	decode_fails(buf, n, -EBADMSG, "not an rdmakit peer");
	decode_fails(buf, n, -EBADMSG, "0x00444b54");
	buf[0] = 0x52;
	buf[3] = 0x55;
	decode_fails(buf, n, -EBADMSG, "0x52444b55");

	/* What ibv_rc_pingpong sends: LID, QPN, PSN and GID as text. */
	decode_fails((const uint8_t *)text, strlen(text), -EBADMSG, "not an rdmakit peer");
	decode_fails((const uint8_t *)text, strlen(text), -EBADMSG, "text \"0000:000011:\"");
	decode_fails((const uint8_t *)text, strlen(text), -EBADMSG, "0x30303030");
}

static void test_bad_version(void **state)
{
	struct rk_msg m = hello_msg();
	uint8_t buf[RK_WIRE_MAX_LEN];
	size_t n = encode_ok(&m, buf, sizeof(buf)), len;
	char why[256] = "";

	put_be16(buf + 4, 2);
	decode_fails(buf, n, -EPROTONOSUPPORT, "peer speaks exchange version 2, this side 1");
	assert_int_equal(rk_wire_check_header(buf, n, &len, why, sizeof(why)), -EPROTONOSUPPORT);
	put_be16(buf + 4, 0);
	decode_fails(buf, n, -EPROTONOSUPPORT, "version 0");
	/* Another version may have other types and lengths: the version is checked first. */
	put_be16(buf + 4, 0x100);
	put_be16(buf + 6, 77);
	put_be32(buf + 8, 1000);
	decode_fails(buf, n, -EPROTONOSUPPORT, "version 256");
}

static void test_unknown_type(void **state)
{
	static const uint16_t types[] = {0, RK_MSG_AUTH_OK + 1, 0x100, 0xffff};
	struct rk_msg m = hello_msg();
	uint8_t buf[RK_WIRE_MAX_LEN];
	size_t n = encode_ok(&m, buf, sizeof(buf));
	char expect[64];

	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		put_be16(buf + 6, types[i]);
		snprintf(expect, sizeof(expect), "unknown message type %u", types[i]);
		decode_fails(buf, n, -EBADMSG, expect);
	}
}

static void test_length_mismatch(void **state)
{
	struct rk_msg m;
	uint8_t buf[RK_WIRE_MAX_LEN];
	size_t n;

	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_SYNC;
	n = encode_ok(&m, buf, sizeof(buf));
	put_be32(buf + 8, 92);
	decode_fails(buf, n, -EBADMSG, "a SYNC message is 20 bytes, this one claims 92");
	/* Even when that many bytes came. */
	decode_fails(buf, 92, -EBADMSG, "a SYNC message is 20 bytes, this one claims 92");
	put_be32(buf + 8, 0);
	decode_fails(buf, n, -EBADMSG, "claims 0");
	put_be32(buf + 8, 19);
	decode_fails(buf, n, -EBADMSG, "claims 19");

	/* A HELLO header on SYNC-sized data. */
	put_be16(buf + 6, RK_MSG_HELLO);
	put_be32(buf + 8, 20);
	decode_fails(buf, n, -EBADMSG, "a HELLO message is 92 bytes, this one claims 20");
}

/* ---- fields ---- */

static void test_bad_fields(void **state)
{
	static const struct {
		size_t off;
		int width;
		uint32_t value;
		const char *field;
	} cases[] = {
		{12, 1, 3, "transport 3"},
		{12, 1, 7, "transport 7"},
		{12, 1, 0xff, "transport 255"},
		{14, 1, 3, "gid_type 3"},
		{14, 1, 9, "gid_type 9"},
		{15, 1, 0, "mtu 0"},
		{15, 1, 6, "mtu 6"},
		{15, 1, 0xff, "mtu 255"},
		{18, 2, 1, "reserved"},
		{18, 2, 0x8000, "reserved"},
		{20, 4, 0x1000000, "qpn 0x1000000"},
		{20, 4, 0xffffffff, "qpn 0xffffffff"},
		{24, 4, 0x1000000, "psn 0x1000000"},
		{24, 4, 0x80000000, "psn 0x80000000"},
		{72, 4, 0x8, "buf_flags 0x8"},
		{72, 4, 0x80000003, "unknown bits 0x80000000"},
	};
	struct rk_msg m = hello_msg();
	uint8_t good[RK_WIRE_MAX_LEN], buf[RK_WIRE_MAX_LEN];
	size_t n = encode_ok(&m, good, sizeof(good));

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		memcpy(buf, good, n);
		if (cases[i].width == 1)
			buf[cases[i].off] = (uint8_t)cases[i].value;
		else if (cases[i].width == 2)
			put_be16(buf + cases[i].off, (uint16_t)cases[i].value);
		else
			put_be32(buf + cases[i].off, cases[i].value);
		decode_fails(buf, n, -EBADMSG, cases[i].field);
		decode_fails(buf, n, -EBADMSG, "HELLO");
	}

	/* CM_HELLO's buf_flags too. */
	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_CM_HELLO;
	n = encode_ok(&m, buf, sizeof(buf));
	put_be32(buf + 32, 0x10);
	decode_fails(buf, n, -EBADMSG, "CM_HELLO: buf_flags 0x10");
}

static void test_error_text_garbled(void **state)
{
	struct rk_msg m;
	uint8_t good[RK_WIRE_MAX_LEN], buf[RK_WIRE_MAX_LEN];
	size_t n;

	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_ERROR;
	strcpy(m.u.error.text, "hello");
	n = encode_ok(&m, good, sizeof(good));

	/* No NUL anywhere in the text. */
	memcpy(buf, good, n);
	memset(buf + 16, 'a', RK_WIRE_ERROR_TEXT);
	decode_fails(buf, n, -EBADMSG, "no NUL");
	decode_fails(buf, n, -EBADMSG, "garbled");

	/* Control bytes and non-ASCII bytes. */
	memcpy(buf, good, n);
	buf[18] = '\n';
	decode_fails(buf, n, -EBADMSG, "byte 0x0a at offset 2");
	buf[18] = 0x1b;
	decode_fails(buf, n, -EBADMSG, "garbled");
	buf[18] = 0x7f;
	decode_fails(buf, n, -EBADMSG, "garbled");
	buf[18] = 0xc3;
	decode_fails(buf, n, -EBADMSG, "garbled");

	/* Something after the NUL: not the NUL padding the layout asks for. */
	memcpy(buf, good, n);
	buf[16 + RK_WIRE_ERROR_TEXT - 1] = 'z';
	decode_fails(buf, n, -EBADMSG, "follows its NUL");
}

/* ---- encode's checks ---- */

/* Encode must refuse m with code and leave the buffer alone. */
static void encode_refused(const struct rk_msg *m, int code)
{
	uint8_t buf[RK_WIRE_MAX_LEN + 8], before[sizeof(buf)];

	memset(buf, 0x5a, sizeof(buf));
	memcpy(before, buf, sizeof(buf));
	assert_int_equal(rk_wire_encode(m, buf, sizeof(buf)), code);
	assert_memory_equal(buf, before, sizeof(buf));
}

static void test_encode_refuses(void **state)
{
	static const enum rk_msg_type bad_types[] = {0, RK_MSG_AUTH_OK + 1, 0xffff};
	const struct rk_msg good = hello_msg();
	struct rk_msg m;

	for (size_t i = 0; i < ARRAY_SIZE(bad_types); i++) {
		m = good;
		m.type = bad_types[i];
		encode_refused(&m, -EINVAL);
	}
	m = good;
	m.u.hello.ep.transport = (enum rk_transport)3;
	encode_refused(&m, -EINVAL);
	m = good;
	m.u.hello.ep.transport = (enum rk_transport) - 1;
	encode_refused(&m, -EINVAL);
	m = good;
	m.u.hello.ep.gid_type = (enum rk_gid_type)3;
	encode_refused(&m, -EINVAL);
	m = good;
	m.u.hello.ep.mtu = (enum ibv_mtu)0;
	encode_refused(&m, -EINVAL);
	m = good;
	m.u.hello.ep.mtu = (enum ibv_mtu)6;
	encode_refused(&m, -EINVAL);
	m = good;
	m.u.hello.ep.qpn = 0x1000000;
	encode_refused(&m, -EINVAL);
	m = good;
	m.u.hello.ep.psn = 0x1000000;
	encode_refused(&m, -EINVAL);
	m = good;
	m.u.hello.buf.flags = 0x8;
	encode_refused(&m, -EINVAL);

	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_CM_HELLO;
	m.u.cm.flags = 0x100;
	encode_refused(&m, -EINVAL);

	/* Text the peer would refuse as garbled. */
	memset(&m, 0, sizeof(m));
	m.type = RK_MSG_ERROR;
	strcpy(m.u.error.text, "two\nlines");
	encode_refused(&m, -EINVAL);
	m.u.error.text[3] = (char)0xe9;
	encode_refused(&m, -EINVAL);
}

static void test_encode_small_buffer(void **state)
{
	struct rk_msg m = hello_msg();
	uint8_t buf[RK_WIRE_MAX_LEN];

	for (int t = RK_MSG_HELLO; t <= RK_MSG_ERROR; t++) {
		size_t len = rk_wire_len((enum rk_msg_type)t);

		if (t != RK_MSG_HELLO)
			memset(&m.u, 0, sizeof(m.u));
		m.type = (enum rk_msg_type)t;
		memset(buf, 0x5a, sizeof(buf));
		assert_int_equal(rk_wire_encode(&m, buf, len - 1), -ENOSPC);
		assert_int_equal(rk_wire_encode(&m, buf, 0), -ENOSPC);
		assert_int_equal(rk_wire_encode(&m, NULL, 0), -ENOSPC);
		for (size_t i = 0; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 0x5a);
		assert_int_equal(rk_wire_encode(&m, buf, len), (int)len);
	}
}

/* ---- the why buffer ---- */

static void test_why_null_and_short(void **state)
{
	struct rk_msg m = hello_msg(), out;
	uint8_t buf[RK_WIRE_MAX_LEN];
	char why[8];
	size_t n = encode_ok(&m, buf, sizeof(buf));

	assert_int_equal(rk_wire_decode(buf, n, &out, NULL, 0), 0);
	assert_int_equal(rk_wire_decode(buf, n - 1, &out, NULL, 0), -EBADMSG);
	buf[15] = 9;
	assert_int_equal(rk_wire_decode(buf, n, &out, NULL, 0), -EBADMSG);

	memset(why, 'x', sizeof(why));
	assert_int_equal(rk_wire_decode(buf, n, &out, why, sizeof(why)), -EBADMSG);
	assert_int_equal(why[sizeof(why) - 1], '\0');
	assert_string_equal(why, "HELLO: ");

	/* why_len 0: nothing written. */
	memset(why, 'x', sizeof(why));
	assert_int_equal(rk_wire_decode(buf, 3, &out, why, 0), -EBADMSG);
	assert_int_equal(why[0], 'x');
}

/* ---- garbage ---- */

/* xorshift32: deterministic, so a failure reproduces. */
static uint32_t next_rand(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

static void test_garbage(void **state)
{
	struct rk_msg m = hello_msg(), out;
	uint8_t good[RK_WIRE_MAX_LEN], reenc[RK_WIRE_MAX_LEN];
	size_t n = encode_ok(&m, good, sizeof(good));
	uint32_t seed = 0x2545f491;
	int decoded = 0, refused = 0;

	for (int iter = 0; iter < 10000; iter++) {
		/* Exactly sized, so valgrind sees any read past the end. */
		size_t len = n;
		uint8_t *buf;
		char why[256] = "";
		int ret;

		switch (iter % 4) {
		case 0: /* a few bytes flipped */
		case 1:
			buf = malloc(len);
			assert_non_null(buf);
			memcpy(buf, good, len);
			for (uint32_t k = next_rand(&seed) % 4 + 1; k; k--)
				buf[next_rand(&seed) % len] ^= (uint8_t)(next_rand(&seed) | 1);
			break;
		case 2: /* a random length of a valid HELLO, maybe with garbage behind */
			len = next_rand(&seed) % (RK_WIRE_MAX_LEN + 2);
			buf = malloc(len ? len : 1);
			assert_non_null(buf);
			for (size_t i = 0; i < len; i++)
				buf[i] = i < n ? good[i] : (uint8_t)next_rand(&seed);
			break;
		default: /* random bytes, half the time behind a valid header */
			if (iter % 8 == 7) {
				enum rk_msg_type t = (enum rk_msg_type)(next_rand(&seed) % 4 + 1);

				len = rk_wire_len(t);
				buf = malloc(len);
				assert_non_null(buf);
				for (size_t i = 0; i < len; i++)
					buf[i] = (uint8_t)next_rand(&seed);
				memcpy(buf, good, RK_WIRE_HDR_LEN);
				put_be16(buf + 6, (uint16_t)t);
				put_be32(buf + 8, (uint32_t)len);
				break;
			}
			len = next_rand(&seed) % (RK_WIRE_MAX_LEN + 2);
			buf = malloc(len ? len : 1);
			assert_non_null(buf);
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)next_rand(&seed);
			break;
		}

		ret = rk_wire_decode(buf, len, &out, why, sizeof(why));
		if (ret == 0) {
			/* What decodes re-encodes to the same bytes. */
			decoded++;
			assert_int_equal(rk_wire_encode(&out, reenc, sizeof(reenc)), (int)len);
			assert_memory_equal(reenc, buf, len);
		} else {
			refused++;
			if (ret != -EBADMSG && ret != -EPROTONOSUPPORT)
				fail_msg("iteration %d: decode returned %d", iter, ret);
			if (!why[0])
				fail_msg("iteration %d: refused (%d) without a reason", iter, ret);
		}
		free(buf);
	}
	/* Both outcomes were exercised. */
	assert_true(decoded > 0);
	assert_true(refused > 0);
}

/* ---- the benchmark's messages: BENCH_SETUP, BENCH_ROUND, BENCH_RESULT, BENCH_FIN ---- */

/* A SETUP with every field distinct and the wide ones at their extremes. */
static struct rk_msg bench_setup_msg(void)
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
	s->threads = RK_BENCH_MAX_THREADS;
	s->nsizes = 0xfedc;
	s->min_size = 64;
	s->sizes_hash = 0x89abcdef;
	s->duration_ms = 0x0a0b0c0d;
	s->iters = UINT32_MAX;
	return m;
}

static struct rk_msg bench_round_msg(void)
{
	struct rk_msg m = {.type = RK_MSG_BENCH_ROUND,
			   .u.bench_round = {.round = 0x01020304,
					     .size = 65536,
					     .duration_ms = 0x0a0b0c0d,
					     .iters = UINT32_MAX}};

	return m;
}

static struct rk_msg bench_result_msg(void)
{
	struct rk_msg m = {.type = RK_MSG_BENCH_RESULT,
			   .u.bench_result = {.round = 7,
					      .qp = RK_BENCH_MAX_QPS - 1,
					      .elapsed_ns = 0x1122334455667788ull,
					      .completed = 0xffffffffffffffffull,
					      .received = 0x8000000000000000ull}};

	return m;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static void test_bench_len_and_names(void **state)
{
	(void)state;
	assert_int_equal(rk_wire_len(RK_MSG_BENCH_SETUP), 112);
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
	assert_int_equal(a->threads, b->threads);
	assert_int_equal(a->nsizes, b->nsizes);
	assert_int_equal(a->min_size, b->min_size);
	assert_int_equal(a->sizes_hash, b->sizes_hash);
	assert_int_equal(a->duration_ms, b->duration_ms);
	assert_int_equal(a->iters, b->iters);
}

static void test_bench_round_trips(void **state)
{
	const struct rk_msg msgs[] = {bench_setup_msg(), bench_round_msg(), bench_result_msg(),
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
static void test_bench_layout(void **state)
{
	struct rk_msg m = bench_setup_msg();
	uint8_t buf[RK_WIRE_MAX_LEN], want[RK_WIRE_MAX_LEN];
	size_t n;

	(void)state;
	n = encode_ok(&m, buf, sizeof(buf));
	assert_int_equal(buf[6], 0x00);
	assert_int_equal(buf[7], RK_MSG_BENCH_SETUP);
	assert_int_equal(buf[11], 112);
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
	assert_int_equal(buf[86] << 8 | buf[87], RK_BENCH_MAX_THREADS);
	assert_int_equal(buf[88] << 8 | buf[89], 0xfedc);
	assert_int_equal(buf[90] | buf[91], 0);
	put_be32(want, 64);
	put_be32(want + 4, 0x89abcdef);
	put_be32(want + 8, 0x0a0b0c0d);
	put_be64(want + 12, UINT32_MAX);
	assert_memory_equal(buf + 92, want, 20);            /* min_size .. iters */
	assert_int_equal(n, 112);

	m = bench_round_msg();
	n = encode_ok(&m, buf, sizeof(buf));
	assert_int_equal(n, 32);
	put_be32(want, 0x01020304);
	put_be32(want + 4, 65536);
	put_be32(want + 8, 0x0a0b0c0d);
	put_be64(want + 12, UINT32_MAX);
	assert_memory_equal(buf + 12, want, 20);

	m = bench_result_msg();
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

static void test_bench_setup_fields_refused(void **state)
{
	static const struct setup_patch patches[] = {
		{78, 1, RK_BENCH_CMP_SWAP + 1, -EBADMSG, "BENCH_SETUP: test 5"},
		{79, 1, 2, -EBADMSG, "BENCH_SETUP: mode 2"},
		{80, 1, 3, -EBADMSG, "BENCH_SETUP: transport 3"},
		{81, 1, 2, -EBADMSG, "BENCH_SETUP: bidir 2"},
		{82, 2, 0, -EBADMSG, "BENCH_SETUP: qps 0"},
		{82, 2, RK_BENCH_MAX_QPS + 1, -EBADMSG, "BENCH_SETUP: qps"},
		{84, 2, RK_BENCH_MAX_QPS, -EBADMSG, "is not below qps"},
		{72, 4, 0, -EBADMSG, "BENCH_SETUP: max_size 0"},
		{72, 4, RK_BENCH_MAX_SIZE + 1, -EBADMSG, "BENCH_SETUP: max_size 1073741825"},
		{90, 2, 1, -EBADMSG, "BENCH_SETUP: reserved bytes 90-91"},
		{86, 2, 0, -EBADMSG, "BENCH_SETUP: threads 0 is outside"},
		{86, 2, RK_BENCH_MAX_THREADS + 1, -EBADMSG, "BENCH_SETUP: threads"},
		{88, 2, 0, -EBADMSG, "BENCH_SETUP: nsizes is 0"},
		{92, 4, 0, -EBADMSG, "BENCH_SETUP: min_size 0 is outside"},
		{92, 4, RK_BENCH_MAX_SIZE + 1, -EBADMSG, "is outside 1..max_size"},
		{104, 4, 1, -EBADMSG, "BENCH_SETUP: iters 8589934591 is above"},
		{18, 2, 1, -EBADMSG, "BENCH_SETUP: reserved bytes 18-19"},
		{15, 1, 0, -EBADMSG, "BENCH_SETUP: mtu 0"},
		{12, 1, 3, -EBADMSG, "BENCH_SETUP: transport 3 is not RC"},
		{20, 4, 0x1000000, -EBADMSG, "BENCH_SETUP: qpn 0x1000000"},
		{76, 2, 1, -EPROTONOSUPPORT, "BENCH_SETUP: bench_version 1, this side speaks 3"},
		{76, 2, 2, -EPROTONOSUPPORT, "bench_version 2"},
		{76, 2, 4, -EPROTONOSUPPORT, "bench_version 4"},
	};
	struct rk_msg m = bench_setup_msg();
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
	/* Version 2's 88-byte SETUP: refused by its version, not by its length;
	 * 88 bytes claiming this version are malformed. */
	memcpy(buf, good, n);
	put_be32(buf + 8, RK_WIRE_BENCH_SETUP_V2_LEN);
	put_be16(buf + 76, 2);
	decode_fails(buf, RK_WIRE_BENCH_SETUP_V2_LEN, -EPROTONOSUPPORT,
		     "BENCH_SETUP: bench_version 2, this side speaks 3");
	put_be16(buf + 76, RK_WIRE_BENCH_VERSION);
	decode_fails(buf, RK_WIRE_BENCH_SETUP_V2_LEN, -EBADMSG,
		     "a BENCH_SETUP message of bench_version 3 is 112 bytes, this one claims 88");
}

static void test_bench_round_result_fields_refused(void **state)
{
	struct rk_msg m = bench_round_msg();
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

	m = bench_result_msg();
	n = encode_ok(&m, buf, sizeof(buf));
	put_be32(buf + 16, RK_BENCH_MAX_QPS);
	decode_fails(buf, n, -EBADMSG, "BENCH_RESULT: qp");
	decode_fails(buf, n, -EBADMSG, "is not below");
}

/* Cut short, padded, or a header whose length is not the type's. */
static void test_bench_truncated_and_padded(void **state)
{
	const struct rk_msg msgs[] = {bench_setup_msg(), bench_round_msg(), bench_result_msg(),
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
static void test_bench_encode_refuses(void **state)
{
	struct rk_msg m;

	(void)state;
	m = bench_setup_msg();
	m.u.bench_setup.test = RK_BENCH_CMP_SWAP + 1;
	encode_refused(&m, -EINVAL);
	m = bench_setup_msg();
	m.u.bench_setup.qp = m.u.bench_setup.qps;
	encode_refused(&m, -EINVAL);
	m = bench_setup_msg();
	m.u.bench_setup.max_size = 0;
	encode_refused(&m, -EINVAL);
	m = bench_setup_msg();
	m.u.bench_setup.threads = 0;
	encode_refused(&m, -EINVAL);
	m = bench_setup_msg();
	m.u.bench_setup.min_size = RK_BENCH_MAX_SIZE + 1;
	encode_refused(&m, -EINVAL);
	m = bench_setup_msg();
	m.u.bench_setup.ep.mtu = (enum ibv_mtu)0;
	encode_refused(&m, -EINVAL);
	m = bench_round_msg();
	m.u.bench_round.iters = (uint64_t)UINT32_MAX + 1;
	encode_refused(&m, -EINVAL);
	m = bench_result_msg();
	m.u.bench_result.qp = RK_BENCH_MAX_QPS;
	encode_refused(&m, -EINVAL);
}

/* Each command's request code names it; a server refusing another
 * command's client says both, and a code of none of them is said so. */
static void test_op_command(void **state)
{
	static const struct {
		uint32_t op;
		const char *command;
	} codes[] = {
		{RK_OP_SEND + 1, "rc"},  {RK_OP_CMP_SWAP + 1, "rc"}, {RK_WIRE_OP_RC_ALL, "rc"},
		{RK_WIRE_OP_PING, "ping"}, {RK_WIRE_OP_BENCH, "bench"}, {0, "bench"},
		{RK_WIRE_OP_UD, "ud"},	 {RK_WIRE_OP_DOCTOR, "doctor"},
		{RK_OP_CMP_SWAP + 2, NULL}, {0xffffffffu, NULL},
	};
	char why[RK_WIRE_ERROR_TEXT], sent[2 * RK_WIRE_ERROR_TEXT];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(codes); i++) {
		const char *got = rk_wire_op_command(codes[i].op);

		if (codes[i].command)
			assert_string_equal(got ? got : "(null)", codes[i].command);
		else if (got)
			fail_msg("request code 0x%x: \"%s\", expected none", codes[i].op, got);
	}
	assert_int_equal(RK_RCFLOW_OP_ALL, RK_WIRE_OP_RC_ALL);
	rk_wire_op_refusal("bench", RK_WIRE_OP_PING, why, sizeof(why));
	assert_string_equal(why, "this is an rdmakit bench server; the client is rdmakit ping "
				 "(request code 0x50494e47)");
	/* What doctor HOST reads to name another kind of server. */
	rk_wire_op_refusal("rc", RK_WIRE_OP_DOCTOR, why, sizeof(why));
	assert_string_equal(why, "this is an rdmakit rc server; the client is rdmakit doctor "
				 "(request code 0x444f4354)");
	rk_wire_op_refusal("rc", 0x12345678, why, sizeof(why));
	assert_string_equal(why, "this is an rdmakit rc server; request code 0x12345678 is no "
				 "rdmakit command's");
	/* The longest, as the client is told it, fits an ERROR message whole. */
	rk_wire_op_refusal("ping", RK_WIRE_OP_BENCH, why, sizeof(why));
	snprintf(sent, sizeof(sent), "the server refused: %s", why);
	if (strlen(sent) >= RK_WIRE_ERROR_TEXT)
		fail_msg("%zu characters, the text holds %d: %s", strlen(sent),
			 RK_WIRE_ERROR_TEXT - 1, sent);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_len_and_names),
		cmocka_unit_test(test_round_trip_hello),
		cmocka_unit_test(test_round_trip_cm_hello),
		cmocka_unit_test(test_round_trip_sync),
		cmocka_unit_test(test_round_trip_auth),
		cmocka_unit_test(test_round_trip_error),
		cmocka_unit_test(test_error_text_truncated),
		cmocka_unit_test(test_error_text_cut_marked),
		cmocka_unit_test(test_error_verror),
		cmocka_unit_test(test_hello_layout),
		cmocka_unit_test(test_sync_error_layout),
		cmocka_unit_test(test_check_header),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_bad_version),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_length_mismatch),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_error_text_garbled),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_encode_small_buffer),
		cmocka_unit_test(test_why_null_and_short),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_bench_len_and_names),
		cmocka_unit_test(test_bench_round_trips),
		cmocka_unit_test(test_bench_layout),
		cmocka_unit_test(test_bench_setup_fields_refused),
		cmocka_unit_test(test_bench_round_result_fields_refused),
		cmocka_unit_test(test_bench_truncated_and_padded),
		cmocka_unit_test(test_bench_encode_refuses),
		cmocka_unit_test(test_op_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
