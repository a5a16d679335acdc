/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rkblk disks from user space: the attach string, the control file, and
 * the per-disk attributes in sysfs. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/blk.h>
#include <rdmakit/log.h>
#include <rdmakit/memproto.h>

#include "base/hint_int.h"

void rk_blk_attach_defaults(struct rk_blk_attach_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->loss_timeout = -1;
	o->tos = -1;
}

static int check_opts(const struct rk_blk_attach_opts *o, unsigned int cpus, char *why,
		      size_t why_len)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (!o->host || !o->host[0]) {
		snprintf(why, why_len, "HOST: the memserver's address is missing");
		return -EINVAL;
	}
	if (inet_pton(AF_INET, o->host, &a4) != 1 && inet_pton(AF_INET6, o->host, &a6) != 1) {
		snprintf(why, why_len, "HOST: '%s' is not an IPv4 or IPv6 address (the module "
			 "takes no host names)", o->host);
		return -EINVAL;
	}
	if (!o->size || o->size % RK_MEM_BLOCK) {
		snprintf(why, why_len, "--size: %" PRIu64 " is not a non-zero multiple of %u",
			 o->size, RK_MEM_BLOCK);
		return -EINVAL;
	}
	if (cpus && o->queues > cpus) {
		snprintf(why, why_len, "--queues: %u is above the %u online CPUs", o->queues, cpus);
		return -EINVAL;
	}
	if (o->queue_depth > RK_BLK_MAX_QUEUE_DEPTH) {
		snprintf(why, why_len, "--queue-depth: %u is above %d", o->queue_depth,
			 RK_BLK_MAX_QUEUE_DEPTH);
		return -EINVAL;
	}
	if (o->reconnect_delay > RK_BLK_MAX_RECONNECT_DELAY) {
		snprintf(why, why_len, "--reconnect-delay: %u s is above %d s", o->reconnect_delay,
			 RK_BLK_MAX_RECONNECT_DELAY);
		return -EINVAL;
	}
	if (o->loss_timeout < -1 || o->loss_timeout > RK_BLK_MAX_LOSS_TIMEOUT) {
		snprintf(why, why_len, "--loss-timeout: %d s is outside 0..%d s", o->loss_timeout,
			 RK_BLK_MAX_LOSS_TIMEOUT);
		return -EINVAL;
	}
	if (o->tos < -1 || o->tos > 255) {
		snprintf(why, why_len, "--tclass: %d is outside 0..255", o->tos);
		return -EINVAL;
	}
	return 0;
}

