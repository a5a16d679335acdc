/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rkblk: remote memory served by `rdmakit memserver` as a block device.
 * Shared declarations of the module's three files:
 *   rkblk_main.c  module init/exit, /dev/rkblk-ctl, attach/detach, sysfs
 *   rkblk_conn.c  controller and queues over RDMA CM, the region message,
 *                 error recovery and reconnect, the IB client
 *   rkblk_io.c    blk-mq: the read and write paths, completions, timeouts
 * The wire protocol is include/rdmakit/memproto.h.
 */
#ifndef RKBLK_H
#define RKBLK_H

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rw.h>
#include <rdmakit/memproto.h>

#define RKBLK_NAME "rkblk"
#define RKBLK_MINORS 16
/*
 * Segments of one request. rdma_rw splits them into as many RDMA READs or
 * WRITEs as the device's SGE limits need (one SGE per READ on iWARP).
 */
#define RKBLK_MAX_SEGS 32
#define RKBLK_MAX_HW_SECTORS 1024 /* 512 KiB per request */
/* Pages one request may touch: its sectors, one more when not aligned. */
#define RKBLK_MAX_PAGES \
	((RKBLK_MAX_HW_SECTORS >> (PAGE_SHIFT - SECTOR_SHIFT)) + 1)
/* RDMA READs of the region probe (rkblk_probe_region). */
#define RKBLK_PROBES 2
/* Bound of each connection step (resolve, connect, region probe). */
#define RKBLK_STEP_TIMEOUT_MS 10000
/* Connecting waits longer: a server older than memproto.h's step 3 makes
 * and registers the region before it accepts a new session.
 */
#define RKBLK_CONNECT_TIMEOUT_MS 30000
/*
 * The region message waits longest: the server allocates and registers a
 * new session's region (zeroed, pinned) after the accept, which takes
 * seconds for a large region on an emulated machine.
 */
#define RKBLK_REGION_TIMEOUT_MS 60000
/* No region this long after the request SEND: SEND it once more. */
#define RKBLK_HELLO_AGAIN_MS 5000
#define RKBLK_ERR_LEN 200
/*
 * Times a request is re-issued after failed completions, as nvme's
 * max_retries: a server whose region fails every WRITE (registered
 * read-only) connects fine each time, so neither the reconnects nor
 * loss_timeout would end it.
 */
#define RKBLK_MAX_RETRIES 5

enum rkblk_state {
	RKBLK_CONNECTING,	/* attach in progress */
	RKBLK_LIVE,
	RKBLK_RECONNECTING,
	RKBLK_DEAD,
	RKBLK_DELETING,
};

/* rkblk_queue.flags bits */
#define RKBLK_Q_LIVE 0		/* connected, the region known: I/O may be posted */

/*
 * What the server SENDs on each queue (memproto.h step 4): the region, or
 * why it could not make it (the ERROR message a reject carries).
 */
union rkblk_region_msg {
	struct rk_mem_region region;
	struct rk_mem_reject reject;
};

/* One READ of the region probe: 8 bytes into the queue's rbuf. */
struct rkblk_probe {
	struct ib_cqe cqe;
	struct rkblk_queue *queue;
	struct rdma_rw_ctx rw;
	struct scatterlist sg;
};

/* One SEND of the queue's request (memproto.h step 4). */
struct rkblk_hello {
	struct ib_cqe cqe;
	struct rkblk_queue *queue;
	u64 dma;
};

/* One RC connection: one QP, its CQ, one blk-mq hardware queue. */
struct rkblk_queue {
	struct rkblk_ctrl *ctrl;
	int idx;
	unsigned long flags;

	struct rdma_cm_id *cm_id;
	struct ib_qp *qp;
	struct ib_cq *cq;
	int cq_size;

	/* Connection step the CM handler reports (rkblk_cm_handler). */
	struct completion cm_done;
	int cm_error;
	struct rdma_conn_param conn_param;
	struct rk_mem_req req_msg;	/* the REQ's private data */
	bool established;
	/*
	 * The request SENDs (RK_MEM_REQ_SENDS_FIRST): req_msg again, a second
	 * time when no region came within RKBLK_HELLO_AGAIN_MS.
	 */
	struct rkblk_hello hello[RK_MEM_REQ_SENDS];
	int reject_code;		/* the server's REJ code, 0 if none */
	enum ib_mtu path_mtu;		/* the MTU the REQ asked for; 0: none */
	char reject_text[RK_MEM_REJECT_TEXT + 64];

	/* recv_remote_memory_region: the receive posted before connecting. */
	struct ib_cqe recv_cqe;
	union rkblk_region_msg *rbuf;	/* from rkblk_region_cache */
	u64 rbuf_dma;
	bool rbuf_mapped;
	struct completion region_done;
	int region_status;		/* 0 or -EIO (failed completion) */
	u32 region_len;			/* bytes received */
	union rkblk_region_msg region;	/* copy, after unmapping */

