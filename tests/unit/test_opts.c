/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The strict number parser and the table-driven option parser of the CLI. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli_opts.h"

#include "unit.h"

#define ARGC(argv) ((int)ARRAY_SIZE(argv) - 1)

/* ---- rk_parse_u64 / rk_parse_i64 ---- */

struct u64_case {
	const char *text;
	uint64_t value;
};

static void check_u64_ok(const struct u64_case *cases, size_t n, unsigned int base)
{
	for (size_t i = 0; i < n; i++) {
		char err[160] = "";
		uint64_t v = 0xdeadbeef;
		int ret = rk_parse_u64(cases[i].text, 0, UINT64_MAX, base, &v, err, sizeof(err));

		if (ret != 0 || v != cases[i].value)
			fail_msg("base %u: '%s' -> ret %d value %" PRIu64
				 " (%s), expected %" PRIu64,
				 base, cases[i].text, ret, v, err, cases[i].value);
	}
}

static void check_u64_rejects(const char *const *texts, size_t n, unsigned int base, int expect)
{
	for (size_t i = 0; i < n; i++) {
		char err[160] = "";
		uint64_t v = 0xdeadbeef;
		int ret = rk_parse_u64(texts[i], 0, UINT64_MAX, base, &v, err, sizeof(err));

		if (ret != expect)
			fail_msg("base %u: '%s' -> ret %d value %" PRIu64 ", expected %d", base,
				 texts[i], ret, v, expect);
		if (v != 0xdeadbeef)
			fail_msg("base %u: '%s' wrote %" PRIu64 " on failure", base, texts[i], v);
		if (!err[0])
			fail_msg("base %u: '%s' gave no reason", base, texts[i]);
	}
}

static void test_u64_binary_suffixes(void **state)
{
	static const struct u64_case ok[] = {
		{"0", 0},
		{"4096", 4096},
		{"0x1000", 4096},
		{"0X1000", 4096},
		{"4k", 4096},
		{"4K", 4096},
		{"1M", 1048576},
		{"1m", 1048576},
		{"1G", 1073741824},
		{"4KiB", 4096},
		{"4kB", 4096},
		{"2MiB", 2097152},
		{"16G", 17179869184ull},
		{"18446744073709551615", UINT64_MAX},
		{"010", 10}, /* decimal, never octal */
		{"08", 8},
		{"0xff", 255},
	};

	check_u64_ok(ok, ARRAY_SIZE(ok), 1024);
}

