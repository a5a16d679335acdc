/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The share engine's processes: messages between them, one process's verbs
 * resources, spawning and reaping children, the worker (shm and fork) and the
 * peer that drives and checks the workers. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/pattern.h>
#include <rdmakit/status.h>

#include "conn/cm_int.h"
#include "engines/share/share_int.h"

/* ---- messages ---- */

int sh_send(int sock, const struct sh_msg *m)
{
	return rk_share_msg_send(sock, m, sizeof(*m), -1);
}

int sh_recv(int sock, uint32_t want, struct sh_msg *m, const char *from)
{
	int ret = rk_share_msg_recv(sock, m, sizeof(*m), SH_MSG_WAIT_MS, NULL);

	if (ret == -EPIPE)
		rk_error("%s exited before it answered", from);
	else if (ret == -ETIMEDOUT)
		rk_error("%s did not answer within %d s", from, SH_MSG_WAIT_MS / 1000);
	if (ret)
		return ret;
	if (m->type != want) {
		rk_error("%s sent message type %u, expected %u", from, m->type, want);
		return -EPROTO;
	}
	return 0;
}

/* ---- one process's verbs resources ---- */

int sh_node_open(struct sh_node *n, const struct rk_share_opts *o, void *buf, size_t len, int nqp)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC, .max_send_wr = 16, .max_recv_wr = 16};
	int ret;

	memset(n, 0, sizeof(*n));
	ret = rk_port_open(o->device, o->port_num, o->gid_index, NULL, &n->sel);
	if (ret)
		return ret;
	ret = sh_node_open_on(n, n->sel.dev, buf, len);
	if (ret)
		return ret;
	qa.port_num = n->sel.port_num;
	qa.gid = n->sel.has_gid ? &n->sel.gid : NULL;
	for (n->nqp = 0; n->nqp < nqp; n->nqp++) {
		ret = rk_qp_create(n->pd, n->sel.dev, n->cq, n->cq, &qa, &n->qp[n->nqp]);
		if (ret)
			return ret;
	}
	return 0;
}

int sh_node_open_on(struct sh_node *n, struct rk_device *dev, void *buf, size_t len)
{
	int ret;

	if ((ret = rk_pd_alloc(dev, &n->pd)) || (ret = rk_cq_create(dev, 64, false, &n->cq)))
		return ret;
	return rk_mr_reg(n->pd, buf, len,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			 &n->mr);
}

void sh_node_close(struct sh_node *n)
{
	for (int i = 0; i < n->nqp; i++)
		rk_qp_destroy(n->qp[i]);
	for (int i = 0; i < RK_SHARE_MAX_PROCS; i++)
		rk_cm_destroy(n->cm[i]);
	rk_cm_destroy(n->listener);
	rk_mr_free(n->mr);
	rk_cq_destroy(n->cq);
	rk_pd_free(n->pd);
	rk_port_close(&n->sel);
}

int sh_device_iwarp(const struct rk_share_opts *o, bool *iwarp_p, char *name, size_t len)
{
	struct rk_device *dev;
	int ret;

	ret = rk_device_open(o->device, &dev);
	if (ret)
		return ret;
	*iwarp_p = rk_device_is_iwarp(dev);
	snprintf(name, len, "%s", dev->info.name);
	rk_device_close(dev);
	return 0;
}

int sh_rdma(struct rk_qp *qp, struct rk_mr *mr, enum rk_op op, uint64_t wr_id, void *local,
	    uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = rk_sge(mr, (size_t)((uint8_t *)local - (uint8_t *)mr->buf), len);
	struct rk_wr wr = {.op = op,
			   .wr_id = wr_id,
			   .sg = &sge,
			   .nsge = 1,
			   .flags = IBV_SEND_SIGNALED,
			   .remote_addr = raddr,
			   .rkey = rkey};

	return rk_post(qp, &wr);
}

