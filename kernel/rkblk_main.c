// SPDX-License-Identifier: GPL-2.0-only
/*
 * rkblk: remote memory served by `rdmakit memserver` as a block device
 * (/dev/rkblkN), attached and detached through /dev/rkblk-ctl.
 *
 * This file: module init/exit (rkblk_init, rkblk_exit), the control file
 * and its commands (attach, detach). Contract: notes/rkblk-contract.md.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/inet.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>
#include "rkblk.h"

#define RKBLK_CMD_MAX 1024
#define RKBLK_MAX_IDS ((1 << MINORBITS) / RKBLK_MINORS)

struct workqueue_struct *rkblk_wq;
struct kmem_cache *rkblk_region_cache;
int rkblk_major;

static LIST_HEAD(rkblk_ctrls);
static DEFINE_MUTEX(rkblk_ctrls_lock);
static DEFINE_IDA(rkblk_ida);

void rkblk_device_removed(struct ib_device *dev)
{
	struct rkblk_ctrl *ctrl;

	mutex_lock(&rkblk_ctrls_lock);
	list_for_each_entry(ctrl, &rkblk_ctrls, entry)
		rkblk_ctrl_device_removed(ctrl, dev);
	mutex_unlock(&rkblk_ctrls_lock);
}

/* ---- attach options ------------------------------------------------------ */

enum rkblk_opt {
	OPT_HOST, OPT_PORT, OPT_SIZE, OPT_QUEUES, OPT_QUEUE_DEPTH,
	OPT_RECONNECT_DELAY, OPT_LOSS_TIMEOUT, OPT_TOS, OPT_COUNT
};

static const char *const rkblk_opt_names[OPT_COUNT] = {
	[OPT_HOST] = "host",
	[OPT_PORT] = "port",
	[OPT_SIZE] = "size",
	[OPT_QUEUES] = "queues",
	[OPT_QUEUE_DEPTH] = "queue_depth",
	[OPT_RECONNECT_DELAY] = "reconnect_delay",
	[OPT_LOSS_TIMEOUT] = "loss_timeout",
	[OPT_TOS] = "tos",
};

static int rkblk_parse_uint(const char *key, const char *val, unsigned int min,
			    unsigned int max, int *out, char *err, size_t len)
{
	unsigned int n;

	if (kstrtouint(val, 10, &n)) {
		snprintf(err, len, "%s: '%s' is not a number", key, val);
		return -EINVAL;
	}
	if (n < min || n > max) {
		snprintf(err, len, "%s: %u is out of range %u..%u", key, n, min,
			 max);
		return -EINVAL;
	}
	*out = n;
	return 0;
}

static int rkblk_parse_size(const char *val, u64 *out, char *err, size_t len)
{
	char *end;
	u64 size;

	size = memparse(val, &end);
	if (end == val || *end) {
		snprintf(err, len, "size: '%s' is not a size (a number with an optional k, M or G suffix)",
			 val);
		return -EINVAL;
	}
	if (!size || size % RK_MEM_BLOCK || size > (U64_MAX >> 1)) {
		snprintf(err, len, "size: %llu is not a non-zero multiple of %u",
			 size, RK_MEM_BLOCK);
		return -EINVAL;
	}
	*out = size;
	return 0;
}

static int rkblk_parse_host(const char *val, struct sockaddr_storage *addr,
			    char *err, size_t len)
{
	if (inet_pton_with_scope(&init_net, AF_UNSPEC, val, NULL, addr)) {
		snprintf(err, len, "host: '%s' is not an IPv4 or IPv6 address",
			 val);
		return -EINVAL;
	}
	return 0;
}

