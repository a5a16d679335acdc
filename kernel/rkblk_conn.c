// SPDX-License-Identifier: GPL-2.0-only
/*
 * rkblk: the controller's connections. One RC QP and CQ per queue over
 * RDMA CM (create_ctrl), the region message each queue receives
 * (recv_remote_memory_region), the state machine after a failure (error
 * recovery, reconnect every reconnect_delay with the same session until
 * loss_timeout) and the IB client that frees everything of a device that
 * goes away. The model is the kernel's NVMe-oF host, drivers/nvme/host/rdma.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include "rkblk.h"

static const char *const rkblk_state_names[] = {
	[RKBLK_CONNECTING] = "connecting",
	[RKBLK_LIVE] = "live",
	[RKBLK_RECONNECTING] = "reconnecting",
	[RKBLK_DEAD] = "dead",
	[RKBLK_DELETING] = "deleting",
};

const char *rkblk_state_name(enum rkblk_state state)
{
	return rkblk_state_names[state];
}

enum rkblk_state rkblk_get_state(struct rkblk_ctrl *ctrl)
{
	return READ_ONCE(ctrl->state);
}

/* Moves to @to if the state is @from; true if it did. */
bool rkblk_change_state(struct rkblk_ctrl *ctrl, enum rkblk_state from,
			enum rkblk_state to)
{
	unsigned long flags;
	bool changed = false;

	spin_lock_irqsave(&ctrl->state_lock, flags);
	if (ctrl->state == from) {
		WRITE_ONCE(ctrl->state, to);
		changed = true;
	}
	spin_unlock_irqrestore(&ctrl->state_lock, flags);
	return changed;
}

/* Dead unless being deleted: every pending and later request fails. */
static void rkblk_set_dead(struct rkblk_ctrl *ctrl, const char *why)
{
	unsigned long flags;

	spin_lock_irqsave(&ctrl->state_lock, flags);
	if (ctrl->state != RKBLK_DELETING)
		WRITE_ONCE(ctrl->state, RKBLK_DEAD);
	spin_unlock_irqrestore(&ctrl->state_lock, flags);
	pr_err("%s: dead (%s): every request fails with an I/O error\n",
	       ctrl->name, why);
}

/*
 * A queue's connection failed (disconnect, QP error, failed completion,
 * timeout). Safe from any context: a live controller moves to
 * reconnecting and the rest happens in rkblk_err_work.
 */
void rkblk_error_recovery(struct rkblk_ctrl *ctrl)
{
	if (!rkblk_change_state(ctrl, RKBLK_LIVE, RKBLK_RECONNECTING))
		return;
	ctrl->loss_deadline = jiffies + ctrl->loss_timeout * HZ;
	pr_warn("%s: connection to %s failed: reconnecting every %d s for %d s\n",
		ctrl->name, ctrl->server, ctrl->reconnect_delay,
		ctrl->loss_timeout);
	queue_work(rkblk_wq, &ctrl->err_work);
}

static void rkblk_queue_failed(struct rkblk_queue *q)
{
	if (test_bit(RKBLK_Q_LIVE, &q->flags))
		rkblk_error_recovery(q->ctrl);
}

/* ---- recv_remote_memory_region ---------------------------------------- */

/* Completion of the region receive: unmap, keep a copy, wake the waiter. */
static void rkblk_region_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rkblk_queue *q = container_of(wc->wr_cqe, struct rkblk_queue,
					     recv_cqe);

	ib_dma_unmap_single(q->ctrl->ibdev, q->rbuf_dma, sizeof(*q->rbuf),
			    DMA_FROM_DEVICE);
	q->rbuf_mapped = false;
	if (wc->status == IB_WC_SUCCESS) {
		q->region_len = wc->byte_len;
		memcpy(&q->region, q->rbuf, sizeof(q->region));
		q->region_status = 0;
	} else {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn("%s: queue %d: region receive failed: %s\n",
				q->ctrl->name, q->idx,
				ib_wc_status_msg(wc->status));
		q->region_status = -EIO;
	}
	complete_all(&q->region_done);
}

/*
 * Step one of the notes' recv_remote_memory_region: post the receive for
 * the server's region SEND. Called before connecting, so the server never
 * depends on RNR retry.
 */
