/* rdmakit share: several processes on one RDMA device, three ways.
 *
 *   import  an owner passes its context's command fd, PD and MR handles over a
 *           Unix socket; each user imports them, does RDMA, unimports.
 *   shm     one memfd mapped by every worker, each with its own context, PD
 *           and MR over the same bytes; a peer process writes through one
 *           worker's MR and all see it; all workers do RDMA on it at once.
 *   fork    ibv_fork_init() first; parent and children each create their own
 *           resources after fork() and do RDMA with each other; and what
 *           ibv_fork_init() says when memory was registered before it.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define MSG_WAIT_MS 30000
#define WC_WAIT_MS  10000
#define MAX_PROCS   16

struct share_opts {
	struct cli_dev_opts dev;
	uint64_t procs;
	uint64_t size;
	bool json;
};

static const char usage_text[] =
	"rdmakit share import|shm|fork [-d DEV] [-g IDX] [-p N] [-s SIZE] [--json]";
static const char description[] =
	"Several processes on one RDMA device.\n"
	"  import  the owner passes its context's command fd with PD and MR handles over a Unix\n"
	"          socket (SCM_RIGHTS); N user processes import them (ibv_import_device/pd/mr),\n"
	"          RDMA-READ and -WRITE the owner's MR, and unimport; the owner checks the bytes.\n"
	"          Providers without import (rxe, all but mlx5 today) answer EOPNOTSUPP.\n"
	"  shm     one memfd mapped by N workers, each with its own context, PD and MR over the\n"
	"          same bytes; a peer process RDMA-WRITEs through worker 0's MR and every worker\n"
	"          sees the bytes; then all workers WRITE and READ at once while the peer writes\n"
	"          into each worker's MR; every byte checked by every worker.\n"
	"  fork    ibv_fork_init() before any registration; N children and the parent each open\n"
	"          the device after fork() and do RDMA with each other, checked; and what\n"
	"          ibv_fork_init() returns in a process that registered memory before calling it.";

/* ---- messages between the processes ---- */

enum msg_type { M_HELLO = 1, M_READY, M_CHECK, M_GO, M_DONE, M_BYE };

struct msg {
	uint32_t type;
	int32_t ret;
	int64_t bad;   /* first bad byte, -1: all good */
	uint64_t addr; /* HELLO: buffer address; GO: remote WRITE target */
	uint64_t len;
	uint32_t rkey;
	uint32_t seed;	       /* CHECK: seed of the first slice; GO: WRITE seed */
	uint64_t first, count; /* CHECK: slices; GO: local slice to WRITE from */
	uint64_t raddr;	       /* GO: remote READ source */
	uint64_t rslice;       /* GO: local slice the READ lands in */
	uint32_t rseed;	       /* GO: what the READ must bring */
	int32_t fork_status;
	struct rk_endpoint ep;
	char text[160];
};

static int send_msg(int sock, const struct msg *m)
{
	return rk_share_msg_send(sock, m, sizeof(*m), -1);
}

static int recv_msg(int sock, uint32_t want, struct msg *m, const char *from)
{
	int ret = rk_share_msg_recv(sock, m, sizeof(*m), MSG_WAIT_MS, NULL);

	if (ret == -EPIPE)
		rk_error("%s exited before it answered", from);
	else if (ret == -ETIMEDOUT)
		rk_error("%s did not answer within %d s", from, MSG_WAIT_MS / 1000);
	if (ret)
		return ret;
	if (m->type != want) {
		rk_error("%s sent message type %u, expected %u", from, m->type, want);
		return -EPROTO;
	}
	return 0;
}

/* ---- one process's verbs resources over a buffer ---- */

struct node {
	struct cli_dev d;
	struct ibv_pd *pd;
	struct rk_cq *cq;
	struct rk_mr *mr;
	struct rk_qp *qp[MAX_PROCS];
	int nqp;
};

static int node_open(struct node *n, const struct share_opts *o, void *buf, size_t len, int nqp)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC, .max_send_wr = 16, .max_recv_wr = 16};
	int ret;

	memset(n, 0, sizeof(*n));
	ret = cli_dev_open(&o->dev, NULL, &n->d);
	if (ret)
		return ret;
	if ((ret = rk_pd_alloc(n->d.dev, &n->pd)) ||
	    (ret = rk_cq_create(n->d.dev, 64, false, &n->cq)) ||
	    (ret = rk_mr_reg(n->pd, buf, len,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ,
			     &n->mr)))
		return ret;
	qa.port_num = n->d.port;
	qa.gid = n->d.has_gid ? &n->d.gid : NULL;
	for (n->nqp = 0; n->nqp < nqp; n->nqp++) {
		ret = rk_qp_create(n->pd, n->d.dev, n->cq, n->cq, &qa, &n->qp[n->nqp]);
		if (ret)
			return ret;
	}
	return 0;
}

