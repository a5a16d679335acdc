// SPDX-License-Identifier: GPL-2.0-only
/*
 * rkblk: the block device. One blk-mq hardware queue per QP; each request
 * is RDMA READ (begin_read) or RDMA WRITE (write_queue_add) between its
 * pages and the session's region at the same offset, through the kernel's
 * rdma_rw API: it maps the pages, splits them into as many work requests as
 * the device's SGE limits need, and registers an MR where the device needs
 * one (iWARP: the sink of an RDMA READ must take remote writes), so the
 * same code runs on RoCE and iWARP. rdma_rw allocates (GFP_KERNEL), so the
 * queues are BLK_MQ_F_BLOCKING and the allocations run memalloc_noio.
 *
 * No volatile write cache: a write completes only once its RDMA WRITE
 * completed, i.e. the data is in the server's memory, so a flush has
 * nothing to wait for and the queue advertises none (blk_queue_write_cache
 * false: the block layer completes flushes itself). Write-zeroes is one
 * RDMA WRITE from the zero page; discard is not advertised (the server's
 * memory is not given back, so it would have nothing to do).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sched/mm.h>
#include "rkblk.h"

void rkblk_quiesce_io(struct rkblk_ctrl *ctrl)
{
	if (ctrl->quiesced || !ctrl->disk || ctrl->disk_deleted)
		return;
	blk_mq_quiesce_queue(ctrl->disk->queue);
	ctrl->quiesced = true;
}

/* Re-issues requeued requests (live) or lets rkblk_queue_rq fail them. */
void rkblk_restart_io(struct rkblk_ctrl *ctrl)
{
	if (!ctrl->disk || ctrl->disk_deleted)
		return;
	if (ctrl->quiesced) {
		blk_mq_unquiesce_queue(ctrl->disk->queue);
		ctrl->quiesced = false;
	}
	blk_mq_kick_requeue_list(ctrl->disk->queue);
	blk_mq_run_hw_queues(ctrl->disk->queue, true);
}

/* Frees what rkblk_rw_init made (mappings, MRs); none once done. */
static void rkblk_unmap_data(struct rkblk_queue *q, struct request *rq,
			     struct rkblk_req *req)
{
	if (req->flushing) {
		rdma_rw_ctx_destroy(&req->flush_rw, q->qp, q->cm_id->port_num,
				    &req->flush_sg, 1, DMA_FROM_DEVICE);
		req->flushing = false;
	}
	if (!req->nents)
		return;
	rdma_rw_ctx_destroy(&req->rw, q->qp, q->cm_id->port_num, req->sgl,
			    req->nents, rq_dma_dir(rq));
	req->nents = 0;
}

static void rkblk_complete_rq(struct request *rq)
{
	struct rkblk_req *req = blk_mq_rq_to_pdu(rq);

	blk_mq_end_request(rq, req->status);
}

/*
 * Completion of a READ or WRITE. A failed completion never completes a
 * request as good: while the controller can still reconnect the request is
 * requeued (and re-issued on the new connection) up to RKBLK_MAX_RETRIES
 * times, else it fails.
 */
static void rkblk_rdma_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rkblk_req *req = container_of(wc->wr_cqe, struct rkblk_req, cqe);
	struct request *rq = blk_mq_rq_from_pdu(req);
	struct rkblk_queue *q = req->queue;
	struct rkblk_ctrl *ctrl = q->ctrl;
	enum rkblk_state state;

	rkblk_unmap_data(q, rq, req);
	atomic_dec(&ctrl->inflight);
	if (likely(wc->status == IB_WC_SUCCESS)) {
		req->status = BLK_STS_OK;
		blk_mq_complete_request(rq);
		return;
	}
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("%s: queue %d: RDMA %s failed: %s\n",
				    ctrl->name, q->idx,
				    req_op(rq) == REQ_OP_READ ? "READ" : "WRITE",
				    ib_wc_status_msg(wc->status));
	if (test_bit(RKBLK_Q_LIVE, &q->flags))
		rkblk_error_recovery(ctrl);
	state = rkblk_get_state(ctrl);
	if (state == RKBLK_LIVE || state == RKBLK_RECONNECTING) {
		if (req->retries++ < RKBLK_MAX_RETRIES) {
			blk_mq_requeue_request(rq, false);
			return;
		}
		pr_warn_ratelimited("%s: queue %d: request %d failed %d times: I/O error\n",
				    ctrl->name, q->idx, rq->tag, req->retries);
	}
	atomic64_inc(&ctrl->errors);
	req->status = BLK_STS_IOERR;
	blk_mq_complete_request(rq);
}