static int rkblk_parse_opt(struct rkblk_ctrl *ctrl, enum rkblk_opt opt,
			   const char *val, char *err, size_t len)
{
	const char *key = rkblk_opt_names[opt];
	int port;
	int ret;

	switch (opt) {
	case OPT_HOST:
		return rkblk_parse_host(val, &ctrl->addr, err, len);
	case OPT_PORT:
		ret = rkblk_parse_uint(key, val, 1, 65535, &port, err, len);
		ctrl->port = port;
		return ret;
	case OPT_SIZE:
		return rkblk_parse_size(val, &ctrl->size, err, len);
	case OPT_QUEUES:
		return rkblk_parse_uint(key, val, 1,
					min(num_online_cpus(), RK_MEM_MAX_QUEUES),
					&ctrl->nr_queues, err, len);
	case OPT_QUEUE_DEPTH:
		return rkblk_parse_uint(key, val, 1, 1024, &ctrl->queue_depth,
					err, len);
	case OPT_RECONNECT_DELAY:
		return rkblk_parse_uint(key, val, 1, 3600,
					&ctrl->reconnect_delay, err, len);
	case OPT_LOSS_TIMEOUT:
		return rkblk_parse_uint(key, val, 0, 86400, &ctrl->loss_timeout,
					err, len);
	case OPT_TOS:
		return rkblk_parse_uint(key, val, 0, 255, &ctrl->tos, err, len);
	default:
		return -EINVAL;
	}
}

static void rkblk_set_port(struct rkblk_ctrl *ctrl)
{
	struct sockaddr *sa = (struct sockaddr *)&ctrl->addr;

	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(ctrl->port);
	else
		((struct sockaddr_in6 *)sa)->sin6_port = htons(ctrl->port);
	snprintf(ctrl->server, sizeof(ctrl->server), "%pISpc", sa);
}

/* key=value[,key=value...]: every key once, host and size required. */
static int rkblk_parse_attach(struct rkblk_ctrl *ctrl, char *args, char *err,
			      size_t len)
{
	unsigned long seen = 0;
	char *opt, *val;
	int i, ret;

	while ((opt = strsep(&args, ",")) != NULL) {
		val = strchr(opt, '=');
		if (val)
			*val++ = '\0';
		for (i = 0; i < OPT_COUNT; i++)
			if (!strcmp(opt, rkblk_opt_names[i]))
				break;
		if (i == OPT_COUNT) {
			snprintf(err, len, "%s: unknown option (host, port, size, queues, queue_depth, reconnect_delay, loss_timeout, tos)",
				 *opt ? opt : "(empty)");
			return -EINVAL;
		}
		if (!val || !*val) {
			snprintf(err, len, "%s: missing value", opt);
			return -EINVAL;
		}
		if (test_and_set_bit(i, &seen)) {
			snprintf(err, len, "%s: given twice", opt);
			return -EINVAL;
		}
		ret = rkblk_parse_opt(ctrl, i, val, err, len);
		if (ret)
			return ret;
	}
	for (i = OPT_HOST; i <= OPT_SIZE; i++) {
		if (i != OPT_PORT && !test_bit(i, &seen)) {
			snprintf(err, len, "%s: missing (required)",
				 rkblk_opt_names[i]);
			return -EINVAL;
		}
	}
	rkblk_set_port(ctrl);
	return 0;
}

/* ---- attach and detach ----------------------------------------------------- */

static struct rkblk_ctrl *rkblk_alloc_ctrl(void)
{
	struct rkblk_ctrl *ctrl = kzalloc(sizeof(*ctrl), GFP_KERNEL);

	if (!ctrl)
		return NULL;
	ctrl->id = -1;
	ctrl->port = RK_MEM_DEFAULT_PORT;
	ctrl->nr_queues = min(num_online_cpus(), RK_MEM_MAX_QUEUES);
	ctrl->queue_depth = 128;
	ctrl->reconnect_delay = 2;
	ctrl->loss_timeout = 60;
	ctrl->tos = -1;
	ctrl->state = RKBLK_CONNECTING;
	spin_lock_init(&ctrl->state_lock);
	mutex_init(&ctrl->lock);
	mutex_init(&ctrl->open_lock);
	INIT_LIST_HEAD(&ctrl->entry);
	rkblk_ctrl_init_work(ctrl);
	return ctrl;
}