static void node_close(struct node *n)
{
	for (int i = 0; i < n->nqp; i++)
		rk_qp_destroy(n->qp[i]);
	rk_mr_free(n->mr);
	rk_cq_destroy(n->cq);
	rk_pd_free(n->pd);
	if (n->d.dev)
		cli_dev_close(&n->d);
}

/* Post a WRITE or READ of len bytes between local and remote, signaled. */
static int rdma(struct rk_qp *qp, struct rk_mr *mr, enum rk_op op, uint64_t wr_id, void *local,
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

static int wait_n(struct rk_cq *cq, int n, const char *what)
{
	struct ibv_wc wc[MAX_PROCS * 2];
	int got = 0, ret;

	ret = rk_cq_wait(cq, wc, n, WC_WAIT_MS, &got);
	if (ret == -ETIMEDOUT)
		rk_error("%s: %d of %d completions within %d ms", what, got, n, WC_WAIT_MS);
	if (ret)
		return ret;
	for (int i = 0; i < n; i++) {
		ret = rk_wc_check(&wc[i], what);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- a worker: shm (shared buffer) or fork (private buffer) ---- */

static int worker_serve(int sock, int idx, const struct share_opts *o, uint8_t *buf, size_t len)
{
	struct node n;
	struct msg m, r;
	uint32_t peer_rkey;
	char who[32];
	int ret;

	snprintf(who, sizeof(who), "the peer (to worker %d)", idx);
	ret = node_open(&n, o, buf, len, 1);
	if (ret)
		goto out;
	memset(&m, 0, sizeof(m));
	m.type = M_HELLO;
	m.addr = (uint64_t)(uintptr_t)buf;
	m.len = len;
	m.rkey = n.mr->mr->rkey;
	rk_qp_local_endpoint(n.qp[0], &m.ep);
	if ((ret = send_msg(sock, &m)) || (ret = recv_msg(sock, M_HELLO, &r, who)))
		goto out;
	ret = rk_qp_connect(n.qp[0], IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &r.ep, NULL);
	if (ret)
		goto out;
	peer_rkey = r.rkey;
	memset(&m, 0, sizeof(m));
	m.type = M_READY;
	if ((ret = send_msg(sock, &m)))
		goto out;
	for (;;) {
		ret = rk_share_msg_recv(sock, &r, sizeof(r), MSG_WAIT_MS, NULL);
		if (ret)
			goto out;
		memset(&m, 0, sizeof(m));
		m.type = M_DONE;
		m.bad = -1;
		if (r.type == M_BYE)
			break;
		if ((r.type == M_CHECK &&
		     (r.first > len / o->size || r.count > len / o->size - r.first)) ||
		    (r.type == M_GO && (r.first >= len / o->size || r.rslice >= len / o->size))) {
			rk_error("worker %d: the peer asked for slices outside the %zu-byte buffer "
				 "(first %" PRIu64 ", count %" PRIu64 ", READ slice %" PRIu64 ")",
				 idx, len, r.first, r.count, r.rslice);
			ret = -EPROTO;
			goto out;
		}
		if (r.type == M_CHECK) {
			for (uint64_t k = 0; k < r.count && m.bad < 0; k++) {
				ssize_t bad = rk_pattern_check(buf + (r.first + k) * o->size,
							       o->size, r.seed + (uint32_t)k);

				if (bad >= 0)
					m.bad = (int64_t)((r.first + k) * o->size) + bad;
			}
		} else if (r.type == M_GO) {
			uint8_t *w = buf + r.first * o->size, *rd = buf + r.rslice * o->size;

			rk_pattern_fill(w, o->size, r.seed);
			memset(rd, 0, o->size);
			m.ret = rdma(n.qp[0], n.mr, RK_OP_WRITE, 1, w, r.addr, peer_rkey,
				     (uint32_t)o->size);
			if (!m.ret)
				m.ret = rdma(n.qp[0], n.mr, RK_OP_READ, 2, rd, r.raddr, peer_rkey,
					     (uint32_t)o->size);
			if (!m.ret)
				m.ret = wait_n(n.cq, 2, "worker WRITE and READ");
			if (!m.ret) {
				ssize_t bad = rk_pattern_check(rd, o->size, r.rseed);

				if (bad >= 0)
					m.bad = (int64_t)(r.rslice * o->size) + bad;
			}
		} else {
			ret = -EPROTO;
			goto out;
		}
		snprintf(m.text, sizeof(m.text), "pid %d, QP 0x%x, MR lkey 0x%x rkey 0x%x",
			 (int)getpid(), n.qp[0]->qp->qp_num, n.mr->mr->lkey, n.mr->mr->rkey);
		if ((ret = send_msg(sock, &m)))
			goto out;
	}
out:
	node_close(&n);
	return ret;
}

/* ---- the parent's view ---- */

struct proc {
	pid_t pid;
	int sock;
	struct msg hello;
};

struct report {
	json_object *steps;
	bool json;
	int failures;
};

static void step(struct report *rep, const char *name, int who, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void step(struct report *rep, const char *name, int who, bool ok, const char *fmt, ...)
{
	json_object *j = json_object_new_object();
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!ok)
		rep->failures++;
	json_object_object_add(j, "step", json_object_new_string(name));
	if (who >= 0)
		json_object_object_add(j, "process", json_object_new_int(who));
	json_object_object_add(j, "ok", json_object_new_boolean(ok));
	json_object_object_add(j, "detail", json_object_new_string(text));
	json_object_array_add(rep->steps, j);
	if (!rep->json) {
		char tag[24] = "";

		if (who >= 0)
			snprintf(tag, sizeof(tag), " [%d]", who);
		printf("%-8s%-5s %s: %s\n", name, tag, ok ? "ok" : "FAILED", text);
	}
}

/* Start n children running fn(i, sock); the parent keeps the other ends. */
static int spawn(struct proc *p, int n, int (*fn)(int idx, int sock, void *arg), void *arg)
{
	for (int i = 0; i < n; i++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			int ret = -errno;

			rk_error("socketpair: %m");
			return ret;
		}
		fflush(NULL);
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

/* Tell the children to stop, and collect them. Returns how many failed. */
static int reap(struct proc *p, int n, bool kill_them)
{
	struct msg bye = {.type = M_BYE};
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

struct worker_arg {
	const struct share_opts *o;
	int shm_fd; /* shm: the memory file; fork: -1 */
	size_t len;
};

static int worker_main(int idx, int sock, void *argp)
{
	struct worker_arg *a = argp;
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
	ret = worker_serve(sock, idx, a->o, buf, a->len);
	if (a->shm_fd >= 0)
		rk_shm_unmap(buf, a->len);
	else
		free(buf);
	return ret;
}

/* The peer: one QP per worker, connected; buffer pbuf of len bytes. */
static int peer_connect(struct node *n, struct proc *p, int np, const struct share_opts *o,
			uint8_t *pbuf, size_t len, bool shared, struct report *rep)
{
	char who[32];
	int ret;

	ret = node_open(n, o, pbuf, len, np);
	if (ret)
		return ret;
	for (int i = 0; i < np; i++) {
		struct msg m = {.type = M_HELLO};

		snprintf(who, sizeof(who), "worker %d", i);
		ret = recv_msg(p[i].sock, M_HELLO, &p[i].hello, who);
		if (ret)
			return ret;
		m.addr = (uint64_t)(uintptr_t)pbuf;
		m.len = len;
		m.rkey = n->mr->mr->rkey;
		rk_qp_local_endpoint(n->qp[i], &m.ep);
		if ((ret = send_msg(p[i].sock, &m)))
			return ret;
		ret = rk_qp_connect(n->qp[i], IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
				    &p[i].hello.ep, NULL);
		if (ret)
			return ret;
	}
	for (int i = 0; i < np; i++) {
		struct msg r;

		snprintf(who, sizeof(who), "worker %d", i);
		ret = recv_msg(p[i].sock, M_READY, &r, who);
		if (ret)
			return ret;
		step(rep, "connect", i, true,
		     "worker pid %d: its own context, PD, MR over %s at %p (rkey 0x%x), QP 0x%x "
		     "<-> "
		     "peer QP 0x%x",
		     (int)p[i].pid, shared ? "its own mapping of the memfd" : "its own buffer",
		     (void *)(uintptr_t)p[i].hello.addr, p[i].hello.rkey, p[i].hello.ep.qpn,
		     n->qp[i]->qp->qp_num);
	}
	return 0;
}

/* Ask worker i to check count slices from first (seeds from seed). */
static int ask_check(struct proc *pi, int i, uint64_t first, uint64_t count, uint32_t seed,
		     struct msg *r)
{
	struct msg m = {.type = M_CHECK, .first = first, .count = count, .seed = seed};
	char who[32];
	int ret;

	snprintf(who, sizeof(who), "worker %d", i);
	ret = send_msg(pi->sock, &m);
	return ret ? ret : recv_msg(pi->sock, M_DONE, r, who);
}

/*
 * Layout of the worker buffer (shared, or each worker's own), slices of size:
 *   [0, N)    A: worker i WRITEs slice i to the peer (step 1 uses slice 0)
 *   [N, 2N)   B: worker i's READ of the peer lands in slice N+i
 *   [2N, 3N)  C: the peer WRITEs slice 2N+i through worker i's MR
 * The peer's buffer: [0, N) receives the workers' WRITEs, [N, 2N) is what
 * they READ, [2N, 3N) is what it WRITEs to them.
 */
static int peer_run(struct node *n, struct proc *p, int np, const struct share_opts *o,
		    uint8_t *pbuf, bool shared, struct report *rep)
{
	size_t sz = o->size;
	uint64_t N = (uint64_t)np;
	struct msg r;
	int ret;

	if (shared) {
		/* Step 1: the peer writes through worker 0's MR; everyone looks. */
		uint8_t *src = pbuf + 2 * N * sz;

		rk_pattern_fill(src, sz, 1000);
		ret = rdma(n->qp[0], n->mr, RK_OP_WRITE, 1, src, p[0].hello.addr, p[0].hello.rkey,
			   (uint32_t)sz);
		if (!ret)
			ret = wait_n(n->cq, 1, "peer WRITE into worker 0's MR");
		step(rep, "write", 0, !ret,
		     "the peer RDMA-WROTE %zu bytes into worker 0's MR (rkey 0x%x)", sz,
		     p[0].hello.rkey);
		if (ret)
			return ret;
		for (int i = 0; i < np; i++) {
			ret = ask_check(&p[i], i, 0, 1, 1000, &r);
			if (ret)
				return ret;
			step(rep, "see", i, r.bad < 0,
			     "worker %d reads the bytes written through worker 0's MR in its own "
			     "mapping: %s",
			     i, r.bad < 0 ? "every byte as written" : "MISMATCH");
		}
	}

	/* Step 2: all at once. */
	for (uint64_t i = 0; i < N; i++) {
		rk_pattern_fill(pbuf + (N + i) * sz, sz, 3000 + (uint32_t)i);
		rk_pattern_fill(pbuf + (2 * N + i) * sz, sz, 4000 + (uint32_t)i);
		memset(pbuf + i * sz, 0, sz);
	}
	for (int i = 0; i < np; i++) {
		struct msg m = {.type = M_GO,
				.first = (uint64_t)i,
				.seed = 2000 + (uint32_t)i,
				.addr = (uint64_t)(uintptr_t)(pbuf + (uint64_t)i * sz),
				.raddr = (uint64_t)(uintptr_t)(pbuf + (N + (uint64_t)i) * sz),
				.rslice = N + (uint64_t)i,
				.rseed = 3000 + (uint32_t)i};

		if ((ret = send_msg(p[i].sock, &m)))
			return ret;
	}
	for (int i = 0; i < np; i++) {
		ret = rdma(n->qp[i], n->mr, RK_OP_WRITE, (uint64_t)i, pbuf + (2 * N + i) * sz,
			   p[i].hello.addr + (2 * N + i) * sz, p[i].hello.rkey, (uint32_t)sz);
		if (ret)
			return ret;
	}
	ret = wait_n(n->cq, np, "peer WRITEs into the workers' MRs");
	step(rep, "serve", -1, !ret,
	     "the peer RDMA-WROTE %zu bytes into each of %d workers' MRs while they ran their own "
	     "WRITE and READ",
	     sz, np);
	if (ret)
		return ret;
	for (int i = 0; i < np; i++) {
		char who[32];

		snprintf(who, sizeof(who), "worker %d", i);
		ret = recv_msg(p[i].sock, M_DONE, &r, who);
		if (ret)
			return ret;
		step(rep, "issue", i, !r.ret && r.bad < 0,
		     "worker %d (%s) RDMA-WROTE slice %d to the peer and RDMA-READ the peer into "
		     "slice %" PRIu64 ": %s",
		     i, r.text, i, N + (uint64_t)i,
		     r.ret	 ? rk_strerror(r.ret)
		     : r.bad < 0 ? "READ data checked"
				 : "READ MISMATCH");
		if (r.ret)
			return r.ret;
	}
	for (int i = 0; i < np; i++) {
		ssize_t bad = rk_pattern_check(pbuf + (uint64_t)i * sz, sz, 2000 + (uint32_t)i);

		step(rep, "arrived", i, bad < 0, "the peer's buffer holds worker %d's WRITE: %s", i,
		     bad < 0 ? "every byte" : "MISMATCH");
	}
	/* Step 3: every worker checks the shared bytes (or its own, under fork). */
	for (int i = 0; i < np; i++) {
		if (shared) {
			ret = ask_check(&p[i], i, N, N, 3000, &r);
			if (!ret && r.bad < 0)
				ret = ask_check(&p[i], i, 2 * N, N, 4000, &r);
		} else {
			ret = ask_check(&p[i], i, N + (uint64_t)i, 1, 3000 + (uint32_t)i, &r);
			if (!ret && r.bad < 0)
				ret = ask_check(&p[i], i, 2 * N + (uint64_t)i, 1,
						4000 + (uint32_t)i, &r);
		}
		if (ret)
			return ret;
		if (shared)
			step(rep, "see", i, r.bad < 0,
			     "worker %d sees, in its own mapping, all %d READ results and all %d "
			     "peer WRITEs, whichever worker's MR they went through: %s",
			     i, np, np, r.bad < 0 ? "every byte" : "MISMATCH");
		else
			step(rep, "see", i, r.bad < 0,
			     "worker %d sees its READ result and the peer's WRITE into its MR: %s",
			     i, r.bad < 0 ? "every byte" : "MISMATCH");
	}
	return 0;
}

/* ---- shm ---- */

static int run_workers(const struct share_opts *o, bool shared, int shm_fd, struct report *rep)
{
	struct proc p[MAX_PROCS];
	int np = (int)o->procs;
	size_t wlen = 3 * (size_t)np * o->size;
	struct worker_arg a = {.o = o, .shm_fd = shm_fd, .len = wlen};
	uint8_t *pbuf;
	struct node n;
	int ret, failed;

	memset(p, 0, sizeof(p));
	for (int i = 0; i < MAX_PROCS; i++)
		p[i].sock = -1;
	pbuf = aligned_alloc(4096, wlen);
	if (!pbuf)
		return -ENOMEM;
	memset(pbuf, 0, wlen);
	memset(&n, 0, sizeof(n));
	/* Fork first: every process, the parent too, makes its verbs objects after. */
	ret = spawn(p, np, worker_main, &a);
	if (!ret)
		ret = peer_connect(&n, p, np, o, pbuf, wlen, shared, rep);
	if (!ret)
		ret = peer_run(&n, p, np, o, pbuf, shared, rep);
	failed = reap(p, np, ret != 0);
	if (!ret && failed) {
		rk_error("%d worker(s) exited with an error", failed);
		ret = -EIO;
	}
	node_close(&n);
	free(pbuf);
	return ret;
}

static int way_shm(const struct share_opts *o, struct report *rep, json_object *doc)
{
	size_t len = 3 * (size_t)o->procs * o->size;
	int fd, ret;

	ret = rk_shm_create("rdmakit-share", len, &fd);
	if (ret)
		return ret;
	json_object_object_add(doc, "shared_bytes", json_object_new_int64((int64_t)len));
	if (!rep->json)
		printf("shm: one memfd of %zu bytes; %" PRIu64 " workers each map it and register "
		       "it with their own context, PD and MR; the peer is the parent process\n",
		       len, o->procs);
	ret = run_workers(o, true, fd, rep);
	close(fd);
	return ret;
}

/* ---- fork ---- */

struct late_arg {
	const struct share_opts *o;
};

/* A process that registers memory first and calls ibv_fork_init() after. */
static int late_main(int idx, int sock, void *argp)
{
	struct late_arg *a = argp;
	struct msg m = {.type = M_DONE};
	struct cli_dev d;
	struct ibv_pd *pd = NULL;
	struct rk_mr *mr = NULL;
	int ret;

	ret = cli_dev_open(&a->o->dev, NULL, &d);
	if (ret)
		return ret;
	ret = rk_pd_alloc(d.dev, &pd);
	if (!ret)
		ret = rk_mr_alloc(pd, 4096, IBV_ACCESS_LOCAL_WRITE, &mr);
	if (!ret) {
		m.ret = rk_fork_init();
		m.fork_status = (int32_t)ibv_is_fork_initialized();
		ret = send_msg(sock, &m);
	}
	rk_mr_free(mr);
	rk_pd_free(pd);
	cli_dev_close(&d);
	return ret;
}

static int way_fork(const struct share_opts *o, struct report *rep, json_object *doc)
{
	struct late_arg la = {.o = o};
	struct proc late = {.sock = -1};
	enum ibv_fork_status st;
	json_object *f = json_object_new_object();
	const char *env = getenv("RDMAV_FORK_SAFE");
	struct msg r;
	int ret, fret, failed;

	json_object_object_add(doc, "fork", f);
	/* First a child that registers before ibv_fork_init(): this process has
	 * touched no verbs yet, so the child starts as clean as a new program. */
	ret = spawn(&late, 1, late_main, &la);
	if (!ret)
		ret = recv_msg(late.sock, M_DONE, &r, "the late-init child");
	failed = reap(&late, 1, ret != 0);
	if (ret)
		return ret;
	if (failed)
		return -EIO;
	/* Now this process: ibv_fork_init() before any registration. */
	fret = rk_fork_init();
	st = ibv_is_fork_initialized();
	json_object_object_add(f, "fork_init_ret", json_object_new_int(fret));
	json_object_object_add(f, "status", json_object_new_string(rk_fork_status_str(st)));
	json_object_object_add(f, "late_fork_init_ret", json_object_new_int(r.ret));
	json_object_object_add(
		f, "late_status",
		json_object_new_string(rk_fork_status_str((enum ibv_fork_status)r.fork_status)));
	json_object_object_add(f, "rdmav_fork_safe", env ? json_object_new_string(env) : NULL);
	step(rep, "init", -1, fret == 0,
	     "ibv_fork_init() before any registration returned %d (%s); ibv_is_fork_initialized() "
	     "reports %s%s",
	     -fret, fret ? rk_strerror(fret) : "success", rk_fork_status_str(st),
	     st == IBV_FORK_UNNEEDED ? ": the kernel copies DMA pages on fork, so fork is safe "
				       "even without ibv_fork_init"
				     : "");
	/* rdma-core: ibv_fork_init() returns 0 at once when the kernel makes it
	 * unneeded; otherwise EINVAL once memory was registered before it. */
	{
		bool unneeded = r.fork_status == IBV_FORK_UNNEEDED;
		/* EINVAL is the documented failure. rdma-core 44's ibv_fork_init()
		 * does not look at UNNEEDED at all (registered too early: EINVAL);
		 * later releases return 0 first when the kernel copies DMA pages on
		 * fork (unless RDMAV_USE_MADVISE is set). */
		bool as_documented = r.ret == -EINVAL || (unneeded && r.ret == 0);

		json_object_object_add(f, "late_as_documented",
				       json_object_new_boolean(as_documented));
		step(rep, "late", -1, as_documented,
		     "a process that registered an MR first, then called ibv_fork_init(): it "
		     "returned %s (%s; ibv_is_fork_initialized() there: %s)",
		     rk_qps_errno_name(r.ret),
		     r.ret == -EINVAL ? "the documented failure: registration came before "
					"ibv_fork_init, even though this kernel makes fork support "
					"unneeded"
		     : r.ret == 0 && unneeded
			     ? "accepted: this libibverbs skips the too-late "
			       "check when fork support is unneeded"
			     : "neither the documented EINVAL nor an UNNEEDED no-op",
		     rk_fork_status_str((enum ibv_fork_status)r.fork_status));
	}
	if (!rep->json)
		printf("fork: %" PRIu64 " children and the parent each open the device after "
		       "fork() and do RDMA with each other\n",
		       o->procs);
	return run_workers(o, false, -1, rep);
}

/* ---- import ---- */

struct user_arg {
	const struct share_opts *o;
};

/* A user: import the owner's context, PD and MR; READ and WRITE the owner's
 * MR through a QP of its own on the imported PD; unimport. */
static int user_main(int idx, int sock, void *argp)
{
	const struct share_opts *o = ((struct user_arg *)argp)->o;
	struct rk_qp_init_attr qa = {.transport = RK_RC};
	struct rk_gid_want want = {.index = (int)o->dev.gid_index};
	struct rk_share_handles h;
	struct rk_imported *imp = NULL;
	struct rk_gid_choice gid;
	struct rk_cq *cq = NULL;
	struct rk_mr *mr = NULL;
	struct rk_qp *x = NULL, *y = NULL;
	struct rk_endpoint ex, ey;
	struct msg m = {.type = M_DONE, .bad = -1};
	uint8_t port = (uint8_t)o->dev.port;
	size_t sz = o->size;
	int fd = -1, ret;

	ret = rk_share_recv_handles(sock, MSG_WAIT_MS, &fd, &h);
	if (ret)
		return ret;
	ret = rk_share_import(fd, &h, &imp);
	if (ret) {
		m.ret = ret;
		snprintf(m.text, sizeof(m.text), "ibv_import_device: %s",
			 ret == -EOPNOTSUPP ? "EOPNOTSUPP from the provider" : rk_strerror(ret));
		send_msg(sock, &m);
		return ret;
	}
	snprintf(m.text, sizeof(m.text),
		 "pid %d imported %s: PD handle %u, MR handle %u (lkey 0x%x "
		 "rkey 0x%x)",
		 (int)getpid(), imp->dev->info.name, h.pd_handle, h.mr_handle, imp->mr->lkey,
		 imp->mr->rkey);
	qa.port_num = port;
	if (rk_port_is_roce(imp->dev, port) || want.index >= 0) {
		if ((ret = rk_gid_select(imp->dev, port, &want, &gid)))
			goto out;
		qa.gid = &gid;
	}
	/* Its own CQ, local buffer and QPs, all on the imported context and PD. */
	if ((ret = rk_cq_create(imp->dev, 16, false, &cq)) ||
	    (ret = rk_mr_alloc(imp->pd, 2 * sz, IBV_ACCESS_LOCAL_WRITE, &mr)) ||
	    (ret = rk_qp_create(imp->pd, imp->dev, cq, cq, &qa, &x)) ||
	    (ret = rk_qp_create(imp->pd, imp->dev, cq, cq, &qa, &y)))
		goto out;
	rk_qp_local_endpoint(x, &ex);
	rk_qp_local_endpoint(y, &ey);
	if ((ret = rk_qp_connect(x, 0, &ey, NULL)) ||
	    (ret = rk_qp_connect(y, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &ex, NULL)))
		goto out;
	/* y serves the owner's MR (imported: same PD); x READs and WRITEs it. */
	ret = rdma(x, mr, RK_OP_READ, 1, mr->buf, h.mr_addr + (uint64_t)idx * sz, imp->mr->rkey,
		   (uint32_t)sz);
	if (!ret)
		ret = wait_n(cq, 1, "READ of the owner's MR");
	if (ret)
		goto out;
	{
		ssize_t bad = rk_pattern_check(mr->buf, sz, 5000 + (uint32_t)idx);

		m.bad = bad;
	}
	rk_pattern_fill((uint8_t *)mr->buf + sz, sz, 6000 + (uint32_t)idx);
	ret = rdma(x, mr, RK_OP_WRITE, 2, (uint8_t *)mr->buf + sz,
		   h.mr_addr + (o->procs + (uint64_t)idx) * sz, imp->mr->rkey, (uint32_t)sz);
	if (!ret)
		ret = wait_n(cq, 1, "WRITE into the owner's MR");
out:
	rk_qp_destroy(y);
	rk_qp_destroy(x);
	rk_mr_free(mr);
	rk_cq_destroy(cq);
	rk_share_unimport(imp);
	m.ret = ret;
	send_msg(sock, &m);
	return ret;
}

static int way_import(const struct share_opts *o, struct report *rep, json_object *doc)
{
	struct user_arg ua = {.o = o};
	struct proc p[MAX_PROCS];
	int np = (int)o->procs;
	size_t sz = o->size;
	json_object *imp = json_object_new_object();
	struct node n;
	int ret, failed;
	bool refused = false;

	json_object_object_add(doc, "import", imp);
	memset(p, 0, sizeof(p));
	for (int i = 0; i < MAX_PROCS; i++)
		p[i].sock = -1;
	memset(&n, 0, sizeof(n));
	{
		void *buf = aligned_alloc(4096, 2 * (size_t)np * sz);

		if (!buf)
			return -ENOMEM;
		memset(buf, 0, 2 * (size_t)np * sz);
		ret = node_open(&n, o, buf, 2 * (size_t)np * sz, 0);
		if (ret) {
			node_close(&n);
			free(buf);
			return ret;
		}
		n.mr->owns_buf = 1; /* rk_mr_free() frees it */
	}
	for (int i = 0; i < np; i++)
		rk_pattern_fill((uint8_t *)n.mr->buf + (size_t)i * sz, sz, 5000 + (uint32_t)i);
	if (!rep->json)
		printf("import: the owner (pid %d) has %s's context (command fd %d), PD handle %u, "
		       "MR handle %u at %p (%zu bytes); %d users import them\n",
		       (int)getpid(), n.d.dev->info.name, n.d.dev->ctx->cmd_fd, n.pd->handle,
		       n.mr->mr->handle, n.mr->buf, n.mr->len, np);
	ret = spawn(p, np, user_main, &ua);
	for (int i = 0; !ret && i < np; i++)
		ret = rk_share_send_handles(p[i].sock, n.d.dev->ctx, n.pd, n.mr->mr);
	for (int i = 0; !ret && i < np; i++) {
		struct msg r;
		char who[32];

		snprintf(who, sizeof(who), "user %d", i);
		ret = recv_msg(p[i].sock, M_DONE, &r, who);
		if (ret)
			break;
		if (r.ret == -EOPNOTSUPP) {
			refused = true;
			ret = r.ret;
			for (int k = i + 1; k < np; k++) /* the others answer the same */
				recv_msg(p[k].sock, M_DONE, &r, who);
			step(rep, "import", -1, false,
			     "ibv_import_device: EOPNOTSUPP from the provider of %s: it cannot "
			     "import a context from another process (only mlx5 can today). Share "
			     "the memory instead, each process with its own context, PD and MR: "
			     "rdmakit share shm",
			     n.d.dev->info.name);
			break;
		}
		step(rep, "import", i, !r.ret && r.bad < 0,
		     "%s; READ the owner's MR through its own QP on the imported PD: %s; WROTE "
		     "into it; unimported: %s",
		     r.text, r.bad < 0 ? "every byte as the owner put it" : "MISMATCH",
		     r.ret ? rk_strerror(r.ret) : "ok");
		if (r.ret)
			ret = r.ret;
	}
	failed = reap(p, np, false);
	json_object_object_add(imp, "supported", json_object_new_boolean(!refused));
	if (refused)
		json_object_object_add(imp, "error", json_object_new_string("EOPNOTSUPP"));
	if (!ret) {
		for (int i = 0; i < np; i++) {
			ssize_t bad = rk_pattern_check((uint8_t *)n.mr->buf + (size_t)(np + i) * sz,
						       sz, 6000 + (uint32_t)i);

			step(rep, "owner", i, bad < 0,
			     "after user %d unimported, the owner's MR holds what it wrote: %s", i,
			     bad < 0 ? "every byte" : "MISMATCH");
		}
		if (failed)
			ret = -EIO;
	}
	node_close(&n); /* the owner still owns and frees them */
	return ret;
}

int cmd_share(int argc, char **argv)
{
	struct share_opts o = {.dev = CLI_DEV_OPTS_DEFAULT, .procs = 2, .size = 4096};
	const struct rk_opt opts[] = {
		CLI_DEV_OPTS(&o.dev),
		{"procs", 'p', RK_OPT_COUNT, &o.procs, 1, MAX_PROCS, "N",
		 "worker, child or user processes"},
		{"size", 's', RK_OPT_SIZE, &o.size, 8, 16u << 20, "BYTES",
		 "bytes per RDMA operation (4k, 1M ...)"},
		{"json", 'j', RK_OPT_FLAG, &o.json, 0, 0, NULL, "print one JSON document"},
		RK_OPT_END,
	};
	struct report rep = {0};
	json_object *doc;
	const char *way;
	int first, ret;

	ret = cli_parse("share", usage_text, description, opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	if (first >= argc) {
		fprintf(stderr, "rdmakit share: which way? import, shm or fork (see --help)\n");
		return CLI_USAGE;
	}
	way = argv[first];
	if (strcmp(way, "import") && strcmp(way, "shm") && strcmp(way, "fork")) {
		fprintf(stderr, "rdmakit share: unknown way '%s': import, shm or fork\n", way);
		return CLI_USAGE;
	}
	if (first + 1 < argc) {
		fprintf(stderr, "rdmakit share: unexpected argument '%s'\n", argv[first + 1]);
		return CLI_USAGE;
	}
	rep.json = o.json;
	rep.steps = json_object_new_array();
	doc = json_object_new_object();
	json_object_object_add(doc, "way", json_object_new_string(way));
	json_object_object_add(doc, "procs", json_object_new_int64((int64_t)o.procs));
	json_object_object_add(doc, "size", json_object_new_int64((int64_t)o.size));
	if (!strcmp(way, "import"))
		ret = way_import(&o, &rep, doc);
	else if (!strcmp(way, "shm"))
		ret = way_shm(&o, &rep, doc);
	else
		ret = way_fork(&o, &rep, doc);
	if (!ret && rep.failures)
		ret = -EIO;
	json_object_object_add(doc, "steps", rep.steps);
	json_object_object_add(doc, "result", json_object_new_string(ret ? "failed" : "ok"));
	if (o.json)
		cli_json_print(doc);
	else {
		json_object_put(doc);
		if (ret)
			printf("share %s: FAILED (%s)\n", way, rk_strerror(ret));
		else
			printf("share %s: %" PRIu64 " processes, every byte checked: OK\n", way,
			       o.procs);
	}
	return ret ? CLI_FAILED : CLI_OK;
}