static bool rkblk_cancel_rq(struct request *rq, void *data)
{
	struct rkblk_req *req = blk_mq_rq_to_pdu(rq);
	struct ib_wc wc = {
		.wr_cqe = &req->cqe,
		.status = IB_WC_WR_FLUSH_ERR,
	};

	if (req->queue == data && (req->nents || req->flushing))
		rkblk_rdma_done(NULL, &wc);
	return true;
}

/*
 * After ib_drain_qp, before the QP goes: a request of @q still holding its
 * rdma_rw context had no completion (siw can lose flushes of READs in
 * flight); end it as flushed, as nvme-rdma cancels its tag set.
 */
void rkblk_cancel_queue(struct rkblk_queue *q)
{
	if (q->ctrl->tag_set_allocated)
		blk_mq_tagset_busy_iter(&q->ctrl->tag_set, rkblk_cancel_rq, q);
}

/*
 * Write-zeroes: the zero page as every segment, so the request is RDMA
 * WRITEs of zeroes.
 */
static int rkblk_map_zeroes(struct rkblk_ctrl *ctrl, struct request *rq,
			    struct rkblk_req *req)
{
	unsigned int left = blk_rq_bytes(rq), n;
	int i;

	for (i = 0; left; i++) {
		if (WARN_ON_ONCE(i >= ctrl->max_segs))
			return 0;
		n = min_t(unsigned int, left, PAGE_SIZE);
		sg_set_page(&req->sgl[i], ZERO_PAGE(0), n, 0);
		left -= n;
	}
	sg_mark_end(&req->sgl[i - 1]);
	return i;
}

/*
 * flush_writes: an 8-byte READ of the region after the request's WRITEs,
 * into rbuf past the probe's bytes (what it reads is not used).
 */
static int rkblk_flush_init(struct rkblk_queue *q, struct rkblk_req *req,
			    u64 raddr)
{
	int ret;

	sg_init_one(&req->flush_sg, (u8 *)q->rbuf + 8 * RKBLK_PROBES, 8);
	ret = rdma_rw_ctx_init(&req->flush_rw, q->qp, q->cm_id->port_num,
			       &req->flush_sg, 1, 0, raddr, q->rkey,
			       DMA_FROM_DEVICE);
	if (ret > 0)
		req->flushing = true;
	return ret;
}

/*
 * The request's pages (blk_rq_map_sg) or the zero page as an rdma_rw
 * context for the region at the request's offset: the number of work
 * requests, or a negative errno.
 */
static int rkblk_rw_init(struct rkblk_queue *q, struct request *rq,
			 struct rkblk_req *req)
{
	u64 raddr = q->raddr + ((u64)blk_rq_pos(rq) << SECTOR_SHIFT);
	unsigned int noio;
	int nents, ret;

	sg_init_table(req->sgl, RKBLK_MAX_SEGS);
	if (req_op(rq) == REQ_OP_WRITE_ZEROES)
		nents = rkblk_map_zeroes(q->ctrl, rq, req);
	else
		nents = blk_rq_map_sg(rq->q, rq, req->sgl);
	if (!nents)
		return -EIO;
	noio = memalloc_noio_save();	/* swap writes out through here */
	ret = rdma_rw_ctx_init(&req->rw, q->qp, q->cm_id->port_num, req->sgl,
			       nents, 0, raddr, q->rkey, rq_dma_dir(rq));
	if (ret > 0) {
		req->nents = nents;
		if (op_is_write(req_op(rq)) && q->ctrl->flush_writes)
			ret = rkblk_flush_init(q, req, raddr);
	}
	memalloc_noio_restore(noio);
	return ret;
}

/* The notes' read path: RDMA READ from the region into the request's pages. */
static int begin_read(struct rkblk_queue *q, struct rkblk_req *req)
{
	return rdma_rw_ctx_post(&req->rw, q->qp, q->cm_id->port_num, &req->cqe,
				NULL);
}

