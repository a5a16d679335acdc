/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The parser of blk.conf (cli_blkconf.h): every line checked, a bad one
 * refused by file and line before any disk is attached. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/memproto.h>
#include <rdmakit/units.h>

#include "cli_blkconf.h"

#define MAX_FIELDS 16
#define FIELD_SHOWN 64 /* characters of a field quoted in a message */

struct line_ctx {
	const char *file;
	unsigned int line;
	char *err;
	size_t err_len;
};

__attribute__((format(printf, 2, 3))) static int bad(const struct line_ctx *c, const char *fmt,
						     ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->err_len, "%s:%u: %s", c->file, c->line, what);
	return -EINVAL;
}

/* A number field: "-" keeps *out (the default) when dash_ok. */
static int number(const struct line_ctx *c, const char *name, const char *text, uint64_t min,
		  uint64_t max, unsigned int base, bool dash_ok, uint64_t *out)
{
	char why[160];

	if (dash_ok && !strcmp(text, "-"))
		return 0;
	if (rk_parse_u64(text, min, max, base, out, why, sizeof(why)))
		return bad(c, "%s: %s", name, why);
	return 0;
}

static const char *const option_names[] = {
	"queue-depth", "reconnect-delay", "loss-timeout", "tclass", "dscp", NULL,
};

static int option(const struct line_ctx *c, char *field, struct cli_blk_conf_disk *d,
		  unsigned int *seen)
{
	static const uint64_t max[] = {RK_BLK_MAX_QUEUE_DEPTH, RK_BLK_MAX_RECONNECT_DELAY,
				       RK_BLK_MAX_LOSS_TIMEOUT, 255, 63};
	static const uint64_t min[] = {1, 1, 0, 0, 0};
	char *eq = strchr(field, '=');
	uint64_t v = 0;
	int i, ret;

	if (!eq || eq == field)
		return bad(c, "'%.*s' is not OPTION=VALUE (queue-depth, reconnect-delay, "
			   "loss-timeout, tclass, dscp)", FIELD_SHOWN, field);
	*eq = '\0';
	for (i = 0; option_names[i]; i++)
		if (!strcmp(field, option_names[i]))
			break;
	if (!option_names[i])
		return bad(c, "unknown option '%.*s' (queue-depth, reconnect-delay, loss-timeout, "
			   "tclass, dscp)", FIELD_SHOWN, field);
	if (*seen & (1u << i))
		return bad(c, "option %s given twice", field);
	if ((i == 3 && *seen & (1u << 4)) || (i == 4 && *seen & (1u << 3)))
		return bad(c, "give tclass or dscp, not both (tclass = dscp << 2 | ECN)");
	*seen |= 1u << i;
	ret = number(c, field, eq + 1, min[i], max[i], 0, false, &v);
	if (ret)
		return ret;
	switch (i) {
	case 0:
		d->o.queue_depth = (unsigned int)v;
		break;
	case 1:
		d->o.reconnect_delay = (unsigned int)v;
		break;
	case 2:
		d->o.loss_timeout = (int)v;
		break;
	case 3:
		d->o.tos = (int)v;
		break;
	default:
		d->o.tos = (int)(v << 2);
		break;
	}
	return 0;
}

/* Splits line (NUL-terminated, comment cut) at blanks. */
static int split(char *line, char **fields)
{
	char *save = NULL;
	int n = 0;

	for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n == MAX_FIELDS)
			return MAX_FIELDS + 1;
		fields[n++] = tok;
	}
	return n;
}

