/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: loopback, two RC QPs on one device connected to each other;
 * SEND/RECV, RDMA WRITE and RDMA READ, each checked byte for byte. On
 * iWARP, whose QPs connect only through RDMA CM, B listens on the device's
 * own address and A connects to it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/cm.h>
#include <rdmakit/cq.h>
#include <rdmakit/device.h>
#include <rdmakit/log.h>
#include <rdmakit/loopback.h>
#include <rdmakit/mem.h>
#include <rdmakit/ops.h>
#include <rdmakit/pattern.h>
#include <rdmakit/port.h>
#include <rdmakit/qp.h>
#include <rdmakit/status.h>

#include "base/clock.h"
#include "conn/cm_int.h"
#include "verbs/device_int.h"

#define WAIT_MS 5000

/* One run: what it opened and the result so far. */
struct lb_run {
	const struct rk_loopback_opts *o;
	uint32_t sge;
	struct rk_port_sel sel;
	bool iwarp;
	struct rk_device *dev; /* PD, CQs, MRs and QPs: sel.dev, on iWARP the CM's */
	struct rk_cm_self cm;  /* iWARP: B's listener and A's id */
	struct rk_cm *cm_b;
	struct ibv_pd *pd;
	struct rk_cq *cq_a, *cq_b;
	struct rk_mr *mr_a, *mr_b;
	struct rk_qp *qp_a, *qp_b;
	struct rk_loopback_result res;
};

static const struct {
	const char *name, *what;
} step_names[RK_LOOPBACK_STEPS] = {
	[RK_LOOPBACK_SEND] = {"SEND", "QP A -> QP B, into a posted receive"},
	[RK_LOOPBACK_WRITE] = {"WRITE", "QP A -> B's buffer by rkey"},
	[RK_LOOPBACK_READ] = {"READ", "QP A <- B's buffer by rkey"},
};

double rk_loopback_step_avg_us(const struct rk_loopback_step *step)
{
	return step->checked ? step->total_us / (double)step->checked : 0;
}

static void lb_notify(const struct lb_run *lb, enum rk_loopback_event ev, int step)
{
	if (lb->o->on_event)
		lb->o->on_event(&lb->res, ev, step, lb->o->arg);
}

static int lb_check_opts(const struct rk_loopback_opts *o, uint32_t sge)
{
	if (o->size < 1 || o->size > RK_LOOPBACK_MAX_SIZE) {
		rk_error("loopback: size %" PRIu64 " is outside 1..%llu bytes", o->size,
			 RK_LOOPBACK_MAX_SIZE);
		return -EINVAL;
	}
	if (o->count < 1 || o->count > RK_LOOPBACK_MAX_COUNT) {
		rk_error("loopback: count %" PRIu64 " is outside 1..%llu", o->count,
			 RK_LOOPBACK_MAX_COUNT);
		return -EINVAL;
	}
	if (sge > RK_LOOPBACK_MAX_SGE || sge > o->size) {
		rk_error("loopback: %u SGEs: at most %d, and no more than the %" PRIu64 " bytes",
			 sge, RK_LOOPBACK_MAX_SGE, o->size);
		return -EINVAL;
	}
	return 0;
}

static void lb_result_init(struct lb_run *lb)
{
	struct rk_loopback_result *r = &lb->res;

	memset(r, 0, sizeof(*r));
	r->size = lb->o->size;
	r->count = lb->o->count;
	r->sge = lb->sge;
	r->events = lb->o->events;
	for (int s = 0; s < RK_LOOPBACK_STEPS; s++)
		r->steps[s] = (struct rk_loopback_step){.kind = (enum rk_loopback_step_kind)s,
							 .name = step_names[s].name,
							 .what = step_names[s].what,
							 .bad_offset = -1};
}

/* The device port: with its GID chosen, or on iWARP (no GID: its QPs
 * connect by IP address through RDMA CM) just ACTIVE. */
static int lb_open_port(struct lb_run *lb)
{
	int ret;

	ret = rk_port_open_cm(lb->o->device, lb->o->port_num, lb->o->gid_index, &lb->sel);
	if (ret)
		return ret;
	lb->iwarp = rk_device_is_iwarp(lb->sel.dev);
	if (lb->iwarp && lb->o->gid_index >= 0) {
		rk_error("loopback: %s is an iWARP device: it has no GID to choose (its QPs "
			 "connect by IP address through RDMA CM); leave out the GID index",
			 lb->sel.dev->info.name);
		rk_port_close(&lb->sel);
		return -EINVAL;
	}
	return 0;
}

