/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* blk.conf, the disks of `rdmakit blk attach --all` (src/cli/cli_blkconf.c):
 * every field, comments and blank lines, and each bad line refused as
 * "FILE:LINE: what is wrong". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdmakit/memproto.h>

#include "cli_blkconf.h"

#include "unit.h"

static int parse(const char *text, struct cli_blk_conf *c, char *err, size_t len)
{
	return cli_blk_conf_parse("blk.conf", text, strlen(text), c, err, len);
}

static void test_fields(void **state)
{
	static const char text[] =
		"# HOST PORT SIZE QUEUES [OPTION=VALUE ...]\n"
		"\n"
		"   \t  \n"
		"198.18.0.1 7471 256M 2\n"
		"\t198.18.0.2\t-  1G -   # the defaults\n"
		"fd00::1 7000 4096 64 queue-depth=1024 reconnect-delay=3600 loss-timeout=0 tclass=255\n"
		"10.0.0.1 1 0x2000 1 dscp=26 reconnect-delay=1 loss-timeout=86400 queue-depth=1\r\n"
		"10.0.0.1 65535 8k 3#comment touching the field\n"
		"# last line without a newline\n"
		"fd00:0:0::2 - 4k -";
	struct cli_blk_conf c = {0};
	struct rk_blk_attach_opts o;
	char err[320] = "", server[80];

	(void)state;
	assert_int_equal(parse(text, &c, err, sizeof(err)), 0);
	assert_int_equal(c.n, 6);

	assert_int_equal(c.disks[0].line, 4);
	o = cli_blk_conf_opts(&c.disks[0]);
	assert_string_equal(o.host, "198.18.0.1");
	assert_int_equal(o.port, 7471);
	assert_int_equal(o.size, 256ull << 20);
	assert_int_equal(o.queues, 2);
	assert_int_equal(o.queue_depth, 0);
	assert_int_equal(o.reconnect_delay, 0);
	assert_int_equal(o.loss_timeout, -1);
	assert_int_equal(o.tos, -1);

	assert_int_equal(c.disks[1].line, 5);
	o = cli_blk_conf_opts(&c.disks[1]);
	assert_string_equal(o.host, "198.18.0.2");
	assert_int_equal(o.port, RK_MEM_DEFAULT_PORT);
	assert_int_equal(o.size, 1ull << 30);
	assert_int_equal(o.queues, 0); /* the module's: one per CPU */

	o = cli_blk_conf_opts(&c.disks[2]);
	assert_string_equal(o.host, "fd00::1");
	assert_int_equal(o.port, 7000);
	assert_int_equal(o.size, 4096);
	assert_int_equal(o.queues, 64);
	assert_int_equal(o.queue_depth, 1024);
	assert_int_equal(o.reconnect_delay, 3600);
	assert_int_equal(o.loss_timeout, 0);
	assert_int_equal(o.tos, 255);

	o = cli_blk_conf_opts(&c.disks[3]);
	assert_int_equal(c.disks[3].line, 7);
	assert_int_equal(o.port, 1);
	assert_int_equal(o.size, 0x2000);
	assert_int_equal(o.tos, 26 << 2);
	assert_int_equal(o.reconnect_delay, 1);
	assert_int_equal(o.loss_timeout, 86400);
	assert_int_equal(o.queue_depth, 1);

	o = cli_blk_conf_opts(&c.disks[4]);
	assert_int_equal(o.port, 65535);
	assert_int_equal(o.size, 8192);
	assert_int_equal(o.queues, 3);

	assert_int_equal(c.disks[5].line, 10);
	/* The server as the module's sysfs shows it: the matching key. */
	cli_blk_conf_server(&c.disks[0], server, sizeof(server));
	assert_string_equal(server, "198.18.0.1:7471");
	cli_blk_conf_server(&c.disks[5], server, sizeof(server));
	assert_string_equal(server, "[fd00::2]:7471");
	cli_blk_conf_free(&c);
	assert_null(c.disks);
}

