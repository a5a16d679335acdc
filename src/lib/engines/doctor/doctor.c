/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit doctor (doctor.h): the checks in order, each handed to the caller
 * as it is made; the files they read, under a root a test can replace. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/gate.h>
#include <rdmakit/units.h>

#include "engines/doctor/doctor_int.h"

const char *rk_doctor_status_str(enum rk_doctor_status status)
{
	static const char *const names[] = {"PASS", "WARN", "FAIL", "SKIP"};

	return (unsigned int)status < 4 ? names[status] : "UNKNOWN";
}

int rk_doctor_exit_status(const struct rk_doctor_summary *sum)
{
	if (sum->fail)
		return 1;
	return sum->warn ? RK_EXIT_GATE : 0;
}

void doc_begin(struct rk_doctor_check *c, const char *id, const char *device, uint8_t port,
	       const char *title_fmt, ...)
{
	va_list ap;

	memset(c, 0, sizeof(*c));
	c->id = id;
	snprintf(c->device, sizeof(c->device), "%s", device ? device : "");
	c->port = port;
	va_start(ap, title_fmt);
	vsnprintf(c->title, sizeof(c->title), title_fmt, ap);
	va_end(ap);
}

void doc_status(struct rk_doctor_check *c, enum rk_doctor_status status, int err)
{
	c->status = status;
	c->err = status == RK_DOCTOR_WARN || status == RK_DOCTOR_FAIL ? err : 0;
}

void doc_add(char *buf, size_t len, const char *fmt, ...)
{
	size_t at = strnlen(buf, len);
	va_list ap;

	if (at + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + at, len - at, fmt, ap);
	va_end(ap);
}

void doc_emit(struct doc *d, const struct rk_doctor_check *c)
{
	int *const counts[] = {&d->sum.pass, &d->sum.warn, &d->sum.fail, &d->sum.skip};

	if ((unsigned int)c->status < 4)
		(*counts[c->status])++;
	if (c->status == RK_DOCTOR_FAIL && !d->first_fail[0])
		doc_add(d->first_fail, sizeof(d->first_fail), "%s", c->title);
	if (c->status == RK_DOCTOR_WARN && !d->first_warn[0])
		doc_add(d->first_warn, sizeof(d->first_warn), "%s", c->title);
	if (d->fn)
		d->fn(c, d->arg);
}

static void vpath(const struct doc *d, char *buf, size_t len, const char *fmt, va_list ap)
{
	size_t at = (size_t)snprintf(buf, len, "%s", d->root);

	if (at < len)
		vsnprintf(buf + at, len - at, fmt, ap);
}

void doc_path(const struct doc *d, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpath(d, buf, len, fmt, ap);
	va_end(ap);
}

static int read_path(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

int doc_read(const struct doc *d, char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vpath(d, path, sizeof(path), fmt, ap);
	va_end(ap);
	buf[0] = '\0';
	return read_path(path, buf, len);
}

int doc_read_num(const struct doc *d, long *v_p, const char *fmt, ...)
{
	char path[PATH_MAX], text[64], *end;
	va_list ap;
	long v;
	int ret;

	va_start(ap, fmt);
	vpath(d, path, sizeof(path), fmt, ap);
	va_end(ap);
	ret = read_path(path, text, sizeof(text));
	if (ret < 0)
		return ret;
	errno = 0;
	v = strtol(text, &end, 0);
	if (errno || end == text || (*end && *end != ':'))
		return -EINVAL;
	*v_p = v;
	return 0;
}

int doc_num_at(const char *p, bool hex, uint64_t min, uint64_t max, uint64_t *v_p)
{
	char tok[40], why[96];
	size_t n;

	p += strspn(p, " \t");
	n = strcspn(p, " \t\r\n");
	if (!n || n + 3 > sizeof(tok))
		return -EINVAL;
	/* rk_parse_u64 takes hex only behind 0x. */
	snprintf(tok, sizeof(tok), "%s%.*s", hex ? "0x" : "", (int)n, p);
	return rk_parse_u64(tok, min, max, 0, v_p, why, sizeof(why));
}

int doc_line_num(const char *text, const char *key, bool hex, uint64_t max, uint64_t *v_p)
{
	size_t klen = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, klen))
			return doc_num_at(l + klen, hex, 0, max, v_p);
	return -ENOENT;
}

bool doc_exists(const struct doc *d, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vpath(d, path, sizeof(path), fmt, ap);
	va_end(ap);
	return access(path, F_OK) == 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct doc_dev *)a)->name, ((const struct doc_dev *)b)->name);
}

/* A device's kernel driver: the module its PCI (or other) device is bound
 * to; a software device has none and says its netdev in "parent": rxe a
 * channel adapter, siw an RNIC. */
static void dev_module(const struct doc *d, struct doc_dev *dd)
{
	char path[PATH_MAX], link[PATH_MAX], text[64];
	const char *base;
	ssize_t n;

	doc_path(d, path, sizeof(path), "/sys/class/infiniband/%s/device/driver/module", dd->name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		base = strrchr(link, '/');
		snprintf(dd->module, sizeof(dd->module), "%.63s", base ? base + 1 : link);
		return;
	}
	if (doc_read(d, text, sizeof(text), "/sys/class/infiniband/%s/node_type", dd->name) < 0)
		return;
	if (!doc_exists(d, "/sys/class/infiniband/%s/parent", dd->name) &&
	    strncmp(dd->name, "rxe", 3) && strncmp(dd->name, "siw", 3))
		return;
	snprintf(dd->module, sizeof(dd->module), "%s", strstr(text, "RNIC") ? "siw" : "rdma_rxe");
}

/* The devices in /sys/class/infiniband, sorted; -d keeps the one named. */
static void list_devices(struct doc *d)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dir;

	doc_path(d, path, sizeof(path), "/sys/class/infiniband");
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		d->nall++;
		if (d->ndevs == DOC_MAX_DEVICES ||
		    (d->o->device && strcmp(d->o->device, e->d_name)))
			continue;
		snprintf(d->devs[d->ndevs].name, sizeof(d->devs[0].name), "%.63s", e->d_name);
		dev_module(d, &d->devs[d->ndevs]);
		d->ndevs++;
	}
	closedir(dir);
	qsort(d->devs, (size_t)d->ndevs, sizeof(d->devs[0]), name_cmp);
}

/* The checks in the order they are made. */
static doc_check_fn *const checks[] = {
	doc_check_modules,  doc_check_dev_files, doc_check_devices,
	doc_check_ports,    doc_check_memlock,	 doc_check_hugepages,
	doc_check_firewall, doc_check_counters,	 doc_check_software,
	doc_check_peer, /* with a host: the path to it */
};

int rk_doctor_run(const struct rk_doctor_opts *opts, rk_doctor_fn fn, void *arg,
		  struct rk_doctor_summary *sum_p)
{
	static const struct rk_doctor_opts none;
	struct doc *d;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->o = opts ? opts : &none;
	if (d->o->root && strcmp(d->o->root, "/"))
		snprintf(d->root, sizeof(d->root), "%s", d->o->root);
	d->fn = fn;
	d->arg = arg;
	list_devices(d);

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		checks[i](d);

	for (int i = 0; i < d->ndevs; i++)
		if (d->devs[i].dev) {
			struct ibv_context *ctx = d->devs[i].dev->ctx;

			rk_device_close(d->devs[i].dev);
			ibv_close_device(ctx);
		}
	if (sum_p)
		*sum_p = d->sum;
	free(d);
	return 0;
}