int sh_wait(struct rk_cq *cq, int n, const char *what)
{
	struct ibv_wc wc[RK_SHARE_MAX_PROCS * 2];
	int got = 0, ret;

	ret = rk_cq_wait(cq, wc, n, SH_WC_WAIT_MS, &got);
	if (ret == -ETIMEDOUT)
		rk_error("%s: %d of %d completions within %d ms", what, got, n, SH_WC_WAIT_MS);
	if (ret)
		return ret;
	for (int i = 0; i < n; i++) {
		ret = rk_wc_check(&wc[i], what);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- children ---- */

void sh_procs_init(struct sh_proc *p, int n)
{
	memset(p, 0, sizeof(*p) * (size_t)n);
	for (int i = 0; i < n; i++)
		p[i].sock = -1;
}

int sh_spawn(struct sh_proc *p, int n, int (*fn)(int idx, int sock, void *arg), void *arg)
{
	for (int i = 0; i < n; i++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			int ret = -errno;

			rk_error("socketpair: %m");
			return ret;
		}
		fflush(NULL); /* nothing buffered is written twice */
		p[i].pid = fork();
		if (p[i].pid < 0) {
			int ret = -errno;

			rk_error("fork: %m");
			close(sv[0]);
			close(sv[1]);
			return ret;
		}
		if (p[i].pid == 0) {
			close(sv[0]);
			for (int k = 0; k < i; k++)
				close(p[k].sock);
			_exit(fn(i, sv[1], arg) ? 1 : 0);
		}
		close(sv[1]);
		p[i].sock = sv[0];
	}
	return 0;
}

int sh_reap(struct sh_proc *p, int n, bool kill_them)
{
	struct sh_msg bye = {.type = SH_BYE};
	int failed = 0;

	for (int i = 0; i < n; i++) {
		int status = 0;

		if (p[i].pid <= 0)
			continue;
		if (kill_them)
			kill(p[i].pid, SIGTERM);
		else if (p[i].sock >= 0) /* quietly: the child may be gone already */
			(void)!send(p[i].sock, &bye, sizeof(bye), MSG_NOSIGNAL);
		if (p[i].sock >= 0)
			close(p[i].sock);
		p[i].sock = -1;
		waitpid(p[i].pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
		p[i].pid = 0;
	}
	return failed;
}

/* ---- a worker: shm (shared buffer) or fork (private buffer) ---- */

struct worker {
	int idx;
	size_t size;
	uint8_t *buf;
	size_t len;
	struct sh_node n;
	uint32_t peer_rkey;
};

/* The worker's QP is connected: the peer's rkey kept, READY sent. */
static int worker_ready(struct worker *w, int sock, uint32_t peer_rkey)
{
	struct sh_msg m = {.type = SH_READY};

	w->peer_rkey = peer_rkey;
	return sh_send(sock, &m);
}

/* Connect the worker's QP to the peer's, trading HELLOs. */
static int worker_connect(struct worker *w, int sock)
{
	struct sh_msg m = {.type = SH_HELLO}, r;
	char who[32];
	int ret;

	snprintf(who, sizeof(who), "the peer (to worker %d)", w->idx);
	m.addr = (uint64_t)(uintptr_t)w->buf;
	m.len = w->len;
	m.rkey = w->n.mr->mr->rkey;
	rk_qp_local_endpoint(w->n.qp[0], &m.ep);
	if ((ret = sh_send(sock, &m)) || (ret = sh_recv(sock, SH_HELLO, &r, who)))
		return ret;
	ret = rk_qp_connect(w->n.qp[0], IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &r.ep,
			    NULL);
	if (ret)
		return ret;
	return worker_ready(w, sock, r.rkey);
}

/* iWARP: the peer's HELLO first (its listener's address), then this
 * worker's node on the device RDMA CM resolved that to, its HELLO, and the
 * QP connected through RDMA CM. */
static int worker_connect_cm(struct worker *w, int sock, const char *device)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC, .max_send_wr = 16, .max_recv_wr = 16};
	struct rk_wire_buf mine = {.addr = (uint64_t)(uintptr_t)w->buf, .len = w->len};
	struct sh_msg m = {.type = SH_HELLO}, r;
	struct rk_cm *cm;
	char who[32];
	int ret;

	snprintf(who, sizeof(who), "the peer (to worker %d)", w->idx);
	ret = sh_recv(sock, SH_HELLO, &r, who);
	if (ret)
		return ret;
	r.cm_addr[sizeof(r.cm_addr) - 1] = '\0';
	ret = rk_cm_resolve(r.cm_addr, r.cm_port, SH_MSG_WAIT_MS, &w->n.cm[0]);
	if (ret)
		return ret;
	cm = w->n.cm[0];
	if (strcmp(cm->dev->info.name, device)) {
		rk_error("worker %d: %s resolves to %s, not %s", w->idx, r.cm_addr,
			 cm->dev->info.name, device);
		return -EXDEV;
	}
	ret = sh_node_open_on(&w->n, cm->dev, w->buf, w->len);
	if (ret)
		return ret;
	qa.port_num = cm->port_num;
	ret = rk_cm_create_qp(cm, w->n.pd, w->n.cq, w->n.cq, &qa, &w->n.qp[0]);
	if (ret)
		return ret;
	w->n.nqp = 1;
	mine.rkey = w->n.mr->mr->rkey;
	m.addr = mine.addr;
	m.len = w->len;
	m.rkey = mine.rkey;
	m.ep.qpn = w->n.qp[0]->qp->qp_num;
	ret = sh_send(sock, &m);
	if (!ret)
		ret = rk_cm_connect(cm, w->n.qp[0], &mine, SH_MSG_WAIT_MS);
	if (ret)
		return ret;
	return worker_ready(w, sock, r.rkey);
}

