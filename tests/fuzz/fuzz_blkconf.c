/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* libFuzzer target: the blk.conf parser (src/cli/cli_blkconf.c), the input
 * being the file. A file it takes gives disks whose options the library's
 * own check takes (rk_blk_attach_string), on increasing lines within the
 * file; a file it refuses says so as "FILE:LINE: what", LINE a line of the
 * file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_blkconf.h"
#include "fuzz.h"

static unsigned int lines_of(const uint8_t *data, size_t size)
{
	unsigned int n = 1;

	for (size_t i = 0; i < size; i++)
		if (data[i] == '\n' && i + 1 < size)
			n++;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cli_blk_conf c = {.n = -1};
	unsigned int lines = lines_of(data, size), prev = 0, line;
	char err[320] = "", buf[RK_BLK_ANSWER_MAX], why[200], server[80], *end;
	int ret = cli_blk_conf_parse("fuzz.conf", (const char *)data, size, &c, err, sizeof(err));

	if (ret) {
		FUZZ_CHECK(ret == -EINVAL || ret == -ENOMEM, "returned %d", ret);
		FUZZ_CHECK(c.n == -1, "refused (%d) but set %d disks", ret, c.n);
		if (ret == -ENOMEM)
			return 0;
		FUZZ_CHECK(!strncmp(err, "fuzz.conf:", 10), "refusal '%s' names no file", err);
		line = (unsigned int)strtoul(err + 10, &end, 10);
		FUZZ_CHECK(line >= 1 && line <= lines && !strncmp(end, ": ", 2) && end[2],
			   "refusal '%s': not FILE:LINE: what (the file has %u lines)", err, lines);
		return 0;
	}
	FUZZ_CHECK(c.n >= 0 && c.n <= CLI_BLK_CONF_MAX_DISKS, "%d disks", c.n);
	for (int i = 0; i < c.n; i++) {
		struct rk_blk_attach_opts o = cli_blk_conf_opts(&c.disks[i]);

		FUZZ_CHECK(c.disks[i].line > prev && c.disks[i].line <= lines,
			   "disk %d on line %u after %u (%u lines)", i, c.disks[i].line, prev, lines);
		prev = c.disks[i].line;
		why[0] = '\0';
		FUZZ_CHECK(!rk_blk_attach_string(&o, 0, buf, sizeof(buf), why, sizeof(why)),
			   "line %u taken, but the library refuses it: %s", prev, why);
		cli_blk_conf_server(&c.disks[i], server, sizeof(server));
		FUZZ_CHECK(strchr(server, ':'), "line %u: server '%s'", prev, server);
	}
	cli_blk_conf_free(&c);
	return 0;
}
