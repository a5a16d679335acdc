/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The memory server's session store: regions in anonymous memory or in
 * --state-dir files, their registration, the --keep clock, adoption after a
 * restart, and the status snapshot with the device ports' data counters. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdmakit/log.h>

#include "base/clock.h"
#include "memserver/memserver_int.h"

#define MS_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)

static uint64_t new_id(struct rk_memserver *srv)
{
	uint64_t id = 0;

	while (!id || ms_session_find(srv, id)) {
		if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
			/* Never expected: fall back on the clock and address. */
			id = (uint64_t)now_ms() * 0x9e3779b97f4a7c15ull ^ (uintptr_t)&id;
		}
	}
	return id;
}

static char *session_path(const char *dir, uint64_t id)
{
	char *p;

	if (asprintf(&p, "%s/session-%016" PRIx64, dir, id) < 0)
		return NULL;
	return p;
}

/* The region of a new session in a fresh --state-dir file (zero: sparse). */
static int map_file(struct ms_session *s, const char *dir, char *why, size_t why_len)
{
	int ret;

	s->path = session_path(dir, s->id);
	if (!s->path)
		return -ENOMEM;
	s->fd = open(s->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (s->fd < 0) {
		ret = -errno;
		rk_error("create the session file %s: %m", s->path);
		snprintf(why, why_len, "the server cannot create its session file");
		return ret;
	}
	if (ftruncate(s->fd, (off_t)s->size)) {
		ret = -errno;
		rk_error("size the session file %s to %" PRIu64 " bytes: %m", s->path, s->size);
		snprintf(why, why_len, "no room for %" PRIu64 " bytes in the server's state dir",
			 s->size);
		unlink(s->path);
		return ret == -EFBIG || ret == -ENOSPC ? -ENOSPC : ret;
	}
	s->mem = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->mem == MAP_FAILED) {
		s->mem = NULL;
		rk_error("map the session file %s (%" PRIu64 " bytes): %m", s->path, s->size);
		snprintf(why, why_len, "no memory for %" PRIu64 " bytes", s->size);
		unlink(s->path);
		return -ENOSPC;
	}
	return 0;
}

/* The region of a new session in memory of a kind other than host. */
static int map_kind(struct ms_session *s, char *why, size_t why_len)
{
	if (rk_mem_map(s->kind, s->size, &s->map)) {
		snprintf(why, why_len, "the server has no %s memory for %" PRIu64 " bytes",
			 rk_mem_kind_name(s->kind), s->size);
		return -ENOSPC;
	}
	s->mem = s->map.buf;
	return 0;
}

/* The region of a new session in anonymous memory (zero from the kernel,
 * and only touched pages take memory). */
static int map_anon(struct ms_session *s, char *why, size_t why_len)
{
	s->mem = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->mem == MAP_FAILED) {
		s->mem = NULL;
		rk_error("allocate %" PRIu64 " bytes for a session: %m", s->size);
		snprintf(why, why_len, "no memory for %" PRIu64 " bytes", s->size);
		return -ENOSPC;
	}
	return 0;
}

/* Let go of s's memory (and its --state-dir file's descriptor and name). */
static void session_unmap(struct ms_session *s)
{
	if (s->map.buf)
		rk_mem_unmap(&s->map);
	else if (s->mem)
		munmap(s->mem, s->size);
	s->mem = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->path);
	s->path = NULL;
}

static void session_release(struct ms_session *s, bool gone)
{
	if (s->mr && ibv_dereg_mr(s->mr))
		rk_warn("deregister the region of session %016" PRIx64 ": %m", s->id);
	if (gone && s->path && unlink(s->path))
		rk_warn("remove the session file %s: %m", s->path);
	session_unmap(s);
	free(s);
}