static void worker_check(struct worker *w, const struct sh_msg *r, struct sh_msg *m)
{
	for (uint64_t k = 0; k < r->count && m->bad < 0; k++) {
		ssize_t bad = rk_pattern_check(w->buf + (r->first + k) * w->size, w->size,
					       r->seed + (uint32_t)k);

		if (bad >= 0)
			m->bad = (int64_t)((r->first + k) * w->size) + bad;
	}
}

/* GO: WRITE a slice to the peer, READ one back, check what the READ brought. */
static void worker_go(struct worker *w, const struct sh_msg *r, struct sh_msg *m)
{
	uint8_t *wr = w->buf + r->first * w->size, *rd = w->buf + r->rslice * w->size;
	uint32_t sz = (uint32_t)w->size;

	rk_pattern_fill(wr, w->size, r->seed);
	memset(rd, 0, w->size);
	m->ret = sh_rdma(w->n.qp[0], w->n.mr, RK_OP_WRITE, 1, wr, r->addr, w->peer_rkey, sz);
	if (!m->ret)
		m->ret =
			sh_rdma(w->n.qp[0], w->n.mr, RK_OP_READ, 2, rd, r->raddr, w->peer_rkey, sz);
	if (!m->ret)
		m->ret = sh_wait(w->n.cq, 2, "worker WRITE and READ");
	if (!m->ret) {
		ssize_t bad = rk_pattern_check(rd, w->size, r->rseed);

		if (bad >= 0)
			m->bad = (int64_t)(r->rslice * w->size) + bad;
	}
}

