/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The share engine's three ways (import, shm, fork) and rk_share_run(). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/error.h>
#include <rdmakit/gid.h>
#include <rdmakit/log.h>
#include <rdmakit/pattern.h>
#include <rdmakit/status.h>

#include "base/error_int.h"
#include "verbs/device_int.h"
#include "engines/share/share_int.h"

static const char *const way_names[] = {
	[RK_SHARE_IMPORT] = "import", [RK_SHARE_SHM] = "shm", [RK_SHARE_FORK] = "fork"};

const char *rk_share_way_str(enum rk_share_way way)
{
	return (unsigned int)way < 3 ? way_names[way] : "unknown";
}

int rk_share_way_parse(const char *name, enum rk_share_way *way_p)
{
	for (unsigned int i = 0; i < 3; i++) {
		if (name && !strcmp(name, way_names[i])) {
			*way_p = (enum rk_share_way)i;
			return 0;
		}
	}
	return -EINVAL;
}

void sh_step(const struct rk_share_opts *o, struct rk_share_result *res, const char *name, int who,
	     bool ok, const char *fmt, ...)
{
	struct rk_share_step *s;
	va_list ap;

	if (!ok)
		res->failures++;
	if (res->nsteps >= RK_SHARE_MAX_STEPS) {
		rk_error("share: more than %d steps; step '%s' not recorded", RK_SHARE_MAX_STEPS,
			 name);
		return;
	}
	s = &res->steps[res->nsteps++];
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->process = who;
	s->ok = ok;
	va_start(ap, fmt);
	vsnprintf(s->detail, sizeof(s->detail), fmt, ap);
	va_end(ap);
	if (o->progress)
		o->progress(RK_SHARE_STEP, res, o->progress_arg);
}

static void begin(const struct rk_share_opts *o, struct rk_share_result *res)
{
	if (o->progress)
		o->progress(RK_SHARE_BEGIN, res, o->progress_arg);
}

/* ---- shm ---- */

static int way_shm(const struct rk_share_opts *o, struct rk_share_result *res)
{
	size_t len = 3 * (size_t)o->procs * o->size;
	int fd, ret;

	ret = rk_shm_create("rdmakit-share", len, &fd);
	if (ret)
		return ret;
	res->shared_bytes = len;
	begin(o, res);
	ret = sh_run_workers(o, fd, res);
	close(fd);
	return ret;
}

/* ---- fork ---- */

/* A process that registers memory first and calls ibv_fork_init() after. */
static int late_main(int idx, int sock, void *argp)
{
	const struct rk_share_opts *o = argp;
	struct sh_msg m = {.type = SH_DONE};
	struct rk_port_sel sel;
	struct ibv_pd *pd = NULL;
	struct rk_mr *mr = NULL;
	int ret;

	(void)idx;
	/* No QP here: an iWARP device is taken too. */
	ret = rk_port_open_cm(o->device, o->port_num, o->gid_index, &sel);
	if (ret)
		return ret;
	ret = rk_pd_alloc(sel.dev, &pd);
	if (!ret)
		ret = rk_mr_alloc(pd, 4096, IBV_ACCESS_LOCAL_WRITE, &mr);
	if (!ret) {
		m.ret = rk_fork_init();
		m.fork_status = (int32_t)ibv_is_fork_initialized();
		ret = sh_send(sock, &m);
	}
	rk_mr_free(mr);
	rk_pd_free(pd);
	rk_port_close(&sel);
	return ret;
}

static void fork_steps(const struct rk_share_opts *o, struct rk_share_result *res)
{
	struct rk_share_fork_info *f = &res->fork;
	bool unneeded = f->late_status == IBV_FORK_UNNEEDED;

	sh_step(o, res, "init", -1, f->init_ret == 0,
		"ibv_fork_init() before any registration returned %d (%s); "
		"ibv_is_fork_initialized() reports %s%s",
		-f->init_ret, f->init_ret ? rk_strerror(f->init_ret) : "success",
		rk_fork_status_str(f->status),
		f->status == IBV_FORK_UNNEEDED ? ": the kernel copies DMA pages on fork, so fork "
						 "is safe even without ibv_fork_init"
					       : "");
	/* EINVAL is the documented failure. rdma-core 44's ibv_fork_init() does
	 * not look at UNNEEDED at all (registered too early: EINVAL); later
	 * releases return 0 first when the kernel copies DMA pages on fork
	 * (unless RDMAV_USE_MADVISE is set). */
	f->late_as_documented = f->late_ret == -EINVAL || (unneeded && f->late_ret == 0);
	sh_step(o, res, "late", -1, f->late_as_documented,
		"a process that registered an MR first, then called ibv_fork_init(): it returned "
		"%s (%s; ibv_is_fork_initialized() there: %s)",
		errno_name(f->late_ret),
		f->late_ret == -EINVAL ? "the documented failure: registration came before "
					 "ibv_fork_init, even though this kernel makes fork "
					 "support unneeded"
		: f->late_ret == 0 && unneeded
			? "accepted: this libibverbs skips the too-late "
			  "check when fork support is unneeded"
			: "neither the documented EINVAL nor an UNNEEDED no-op",
		rk_fork_status_str(f->late_status));
}

