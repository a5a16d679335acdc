/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Ping-pong pure logic: RTT statistics, ibv_*_pingpong's text exchange
 * (including what a broken peer might send), rping's info and pattern. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rdmakit/pingpong.h>
#include <rdmakit/rping.h>
#include <rdmakit/stats.h>

#include "unit.h"

static void stats_odd_unsorted(void **state)
{
	const double s[] = {5, 1, 4, 2, 3};
	struct rk_rtt_stats st;

	assert_int_equal(rk_rtt_stats_compute(s, ARRAY_SIZE(s), &st), 0);
	assert_int_equal(st.n, 5);
	assert_close(st.min, 1);
	assert_close(st.max, 5);
	assert_close(st.median, 3);
	assert_close(st.mean, 3);
	assert_close(st.p99, 5); /* rank ceil(4.95) = 5 */
	/* The input is left alone. */
	assert_close(s[0], 5);
}

static void stats_even_median(void **state)
{
	const double s[] = {10, 40, 20, 30};
	struct rk_rtt_stats st;

	assert_int_equal(rk_rtt_stats_compute(s, ARRAY_SIZE(s), &st), 0);
	assert_close(st.median, 25);
	assert_close(st.mean, 25);
	assert_close(st.p99, 40);
}

static void stats_p99_rank(void **state)
{
	double s[200];
	struct rk_rtt_stats st;

	/* 1..200 shuffled a little: p99 is the 198th smallest (ceil(198.0)). */
	for (int i = 0; i < 200; i++)
		s[i] = (double)((i * 7) % 200 + 1);
	assert_int_equal(rk_rtt_stats_compute(s, 200, &st), 0);
	assert_close(st.min, 1);
	assert_close(st.max, 200);
	assert_close(st.p99, 198);
	assert_close(st.median, 100.5);

	/* 100 samples: rank 99. */
	for (int i = 0; i < 100; i++)
		s[i] = (double)(100 - i);
	assert_int_equal(rk_rtt_stats_compute(s, 100, &st), 0);
	assert_close(st.p99, 99);

	/* 101 samples: ceil(99.99) = 100. */
	for (int i = 0; i < 101; i++)
		s[i] = (double)i;
	assert_int_equal(rk_rtt_stats_compute(s, 101, &st), 0);
	assert_close(st.p99, 99);
	assert_close(st.median, 50);
}

static void stats_one_and_none(void **state)
{
	const double one = 42.5;
	struct rk_rtt_stats st = {.n = 77};

	assert_int_equal(rk_rtt_stats_compute(&one, 1, &st), 0);
	assert_close(st.min, 42.5);
	assert_close(st.median, 42.5);
	assert_close(st.p99, 42.5);
	assert_close(st.max, 42.5);
	st.n = 77;
	assert_int_equal(rk_rtt_stats_compute(&one, 0, &st), -EINVAL);
	assert_int_equal(st.n, 77);
	assert_int_equal(rk_rtt_stats_compute(NULL, 3, &st), -EINVAL);
}

/* ---- pingpong ---- */

static struct rk_pp_dest sample_dest(void)
{
	struct rk_pp_dest d;

	memset(&d, 0, sizeof(d));
	d.lid = 0x1a;
	d.qpn = 0x000011;
	d.psn = 0xabcdef;
	/* ::ffff:198.18.0.1 as rxe's RoCE v2 IPv4 GID */
	d.gid.raw[10] = 0xff;
	d.gid.raw[11] = 0xff;
	d.gid.raw[12] = 198;
	d.gid.raw[13] = 18;
	d.gid.raw[14] = 0;
	d.gid.raw[15] = 1;
	return d;
}

static void pp_encode_layout(void **state)
{
	struct rk_pp_dest d = sample_dest();
	char buf[RK_PP_MSG_LEN];

	assert_int_equal(rk_pp_encode(&d, buf, sizeof(buf)), 0);
	/* Exactly what ibv_rc_pingpong's sprintf("%04x:%06x:%06x:%s") writes with
	 * gid_to_wire_gid's 32 digits: the GID's bytes in order. */
	assert_string_equal(buf, "001a:000011:abcdef:00000000000000000000ffffc6120001");
	assert_int_equal(strlen(buf) + 1, RK_PP_MSG_LEN);
}

