/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit-mesh's measured links: one RC QP per peer and round, over the
 * library's device, QP, MR and posting pieces. No MPI here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmakit/log.h>
#include <rdmakit/mesh_link.h>
#include <rdmakit/ops.h>
#include <rdmakit/status.h>

#include "base/clock.h"

#define MSG_AREA 512
#define MSG_LEN 64
#define MSG_MAGIC 0x6d657368u /* "mesh" */
#define ID_SEND 0
#define ID_RECV 1
#define ID_WRITE 2

struct mesh_msg {
	uint32_t magic;
	int32_t src, dst;
	uint32_t nonce;
	uint8_t pattern[MSG_LEN - 16];
};

static size_t send_off(const struct rk_mesh_port *p)
{
	return 2 * p->size;
}

static size_t recv_off(const struct rk_mesh_port *p)
{
	return 2 * p->size + MSG_AREA / 2;
}

int rk_mesh_port_open(const char *device, uint8_t port_num, int gid_index, size_t size,
		      bool events, struct rk_mesh_port **port_p)
{
	struct rk_mesh_port *p;
	int ret;

	if (!size)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->size = size;
	p->events = events;
	ret = rk_port_open(device, port_num, gid_index, NULL, &p->sel);
	if (ret)
		goto err_free;
	ret = rk_pd_alloc(p->sel.dev, &p->pd);
	if (ret)
		goto err_close;
	ret = rk_mr_alloc(p->pd, 2 * size + MSG_AREA,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &p->mr);
	if (ret)
		goto err_free_pd;
	*port_p = p;
	return 0;

err_free_pd:
	rk_pd_free(p->pd);
err_close:
	rk_port_close(&p->sel);
err_free:
	free(p);
	return ret;
}

void rk_mesh_port_close(struct rk_mesh_port *p)
{
	if (!p)
		return;
	rk_mr_free(p->mr);
	rk_pd_free(p->pd);
	rk_port_close(&p->sel);
	free(p);
}

int rk_mesh_link_create(struct rk_mesh_port *port, struct rk_mesh_link **link_p,
			struct rk_mesh_info *local_p)
{
	struct rk_qp_init_attr qa = {.transport = RK_RC, .port_num = port->sel.port_num,
				     .gid = port->sel.has_gid ? &port->sel.gid : NULL};
	struct rk_mesh_link *l = calloc(1, sizeof(*l));
	int ret;

	if (!l)
		return -ENOMEM;
	l->port = port;
	ret = rk_cq_create(port->sel.dev, 160, port->events, &l->cq);
	if (ret)
		goto err_free;
	ret = rk_qp_create(port->pd, port->sel.dev, l->cq, l->cq, &qa, &l->qp);
	if (ret)
		goto err_destroy_cq;
	memset(local_p, 0, sizeof(*local_p));
	rk_qp_local_endpoint(l->qp, &local_p->ep);
	local_p->addr = (uintptr_t)port->mr->buf + port->size;
	local_p->rkey = port->mr->mr->rkey;
	*link_p = l;
	return 0;

err_destroy_cq:
	rk_cq_destroy(l->cq);
err_free:
	free(l);
	return ret;
}

void rk_mesh_link_destroy(struct rk_mesh_link *l)
{
	if (!l)
		return;
	rk_qp_destroy(l->qp);
	rk_cq_destroy(l->cq);
	free(l);
}

static int post_recv(struct rk_mesh_link *l)
{
	struct ibv_sge sg = rk_sge(l->port->mr, recv_off(l->port), MSG_LEN);

	return rk_post_recv(l->qp, ID_RECV, &sg, 1);
}

int rk_mesh_link_connect(struct rk_mesh_link *l, const struct rk_mesh_info *remote, char *why,
			 size_t why_len)
{
	struct rk_path_attr path;
	int ret;

	rk_path_defaults(&path);
	if (l->port->qp_timeout)
		path.timeout = l->port->qp_timeout;
	rk_traffic_apply(&l->port->traffic, &path);
	if (remote->error) {
		snprintf(why, why_len, "the peer has no QP: %s", strerror(-remote->error));
		return -ENOTCONN;
	}
	l->remote = *remote;
	ret = rk_qp_to_init(l->qp, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!ret)
		ret = post_recv(l);
	if (!ret)
		ret = rk_qp_to_rtr(l->qp, &remote->ep, &path);
	if (!ret)
		ret = rk_qp_to_rts(l->qp);
	if (ret) {
		snprintf(why, why_len, "connecting QP 0x%x: %s", l->qp->qp->qp_num, strerror(-ret));
		return ret;
	}
	l->connected = true;
	return 0;
}

/* Wait for the completion of work request id (ID_SEND or ID_RECV), keeping
 * the other kind if it comes first. */
static int wait_id(struct rk_mesh_link *l, int id, int timeout_ms, const char *what,
		   char *why, size_t why_len)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct ibv_wc wc;
	int ret;

	while (!l->stashed[id]) {
		int got = 0;

		ret = rk_cq_poll(l->cq, &wc, 1, ms_left(deadline), &got);
		if (ret == -ETIMEDOUT) {
			snprintf(why, why_len, "no %s completion within %d ms", what, timeout_ms);
			return ret;
		}
		if (ret)
			return ret;
		if (got && wc.wr_id <= ID_RECV) {
			l->stash[wc.wr_id] = wc;
			l->stashed[wc.wr_id] = true;
		}
	}
	l->stashed[id] = false;
	wc = l->stash[id];
	ret = rk_wc_check(&wc, what);
	if (ret)
		snprintf(why, why_len, "%s failed: %s (%s)", what, rk_wc_status_name(wc.status),
			 rk_wc_status_hint(wc.status));
	return ret;
}