static int rkblk_alloc_queues(struct rkblk_ctrl *ctrl)
{
	int i;

	ctrl->queues = kcalloc(ctrl->nr_queues, sizeof(*ctrl->queues),
			       GFP_KERNEL);
	if (!ctrl->queues)
		return -ENOMEM;
	for (i = 0; i < ctrl->nr_queues; i++) {
		ctrl->queues[i].ctrl = ctrl;
		ctrl->queues[i].idx = i;
		init_completion(&ctrl->queues[i].cm_done);
		init_completion(&ctrl->queues[i].region_done);
		init_completion(&ctrl->queues[i].probe_done);
	}
	return 0;
}

static void rkblk_free_ctrl(struct rkblk_ctrl *ctrl)
{
	if (ctrl->id >= 0)
		ida_free(&rkblk_ida, ctrl->id);
	kfree(ctrl->queues);
	kfree(ctrl);
}

static void rkblk_shutdown(struct rkblk_ctrl *ctrl);

/* Connects, then makes the disk; listed from the start for device removal. */
static int rkblk_connect_disk(struct rkblk_ctrl *ctrl, char *err, size_t len)
{
	int ret;

	mutex_lock(&rkblk_ctrls_lock);
	list_add_tail(&ctrl->entry, &rkblk_ctrls);
	mutex_unlock(&rkblk_ctrls_lock);

	mutex_lock(&ctrl->lock);
	ret = create_ctrl(ctrl, err, len);
	if (!ret) {
		ret = rkblk_alloc_disk(ctrl);
		if (ret)
			snprintf(err, len, "allocating the disk failed (%d)", ret);
	}
	if (!ret) /* fails only if the device went away meanwhile: dead */
		rkblk_change_state(ctrl, RKBLK_CONNECTING, RKBLK_LIVE);
	mutex_unlock(&ctrl->lock);
	if (!ret) {
		ret = rkblk_add_disk(ctrl);
		if (ret)
			snprintf(err, len, "adding the disk failed (%d)", ret);
	}
	mutex_lock(&rkblk_ctrls_lock);
	if (ret)
		list_del(&ctrl->entry);
	else
		ctrl->disk_added = true;
	mutex_unlock(&rkblk_ctrls_lock);
	if (ret) {
		WRITE_ONCE(ctrl->state, RKBLK_DELETING);
		rkblk_shutdown(ctrl);
	}
	return ret;
}

static int rkblk_attach(char *args, char *ans, size_t anslen)
{
	struct rkblk_ctrl *ctrl;
	char err[RKBLK_ERR_LEN], mtu[24] = "";
	int ret;

	ctrl = rkblk_alloc_ctrl();
	if (!ctrl)
		return -ENOMEM;
	ret = rkblk_parse_attach(ctrl, args, err, sizeof(err));
	if (ret)
		goto out_err;
	ret = rkblk_alloc_queues(ctrl);
	if (ret)
		goto out_free;
	ret = ida_alloc_max(&rkblk_ida, RKBLK_MAX_IDS - 1, GFP_KERNEL);
	if (ret < 0)
		goto out_free;
	ctrl->id = ret;
	snprintf(ctrl->name, sizeof(ctrl->name), "rkblk%d", ctrl->id);
	ret = rkblk_connect_disk(ctrl, err, sizeof(err));
	if (ret)
		goto out_err;	/* logged by rkblk_ctl_write */
	if (ctrl->queues[0].path_mtu) /* none on iWARP */
		snprintf(mtu, sizeof(mtu), ", path MTU %d",
			 ib_mtu_enum_to_int(ctrl->queues[0].path_mtu));
	pr_info("%s: attached %llu bytes at %s, session %016llx, %d queues of %d%s\n",
		ctrl->name, ctrl->size, ctrl->server, ctrl->session,
		ctrl->nr_queues, ctrl->queue_depth, mtu);
	snprintf(ans, anslen, "%s\n", ctrl->name);
	return 0;

out_err:
	snprintf(ans, anslen, "error: %s\n", err);
out_free:
	rkblk_free_ctrl(ctrl);
	return ret;
}