static int recv_remote_memory_region(struct rkblk_queue *q)
{
	struct ib_device *dev = q->ctrl->ibdev;
	struct ib_recv_wr wr = {};
	struct ib_sge sge;
	int ret;

	q->rbuf = kmem_cache_zalloc(rkblk_region_cache, GFP_NOIO);
	if (!q->rbuf)
		return -ENOMEM;
	q->rbuf_dma = ib_dma_map_single(dev, q->rbuf, sizeof(*q->rbuf),
					DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, q->rbuf_dma))
		return -ENOMEM;
	q->rbuf_mapped = true;
	reinit_completion(&q->region_done);
	q->region_status = -ETIMEDOUT;
	q->region_len = 0;

	sge.addr = q->rbuf_dma;
	sge.length = sizeof(*q->rbuf);
	sge.lkey = q->ctrl->pd->local_dma_lkey;
	q->recv_cqe.done = rkblk_region_done;
	wr.wr_cqe = &q->recv_cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = ib_post_recv(q->qp, &wr, NULL);
	if (ret) {
		/* Nothing posted: undo the mapping here. */
		ib_dma_unmap_single(dev, q->rbuf_dma, sizeof(*q->rbuf),
				    DMA_FROM_DEVICE);
		q->rbuf_mapped = false;
	}
	return ret;
}

static void rkblk_copy_text(char *dst, size_t dstlen, const char *src,
			    size_t srclen)
{
	size_t i, n = min(dstlen - 1, srclen);

	for (i = 0; i < n && src[i]; i++)
		dst[i] = isprint(src[i]) ? src[i] : '?';
	dst[i] = '\0';
}

/*
 * The server's ERROR message, a REJ's private data or the SEND in place of
 * the region: its code into q->reject_code and the reason into
 * q->reject_text. False when @rej is not one.
 */
static bool rkblk_reject_msg(struct rkblk_queue *q,
			     const struct rk_mem_reject *rej, u32 len,
			     const char *when)
{
	char text[RK_MEM_REJECT_TEXT + 1];
	int code;

	if (!rej || len < RK_MEM_REJECT_LEN ||
	    be32_to_cpu(rej->magic) != RK_MEM_REJECT_MAGIC ||
	    be16_to_cpu(rej->type) != RK_MEM_REJECT_TYPE)
		return false;
	code = (s32)be32_to_cpu(rej->code);
	if (code >= 0 || code < -MAX_ERRNO)
		code = -ECONNREFUSED;
	rkblk_copy_text(text, sizeof(text), rej->text, RK_MEM_REJECT_TEXT);
	snprintf(q->reject_text, sizeof(q->reject_text),
		 "rejected by %s%s: %s (%d)", q->ctrl->server, when, text, code);
	q->reject_code = code;
	return true;
}

/*
 * Step two: wait for the region SEND and check every field of it against
 * what this queue asked for.
 */
static int rkblk_check_region(struct rkblk_queue *q, char *err, size_t len)
{
	struct rkblk_ctrl *ctrl = q->ctrl;
	const struct rk_mem_region *r = &q->region.region;
	u64 session, addr, length;
	u32 flags, want;

	if (!wait_for_completion_timeout(&q->region_done,
				msecs_to_jiffies(RKBLK_REGION_TIMEOUT_MS))) {
		snprintf(err, len, "no region message from %s within %d ms",
			 ctrl->server, RKBLK_REGION_TIMEOUT_MS);
		return -ETIMEDOUT;
	}
	if (q->region_status) {
		snprintf(err, len, "region message: receive failed");
		return q->region_status;
	}
	/* The server could not make the region after accepting (step 4). */
	if (rkblk_reject_msg(q, &q->region.reject, q->region_len,
			     " after accepting")) {
		snprintf(err, len, "%s", q->reject_text);
		return q->reject_code;
	}
	if (q->region_len != RK_MEM_REGION_LEN) {
		snprintf(err, len, "region message: %u bytes, expected %u",
			 q->region_len, RK_MEM_REGION_LEN);
		return -EBADMSG;
	}
	session = be64_to_cpu(r->session);
	addr = be64_to_cpu(r->addr);
	length = be64_to_cpu(r->length);
	flags = be32_to_cpu(r->flags);
	want = ctrl->session ? RK_MEM_REGION_RESUMED : RK_MEM_REGION_NEW;
	if (be32_to_cpu(r->magic) != RK_MEM_MAGIC)
		snprintf(err, len, "region message: bad magic 0x%08x",
			 be32_to_cpu(r->magic));
	else if (be16_to_cpu(r->version) != RK_MEM_VERSION)
		snprintf(err, len, "region message: version %u, expected %u",
			 be16_to_cpu(r->version), RK_MEM_VERSION);
	else if (be16_to_cpu(r->queue) != q->idx)
		snprintf(err, len, "region message: queue %u, expected %d",
			 be16_to_cpu(r->queue), q->idx);
	else if (!session || (ctrl->session && session != ctrl->session))
		snprintf(err, len, "region message: session %016llx, expected %016llx",
			 session, ctrl->session);
	else if (length != ctrl->size)
		snprintf(err, len, "region message: length %llu, expected %llu",
			 length, ctrl->size);
	else if (addr + length < addr)
		snprintf(err, len, "region message: address 0x%llx + length wraps",
			 addr);
	else if (flags != want)
		snprintf(err, len, "region message: flags 0x%x, expected 0x%x",
			 flags, want);
	else
		goto good;
	return -EBADMSG;
good:
	q->raddr = addr;
	q->rkey = be32_to_cpu(r->rkey);
	ctrl->session = session;
	return 0;
}