/* Answer the peer's CHECKs and GOs until it says BYE. */
static int worker_loop(struct worker *w, int sock)
{
	uint64_t slices = w->len / w->size;
	struct sh_msg m, r;
	int ret;

	for (;;) {
		ret = rk_share_msg_recv(sock, &r, sizeof(r), SH_MSG_WAIT_MS, NULL);
		if (ret || r.type == SH_BYE)
			return ret;
		memset(&m, 0, sizeof(m));
		m.type = SH_DONE;
		m.bad = -1;
		if ((r.type == SH_CHECK && (r.first > slices || r.count > slices - r.first)) ||
		    (r.type == SH_GO && (r.first >= slices || r.rslice >= slices))) {
			rk_error("worker %d: the peer asked for slices outside the %zu-byte buffer "
				 "(first %" PRIu64 ", count %" PRIu64 ", READ slice %" PRIu64 ")",
				 w->idx, w->len, r.first, r.count, r.rslice);
			return -EPROTO;
		}
		if (r.type == SH_CHECK)
			worker_check(w, &r, &m);
		else if (r.type == SH_GO)
			worker_go(w, &r, &m);
		else
			return -EPROTO;
		snprintf(m.text, sizeof(m.text), "pid %d, QP 0x%x, MR lkey 0x%x rkey 0x%x",
			 (int)getpid(), w->n.qp[0]->qp->qp_num, w->n.mr->mr->lkey,
			 w->n.mr->mr->rkey);
		ret = sh_send(sock, &m);
		if (ret)
			return ret;
	}
}

struct worker_arg {
	const struct rk_share_opts *o;
	int shm_fd; /* shm: the memory file; fork: -1 */
	size_t len;
	bool iwarp;	  /* the QPs connect through RDMA CM */
	char device[64]; /* the device's name */
};

static int worker_main(int idx, int sock, void *argp)
{
	struct worker_arg *a = argp;
	struct worker w = {.idx = idx, .size = a->o->size, .len = a->len};
	void *buf = NULL;
	int ret;

	if (a->shm_fd >= 0) {
		ret = rk_shm_map(a->shm_fd, a->len, &buf); /* this process's own mapping */
		if (ret)
			return ret;
	} else {
		buf = aligned_alloc(4096, a->len);
		if (!buf)
			return -ENOMEM;
		memset(buf, 0, a->len);
	}
	w.buf = buf;
	if (a->iwarp) {
		ret = worker_connect_cm(&w, sock, a->device);
	} else {
		ret = sh_node_open(&w.n, a->o, buf, a->len, 1);
		if (!ret)
			ret = worker_connect(&w, sock);
	}
	if (!ret)
		ret = worker_loop(&w, sock);
	sh_node_close(&w.n);
	if (a->shm_fd >= 0)
		rk_shm_unmap(buf, a->len);
	else
		free(buf);
	return ret;
}

/* ---- the peer (this process) ---- */

struct peer {
	const struct rk_share_opts *o;
	struct rk_share_result *res;
	struct sh_proc p[RK_SHARE_MAX_PROCS];
	int np;
	bool shared;
	uint8_t *buf;
	size_t len;
	struct sh_node n;
	const struct worker_arg *a;
};

/* iWARP: the peer's listener on the device's address, and its node on the
 * listener's device context; then for each worker in turn: HELLO (with the
 * listener's address) and the worker's, its request, a QP, the accept. */