/* Unlists a disk nobody has open and marks it deleting (no new opens). */
static int rkblk_unlist(struct rkblk_ctrl *ctrl)
{
	unsigned long flags;

	mutex_lock(&ctrl->open_lock);
	if (ctrl->open_count) {
		mutex_unlock(&ctrl->open_lock);
		return -EBUSY;
	}
	spin_lock_irqsave(&ctrl->state_lock, flags);
	WRITE_ONCE(ctrl->state, RKBLK_DELETING);
	spin_unlock_irqrestore(&ctrl->state_lock, flags);
	mutex_unlock(&ctrl->open_lock);
	list_del(&ctrl->entry);
	return 0;
}

/*
 * Deletes an unlisted disk: no reconnect runs any more; requests waiting
 * for a connection fail, those in flight on a live one are drained.
 */
static void rkblk_shutdown(struct rkblk_ctrl *ctrl)
{
	flush_work(&ctrl->err_work);
	cancel_delayed_work_sync(&ctrl->reconnect_work);
	mutex_lock(&ctrl->lock);
	rkblk_restart_io(ctrl);
	mutex_unlock(&ctrl->lock);
	rkblk_free_disk(ctrl);
}

static void rkblk_delete(struct rkblk_ctrl *ctrl)
{
	rkblk_shutdown(ctrl);
	pr_info("%s: detached\n", ctrl->name);
	rkblk_free_ctrl(ctrl);
}

static int rkblk_detach(char *name, char *ans, size_t anslen)
{
	struct rkblk_ctrl *ctrl, *found = NULL;
	int ret = 0;

	mutex_lock(&rkblk_ctrls_lock);
	list_for_each_entry(ctrl, &rkblk_ctrls, entry) {
		if (ctrl->disk_added && !strcmp(ctrl->name, name)) {
			found = ctrl;
			break;
		}
	}
	if (found)
		ret = rkblk_unlist(found);
	mutex_unlock(&rkblk_ctrls_lock);
	if (!found) {
		snprintf(ans, anslen, "error: %s: no such disk\n", name);
		return -ENODEV;
	}
	if (ret) {
		snprintf(ans, anslen, "error: %s is open (mounted or swapped on?)\n",
			 name);
		return ret;
	}
	rkblk_delete(found);
	snprintf(ans, anslen, "ok\n");
	return 0;
}

/* ---- /dev/rkblk-ctl ------------------------------------------------------------ */

struct rkblk_ctl_file {
	struct mutex lock;
	bool used;		/* one command per open */
	char answer[RKBLK_ERR_LEN + 16];
	size_t len;
};

static int rkblk_ctl_open(struct inode *inode, struct file *file)
{
	struct rkblk_ctl_file *cf = kzalloc(sizeof(*cf), GFP_KERNEL);

	if (!cf)
		return -ENOMEM;
	mutex_init(&cf->lock);
	file->private_data = cf;
	return 0;
}

static int rkblk_ctl_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static int rkblk_ctl_run(char *cmd, char *ans, size_t anslen)
{
	char *args = cmd;
	char *verb = strsep(&args, " ");

	if (!strcmp(verb, "attach"))
		return rkblk_attach(args ? args : (char *)"", ans, anslen);
	if (!strcmp(verb, "detach") && args && *args)
		return rkblk_detach(strim(args), ans, anslen);
	if (!strcmp(verb, "detach")) {
		snprintf(ans, anslen, "error: detach: missing disk name (rkblkN)\n");
		return -EINVAL;
	}
	snprintf(ans, anslen, "error: command: unknown '%.32s' (attach or detach)\n",
		 verb);
	return -EINVAL;
}

