/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* perftest's exchange (perftest.h): the pingpong_dest layout as perftest
 * 6.06 puts it on the wire, the version and report messages, and what a
 * broken peer might send, each refused by name. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <rdmakit/perftest.h>

#include "unit.h"

static void dest_layout(void **state)
{
	struct rk_perftest_dest in = {.lid = 0x11, .out_reads = 16, .qpn = 0x123456,
				      .psn = 0xabcdef, .rkey = 0x0a0b0c0d,
				      .vaddr = 0x0102030405060708ull, .srqn = 7, .gid_index = -1},
				out;
	uint8_t buf[RK_PERFTEST_DEST_LEN];
	char why[160] = "";

	(void)state;
	in.gid[0] = 0xfe;
	in.gid[15] = 0x01;
	rk_perftest_dest_encode(&in, buf);
	/* lid, out_reads, qpn, psn, rkey, padding, vaddr, gid, srqn, gid_index */
	assert_int_equal(buf[3], 0x11);
	assert_int_equal(buf[7], 16);
	assert_int_equal(buf[9], 0x12);
	assert_int_equal(buf[11], 0x56);
	assert_int_equal(buf[13], 0xab);
	assert_int_equal(buf[16], 0x0a);
	assert_int_equal(buf[20] | buf[21] | buf[22] | buf[23], 0);
	assert_int_equal(buf[24], 1);
	assert_int_equal(buf[31], 8);
	assert_int_equal(buf[32], 0xfe);
	assert_int_equal(buf[47], 0x01);
	assert_int_equal(buf[51], 7);
	assert_int_equal(buf[52], 0xff);
	assert_int_equal(rk_perftest_dest_decode(buf, sizeof(buf), &out, why, sizeof(why)), 0);
	assert_int_equal(out.qpn, in.qpn);
	assert_int_equal(out.psn, in.psn);
	assert_int_equal(out.rkey, in.rkey);
	assert_true(out.vaddr == in.vaddr);
	assert_int_equal(out.gid_index, -1);

	memset(&out, 0x33, sizeof(out));
	assert_int_equal(rk_perftest_dest_decode(buf, 55, &out, why, sizeof(why)), -EBADMSG);
	assert_contains(why, "55 bytes, not perftest's 56-byte pingpong_dest");
	assert_int_equal(out.rkey, 0x33333333);
	buf[8] = 1; /* QPN 0x01123456 */
	assert_int_equal(rk_perftest_dest_decode(buf, sizeof(buf), &out, why, sizeof(why)),
			 -EBADMSG);
	assert_contains(why, "QP number 0x1123456 does not fit in 24 bits");
	buf[8] = 0;
	buf[12] = 2;
	assert_int_equal(rk_perftest_dest_decode(buf, sizeof(buf), &out, why, sizeof(why)),
			 -EBADMSG);
	assert_contains(why, "PSN");
}

static void version_msgs(void **state)
{
	uint8_t buf[RK_PERFTEST_VERSION_LEN] = "6.06";
	char text[RK_PERFTEST_VERSION_LEN], why[160] = "";

	(void)state;
	assert_int_equal(rk_perftest_version_decode(buf, sizeof(buf), text, why, sizeof(why)), 0);
	assert_string_equal(text, "6.06");
	assert_int_equal(rk_perftest_version_decode(buf, 4, text, why, sizeof(why)), -EBADMSG);
	assert_contains(why, "4 bytes, not perftest's 16-byte version");
	memcpy(buf, "5.60", 5);
	assert_int_equal(rk_perftest_version_decode(buf, sizeof(buf), text, why, sizeof(why)),
			 -EPROTONOSUPPORT);
	assert_contains(why, "perftest 5.60 is older than 5.70");
	memset(buf, '6', sizeof(buf));
	assert_int_equal(rk_perftest_version_decode(buf, sizeof(buf), text, why, sizeof(why)),
			 -EBADMSG);
	assert_contains(why, "no NUL");
	memset(buf, 0, sizeof(buf));
	memcpy(buf, "6.0x", 4);
	assert_int_equal(rk_perftest_version_decode(buf, sizeof(buf), text, why, sizeof(why)),
			 -EBADMSG);
	assert_contains(why, "byte 0x78 at offset 3");
	memcpy(buf, "6..0", 4);
	assert_int_equal(rk_perftest_version_decode(buf, sizeof(buf), text, why, sizeof(why)),
			 -EBADMSG);
	assert_contains(why, "not a number");
	memset(buf, 0, sizeof(buf));
	assert_int_equal(rk_perftest_version_decode(buf, sizeof(buf), text, why, sizeof(why)),
			 -EBADMSG);
	assert_contains(why, "empty");
}

static void report_msgs(void **state)
{
	struct rk_perftest_report r = {.size = 65536, .iters = 2000, .bw_peak = 1.5,
				       .bw_avg = 1.25, .msg_rate = 0.00002};
	uint8_t out[5][8];
	char why[160] = "";

	(void)state;
	rk_perftest_report_encode(&r, out);
	assert_int_equal(out[0][5], 1); /* 65536 big endian */
	assert_int_equal(out[1][6], 0x07);
	assert_int_equal(out[1][7], 0xd0);
	assert_int_equal(out[3][0], 0x3f); /* 1.25: 0x3ff4000000000000 */
	assert_int_equal(out[3][1], 0xf4);
	assert_int_equal(rk_perftest_report_check(&r, true, why, sizeof(why)), 0);
	r.bw_avg = NAN;
	assert_int_equal(rk_perftest_report_check(&r, true, why, sizeof(why)), -EBADMSG);
	assert_contains(why, "average bandwidth is nan");
	r.bw_avg = 1;
	r.msg_rate = -1;
	assert_int_equal(rk_perftest_report_check(&r, true, why, sizeof(why)), -EBADMSG);
	assert_contains(why, "message rate is -1");
	r.msg_rate = 0;
	r.iters = 0;
	assert_int_equal(rk_perftest_report_check(&r, true, why, sizeof(why)), -EBADMSG);
	assert_contains(why, "0 iterations: no run");
	assert_int_equal(rk_perftest_report_check(&r, false, why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dest_layout),
		cmocka_unit_test(version_msgs),
		cmocka_unit_test(report_msgs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