static int way_fork(const struct rk_share_opts *o, struct rk_share_result *res)
{
	struct sh_proc late;
	const char *env = getenv("RDMAV_FORK_SAFE");
	struct sh_msg r;
	int ret, failed;

	if (env) {
		res->fork.has_fork_safe = true;
		snprintf(res->fork.fork_safe, sizeof(res->fork.fork_safe), "%s", env);
	}
	begin(o, res);
	/* First a child that registers before ibv_fork_init(): this process has
	 * touched no verbs yet, so the child starts as clean as a new program. */
	sh_procs_init(&late, 1);
	ret = sh_spawn(&late, 1, late_main, (void *)o);
	if (!ret)
		ret = sh_recv(late.sock, SH_DONE, &r, "the late-init child");
	failed = sh_reap(&late, 1, ret != 0);
	if (ret)
		return ret;
	if (failed) {
		rk_error("the late-init child exited with an error");
		return -EIO;
	}
	res->fork.late_ret = r.ret;
	res->fork.late_status = (enum ibv_fork_status)r.fork_status;
	/* Now this process: ibv_fork_init() before any registration. */
	res->fork.init_ret = rk_fork_init();
	res->fork.status = ibv_is_fork_initialized();
	fork_steps(o, res);
	return sh_run_workers(o, -1, res);
}

/* ---- import ---- */

struct user {
	const struct rk_share_opts *o;
	struct rk_imported *imp;
	struct rk_share_handles h;
	struct rk_cq *cq;
	struct rk_mr *mr;
	struct rk_qp *x, *y;
};

/* Its own CQ, local buffer and two QPs connected to each other, all on the
 * imported context and PD: y serves the owner's MR, x READs and WRITEs it. */
static int user_setup(struct user *u)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC, .port_num = u->o->port_num ?: 1};
	struct rk_gid_want want = {.index = u->o->gid_index};
	struct rk_gid_choice gid;
	struct rk_endpoint ex, ey;
	int ret;

	if (rk_port_is_roce(u->imp->dev, qa.port_num) || want.index >= 0) {
		if ((ret = rk_gid_select(u->imp->dev, qa.port_num, &want, &gid)))
			return ret;
		qa.gid = &gid;
	}
	if ((ret = rk_cq_create(u->imp->dev, 16, false, &u->cq)) ||
	    (ret = rk_mr_alloc(u->imp->pd, 2 * u->o->size, IBV_ACCESS_LOCAL_WRITE, &u->mr)) ||
	    (ret = rk_qp_create(u->imp->pd, u->imp->dev, u->cq, u->cq, &qa, &u->x)) ||
	    (ret = rk_qp_create(u->imp->pd, u->imp->dev, u->cq, u->cq, &qa, &u->y)))
		return ret;
	rk_qp_local_endpoint(u->x, &ex);
	rk_qp_local_endpoint(u->y, &ey);
	if ((ret = rk_qp_connect(u->x, 0, &ey, NULL)))
		return ret;
	return rk_qp_connect(u->y, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &ex, NULL);
}

/* READ slice idx of the owner's MR and check it; WRITE slice procs + idx. */
static int user_rdma(struct user *u, int idx, struct sh_msg *m)
{
	size_t sz = u->o->size;
	uint8_t *local = u->mr->buf;
	uint32_t rkey = u->imp->mr->rkey;
	int ret;

	ret = sh_rdma(u->x, u->mr, RK_OP_READ, 1, local, u->h.mr_addr + (uint64_t)idx * sz, rkey,
		      (uint32_t)sz);
	if (!ret)
		ret = sh_wait(u->cq, 1, "READ of the owner's MR");
	if (ret)
		return ret;
	m->bad = rk_pattern_check(local, sz, 5000 + (uint32_t)idx);
	rk_pattern_fill(local + sz, sz, 6000 + (uint32_t)idx);
	ret = sh_rdma(u->x, u->mr, RK_OP_WRITE, 2, local + sz,
		      u->h.mr_addr + (u->o->procs + (uint64_t)idx) * sz, rkey, (uint32_t)sz);
	return ret ? ret : sh_wait(u->cq, 1, "WRITE into the owner's MR");
}