/*
 * The notes' write path: RDMA WRITE from the request's pages to the region;
 * with flush_writes the READ after them completes the request.
 */
static int write_queue_add(struct rkblk_queue *q, struct rkblk_req *req)
{
	u32 port = q->cm_id->port_num;
	struct ib_send_wr *flush;

	if (!req->flushing)
		return rdma_rw_ctx_post(&req->rw, q->qp, port, &req->cqe, NULL);
	flush = rdma_rw_ctx_wrs(&req->flush_rw, q->qp, port, &req->cqe, NULL);
	return rdma_rw_ctx_post(&req->rw, q->qp, port, NULL, flush);
}

/* A request for a queue that is not connected. */
static blk_status_t rkblk_not_ready(struct rkblk_ctrl *ctrl)
{
	switch (rkblk_get_state(ctrl)) {
	case RKBLK_CONNECTING:
	case RKBLK_LIVE:
	case RKBLK_RECONNECTING:
		return BLK_STS_RESOURCE;	/* retried once reconnected */
	case RKBLK_DEAD:
	case RKBLK_DELETING:
		break;
	}
	atomic64_inc(&ctrl->errors);
	return BLK_STS_IOERR;
}

static blk_status_t rkblk_queue_rq(struct blk_mq_hw_ctx *hctx,
				   const struct blk_mq_queue_data *bd)
{
	struct rkblk_queue *q = hctx->driver_data;
	struct rkblk_ctrl *ctrl = q->ctrl;
	struct request *rq = bd->rq;
	struct rkblk_req *req = blk_mq_rq_to_pdu(rq);
	int ret;

	if (!test_bit(RKBLK_Q_LIVE, &q->flags))
		return rkblk_not_ready(ctrl);
	/* First issue (a requeued request keeps RQF_DONTPREP), as nvme does. */
	if (!(rq->rq_flags & RQF_DONTPREP)) {
		req->retries = 0;
		rq->rq_flags |= RQF_DONTPREP;
	}
	blk_mq_start_request(rq);
	switch (req_op(rq)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
	case REQ_OP_WRITE_ZEROES:
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	ret = rkblk_rw_init(q, rq, req);
	if (ret < 0)
		rkblk_unmap_data(q, rq, req);
	/* Out of memory or MRs: try again later. */
	if (ret == -ENOMEM || ret == -EAGAIN)
		return BLK_STS_RESOURCE;
	if (ret < 0) {
		pr_warn_ratelimited("%s: queue %d: rdma_rw_ctx_init failed (%d)\n",
				    ctrl->name, q->idx, ret);
		atomic64_inc(&ctrl->errors);
		return BLK_STS_IOERR;
	}

	atomic_inc(&ctrl->inflight);
	if (req_op(rq) == REQ_OP_READ)
		ret = begin_read(q, req);
	else
		ret = write_queue_add(q, req);
	if (unlikely(ret)) {
		/* The QP is in error: recover, retry on the next connection. */
		atomic_dec(&ctrl->inflight);
		rkblk_unmap_data(q, rq, req);
		pr_warn_ratelimited("%s: queue %d: ib_post_send failed (%d)\n",
				    ctrl->name, q->idx, ret);
		rkblk_error_recovery(ctrl);
		return BLK_STS_RESOURCE;
	}
	return BLK_STS_OK;
}

/*
 * A request took too long: never complete it as good. Start error
 * recovery; tearing the queues down flushes it (requeued, or failed when
 * the disk is being deleted or dead).
 */
static enum blk_eh_timer_return rkblk_timeout(struct request *rq)
{
	struct rkblk_req *req = blk_mq_rq_to_pdu(rq);
	struct rkblk_ctrl *ctrl = req->queue->ctrl;

	pr_warn_ratelimited("%s: queue %d: request %d timed out (%s)\n",
			    ctrl->name, req->queue->idx, rq->tag,
			    rkblk_state_name(rkblk_get_state(ctrl)));
	if (rkblk_get_state(ctrl) == RKBLK_DELETING)
		queue_work(rkblk_wq, &ctrl->err_work);
	else
		rkblk_error_recovery(ctrl);
	return BLK_EH_RESET_TIMER;
}

static int rkblk_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			   unsigned int hctx_idx)
{
	struct rkblk_ctrl *ctrl = data;

	hctx->driver_data = &ctrl->queues[hctx_idx];
	return 0;
}