static void pp_round_trip(void **state)
{
	struct rk_pp_dest d = sample_dest(), got;
	char buf[RK_PP_MSG_LEN], why[160] = "";

	d.lid = 0xffff;
	d.qpn = 0xffffff;
	d.psn = 0;
	for (int i = 0; i < 16; i++)
		d.gid.raw[i] = (uint8_t)(0xf0 + i);
	assert_int_equal(rk_pp_encode(&d, buf, sizeof(buf)), 0);
	assert_int_equal(rk_pp_parse(buf, sizeof(buf), &got, why, sizeof(why)), 0);
	assert_int_equal(got.lid, 0xffff);
	assert_int_equal(got.qpn, 0xffffff);
	assert_int_equal(got.psn, 0);
	assert_memory_equal(got.gid.raw, d.gid.raw, 16);

	/* Upper-case digits are hex too. */
	memcpy(buf + 19, "FEDCBA98765432100123456789ABCDEF", 32);
	assert_int_equal(rk_pp_parse(buf, sizeof(buf), &got, why, sizeof(why)), 0);
	assert_int_equal(got.gid.raw[0], 0xfe);
	assert_int_equal(got.gid.raw[15], 0xef);
}

static void pp_encode_refuses(void **state)
{
	struct rk_pp_dest d = sample_dest();
	char buf[RK_PP_MSG_LEN];

	d.qpn = 0x1000000;
	assert_int_equal(rk_pp_encode(&d, buf, sizeof(buf)), -EINVAL);
	d = sample_dest();
	d.psn = 0x1000000;
	assert_int_equal(rk_pp_encode(&d, buf, sizeof(buf)), -EINVAL);
	d = sample_dest();
	assert_int_equal(rk_pp_encode(&d, buf, sizeof(buf) - 1), -EINVAL);
}

/* Parsing must fail with -EBADMSG, say needle, and leave *dest_p alone. */
static void parse_fails(const char *buf, size_t n, const char *needle)
{
	struct rk_pp_dest got, before;
	char why[160] = "";

	memset(&got, 0x5a, sizeof(got));
	before = got;
	assert_int_equal(rk_pp_parse(buf, n, &got, why, sizeof(why)), -EBADMSG);
	assert_contains(why, needle);
	assert_memory_equal(&got, &before, sizeof(got));
}

/* good with the byte at offset changed to c fails to parse, saying needle. */
static void parse_fails_at(const char *good, int offset, char c, const char *needle)
{
	char bad[RK_PP_MSG_LEN];

	memcpy(bad, good, sizeof(bad));
	bad[offset] = c;
	parse_fails(bad, RK_PP_MSG_LEN, needle);
}

static void pp_parse_malformed(void **state)
{
	struct rk_pp_dest d = sample_dest();
	char good[RK_PP_MSG_LEN], bad[RK_PP_MSG_LEN + 8];

	assert_int_equal(rk_pp_encode(&d, good, sizeof(good)), 0);

	/* Truncated, oversized, empty. */
	parse_fails(good, 20, "20 bytes");
	parse_fails(good, 0, "0 bytes");
	memcpy(bad, good, sizeof(good));
	memset(bad + RK_PP_MSG_LEN, 'x', 8);
	parse_fails(bad, sizeof(bad), "60 bytes");

	/* A non-hex digit in each field, with where it is. */
	parse_fails_at(good, 2, 'g', "LID: 'g' at offset 2");
	parse_fails_at(good, 7, ' ', "QPN: ' ' at offset 7");
	parse_fails_at(good, 17, '-', "PSN: '-' at offset 17");
	parse_fails_at(good, 50, '\n', "GID: byte 0x0a at offset 50");

	/* Separators and the final NUL. */
	parse_fails_at(good, 4, ';', "';' at offset 4 where ':' belongs after the LID");
	parse_fails_at(good, 18, '0', "offset 18 where ':' belongs after the PSN");
	parse_fails_at(good, 51, 'x', "offset 51 where the message ends with NUL");

	/* A short field (sscanf would have taken "1a:"). */
	parse_fails("1a:000011:abcdef:00000000000000000000ffffc6120001\0\0\0", RK_PP_MSG_LEN,
		    "LID: ':' at offset 2");
	/* rdmakit's own binary exchange is not a pingpong message. */
	parse_fails("RDKT\0\1\0\1\0\0\0\x5c", 12, "12 bytes");
}

