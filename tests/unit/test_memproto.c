/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The remote-memory protocol's pure parts and rkblk's user-space side:
 * memserver's request checks, the region message, reject decoding, --allow
 * CIDR blocks, the attach string, and `blk list` over a sysfs tree made
 * here (plain files: no device, no module). */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdmakit/blk.h>
#include <rdmakit/memserver.h>
#include <rdmakit/wire.h>

#include "unit.h"

static struct rk_mem_req req(uint16_t queue, uint16_t queues, uint64_t session, uint64_t size)
{
	struct rk_mem_req r = {
		.magic = htobe32(RK_MEM_MAGIC), .version = htobe16(RK_MEM_VERSION),
		.queue = htobe16(queue), .queues = htobe16(queues),
		.session = htobe64(session), .size = htobe64(size),
	};
	return r;
}

static int check(struct rk_mem_req r, size_t len, char *why, size_t why_len)
{
	uint8_t buf[56] = {0};
	struct rk_mem_request out;

	memcpy(buf, &r, sizeof(r));
	return rk_mem_request_check(buf, len, 1u << 30, &out, why, why_len);
}

static void test_request_good(void **state)
{
	struct rk_mem_req r = req(3, 4, 0x1122334455667788ull, 8192);
	struct rk_mem_request out;
	char why[160] = "";

	(void)state;
	/* RoCE pads the REQ's private data to 56 bytes: accepted. */
	assert_int_equal(rk_mem_request_check(&r, sizeof(r), 0, &out, why, sizeof(why)), 0);
	assert_int_equal(out.queue, 3);
	assert_int_equal(out.queues, 4);
	assert_int_equal(out.session, 0x1122334455667788ull);
	assert_int_equal(out.size, 8192);
	assert_int_equal(out.flags, 0);
	r.flags = htobe16(RK_MEM_REQ_SENDS_FIRST);
	assert_int_equal(rk_mem_request_check(&r, sizeof(r), 0, &out, why, sizeof(why)), 0);
	assert_int_equal(out.flags, RK_MEM_REQ_SENDS_FIRST);
	assert_int_equal(check(req(0, 1, 0, 1u << 30), 56, why, sizeof(why)), 0);
}

/* check() refuses r (len bytes of private data) with err, why naming needle
 * (when not NULL). */
static void refused(struct rk_mem_req r, size_t len, int err, const char *needle)
{
	char why[160] = "";
	int ret = check(r, len, why, sizeof(why));

	if (ret != err)
		fail_msg("request expected to say \"%s\": %d, expected %d (%s)",
			 needle ? needle : "", ret, err, why);
	if (needle)
		assert_contains(why, needle);
}