static int peer_connect_cm(struct peer *pe)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC, .max_send_wr = 16, .max_recv_wr = 16};
	struct rk_wire_buf mine = {.addr = (uint64_t)(uintptr_t)pe->buf, .len = pe->len};
	struct sh_msg m = {.type = SH_HELLO};
	struct sh_proc *p = pe->p;
	char who[32];
	int ret;

	memset(&pe->n, 0, sizeof(pe->n));
	ret = rk_cm_listen_on_device(pe->a->device, pe->o->port_num ? pe->o->port_num : 1,
				     m.cm_addr, sizeof(m.cm_addr), &m.cm_port, &pe->n.listener);
	if (!ret)
		ret = sh_node_open_on(&pe->n, pe->n.listener->dev, pe->buf, pe->len);
	if (ret)
		return ret;
	mine.rkey = pe->n.mr->mr->rkey;
	qa.port_num = pe->n.listener->port_num;
	m.addr = mine.addr;
	m.len = pe->len;
	m.rkey = mine.rkey;
	for (int i = 0; i < pe->np; i++) {
		snprintf(who, sizeof(who), "worker %d", i);
		if ((ret = sh_send(p[i].sock, &m)) ||
		    (ret = sh_recv(p[i].sock, SH_HELLO, &p[i].hello, who)) ||
		    (ret = rk_cm_get_request(pe->n.listener, SH_MSG_WAIT_MS, &pe->n.cm[i])) ||
		    (ret = rk_cm_create_qp(pe->n.cm[i], pe->n.pd, pe->n.cq, pe->n.cq, &qa,
					   &pe->n.qp[i])))
			return ret;
		pe->n.nqp++;
		ret = rk_cm_accept(pe->n.cm[i], pe->n.qp[i], &mine, SH_MSG_WAIT_MS);
		if (ret)
			return ret;
	}
	return 0;
}

/* One QP per worker, connected. */
static int peer_connect(struct peer *pe)
{
	struct sh_proc *p = pe->p;
	char who[32];
	int ret;

	if (pe->a->iwarp)
		ret = peer_connect_cm(pe);
	else
		ret = sh_node_open(&pe->n, pe->o, pe->buf, pe->len, pe->np);
	if (ret)
		return ret;
	for (int i = 0; i < pe->np && !pe->a->iwarp; i++) {
		struct sh_msg m = {.type = SH_HELLO};

		snprintf(who, sizeof(who), "worker %d", i);
		ret = sh_recv(p[i].sock, SH_HELLO, &p[i].hello, who);
		if (ret)
			return ret;
		m.addr = (uint64_t)(uintptr_t)pe->buf;
		m.len = pe->len;
		m.rkey = pe->n.mr->mr->rkey;
		rk_qp_local_endpoint(pe->n.qp[i], &m.ep);
		if ((ret = sh_send(p[i].sock, &m)))
			return ret;
		ret = rk_qp_connect(pe->n.qp[i], IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
				    &p[i].hello.ep, NULL);
		if (ret)
			return ret;
	}
	for (int i = 0; i < pe->np; i++) {
		struct sh_msg r;

		snprintf(who, sizeof(who), "worker %d", i);
		ret = sh_recv(p[i].sock, SH_READY, &r, who);
		if (ret)
			return ret;
		sh_step(pe->o, pe->res, "connect", i, true,
			"worker pid %d: its own context, PD, MR over %s at %p (rkey 0x%x), QP 0x%x "
			"<-> peer QP 0x%x%s",
			(int)p[i].pid,
			pe->shared ? "its own mapping of the memfd" : "its own buffer",
			(void *)(uintptr_t)p[i].hello.addr, p[i].hello.rkey, p[i].hello.ep.qpn,
			pe->n.qp[i]->qp->qp_num,
			pe->a->iwarp ? ", connected through RDMA CM (iWARP)" : "");
	}
	return 0;
}

/* Ask worker i to check count slices from first (seeds from seed). */
static int ask_check(struct peer *pe, int i, uint64_t first, uint64_t count, uint32_t seed,
		     struct sh_msg *r)
{
	struct sh_msg m = {.type = SH_CHECK, .first = first, .count = count, .seed = seed};
	char who[32];
	int ret;

	snprintf(who, sizeof(who), "worker %d", i);
	ret = sh_send(pe->p[i].sock, &m);
	return ret ? ret : sh_recv(pe->p[i].sock, SH_DONE, r, who);
}

/*
 * Layout of the worker buffer (shared, or each worker's own), slices of size:
 *   [0, N)    A: worker i WRITEs slice i to the peer (step 1 uses slice 0)
 *   [N, 2N)   B: worker i's READ of the peer lands in slice N+i
 *   [2N, 3N)  C: the peer WRITEs slice 2N+i through worker i's MR
 * The peer's buffer: [0, N) receives the workers' WRITEs, [N, 2N) is what
 * they READ, [2N, 3N) is what it WRITEs to them.
 */