static void test_empty(void **state)
{
	struct cli_blk_conf c = {.n = -1};
	char err[320] = "";

	(void)state;
	assert_int_equal(parse("", &c, err, sizeof(err)), 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(parse("# nothing\n\n  # still nothing\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.n, 0);
	cli_blk_conf_free(&c);
}

struct bad_case {
	const char *text;
	const char *want; /* the whole message */
};

static void test_bad_lines(void **state)
{
	static const struct bad_case cases[] = {
		{"198.18.0.1 7471 256M", "blk.conf:1: 3 fields, want HOST PORT SIZE QUEUES "
		 "[OPTION=VALUE ...]"},
		{"# c\n198.18.0.1\n", "blk.conf:2: 1 field, want HOST PORT SIZE QUEUES "
		 "[OPTION=VALUE ...]"},
		{"\n\nmemhost 7471 1G 2", "blk.conf:3: HOST 'memhost' is not an IPv4 or IPv6 "
		 "address (the module takes no host names)"},
		{"198.18.0.1 0 1G 2", "blk.conf:1: PORT: 0 is outside the range 1..65535"},
		{"198.18.0.1 70000 1G 2", "blk.conf:1: PORT: 70000 is outside the range 1..65535"},
		{"198.18.0.1 x 1G 2", "blk.conf:1: PORT: 'x' is not a number"},
		{"198.18.0.1 - 5000 2", "blk.conf:1: SIZE: 5000 is not a multiple of 4096"},
		{"198.18.0.1 - 0 2", "blk.conf:1: SIZE: 0 is outside the range 4096.."},
		{"198.18.0.1 - - 2", "blk.conf:1: SIZE: '-' is not a non-negative number"},
		{"198.18.0.1 - 1G 0", "blk.conf:1: QUEUES: 0 is outside the range 1..64"},
		{"198.18.0.1 - 1G 65", "blk.conf:1: QUEUES: 65 is outside the range 1..64"},
		{"198.18.0.1 - 1G 2 depth=4", "blk.conf:1: unknown option 'depth' (queue-depth, "
		 "reconnect-delay, loss-timeout, tclass, dscp)"},
		{"198.18.0.1 - 1G 2 queue-depth", "blk.conf:1: 'queue-depth' is not OPTION=VALUE"},
		{"198.18.0.1 - 1G 2 =4", "blk.conf:1: '=4' is not OPTION=VALUE"},
		{"198.18.0.1 - 1G 2 queue-depth=0", "blk.conf:1: queue-depth: 0 is outside the "
		 "range 1..1024"},
		{"198.18.0.1 - 1G 2 queue-depth=1025", "blk.conf:1: queue-depth: 1025 is outside"},
		{"198.18.0.1 - 1G 2 reconnect-delay=0", "blk.conf:1: reconnect-delay: 0 is "
		 "outside the range 1..3600"},
		{"198.18.0.1 - 1G 2 loss-timeout=86401", "blk.conf:1: loss-timeout: 86401 is "
		 "outside the range 0..86400"},
		{"198.18.0.1 - 1G 2 loss-timeout=-1", "blk.conf:1: loss-timeout: '-1' is not a non-negative number"},
		{"198.18.0.1 - 1G 2 tclass=256", "blk.conf:1: tclass: 256 is outside the range "
		 "0..255"},
		{"198.18.0.1 - 1G 2 dscp=64", "blk.conf:1: dscp: 64 is outside the range 0..63"},
		{"198.18.0.1 - 1G 2 dscp=1 tclass=4", "blk.conf:1: give tclass or dscp, not both"},
		{"198.18.0.1 - 1G 2 queue-depth=4 queue-depth=4", "blk.conf:1: option queue-depth "
		 "given twice"},
		{"198.18.0.1 - 1G 2 a=1 b=1 c=1 d=1 e=1 f=1 g=1 h=1 i=1 j=1 k=1 l=1 m=1",
		 "blk.conf:1: more than 16 fields"},
		{"198.18.0.1 - 1G\v 2", "blk.conf:1: a control character (0x0b)"},
		{"ok\n198.18.0.1 - 1G 2\x7f", "blk.conf:1: 1 field"},
		{"198.18.0.1 - 1G 2\n\n198.18.0.1 - 1G 2\x7f", "blk.conf:3: a control character "
		 "(0x7f)"},
	};
	struct cli_blk_conf c = {.n = -7};
	char err[320];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		err[0] = '\0';
		if (parse(cases[i].text, &c, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' was taken", cases[i].text);
		if (strncmp(err, cases[i].want, strlen(cases[i].want)))
			fail_msg("'%s': \"%s\", want \"%s...\"", cases[i].text, err, cases[i].want);
		assert_int_equal(c.n, -7); /* set only on success */
	}
}

static void test_nul_and_limits(void **state)
{
	static const char nul[] = "198.18.0.1 - 1G 2\n198.18.0.1\0 - 1G 2\n";
	struct cli_blk_conf c = {0};
	char err[320] = "", *big;
	size_t n = 0;

	(void)state;
	assert_int_equal(cli_blk_conf_parse("f", nul, sizeof(nul) - 1, &c, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "f:2: a NUL byte");

	/* CLI_BLK_CONF_MAX_DISKS lines are taken, one more is refused. */
	big = malloc((CLI_BLK_CONF_MAX_DISKS + 1) * 32);
	assert_non_null(big);
	for (int i = 0; i < CLI_BLK_CONF_MAX_DISKS; i++)
		n += (size_t)sprintf(big + n, "10.0.0.%d - 4k -\n", i % 250);
	assert_int_equal(cli_blk_conf_parse("f", big, n, &c, err, sizeof(err)), 0);
	assert_int_equal(c.n, CLI_BLK_CONF_MAX_DISKS);
	assert_int_equal(c.disks[CLI_BLK_CONF_MAX_DISKS - 1].line, CLI_BLK_CONF_MAX_DISKS);
	cli_blk_conf_free(&c);
	n += (size_t)sprintf(big + n, "10.0.0.1 - 4k -\n");
	assert_int_equal(cli_blk_conf_parse("f", big, n, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "f:257: more than 256 disks");
	free(big);
}

static void test_read_file(void **state)
{
	char path[] = "/tmp/rdmakit-blkconf-XXXXXX", err[320] = "";
	struct cli_blk_conf c = {0};
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("# two disks\n198.18.0.1 7471 256M 2\n198.18.0.1 7471 128M 1\nbad\n", f);
	fclose(f);
	assert_int_equal(cli_blk_conf_read(path, &c, err, sizeof(err)), -EINVAL);
	assert_contains(err, path);
	assert_contains(err, ":4: 1 field");

	f = fopen(path, "w");
	assert_non_null(f);
	fputs("198.18.0.1 7471 256M 2\n198.18.0.1 7471 128M 1\n", f);
	fclose(f);
	assert_int_equal(cli_blk_conf_read(path, &c, err, sizeof(err)), 0);
	assert_int_equal(c.n, 2);
	cli_blk_conf_free(&c);
	unlink(path);
	assert_int_equal(cli_blk_conf_read(path, &c, err, sizeof(err)), -ENOENT);
	assert_contains(err, "No such file");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_nul_and_limits),
		cmocka_unit_test(test_read_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