int ms_session_new(struct rk_memserver *srv, uint64_t size, const char *client,
		   struct ms_session **s_p, char *why, size_t why_len)
{
	struct ms_session *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(why, why_len, "the server is out of memory");
		return -ENOSPC;
	}
	s->fd = -1;
	s->map.fd = -1;
	s->odp = srv->o.odp;
	s->id = new_id(srv);
	s->size = size;
	snprintf(s->client, sizeof(s->client), "%s", client);
	s->created = time(NULL);
	s->expire_ms = -1;
	s->kind = srv->o.state_dir ? RK_MEM_HOST : srv->o.mem;
	if (s->kind == RK_MEM_AUTO) {
		char chose[200];

		s->kind = rk_mem_auto(NULL, size, "sessions outlive a device, so never device memory",
				      chose, sizeof(chose));
		rk_info("session %016" PRIx64 " (%" PRIu64 " bytes): %s", s->id, size, chose);
	}
	s->next = srv->sessions;
	srv->sessions = s;
	srv->nsessions++;
	srv->sessions_made++;
	*s_p = s;
	return 0;
}

/* The memory of a new session, of the kind it was given. */
static int session_map(struct rk_memserver *srv, struct ms_session *s, char *why, size_t why_len)
{
	int ret;

	if (srv->o.state_dir)
		ret = map_file(s, srv->o.state_dir, why, why_len);
	else if (s->kind != RK_MEM_HOST)
		ret = map_kind(s, why, why_len);
	else
		ret = map_anon(s, why, why_len);
	if (ret)
		session_unmap(s);
	return ret;
}

struct ms_session *ms_session_find(struct rk_memserver *srv, uint64_t id)
{
	for (struct ms_session *s = srv->sessions; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

int ms_session_check_dev(const struct ms_session *s, const struct ms_dev *dev, char *why,
			 size_t why_len)
{
	if (!s->mr || s->dev == dev)
		return 0;
	snprintf(why, why_len, "session %016" PRIx64 " lives on device %s, not %s", s->id,
		 ibv_get_device_name(s->dev->ctx->device), ibv_get_device_name(dev->ctx->device));
	return -EXDEV;
}

int ms_session_register(struct rk_memserver *srv, struct ms_session *s, struct ms_dev *dev,
			bool read_only, char *why, size_t why_len)
{
	int access = read_only ? MS_ACCESS & ~IBV_ACCESS_REMOTE_WRITE : MS_ACCESS;
	int ret = ms_session_check_dev(s, dev, why, why_len);

	if (ret || s->mr)
		return ret;
	if (!s->mem) {
		ret = session_map(srv, s, why, why_len);
		if (ret)
			return ret;
	}
	s->mr = ibv_reg_mr(dev->pd, s->mem, s->size,
			   access | (s->odp ? IBV_ACCESS_ON_DEMAND : 0));
	if (!s->mr) {
		ret = errno ? -errno : -ENOMEM;
		rk_error("register the %" PRIu64 "-byte region of session %016" PRIx64
			 " on %s: %m (locked memory limit? see ulimit -l)",
			 s->size, s->id, ibv_get_device_name(dev->ctx->device));
		snprintf(why, why_len, "the server cannot register %" PRIu64 " bytes", s->size);
		return ret == -ENOMEM || ret == -EAGAIN ? -ENOSPC : ret;
	}
	s->dev = dev;
	return 0;
}

void ms_session_unregister(struct ms_session *s)
{
	if (s->mr && ibv_dereg_mr(s->mr))
		rk_warn("deregister the region of session %016" PRIx64 ": %m", s->id);
	s->mr = NULL;
	s->dev = NULL;
}

void ms_session_free(struct rk_memserver *srv, struct ms_session *s, bool gone)
{
	for (struct ms_session **pp = &srv->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			srv->nsessions--;
			break;
		}
	}
	session_release(s, gone);
}

void ms_session_attach(struct ms_session *s, uint16_t queue)
{
	s->nconn++;
	s->mask |= 1ull << queue;
	s->idle_since = 0;
	s->expire_ms = -1;
}

void ms_session_detach(struct rk_memserver *srv, struct ms_session *s, uint16_t queue)
{
	s->nconn--;
	s->mask &= ~(1ull << queue);
	if (s->nconn)
		return;
	s->idle_since = time(NULL);
	s->expire_ms = now_ms() + (int64_t)srv->o.keep_s * 1000;
	rk_info("session %016" PRIx64 " has no connection left: kept %u s", s->id,
		srv->o.keep_s);
}

int ms_sessions_expire(struct rk_memserver *srv)
{
	int64_t now = now_ms(), next = -1;
	struct ms_session *s = srv->sessions, *n;

	for (; s; s = n) {
		n = s->next;
		if (s->nconn || s->expire_ms < 0)
			continue;
		if (s->expire_ms <= now) {
			rk_info("session %016" PRIx64 " (%" PRIu64 " bytes) expired: no connection "
				"for --keep %u s", s->id, s->size, srv->o.keep_s);
			srv->expired++;
			ms_session_free(srv, s, true);
			continue;
		}
		if (next < 0 || s->expire_ms - now < next)
			next = s->expire_ms - now;
	}
	return next < 0 ? -1 : next > INT_MAX ? INT_MAX : (int)next;
}

static int adopt_one(struct rk_memserver *srv, const char *name, uint64_t id)
{
	struct ms_session *s = calloc(1, sizeof(*s));
	struct stat st;
	int ret;

	if (!s)
		return -ENOMEM;
	s->id = id;
	s->odp = srv->o.odp;
	s->map.fd = -1;
	s->path = session_path(srv->o.state_dir, id);
	s->fd = s->path ? open(s->path, O_RDWR | O_CLOEXEC) : -1;
	if (s->fd < 0 || fstat(s->fd, &st)) {
		ret = s->path ? -errno : -ENOMEM;
		rk_error("open the session file %s/%s: %m", srv->o.state_dir, name);
		goto err_release;
	}
	if (st.st_size <= 0 || st.st_size % RK_MEM_BLOCK) {
		rk_warn("%s is %jd bytes, not a non-zero multiple of %u: not a session, left alone",
			s->path, (intmax_t)st.st_size, RK_MEM_BLOCK);
		ret = 0;
		goto err_release;
	}
	s->size = (uint64_t)st.st_size;
	s->mem = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->mem == MAP_FAILED) {
		s->mem = NULL;
		ret = -errno;
		rk_error("map the session file %s: %m", s->path);
		goto err_release;
	}
	snprintf(s->client, sizeof(s->client), "-");
	s->created = time(NULL);
	s->idle_since = s->created;
	s->expire_ms = now_ms() + (int64_t)srv->o.keep_s * 1000;
	s->adopted = true;
	s->next = srv->sessions;
	srv->sessions = s;
	srv->nsessions++;
	rk_info("adopted session %016" PRIx64 " (%" PRIu64 " bytes) from %s: kept %u s for its "
		"client", id, s->size, s->path, srv->o.keep_s);
	return 0;

err_release:
	session_release(s, false);
	return ret;
}

