/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* perftest's exchange with rdma_cm (ib_write_bw -R), both roles (see
 * perftest.h): its messages, checked where received, and the engine. */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/cm.h>
#include <rdmakit/log.h>
#include <rdmakit/ops.h>
#include <rdmakit/perftest.h>
#include <rdmakit/stop.h>

#include "base/clock.h"

/* ---- the messages ---- */

static int bad_msg(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad_msg(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

/* n bytes (4 or 8) big endian, as perftest's htobe32()/htobe64() put them. */
static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

#define put32(p, v) put_be((p), (v), 4)
#define put64(p, v) put_be((p), (v), 8)
#define get32(p) ((uint32_t)get_be((p), 4))
#define get64(p) get_be((p), 8)

void rk_perftest_dest_encode(const struct rk_perftest_dest *d, uint8_t out[RK_PERFTEST_DEST_LEN])
{
	memset(out, 0, RK_PERFTEST_DEST_LEN);
	put32(out, (uint32_t)d->lid);
	put32(out + 4, (uint32_t)d->out_reads);
	put32(out + 8, d->qpn);
	put32(out + 12, d->psn);
	put32(out + 16, d->rkey);
	put64(out + 24, d->vaddr);
	memcpy(out + 32, d->gid, 16);
	put32(out + 48, d->srqn);
	put32(out + 52, (uint32_t)d->gid_index);
}

int rk_perftest_dest_decode(const uint8_t *buf, size_t n, struct rk_perftest_dest *d, char *why,
			    size_t why_len)
{
	struct rk_perftest_dest v;

	if (!buf || !d)
		return -EINVAL;
	if (n != RK_PERFTEST_DEST_LEN)
		return bad_msg(why, why_len, "%zu bytes, not perftest's %d-byte pingpong_dest", n,
			       RK_PERFTEST_DEST_LEN);
	v.lid = (int32_t)get32(buf);
	v.out_reads = (int32_t)get32(buf + 4);
	v.qpn = get32(buf + 8);
	v.psn = get32(buf + 12);
	v.rkey = get32(buf + 16);
	v.vaddr = get64(buf + 24);
	memcpy(v.gid, buf + 32, 16);
	v.srqn = get32(buf + 48);
	v.gid_index = (int32_t)get32(buf + 52);
	if (v.qpn > 0xffffff)
		return bad_msg(why, why_len, "QP number 0x%x does not fit in 24 bits", v.qpn);
	if (v.psn > 0xffffff)
		return bad_msg(why, why_len, "PSN 0x%x does not fit in 24 bits", v.psn);
	*d = v;
	return 0;
}

int rk_perftest_version_decode(const uint8_t *buf, size_t n, char text[RK_PERFTEST_VERSION_LEN],
			       char *why, size_t why_len)
{
	const char *s = (const char *)buf;
	size_t len;
	char *end;
	double v;

	if (!buf || !text)
		return -EINVAL;
	if (n != RK_PERFTEST_VERSION_LEN)
		return bad_msg(why, why_len, "%zu bytes, not perftest's %d-byte version", n,
			       RK_PERFTEST_VERSION_LEN);
	len = strnlen(s, n);
	if (len == n)
		return bad_msg(why, why_len, "the version has no NUL within %d bytes",
			       RK_PERFTEST_VERSION_LEN);
	if (!len)
		return bad_msg(why, why_len, "the version is empty");
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
			return bad_msg(why, why_len, "the version has byte 0x%02x at offset %zu, "
				       "not a digit or '.'", (uint8_t)s[i], i);
	errno = 0;
	v = strtod(s, &end);
	if (errno || end != s + len)
		return bad_msg(why, why_len, "the version '%.*s' is not a number", (int)len, s);
	memcpy(text, s, len + 1);
	if (v < RK_PERFTEST_MIN_VERSION) {
		if (why && why_len)
			snprintf(why, why_len, "perftest %s is older than %.2f, the oldest perftest "
				 "%s talks to", text, RK_PERFTEST_MIN_VERSION, RK_PERFTEST_VERSION);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

static uint64_t dbl_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return u;
}

static double bits_dbl(uint64_t u)
{
	double d;

	memcpy(&d, &u, 8);
	return d;
}

void rk_perftest_report_encode(const struct rk_perftest_report *r, uint8_t out[5][8])
{
	put64(out[0], r->size);
	put64(out[1], r->iters);
	put64(out[2], dbl_bits(r->bw_peak));
	put64(out[3], dbl_bits(r->bw_avg));
	put64(out[4], dbl_bits(r->msg_rate));
}

int rk_perftest_report_check(const struct rk_perftest_report *r, bool want_run, char *why,
			     size_t why_len)
{
	const double v[3] = {r->bw_peak, r->bw_avg, r->msg_rate};
	static const char *const name[3] = {"peak bandwidth", "average bandwidth",
					    "message rate"};

	for (int i = 0; i < 3; i++)
		if (!isfinite(v[i]) || v[i] < 0)
			return bad_msg(why, why_len, "the %s is %g, not a finite number >= 0",
				       name[i], v[i]);
	if (want_run && (!r->size || !r->iters))
		return bad_msg(why, why_len, "%" PRIu64 " bytes x %" PRIu64 " iterations: no run",
			       r->size, r->iters);
	return 0;
}

/* ---- the engine ---- */

enum {
	PT_WR_SEND = 1,
	PT_WR_RECV = 2,
	PT_WR_WRITE = 3,
	PT_MSG_SLOT = 64, /* [0, 64): what we send; [64, 128): what we receive */
	PT_DEF_TX_DEPTH = 128,
	PT_PAGE = 4096,
	PT_RUN_WAIT_MS = 24 * 3600 * 1000,
};

struct pt_side {
	struct rk_cm *cm;
	struct ibv_pd *pd;
	struct rk_cq *cq;
	struct rk_qp *qp;
	struct rk_mr *mr;
};

struct pt {
	const struct rk_perftest_opts *o;
	struct rk_perftest_result *res;
	struct rk_cm *listener;
	struct pt_side ctl, data;
	struct rk_cq_ids w;
	uint16_t port;
	uint32_t cycle_buffer, cache_line;
	struct rk_perftest_dest mine, peer;
	int wait_ms; /* a receive's wait, when not the timeout */
};

static int pt_fail(struct pt *p, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Log a failure first understood here, and keep it for the result. */
static int pt_fail(struct pt *p, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->res->error, sizeof(p->res->error), fmt, ap);
	va_end(ap);
	rk_error("perftest: %s", p->res->error);
	return ret;
}

/* A failure a lower layer already logged: only named for the result. */
static int pt_step_failed(struct pt *p, int ret, const char *step)
{
	if (!p->res->error[0])
		snprintf(p->res->error, sizeof(p->res->error), "%s: %s", step, strerror(-ret));
	return ret;
}

static void side_free(struct pt_side *s)
{
	rk_mr_free(s->mr);
	s->mr = NULL;
	if (s->cm)
		rk_cm_disconnect(s->cm, 1000);
	rk_qp_destroy(s->qp);
	s->qp = NULL;
	rk_cq_destroy(s->cq);
	s->cq = NULL;
	rk_pd_free(s->pd);
	s->pd = NULL;
	rk_cm_destroy(s->cm);
	s->cm = NULL;
}

/* The device RDMA CM chose must be the one asked for. */
static int check_device(struct pt *p, struct rk_cm *cm)
{
	const char *dev = cm->dev->info.name;

	if (p->o->device && strcmp(p->o->device, dev))
		return pt_fail(p, -ENODEV, "RDMA CM put the connection with %s on %s, not on %s "
			       "(-d): RDMA CM picks the device from the address",
			       cm->peer_addr[0] ? cm->peer_addr : p->o->host ? p->o->host : "any",
			       dev, p->o->device);
	return 0;
}

/* The peer's disconnect, seen on CM while a wait finds no completion. */
static bool peer_gone(void *arg)
{
	return rk_cm_peer_left(arg);
}

/* The control connection's PD, CQ, QP and message buffer; one receive. */
static int ctl_setup(struct pt *p)
{
	struct pt_side *s = &p->ctl;
	struct rk_qp_init_attr qa = {.transport = RK_RC, .max_send_wr = 4, .max_recv_wr = 4};
	struct ibv_sge sg;
	int ret;

	ret = check_device(p, s->cm);
	if (!ret)
		ret = rk_pd_alloc(s->cm->dev, &s->pd);
	if (!ret)
		ret = rk_cq_create(s->cm->dev, 16, false, &s->cq);
	if (!ret)
		ret = rk_cm_create_qp(s->cm, s->pd, s->cq, s->cq, &qa, &s->qp);
	if (!ret)
		ret = rk_mr_alloc(s->pd, 2 * PT_MSG_SLOT, IBV_ACCESS_LOCAL_WRITE, &s->mr);
	if (ret)
		return ret;
	p->w = (struct rk_cq_ids){.cq = s->cq, .gone = peer_gone, .gone_arg = s->cm};
	sg = rk_sge(s->mr, PT_MSG_SLOT, PT_MSG_SLOT);
	return rk_post_recv(s->qp, PT_WR_RECV, &sg, 1);
}

/* The data connection's PD, CQ, QP and buffer: the client's WRITE source
 * (size bytes), or the server's target (size, or a page when larger). */
static int data_setup(struct pt *p, uint32_t depth)
{
	struct pt_side *s = &p->data;
	struct rk_qp_init_attr qa = {.transport = RK_RC, .max_send_wr = depth, .max_recv_wr = 1};
	size_t len = p->o->size;
	int access = IBV_ACCESS_LOCAL_WRITE;
	int ret;

	if (p->o->server) {
		if (len < p->cycle_buffer)
			len = p->cycle_buffer;
		access |= IBV_ACCESS_REMOTE_WRITE;
	}
	ret = check_device(p, s->cm);
	if (!ret)
		ret = rk_pd_alloc(s->cm->dev, &s->pd);
	if (!ret)
		ret = rk_cq_create(s->cm->dev, (int)depth + 4, false, &s->cq);
	if (!ret)
		ret = rk_cm_create_qp(s->cm, s->pd, s->cq, s->cq, &qa, &s->qp);
	if (!ret)
		ret = rk_mr_alloc(s->pd, len, access, &s->mr);
	if (!ret)
		memset(s->mr->buf, 0, len);
	return ret;
}

/* Wait for the peer's next message on the control QP: its bytes copied to
 * out (want bytes exactly, else -EBADMSG naming step), the receive posted
 * again before anything else is sent. */
static int ctl_recv(struct pt *p, const char *step, void *out, uint32_t want)
{
	const uint64_t ids[1] = {PT_WR_RECV};
	struct pt_side *s = &p->ctl;
	struct ibv_sge sg;
	struct ibv_wc wc;
	char what[160];
	int ret;

	snprintf(what, sizeof(what), "perftest exchange (%s): wait for %s's message", step,
		 s->cm->peer_addr);
	p->w.gone_arg = s->cm;
	ret = rk_cq_wait_ids(&p->w, ids, 1, p->wait_ms ? p->wait_ms : p->o->timeout_ms, what, &wc);
	if (ret == -ECONNRESET)
		return pt_fail(p, ret, "%s: %s left", step, s->cm->peer_addr);
	if (ret)
		return pt_step_failed(p, ret, step);
	if (wc.byte_len != want)
		return pt_fail(p, -EBADMSG, "%s: the peer's message has %u bytes, not perftest's %u",
			       step, wc.byte_len, want);
	memcpy(out, (uint8_t *)s->mr->buf + PT_MSG_SLOT, want);
	sg = rk_sge(s->mr, PT_MSG_SLOT, PT_MSG_SLOT);
	ret = rk_post_recv(s->qp, PT_WR_RECV, &sg, 1);
	return ret ? pt_step_failed(p, ret, step) : 0;
}

static int ctl_send(struct pt *p, const char *step, const void *msg, uint32_t len)
{
	const uint64_t ids[1] = {PT_WR_SEND};
	struct pt_side *s = &p->ctl;
	struct ibv_sge sg = rk_sge(s->mr, 0, len);
	struct rk_wr wr = {.op = RK_OP_SEND, .wr_id = PT_WR_SEND, .sg = &sg, .nsge = 1,
			   .flags = IBV_SEND_SIGNALED};
	char what[160];
	int ret;

	memcpy(s->mr->buf, msg, len);
	snprintf(what, sizeof(what), "perftest exchange (%s): SEND to %s", step, s->cm->peer_addr);
	p->w.gone_arg = s->cm;
	ret = rk_post(s->qp, &wr);
	if (!ret)
		ret = rk_cq_wait_ids(&p->w, ids, 1, p->o->timeout_ms, what, NULL);
	if (ret == -ECONNRESET)
		return pt_fail(p, ret, "%s: %s left", step, s->cm->peer_addr);
	return ret ? pt_step_failed(p, ret, step) : 0;
}

/* One exchange as perftest's ctx_xchg_data(): the client sends first. */
static int xchg(struct pt *p, const char *step, const void *mine, uint32_t mine_len, void *peer,
		uint32_t peer_len)
{
	int ret;

	if (p->o->server) {
		ret = ctl_recv(p, step, peer, peer_len);
		return ret ? ret : ctl_send(p, step, mine, mine_len);
	}
	ret = ctl_send(p, step, mine, mine_len);
	return ret ? ret : ctl_recv(p, step, peer, peer_len);
}

/* A sync or a dest exchange: 56 bytes each way (ctx_hand_shake()). */
static int hand_shake(struct pt *p, const char *step, const struct rk_perftest_dest *mine,
		      struct rk_perftest_dest *peer)
{
	uint8_t out[RK_PERFTEST_DEST_LEN], in[RK_PERFTEST_DEST_LEN];
	struct rk_perftest_dest d;
	char why[160];
	int ret;

	rk_perftest_dest_encode(mine, out);
	ret = xchg(p, step, out, sizeof(out), in, sizeof(in));
	if (ret)
		return ret;
	ret = rk_perftest_dest_decode(in, sizeof(in), &d, why, sizeof(why));
	if (ret && peer)
		return pt_fail(p, ret, "%s: malformed pingpong_dest: %s", step, why);
	if (peer)
		*peer = d;
	return 0;
}

/* Steps 2-4: version, page and cache line size, MTU. */
static int xchg_params(struct pt *p)
{
	char ver[RK_PERFTEST_VERSION_LEN] = RK_PERFTEST_VERSION;
	uint8_t in[RK_PERFTEST_VERSION_LEN], num[4], out[4];
	struct ibv_port_attr pa;
	char why[160], mtu[2];
	uint32_t v;
	int ret;

	ret = xchg(p, "version", ver, sizeof(ver), in, sizeof(in));
	if (ret)
		return ret;
	ret = rk_perftest_version_decode(in, sizeof(in), p->res->peer_version, why, sizeof(why));
	if (ret)
		return pt_fail(p, ret, "version: %s", why);
	put32(out, PT_PAGE);
	ret = xchg(p, "page size (cycle buffer)", out, 4, num, 4);
	if (ret)
		return ret;
	v = get32(num);
	if (!v || v > (1u << 30) || (v & (v - 1)))
		return pt_fail(p, -EBADMSG, "page size (cycle buffer): the peer's is %u, not a power "
			       "of two up to 1 GiB", v);
	p->cycle_buffer = v > PT_PAGE ? v : PT_PAGE;
	p->res->cycle_buffer = p->cycle_buffer;
	put32(out, 64);
	ret = xchg(p, "cache line size", out, 4, num, 4);
	if (ret)
		return ret;
	v = get32(num);
	if (!v || v > 4096)
		return pt_fail(p, -EBADMSG, "cache line size: the peer's is %u, not 1..4096", v);
	p->cache_line = v > 64 ? v : 64;
	if (ibv_query_port(p->ctl.cm->dev->ctx, p->ctl.cm->port_num, &pa))
		return pt_fail(p, -EIO, "MTU: query port %u of %s: %s", p->ctl.cm->port_num,
			       p->ctl.cm->dev->info.name, strerror(errno));
	mtu[0] = (char)('0' + pa.active_mtu);
	mtu[1] = 0;
	ret = xchg(p, "MTU", mtu, 2, num, 2);
	if (ret)
		return ret;
	if (num[0] < '1' || num[0] > '5' || num[1])
		return pt_fail(p, -EBADMSG, "MTU: the peer's is bytes 0x%02x 0x%02x, not a digit "
			       "1..5 (IBV_MTU_256..4096) and a NUL", num[0], num[1]);
	v = (uint32_t)(num[0] - '0');
	p->res->path_mtu = rk_mtu_bytes(v < pa.active_mtu ? (enum ibv_mtu)v : pa.active_mtu);
	return 0;
}

/* Client: one try at a connection to the server's port, the control one or
 * the data one (the server listens again for it only after the first sync:
 * rk_cm_connect_retry()). */
static int side_try(struct pt *p, struct pt_side *s)
{
	bool data = s == &p->data;
	int ret;

	ret = rk_cm_resolve_ps(p->o->host, p->port, RDMA_PS_TCP, &p->o->traffic, p->o->timeout_ms,
			       &s->cm);
	if (!ret)
		ret = data ? data_setup(p, p->o->tx_depth ? p->o->tx_depth : PT_DEF_TX_DEPTH) :
			     ctl_setup(p);
	if (!ret)
		ret = rk_cm_connect_raw(s->cm, s->qp, NULL, 0, p->o->timeout_ms);
	return ret;
}

static int data_try(void *arg)
{
	return side_try(arg, &((struct pt *)arg)->data);
}

static int data_reset(void *arg)
{
	side_free(&((struct pt *)arg)->data);
	return 0;
}

static int ctl_try(void *arg)
{
	return side_try(arg, &((struct pt *)arg)->ctl);
}

static int ctl_reset(void *arg)
{
	side_free(&((struct pt *)arg)->ctl);
	return 0;
}

/* Step 5: sync, the data connection, sync. */
static int connect_data(struct pt *p)
{
	struct rk_perftest_dest zero = {0};
	int ret, tries;

	ret = hand_shake(p, "sync before the data connection", &zero, NULL);
	if (ret)
		return ret;
	if (p->o->server) {
		ret = rk_cm_get_request_any(p->listener, p->o->timeout_ms, &p->data.cm);
		if (!ret)
			ret = data_setup(p, 4);
		if (!ret)
			ret = rk_cm_accept_raw(p->data.cm, p->data.qp, NULL, 0, p->o->timeout_ms);
		/* The QP RDMA CM connected grants no remote access of itself:
		 * the client WRITEs into our buffer. */
		if (!ret)
			ret = rk_qp_set_access(p->data.qp,
					       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	} else {
		ret = rk_cm_connect_retry(p->o->timeout_ms, data_try, data_reset, p, &tries);
	}
	if (ret)
		return pt_step_failed(p, ret, "the data connection");
	return hand_shake(p, "sync after the data connection", &zero, NULL);
}

/* A sync after the dests: perftest sends its own dest again in every sync
 * after step 6 (ctx_hand_shake() with my_dest, into rem_dest: its client
 * WRITEs to whatever the server sent last), so ours goes too, and the
 * peer's must be the one it gave. */
static int sync_dests(struct pt *p, const char *step)
{
	struct rk_perftest_dest d;
	int ret;

	ret = hand_shake(p, step, &p->mine, &d);
	if (ret)
		return ret;
	if (d.qpn != p->peer.qpn || d.rkey != p->peer.rkey || d.vaddr != p->peer.vaddr)
		return pt_fail(p, -EBADMSG, "%s: the peer's QP 0x%x rkey 0x%x address 0x%" PRIx64
			       " differ from what it gave before (QP 0x%x rkey 0x%x address 0x%"
			       PRIx64 ")", step, d.qpn, d.rkey, d.vaddr, p->peer.qpn, p->peer.rkey,
			       p->peer.vaddr);
	return 0;
}

/* Step 6: the dests, twice, and one more sync. */
static int xchg_dests(struct pt *p)
{
	struct rk_perftest_dest *m = &p->mine;
	struct rk_perftest_dest again;
	int ret;

	*m = (struct rk_perftest_dest){.lid = 0, .out_reads = 1, .qpn = p->data.qp->qp->qp_num,
				       .psn = (uint32_t)lrand48() & 0xffffff,
				       .rkey = p->data.mr->mr->rkey,
				       .vaddr = (uintptr_t)p->data.mr->buf, .gid_index = -1};
	ret = hand_shake(p, "QP data (first)", m, &p->peer);
	if (!ret)
		ret = hand_shake(p, "QP data (second)", m, &again);
	if (ret)
		return ret;
	if (again.qpn != p->peer.qpn || again.rkey != p->peer.rkey ||
	    again.vaddr != p->peer.vaddr)
		return pt_fail(p, -EBADMSG, "QP data (second): QP 0x%x rkey 0x%x address 0x%" PRIx64
			       " differ from the first (QP 0x%x rkey 0x%x address 0x%" PRIx64 ")",
			       again.qpn, again.rkey, again.vaddr, p->peer.qpn, p->peer.rkey,
			       p->peer.vaddr);
	if (!p->o->server && !p->peer.vaddr)
		return pt_fail(p, -EBADMSG, "QP data: the server's buffer address is 0");
	p->res->qpn = m->qpn;
	p->res->peer_qpn = p->peer.qpn;
	p->res->peer_rkey = p->peer.rkey;
	p->res->peer_vaddr = p->peer.vaddr;
	return sync_dests(p, "sync after the QP data");
}

/* The peak: the best rate over any stretch of at least a tenth of the run's
 * time, from a completion (or the start) to a later one (done[k]: when the
 * k-th WRITE's completion was polled; a poll's batch shares one time, so a
 * stretch shorter than that says nothing). */
static double peak_rate(const uint64_t *done, uint64_t n, uint64_t t0, uint32_t size)
{
	uint64_t span = (done[n - 1] - t0) / 10, j = 0;
	double best = 0;

	for (uint64_t k = 0; k < n; k++) {
		uint64_t start = k ? done[k - 1] : t0;
		double r;

		if (j < k)
			j = k;
		while (j < n && done[j] - start < span)
			j++;
		if (j == n)
			break;
		if (done[j] <= start)
			continue;
		r = (double)(j - k + 1) * size / ((double)(done[j] - start) / 1e9);
		if (r > best)
			best = r;
	}
	return best;
}

/* Client, step 7: iters WRITEs of size bytes to the server's buffer, at
 * most depth outstanding, each signaled; perftest's addresses (a page's
 * worth, stepping by the size rounded up to the cache line, when size is at
 * most half a page). */
static int run_writes(struct pt *p)
{
	struct pt_side *s = &p->data;
	uint64_t iters = p->o->iters, posted = 0, done = 0, *at;
	uint32_t size = p->o->size, depth = s->qp->cap.max_send_wr;
	uint32_t step = (size + p->cache_line - 1) / p->cache_line * p->cache_line;
	bool stepping = size <= p->cycle_buffer / 2;
	struct ibv_sge sg = rk_sge(s->mr, 0, size);
	struct ibv_wc wc[32];
	uint64_t t0, off = 0;
	int64_t idle_until;
	int ret = 0, n;

	at = calloc(iters, sizeof(*at));
	if (!at)
		return pt_fail(p, -ENOMEM, "WRITE run: no memory for %" PRIu64 " timestamps", iters);
	if (depth > PT_DEF_TX_DEPTH && !p->o->tx_depth)
		depth = PT_DEF_TX_DEPTH;
	t0 = now_ns();
	idle_until = now_ms() + p->o->timeout_ms;
	while (done < iters) {
		while (posted < iters && posted - done < depth) {
			struct rk_wr wr = {.op = RK_OP_WRITE, .wr_id = PT_WR_WRITE, .sg = &sg,
					   .nsge = 1, .flags = IBV_SEND_SIGNALED,
					   .remote_addr = p->peer.vaddr + off, .rkey = p->peer.rkey};

			ret = rk_post(s->qp, &wr);
			if (ret)
				goto out;
			posted++;
			if (stepping) {
				off += step;
				if (off + size > p->cycle_buffer)
					off = 0;
			}
		}
		ret = rk_cq_poll(s->cq, wc, 32, 100, &n);
		if (ret == -ETIMEDOUT) {
			if (now_ms() > idle_until) {
				ret = pt_fail(p, -ETIMEDOUT, "WRITE run: no completion for %d ms after "
					      "%" PRIu64 " of %" PRIu64 " WRITEs", p->o->timeout_ms,
					      done, iters);
				goto out;
			}
			continue;
		}
		if (ret)
			goto out;
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				ret = pt_fail(p, -EIO, "WRITE %" PRIu64 " of %" PRIu64 " to 0x%" PRIx64
					      " (rkey 0x%x) failed: %s (a server given a smaller "
					      "-s than this --size has no room for it)", done + 1,
					      iters, p->peer.vaddr, p->peer.rkey,
					      ibv_wc_status_str(wc[i].status));
				goto out;
			}
			at[done++] = now_ns();
		}
		idle_until = now_ms() + p->o->timeout_ms;
	}
	p->res->seconds = (double)(at[iters - 1] - t0) / 1e9;
	if (p->res->seconds <= 0)
		p->res->seconds = 1e-9;
	p->res->report = (struct rk_perftest_report){
		.size = size, .iters = iters,
		.bw_peak = peak_rate(at, iters, t0, size) / 1048576.0,
		.bw_avg = (double)iters * size / p->res->seconds / 1048576.0,
		.msg_rate = (double)iters / p->res->seconds / 1e6,
	};
	p->res->measured = true;
out:
	free(at);
	return ret ? pt_step_failed(p, ret, "WRITE run") : 0;
}

/* Step 8: the reports, five messages of 8 bytes, the client's first. */
static int xchg_reports(struct pt *p)
{
	static const char *const step[5] = {"report: size", "report: iterations",
					    "report: peak bandwidth", "report: average bandwidth",
					    "report: message rate"};
	struct rk_perftest_report peer, mine = {0};
	uint8_t out[5][8], in[5][8];
	char why[160];
	int ret;

	if (!p->o->server)
		mine = p->res->report;
	rk_perftest_report_encode(&mine, out);
	for (int i = 0; i < 5; i++) {
		ret = xchg(p, step[i], out[i], 8, in[i], 8);
		if (ret)
			return ret;
	}
	peer = (struct rk_perftest_report){.size = get64(in[0]), .iters = get64(in[1]),
					   .bw_peak = bits_dbl(get64(in[2])),
					   .bw_avg = bits_dbl(get64(in[3])),
					   .msg_rate = bits_dbl(get64(in[4]))};
	/* perftest's server sends a report it never filled: only the client's
	 * is the run's. */
	if (!p->o->server)
		return 0;
	ret = rk_perftest_report_check(&peer, true, why, sizeof(why));
	if (ret)
		return pt_fail(p, ret, "report: the client's %s", why);
	p->res->report = peer;
	p->res->measured = true;
	return 0;
}

/* Both roles, once the control connection is up: perftest's parameters,
 * the data QP's own RDMA CM connection, then the address records. */
static int pt_prepare(struct pt *p)
{
	int ret = xchg_params(p);

	if (!ret)
		ret = connect_data(p);
	if (!ret)
		ret = xchg_dests(p);
	return ret;
}

static int pt_client(struct pt *p)
{
	int ret, tries;

	ret = rk_cm_connect_retry(p->o->timeout_ms, ctl_try, ctl_reset, p, &tries);
	if (ret == -ECONNREFUSED)
		return pt_fail(p, ret, "connect to %s port %u: nothing listens there; gave up after "
			       "%d tr%s in %d ms (is 'ib_write_bw -R' running there?)", p->o->host,
			       p->port, tries, tries > 1 ? "ies" : "y", p->o->timeout_ms);
	if (ret)
		return pt_step_failed(p, ret, "the control connection");
	ret = pt_prepare(p);
	if (!ret)
		ret = run_writes(p);
	if (!ret)
		ret = sync_dests(p, "the client's end of the run");
	if (!ret)
		ret = xchg_reports(p);
	if (!ret)
		ret = sync_dests(p, "closing sync");
	return ret;
}

static int pt_server(struct pt *p)
{
	int ret;

	ret = rk_cm_listen_ps(p->o->host, p->port, RDMA_PS_TCP, &p->o->traffic, &p->listener);
	if (ret)
		return pt_step_failed(p, ret, "listen");
	if (p->o->on_listening)
		p->o->on_listening(p->o->arg);
	ret = rk_cm_get_request_any(p->listener, p->o->accept_timeout_ms, &p->ctl.cm);
	if (!ret)
		ret = ctl_setup(p);
	if (!ret)
		ret = rk_cm_accept_raw(p->ctl.cm, p->ctl.qp, NULL, 0, p->o->timeout_ms);
	if (ret)
		return pt_step_failed(p, ret, "the control connection");
	ret = pt_prepare(p);
	if (ret)
		return ret;
	/* The client's "done" sync, waited for while it runs, however long:
	 * its leaving ends the wait. */
	p->wait_ms = PT_RUN_WAIT_MS;
	ret = sync_dests(p, "the client's end of the run");
	p->wait_ms = 0;
	if (!ret)
		ret = xchg_reports(p);
	if (!ret)
		ret = sync_dests(p, "closing sync");
	return ret;
}

int rk_perftest_run(const struct rk_perftest_opts *opts, struct rk_perftest_result *result)
{
	struct pt p = {.o = opts, .res = result, .cycle_buffer = PT_PAGE, .cache_line = 64};
	int ret;

	if (!opts || !result)
		return -EINVAL;
	memset(result, 0, sizeof(*result));
	result->server = opts->server;
	p.port = opts->port ? opts->port : RK_PERFTEST_DEFAULT_PORT;
	if (!opts->size || opts->size > (1u << 30))
		return pt_fail(&p, -EINVAL, "a WRITE of %u bytes is outside 1..%u", opts->size,
			       1u << 30);
	if (!opts->server && (!opts->host || !opts->iters))
		return pt_fail(&p, -EINVAL, "the client needs the server's address and a count");
	srand48((long)now_ns());
	ret = opts->server ? pt_server(&p) : pt_client(&p);
	if (p.ctl.cm) {
		snprintf(result->device, sizeof(result->device), "%s", p.ctl.cm->dev->info.name);
		snprintf(result->peer, sizeof(result->peer), "%s", p.ctl.cm->peer_addr);
		result->port_num = p.ctl.cm->port_num;
	}
	side_free(&p.data);
	side_free(&p.ctl);
	rk_cm_destroy(p.listener);
	return ret;
}