/* A user: import the owner's context, PD and MR, use them, unimport. */
static int user_main(int idx, int sock, void *argp)
{
	struct user u = {.o = argp};
	struct sh_msg m = {.type = SH_DONE, .bad = -1};
	int fd = -1, ret;

	ret = rk_share_recv_handles(sock, SH_MSG_WAIT_MS, &fd, &u.h);
	if (ret)
		return ret;
	ret = rk_share_import(fd, &u.h, &u.imp);
	if (ret) {
		m.ret = ret;
		snprintf(m.text, sizeof(m.text), "ibv_import_device: %s",
			 ret == -EOPNOTSUPP ? "EOPNOTSUPP from the provider" : rk_strerror(ret));
		sh_send(sock, &m);
		return ret;
	}
	snprintf(m.text, sizeof(m.text),
		 "pid %d imported %s: PD handle %u, MR handle %u (lkey 0x%x rkey 0x%x)",
		 (int)getpid(), u.imp->dev->info.name, u.h.pd_handle, u.h.mr_handle,
		 u.imp->mr->lkey, u.imp->mr->rkey);
	ret = user_setup(&u);
	if (!ret)
		ret = user_rdma(&u, idx, &m);
	rk_qp_destroy(u.y);
	rk_qp_destroy(u.x);
	rk_mr_free(u.mr);
	rk_cq_destroy(u.cq);
	rk_share_unimport(u.imp);
	m.ret = ret;
	sh_send(sock, &m);
	return ret;
}

/* The owner: a context, PD and an MR of 2 * procs slices, the first procs
 * filled for the users to READ. */
static int owner_open(const struct rk_share_opts *o, struct sh_node *n, struct rk_share_result *res)
{
	size_t len = 2 * (size_t)o->procs * o->size;
	void *buf = aligned_alloc(4096, len);
	int ret;

	if (!buf)
		return -ENOMEM;
	memset(buf, 0, len);
	ret = sh_node_open(n, o, buf, len, 0);
	if (ret) {
		sh_node_close(n);
		free(buf);
		return ret;
	}
	n->mr->owns_buf = 1; /* rk_mr_free() frees it */
	for (unsigned int i = 0; i < o->procs; i++)
		rk_pattern_fill((uint8_t *)buf + (size_t)i * o->size, o->size, 5000 + i);
	res->import = (struct rk_share_import_info){.supported = true,
						    .owner_pid = (int)getpid(),
						    .cmd_fd = n->sel.dev->ctx->cmd_fd,
						    .pd_handle = n->pd->handle,
						    .mr_handle = n->mr->mr->handle,
						    .mr_addr = (uint64_t)(uintptr_t)buf,
						    .mr_len = len};
	snprintf(res->import.device, sizeof(res->import.device), "%s", n->sel.dev->info.name);
	return 0;
}

/* Each user's answer; -EOPNOTSUPP when the provider cannot import. */
static int import_answers(const struct rk_share_opts *o, struct sh_proc *p,
			  struct rk_share_result *res)
{
	int np = (int)o->procs;
	struct sh_msg r;
	char who[32];
	int ret = 0;

	for (int i = 0; !ret && i < np; i++) {
		snprintf(who, sizeof(who), "user %d", i);
		ret = sh_recv(p[i].sock, SH_DONE, &r, who);
		if (ret)
			break;
		if (r.ret == -EOPNOTSUPP) {
			res->import.supported = false;
			for (int k = i + 1; k < np; k++) /* the others answer the same */
				sh_recv(p[k].sock, SH_DONE, &r, who);
			sh_step(o, res, "import", -1, false,
				"ibv_import_device: EOPNOTSUPP from the provider of %s: it cannot "
				"import a context from another process (only mlx5 can today). "
				"Share the memory instead, each process with its own context, PD "
				"and MR: rdmakit share shm",
				res->import.device);
			return -EOPNOTSUPP;
		}
		sh_step(o, res, "import", i, !r.ret && r.bad < 0,
			"%s; READ the owner's MR through its own QP on the imported PD: %s; WROTE "
			"into it; unimported: %s",
			r.text, r.bad < 0 ? "every byte as the owner put it" : "MISMATCH",
			r.ret ? rk_strerror(r.ret) : "ok");
		ret = r.ret;
	}
	return ret;
}

