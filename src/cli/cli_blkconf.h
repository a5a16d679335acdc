/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* /etc/rdmakit/blk.conf: the rkblk disks `rdmakit blk attach --all` attaches
 * and `detach --all` detaches, one line per disk:
 *
 *   HOST PORT SIZE QUEUES [OPTION=VALUE ...]     # a comment
 *
 * HOST an IPv4 or IPv6 literal, PORT 1..65535 or "-" (7471), SIZE a
 * non-zero multiple of 4096 (k, M, G), QUEUES 1..64 or "-" (one per online
 * CPU); options queue-depth, reconnect-delay, loss-timeout, tclass, dscp,
 * each at most once. '#' starts a comment; blank lines are skipped. The
 * whole file is checked before anything is attached: a bad line is refused
 * as "FILE:LINE: what is wrong". */
#ifndef RDMAKIT_CLI_BLKCONF_H
#define RDMAKIT_CLI_BLKCONF_H

#include <arpa/inet.h>
#include <stddef.h>

#include <rdmakit/blk.h>

#define CLI_BLK_CONF "/etc/rdmakit/blk.conf"
#define CLI_BLK_CONF_MAX_DISKS 256
#define CLI_BLK_CONF_MAX_BYTES (1024 * 1024)

struct cli_blk_conf_disk {
	unsigned int line;
	char host[INET6_ADDRSTRLEN];
	/* host NULL here: cli_blk_conf_opts() points it at host[] */
	struct rk_blk_attach_opts o;
};

struct cli_blk_conf {
	struct cli_blk_conf_disk *disks; /* malloc'd; NULL when none */
	int n;
};

/* Parse len bytes of text (file names it in messages). Returns 0, -EINVAL
 * with err "FILE:LINE: what is wrong", or -ENOMEM. conf is set only on
 * success (cli_blk_conf_free() it). */
int cli_blk_conf_parse(const char *file, const char *text, size_t len, struct cli_blk_conf *conf,
		       char *err, size_t err_len);

/* Read and parse file; as cli_blk_conf_parse(), and -errno with err "FILE:
 * why" when it cannot be read. */
int cli_blk_conf_read(const char *file, struct cli_blk_conf *conf, char *err, size_t err_len);

void cli_blk_conf_free(struct cli_blk_conf *conf);

/* d's attach options, host pointing into d. */
struct rk_blk_attach_opts cli_blk_conf_opts(const struct cli_blk_conf_disk *d);

/* d's server as the module's sysfs rkblk/server shows it: "ADDR:PORT",
 * "[ADDR6]:PORT", the address in its shortest form. */
void cli_blk_conf_server(const struct cli_blk_conf_disk *d, char *buf, size_t len);

#endif