static void test_request_bad(void **state)
{
	/* The header's fields, one wrong at a time in req(0, 1, 0, 4096). */
	static const struct {
		uint32_t magic;
		uint16_t version, flags;
		uint32_t reserved;
		int err;
		const char *why;
	} bad_header[] = {
		{0x52444b54, RK_MEM_VERSION, 0, 0, -EBADMSG, "magic 0x52444b54 is not RKMS"},
		/* rdmakit's own CM private data: its clients named */
		{0x52444b54, RK_MEM_VERSION, 0, 0, -EBADMSG,
		 "(0x524b4d53): an rdmakit rc, ping or bench client, not rkblk"},
		{0x12345678, RK_MEM_VERSION, 0, 0, -EBADMSG, "magic 0x12345678 is not RKMS"},
		{RK_MEM_MAGIC, 7, 0, 0, -EPROTONOSUPPORT, "protocol version 7"},
		{RK_MEM_MAGIC, RK_MEM_VERSION, 2, 0, -EBADMSG, "flags 0x2: only 0x1"},
		{RK_MEM_MAGIC, RK_MEM_VERSION, 3, 0, -EBADMSG, "flags 0x3"},
		{RK_MEM_MAGIC, RK_MEM_VERSION, 0, 5, -EBADMSG, "reserved is 0x5"},
	};
	/* req()'s arguments out of their ranges (against --max-size 1 GiB). */
	static const struct {
		uint16_t queue, queues;
		uint64_t session, size;
		int err;
		const char *why; /* NULL: the return alone is checked */
	} bad_req[] = {
		{0, 0, 0, 4096, -EINVAL, "queues 0 is outside 1..64"},
		{0, 65, 0, 4096, -EINVAL, NULL},
		{2, 2, 9, 4096, -EINVAL, "queue 2 is not below queues 2"},
		{1, 2, 0, 4096, -EINVAL, "only queue 0 may"},
		{0, 1, 0, 0, -EINVAL, "size 0"},
		{0, 1, 0, 4097, -EINVAL, "size 4097 is not a multiple of 4096"},
		{0, 1, 0, (1ull << 30) + 4096, -ENOSPC, "--max-size 1073741824"},
	};
	struct rk_mem_req r;
	char why[160];

	(void)state;
	assert_int_equal(check(req(0, 1, 0, 4096), 12, why, sizeof(why)), -EBADMSG);
	assert_string_equal(why, "private data is 12 bytes, expected 32");
	assert_int_equal(rk_mem_request_check(NULL, 0, 0, NULL, why, sizeof(why)), -EBADMSG);
	assert_string_equal(why, "private data is 0 bytes, expected 32");
	for (size_t i = 0; i < ARRAY_SIZE(bad_header); i++) {
		r = req(0, 1, 0, 4096);
		r.magic = htobe32(bad_header[i].magic);
		r.version = htobe16(bad_header[i].version);
		r.flags = htobe16(bad_header[i].flags);
		r.reserved = htobe32(bad_header[i].reserved);
		refused(r, 32, bad_header[i].err, bad_header[i].why);
	}
	r = req(0, 1, 0, 4096);
	r.magic = htobe32(0x12345678);
	assert_int_equal(check(r, 32, why, sizeof(why)), -EBADMSG);
	assert_not_contains(why, "rdmakit"); /* only RDKT is named rdmakit's */
	for (size_t i = 0; i < ARRAY_SIZE(bad_req); i++) {
		r = req(bad_req[i].queue, bad_req[i].queues, bad_req[i].session, bad_req[i].size);
		refused(r, 32, bad_req[i].err, bad_req[i].why);
	}
}

static void test_region_and_reject(void **state)
{
	struct rk_mem_region m;
	const uint8_t *b = (const uint8_t *)&m;
	struct rk_msg msg = {.type = RK_MSG_ERROR};
	uint8_t buf[RK_WIRE_MAX_LEN];
	char text[RK_MEM_REJECT_TEXT + 1];
	int code;

	(void)state;
	rk_mem_region_encode(5, 0x0102030405060708ull, 0x1000, 8192, 0xabcd, RK_MEM_REGION_NEW, &m);
	assert_int_equal(b[0], 0x52); /* "RKMS", big endian */
	assert_int_equal(b[3], 0x53);
	assert_int_equal(be16toh(m.queue), 5);
	assert_int_equal(b[8], 0x01);
	assert_int_equal(b[15], 0x08);
	assert_int_equal(be64toh(m.length), 8192);
	assert_int_equal(be32toh(m.rkey), 0xabcd);
	assert_int_equal(be32toh(m.flags), RK_MEM_REGION_NEW);
	/* A reject is rdmakit's ERROR message: memproto.h's layout. */
	msg.u.error.code = -EACCES;
	snprintf(msg.u.error.text, sizeof(msg.u.error.text), "client 1.2.3.4 is not in --allow");
	assert_int_equal(rk_wire_encode(&msg, buf, sizeof(buf)), RK_MEM_REJECT_LEN);
	assert_int_equal(be32toh(((struct rk_mem_reject *)buf)->magic), RK_MEM_REJECT_MAGIC);
	assert_int_equal(be16toh(((struct rk_mem_reject *)buf)->type), RK_MEM_REJECT_TYPE);
	assert_int_equal(rk_mem_reject_decode(buf, RK_MEM_REJECT_LEN, &code, text, sizeof(text)),
			 0);
	assert_int_equal(code, -EACCES);
	assert_string_equal(text, "client 1.2.3.4 is not in --allow");
	assert_int_equal(rk_mem_reject_decode(buf, 12, &code, text, sizeof(text)), -EBADMSG);
	buf[0] ^= 1;
	assert_int_equal(rk_mem_reject_decode(buf, RK_MEM_REJECT_LEN, &code, text, sizeof(text)),
			 -EBADMSG);
}

static struct sockaddr_in6 sa6(const char *ip)
{
	struct sockaddr_in6 s = {.sin6_family = AF_INET6};

	assert_int_equal(inet_pton(AF_INET6, ip, &s.sin6_addr), 1);
	return s;
}

static struct sockaddr_in sa4(const char *ip)
{
	struct sockaddr_in s = {.sin_family = AF_INET};