static int parse_line(const struct line_ctx *c, char *line, struct cli_blk_conf_disk *d)
{
	char *fields[MAX_FIELDS], *hash = strchr(line, '#');
	struct in6_addr a6;
	struct in_addr a4;
	unsigned int seen = 0;
	uint64_t port = RK_MEM_DEFAULT_PORT, size = 0, queues = 0;
	int n, ret;

	if (hash)
		*hash = '\0';
	for (char *p = line; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t')
			return bad(c, "a control character (0x%02x)", (unsigned char)*p);
		else if ((unsigned char)*p == 0x7f)
			return bad(c, "a control character (0x7f)");
	n = split(line, fields);
	if (!n)
		return 0;
	if (n > MAX_FIELDS)
		return bad(c, "more than %d fields", MAX_FIELDS);
	if (n < 4)
		return bad(c, "%d field%s, want HOST PORT SIZE QUEUES [OPTION=VALUE ...]", n,
			   n == 1 ? "" : "s");
	if (strlen(fields[0]) >= sizeof(d->host) ||
	    (inet_pton(AF_INET, fields[0], &a4) != 1 && inet_pton(AF_INET6, fields[0], &a6) != 1))
		return bad(c, "HOST '%.*s' is not an IPv4 or IPv6 address (the module takes no "
			   "host names)", FIELD_SHOWN, fields[0]);
	ret = number(c, "PORT", fields[1], 1, 65535, 0, true, &port);
	if (!ret)
		ret = number(c, "SIZE", fields[2], RK_MEM_BLOCK, UINT64_MAX, 1024, false, &size);
	if (!ret && size % RK_MEM_BLOCK)
		ret = bad(c, "SIZE: %" PRIu64 " is not a multiple of %u", size, RK_MEM_BLOCK);
	if (!ret)
		ret = number(c, "QUEUES", fields[3], 1, RK_MEM_MAX_QUEUES, 0, true, &queues);
	if (ret)
		return ret;
	memset(d, 0, sizeof(*d));
	rk_blk_attach_defaults(&d->o);
	for (int i = 4; i < n; i++) {
		ret = option(c, fields[i], d, &seen);
		if (ret)
			return ret;
	}
	d->line = c->line;
	snprintf(d->host, sizeof(d->host), "%s", fields[0]);
	d->o.port = (uint16_t)port;
	d->o.size = size;
	d->o.queues = (unsigned int)queues;
	return 1;
}

int cli_blk_conf_parse(const char *file, const char *text, size_t len, struct cli_blk_conf *conf,
		       char *err, size_t err_len)
{
	struct line_ctx c = {.file = file, .line = 0, .err = err, .err_len = err_len};
	struct cli_blk_conf_disk *disks = NULL, d;
	size_t at = 0;
	char *line = NULL;
	int n = 0, ret = 0;

	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len, l = end - at;

		c.line++;
		if (memchr(text + at, '\0', l)) {
			ret = bad(&c, "a NUL byte");
			goto out;
		}
		if (l && text[end - 1] == '\r')
			l--; /* CRLF */
		free(line);
		line = strndup(text + at, l);
		if (!line) {
			ret = -ENOMEM;
			goto out;
		}
		at = end + 1;
		ret = parse_line(&c, line, &d);
		if (ret < 0)
			goto out;
		if (!ret)
			continue;
		if (n == CLI_BLK_CONF_MAX_DISKS) {
			ret = bad(&c, "more than %d disks", CLI_BLK_CONF_MAX_DISKS);
			goto out;
		}
		if (!(n & (n - 1))) { /* 0, 1, 2, 4, ...: grow */
			struct cli_blk_conf_disk *m = realloc(disks, sizeof(*disks) * (n ? 2 * n : 1));

			if (!m) {
				ret = -ENOMEM;
				goto out;
			}
			disks = m;
		}
		disks[n++] = d;
	}
	ret = 0;
	conf->disks = disks;
	conf->n = n;
	disks = NULL;
out:
	free(line);
	free(disks);
	return ret;
}

int cli_blk_conf_read(const char *file, struct cli_blk_conf *conf, char *err, size_t err_len)
{
	FILE *f = fopen(file, "re");
	char *buf;
	size_t n;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", file, strerror(-ret));
		return ret;
	}
	buf = malloc(CLI_BLK_CONF_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, CLI_BLK_CONF_MAX_BYTES + 1, f);
	if (ferror(f)) {
		ret = -EIO;
		snprintf(err, err_len, "%s: read error", file);
	} else if (n > CLI_BLK_CONF_MAX_BYTES) {
		ret = -EFBIG;
		snprintf(err, err_len, "%s: larger than %d bytes", file, CLI_BLK_CONF_MAX_BYTES);
	} else {
		ret = cli_blk_conf_parse(file, buf, n, conf, err, err_len);
	}
	free(buf);
	fclose(f);
	return ret;
}

void cli_blk_conf_free(struct cli_blk_conf *conf)
{
	free(conf->disks);
	conf->disks = NULL;
	conf->n = 0;
}

struct rk_blk_attach_opts cli_blk_conf_opts(const struct cli_blk_conf_disk *d)
{
	struct rk_blk_attach_opts o = d->o;

	o.host = d->host;
	return o;
}

void cli_blk_conf_server(const struct cli_blk_conf_disk *d, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN] = "";
	struct in6_addr a6;
	struct in_addr a4;
	unsigned int port = d->o.port ? d->o.port : RK_MEM_DEFAULT_PORT;

	if (inet_pton(AF_INET, d->host, &a4) == 1) {
		inet_ntop(AF_INET, &a4, addr, sizeof(addr));
		snprintf(buf, len, "%s:%u", addr, port);
	} else if (inet_pton(AF_INET6, d->host, &a6) == 1) {
		inet_ntop(AF_INET6, &a6, addr, sizeof(addr));
		snprintf(buf, len, "[%s]:%u", addr, port);
	} else {
		snprintf(buf, len, "%s:%u", d->host, port);
	}
}