int ms_sessions_adopt(struct rk_memserver *srv)
{
	struct dirent *e;
	DIR *d;
	int ret = 0;

	if (!srv->o.state_dir)
		return 0;
	d = opendir(srv->o.state_dir);
	if (!d) {
		ret = -errno;
		rk_error("open the state directory %s: %m", srv->o.state_dir);
		return ret;
	}
	while (!ret && (e = readdir(d))) {
		char *end;
		uint64_t id;

		if (strncmp(e->d_name, "session-", 8) || strlen(e->d_name) != 24)
			continue;
		errno = 0;
		id = strtoull(e->d_name + 8, &end, 16);
		if (errno || *end || !id)
			continue;
		ret = adopt_one(srv, e->d_name, id);
	}
	closedir(d);
	return ret;
}

/* ---- status ---- */

static int read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* Two counters of a port: dir "counters" (port_xmit_data, port_rcv_data, in
 * 4-byte words) or "hw_counters" (sent_pkts, rcvd_pkts, as rxe has). */
static int read_pair(const char *dev, unsigned int port, const char *dir, const char *a,
		     const char *b, uint64_t *va, uint64_t *vb)
{
	char path[PATH_MAX];
	int ret;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/%s/%s", dev, port, dir, a);
	ret = read_u64(path, va);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/%s/%s", dev, port, dir, b);
	return read_u64(path, vb);
}

static int read_port(const char *dev, unsigned int port, uint64_t *xmit, uint64_t *rcv)
{
	return read_pair(dev, port, "counters", "port_xmit_data", "port_rcv_data", xmit, rcv);
}