static int rkblk_init_request(struct blk_mq_tag_set *set, struct request *rq,
			      unsigned int hctx_idx, unsigned int numa_node)
{
	struct rkblk_ctrl *ctrl = set->driver_data;
	struct rkblk_req *req = blk_mq_rq_to_pdu(rq);

	req->queue = &ctrl->queues[hctx_idx];
	req->cqe.done = rkblk_rdma_done;
	req->nents = 0;
	req->flushing = false;
	return 0;
}

static const struct blk_mq_ops rkblk_mq_ops = {
	.queue_rq = rkblk_queue_rq,
	.complete = rkblk_complete_rq,
	.timeout = rkblk_timeout,
	.init_hctx = rkblk_init_hctx,
	.init_request = rkblk_init_request,
};

static int rkblk_open(struct block_device *bdev, fmode_t mode)
{
	struct rkblk_ctrl *ctrl = bdev->bd_disk->private_data;
	int ret = 0;

	mutex_lock(&ctrl->open_lock);
	if (rkblk_get_state(ctrl) == RKBLK_DELETING)
		ret = -ENXIO;
	else
		ctrl->open_count++;
	mutex_unlock(&ctrl->open_lock);
	return ret;
}

static void rkblk_release(struct gendisk *disk, fmode_t mode)
{
	struct rkblk_ctrl *ctrl = disk->private_data;

	mutex_lock(&ctrl->open_lock);
	ctrl->open_count--;
	mutex_unlock(&ctrl->open_lock);
}

static const struct block_device_operations rkblk_fops = {
	.owner = THIS_MODULE,	/* an open disk holds the module */
	.open = rkblk_open,
	.release = rkblk_release,
};

/* ---- sysfs: /sys/block/rkblkN/rkblk/<attr> --------------------------------- */

static struct rkblk_ctrl *rkblk_dev_ctrl(struct device *dev)
{
	return dev_to_disk(dev)->private_data;
}

#define RKBLK_ATTR(name, fmt, expr)					\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	struct rkblk_ctrl *ctrl = rkblk_dev_ctrl(dev);			\
									\
	return sysfs_emit(buf, fmt "\n", expr);				\
}									\
static DEVICE_ATTR_RO(name)

RKBLK_ATTR(state, "%s", rkblk_state_name(rkblk_get_state(ctrl)));
RKBLK_ATTR(server, "%s", ctrl->server);
/* server's parts apart, for udev's /dev/disk/by-id/rkblk-ADDR-PORT-SESSION */
RKBLK_ATTR(addr, "%pISc", &ctrl->addr);
RKBLK_ATTR(port, "%d", ctrl->port);
RKBLK_ATTR(session, "%016llx", ctrl->session);
RKBLK_ATTR(size, "%llu", ctrl->size);
RKBLK_ATTR(queues, "%d", ctrl->nr_queues);
RKBLK_ATTR(queue_depth, "%d", ctrl->queue_depth);
RKBLK_ATTR(inflight, "%d", atomic_read(&ctrl->inflight));
RKBLK_ATTR(errors, "%lld", (long long)atomic64_read(&ctrl->errors));
RKBLK_ATTR(reconnects, "%lld", (long long)atomic64_read(&ctrl->reconnects));
RKBLK_ATTR(reconnect_delay, "%d", ctrl->reconnect_delay);
RKBLK_ATTR(loss_timeout, "%d", ctrl->loss_timeout);
RKBLK_ATTR(tos, "%d", ctrl->tos);
/* Queue 0's last connect (the REQ's MTU, after any cap); 0: none (iWARP). */
RKBLK_ATTR(path_mtu, "%d", READ_ONCE(ctrl->queues[0].path_mtu) ?
	   ib_mtu_enum_to_int(READ_ONCE(ctrl->queues[0].path_mtu)) : 0);