	/* rkblk_probe_region: two RDMA READs into rbuf through rdma_rw. */
	struct rkblk_probe probe[RKBLK_PROBES];
	struct completion probe_done;
	atomic_t probe_left;		/* READs not completed yet */
	enum ib_wc_status probe_status;	/* the first failure, or success */

	/* Where the I/O goes: the session's region. */
	u64 raddr;
	u32 rkey;
};

struct rkblk_ctrl {
	struct list_head entry;		/* rkblk_ctrls */
	int id;
	char name[DISK_NAME_LEN];

	/* Attach parameters. */
	struct sockaddr_storage addr;
	char server[64];		/* "ADDR:PORT" for sysfs */
	u16 port;
	u64 size;
	int nr_queues;
	int queue_depth;
	int reconnect_delay;		/* seconds */
	int loss_timeout;		/* seconds */
	int tos;			/* RDMA CM type of service; -1: none */

	/* Verbs objects shared by the queues (one device per controller). */
	struct ib_device *ibdev;
	struct ib_pd *pd;
	int max_segs;
	/*
	 * iWARP: an RDMA WRITE completes once handed to TCP, not once placed
	 * in the server's memory, so each write request ends with a READ
	 * (READs are answered only after earlier WRITEs are placed).
	 */
	bool flush_writes;

	u64 session;
	int last_reject;		/* REJ code of the last failed connect */
	enum ib_mtu mtu_cap;		/* learned from -EMSGSIZE; 0: none */
	struct rkblk_queue *queues;

	spinlock_t state_lock;
	enum rkblk_state state;
	/*
	 * Held while queues are set up or torn down (attach, recovery,
	 * reconnect, device removal, detach).
	 */
	struct mutex lock;
	bool quiesced;			/* under lock */
	unsigned long loss_deadline;	/* jiffies */
	struct work_struct err_work;
	struct delayed_work reconnect_work;

	struct mutex open_lock;
	int open_count;			/* under open_lock */

	atomic_t inflight;
	atomic64_t errors;
	atomic64_t reconnects;

	struct blk_mq_tag_set tag_set;
	bool tag_set_allocated;
	struct gendisk *disk;
	bool disk_added;		/* visible to detach (under rkblk_ctrls_lock) */
	bool disk_deleted;		/* del_gendisk done: no more queue_rq */
};

/*
 * Per-request state, in the tag set's cmd_size: nothing is allocated on
 * the I/O path (swap writes out through it).
 */
struct rkblk_req {
	struct ib_cqe cqe;
	struct rkblk_queue *queue;
	int nents;			/* sgl entries in rw, 0 if none */
	blk_status_t status;
	int retries;			/* failed completions so far */
	struct rdma_rw_ctx rw;		/* the READs or WRITEs, any MR */
	bool flushing;			/* flush_rw set up (flush_writes) */
	struct rdma_rw_ctx flush_rw;	/* the READ after the WRITEs */
	struct scatterlist flush_sg;
	struct scatterlist sgl[RKBLK_MAX_SEGS];
};

extern struct workqueue_struct *rkblk_wq;
extern struct kmem_cache *rkblk_region_cache;
extern int rkblk_major;

/* rkblk_conn.c */
const char *rkblk_state_name(enum rkblk_state state);
enum rkblk_state rkblk_get_state(struct rkblk_ctrl *ctrl);
bool rkblk_change_state(struct rkblk_ctrl *ctrl, enum rkblk_state from,
			enum rkblk_state to);
int create_ctrl(struct rkblk_ctrl *ctrl, char *err, size_t errlen);
void rkblk_error_recovery(struct rkblk_ctrl *ctrl);
void rkblk_stop_ctrl(struct rkblk_ctrl *ctrl);
void rkblk_ctrl_init_work(struct rkblk_ctrl *ctrl);
int rkblk_client_register(void);
void rkblk_client_unregister(void);
void rkblk_ctrl_device_removed(struct rkblk_ctrl *ctrl, struct ib_device *dev);

/* rkblk_io.c */
int rkblk_alloc_disk(struct rkblk_ctrl *ctrl);
int rkblk_add_disk(struct rkblk_ctrl *ctrl);
void rkblk_free_disk(struct rkblk_ctrl *ctrl);
void rkblk_restart_io(struct rkblk_ctrl *ctrl);
void rkblk_quiesce_io(struct rkblk_ctrl *ctrl);
void rkblk_cancel_queue(struct rkblk_queue *q);

/* rkblk_main.c */
void rkblk_device_removed(struct ib_device *dev);

#endif