/* Step 1 (shm): the peer writes through worker 0's MR; everyone looks. */
static int peer_write_one(struct peer *pe)
{
	size_t sz = pe->o->size;
	uint8_t *src = pe->buf + 2 * (size_t)pe->np * sz;
	struct sh_msg r;
	int ret;

	rk_pattern_fill(src, sz, 1000);
	ret = sh_rdma(pe->n.qp[0], pe->n.mr, RK_OP_WRITE, 1, src, pe->p[0].hello.addr,
		      pe->p[0].hello.rkey, (uint32_t)sz);
	if (!ret)
		ret = sh_wait(pe->n.cq, 1, "peer WRITE into worker 0's MR");
	sh_step(pe->o, pe->res, "write", 0, !ret,
		"the peer RDMA-WROTE %zu bytes into worker 0's MR (rkey 0x%x)", sz,
		pe->p[0].hello.rkey);
	if (ret)
		return ret;
	for (int i = 0; i < pe->np; i++) {
		ret = ask_check(pe, i, 0, 1, 1000, &r);
		if (ret)
			return ret;
		sh_step(pe->o, pe->res, "see", i, r.bad < 0,
			"worker %d reads the bytes written through worker 0's MR in its own "
			"mapping: %s",
			i, r.bad < 0 ? "every byte as written" : "MISMATCH");
	}
	return 0;
}

/* Step 2: every worker WRITEs and READs while the peer WRITEs into each. */
static int peer_all_at_once(struct peer *pe)
{
	size_t sz = pe->o->size;
	uint64_t N = (uint64_t)pe->np;
	int ret;

	for (uint64_t i = 0; i < N; i++) {
		rk_pattern_fill(pe->buf + (N + i) * sz, sz, 3000 + (uint32_t)i);
		rk_pattern_fill(pe->buf + (2 * N + i) * sz, sz, 4000 + (uint32_t)i);
		memset(pe->buf + i * sz, 0, sz);
	}
	for (uint64_t i = 0; i < N; i++) {
		struct sh_msg m = {.type = SH_GO,
				   .first = i,
				   .seed = 2000 + (uint32_t)i,
				   .addr = (uint64_t)(uintptr_t)(pe->buf + i * sz),
				   .raddr = (uint64_t)(uintptr_t)(pe->buf + (N + i) * sz),
				   .rslice = N + i,
				   .rseed = 3000 + (uint32_t)i};

		if ((ret = sh_send(pe->p[i].sock, &m)))
			return ret;
	}
	for (uint64_t i = 0; i < N; i++) {
		ret = sh_rdma(pe->n.qp[i], pe->n.mr, RK_OP_WRITE, i, pe->buf + (2 * N + i) * sz,
			      pe->p[i].hello.addr + (2 * N + i) * sz, pe->p[i].hello.rkey,
			      (uint32_t)sz);
		if (ret)
			return ret;
	}
	ret = sh_wait(pe->n.cq, pe->np, "peer WRITEs into the workers' MRs");
	sh_step(pe->o, pe->res, "serve", -1, !ret,
		"the peer RDMA-WROTE %zu bytes into each of %d workers' MRs while they ran their "
		"own WRITE and READ",
		sz, pe->np);
	return ret;
}