	assert_int_equal(inet_pton(AF_INET, ip, &s.sin_addr), 1);
	return s;
}

/* Whether the block text (which must parse) holds the address ip: an IPv6
 * one (with a colon) as a sockaddr_in6, else as a sockaddr_in. */
static bool cidr_holds(const char *text, const char *ip)
{
	struct rk_cidr c;
	char why[160] = "";
	int ret = rk_cidr_parse(text, &c, why, sizeof(why));

	if (ret)
		fail_msg("'%s': %d, expected 0 (%s)", text, ret, why);
	if (strchr(ip, ':')) {
		struct sockaddr_in6 b = sa6(ip);

		return rk_cidr_match(&c, (struct sockaddr *)&b);
	} else {
		struct sockaddr_in a = sa4(ip);

		return rk_cidr_match(&c, (struct sockaddr *)&a);
	}
}

static void test_cidr(void **state)
{
	static const struct {
		const char *cidr, *ip;
		bool holds;
	} match[] = {
		{"198.18.0.0/15", "198.19.255.255", true},
		{"198.18.0.0/15", "198.20.0.1", false},
		{"198.18.0.0/15", "::ffff:198.18.3.4", true}, /* IPv4-mapped counts as IPv4 */
		{"198.18.0.1", "198.18.0.2", false},
		{"0.0.0.0/0", "198.18.0.2", true},
		{"fd00::/8", "fdff::1", true},
		{"fd00::/8", "fe80::1", false},
		{"fd00::/8", "198.18.0.2", false},
		{"2001:db8::/127", "2001:db8::1", true},
		{"2001:db8::/127", "2001:db8::2", false},
	};
	/* Refusals name what is wrong. */
	static const struct {
		const char *text, *says; /* says NULL: the return alone is checked */
	} bad[] = {
		{"10.0.0.1/8", "address bits are set beyond the prefix length"},
		{"10.0.0.0/33", "prefix length 33 is above 32"},
		{"10.0.0.0/", "not a number"},
		{"10.0.0.0/8x", NULL},
		{"host.example", "not an IPv4 or IPv6 address"},
		{"/8", NULL},
	};
	struct rk_cidr c;
	char why[160], s[64];
	int ret;

	(void)state;
	assert_int_equal(rk_cidr_parse("198.18.0.0/15", &c, why, sizeof(why)), 0);
	assert_string_equal(rk_cidr_str(&c, s, sizeof(s)), "198.18.0.0/15");
	assert_int_equal(rk_cidr_parse("198.18.0.1", &c, why, sizeof(why)), 0);
	assert_int_equal(c.prefix, 32);
	for (size_t i = 0; i < ARRAY_SIZE(match); i++)
		if (cidr_holds(match[i].cidr, match[i].ip) != match[i].holds)
			fail_msg("%s holds %s: %s, expected %s", match[i].cidr, match[i].ip,
				 match[i].holds ? "false" : "true",
				 match[i].holds ? "true" : "false");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		ret = rk_cidr_parse(bad[i].text, &c, why, sizeof(why));
		if (ret != -EINVAL)
			fail_msg("'%s': %d, expected %d (-EINVAL)", bad[i].text, ret, -EINVAL);
		if (bad[i].says)
			assert_contains(why, bad[i].says);
	}
}

/* rk_blk_attach_string() refuses o with -EINVAL, saying needle. */
static void attach_refused(const struct rk_blk_attach_opts *o, const char *needle)
{
	char buf[256], why[160];

	assert_int_equal(rk_blk_attach_string(o, 2, buf, sizeof(buf), why, sizeof(why)),
			 -EINVAL);
	assert_contains(why, needle);
}