/* The device port, its GID, and whether it can gather lb->sge pieces. */
static int lb_open(struct lb_run *lb)
{
	struct rk_loopback_result *r = &lb->res;
	const struct rk_port_info *pi;
	int ret;

	ret = lb_open_port(lb);
	if (ret)
		return ret;
	snprintf(r->device, sizeof(r->device), "%s", lb->sel.dev->info.name);
	r->port_num = lb->sel.port_num;
	pi = rk_device_port(lb->sel.dev, lb->sel.port_num);
	r->lid = pi ? pi->lid : 0;
	r->has_gid = lb->sel.has_gid;
	if (r->has_gid)
		r->gid = lb->sel.gid;
	lb_notify(lb, RK_LOOPBACK_OPENED, -1);
	if (lb->sge > (uint32_t)lb->sel.dev->info.max_sge) {
		rk_error("loopback: sge %u is above the device's limit of %d SGEs", lb->sge,
			 lb->sel.dev->info.max_sge);
		rk_port_close(&lb->sel);
		return -EINVAL;
	}
	lb->dev = lb->sel.dev;
	return 0;
}

/* iWARP: B's listener on the device's own address and A's id resolved to
 * it; PD, CQs and MRs then go on the device as RDMA CM opened it. What it
 * made, also on an error, lb_cm_close() destroys. */
static int lb_cm_open(struct lb_run *lb)
{
	int ret;

	ret = rk_cm_self_open(lb->sel.dev->info.name, lb->sel.port_num, WAIT_MS, &lb->cm);
	if (!ret)
		lb->dev = lb->cm.dev;
	return ret;
}

/* Undo lb_cm_open() and B's accept: ids NULL or made. */
static void lb_cm_close(struct lb_run *lb)
{
	rk_cm_destroy(lb->cm_b);
	rk_cm_self_close(&lb->cm);
}

/* One side's CQ and its buffer, which the other side may reach by access. */
static int lb_side_alloc(struct lb_run *lb, int access, struct rk_cq **cq_p, struct rk_mr **mr_p)
{
	struct rk_cq *cq;
	struct rk_mr *mr;
	int ret;

	ret = rk_cq_create(lb->dev, 32, lb->o->events, &cq);
	if (ret)
		return ret;
	ret = rk_mr_alloc(lb->pd, lb->o->size, access, &mr);
	if (ret) {
		rk_cq_destroy(cq);
		return ret;
	}
	*cq_p = cq;
	*mr_p = mr;
	return 0;
}

static void lb_side_free(struct rk_cq *cq, struct rk_mr *mr)
{
	rk_mr_free(mr);
	rk_cq_destroy(cq);
}

/* PD, CQs and buffers. A only sends and reads into its buffer (a READ sink:
 * on iWARP with remote write access, as iWARP's READ responses are written
 * to it); B is the target of WRITE and READ. */
static int lb_alloc(struct lb_run *lb)
{
	int remote = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	int sink = lb->iwarp ? IBV_ACCESS_REMOTE_WRITE : 0;
	int ret;

	ret = rk_pd_alloc(lb->dev, &lb->pd);
	if (ret)
		return ret;
	ret = lb_side_alloc(lb, IBV_ACCESS_LOCAL_WRITE | sink, &lb->cq_a, &lb->mr_a);
	if (ret)
		goto err_free_pd;
	ret = lb_side_alloc(lb, IBV_ACCESS_LOCAL_WRITE | remote, &lb->cq_b, &lb->mr_b);
	if (ret)
		goto err_free_side_a;
	return 0;

err_free_side_a:
	lb_side_free(lb->cq_a, lb->mr_a);
err_free_pd:
	rk_pd_free(lb->pd);
	return ret;
}

static void lb_free(struct lb_run *lb)
{
	lb_side_free(lb->cq_b, lb->mr_b);
	lb_side_free(lb->cq_a, lb->mr_a);
	rk_pd_free(lb->pd);
}

static void lb_qp_attr(const struct lb_run *lb, struct rk_qp_init_attr *qa)
{
	*qa = (struct rk_qp_init_attr){
		.transport = RK_RC,
		.max_send_wr = 16,
		.max_recv_wr = 16,
		.max_send_sge = lb->sge,
		.max_recv_sge = lb->sge,
		.port_num = lb->sel.port_num,
		.gid = lb->sel.has_gid ? &lb->sel.gid : NULL,
	};
}