/* The workers' answers to step 2, and what arrived in the peer's buffer. */
static int peer_collect(struct peer *pe)
{
	size_t sz = pe->o->size;
	uint64_t N = (uint64_t)pe->np;
	struct sh_msg r;
	char who[32];
	int ret;

	for (int i = 0; i < pe->np; i++) {
		snprintf(who, sizeof(who), "worker %d", i);
		ret = sh_recv(pe->p[i].sock, SH_DONE, &r, who);
		if (ret)
			return ret;
		sh_step(pe->o, pe->res, "issue", i, !r.ret && r.bad < 0,
			"worker %d (%s) RDMA-WROTE slice %d to the peer and RDMA-READ "
			"the peer into slice %" PRIu64 ": %s",
			i, r.text, i, N + (uint64_t)i,
			r.ret	    ? rk_strerror(r.ret)
			: r.bad < 0 ? "READ data checked"
				    : "READ MISMATCH");
		if (r.ret)
			return r.ret;
	}
	for (int i = 0; i < pe->np; i++) {
		ssize_t bad = rk_pattern_check(pe->buf + (uint64_t)i * sz, sz, 2000 + (uint32_t)i);

		sh_step(pe->o, pe->res, "arrived", i, bad < 0,
			"the peer's buffer holds worker %d's WRITE: %s", i,
			bad < 0 ? "every byte" : "MISMATCH");
	}
	return 0;
}

/* Step 3: every worker checks the shared bytes (or its own, under fork). */
static int peer_see(struct peer *pe)
{
	uint64_t N = (uint64_t)pe->np;
	struct sh_msg r;
	int ret;

	for (int i = 0; i < pe->np; i++) {
		uint64_t first = pe->shared ? 0 : (uint64_t)i, count = pe->shared ? N : 1;
		uint32_t off = pe->shared ? 0 : (uint32_t)i;

		ret = ask_check(pe, i, N + first, count, 3000 + off, &r);
		if (!ret && r.bad < 0)
			ret = ask_check(pe, i, 2 * N + first, count, 4000 + off, &r);
		if (ret)
			return ret;
		if (pe->shared)
			sh_step(pe->o, pe->res, "see", i, r.bad < 0,
				"worker %d sees, in its own mapping, all %d READ results and "
				"all %d peer WRITEs, whichever worker's MR they went through: %s",
				i, pe->np, pe->np, r.bad < 0 ? "every byte" : "MISMATCH");
		else
			sh_step(pe->o, pe->res, "see", i, r.bad < 0,
				"worker %d sees its READ result and the peer's WRITE into its "
				"MR: %s",
				i, r.bad < 0 ? "every byte" : "MISMATCH");
	}
	return 0;
}

int sh_run_workers(const struct rk_share_opts *o, int shm_fd, struct rk_share_result *res)
{
	struct peer *pe = calloc(1, sizeof(*pe));
	struct worker_arg a = {.o = o, .shm_fd = shm_fd};
	int ret, failed;

	if (!pe)
		return -ENOMEM;
	pe->o = o;
	pe->res = res;
	pe->np = (int)o->procs;
	pe->shared = shm_fd >= 0;
	pe->len = a.len = 3 * (size_t)pe->np * o->size;
	pe->a = &a;
	sh_procs_init(pe->p, RK_SHARE_MAX_PROCS);
	ret = sh_device_iwarp(o, &a.iwarp, a.device, sizeof(a.device));
	if (ret) {
		free(pe);
		return ret;
	}
	pe->buf = aligned_alloc(4096, pe->len);
	if (!pe->buf) {
		free(pe);
		return -ENOMEM;
	}
	memset(pe->buf, 0, pe->len);
	/* Fork first: every process, the parent too, makes its verbs objects after. */
	ret = sh_spawn(pe->p, pe->np, worker_main, &a);
	if (!ret)
		ret = peer_connect(pe);
	if (!ret && pe->shared)
		ret = peer_write_one(pe);
	if (!ret)
		ret = peer_all_at_once(pe);
	if (!ret)
		ret = peer_collect(pe);
	if (!ret)
		ret = peer_see(pe);
	failed = sh_reap(pe->p, pe->np, ret != 0);
	if (!ret && failed) {
		rk_error("%d worker(s) exited with an error", failed);
		ret = -EIO;
	}
	sh_node_close(&pe->n);
	free(pe->buf);
	free(pe);
	return ret;
}
