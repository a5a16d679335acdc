/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* A port's counters from sysfs: snapshots, deltas, and citing the counters
 * that explain a failed completion. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rdmakit/counters.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/status.h>

#include "base/clock.h"
#include "verbs/counters_int.h"

#define SYSFS_IB "/sys/class/infiniband"

static const char *const group_dirs[RK_COUNTER_GROUPS] = {
	[RK_COUNTERS_PORT] = "counters",
	[RK_COUNTERS_HW] = "hw_counters",
};

const char *rk_counter_group_str(enum rk_counter_group group)
{
	if ((unsigned int)group < RK_COUNTER_GROUPS)
		return group_dirs[group];
	return "unknown";
}

int rk_counter_parse(const char *text, uint64_t *value_p)
{
	uint64_t v = 0;
	const char *p = text;

	if (!text || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*value_p = v;
	return 0;
}

/* Read one counter file into *value_p. 1: left out (said at debug level). */
static int read_value(int dirfd, const char *dir, const char *name, uint64_t *value_p)
{
	char buf[64];
	ssize_t len;
	int fd, ret;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rk_debug("counter %s/%s: cannot open: %m; left out", dir, name);
		return 1;
	}
	len = read(fd, buf, sizeof(buf) - 1);
	if (len < 0) {
		rk_debug("counter %s/%s: cannot read: %m; left out", dir, name);
		close(fd);
		return 1;
	}
	close(fd);
	buf[len] = '\0';
	ret = rk_counter_parse(buf, value_p);
	if (ret) {
		buf[strcspn(buf, "\n")] = '\0';
		rk_debug("counter %s/%s: '%s' is not a number; left out", dir, name, buf);
		return 1;
	}
	return 0;
}

static int add_counter(struct rk_counters *s, int *cap, enum rk_counter_group group,
		       const char *name, uint64_t value)
{
	if (s->n == *cap) {
		int ncap = *cap ? *cap * 2 : 32;
		struct rk_counter *v = realloc(s->v, (size_t)ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		*cap = ncap;
	}
	snprintf(s->v[s->n].name, sizeof(s->v[s->n].name), "%s", name);
	s->v[s->n].group = group;
	s->v[s->n].value = value;
	s->n++;
	return 0;
}

/* Read every counter file of one group directory. A missing directory is no error. */
static int read_group(struct rk_counters *s, int *cap, const char *port_dir,
		      enum rk_counter_group group)
{
	char dir[512];
	struct dirent *e;
	DIR *d;
	int ret = 0;

	snprintf(dir, sizeof(dir), "%s/%s", port_dir, group_dirs[group]);
	d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			rk_debug("counters %s: cannot open: %m; left out", dir);
		return 0;
	}
	s->groups |= 1u << group;
	while (!ret && (e = readdir(d))) {
		uint64_t value;

		if (e->d_name[0] == '.')
			continue;
		/* hw_counters/lifespan is how long the kernel caches the values (ms). */
		if (group == RK_COUNTERS_HW && !strcmp(e->d_name, "lifespan")) {
			if (!read_value(dirfd(d), dir, e->d_name, &value))
				s->lifespan_ms = value > 60000 ? 60000 : (uint32_t)value;
			continue;
		}
		if (strlen(e->d_name) >= RK_COUNTER_NAME_MAX ||
		    read_value(dirfd(d), dir, e->d_name, &value)) {
			s->skipped++;
			continue;
		}
		ret = add_counter(s, cap, group, e->d_name, value);
	}
	closedir(d);
	return ret;
}

static int counter_cmp(const void *a, const void *b)
{
	const struct rk_counter *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return strcmp(x->name, y->name);
}

int rk_counters_read_dir(const char *port_dir, const char *device, uint8_t port_num,
			 struct rk_counters **snap_p)
{
	struct rk_counters *s;
	struct stat st;
	int cap = 0, ret;