/* iWARP: A connects to B's listener while B accepts. */
static int lb_cm_connect(struct lb_run *lb)
{
	struct rk_cm_self_side a = {.cq = lb->cq_a, .cm = lb->cm.active,
				    .mine = {.size = (uint32_t)lb->o->size}};
	struct rk_cm_self_side b = {.cq = lb->cq_b,
				    .mine = {.addr = (uint64_t)(uintptr_t)lb->mr_b->buf,
					     .len = lb->o->size,
					     .rkey = lb->mr_b->mr->rkey}};
	int ret;

	lb_qp_attr(lb, &a.qa);
	lb_qp_attr(lb, &b.qa);
	ret = rk_cm_self_connect(lb->cm.listener, lb->pd, &a, &b, WAIT_MS);
	lb->cm_b = b.cm;
	if (ret)
		return ret;
	lb->qp_a = a.qp;
	lb->qp_b = b.qp;
	lb->res.path_mtu = rk_mtu_bytes(lb->qp_a->path.path_mtu);
	return 0;
}

/* Without RDMA CM: each QP moved to RTS towards the other's endpoint. */
static int lb_qp_connect(struct lb_run *lb)
{
	struct rk_qp_init_attr qa;
	struct rk_endpoint ep_a, ep_b;
	enum ibv_mtu mtu;
	char why[160];
	int ret;

	lb_qp_attr(lb, &qa);
	ret = rk_qp_create(lb->pd, lb->dev, lb->cq_a, lb->cq_a, &qa, &lb->qp_a);
	if (ret)
		return ret;
	ret = rk_qp_create(lb->pd, lb->dev, lb->cq_b, lb->cq_b, &qa, &lb->qp_b);
	if (ret)
		goto err_destroy_qp_a;
	rk_qp_local_endpoint(lb->qp_a, &ep_a);
	rk_qp_local_endpoint(lb->qp_b, &ep_b);
	ret = rk_path_mtu(ep_a.mtu, ep_b.mtu, 0, &mtu, why, sizeof(why));
	if (ret) {
		rk_error("loopback: path MTU: %s", why);
		goto err_destroy_qp_b;
	}
	ret = rk_qp_connect(lb->qp_a, 0, &ep_b, NULL);
	if (ret)
		goto err_destroy_qp_b;
	ret = rk_qp_connect(lb->qp_b, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &ep_a,
			    NULL);
	if (ret)
		goto err_destroy_qp_b;
	lb->res.path_mtu = rk_mtu_bytes(mtu);
	return 0;

err_destroy_qp_b:
	rk_qp_destroy(lb->qp_b);
err_destroy_qp_a:
	rk_qp_destroy(lb->qp_a);
	return ret;
}

/* The two QPs, connected to each other: B allows remote WRITE and READ. */
static int lb_connect(struct lb_run *lb)
{
	int ret;

	if (lb->iwarp)
		ret = lb_cm_connect(lb);
	else
		ret = lb_qp_connect(lb);
	if (ret)
		return ret;
	lb->res.connected = true;
	lb->res.qpn_a = lb->qp_a->qp->qp_num;
	lb->res.qpn_b = lb->qp_b->qp->qp_num;
	return 0;
}

/* Wait for one completion on cq and check its status. */
static int lb_wait_one(struct rk_cq *cq, const char *what, struct ibv_wc *wc)
{
	int ret, n;

	ret = rk_cq_wait(cq, wc, 1, WAIT_MS, &n);
	if (ret == -ETIMEDOUT) {
		rk_error("%s: no completion within %d ms", what, WAIT_MS);
		return ret;
	}
	if (ret)
		return ret;
	return rk_wc_check(wc, what);
}

/* Post one SEND, WRITE or READ of the whole buffer (with its receive for a
 * SEND) and wait for its completions. */