/* One probe READ done (or never posted): keep the first failure; the last
 * one wakes the waiter.
 */
static void rkblk_probe_put(struct rkblk_queue *q, enum ib_wc_status status)
{
	if (status != IB_WC_SUCCESS && q->probe_status == IB_WC_SUCCESS)
		q->probe_status = status;
	if (atomic_dec_and_test(&q->probe_left))
		complete_all(&q->probe_done);
}

static void rkblk_probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rkblk_probe *p = container_of(wc->wr_cqe, struct rkblk_probe,
					     cqe);
	struct rkblk_queue *q = p->queue;

	rdma_rw_ctx_destroy(&p->rw, q->qp, q->cm_id->port_num, &p->sg, 1,
			    DMA_FROM_DEVICE);
	rkblk_probe_put(q, wc->status);
}

/* Posts probe READ @i: 8 bytes at @raddr into rbuf + 8 * @i. */
static int rkblk_probe_post(struct rkblk_queue *q, int i, u64 raddr)
{
	struct rkblk_probe *p = &q->probe[i];
	u32 port = q->cm_id->port_num;
	int ret;

	p->queue = q;
	p->cqe.done = rkblk_probe_done;
	sg_init_one(&p->sg, (u8 *)q->rbuf + 8 * i, 8);
	ret = rdma_rw_ctx_init(&p->rw, q->qp, port, &p->sg, 1, 0, raddr,
			       q->rkey, DMA_FROM_DEVICE);
	if (ret < 0)
		return ret;
	ret = rdma_rw_ctx_post(&p->rw, q->qp, port, &p->cqe, NULL);
	if (ret)
		rdma_rw_ctx_destroy(&p->rw, q->qp, port, &p->sg, 1,
				    DMA_FROM_DEVICE);
	return ret;
}

/*
 * Step three: the region's first and last 8 bytes read back with the rkey
 * the server gave. A server whose rkey is wrong, or whose region is smaller
 * than its length, is refused now: every request would fail later.
 * On a timeout the reads still hold rbuf: freeing the queue drains them.
 */
static int rkblk_probe_region(struct rkblk_queue *q, char *err, size_t len)
{
	struct rkblk_ctrl *ctrl = q->ctrl;
	int i, ret = 0;

	q->probe_status = IB_WC_SUCCESS;
	atomic_set(&q->probe_left, RKBLK_PROBES);
	reinit_completion(&q->probe_done);
	for (i = 0; i < RKBLK_PROBES; i++) {
		if (!ret)
			ret = rkblk_probe_post(q, i, q->raddr +
					       (i ? ctrl->size - 8 : 0));
		if (ret)	/* not posted: it will not complete */
			rkblk_probe_put(q, IB_WC_GENERAL_ERR);
	}
	if (!wait_for_completion_timeout(&q->probe_done,
					 msecs_to_jiffies(RKBLK_STEP_TIMEOUT_MS))) {
		snprintf(err, len, "reading the region at %s: no answer within %d ms",
			 ctrl->server, RKBLK_STEP_TIMEOUT_MS);
		return -ETIMEDOUT;
	}
	if (ret) {
		snprintf(err, len, "queue %d: posting the region probe failed (%d)",
			 q->idx, ret);
		return ret;
	}
	if (q->probe_status == IB_WC_SUCCESS)
		return 0;
	snprintf(err, len,
		 "the region from %s fails an RDMA READ of its first or last bytes: %s (a wrong rkey, or a region smaller than its length)",
		 ctrl->server, ib_wc_status_msg(q->probe_status));
	return -EREMOTEIO;
}

/* Completion of a request SEND: unmap; a failure leaves the region unsent. */
static void rkblk_hello_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rkblk_hello *h = container_of(wc->wr_cqe, struct rkblk_hello,
					     cqe);
	struct rkblk_queue *q = h->queue;

	ib_dma_unmap_single(q->ctrl->ibdev, h->dma, sizeof(q->req_msg),
			    DMA_TO_DEVICE);
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn("%s: queue %d: sending the request to the server failed: %s\n",
			q->ctrl->name, q->idx, ib_wc_status_msg(wc->status));
}