int rk_blk_attach_string(const struct rk_blk_attach_opts *o, unsigned int online_cpus, char *buf,
			 size_t len, char *why, size_t why_len)
{
	size_t n;
	int ret = check_opts(o, online_cpus, why, why_len);

	if (ret)
		return ret;
	n = (size_t)snprintf(buf, len, "attach host=%s,port=%u,size=%" PRIu64, o->host,
			     o->port ? o->port : RK_MEM_DEFAULT_PORT, o->size);
	if (n < len && o->queues)
		n += (size_t)snprintf(buf + n, len - n, ",queues=%u", o->queues);
	if (n < len && o->queue_depth)
		n += (size_t)snprintf(buf + n, len - n, ",queue_depth=%u", o->queue_depth);
	if (n < len && o->reconnect_delay)
		n += (size_t)snprintf(buf + n, len - n, ",reconnect_delay=%u", o->reconnect_delay);
	if (n < len && o->loss_timeout >= 0)
		n += (size_t)snprintf(buf + n, len - n, ",loss_timeout=%d", o->loss_timeout);
	if (n < len && o->tos >= 0)
		n += (size_t)snprintf(buf + n, len - n, ",tos=%d", o->tos);
	if (n >= len) {
		snprintf(why, why_len, "the attach string is longer than %zu bytes", len - 1);
		return -ENOSPC;
	}
	return 0;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

/* The module is not loaded: how to load it, where the user is. */
static void not_loaded(char *answer, size_t len)
{
	char src[PATH_MAX];

	if (rk_hint_source_dir(src, sizeof(src)))
		snprintf(answer, len, "the rkblk module is not loaded (from this build tree: "
			 "%s/scripts/kmod.sh --host builds it; insmod the rkblk.ko it prints)", src);
	else
		snprintf(answer, len, "the rkblk module is not loaded (modprobe rkblk; the "
			 "rdmakit-dkms package builds it for each kernel; see rdmakit-blk(1))");
}

static int open_ctl(const char *ctl, char *answer, size_t len)
{
	int fd = open(ctl, O_RDWR | O_CLOEXEC), ret;

	if (fd >= 0)
		return fd;
	ret = -errno;
	if (ret == -ENOENT)
		not_loaded(answer, len);
	else if (ret == -EACCES || ret == -EPERM)
		snprintf(answer, len, "open %s: %s (attach and detach need root)", ctl,
			 strerror(-ret));
	else
		snprintf(answer, len, "open %s: %s", ctl, strerror(-ret));
	return ret;
}

int rk_blk_command(const char *ctl, const char *cmd, char *answer, size_t len)
{
	char buf[RK_BLK_ANSWER_MAX];
	ssize_t w, r;
	int fd, ret = 0;

	ctl = ctl ? ctl : RK_BLK_CTL;
	answer[0] = '\0';
	fd = open_ctl(ctl, answer, len);
	if (fd < 0)
		return fd;
	w = write(fd, cmd, strlen(cmd));
	if (w < 0)
		ret = -errno;
	else if ((size_t)w != strlen(cmd))
		ret = -EIO;
	r = read(fd, buf, sizeof(buf) - 1);
	if (r > 0) {
		buf[r] = '\0';
		chomp(buf);
		snprintf(answer, len, "%s", buf);
	} else if (ret) {
		snprintf(answer, len, "%s: %s (and no answer line)", ctl, strerror(-ret));
	} else {
		snprintf(answer, len, "%s gave no answer: %s", ctl,
			 r < 0 ? strerror(errno) : "end of file");
		ret = -EIO;
	}
	close(fd);
	if (!ret && !strncmp(answer, "error:", 6))
		ret = -EIO; /* an error line after a write that passed: still an error */
	return ret;
}

int rk_blk_attach(const char *ctl, const struct rk_blk_attach_opts *o, char *name,
		  size_t name_len, char *msg, size_t msg_len)
{
	char cmd[RK_BLK_ANSWER_MAX], answer[RK_BLK_ANSWER_MAX];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int ret;

	ret = rk_blk_attach_string(o, cpus > 0 ? (unsigned int)cpus : 0, cmd, sizeof(cmd), msg,
				   msg_len);
	if (ret)
		return ret;
	rk_debug("%s: %s", ctl ? ctl : RK_BLK_CTL, cmd);
	ret = rk_blk_command(ctl, cmd, answer, sizeof(answer));
	if (ret) {
		snprintf(msg, msg_len, "%s", answer);
		return ret;
	}
	if (strncmp(answer, "rkblk", 5)) {
		snprintf(msg, msg_len, "the module answered '%s', not a disk name", answer);
		return -EPROTO;
	}
	snprintf(name, name_len, "%s", answer);
	return 0;
}

static bool disk_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n < 6 || n > 15 || strncmp(name, "rkblk", 5))
		return false;
	return strspn(name + 5, "0123456789") == n - 5;
}

int rk_blk_detach(const char *ctl, const char *name, char *msg, size_t msg_len)
{
	char cmd[64], answer[RK_BLK_ANSWER_MAX];
	int ret;

	if (strncmp(name, "/dev/", 5) == 0)
		name += 5;
	if (!disk_name_ok(name)) {
		snprintf(msg, msg_len, "'%s' is not an rkblk disk name (rkblkN)", name);
		return -EINVAL;
	}
	snprintf(cmd, sizeof(cmd), "detach %s", name);
	ret = rk_blk_command(ctl, cmd, answer, sizeof(answer));
	if (ret)
		snprintf(msg, msg_len, "%s", answer);
	return ret;
}

