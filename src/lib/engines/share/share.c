/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Several processes on one device: passing a context by its command fd and
 * importing it, shared memory files, fork support. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rdmakit/share.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>
#include "verbs/device_int.h"

/* A socket call failed (returned < 0): 0 when a signal interrupted it (try
 * again), else its negative errno, logged as "DOING: REASON". */
static int call_failed(const char *doing)
{
	int ret = -errno;

	if (ret == -EINTR)
		return 0;
	rk_error("%s: %m", doing);
	return ret;
}

int rk_share_msg_send(int sock, const void *buf, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	size_t done = 0;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (done < len) {
		ssize_t n;

		iov.iov_base = (char *)buf + done;
		iov.iov_len = len - done;
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
		if (n < 0) {
			int ret = call_failed("send to the other process");

			if (ret)
				return ret;
			continue;
		}
		done += (size_t)n;
		msg.msg_control = NULL; /* the descriptor goes with the first byte */
		msg.msg_controllen = 0;
	}
	return 0;
}

/* Some bytes into msg once sock is readable within timeout_ms: how many
 * (> 0), 0 when a signal came first (try again), or a negative errno
 * (-ETIMEDOUT; -EPIPE: the other process closed its end). */
static ssize_t recv_some(int sock, struct msghdr *msg, int timeout_ms)
{
	struct pollfd pfd = {.fd = sock, .events = POLLIN};
	ssize_t n;
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return call_failed("wait for the other process");
	if (ret == 0)
		return -ETIMEDOUT;
	n = recvmsg(sock, msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return call_failed("receive from the other process");
	return n ? n : -EPIPE;
}

int rk_share_msg_recv(int sock, void *buf, size_t len, int timeout_ms, int *fd_p)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	size_t done = 0;
	int fd = -1;

	while (done < len) {
		struct iovec iov = {.iov_base = (char *)buf + done, .iov_len = len - done};
		struct msghdr msg = {.msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = ctl.buf,
				     .msg_controllen = sizeof(ctl.buf)};
		struct cmsghdr *c;
		ssize_t n = recv_some(sock, &msg, timeout_ms);

		if (n < 0) {
			if (fd >= 0)
				close(fd);
			return (int)n;
		}
		if (!n)
			continue;
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && fd < 0)
				memcpy(&fd, CMSG_DATA(c), sizeof(int));
		done += (size_t)n;
	}
	if (fd_p)
		*fd_p = fd;
	else if (fd >= 0)
		close(fd);
	return 0;
}

int rk_share_send_handles(int sock, struct ibv_context *ctx, const struct ibv_pd *pd,
			  const struct ibv_mr *mr)
{
	struct rk_share_handles h = {
		.pd_handle = pd->handle,
		.mr_handle = mr->handle,
		.mr_addr = (uint64_t)(uintptr_t)mr->addr,
		.mr_len = mr->length,
		.lkey = mr->lkey,
		.rkey = mr->rkey,
	};

	return rk_share_msg_send(sock, &h, sizeof(h), ctx->cmd_fd);
}

int rk_share_recv_handles(int sock, int timeout_ms, int *cmd_fd_p, struct rk_share_handles *h)
{
	struct rk_share_handles got;
	int fd = -1, ret;

	ret = rk_share_msg_recv(sock, &got, sizeof(got), timeout_ms, &fd);
	if (ret) {
		if (ret == -EPIPE || ret == -ETIMEDOUT)
			rk_error("receive the owner's command fd and handles: %s",
				 ret == -EPIPE ? "the owner closed the socket" : "nothing came");
		return ret;
	}
	if (fd < 0) {
		rk_error("the owner's message carried no file descriptor (SCM_RIGHTS)");
		return -EPROTO;
	}
	*cmd_fd_p = fd;
	*h = got;
	return 0;
}

/* Which provider drives the device behind a command fd: its name, for messages. */
static const char *device_of_fd(int cmd_fd, char *buf, size_t len)
{
	char path[64], target[256];
	ssize_t n;
	const char *base;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", cmd_fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return "the device";
	target[n] = '\0';
	base = strrchr(target, '/');
	snprintf(buf, len, "%.63s", base ? base + 1 : target);
	return buf;
}