/*
 * The client SENDs first (RK_MEM_REQ_SENDS_FIRST, memproto.h step 4): the
 * server answers with the region only after this. iWARP needs it: MPA lets
 * the responder send only after the initiator's first frame, and siw fails
 * a connect whose MPA reply has data behind it when it is read.
 */
static int rkblk_send_hello(struct rkblk_queue *q, int i)
{
	struct ib_device *dev = q->ctrl->ibdev;
	struct rkblk_hello *h = &q->hello[i];
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	int ret;

	h->queue = q;
	h->dma = ib_dma_map_single(dev, &q->req_msg, sizeof(q->req_msg),
				   DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, h->dma))
		return -ENOMEM;
	sge.addr = h->dma;
	sge.length = sizeof(q->req_msg);
	sge.lkey = q->ctrl->pd->local_dma_lkey;
	h->cqe.done = rkblk_hello_done;
	wr.wr_cqe = &h->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	ret = ib_post_send(q->qp, &wr, NULL);
	if (ret)
		ib_dma_unmap_single(dev, h->dma, sizeof(q->req_msg),
				    DMA_TO_DEVICE);
	return ret;
}

/* ---- RDMA CM ----------------------------------------------------------- */

/* Reports the outcome of the connection step a thread waits for. */
static void rkblk_cm_step(struct rkblk_queue *q, int error)
{
	q->cm_error = error;
	complete(&q->cm_done);
}

static void rkblk_cm_rejected(struct rkblk_queue *q, struct rdma_cm_event *ev)
{
	const struct rk_mem_reject *rej;
	u8 len = 0;

	rej = rdma_consumer_reject_data(q->cm_id, ev, &len);
	/*
	 * siw reports an MPA reject as -ECONNRESET, which rdma_cm does not
	 * count as the consumer's; its private data still carries the reason.
	 */
	if (!rej && rdma_protocol_iwarp(q->cm_id->device, q->cm_id->port_num)) {
		rej = ev->param.conn.private_data;
		len = ev->param.conn.private_data_len;
	}
	if (!rkblk_reject_msg(q, rej, len, "")) {
		snprintf(q->reject_text, sizeof(q->reject_text),
			 "rejected by %s: %s", q->ctrl->server,
			 rdma_reject_msg(q->cm_id, ev->status));
		q->reject_code = -ECONNREFUSED;
	}
	rkblk_cm_step(q, q->reject_code);
}

/* Route known: connect (as nvme-rdma does, from the handler). */
static int rkblk_route_resolved(struct rkblk_queue *q)
{
	struct rdma_conn_param *p = &q->conn_param;
	struct ib_device *dev = q->cm_id->device;
	struct rdma_route *route = &q->cm_id->route;
	unsigned int noio = memalloc_noio_save();
	int ret;

	/*
	 * RDMA CM over RoCE gives the server this path's MTU whatever its own
	 * port carries; a server that refused it (-EMSGSIZE) set a cap.
	 */
	if (route->path_rec && q->ctrl->mtu_cap &&
	    route->path_rec->mtu > q->ctrl->mtu_cap)
		route->path_rec->mtu = q->ctrl->mtu_cap;
	q->path_mtu = route->path_rec ? route->path_rec->mtu : 0;
	memset(p, 0, sizeof(*p));
	p->private_data = &q->req_msg;
	p->private_data_len = sizeof(q->req_msg);
	p->initiator_depth = min(16, dev->attrs.max_qp_init_rd_atom);
	p->responder_resources = 0;
	p->retry_count = 6;	/* rxe takes 7 as "forever" */
	p->rnr_retry_count = 6;
	p->flow_control = 1;
	ret = rdma_connect_locked(q->cm_id, p);
	memalloc_noio_restore(noio);
	return ret;
}

