/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Devices and ports: open once, query everything once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <fcntl.h>

#include <rdmakit/device.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include <rdmakit/status.h>

#include "base/hint_int.h"
#include "verbs/device_int.h"

int rk_device_names(char ***names_p, int *count_p)
{
	struct ibv_device **list;
	char **names;
	int n, i;

	list = ibv_get_device_list(&n);
	if (!list) {
		int err = errno ? -errno : -ENODEV;

		/* Not %m: the hint may touch errno first. */
		rk_error("cannot list RDMA devices: %s (this kernel has no RDMA support or no "
			 "driver is loaded; %s)", rk_strerror(err), rk_hint_no_device());
		return err;
	}
	names = calloc((size_t)n + 1, sizeof(*names));
	if (!names) {
		ibv_free_device_list(list);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		names[i] = strdup(ibv_get_device_name(list[i]));
		if (!names[i]) {
			rk_device_names_free(names);
			ibv_free_device_list(list);
			return -ENOMEM;
		}
	}
	ibv_free_device_list(list);
	*names_p = names;
	*count_p = n;
	return 0;
}

void rk_device_names_free(char **names)
{
	if (!names)
		return;
	for (char **p = names; *p; p++)
		free(*p);
	free(names);
}

static void port_from_attr(uint8_t port_num, const struct ibv_port_attr *pa,
			   struct rk_port_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->port_num = port_num;
	pi->state = pa->state;
	pi->link_layer = pa->link_layer;
	pi->active_mtu = pa->active_mtu;
	pi->max_mtu = pa->max_mtu;
	pi->lid = pa->lid;
	pi->sm_lid = pa->sm_lid;
	pi->lmc = pa->lmc;
	pi->active_width = pa->active_width;
	pi->active_speed = pa->active_speed;
#ifdef RDMAKIT_HAVE_ACTIVE_SPEED_EX
	pi->active_speed_ex = pa->active_speed_ex ? pa->active_speed_ex : pa->active_speed;
#else
	pi->active_speed_ex = pa->active_speed;
#endif
	pi->gid_tbl_len = pa->gid_tbl_len;
	pi->pkey_tbl_len = pa->pkey_tbl_len;
}

static int query_port(struct ibv_context *ctx, const char *dev_name, uint8_t port_num,
		      struct rk_port_info *pi)
{
	struct ibv_port_attr pa;
	int ret;

	ret = ibv_query_port(ctx, port_num, &pa);
	if (ret) {
		ret = rk_verbs_err(ret);
		rk_error("query port %u of %s: %s", port_num, dev_name, rk_strerror(ret));
		return ret;
	}
	port_from_attr(port_num, &pa, pi);
	return 0;
}

static int query_device(struct rk_device *dev)
{
	struct ibv_device_attr_ex ax;
	struct rk_device_info *info = &dev->info;
	int ret;

	memset(&ax, 0, sizeof(ax));
	ret = ibv_query_device_ex(dev->ctx, NULL, &ax);
	if (ret) {
		ret = rk_verbs_err(ret);
		rk_error("query device %s: %s", info->name, rk_strerror(ret));
		return ret;
	}
	info->node_guid = be64toh(ax.orig_attr.node_guid);
	info->sys_image_guid = be64toh(ax.orig_attr.sys_image_guid);
	snprintf(info->fw_ver, sizeof(info->fw_ver), "%s", ax.orig_attr.fw_ver);
	info->vendor_id = ax.orig_attr.vendor_id;
	info->vendor_part_id = ax.orig_attr.vendor_part_id;
	info->hw_ver = ax.orig_attr.hw_ver;
	info->phys_port_cnt = ax.orig_attr.phys_port_cnt;
	info->max_qp = ax.orig_attr.max_qp;
	info->max_qp_wr = ax.orig_attr.max_qp_wr;
	info->max_sge = ax.orig_attr.max_sge;
	info->max_cqe = ax.orig_attr.max_cqe;
	info->max_mr = ax.orig_attr.max_mr;
	info->max_mr_size = ax.orig_attr.max_mr_size;
	info->max_pd = ax.orig_attr.max_pd;
	info->max_qp_rd_atom = ax.orig_attr.max_qp_rd_atom;
	info->max_qp_init_rd_atom = ax.orig_attr.max_qp_init_rd_atom;
	info->atomic_cap = ax.orig_attr.atomic_cap;
	info->device_cap_flags = ax.device_cap_flags_ex;
	info->max_dm_size = ax.max_dm_size;
	info->odp_caps = ax.odp_caps.general_caps;
	info->odp_rc_caps = ax.odp_caps.per_transport_caps.rc_odp_caps;
	info->odp_ud_caps = ax.odp_caps.per_transport_caps.ud_odp_caps;
	info->transport = dev->ctx->device->transport_type;
	return 0;
}