static int lb_move(struct lb_run *lb, struct rk_loopback_step *r, uint64_t round)
{
	uint32_t size = (uint32_t)lb->o->size;
	int nsge = (int)lb->sge;
	struct ibv_sge sa[RK_LOOPBACK_MAX_SGE], sb[RK_LOOPBACK_MAX_SGE];
	struct rk_wr wr = {.wr_id = round, .flags = IBV_SEND_SIGNALED, .sg = sa, .nsge = nsge};
	struct ibv_wc wc;
	int ret;

	rk_sge_split(lb->mr_a, 0, size, nsge, sa);
	rk_sge_split(lb->mr_b, 0, size, nsge, sb);
	if (r->kind == RK_LOOPBACK_SEND) {
		ret = rk_post_recv(lb->qp_b, round, sb, nsge);
		if (ret)
			return ret;
		wr.op = RK_OP_SEND;
	} else {
		wr.op = r->kind == RK_LOOPBACK_WRITE ? RK_OP_WRITE : RK_OP_READ;
		wr.remote_addr = (uint64_t)(uintptr_t)lb->mr_b->buf;
		wr.rkey = lb->mr_b->mr->rkey;
		/* iWARP: a READ's sink is one SGE (siw: SIW_MAX_SGE_RD); siw takes
		 * more without an error and writes only the first (seen: --sge 3). */
		if (wr.op == RK_OP_READ && lb->iwarp && nsge > 1) {
			rk_sge_split(lb->mr_a, 0, size, 1, sa);
			wr.nsge = 1;
		}
	}
	ret = rk_post(lb->qp_a, &wr);
	if (ret)
		return ret;
	ret = lb_wait_one(lb->cq_a, r->name, &wc);
	if (ret || r->kind != RK_LOOPBACK_SEND)
		return ret;
	ret = lb_wait_one(lb->cq_b, "RECV", &wc);
	if (ret)
		return ret;
	r->byte_len = wc.byte_len;
	if (wc.byte_len != size) {
		rk_error("RECV completed with %u bytes, %u were sent", wc.byte_len, size);
		return -EIO;
	}
	return 0;
}

/* One round of a step: a fresh pattern, the move, then the check. */
static int lb_round(struct lb_run *lb, struct rk_loopback_step *r, uint64_t round)
{
	size_t size = lb->o->size;
	bool read = r->kind == RK_LOOPBACK_READ;
	struct rk_mr *src = read ? lb->mr_b : lb->mr_a;
	struct rk_mr *dst = read ? lb->mr_a : lb->mr_b;
	uint32_t seed = (uint32_t)(round * RK_LOOPBACK_STEPS + (uint64_t)r->kind + 1);
	double t0;
	ssize_t bad;
	int ret;

	rk_pattern_fill(src->buf, size, seed);
	memset(dst->buf, 0, size);
	t0 = now_us();
	ret = lb_move(lb, r, round);
	if (ret)
		return ret;
	r->total_us += now_us() - t0;
	bad = rk_pattern_check(dst->buf, size, seed);
	if (bad >= 0) {
		r->bad_offset = bad;
		rk_error("%s iteration %" PRIu64 ": byte %zd is 0x%02x, expected 0x%02x", r->name,
			 round + 1, bad, ((uint8_t *)dst->buf)[bad],
			 rk_pattern_byte((size_t)bad, seed));
		return -EIO;
	}
	r->checked++;
	return 0;
}

/* Every step, count rounds each, stopping at the first failure. */
static int lb_steps(struct lb_run *lb)
{
	int ret = 0;

	for (int s = 0; s < RK_LOOPBACK_STEPS && !ret; s++) {
		struct rk_loopback_step *r = &lb->res.steps[s];

		for (uint64_t i = 0; i < lb->o->count && !ret; i++) {
			ret = lb_round(lb, r, i);
			if (!ret)
				lb_notify(lb, RK_LOOPBACK_ROUND, s);
		}
		r->status = ret;
		lb_notify(lb, RK_LOOPBACK_STEP, s);
	}
	return ret;
}

int rk_loopback_run(const struct rk_loopback_opts *opts, struct rk_loopback_result *result_p)
{
	struct lb_run lb = {.o = opts, .sge = opts->sge ? opts->sge : 1};
	int ret;

	ret = lb_check_opts(opts, lb.sge);
	if (ret)
		return ret;
	lb_result_init(&lb);
	ret = lb_open(&lb);
	if (ret)
		return ret;
	ret = lb.iwarp ? lb_cm_open(&lb) : 0;
	if (!ret)
		ret = lb_alloc(&lb);
	if (ret)
		goto err_close_cm;
	ret = lb_connect(&lb);
	if (ret)
		goto err_free;
	lb_notify(&lb, RK_LOOPBACK_CONNECTED, -1);
	ret = lb_steps(&lb);
	if (ret)
		goto err_destroy_qps;
	*result_p = lb.res;
	/* fall through: the run is over, everything is released */
err_destroy_qps:
	/* iWARP: A leaves, B answers (RDMA CM's ids go after their QPs). */
	rk_cm_disconnect(lb.cm.active, 0);
	rk_cm_disconnect(lb.cm_b, 1000);
	rk_qp_destroy(lb.qp_b);
	rk_qp_destroy(lb.qp_a);
err_free:
	lb_free(&lb);
err_close_cm:
	lb_cm_close(&lb);
	rk_port_close(&lb.sel);
	return ret;
}