static int read_pkts(const char *dev, unsigned int port, uint64_t *sent, uint64_t *rcvd)
{
	return read_pair(dev, port, "hw_counters", "sent_pkts", "rcvd_pkts", sent, rcvd);
}

void ms_counters_baseline(struct rk_memserver *srv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	srv->nbase = 0;
	for (int i = 0; list && list[i] && srv->nbase < RK_MEMSERVER_MAX_COUNTERS; i++) {
		const char *name = ibv_get_device_name(list[i]);

		if (srv->o.device && strcmp(name, srv->o.device))
			continue;
		for (unsigned int p = 1; p <= 2 && srv->nbase < RK_MEMSERVER_MAX_COUNTERS; p++) {
			struct ms_counter_base *b = &srv->base[srv->nbase];
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u", name, p);
			if (access(path, F_OK))
				break;
			snprintf(b->device, sizeof(b->device), "%s", name);
			b->port = (uint8_t)p;
			if (read_port(name, p, &b->xmit_words, &b->rcv_words))
				b->xmit_words = b->rcv_words = UINT64_MAX; /* none */
			if (read_pkts(name, p, &b->sent_pkts, &b->rcvd_pkts))
				b->sent_pkts = b->rcvd_pkts = UINT64_MAX;
			srv->nbase++;
		}
	}
	if (list)
		ibv_free_device_list(list);
}

static void fill_counters(const struct rk_memserver *srv, struct rk_memserver_status *st)
{
	st->ncounters = srv->nbase;
	for (int i = 0; i < srv->nbase; i++) {
		const struct ms_counter_base *b = &srv->base[i];
		struct rk_memserver_counters *c = &st->counters[i];
		uint64_t x, r;

		snprintf(c->device, sizeof(c->device), "%s", b->device);
		c->port = b->port;
		c->available = b->xmit_words != UINT64_MAX &&
			       !read_port(b->device, b->port, &x, &r);
		if (c->available) {
			c->xmit_bytes = (x - b->xmit_words) * 4;
			c->rcv_bytes = (r - b->rcv_words) * 4;
		}
		c->has_packets = b->sent_pkts != UINT64_MAX &&
				 !read_pkts(b->device, b->port, &x, &r);
		if (c->has_packets) {
			c->sent_packets = x - b->sent_pkts;
			c->rcvd_packets = r - b->rcvd_pkts;
		}
	}
}

int rk_memserver_status(struct rk_memserver *srv, struct rk_memserver_status **st_p)
{
	struct rk_memserver_status *st = calloc(1, sizeof(*st));
	int i = 0;

	if (!st)
		return -ENOMEM;
	st->sessions = calloc((size_t)srv->nsessions + 1, sizeof(*st->sessions));
	if (!st->sessions) {
		free(st);
		return -ENOMEM;
	}
	st->started = srv->started;
	st->port = srv->port;
	for (struct ms_session *s = srv->sessions; s; s = s->next, i++) {
		struct rk_memserver_session_info *si = &st->sessions[i];
		int64_t left = s->expire_ms < 0 ? -1 : s->expire_ms - now_ms();

		si->id = s->id;
		snprintf(si->client, sizeof(si->client), "%s", s->client);
		si->size = s->size;
		si->queues = s->nconn;
		si->queue_mask = s->mask;
		si->created = s->created;
		si->idle_since = s->idle_since;
		si->expires = left < 0 ? 0 : time(NULL) + (time_t)((left + 999) / 1000);
		si->adopted = s->adopted;
		si->mem = s->kind;
		st->bytes += s->size;
	}
	st->nsessions = i;
	st->connections = srv->nconns;
	st->accepted = srv->accepted;
	st->rejected = srv->rejected;
	st->disconnected = srv->disconnected;
	st->expired = srv->expired;
	st->sessions_made = srv->sessions_made;
	fill_counters(srv, st);
	*st_p = st;
	return 0;
}

void rk_memserver_status_free(struct rk_memserver_status *st)
{
	if (!st)
		return;
	free(st->sessions);
	free(st);
}