static int rkblk_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rkblk_queue *q = id->context;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		rkblk_cm_step(q, 0);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = rkblk_route_resolved(q);
		if (ret)
			rkblk_cm_step(q, ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		q->established = true;
		rkblk_cm_step(q, 0);
		break;
	case RDMA_CM_EVENT_REJECTED:
		rkblk_cm_rejected(q, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		rkblk_cm_step(q, ev->status < 0 ? ev->status : -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		rkblk_cm_step(q, ev->status < 0 ? ev->status : -ENETUNREACH);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		rkblk_cm_step(q, -ETIMEDOUT);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		rkblk_cm_step(q, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		rkblk_queue_failed(q);
		rkblk_cm_step(q, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * rkblk_remove_one (ib_client.remove) runs before rdma_cm's own
		 * remove and frees this id; never destroy it here.
		 */
		break;
	default:
		break;
	}
	return 0;
}

static int rkblk_wait_cm(struct rkblk_queue *q, unsigned int ms)
{
	if (!wait_for_completion_timeout(&q->cm_done, msecs_to_jiffies(ms)))
		return -ETIMEDOUT;
	return q->cm_error;
}

static void rkblk_qp_event(struct ib_event *ev, void *context)
{
	struct rkblk_queue *q = context;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		rdma_notify(q->cm_id, ev->event);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		pr_warn("%s: queue %d: %s\n", q->ctrl->name, q->idx,
			ib_event_msg(ev->event));
		rkblk_queue_failed(q);
		break;
	default:
		break;
	}
}

/* ---- queues ------------------------------------------------------------ */

/* The controller's PD, from the first queue's device. */
static int rkblk_ctrl_ib(struct rkblk_ctrl *ctrl, struct ib_device *dev,
			 u32 port, char *err, size_t len)
{
	if (ctrl->pd) {
		if (dev == ctrl->ibdev)
			return 0;
		snprintf(err, len, "queues resolved to two RDMA devices (%s, %s)",
			 dev_name(&ctrl->ibdev->dev), dev_name(&dev->dev));
		return -EXDEV;
	}
	ctrl->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(ctrl->pd)) {
		snprintf(err, len, "%s: allocating a PD failed (%ld)",
			 dev_name(&dev->dev), PTR_ERR(ctrl->pd));
		ctrl->pd = NULL;
		return -ENOMEM;
	}
	ctrl->ibdev = dev;
	ctrl->max_segs = RKBLK_MAX_SEGS;
	ctrl->flush_writes = rdma_protocol_iwarp(dev, port);
	return 0;
}

/* The queue's CQ (from the device's pool, IB_POLL_SOFTIRQ) and QP. */
static int rkblk_create_queue_ib(struct rkblk_queue *q, char *err, size_t len)
{
	struct rkblk_ctrl *ctrl = q->ctrl;
	struct ib_qp_init_attr attr = {};
	struct ib_device *dev;
	u32 port = q->cm_id->port_num;
	int sge, rd_sge, ctxs, wrs, total, ret;
	bool mr;

	ret = rkblk_ctrl_ib(ctrl, q->cm_id->device, port, err, len);
	if (ret)
		return ret;
	dev = ctrl->ibdev;
	/*
	 * rdma_rw posts a request as RDMA READs or WRITEs of at most rd_sge
	 * SGEs each or, where the device needs MRs (iWARP READ sinks, as
	 * rdma_rw_can_use_mr() decides), through rdma_rw_mr_factor MRs per
	 * request: rdma_rw_init_qp then adds a REG_MR and a LOCAL_INV per MR
	 * to the send queue. One rdma_rw_ctx per request and probe, two per
	 * request with flush_writes.
	 */
	mr = rdma_protocol_iwarp(dev, port) || dev->attrs.max_sgl_rd;
	sge = min_t(int, dev->attrs.max_send_sge, ctrl->max_segs);
	rd_sge = max(1, min_t(int, sge, dev->attrs.max_sge_rd));
	wrs = ctrl->queue_depth * DIV_ROUND_UP(ctrl->max_segs, rd_sge) +
	      RKBLK_PROBES + RK_MEM_REQ_SENDS;
	ctxs = ctrl->queue_depth * (ctrl->flush_writes ? 2 : 1) + RKBLK_PROBES;
	if (mr)
		ctxs *= rdma_rw_mr_factor(dev, port, RKBLK_MAX_PAGES);
	total = wrs + (mr ? 3 : 1) * ctxs;
	if (sge < 1 || total > dev->attrs.max_qp_wr) {
		snprintf(err, len, "%s: queue_depth %d too deep (%d work requests, max_qp_wr %d)",
			 dev_name(&dev->dev), ctrl->queue_depth, total,
			 dev->attrs.max_qp_wr);
		return -EINVAL;
	}
	/*
	 * Every send WR may complete (flushed), and the region receive and
	 * ib_drain_qp's two.
	 */
	q->cq_size = total + 3;
	q->cq = ib_cq_pool_get(dev, q->cq_size, q->idx, IB_POLL_SOFTIRQ);
	if (IS_ERR(q->cq)) {
		ret = PTR_ERR(q->cq);
		q->cq = NULL;
		snprintf(err, len, "queue %d: no CQ (%d)", q->idx, ret);
		return ret;
	}
	attr.event_handler = rkblk_qp_event;
	attr.qp_context = q;
	attr.send_cq = q->cq;
	attr.recv_cq = q->cq;
	attr.cap.max_send_wr = wrs;
	attr.cap.max_recv_wr = 2;
	attr.cap.max_send_sge = sge;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_rdma_ctxs = ctxs;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.port_num = port;
	ret = rdma_create_qp(q->cm_id, ctrl->pd, &attr);
	if (ret) {
		snprintf(err, len, "queue %d: creating the QP failed (%d)",
			 q->idx, ret);
		return ret;
	}
	q->qp = q->cm_id->qp;
	ret = recv_remote_memory_region(q);
	if (ret)
		snprintf(err, len, "queue %d: posting the region receive failed (%d)",
			 q->idx, ret);
	return ret;
}

/*
 * Frees one queue's verbs objects. After ib_drain_qp no completion of this
 * QP is left to run, so nothing it points at is used afterwards.
 */
static void rkblk_free_queue(struct rkblk_queue *q)
{
	clear_bit(RKBLK_Q_LIVE, &q->flags);
	if (q->qp) {
		if (q->established) {
			rdma_disconnect(q->cm_id);
			ib_drain_qp(q->qp);
			rkblk_cancel_queue(q);
		} else if (q->rbuf_mapped) {
			ib_drain_rq(q->qp);
		}
		rdma_destroy_qp(q->cm_id);
		q->qp = NULL;
	}
	if (q->rbuf_mapped) {
		ib_dma_unmap_single(q->ctrl->ibdev, q->rbuf_dma,
				    sizeof(*q->rbuf), DMA_FROM_DEVICE);
		q->rbuf_mapped = false;
	}
	if (q->cq) {
		ib_cq_pool_put(q->cq, q->cq_size);
		q->cq = NULL;
	}
	if (q->cm_id) {
		rdma_destroy_id(q->cm_id);
		q->cm_id = NULL;
	}
	if (q->rbuf) {
		kmem_cache_free(rkblk_region_cache, q->rbuf);
		q->rbuf = NULL;
	}
	q->established = false;
}

/*
 * Stops I/O on every queue and frees all verbs objects of the controller.
 * Called with ctrl->lock held. The disk's queue is quiesced first, so no
 * rkblk_queue_rq runs on a queue being freed; it stays quiesced (the caller
 * restarts it to re-issue or to fail the requests).
 */
void rkblk_stop_ctrl(struct rkblk_ctrl *ctrl)
{
	int i;

	for (i = 0; i < ctrl->nr_queues; i++)
		clear_bit(RKBLK_Q_LIVE, &ctrl->queues[i].flags);
	rkblk_quiesce_io(ctrl);
	for (i = 0; i < ctrl->nr_queues; i++)
		rkblk_free_queue(&ctrl->queues[i]);
	if (ctrl->pd) {
		ib_dealloc_pd(ctrl->pd);
		ctrl->pd = NULL;
	}
	ctrl->ibdev = NULL;
}

/*
 * A connect that failed without a reject. On iWARP the connection is TCP:
 * no listener answers the SYN with a reset (-ECONNREFUSED), and an MPA
 * reply that does not come within siw's 10 s resets it (-ECONNRESET).
 */
static const char *rkblk_connect_err(int ret)
{
	switch (ret) {
	case -ETIMEDOUT:
		return "timed out";
	case -ECONNREFUSED:
		return "refused (nothing listens there)";
	case -ECONNRESET:
		return "reset";
	default:
		return "failed";
	}
}

/* Resolve, create the QP with the receive posted, connect, get the region. */
static int rkblk_connect_queue(struct rkblk_queue *q, char *err, size_t len)
{
	struct rkblk_ctrl *ctrl = q->ctrl;
	struct rk_mem_req *m = &q->req_msg;
	int ret;

	memset(m, 0, sizeof(*m));
	m->magic = cpu_to_be32(RK_MEM_MAGIC);
	m->version = cpu_to_be16(RK_MEM_VERSION);
	m->queue = cpu_to_be16(q->idx);
	m->queues = cpu_to_be16(ctrl->nr_queues);
	m->session = cpu_to_be64(ctrl->session);
	m->size = cpu_to_be64(ctrl->size);
	m->flags = cpu_to_be16(RK_MEM_REQ_SENDS_FIRST);
	q->reject_code = 0;
	q->established = false;

	q->cm_id = rdma_create_id(&init_net, rkblk_cm_handler, q, RDMA_PS_TCP,
				  IB_QPT_RC);
	if (IS_ERR(q->cm_id)) {
		ret = PTR_ERR(q->cm_id);
		q->cm_id = NULL;
		snprintf(err, len, "queue %d: rdma_create_id failed (%d)",
			 q->idx, ret);
		return ret;
	}
	/* As nvme-rdma's tos=: the class of every packet, both ways (the
	 * server's QP takes the class of the connect request).
	 */
	if (ctrl->tos >= 0)
		rdma_set_service_type(q->cm_id, ctrl->tos);
	reinit_completion(&q->cm_done);
	ret = rdma_resolve_addr(q->cm_id, NULL, (struct sockaddr *)&ctrl->addr,
				RKBLK_STEP_TIMEOUT_MS);
	if (!ret)
		ret = rkblk_wait_cm(q, RKBLK_STEP_TIMEOUT_MS + 1000);
	if (ret) {
		snprintf(err, len, "resolving %s: %s (%d)", ctrl->server,
			 ret == -ETIMEDOUT ? "timed out" : "no route to an RDMA device",
			 ret);
		return ret;
	}
	ret = rkblk_create_queue_ib(q, err, len);
	if (ret)
		return ret;
	reinit_completion(&q->cm_done);
	ret = rdma_resolve_route(q->cm_id, RKBLK_STEP_TIMEOUT_MS);
	if (!ret) /* the handler connects once the route is resolved */
		ret = rkblk_wait_cm(q, RKBLK_STEP_TIMEOUT_MS +
				    RKBLK_CONNECT_TIMEOUT_MS);
	if (ret) {
		if (q->reject_code)
			snprintf(err, len, "%s", q->reject_text);
		else
			snprintf(err, len, "queue %d: connecting to %s: %s (%d)",
				 q->idx, ctrl->server, rkblk_connect_err(ret),
				 ret);
		return ret;
	}
	ret = rkblk_send_hello(q, 0);
	/*
	 * siw leaves a SEND that reaches the server between its MPA reply and
	 * its QP taking the socket over unread until more data comes: a
	 * second request SEND is that data (memproto.h step 4).
	 */
	if (!ret && !wait_for_completion_timeout(&q->region_done,
				msecs_to_jiffies(RKBLK_HELLO_AGAIN_MS)))
		ret = rkblk_send_hello(q, 1);
	if (ret) {
		snprintf(err, len, "queue %d: posting the request SEND failed (%d)",
			 q->idx, ret);
		return ret;
	}
	ret = rkblk_check_region(q, err, len);
	if (!ret)
		ret = rkblk_probe_region(q, err, len);
	return ret;
}

/*
 * A server whose port MTU is below the path's refuses the REQ with
 * -EMSGSIZE: true when there is a smaller MTU to ask for next (kept for
 * every later connect of this disk).
 */
static bool rkblk_lower_mtu(struct rkblk_queue *q)
{
	if (q->reject_code != -EMSGSIZE || q->path_mtu <= IB_MTU_256)
		return false;
	q->ctrl->mtu_cap = q->path_mtu - 1;
	pr_info("%s refused path MTU %d (above its port's): asking for %d\n",
		q->ctrl->server, ib_mtu_enum_to_int(q->path_mtu),
		ib_mtu_enum_to_int(q->ctrl->mtu_cap));
	return true;
}

/*
 * Connects every queue, queue 0 first (it makes or resumes the session);
 * on failure the caller frees what was made (rkblk_stop_ctrl).
 */
static int rkblk_connect_queues(struct rkblk_ctrl *ctrl, char *err, size_t len)
{
	int i, ret;

	ctrl->last_reject = 0;
	for (i = 0; i < ctrl->nr_queues; i++) {
		while ((ret = rkblk_connect_queue(&ctrl->queues[i], err, len)) &&
		       rkblk_lower_mtu(&ctrl->queues[i]))
			rkblk_free_queue(&ctrl->queues[i]);
		if (ret) {
			ctrl->last_reject = ctrl->queues[i].reject_code;
			return ret;
		}
	}
	for (i = 0; i < ctrl->nr_queues; i++)
		set_bit(RKBLK_Q_LIVE, &ctrl->queues[i].flags);
	return 0;
}

/*
 * The notes' create_ctrl: a controller with one RC QP + CQ per queue, each
 * connected and told the region. Called with ctrl->lock held.
 */
int create_ctrl(struct rkblk_ctrl *ctrl, char *err, size_t len)
{
	unsigned int noio = memalloc_noio_save();
	int ret;

	ret = rkblk_connect_queues(ctrl, err, len);
	if (ret)
		rkblk_stop_ctrl(ctrl);
	memalloc_noio_restore(noio);
	return ret;
}

/* ---- error recovery and reconnect --------------------------------------- */

static void rkblk_err_work(struct work_struct *work)
{
	struct rkblk_ctrl *ctrl = container_of(work, struct rkblk_ctrl,
					       err_work);

	mutex_lock(&ctrl->lock);
	rkblk_stop_ctrl(ctrl);	/* in-flight requests are requeued or failed */
	switch (rkblk_get_state(ctrl)) {
	case RKBLK_RECONNECTING:
		if (ctrl->loss_timeout == 0) {
			rkblk_set_dead(ctrl, "loss_timeout is 0");
			rkblk_restart_io(ctrl);
			break;
		}
		queue_delayed_work(rkblk_wq, &ctrl->reconnect_work,
				   ctrl->reconnect_delay * HZ);
		break;
	case RKBLK_CONNECTING:
	case RKBLK_LIVE:
		break;
	case RKBLK_DEAD:
	case RKBLK_DELETING:
		rkblk_restart_io(ctrl);	/* fail what waits */
		break;
	}
	mutex_unlock(&ctrl->lock);
}

static void rkblk_reconnect_failed(struct rkblk_ctrl *ctrl, int ret,
				   const char *err)
{
	long left = (long)(ctrl->loss_deadline - jiffies);

	pr_warn("%s: reconnect failed: %s\n", ctrl->name, err);
	if (ret == -ENOENT && ctrl->last_reject == -ENOENT) {
		rkblk_set_dead(ctrl, "the server lost the session");
		rkblk_restart_io(ctrl);
	} else if (left <= 0) {
		rkblk_set_dead(ctrl, "loss_timeout passed");
		rkblk_restart_io(ctrl);
	} else {
		queue_delayed_work(rkblk_wq, &ctrl->reconnect_work,
				   min_t(long, left, ctrl->reconnect_delay * HZ));
	}
}

static void rkblk_reconnect_work(struct work_struct *work)
{
	struct rkblk_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct rkblk_ctrl,
					       reconnect_work);
	char err[RKBLK_ERR_LEN];
	unsigned int noio;
	int ret;

	mutex_lock(&ctrl->lock);
	if (rkblk_get_state(ctrl) != RKBLK_RECONNECTING)
		goto out;
	noio = memalloc_noio_save();
	ret = rkblk_connect_queues(ctrl, err, sizeof(err));
	if (ret)
		rkblk_stop_ctrl(ctrl);
	memalloc_noio_restore(noio);
	if (ret) {
		rkblk_reconnect_failed(ctrl, ret, err);
		goto out;
	}
	if (!rkblk_change_state(ctrl, RKBLK_RECONNECTING, RKBLK_LIVE)) {
		rkblk_stop_ctrl(ctrl);	/* removed or deleted meanwhile */
		rkblk_restart_io(ctrl);
		goto out;
	}
	atomic64_inc(&ctrl->reconnects);
	pr_info("%s: reconnected to %s, session %016llx\n", ctrl->name,
		ctrl->server, ctrl->session);
	rkblk_restart_io(ctrl);	/* re-issue the requeued requests */
out:
	mutex_unlock(&ctrl->lock);
}