int rk_device_open(const char *name, struct rk_device **dev_p)
{
	struct ibv_device **list;
	struct ibv_device *found = NULL;
	struct ibv_context *ctx;
	struct rk_device *dev;
	int n, i, ret;

	list = ibv_get_device_list(&n);
	if (!list) {
		ret = errno ? -errno : -ENODEV;
		rk_error("cannot list RDMA devices: %s (this kernel has no RDMA support or no "
			 "driver is loaded; %s)", rk_strerror(ret), rk_hint_no_device());
		return ret;
	}
	for (i = 0; i < n && !found; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			found = list[i];
	if (!found) {
		char have[256] = "";
		size_t off = 0;

		for (i = 0; i < n && off < sizeof(have); i++)
			off += snprintf(have + off, sizeof(have) - off, "%s%s", i ? ", " : "",
					ibv_get_device_name(list[i]));
		if (name)
			rk_error("no RDMA device named '%s' (devices: %s)", name,
				 n ? have : "none");
		else
			rk_error("no RDMA device found (no driver loaded, or no permission on "
				 "/dev/infiniband; %s)", rk_hint_no_device());
		ret = -ENODEV;
		goto out_free_list;
	}

	ctx = ibv_open_device(found);
	if (!ctx) {
		ret = errno ? -errno : -ENODEV;
		rk_error("open device %s: %m", ibv_get_device_name(found));
		goto out_free_list;
	}
	ret = rk_device_wrap(ctx, &dev);
	if (ret) {
		ibv_close_device(ctx);
		goto out_free_list;
	}
	dev->owns_ctx = true;
	*dev_p = dev;

out_free_list:
	/* The list only served to find the device: freed on success too. */
	ibv_free_device_list(list);
	return ret;
}

int rk_device_wrap(struct ibv_context *ctx, struct rk_device **dev_p)
{
	struct rk_device *dev;
	int i, ret;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->ctx = ctx;
	snprintf(dev->info.name, sizeof(dev->info.name), "%s", ibv_get_device_name(ctx->device));
	ret = query_device(dev);
	if (ret)
		goto err_free_dev;
	dev->ports = calloc(dev->info.phys_port_cnt ? dev->info.phys_port_cnt : 1,
			    sizeof(*dev->ports));
	if (!dev->ports) {
		ret = -ENOMEM;
		goto err_free_dev;
	}
	for (i = 0; i < dev->info.phys_port_cnt; i++) {
		ret = query_port(dev->ctx, dev->info.name, (uint8_t)(i + 1), &dev->ports[i]);
		if (ret)
			goto err_free_ports;
	}
	*dev_p = dev;
	return 0;

err_free_ports:
	free(dev->ports);
err_free_dev:
	free(dev);
	return ret;
}

static void async_log_stop(struct rk_device *dev);

struct rk_device *rk_device_ref(struct rk_device *dev)
{
	__atomic_add_fetch(&dev->refs, 1, __ATOMIC_ACQ_REL);
	return dev;
}

void rk_device_close(struct rk_device *dev)
{
	if (!dev)
		return;
	if (__atomic_sub_fetch(&dev->refs, 1, __ATOMIC_ACQ_REL) >= 0)
		return;
	async_log_stop(dev);
	if (dev->owns_ctx && ibv_close_device(dev->ctx))
		rk_warn("close device %s: %m (verbs objects still open?)", dev->info.name);
	free(dev->ports);
	free(dev);
}

int rk_port_refresh(struct rk_device *dev, uint8_t port_num, struct rk_port_info *info_p)
{
	struct rk_port_info pi;
	int ret;

	ret = rk_port_check(dev, port_num);
	if (ret)
		return ret;
	ret = query_port(dev->ctx, dev->info.name, port_num, &pi);
	if (ret)
		return ret;
	dev->ports[port_num - 1] = pi;
	if (info_p)
		*info_p = pi;
	return 0;
}

const struct rk_port_info *rk_device_port(const struct rk_device *dev, uint8_t port_num)
{
	if (port_num < 1 || port_num > dev->info.phys_port_cnt)
		return NULL;
	return &dev->ports[port_num - 1];
}

int rk_port_check(const struct rk_device *dev, uint8_t port_num)
{
	if (rk_device_port(dev, port_num))
		return 0;
	rk_error("%s has no port %u (ports 1..%u)", dev->info.name, port_num,
		 dev->info.phys_port_cnt);
	return -EINVAL;
}

int rk_port_check_active(const struct rk_device *dev, uint8_t port_num)
{
	const struct rk_port_info *pi = rk_device_port(dev, port_num);

	if (!pi)
		return rk_port_check(dev, port_num);
	if (pi->state != IBV_PORT_ACTIVE) {
		rk_error("%s port %u is %s, not ACTIVE%s", dev->info.name, port_num,
			 rk_port_state_str(pi->state),
			 pi->link_layer == IBV_LINK_LAYER_ETHERNET ?
				 " (is its network interface up?)" :
				 " (cable, or no subnet manager?)");
		return -ENETDOWN;
	}
	return 0;
}

bool rk_port_is_roce(const struct rk_device *dev, uint8_t port_num)
{
	const struct rk_port_info *pi = rk_device_port(dev, port_num);

	/* iWARP runs on Ethernet too, but over TCP: no GRH, no GID. */
	return pi && pi->link_layer == IBV_LINK_LAYER_ETHERNET && !rk_device_is_iwarp(dev);
}

bool rk_device_is_iwarp(const struct rk_device *dev)
{
	return dev && (dev->info.transport == IBV_TRANSPORT_IWARP ||
		       (dev->ctx && dev->ctx->device->node_type == IBV_NODE_RNIC));
}

int rk_device_check_no_cm(const struct rk_device *dev, const char *hint)
{
	if (!rk_device_is_iwarp(dev))
		return 0;
	rk_error("%s is an iWARP device: its QPs connect only through RDMA CM; %s",
		 dev->info.name, hint ? hint : "this command brings them up without it");
	return -EPROTONOSUPPORT;
}

int rk_device_check_no_cm_for(const struct rk_device *dev, const char *transport,
			      const char *hint)
{
	if (transport && strcmp(transport, "RC") && rk_device_is_iwarp(dev)) {
		rk_error("%s is an iWARP device: it has only RC QPs, no %s", dev->info.name,
			 transport);
		return -EOPNOTSUPP;
	}
	return rk_device_check_no_cm(dev, hint);
}

int rk_device_name_check_no_cm(const char *name, const char *transport, const char *hint)
{
	struct rk_device *dev;
	int ret;

	ret = rk_device_open(name, &dev);
	if (ret)
		return ret;
	ret = rk_device_check_no_cm_for(dev, transport, hint);
	rk_device_close(dev);
	return ret;
}

const char *rk_port_state_str(enum ibv_port_state state)
{
	switch (state) {
	case IBV_PORT_NOP: return "NOP";
	case IBV_PORT_DOWN: return "DOWN";
	case IBV_PORT_INIT: return "INIT";
	case IBV_PORT_ARMED: return "ARMED";
	case IBV_PORT_ACTIVE: return "ACTIVE";
	case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
	}
	return "UNKNOWN";
}

const char *rk_link_layer_str(uint8_t link_layer)
{
	switch (link_layer) {
	case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
	case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
	case IBV_LINK_LAYER_UNSPECIFIED: return "Unspecified";
	}
	return "Unknown";
}

const char *rk_atomic_cap_str(enum ibv_atomic_cap cap)
{
	switch (cap) {
	case IBV_ATOMIC_NONE: return "none";
	case IBV_ATOMIC_HCA: return "HCA";
	case IBV_ATOMIC_GLOB: return "global";
	}
	return "unknown";
}

int rk_mtu_bytes(enum ibv_mtu mtu)
{
	if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096)
		return 0;
	return 128 << mtu;
}