	if (stat(port_dir, &st)) {
		rk_error("counters of %s port %u: %s: %m", device, port_num, port_dir);
		return -ENOENT;
	}
	if (!S_ISDIR(st.st_mode)) {
		rk_error("counters of %s port %u: %s is not a directory", device, port_num,
			 port_dir);
		return -ENOTDIR;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	snprintf(s->device, sizeof(s->device), "%s", device);
	s->port = port_num;
	s->taken_ns = now_ns();
	for (int g = 0; g < RK_COUNTER_GROUPS; g++) {
		ret = read_group(s, &cap, port_dir, (enum rk_counter_group)g);
		if (ret) {
			rk_counters_free(s);
			return ret;
		}
	}
	if (s->n > 1)
		qsort(s->v, (size_t)s->n, sizeof(*s->v), counter_cmp);
	*snap_p = s;
	return 0;
}

int rk_counters_read(const struct rk_device *dev, uint8_t port_num, struct rk_counters **snap_p)
{
	char dir[256];
	int ret = rk_port_check(dev, port_num);

	if (ret)
		return ret;
	snprintf(dir, sizeof(dir), SYSFS_IB "/%s/ports/%u", dev->info.name, port_num);
	return rk_counters_read_dir(dir, dev->info.name, port_num, snap_p);
}

void rk_counters_free(struct rk_counters *snap)
{
	if (!snap)
		return;
	free(snap->v);
	free(snap);
}

static const struct rk_counter *find(const struct rk_counters *s, enum rk_counter_group group,
				     const char *name)
{
	struct rk_counter key = {.group = group};

	snprintf(key.name, sizeof(key.name), "%s", name);
	if (!s->n)
		return NULL;
	return bsearch(&key, s->v, (size_t)s->n, sizeof(*s->v), counter_cmp);
}

int rk_counters_get(const struct rk_counters *snap, enum rk_counter_group group,
		    const char *name, uint64_t *value_p)
{
	const struct rk_counter *c = find(snap, group, name);

	if (!c)
		return -ENOENT;
	*value_p = c->value;
	return 0;
}

int rk_counters_diff(const struct rk_counters *before, const struct rk_counters *after,
		     bool nonzero_only, struct rk_counters_delta **delta_p)
{
	struct rk_counters_delta *d;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->v = calloc(after->n ? (size_t)after->n : 1, sizeof(*d->v));
	if (!d->v) {
		free(d);
		return -ENOMEM;
	}
	d->interval_ns = after->taken_ns > before->taken_ns ? after->taken_ns - before->taken_ns
							    : 0;
	for (int i = 0; i < after->n; i++) {
		const struct rk_counter *a = &after->v[i];
		const struct rk_counter *b = find(before, a->group, a->name);
		struct rk_counter_delta c = {
			.name = a->name, .group = a->group, .before = b ? b->value : 0,
			.after = a->value, .is_new = !b,
		};

		c.delta = (int64_t)(c.after - c.before);
		if (nonzero_only && !c.delta)
			continue;
		d->v[d->n++] = c;
	}
	*delta_p = d;
	return 0;
}

void rk_counters_delta_free(struct rk_counters_delta *delta)
{
	if (!delta)
		return;
	free(delta->v);
	free(delta);
}

const struct rk_counter_delta *rk_counters_delta_find(const struct rk_counters_delta *delta,
						      const char *name)
{
	for (int i = 0; i < delta->n; i++)
		if (!strcmp(delta->v[i].name, name))
			return &delta->v[i];
	return NULL;
}

/* Append "name +N" to buf (", " before all but the first). */
static void append_change(char *buf, size_t len, size_t *off, int nth, const char *name,
			  int64_t delta)
{
	int w;

	if (*off >= len)
		return;
	w = snprintf(buf + *off, len - *off, "%s%s %+lld", nth ? ", " : "", name,
		     (long long)delta);
	*off += w > 0 ? (size_t)w : 0;
}

/* The counters named that moved in delta (rises only: went up) into buf. */
static int cite(const struct rk_counters_delta *delta, const char *const *names, bool rises_only,
		char *buf, size_t len)
{
	size_t off = 0;
	int cited = 0;

	if (len)
		buf[0] = '\0';
	for (const char *const *n = names; *n; n++) {
		const struct rk_counter_delta *c = rk_counters_delta_find(delta, *n);

		if (!c || !c->delta || (rises_only && c->delta < 0))
			continue;
		append_change(buf, len, &off, cited++, c->name, c->delta);
	}
	return cited;
}

int rk_counters_cite(const struct rk_counters_delta *delta, enum ibv_wc_status status, char *buf,
		     size_t len)
{
	return cite(delta, rk_wc_status_counters(status), false, buf, len);
}

/* Rises only: a counter that went down was reset, which says nothing. */
int rk_counters_trouble(const struct rk_counters_delta *delta, enum rk_trouble t, char *buf,
			size_t len)
{
	static const char *const none[] = {NULL};
	const struct rk_trouble_desc *d = rk_trouble_desc(t);

	return cite(delta, d ? d->counters : none, true, buf, len);
}

/* ---- a run's counters ---- */

void rk_run_counters_discard(struct rk_run_counters *c)
{
	rk_counters_free(c->before_);
	c->before_ = NULL;
}

int rk_run_counters_start(struct rk_run_counters *c, const struct rk_device *dev,
			  uint8_t port_num)
{
	char dir[256];
	int ret;

	rk_run_counters_discard(c);
	memset(c, 0, sizeof(*c));
	snprintf(c->device, sizeof(c->device), "%s", dev->info.name);
	c->port = port_num;
	for (int s = 0; s < RK_WC_STATUS_SLOTS; s++)
		c->wc_failed_[s] = rk_wc_failures((enum ibv_wc_status)s);
	snprintf(dir, sizeof(dir), SYSFS_IB "/%s/ports/%u", c->device, port_num);
	ret = rk_counters_read_dir(dir, c->device, port_num, &c->before_);
	if (ret) {
		rk_debug("counters of %s port %u not read: %s; the report goes without them",
			 c->device, port_num, rk_strerror(ret));
		c->error = ret;
	}
	return ret;
}

void rk_run_counters_fill(struct rk_run_counters *c, const struct rk_counters *before,
			  const struct rk_counters *after)
{
	c->n = c->left_out = 0;
	c->interval_ns = after->taken_ns > before->taken_ns ? after->taken_ns - before->taken_ns
							    : 0;
	c->state = after->groups ? RK_RUN_COUNTERS_READ : RK_RUN_COUNTERS_NONE;
	for (int i = 0; i < after->n; i++) {
		const struct rk_counter *a = &after->v[i];
		const struct rk_counter *b = find(before, a->group, a->name);
		int64_t delta = (int64_t)(a->value - (b ? b->value : 0));

		if (!delta)
			continue;
		if (c->n == RK_RUN_COUNTERS_MAX) {
			c->left_out++;
			continue;
		}
		snprintf(c->v[c->n].name, sizeof(c->v[c->n].name), "%s", a->name);
		c->v[c->n].group = a->group;
		c->v[c->n].delta = delta;
		c->n++;
	}
}

/* The failed completions logged since start, in order of status. */
static void note_failures(struct rk_run_counters *c)
{
	c->nfailures = 0;
	for (int s = 0; s < RK_WC_STATUS_SLOTS && c->nfailures < RK_RUN_FAILURES_MAX; s++) {
		uint32_t now = rk_wc_failures((enum ibv_wc_status)s);

		if (now == c->wc_failed_[s])
			continue;
		c->failures[c->nfailures].status = (enum ibv_wc_status)s;
		c->failures[c->nfailures].count = now - c->wc_failed_[s];
		c->nfailures++;
	}
}

void rk_run_counters_stop(struct rk_run_counters *c)
{
	struct rk_counters *after;
	char dir[256];
	int ret;

	if (!c->before_)
		return;
	/* A read within lifespan of another (anyone's) gets the kernel's cached
	 * values: wait it out (and a jiffy or two) so the run's end is in them. */
	if (c->before_->lifespan_ms)
		usleep((useconds_t)(c->before_->lifespan_ms + 10) * 1000);
	note_failures(c);
	snprintf(dir, sizeof(dir), SYSFS_IB "/%s/ports/%u", c->device, c->port);
	ret = rk_counters_read_dir(dir, c->device, c->port, &after);
	if (ret) {
		rk_debug("counters of %s port %u not read after the run: %s", c->device, c->port,
			 rk_strerror(ret));
		c->error = ret;
	} else {
		rk_run_counters_fill(c, c->before_, after);
		rk_counters_free(after);
	}
	rk_run_counters_discard(c);
}

const struct rk_run_counter *rk_run_counters_find(const struct rk_run_counters *c,
						  const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

int rk_run_counters_str(const struct rk_run_counters *c, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (i = 0; i < c->n && off < len; i++)
		append_change(buf, len, &off, i, c->v[i].name, c->v[i].delta);
	return off < len ? i : i - 1;
}

void rk_run_counters_delta(const struct rk_run_counters *c, struct rk_counter_delta *v,
			   struct rk_counters_delta *d)
{
	for (int i = 0; i < c->n; i++)
		v[i] = (struct rk_counter_delta){
			.name = c->v[i].name,
			.group = c->v[i].group,
			.delta = c->v[i].delta,
		};
	*d = (struct rk_counters_delta){.interval_ns = c->interval_ns, .n = c->n, .v = v};
}

int rk_run_counters_cite(const struct rk_run_counters *c, enum ibv_wc_status status, char *buf,
			 size_t len)
{
	struct rk_counter_delta v[RK_RUN_COUNTERS_MAX];
	struct rk_counters_delta d;

	rk_run_counters_delta(c, v, &d);
	return rk_counters_cite(&d, status, buf, len);
}

int rk_run_counters_trouble(const struct rk_run_counters *c, enum rk_trouble t, char *buf,
			    size_t len)
{
	struct rk_counter_delta v[RK_RUN_COUNTERS_MAX];
	struct rk_counters_delta d;

	rk_run_counters_delta(c, v, &d);
	return rk_counters_trouble(&d, t, buf, len);
}