void rkblk_ctrl_init_work(struct rkblk_ctrl *ctrl)
{
	INIT_WORK(&ctrl->err_work, rkblk_err_work);
	INIT_DELAYED_WORK(&ctrl->reconnect_work, rkblk_reconnect_work);
}

/* ---- IB client: a device going away --------------------------------------- */

void rkblk_ctrl_device_removed(struct rkblk_ctrl *ctrl, struct ib_device *dev)
{
	mutex_lock(&ctrl->lock);
	if (ctrl->ibdev == dev) {
		pr_warn("%s: RDMA device %s removed\n", ctrl->name,
			dev_name(&dev->dev));
		rkblk_set_dead(ctrl, "RDMA device removed");
		rkblk_stop_ctrl(ctrl);
		rkblk_restart_io(ctrl);
	}
	mutex_unlock(&ctrl->lock);
}

static int rkblk_add_one(struct ib_device *dev)
{
	return 0;
}

/*
 * Runs before rdma_cm's own remove (clients are removed in reverse order of
 * registration), so every cm_id, QP, CQ and PD on @dev is freed here.
 */
static void rkblk_remove_one(struct ib_device *dev, void *client_data)
{
	rkblk_device_removed(dev);
}

static struct ib_client rkblk_ib_client = {
	.name = "rkblk",
	.add = rkblk_add_one,
	.remove = rkblk_remove_one,
};

int rkblk_client_register(void)
{
	return ib_register_client(&rkblk_ib_client);
}

void rkblk_client_unregister(void)
{
	ib_unregister_client(&rkblk_ib_client);
}