enum ibv_mtu rk_mtu_from_bytes(int bytes)
{
	for (int m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if ((128 << m) == bytes)
			return (enum ibv_mtu)m;
	return 0;
}

/* Set by srq.c (device_int.h): SRQs are a layer's piece above the device. */
static _Atomic device_srq_event_fn srq_event_hook;

void device_srq_event_hook(device_srq_event_fn fn)
{
	atomic_store(&srq_event_hook, fn);
}

int rk_async_event_wait(struct rk_device *dev, int timeout_ms, struct rk_async_event *ev_p)
{
	struct pollfd pfd = {.fd = dev->ctx->async_fd, .events = POLLIN};
	struct ibv_async_event ev;
	struct rk_async_event out = {0};
	device_srq_event_fn srq_event;
	int ret;

	do
		ret = poll(&pfd, 1, timeout_ms);
	while (ret < 0 && errno == EINTR);
	if (ret < 0) {
		ret = -errno;
		rk_error("wait for an async event on %s: %m", dev->info.name);
		return ret;
	}
	if (ret == 0)
		return -ETIMEDOUT;
	if (ibv_get_async_event(dev->ctx, &ev)) {
		ret = errno ? -errno : -EIO;
		rk_error("read async event of %s: %m", dev->info.name);
		return ret;
	}
	out.type = ev.event_type;
	switch (ev.event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		out.has_qp = true;
		out.qp_num = ev.element.qp->qp_num;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		out.has_port = true;
		out.port_num = (uint8_t)ev.element.port_num;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		/* Before the acknowledgement: the SRQ cannot be destroyed yet. */
		srq_event = atomic_load(&srq_event_hook);
		out.has_srq = srq_event && srq_event(ev.element.srq, ev.event_type, &out.srq_posted,
						     &out.srq_limit);
		break;
	default:
		break;
	}
	ibv_ack_async_event(&ev);
	*ev_p = out;
	return 0;
}

struct rk_async_logger {
	pthread_t thread;
	int stop[2]; /* a pipe: writing to stop[1] ends the thread */
	uint32_t down; /* bit n: port n went down and is not active again (atomic) */
};

static bool async_is_error(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_CQ_ERR:
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_DEVICE_FATAL:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_WQ_FATAL:
		return true;
	default:
		return false;
	}
}

