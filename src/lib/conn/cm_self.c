/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Two RC QPs on one device connected to each other through RDMA CM, to the
 * device's own address: how a QP pair comes up on iWARP, whose QPs connect
 * only through RDMA CM, inside one process (loopback, qp-states). */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <rdmakit/log.h>
#include <rdmakit/qp.h>

#include "conn/cm_int.h"

int rk_cm_self_open(const char *device, uint8_t port_num, int timeout_ms, struct rk_cm_self *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = rk_cm_listen_on_device(device, port_num, s->addr, sizeof(s->addr), &s->port,
				     &s->listener);
	if (ret)
		return ret;
	ret = rk_cm_self_resolve(s, device, timeout_ms, &s->active);
	if (ret)
		return ret;
	s->dev = s->active->dev;
	return 0;
}

int rk_cm_self_resolve(const struct rk_cm_self *s, const char *device, int timeout_ms,
		       struct rk_cm **cm_p)
{
	struct rk_cm *cm;
	int ret;

	ret = rk_cm_resolve(s->addr, s->port, timeout_ms, &cm);
	if (ret)
		return ret;
	if (strcmp(cm->dev->info.name, device)) {
		rk_error("%s resolves to %s, not %s", s->addr, cm->dev->info.name, device);
		rk_cm_destroy(cm);
		return -EXDEV;
	}
	*cm_p = cm;
	return 0;
}

/* The passive side: the request, its QP, the accept. In a thread of its own,
 * as the active side's connect and this accept each wait for the other. */
struct self_accept {
	struct rk_cm *listener;
	struct ibv_pd *pd;
	struct rk_cm_self_side *b;
	int timeout_ms;
	int ret;
};

static void *self_accept(void *arg)
{
	struct self_accept *t = arg;
	struct rk_cm_self_side *b = t->b;

	t->ret = rk_cm_get_request(t->listener, t->timeout_ms, &b->cm);
	if (!t->ret)
		t->ret = rk_cm_create_qp(b->cm, t->pd, b->cq, b->cq, &b->qa, &b->qp);
	if (!t->ret)
		t->ret = rk_cm_accept(b->cm, b->qp, &b->mine, t->timeout_ms);
	return NULL;
}

int rk_cm_self_connect(struct rk_cm *listener, struct ibv_pd *pd, struct rk_cm_self_side *a,
		       struct rk_cm_self_side *b, int timeout_ms)
{
	struct self_accept t = {.listener = listener, .pd = pd, .b = b, .timeout_ms = timeout_ms};
	pthread_t tid;
	int ret;

	a->qp = b->qp = NULL;
	ret = rk_cm_create_qp(a->cm, pd, a->cq, a->cq, &a->qa, &a->qp);
	if (ret)
		return ret;
	ret = -pthread_create(&tid, NULL, self_accept, &t);
	if (ret) {
		rk_error("start the accepting side of a connection to %s: %s", a->cm->peer_addr,
			 strerror(-ret));
		goto err_destroy_qps;
	}
	ret = rk_cm_connect(a->cm, a->qp, &a->mine, timeout_ms);
	pthread_join(tid, NULL);
	if (!ret)
		ret = t.ret;
	if (ret)
		goto err_destroy_qps;
	return 0;

err_destroy_qps:
	rk_qp_destroy(b->qp);
	rk_qp_destroy(a->qp);
	a->qp = b->qp = NULL;
	return ret;
}

void rk_cm_self_close(struct rk_cm_self *s)
{
	rk_cm_destroy(s->active);
	rk_cm_destroy(s->listener);
	s->active = s->listener = NULL;
	s->dev = NULL;
}