static void test_attach_string(void **state)
{
	struct rk_blk_attach_opts o;
	char buf[256], why[160];

	(void)state;
	rk_blk_attach_defaults(&o);
	o.host = "198.18.0.1";
	o.size = 256ull << 20;
	assert_int_equal(rk_blk_attach_string(&o, 2, buf, sizeof(buf), why, sizeof(why)), 0);
	assert_string_equal(buf, "attach host=198.18.0.1,port=7471,size=268435456");
	o.host = "fd00::2";
	o.port = 9000;
	o.queues = 2;
	o.queue_depth = 32;
	o.reconnect_delay = 1;
	o.loss_timeout = 0;
	assert_int_equal(rk_blk_attach_string(&o, 2, buf, sizeof(buf), why, sizeof(why)), 0);
	assert_string_equal(buf, "attach host=fd00::2,port=9000,size=268435456,queues=2,"
				 "queue_depth=32,reconnect_delay=1,loss_timeout=0");
	o.queues = 3;
	attach_refused(&o, "--queues: 3 is above the 2 online CPUs");
	o.queues = 0;
	o.size = 5000;
	attach_refused(&o, "--size: 5000");
	o.size = 4096;
	o.host = "server.example";
	attach_refused(&o, "HOST: 'server.example' is not an IPv4 or IPv6 address");
	o.host = "198.18.0.1";
	o.queue_depth = 1025;
	attach_refused(&o, "--queue-depth: 1025");
	o.queue_depth = 0;
	o.reconnect_delay = 3601;
	attach_refused(&o, "--reconnect-delay");
	o.reconnect_delay = 0;
	o.loss_timeout = 86401;
	attach_refused(&o, "--loss-timeout");
	o.loss_timeout = -1;
	o.tos = 104;
	assert_int_equal(rk_blk_attach_string(&o, 2, buf, sizeof(buf), why, sizeof(why)), 0);
	assert_string_equal(buf, "attach host=198.18.0.1,port=9000,size=4096,tos=104");
	o.tos = 256;
	attach_refused(&o, "--tclass: 256 is outside 0..255");
	o.tos = -1;
	assert_int_equal(rk_blk_attach_string(&o, 2, buf, 20, why, sizeof(why)), -ENOSPC);
}

static void put(const char *dir, const char *disk, const char *attr, const char *value)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, disk);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/rkblk", dir, disk);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/rkblk/%s", dir, disk, attr);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", value);
	fclose(f);
}

static void test_list_and_ctl(void **state)
{
	char dir[] = "/tmp/rk-blk-XXXXXX", cmd[600], answer[RK_BLK_ANSWER_MAX], path[512];
	static const char *attrs[][2] = {
		{"state", "reconnecting"}, {"server", "198.18.0.1:7471"},
		{"session", "00000000deadbeef"}, {"size", "268435456"}, {"queues", "2"},
		{"queue_depth", "128"}, {"inflight", "3"}, {"errors", "0"}, {"reconnects", "4"},
		{"reconnect_delay", "2"}, {"loss_timeout", "60"}, {"tos", "104"},
		{"path_mtu", "1024"},
	};
	struct rk_blk_disk *d;
	int n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++) {
		put(dir, "rkblk10", attrs[i][0], attrs[i][1]);
		if (strcmp(attrs[i][0], "errors"))
			put(dir, "rkblk2", attrs[i][0], attrs[i][1]);
	}
	snprintf(path, sizeof(path), "%s/sda", dir);
	mkdir(path, 0755);
	assert_int_equal(rk_blk_list(dir, &d, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(d[0].name, "rkblk2"); /* numeric order */
	assert_string_equal(d[1].name, "rkblk10");
	assert_string_equal(d[1].state, "reconnecting");
	assert_string_equal(d[1].server, "198.18.0.1:7471");
	assert_string_equal(d[1].session, "00000000deadbeef");
	assert_int_equal(d[1].size, 268435456);
	assert_int_equal(d[1].inflight, 3);
	assert_int_equal(d[1].reconnects, 4);
	assert_int_equal(d[1].tos, 104);
	assert_int_equal(d[1].path_mtu, 1024);
	assert_string_equal(d[1].missing, "");
	assert_string_equal(d[0].missing, "errors");
	free(d);
	/* A missing control file: the module is not loaded. */
	snprintf(path, sizeof(path), "%s/rkblk-ctl", dir);
	assert_int_equal(rk_blk_command(path, "detach rkblk0", answer, sizeof(answer)), -ENOENT);
	/* Run from the build tree: its kmod.sh (tests/cli/hints.sh checks the
	 * installed form, issue 35). */
	assert_contains(answer, "the rkblk module is not loaded (from this build tree: /");
	assert_contains(answer, "/scripts/kmod.sh --host builds it; insmod the rkblk.ko it prints)");
	assert_int_equal(rk_blk_detach(path, "sda", answer, sizeof(answer)), -EINVAL);
	assert_contains(answer, "'sda' is not an rkblk disk name");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_good),
		cmocka_unit_test(test_request_bad),
		cmocka_unit_test(test_region_and_reject),
		cmocka_unit_test(test_cidr),
		cmocka_unit_test(test_attach_string),
		cmocka_unit_test(test_list_and_ctl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