static ssize_t rkblk_ctl_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct rkblk_ctl_file *cf = file->private_data;
	char *cmd;
	int ret;

	if (count > RKBLK_CMD_MAX)
		return -EINVAL;
	cmd = memdup_user_nul(ubuf, count);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	mutex_lock(&cf->lock);
	if (cf->used) {
		ret = -EINVAL;
		snprintf(cf->answer, sizeof(cf->answer),
			 "error: command: one command per open\n");
	} else {
		cf->used = true;
		ret = rkblk_ctl_run(strim(cmd), cf->answer, sizeof(cf->answer));
	}
	cf->len = strlen(cf->answer);
	if (ret && ret != -EBUSY && ret != -ENODEV)
		pr_info("%s", cf->answer);
	mutex_unlock(&cf->lock);
	kfree(cmd);
	return ret ? ret : count;
}

static ssize_t rkblk_ctl_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct rkblk_ctl_file *cf = file->private_data;
	ssize_t ret;

	mutex_lock(&cf->lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, cf->answer, cf->len);
	mutex_unlock(&cf->lock);
	return ret;
}

static const struct file_operations rkblk_ctl_fops = {
	.owner = THIS_MODULE,
	.open = rkblk_ctl_open,
	.release = rkblk_ctl_release,
	.write = rkblk_ctl_write,
	.read = rkblk_ctl_read,
	.llseek = noop_llseek,
};

static struct miscdevice rkblk_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "rkblk-ctl",
	.fops = &rkblk_ctl_fops,
	.mode = 0600,
};

/* ---- module ---------------------------------------------------------------- */

static int __init rkblk_init(void)
{
	int ret;

	/* The region messages the queues receive (one per connection). */
	rkblk_region_cache = kmem_cache_create("rkblk_region",
					       sizeof(union rkblk_region_msg), 0,
					       SLAB_HWCACHE_ALIGN, NULL);
	if (!rkblk_region_cache)
		return -ENOMEM;
	rkblk_wq = alloc_workqueue("rkblk", WQ_MEM_RECLAIM, 0);
	ret = -ENOMEM;
	if (!rkblk_wq)
		goto out_cache;
	ret = register_blkdev(0, RKBLK_NAME);
	if (ret < 0)
		goto out_wq;
	rkblk_major = ret;
	ret = rkblk_client_register();
	if (ret)
		goto out_blkdev;
	ret = misc_register(&rkblk_misc);
	if (ret)
		goto out_client;
	return 0;

out_client:
	rkblk_client_unregister();
out_blkdev:
	unregister_blkdev(rkblk_major, RKBLK_NAME);
out_wq:
	destroy_workqueue(rkblk_wq);
out_cache:
	kmem_cache_destroy(rkblk_region_cache);
	return ret;
}

static void __exit rkblk_exit(void)
{
	struct rkblk_ctrl *ctrl, *next;
	LIST_HEAD(doomed);

	misc_deregister(&rkblk_misc);
	/* No disk is open (each open holds the module): detach them all. */
	mutex_lock(&rkblk_ctrls_lock);
	list_for_each_entry_safe(ctrl, next, &rkblk_ctrls, entry) {
		if (!rkblk_unlist(ctrl))
			list_add_tail(&ctrl->entry, &doomed);
	}
	mutex_unlock(&rkblk_ctrls_lock);
	list_for_each_entry_safe(ctrl, next, &doomed, entry)
		rkblk_delete(ctrl);
	rkblk_client_unregister();
	unregister_blkdev(rkblk_major, RKBLK_NAME);
	destroy_workqueue(rkblk_wq);
	kmem_cache_destroy(rkblk_region_cache);
}

module_init(rkblk_init);
module_exit(rkblk_exit);

MODULE_DESCRIPTION("rdmakit remote memory over RDMA as a block device");
MODULE_AUTHOR("rdmakit");
MODULE_LICENSE("GPL");