int rk_share_import(int cmd_fd, const struct rk_share_handles *h, struct rk_imported **imp_p)
{
	struct rk_imported *imp;
	struct ibv_context *ctx;
	char name[64];
	int ret;

	imp = calloc(1, sizeof(*imp));
	if (!imp)
		return -ENOMEM;
	errno = 0;
	ctx = ibv_import_device(cmd_fd);
	if (!ctx) {
		ret = errno ? -errno : -EOPNOTSUPP;
		if (ret == -EOPNOTSUPP)
			rk_error("ibv_import_device (command fd %d, %s): EOPNOTSUPP from the "
				 "provider: it cannot import a context from another process "
				 "(today only mlx5 can); share the memory instead: one memfd "
				 "mapped by each process, each with its own context, PD and MR "
				 "(rdmakit share shm)",
				 cmd_fd, device_of_fd(cmd_fd, name, sizeof(name)));
		else
			rk_error("ibv_import_device (command fd %d): %s", cmd_fd, rk_strerror(ret));
		goto err_free;
	}
	ret = rk_device_wrap(ctx, &imp->dev);
	if (ret)
		goto err_close_ctx;
	errno = 0;
	imp->pd = ibv_import_pd(ctx, h->pd_handle);
	if (!imp->pd) {
		ret = errno ? -errno : -EINVAL;
		rk_error("ibv_import_pd (handle %u) on %s: %s", h->pd_handle, imp->dev->info.name,
			 rk_strerror(ret));
		goto err_unwrap;
	}
	errno = 0;
	imp->mr = ibv_import_mr(imp->pd, h->mr_handle);
	if (!imp->mr) {
		ret = errno ? -errno : -EINVAL;
		rk_error("ibv_import_mr (handle %u) on %s: %s", h->mr_handle, imp->dev->info.name,
			 rk_strerror(ret));
		goto err_unimport_pd;
	}
	*imp_p = imp;
	return 0;

err_unimport_pd:
	ibv_unimport_pd(imp->pd);
err_unwrap:
	rk_device_close(imp->dev);
err_close_ctx:
	ibv_close_device(ctx); /* it owns cmd_fd now */
	free(imp);
	return ret;
err_free:
	close(cmd_fd); /* consumed either way */
	free(imp);
	return ret;
}

void rk_share_unimport(struct rk_imported *imp)
{
	struct ibv_context *ctx;

	if (!imp)
		return;
	ctx = imp->dev->ctx;
	ibv_unimport_mr(imp->mr);
	ibv_unimport_pd(imp->pd);
	rk_device_close(imp->dev); /* a wrapped context: left open here */
	ibv_close_device(ctx);
	free(imp);
}

int rk_shm_create(const char *name, size_t len, int *fd_p)
{
	int fd, ret;

	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		rk_error("memfd_create %s: %m", name);
		return ret;
	}
	if (ftruncate(fd, (off_t)len)) {
		ret = -errno;
		rk_error("size the shared memory %s to %zu bytes: %m", name, len);
		close(fd);
		return ret;
	}
	*fd_p = fd;
	return 0;
}

int rk_shm_map(int fd, size_t len, void **buf_p)
{
	void *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int ret;

	if (buf == MAP_FAILED) {
		ret = -errno;
		rk_error("map %zu bytes of shared memory (fd %d): %m", len, fd);
		return ret;
	}
	*buf_p = buf;
	return 0;
}

void rk_shm_unmap(void *buf, size_t len)
{
	if (buf)
		munmap(buf, len);
}

int rk_fork_init(void)
{
	return rk_verbs_err(ibv_fork_init());
}

const char *rk_fork_status_str(enum ibv_fork_status status)
{
	switch (status) {
	case IBV_FORK_DISABLED:
		return "DISABLED";
	case IBV_FORK_ENABLED:
		return "ENABLED";
	case IBV_FORK_UNNEEDED:
		return "UNNEEDED";
	}
	return "UNKNOWN";
}