/* ---- rping ---- */

static void rping_info_layout(void **state)
{
	struct rk_rping_info in = {.addr = 0x0102030405060708ull, .rkey = 0x0a0b0c0d,
				   .size = 64}, out;
	const uint8_t want[16] = {1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d, 0, 0, 0, 64};
	uint8_t buf[RK_RPING_INFO_LEN];
	char why[128] = "";

	rk_rping_info_encode(&in, buf);
	assert_memory_equal(buf, want, 16);
	assert_int_equal(rk_rping_info_decode(buf, 16, &out, why, sizeof(why)), 0);
	assert_true(out.addr == in.addr);
	assert_int_equal(out.rkey, in.rkey);
	assert_int_equal(out.size, in.size);

	memset(&out, 0x33, sizeof(out));
	assert_int_equal(rk_rping_info_decode(buf, 15, &out, why, sizeof(why)), -EBADMSG);
	assert_contains(why, "15 bytes");
	assert_int_equal(out.rkey, 0x33333333);
	assert_int_equal(rk_rping_info_decode(buf, 17, &out, why, sizeof(why)), -EBADMSG);
	assert_contains(why, "17 bytes, not rping's 16-byte");
}

/* rping's client loop, written out as rping.c does it, for comparison. */
static void rping_reference(char *buf, int size, int ping)
{
	int start = 65, cc, i;
	unsigned char c;

	for (int p = 0; p < ping; p++)
		if (++start > 122)
			start = 65;
	cc = snprintf(buf, (size_t)size, "rdma-ping-%d: ", ping);
	for (i = cc, c = (unsigned char)start; i < size; i++) {
		buf[i] = (char)c;
		c++;
		if (c > 122)
			c = 65;
	}
	buf[size - 1] = 0;
}

static void rping_pattern(void **state)
{
	char want[300], got[300];

	for (int ping = 0; ping < 130; ping += 7) {
		for (int size = 1; size <= 300; size += 37) {
			rping_reference(want, size, ping);
			rk_rping_fill(got, (size_t)size, (uint32_t)ping);
			if (memcmp(want, got, (size_t)size))
				fail_msg("ping %d size %d: differs from rping's pattern", ping, size);
			assert_int_equal(rk_rping_check(got, (size_t)size, (uint32_t)ping), -1);
		}
	}
	rk_rping_fill(got, 64, 0);
	assert_memory_equal(got, "rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr", 63);
	assert_int_equal(got[63], 0);
	rk_rping_fill(got, 64, 1);
	assert_int_equal(got[13], 'B');
	/* A changed byte, and the pattern of another ping, are found. */
	got[40] ^= 1;
	assert_int_equal(rk_rping_check(got, 64, 1), 40);
	rk_rping_fill(got, 64, 2);
	assert_int_equal(rk_rping_check(got, 64, 1), 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stats_odd_unsorted),
		cmocka_unit_test(stats_even_median),
		cmocka_unit_test(stats_p99_rank),
		cmocka_unit_test(stats_one_and_none),
		cmocka_unit_test(pp_encode_layout),
		cmocka_unit_test(pp_round_trip),
		cmocka_unit_test(pp_encode_refuses),
		cmocka_unit_test(pp_parse_malformed),
		cmocka_unit_test(rping_info_layout),
		cmocka_unit_test(rping_pattern),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
