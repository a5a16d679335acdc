/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the strict option parser (src/cli/cli_opts.c).
 *
 * The first byte picks what is fuzzed:
 * - bit 7 set: rk_parse_u64 / rk_parse_i64 on the text after 17 bytes that
 *   choose the range and the suffix base. A success lies in the range; a
 *   plain decimal matches strtoull/strtoll; a refusal says why.
 * - else: the rest, split at NUL bytes, is an argv for cli_opts_parse over a
 *   table like rdmakit rc's. Every value it stores lies in its option's
 *   range; a refusal prints "rdmakit fuzz: ..." naming the problem.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "fuzz.h"

#define MAX_ARGS 64

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static bool plain_decimal(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static void fuzz_numbers(const uint8_t *data, size_t size)
{
	static const unsigned int bases[] = {0, 1000, 1024, 0};
	unsigned int base = bases[data[0] & 3];
	uint64_t a, b, umin, umax, u = 0;
	int64_t imin, imax, i = 0;
	char err[160], *text;
	int ret;

	if (size < 17)
		return;
	a = get_u64(data + 1);
	b = get_u64(data + 9);
	text = strndup((const char *)data + 17, size - 17);
	if (!text)
		return;

	umin = a < b ? a : b;
	umax = a < b ? b : a;
	err[0] = '\0';
	ret = rk_parse_u64(text, umin, umax, base, &u, err, sizeof(err));
	if (ret == 0) {
		FUZZ_CHECK(u >= umin && u <= umax,
			   "u64 '%s' gave %" PRIu64 " outside %" PRIu64 "..%" PRIu64, text, u, umin,
			   umax);
		if (plain_decimal(text))
			FUZZ_CHECK(u == strtoull(text, NULL, 10), "u64 '%s' gave %" PRIu64, text,
				   u);
	} else {
		FUZZ_CHECK(ret == -EINVAL || ret == -ERANGE, "u64 '%s' returned %d", text, ret);
		FUZZ_CHECK(err[0], "u64 '%s' refused (%d) without a reason", text, ret);
	}

	imin = (int64_t)a < (int64_t)b ? (int64_t)a : (int64_t)b;
	imax = (int64_t)a < (int64_t)b ? (int64_t)b : (int64_t)a;
	err[0] = '\0';
	ret = rk_parse_i64(text, imin, imax, &i, err, sizeof(err));
	if (ret == 0) {
		FUZZ_CHECK(i >= imin && i <= imax,
			   "i64 '%s' gave %" PRId64 " outside %" PRId64 "..%" PRId64, text, i, imin,
			   imax);
		if (plain_decimal(text))
			FUZZ_CHECK(i == strtoll(text, NULL, 10), "i64 '%s' gave %" PRId64, text, i);
	} else {
		FUZZ_CHECK(ret == -EINVAL || ret == -ERANGE, "i64 '%s' returned %d", text, ret);
		FUZZ_CHECK(err[0], "i64 '%s' refused (%d) without a reason", text, ret);
	}
	free(text);
}

static void fuzz_argv(const uint8_t *data, size_t size)
{
	bool server = false, cm = false, json = false;
	const char *op = NULL, *device = NULL, *auth = NULL;
	uint64_t port = 18515, bytes = 4096, sge = 1;
	int64_t gid = -1;
	const struct cli_opt opts[] = {
		{"server", 'S', CLI_OPT_FLAG, &server, 0, 0, NULL, "be the server"},
		{"port", 'p', CLI_OPT_COUNT, &port, 1, 65535, "PORT", "port"},
		{"cm", 'c', CLI_OPT_FLAG, &cm, 0, 0, NULL, "RDMA CM"},
		{"device", 'd', CLI_OPT_STRING, &device, 0, 0, "DEV", "device"},
		{"gid-index", 'g', CLI_OPT_INT, &gid, -1, 255, "IDX", "GID index"},
		{"op", 'o', CLI_OPT_STRING, &op, 0, 0, "OP", "operation"},
		{"size", 's', CLI_OPT_SIZE, &bytes, 1, 1u << 30, "BYTES", "bytes"},
		{"sge", 0, CLI_OPT_COUNT, &sge, 1, 64, "N", "pieces"},
		{"json", 'j', CLI_OPT_FLAG, &json, 0, 0, NULL, "JSON"},
		{"auth-file", 0, CLI_OPT_STRING, &auth, 0, 0, "PATH", "secret"},
		CLI_OPT_END,
	};
	char *argv[MAX_ARGS + 2], *copy, *errtext = NULL;
	FILE *saved = stderr, *mem;
	size_t errlen = 0;
	int argc = 0, first = -1, ret;

	copy = malloc(size + 1);
	if (!copy)
		return;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[argc++] = "fuzz";
	for (char *p = copy; p <= copy + size && argc < MAX_ARGS + 1; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;

	/* What the parser prints goes to a buffer, to be checked. */
	mem = open_memstream(&errtext, &errlen);
	if (!mem) {
		free(copy);
		return;
	}
	stderr = mem;
	ret = cli_opts_parse("fuzz", opts, argc, argv, &first);
	stderr = saved;
	fclose(mem);

	FUZZ_CHECK(ret == 0 || ret == 1 || ret == 2 || ret == -EINVAL, "cli_opts_parse returned %d",
		   ret);
	if (ret == 0) {
		FUZZ_CHECK(first >= 1 && first <= argc, "first argument %d of %d", first, argc);
		FUZZ_CHECK(port >= 1 && port <= 65535, "--port %" PRIu64, port);
		FUZZ_CHECK(bytes >= 1 && bytes <= (1u << 30), "--size %" PRIu64, bytes);
		FUZZ_CHECK(sge >= 1 && sge <= 64, "--sge %" PRIu64, sge);
		FUZZ_CHECK(gid >= -1 && gid <= 255, "--gid-index %" PRId64, gid);
		FUZZ_CHECK(!device || device[0], "--device stored empty");
		FUZZ_CHECK(!op || op[0], "--op stored empty");
		FUZZ_CHECK(!auth || auth[0], "--auth-file stored empty");
		FUZZ_CHECK(errlen == 0, "parse succeeded but printed: %s", errtext);
	} else if (ret < 0) {
		FUZZ_CHECK(errlen > 0 && !strncmp(errtext, "rdmakit fuzz: ", 14),
			   "refused without a message naming the command: '%s'",
			   errtext ? errtext : "");
	}
	free(errtext);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 0x80)
		fuzz_numbers(data, size);
	else
		fuzz_argv(data + 1, size - 1);
	return 0;
}