/* ---- list ---- */

static int read_attr(const char *dir, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/rkblk/%s", dir, attr);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	chomp(buf);
	return 0;
}

static void note_missing(struct rk_blk_disk *d, const char *attr)
{
	size_t n = strlen(d->missing);

	snprintf(d->missing + n, sizeof(d->missing) - n, "%s%s", n ? " " : "", attr);
}

static void read_disk(const char *dir, struct rk_blk_disk *d)
{
	static const struct {
		const char *attr;
		size_t off;
	} nums[] = {
		{"size", offsetof(struct rk_blk_disk, size)},
		{"queues", offsetof(struct rk_blk_disk, queues)},
		{"queue_depth", offsetof(struct rk_blk_disk, queue_depth)},
		{"inflight", offsetof(struct rk_blk_disk, inflight)},
		{"errors", offsetof(struct rk_blk_disk, errors)},
		{"reconnects", offsetof(struct rk_blk_disk, reconnects)},
		{"reconnect_delay", offsetof(struct rk_blk_disk, reconnect_delay)},
		{"loss_timeout", offsetof(struct rk_blk_disk, loss_timeout)},
		{"path_mtu", offsetof(struct rk_blk_disk, path_mtu)},
	};
	char v[128], *end;

	if (read_attr(dir, "state", d->state, sizeof(d->state)))
		note_missing(d, "state");
	if (read_attr(dir, "server", d->server, sizeof(d->server)))
		note_missing(d, "server");
	if (read_attr(dir, "session", d->session, sizeof(d->session)))
		note_missing(d, "session");
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		uint64_t *dst = (uint64_t *)((char *)d + nums[i].off);

		errno = 0;
		if (read_attr(dir, nums[i].attr, v, sizeof(v)) ||
		    (*dst = strtoull(v, &end, 10), errno || end == v || *end))
			note_missing(d, nums[i].attr);
	}
	errno = 0;
	if (read_attr(dir, "tos", v, sizeof(v)) ||
	    (d->tos = strtoll(v, &end, 10), errno || end == v || *end))
		note_missing(d, "tos");
}

static int by_name(const void *a, const void *b)
{
	const struct rk_blk_disk *x = a, *y = b;
	size_t lx = strlen(x->name), ly = strlen(y->name);

	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x->name, y->name);
}

int rk_blk_list(const char *sysfs, struct rk_blk_disk **disks_p, int *n_p)
{
	struct rk_blk_disk *disks = NULL, *grown;
	struct dirent *e;
	int n = 0, ret;
	DIR *dir;

	sysfs = sysfs ? sysfs : RK_BLK_SYSFS;
	dir = opendir(sysfs);
	if (!dir) {
		ret = -errno;
		rk_error("read %s: %m", sysfs);
		return ret;
	}
	while ((e = readdir(dir))) {
		char path[PATH_MAX];

		if (!disk_name_ok(e->d_name))
			continue;
		grown = realloc(disks, (size_t)(n + 1) * sizeof(*disks));
		if (!grown) {
			free(disks);
			closedir(dir);
			return -ENOMEM;
		}
		disks = grown;
		memset(&disks[n], 0, sizeof(disks[n]));
		snprintf(disks[n].name, sizeof(disks[n].name), "%.15s", e->d_name);
		snprintf(path, sizeof(path), "%s/%s", sysfs, e->d_name);
		read_disk(path, &disks[n]);
		n++;
	}
	closedir(dir);
	if (n)
		qsort(disks, (size_t)n, sizeof(*disks), by_name);
	*disks_p = disks;
	*n_p = n;
	return 0;
}