static void test_u64_rejects(void **state)
{
	static const char *const bad[] = {"10x", "",   " 5",  "-1",    "+5", "4kk", "1.5k", "16E",
					  "k",	 "4 ", "4k ", "4KiBx", "0x", "1T",  "4 k",
					  "0x-5", "0x 5", "0x+5", "0xg"};
	static const char *const too_big[] = {"99999999999999999999", "18446744073709551616",
					      "17179869184G", "18014398509481984k"};
	char err[160];
	uint64_t v = 7;

	check_u64_rejects(bad, ARRAY_SIZE(bad), 1024, -EINVAL);
	check_u64_rejects(too_big, ARRAY_SIZE(too_big), 1024, -ERANGE);
	assert_int_equal(rk_parse_u64(NULL, 0, 10, 1024, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(v, 7);

	assert_int_equal(rk_parse_u64("10x", 0, 100, 1024, &v, err, sizeof(err)), -EINVAL);
	assert_contains(err, "'10x'");
}

static void test_u64_range(void **state)
{
	char err[160];
	uint64_t v = 7;

	assert_int_equal(rk_parse_u64("4k", 1, 4096, 1024, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(rk_parse_u64("1", 1, 4096, 1024, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1);

	v = 7;
	assert_int_equal(rk_parse_u64("8192", 1, 4096, 1024, &v, err, sizeof(err)), -ERANGE);
	assert_int_equal(v, 7);
	assert_contains(err, "8192");
	assert_contains(err, "4096");
	assert_contains(err, "1..4096");

	assert_int_equal(rk_parse_u64("4097", 1, 4096, 1024, &v, err, sizeof(err)), -ERANGE);
	assert_contains(err, "4097");

	assert_int_equal(rk_parse_u64("0", 1, 4096, 1024, &v, err, sizeof(err)), -ERANGE);
	assert_contains(err, "0");
	assert_contains(err, "1..4096");

	assert_int_equal(rk_parse_u64("8k", 1, 4096, 1024, &v, err, sizeof(err)), -ERANGE);
	assert_contains(err, "8k");
	assert_int_equal(v, 7);
}

static void test_u64_decimal_suffixes(void **state)
{
	static const struct u64_case ok[] = {
		{"10k", 10000}, {"10K", 10000}, {"2M", 2000000}, {"1G", 1000000000}, {"1000", 1000},
	};
	static const char *const bad[] = {"10x", "4KiB", "1.5M", "-3", ""};
	char err[160];
	uint64_t v;

	check_u64_ok(ok, ARRAY_SIZE(ok), 1000);
	check_u64_rejects(bad, ARRAY_SIZE(bad), 1000, -EINVAL);
	assert_int_equal(rk_parse_u64("10x", 0, UINT64_MAX, 1000, &v, err, sizeof(err)), -EINVAL);
	assert_contains(err, "'10x'");
}

static void test_u64_no_suffix(void **state)
{
	static const struct u64_case ok[] = {{"10", 10}, {"0x10", 16}};
	static const char *const bad[] = {"10k", "1M", "4KiB", "10x"};

	check_u64_ok(ok, ARRAY_SIZE(ok), 0);
	check_u64_rejects(bad, ARRAY_SIZE(bad), 0, -EINVAL);
}

static void test_u64_short_err_buffer(void **state)
{
	char err[8];
	uint64_t v;

	memset(err, 'x', sizeof(err));
	assert_int_equal(rk_parse_u64("10x", 0, 100, 1024, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
}

static void test_i64(void **state)
{
	static const char *const bad[] = {"1x", "", " 1", "0x10", "1.0", "--1", "1k", "- 1"};
	char err[160];
	int64_t v = 0;

	assert_int_equal(rk_parse_i64("-1", -1, 255, &v, err, sizeof(err)), 0);
	assert_int_equal(v, -1);
	assert_int_equal(rk_parse_i64("255", -1, 255, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 255);
	assert_int_equal(rk_parse_i64("0", -1, 255, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 0);
	assert_int_equal(
		rk_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &v, err, sizeof(err)),
		0);
	assert_true(v == INT64_MIN);

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret;

		v = 77;
		err[0] = '\0';
		ret = rk_parse_i64(bad[i], -1000, 1000, &v, err, sizeof(err));
		if (ret != -EINVAL || v != 77 || !err[0])
			fail_msg("'%s' -> ret %d value %" PRId64 " err '%s', expected -EINVAL",
				 bad[i], ret, v, err);
	}
	assert_int_equal(rk_parse_i64(NULL, -1, 1, &v, err, sizeof(err)), -EINVAL);

	v = 77;
	assert_int_equal(rk_parse_i64("256", -1, 255, &v, err, sizeof(err)), -ERANGE);
	assert_contains(err, "256");
	assert_contains(err, "-1..255");
	assert_int_equal(rk_parse_i64("-2", -1, 255, &v, err, sizeof(err)), -ERANGE);
	assert_contains(err, "-2");
	assert_int_equal(
		rk_parse_i64("99999999999999999999", INT64_MIN, INT64_MAX, &v, err, sizeof(err)),
		-ERANGE);
	assert_int_equal(
		rk_parse_i64("-99999999999999999999", INT64_MIN, INT64_MAX, &v, err, sizeof(err)),
		-ERANGE);
	assert_int_equal(v, 77);
}

/* ---- cli_opts_parse ---- */

static bool verbose;
static const char *device;
static uint64_t size, count, timeout_ms;
static int64_t gid_index;

static const struct cli_opt opts[] = {
	{"verbose", 'v', CLI_OPT_FLAG, &verbose, 0, 0, NULL, "say more"},
	{"device", 'd', CLI_OPT_STRING, &device, 0, 0, "NAME", "RDMA device"},
	{"size", 's', CLI_OPT_SIZE, &size, 1, 1u << 30, "BYTES", "message size"},
	{"count", 'n', CLI_OPT_COUNT, &count, 1, 1000000000, "N", "iterations"},
	{"gid-index", 'g', CLI_OPT_INT, &gid_index, -1, 255, "INDEX", "GID index, -1 to choose"},
	{"timeout", 0, CLI_OPT_COUNT, &timeout_ms, 0, 60000, "MS", "time to wait"},
	CLI_OPT_END,
};

static int reset_defaults(void **state)
{
	verbose = false;
	device = NULL;
	size = 4096;
	count = 1000;
	gid_index = -1;
	timeout_ms = 2000;
	return 0;
}

/* Run cli_opts_parse() with fd 2 redirected; what it printed lands in err. */
static int parse_capture(int argc, char **argv, int *first, char *err, size_t err_len)
{
	FILE *tmp = tmpfile();
	int saved, ret;
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	ret = cli_opts_parse("test", opts, argc, argv, first);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, err_len - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return ret;
}

/* cli_opts_parse() refuses argv (NULL-terminated) with -EINVAL, and what it
 * printed names each of the strings after argv (up to a NULL). */
static void __attribute__((sentinel)) parse_refused(char **argv, ...)
{
	char err[512], line[256] = "";
	const char *say;
	int argc = 0, first = -1, ret;
	va_list ap;

	for (; argv[argc]; argc++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " '%s'", argv[argc]);
	ret = parse_capture(argc, argv, &first, err, sizeof(err));
	if (ret != -EINVAL)
		fail_msg("parse of%s: %d, expected %d (-EINVAL)", line, ret, -EINVAL);
	va_start(ap, argv);
	while ((say = va_arg(ap, const char *)))
		assert_contains(err, say);
	va_end(ap);
}

static void test_parse_long_forms(void **state)
{
	char *argv[] = {
		/* clang-format off */
		"test",
		"--verbose",
		"--device", "mlx5_0",
		"--size", "8k",
		"--count", "10k",
		"--gid-index", "3",
		"--timeout", "500",
		"pos1", "pos2",
		NULL,
		/* clang-format on */
	};
	char err[512];
	int first = -1;

	assert_int_equal(parse_capture(ARGC(argv), argv, &first, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_true(verbose);
	assert_string_equal(device, "mlx5_0");
	assert_int_equal(size, 8192);
	assert_int_equal(count, 10000);
	assert_int_equal(gid_index, 3);
	assert_int_equal(timeout_ms, 500);
	assert_int_equal(first, 12);
	assert_string_equal(argv[first], "pos1");
	assert_string_equal(argv[first + 1], "pos2");
}

static void test_parse_short_forms(void **state)
{
	char *argv[] = {"test", "-v", "-d", "rxe0", "-s", "64", "-n", "5", "-g", "-1", "x", NULL};
	char err[512];
	int first = -1;

	gid_index = 7;
	assert_int_equal(parse_capture(ARGC(argv), argv, &first, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_true(verbose);
	assert_string_equal(device, "rxe0");
	assert_int_equal(size, 64);
	assert_int_equal(count, 5);
	assert_int_equal(gid_index, -1);
	assert_int_equal(first, 10);
	assert_string_equal(argv[first], "x");
}

static void test_parse_attached_values(void **state)
{
	char *argv[] = {"test", "--size=4k", "-n7", "-vs1M", "--device=rxe0", NULL};
	int first = -1;
	char err[512];

	assert_int_equal(parse_capture(ARGC(argv), argv, &first, err, sizeof(err)), 0);
	/* the later -s1M wins over --size=4k */
	assert_int_equal(size, 1048576);
	assert_int_equal(count, 7);
	assert_true(verbose);
	assert_string_equal(device, "rxe0");
	assert_int_equal(first, ARGC(argv));
}

static void test_parse_size_eq(void **state)
{
	char *argv[] = {"test", "--size=4k", NULL};
	int first = -1;
	char err[512];

	size = 1;
	assert_int_equal(parse_capture(ARGC(argv), argv, &first, err, sizeof(err)), 0);
	assert_int_equal(size, 4096);
	assert_int_equal(first, 2);
}

static void test_parse_positionals(void **state)
{
	char *none[] = {"test", NULL};
	char *first_pos[] = {"test", "server", "--size", "8k", NULL};
	char *dashdash[] = {"test", "--size", "8k", "--", "--not-an-option", NULL};
	char err[512];
	int first = -1;

	assert_int_equal(parse_capture(ARGC(none), none, &first, err, sizeof(err)), 0);
	assert_int_equal(first, 1);

	/* Options may follow positionals ("rc HOST -s 8k"): argv is permuted so
	 * the positionals come last. */
	assert_int_equal(parse_capture(ARGC(first_pos), first_pos, &first, err, sizeof(err)), 0);
	assert_int_equal(first, 3);
	assert_string_equal(first_pos[first], "server");
	assert_int_equal(size, 8192);

	assert_int_equal(parse_capture(ARGC(dashdash), dashdash, &first, err, sizeof(err)), 0);
	assert_int_equal(size, 8192);
	assert_int_equal(first, 4);
	assert_string_equal(dashdash[first], "--not-an-option");
}

static void test_parse_bad_number_names_option(void **state)
{
	char *argv[] = {"test", "-n", "10x", NULL};
	char err[512];
	int first = -1;

	assert_int_equal(parse_capture(ARGC(argv), argv, &first, err, sizeof(err)), -EINVAL);
	assert_contains(err, "--count");
	assert_contains(err, "'10x'");
	assert_contains(err, "rdmakit test");
	assert_int_equal(count, 1000);
	assert_int_equal(first, -1);
}

static void test_parse_negative_size(void **state)
{
	char *argv[] = {"test", "--size", "-1", NULL};
	char *zero[] = {"test", "--size", "0", NULL};
	char *big[] = {"test", "-s", "2G", NULL};

	parse_refused(argv, "--size", "'-1'", NULL);
	assert_int_equal(size, 4096);

	/* Out of range comes back as -EINVAL too, with the range. */
	parse_refused(zero, "--size", "1..1073741824", NULL);
	parse_refused(big, "--size", "2G", NULL);
	assert_int_equal(size, 4096);
}

static void test_parse_int_out_of_range(void **state)
{
	char *argv[] = {"test", "--gid-index", "256", NULL};

	parse_refused(argv, "--gid-index", "-1..255", NULL);
	assert_int_equal(gid_index, -1);
}

static void test_parse_unknown_option(void **state)
{
	char *lng[] = {"test", "--bogus", NULL};
	char *shrt[] = {"test", "-x", NULL};

	parse_refused(lng, "--bogus", NULL);
	parse_refused(shrt, "-x", NULL);
}

static void test_parse_missing_value(void **state)
{
	char *lng[] = {"test", "--size", NULL};
	char *shrt[] = {"test", "-v", "-s", NULL};

	parse_refused(lng, "--size", "value", NULL);
	parse_refused(shrt, "-s", "value", NULL);
	assert_int_equal(size, 4096);
}

/* A flag given a value: the message must name the flag. */
static void test_parse_flag_with_value(void **state)
{
	char *argv[] = {"test", "--verbose=1", NULL};

	parse_refused(argv, "--verbose", NULL);
	assert_false(verbose);
}

static void test_parse_help(void **state)
{
	char *lng[] = {"test", "--size", "8k", "--help", "pos", NULL};
	char *shrt[] = {"test", "-h", NULL};
	char err[512];
	int first = -1;

	assert_int_equal(parse_capture(ARGC(lng), lng, &first, err, sizeof(err)), 1);
	assert_int_equal(parse_capture(ARGC(shrt), shrt, &first, err, sizeof(err)), 1);
	assert_string_equal(err, "");
}

static void test_parse_empty_string(void **state)
{
	char *sep[] = {"test", "--device", "", NULL};
	char *eq[] = {"test", "--device=", NULL};
	char *shrt[] = {"test", "-d", "", NULL};

	parse_refused(sep, "--device", NULL);
	parse_refused(eq, "--device", NULL);
	parse_refused(shrt, "--device", NULL);
	assert_null(device);
}

static void test_parse_twice(void **state)
{
	char *a[] = {"test", "--size", "8k", "one", NULL};
	char *b[] = {"test", "-n", "7", "-v", "two", "three", NULL};
	char *bad[] = {"test", "--count", "x", NULL};
	char err[512];
	int first = -1;

	assert_int_equal(parse_capture(ARGC(a), a, &first, err, sizeof(err)), 0);
	assert_int_equal(size, 8192);
	assert_int_equal(first, 3);

	assert_int_equal(parse_capture(ARGC(b), b, &first, err, sizeof(err)), 0);
	assert_int_equal(count, 7);
	assert_true(verbose);
	assert_int_equal(first, 4);
	assert_string_equal(b[first], "two");

	/* After a failure too. */
	assert_int_equal(parse_capture(ARGC(bad), bad, &first, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse_capture(ARGC(a), a, &first, err, sizeof(err)), 0);
	assert_int_equal(first, 3);
}

/* A parse that stops inside a cluster of short options ("-hv": help returns
 * at 'h') must not leave getopt pointing into the old argv: the next parse
 * has to start from scratch (optind = 0 in glibc, not 1). */
static void test_parse_twice_after_cluster(void **state)
{
	char *a[] = {"test", "-hv", NULL};
	char *b[] = {"test", "-s", "8k", "pos", NULL};
	char *c[] = {"test", "-xv", NULL};
	char err[512];
	int first = -1;

	assert_int_equal(parse_capture(ARGC(a), a, &first, err, sizeof(err)), 1);
	assert_int_equal(parse_capture(ARGC(b), b, &first, err, sizeof(err)), 0);
	assert_false(verbose);
	assert_int_equal(size, 8192);
	assert_int_equal(first, 3);

	size = 4096;
	assert_int_equal(parse_capture(ARGC(c), c, &first, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse_capture(ARGC(b), b, &first, err, sizeof(err)), 0);
	assert_false(verbose);
	assert_int_equal(size, 8192);
	assert_int_equal(first, 3);
}

static void test_parse_too_many_options(void **state)
{
	static char names[100][8];
	static bool flags[100];
	struct cli_opt many[101];
	char *argv[] = {"test", NULL};
	int first = -1;

	memset(many, 0, sizeof(many));
	for (int i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "opt%d", i);
		many[i] = (struct cli_opt){names[i], 0, CLI_OPT_FLAG, &flags[i], 0, 0, NULL, "x"};
	}
	assert_int_equal(cli_opts_parse("test", many, ARGC(argv), argv, &first), -EINVAL);
}

/* ---- cli_opts_help ---- */

/* The line of text that contains needle, copied into line. */
static void line_with(const char *text, const char *needle, char *line, size_t len)
{
	const char *p = strstr(text, needle), *start, *end;

	if (!p)
		fail_msg("help has no line with \"%s\":\n%s", needle, text);
	for (start = p; start > text && start[-1] != '\n'; start--)
		;
	end = strchr(p, '\n');
	if (!end)
		end = p + strlen(p);
	snprintf(line, len, "%.*s", (int)(end - start), start);
}

static void test_help(void **state)
{
	char *text = NULL, line[256];
	size_t text_len = 0;
	FILE *f = open_memstream(&text, &text_len);

	assert_non_null(f);
	device = "rxe0";
	cli_opts_help(f, "rdmakit test [options] SERVER", "Test things.", opts);
	fclose(f);

	assert_contains(text, "usage: rdmakit test [options] SERVER");
	assert_contains(text, "Test things.");
	for (const struct cli_opt *o = opts; o->name; o++) {
		char name[64];

		snprintf(name, sizeof(name), "--%s", o->name);
		assert_contains(text, name);
		line_with(text, name, line, sizeof(line));
		assert_contains(line, o->help);
		if (o->key) {
			char key[8];

			snprintf(key, sizeof(key), "-%c, ", o->key);
			assert_contains(line, key);
		}
	}
	line_with(text, "--size", line, sizeof(line));
	assert_contains(line, "BYTES");
	assert_contains(line, "(default: 4096)");
	line_with(text, "--count", line, sizeof(line));
	assert_contains(line, "(default: 1000)");
	line_with(text, "--gid-index", line, sizeof(line));
	assert_contains(line, "(default: -1)");
	line_with(text, "--device", line, sizeof(line));
	assert_contains(line, "(default: rxe0)");
	line_with(text, "--verbose", line, sizeof(line));
	assert_not_contains(line, "(default");
	line_with(text, "--timeout", line, sizeof(line));
	assert_contains(line, "(default: 2000)");
	assert_contains(text, "-h, --help");
	free(text);
}

static void test_help_live_defaults(void **state)
{
	char *text = NULL, line[256];
	size_t text_len = 0;
	FILE *f = open_memstream(&text, &text_len);

	assert_non_null(f);
	size = 65536;
	cli_opts_help(f, "u", "d", opts);
	fclose(f);
	line_with(text, "--size", line, sizeof(line));
	assert_contains(line, "(default: 65536)");
	/* A string option without a value shows no default. */
	line_with(text, "--device", line, sizeof(line));
	assert_not_contains(line, "(default");
	free(text);
}

/* A repeatable option keeps every value in order, and refuses the 17th. */
static void test_parse_list(void **state)
{
	struct cli_opt_list allow = {0};
	const struct cli_opt lopts[] = {
		{"allow", 0, CLI_OPT_LIST, &allow, 0, 0, "CIDR", "repeatable"},
		CLI_OPT_END,
	};
	char *argv[] = {"test", "--allow", "10.0.0.0/8", "--allow=fd00::/8", NULL};
	char *many[2 * (CLI_OPT_LIST_MAX + 1) + 2]; /* argv[0], 17 pairs, NULL */
	int first = -1;

	(void)state;
	assert_int_equal(cli_opts_parse("test", lopts, ARGC(argv), argv, &first), 0);
	assert_int_equal(allow.n, 2);
	assert_string_equal(allow.v[0], "10.0.0.0/8");
	assert_string_equal(allow.v[1], "fd00::/8");
	memset(&allow, 0, sizeof(allow));
	many[0] = "test";
	for (int i = 0; i <= CLI_OPT_LIST_MAX; i++) {
		many[1 + 2 * i] = "--allow";
		many[2 + 2 * i] = "1.2.3.4";
	}
	many[ARGC(many)] = NULL;
	assert_int_equal(cli_opts_parse("test", lopts, ARGC(many), many, &first), -EINVAL);
	assert_int_equal(allow.n, CLI_OPT_LIST_MAX);
}

/* Output of f(out) as a string (free it). */
static char *capture_help(const struct cli_opt *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	cli_opts_help(f, "u", "d", o);
	fclose(f);
	return text;
}

/* A STRING with choices takes only them, and the error lists them. */
static void test_parse_choices(void **state)
{
	static const char *const modes[] = {"bw", "lat", NULL};
	const char *mode = NULL;
	const struct cli_opt copts[] = {
		{"mode", 'm', CLI_OPT_STRING, &mode, 0, 0, "MODE", "bw or lat", .choices = modes},
		CLI_OPT_END,
	};
	char *good[] = {"test", "-m", "lat", NULL};
	char *bad[] = {"test", "--mode", "latency", NULL};
	int first = -1;

	(void)state;
	assert_int_equal(cli_opts_parse("test", copts, ARGC(good), good, &first), 0);
	assert_string_equal(mode, "lat");
	assert_int_equal(cli_opt_choice(modes, "lat"), 1);
	assert_int_equal(cli_opt_choice(modes, "x"), -1);
	mode = NULL;
	assert_int_equal(cli_opts_parse("test", copts, ARGC(bad), bad, &first), -EINVAL);
	assert_null(mode);
}

/* An old spelling fails; an old letter a live row has too is that row's. */
static void test_parse_gone(void **state)
{
	uint64_t timeout = 10;
	const char *op = NULL;
	const struct cli_opt gopts[] = {
		{"timeout", 't', CLI_OPT_COUNT, &timeout, 1, 3600, "SEC", "seconds"},
		{"op", 'o', CLI_OPT_STRING, &op, 0, 0, "OP", "the test"},
		CLI_OPT_GONE_ROW("", 't', "-t is now --timeout; the test is -o/--op"),
		CLI_OPT_GONE_ROW("test", 0, "--test is now -o/--op"),
		CLI_OPT_END,
	};
	char *now[] = {"test", "-t", "20", NULL};
	char *word[] = {"test", "-t", "write", NULL};
	char *old[] = {"test", "--test", "write", NULL};
	char *old_eq[] = {"test", "--test=write", NULL};
	char *text;
	int first = -1;

	(void)state;
	assert_int_equal(cli_opts_parse("test", gopts, ARGC(now), now, &first), 0);
	assert_int_equal(timeout, 20);
	assert_int_equal(cli_opts_parse("test", gopts, ARGC(word), word, &first), -EINVAL);
	assert_int_equal(cli_opts_parse("test", gopts, ARGC(old), old, &first), -EINVAL);
	assert_int_equal(cli_opts_parse("test", gopts, ARGC(old_eq), old_eq, &first), -EINVAL);
	assert_null(op);
	/* --help does not show old spellings. */
	text = capture_help(gopts);
	assert_not_contains(text, "--test");
	assert_not_contains(text, "is now");
	free(text);
}

/* --version is its own answer (2), as --help is 1. */
static void test_parse_version(void **state)
{
	char *argv[] = {"test", "--version", NULL};
	int first = -1;

	(void)state;
	assert_int_equal(cli_opts_parse("test", opts, ARGC(argv), argv, &first), 2);
}

/* A shown default (def) replaces the live value: one default per line. */
static void test_help_def(void **state)
{
	uint64_t iters = 0;
	const struct cli_opt dopts[] = {
		{"count", 'n', CLI_OPT_COUNT, &iters, 1, 100, "N", "iterations",
		 .def = "5000 for bw, 1000 for lat"},
		CLI_OPT_END,
	};
	char *text, line[256];

	(void)state;
	text = capture_help(dopts);
	line_with(text, "--count", line, sizeof(line));
	assert_contains(line, "iterations (default: 5000 for bw, 1000 for lat)");
	assert_not_contains(line, "(default: 0)");
	assert_contains(text, "--version");
	free(text);
}

/* One table for the TSV records and for other programs' spellings: live
 * rows, a gone one, aliases (with a value of their own, or the row's), an
 * ignored one and a foreign one. */
static const char *const alias_modes[] = {"bw", "lat", NULL};
static const char *alias_mode = "bw";
static bool alias_cm, alias_flag;
static int64_t alias_gid = -1;
static const struct cli_opt alias_opts[] = {
	{"mode", 'm', CLI_OPT_STRING, &alias_mode, 0, 0, "MODE", "a\tb", .choices = alias_modes},
	{"cm", 'c', CLI_OPT_FLAG, &alias_cm, 0, 0, NULL, "RDMA CM"},
	{"gid-index", 'g', CLI_OPT_INT, &alias_gid, -1, 255, "IDX", "GID index"},
	{"flag", 0, CLI_OPT_FLAG, &alias_flag, 0, 0, NULL, "on"},
	CLI_OPT_GONE_ROW("old", 0, "--old is now --mode"),
	CLI_OPT_ALIAS_ROW("latency", 'L', &alias_mode, "lat", "perftest's"),
	CLI_OPT_ALIAS_ROW("rdma_cm", 'R', &alias_cm, NULL, "perftest's"),
	CLI_OPT_ALIAS_ROW("", 'x', &alias_gid, NULL, "perftest's"),
	CLI_OPT_IGNORED_ROW("CPU-freq", 'F', "-F is ignored"),
	CLI_OPT_FOREIGN_ROW("", 't', "-t is perftest's --tx-depth; rdmakit: --tx-depth N"),
	CLI_OPT_END,
};

/* RDMAKIT_HELP_FORMAT=tsv: the table as records for docs/gendocs.py. */
static void test_help_tsv(void **state)
{
	char *text;

	(void)state;
	setenv("RDMAKIT_HELP_FORMAT", "tsv", 1);
	text = capture_help(alias_opts);
	unsetenv("RDMAKIT_HELP_FORMAT");
	assert_contains(text, "usage\tu\n");
	assert_contains(text, "option\tmode\tm\tstring\tMODE\tbw\tbw|lat\ta\\tb\t\n");
	assert_contains(text, "option\tflag\t\tflag\t\t\t\ton\t\n");
	assert_contains(text, "option\told\t\tgone\t\t\t\t--old is now --mode\t\n");
	assert_contains(text, "option\tlatency\tL\talias\t\t\t\tperftest's\t--mode lat\n");
	assert_contains(text, "option\trdma_cm\tR\talias\t\t\t\tperftest's\t--cm\n");
	assert_contains(text, "option\t\tx\talias\tIDX\t\t\tperftest's\t--gid-index IDX\n");
	assert_contains(text, "option\tCPU-freq\tF\talias\t\t\t\t-F is ignored\t\n");
	assert_contains(text, "option\t\tt\tforeign\t\t\t\t-t is perftest's --tx-depth; "
			      "rdmakit: --tx-depth N\t\n");
	free(text);
}

/* Another program's spellings: an alias is its live row (with a value of
 * its own, or the row's); an ignored one is taken with a note; a foreign
 * one is refused by name. --help shows none of them. */
static void test_parse_alias(void **state)
{
	char *good[] = {"test", "-L", "-R", "-x", "3", "-F", "host", NULL};
	char *longs[] = {"test", "--latency", "--rdma_cm", "--CPU-freq", NULL};
	char *bad_value[] = {"test", "-x", "300", NULL};
	char *foreign[] = {"test", "-t", "128", NULL};
	char *text;
	int first = -1;

	(void)state;
	assert_int_equal(cli_opts_parse("test", alias_opts, ARGC(good), good, &first), 0);
	assert_string_equal(alias_mode, "lat");
	assert_true(alias_cm);
	assert_int_equal(alias_gid, 3);
	assert_true(cli_opts_given(&alias_gid));
	assert_int_equal(first, 6);
	alias_mode = "bw";
	alias_cm = false;
	assert_int_equal(cli_opts_parse("test", alias_opts, ARGC(longs), longs, &first), 0);
	assert_string_equal(alias_mode, "lat");
	assert_true(alias_cm);
	assert_int_equal(cli_opts_parse("test", alias_opts, ARGC(bad_value), bad_value, &first),
			 -EINVAL);
	assert_int_equal(cli_opts_parse("test", alias_opts, ARGC(foreign), foreign, &first),
			 -EINVAL);
	text = capture_help(alias_opts);
	assert_not_contains(text, "rdma_cm");
	assert_not_contains(text, "CPU-freq");
	assert_not_contains(text, "tx-depth");
	free(text);
}

/* --help fits the width: an option's help wraps under its column, a long
 * paragraph is filled anew, text that fits is as written. */
static void test_help_wraps(void **state)
{
	uint64_t n = 7;
	const struct cli_opt wopts[] = {
		{"count", 'n', CLI_OPT_COUNT, &n, 1, 100, "N",
		 "a help text long enough that it cannot stay on one line of sixty columns, "
		 "so it wraps"},
		{"list", 0, CLI_OPT_COUNT, &n, 1, 100, "N",
		 "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"},
		CLI_OPT_END,
	};
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	setenv("RDMAKIT_HELP_WIDTH", "60", 1);
	cli_opts_help_epilog(f, "u",
			     "short line\nA paragraph whose lines are longer than sixty columns "
			     "of text\nis filled anew.\n  indented  item text that is far too long "
			     "to fit in sixty\n            columns",
			     wopts, "fits");
	unsetenv("RDMAKIT_HELP_WIDTH");
	fclose(f);
	assert_contains(text, "\nshort line A paragraph whose lines are longer than sixty\n"
			      "columns of text is filled anew.\n");
	assert_contains(text, "  -n, --count N                a help text long enough that\n"
			      "                               it cannot stay on one line of\n");
	assert_contains(text, "(default: 7)");
	assert_contains(text, "  indented  item text that is far too long to fit in sixty\n"
			      "            columns\n");
	assert_contains(text, "one|two|three|four|five|six|\n");
	assert_contains(text, "\nfits\n");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		assert_true(strlen(line) <= 60);
	free(text);
}

#define PARSE_TEST(f) cmocka_unit_test_setup(f, reset_defaults)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64_binary_suffixes),
		cmocka_unit_test(test_u64_rejects),
		cmocka_unit_test(test_u64_range),
		cmocka_unit_test(test_u64_decimal_suffixes),
		cmocka_unit_test(test_u64_no_suffix),
		cmocka_unit_test(test_u64_short_err_buffer),
		cmocka_unit_test(test_i64),
		PARSE_TEST(test_parse_long_forms),
		PARSE_TEST(test_parse_short_forms),
		PARSE_TEST(test_parse_attached_values),
		PARSE_TEST(test_parse_size_eq),
		PARSE_TEST(test_parse_positionals),
		PARSE_TEST(test_parse_bad_number_names_option),
		PARSE_TEST(test_parse_negative_size),
		PARSE_TEST(test_parse_int_out_of_range),
		PARSE_TEST(test_parse_unknown_option),
		PARSE_TEST(test_parse_missing_value),
		PARSE_TEST(test_parse_flag_with_value),
		PARSE_TEST(test_parse_help),
		PARSE_TEST(test_parse_empty_string),
		PARSE_TEST(test_parse_twice),
		PARSE_TEST(test_parse_twice_after_cluster),
		PARSE_TEST(test_parse_too_many_options),
		PARSE_TEST(test_help),
		PARSE_TEST(test_help_live_defaults),
		cmocka_unit_test(test_parse_list),
		cmocka_unit_test(test_parse_choices),
		cmocka_unit_test(test_parse_gone),
		PARSE_TEST(test_parse_version),
		cmocka_unit_test(test_help_def),
		cmocka_unit_test(test_help_tsv),
		cmocka_unit_test(test_parse_alias),
		cmocka_unit_test(test_help_wraps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