static struct attribute *rkblk_attrs[] = {
	&dev_attr_state.attr,
	&dev_attr_server.attr,
	&dev_attr_addr.attr,
	&dev_attr_port.attr,
	&dev_attr_session.attr,
	&dev_attr_size.attr,
	&dev_attr_queues.attr,
	&dev_attr_queue_depth.attr,
	&dev_attr_inflight.attr,
	&dev_attr_errors.attr,
	&dev_attr_reconnects.attr,
	&dev_attr_reconnect_delay.attr,
	&dev_attr_loss_timeout.attr,
	&dev_attr_tos.attr,
	&dev_attr_path_mtu.attr,
	NULL,
};

static const struct attribute_group rkblk_attr_group = {
	.name = "rkblk",
	.attrs = rkblk_attrs,
};

static const struct attribute_group *rkblk_attr_groups[] = {
	&rkblk_attr_group,
	NULL,
};

/* ---- the disk ---------------------------------------------------------------- */

static void rkblk_set_limits(struct rkblk_ctrl *ctrl, struct request_queue *q)
{
	blk_queue_logical_block_size(q, RK_MEM_BLOCK);
	blk_queue_physical_block_size(q, RK_MEM_BLOCK);
	blk_queue_io_min(q, RK_MEM_BLOCK);
	blk_queue_max_hw_sectors(q, RKBLK_MAX_HW_SECTORS);
	blk_queue_max_segments(q, ctrl->max_segs);
	/* No gaps inside a page list: what an MR (iWARP READs) maps. */
	blk_queue_virt_boundary(q, PAGE_SIZE - 1);
	blk_queue_write_cache(q, false, false);
	blk_queue_max_write_zeroes_sectors(q, ctrl->max_segs *
					   (PAGE_SIZE >> SECTOR_SHIFT));
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_clear(QUEUE_FLAG_ADD_RANDOM, q);
}

/* The tag set (one hardware queue per QP) and the disk, not yet added. */
int rkblk_alloc_disk(struct rkblk_ctrl *ctrl)
{
	struct blk_mq_tag_set *set = &ctrl->tag_set;
	struct gendisk *disk;
	int ret;

	memset(set, 0, sizeof(*set));
	set->ops = &rkblk_mq_ops;
	set->nr_hw_queues = ctrl->nr_queues;
	set->queue_depth = ctrl->queue_depth;
	set->numa_node = NUMA_NO_NODE;
	set->cmd_size = sizeof(struct rkblk_req);
	set->flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING;
	set->driver_data = ctrl;
	ret = blk_mq_alloc_tag_set(set);
	if (ret)
		return ret;
	ctrl->tag_set_allocated = true;

	disk = blk_mq_alloc_disk(set, ctrl);
	if (IS_ERR(disk))
		return PTR_ERR(disk);
	ctrl->disk = disk;
	disk->major = rkblk_major;
	disk->first_minor = ctrl->id * RKBLK_MINORS;
	disk->minors = RKBLK_MINORS;
	disk->fops = &rkblk_fops;
	disk->private_data = ctrl;
	strscpy(disk->disk_name, ctrl->name, sizeof(disk->disk_name));
	set_capacity(disk, ctrl->size >> SECTOR_SHIFT);
	rkblk_set_limits(ctrl, disk->queue);
	return 0;
}

int rkblk_add_disk(struct rkblk_ctrl *ctrl)
{
	return device_add_disk(NULL, ctrl->disk, rkblk_attr_groups);
}

/*
 * Deletes the disk: del_gendisk drains what is in flight (live queues) or
 * lets rkblk_queue_rq fail it (no connection); then frees disk and tag set.
 */
void rkblk_free_disk(struct rkblk_ctrl *ctrl)
{
	if (ctrl->disk && ctrl->disk_added) {
		del_gendisk(ctrl->disk);
		ctrl->disk_deleted = true;
	}
	cancel_work_sync(&ctrl->err_work);
	mutex_lock(&ctrl->lock);
	rkblk_stop_ctrl(ctrl);
	mutex_unlock(&ctrl->lock);
	if (ctrl->disk) {
		put_disk(ctrl->disk);
		ctrl->disk = NULL;
	}
	if (ctrl->tag_set_allocated) {
		blk_mq_free_tag_set(&ctrl->tag_set);
		ctrl->tag_set_allocated = false;
	}
}