static int way_import(const struct rk_share_opts *o, struct rk_share_result *res)
{
	struct sh_proc p[RK_SHARE_MAX_PROCS];
	int np = (int)o->procs;
	struct sh_node n;
	int ret, failed;

	sh_procs_init(p, RK_SHARE_MAX_PROCS);
	ret = owner_open(o, &n, res);
	if (ret)
		return ret;
	begin(o, res);
	ret = sh_spawn(p, np, user_main, (void *)o);
	for (int i = 0; !ret && i < np; i++)
		ret = rk_share_send_handles(p[i].sock, n.sel.dev->ctx, n.pd, n.mr->mr);
	if (!ret)
		ret = import_answers(o, p, res);
	failed = sh_reap(p, np, false);
	for (int i = 0; !ret && i < np; i++) {
		ssize_t bad = rk_pattern_check((uint8_t *)n.mr->buf + (size_t)(np + i) * o->size,
					       o->size, 6000 + (uint32_t)i);

		sh_step(o, res, "owner", i, bad < 0,
			"after user %d unimported, the owner's MR holds what it wrote: %s", i,
			bad < 0 ? "every byte" : "MISMATCH");
	}
	if (!ret && failed) {
		rk_error("%d user(s) exited with an error", failed);
		ret = -EIO;
	}
	sh_node_close(&n); /* the owner still owns and frees them */
	return ret;
}

/* ---- the engine ---- */

static int check_opts(const struct rk_share_opts *o)
{
	if ((unsigned int)o->way > RK_SHARE_FORK) {
		rk_error("share: unknown way %d: import, shm or fork", (int)o->way);
		return -EINVAL;
	}
	if (o->procs < 1 || o->procs > RK_SHARE_MAX_PROCS) {
		rk_error("share: procs %u is outside 1..%d", o->procs, RK_SHARE_MAX_PROCS);
		return -EINVAL;
	}
	if (o->size < RK_SHARE_MIN_SIZE || o->size > RK_SHARE_MAX_SIZE) {
		rk_error("share: size %zu is outside %d..%u bytes", o->size, RK_SHARE_MIN_SIZE,
			 RK_SHARE_MAX_SIZE);
		return -EINVAL;
	}
	if (o->gid_index < -1 || o->gid_index > 255) {
		rk_error("share: gid_index %d is outside -1..255", o->gid_index);
		return -EINVAL;
	}
	return 0;
}

/* shm and fork on an iWARP device: its port ACTIVE, no GID index (iWARP has
 * none); 1 for any other device (rk_port_name_check() judges it). */
static int share_cm_check(const struct rk_share_opts *o)
{
	struct rk_device *dev;
	int ret;

	ret = rk_device_open(o->device, &dev);
	if (ret)
		return ret;
	ret = 1;
	if (rk_device_is_iwarp(dev) && o->gid_index >= 0) {
		rk_error("share: %s is an iWARP device: it has no GID to choose (its QPs connect "
			 "by IP address through RDMA CM); leave out the GID index",
			 dev->info.name);
		ret = -EINVAL;
	} else if (rk_device_is_iwarp(dev)) {
		ret = rk_port_check_active(dev, o->port_num ? o->port_num : 1);
	}
	rk_device_close(dev);
	return ret;
}

int rk_share_run(const struct rk_share_opts *o, struct rk_share_result *res)
{
	int ret;

	memset(res, 0, sizeof(*res));
	res->way = o->way;
	res->procs = o->procs;
	res->size = o->size;
	ret = check_opts(o);
	if (ret)
		return ret;
	/* Once, before any process starts. On iWARP shm and fork connect their
	 * processes' QPs through RDMA CM; import's users connect theirs to
	 * each other without it. */
	ret = o->way == RK_SHARE_IMPORT ? 1 : share_cm_check(o);
	if (ret > 0)
		ret = rk_port_name_check(o->device, o->port_num, o->gid_index, "RC",
					 "share import connects its users' QPs without it");
	if (ret)
		return ret;
	if (o->way == RK_SHARE_IMPORT)
		ret = way_import(o, res);
	else if (o->way == RK_SHARE_SHM)
		ret = way_shm(o, res);
	else
		ret = way_fork(o, res);
	if (!ret && res->failures)
		ret = -EIO;
	return ret;
}