static void *async_log_thread(void *arg)
{
	struct rk_device *dev = arg;

	for (;;) {
		struct pollfd pfd[2] = {
			{.fd = dev->ctx->async_fd, .events = POLLIN},
			{.fd = dev->logger->stop[0], .events = POLLIN},
		};
		struct rk_async_event ev;
		char where[96] = "";

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN) || rk_async_event_wait(dev, 0, &ev))
			continue;
		if (ev.has_port && ev.port_num < 32 && ev.type == IBV_EVENT_PORT_ERR)
			__atomic_or_fetch(&dev->logger->down, 1u << ev.port_num, __ATOMIC_RELAXED);
		if (ev.has_port && ev.port_num < 32 && ev.type == IBV_EVENT_PORT_ACTIVE)
			__atomic_and_fetch(&dev->logger->down, ~(1u << ev.port_num), __ATOMIC_RELAXED);
		if (ev.has_qp)
			snprintf(where, sizeof(where), " on QP 0x%x", ev.qp_num);
		else if (ev.has_srq)
			snprintf(where, sizeof(where), " on an SRQ (%u receives posted, limit %u)",
				 ev.srq_posted, ev.srq_limit);
		else if (ev.has_port)
			snprintf(where, sizeof(where), " on port %u", ev.port_num);
		rk_log(async_is_error(ev.type) ? RK_LOG_ERROR : RK_LOG_INFO, "%s%s: %s: %s",
		       dev->info.name, where, rk_async_event_name(ev.type),
		       rk_async_event_hint(ev.type));
	}
	return NULL;
}

static int async_log_start_locked(struct rk_device *dev)
{
	struct rk_async_logger *l;
	int ret;

	if (dev->logger)
		return 0;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	if (pipe2(l->stop, O_CLOEXEC)) {
		ret = -errno;
		rk_error("async event logger: pipe: %m");
		goto err_free_l;
	}
	dev->logger = l;
	ret = -pthread_create(&l->thread, NULL, async_log_thread, dev);
	if (ret) {
		rk_error("async event logger: %s", rk_strerror(ret));
		goto err_close_pipe;
	}
	return 0;

err_close_pipe:
	dev->logger = NULL;
	close(l->stop[0]);
	close(l->stop[1]);
err_free_l:
	free(l);
	return ret;
}

/* Connections that share a device (rk_device_ref()) start it from their own
 * threads: one logger per device. */
int rk_async_log_start(struct rk_device *dev)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int ret;

	pthread_mutex_lock(&lock);
	ret = async_log_start_locked(dev);
	pthread_mutex_unlock(&lock);
	return ret;
}

bool rk_device_port_down(const struct rk_device *dev, uint8_t port_num)
{
	if (!dev->logger || port_num >= 32)
		return false;
	return __atomic_load_n(&dev->logger->down, __ATOMIC_RELAXED) & (1u << port_num);
}

static void async_log_stop(struct rk_device *dev)
{
	struct rk_async_logger *l = dev->logger;

	if (!l)
		return;
	if (write(l->stop[1], "x", 1) != 1)
		rk_warn("stop the async event logger: %m");
	pthread_join(l->thread, NULL);
	close(l->stop[0]);
	close(l->stop[1]);
	free(l);
	dev->logger = NULL;
}