static void fill_msg(struct mesh_msg *m, int src, int dst, uint32_t nonce)
{
	m->magic = MSG_MAGIC;
	m->src = src;
	m->dst = dst;
	m->nonce = nonce;
	for (size_t i = 0; i < sizeof(m->pattern); i++)
		m->pattern[i] = (uint8_t)(nonce + src * 31 + dst * 17 + i);
}

static int send_msg(struct rk_mesh_link *l, uint32_t len)
{
	struct ibv_sge sg = rk_sge(l->port->mr, send_off(l->port), len);
	struct rk_wr wr = {.op = RK_OP_SEND, .wr_id = ID_SEND, .sg = &sg, .nsge = 1,
			   .flags = RK_WR_SIGNALED};

	return rk_post(l->qp, &wr);
}

int rk_mesh_reach_send(struct rk_mesh_link *l, int src, int dst, uint32_t nonce, int timeout_ms,
		       char *why, size_t why_len)
{
	int ret;

	fill_msg((struct mesh_msg *)((char *)l->port->mr->buf + send_off(l->port)), src, dst,
		 nonce);
	ret = send_msg(l, MSG_LEN);
	if (ret) {
		snprintf(why, why_len, "posting the SEND: %s", strerror(-ret));
		return ret;
	}
	return wait_id(l, ID_SEND, timeout_ms, "checked SEND", why, why_len);
}

int rk_mesh_reach_recv(struct rk_mesh_link *l, int src, int dst, uint32_t nonce, int timeout_ms,
		       char *why, size_t why_len)
{
	struct mesh_msg want;
	const struct mesh_msg *got = (const void *)((char *)l->port->mr->buf + recv_off(l->port));
	int ret = wait_id(l, ID_RECV, timeout_ms, "checked RECV", why, why_len);

	if (ret)
		return ret;
	if (l->stash[ID_RECV].byte_len != MSG_LEN) {
		snprintf(why, why_len, "message of %u bytes, expected %d",
			 l->stash[ID_RECV].byte_len, MSG_LEN);
		return -EBADMSG;
	}
	fill_msg(&want, src, dst, nonce);
	if (memcmp(&want, got, sizeof(want))) {
		snprintf(why, why_len, "message from %d to %d arrived corrupted or from %d to %d",
			 src, dst, got->src, got->dst);
		return -EBADMSG;
	}
	return 0;
}

/* One round trip. */
static int pingpong_once(struct rk_mesh_link *l, bool initiator, int timeout_ms, char *why,
			 size_t why_len)
{
	int ret = 0;

	if (!initiator) {
		ret = wait_id(l, ID_RECV, timeout_ms, "ping RECV", why, why_len);
		if (!ret)
			ret = post_recv(l);
	}
	if (!ret)
		ret = send_msg(l, 8);
	if (!ret)
		ret = wait_id(l, ID_SEND, timeout_ms, "ping SEND", why, why_len);
	if (!ret && initiator) {
		ret = wait_id(l, ID_RECV, timeout_ms, "pong RECV", why, why_len);
		if (!ret)
			ret = post_recv(l);
	}
	return ret;
}

int rk_mesh_pingpong(struct rk_mesh_link *l, bool initiator, int iters, int timeout_ms,
		     double *samples_us, char *why, size_t why_len)
{
	for (int i = 0; i < iters; i++) {
		double t0 = now_us();
		int ret = pingpong_once(l, initiator, timeout_ms, why, why_len);

		if (ret)
			return ret;
		if (initiator)
			samples_us[i] = (now_us() - t0) / 2;
	}
	return 0;
}

static int post_write(struct rk_mesh_link *l)
{
	struct ibv_sge sg = rk_sge(l->port->mr, 0, (uint32_t)l->port->size);
	struct rk_wr wr = {.op = RK_OP_WRITE, .wr_id = ID_WRITE, .sg = &sg, .nsge = 1,
			   .flags = RK_WR_SIGNALED, .remote_addr = l->remote.addr,
			   .rkey = l->remote.rkey};

	return rk_post(l->qp, &wr);
}

int rk_mesh_write_bw(struct rk_mesh_link *l, int iters, int window, int timeout_ms,
		     double *mbps_p, char *why, size_t why_len)
{
	int posted = 0, done = 0, ret = 0;
	double t0 = now_us();

	if (window < 1 || window > 64 || iters < 1)
		return -EINVAL;
	while (done < iters) {
		struct ibv_wc wc[16];
		int got = 0;

		for (; posted < iters && posted - done < window; posted++) {
			ret = post_write(l);
			if (ret) {
				snprintf(why, why_len, "posting an RDMA WRITE: %s", strerror(-ret));
				return ret;
			}
		}
		ret = rk_cq_poll(l->cq, wc, 16, timeout_ms, &got);
		if (ret) {
			snprintf(why, why_len, "no WRITE completion within %d ms", timeout_ms);
			return ret;
		}
		for (int i = 0; i < got; i++) {
			if (wc[i].wr_id != ID_WRITE)
				continue;
			ret = rk_wc_check(&wc[i], "RDMA WRITE");
			if (ret) {
				snprintf(why, why_len, "RDMA WRITE failed: %s (%s)",
					 rk_wc_status_name(wc[i].status),
					 rk_wc_status_hint(wc[i].status));
				return ret;
			}
			done++;
		}
	}
	*mbps_p = (double)l->port->size * iters / (now_us() - t0);
	return 0;
}
