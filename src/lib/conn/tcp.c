/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The out-of-band exchange over TCP: listen, accept, connect with retry, and
 * the byte transport under the control channel. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdmakit/stop.h>
#include <rdmakit/tcp.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>

#include "base/clock.h"
#include "conn/tcp_int.h"

#define RETRY_INTERVAL_MS 200

static void addr_str(const struct sockaddr *sa, char *buf, size_t len, bool with_port)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		inet_ntop(AF_INET, &s->sin_addr, host, sizeof(host));
		port = ntohs(s->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
		/* An IPv4 peer on a dual-stack socket: show it as IPv4. */
		if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr))
			inet_ntop(AF_INET, &s->sin6_addr.s6_addr[12], host, sizeof(host));
		port = ntohs(s->sin6_port);
	}
	if (with_port)
		snprintf(buf, len, "%s:%u", host, port);
	else
		snprintf(buf, len, "%s", host);
}

static int tcp_send(struct rk_ctl *ctl, const uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(ctl->fd, buf + off, len - off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		off += (size_t)n;
	}
	return 0;
}

/* Wait until fd is readable or the deadline (-1: none) passes. */
static int wait_readable(int fd, int64_t deadline)
{
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int wait = -1;
		int n;

		if (deadline >= 0) {
			int64_t left = deadline - now_ms();

			if (left <= 0)
				return -ETIMEDOUT;
			wait = (int)left;
		}
		n = poll(&pfd, 1, wait);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int tcp_recv(struct rk_ctl *ctl, uint8_t *buf, size_t len, int timeout_ms, size_t *got_p)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	size_t off = 0;
	int ret = 0;

	/* Read first, wait only when nothing is there: a message's body
	 * usually arrives with its header, and a SETUP window's messages
	 * together (a poll and two clock reads saved per read). */
	while (off < len) {
		ssize_t n = recv(ctl->fd, buf + off, len - off, MSG_DONTWAIT);

		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n == 0) {
			ret = -ECONNRESET;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			ret = -errno;
			break;
		}
		ret = wait_readable(ctl->fd, deadline);
		if (ret)
			break;
	}
	*got_p = off;
	return ret;
}

/* Readable (a message's bytes, or the peer's close: the read that follows
 * tells which). A signal ends the wait: 0. */
static int tcp_pending(struct rk_ctl *ctl, int timeout_ms)
{
	struct pollfd pfd = {.fd = ctl->fd, .events = POLLIN};
	int n = poll(&pfd, 1, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n > 0;
}

bool rk_tcp_peer_closed(const struct rk_ctl *ctl)
{
	struct pollfd pfd = {.fd = ctl->fd, .events = POLLRDHUP};

	if (ctl->fd < 0 || ctl->ops->pending != tcp_pending)
		return false;
	return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static void tcp_close(struct rk_ctl *ctl)
{
	close(ctl->fd);
	free(ctl);
}

void rk_tcp_close_reset(struct rk_ctl *ctl)
{
	const struct linger reset = {.l_onoff = 1, .l_linger = 0};

	if (ctl && ctl->ops->close == tcp_close &&
	    setsockopt(ctl->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset)))
		rk_debug("SO_LINGER on the connection to %s: %m", ctl->peer);
	rk_ctl_close(ctl);
}

static const struct rk_ctl_ops tcp_ops = {
	.send = tcp_send,
	.recv = tcp_recv,
	.close = tcp_close,
	.pending = tcp_pending,
};

/* Wrap a connected socket: names of both ends, no Nagle (messages are small
 * and each one waits for an answer). */
static int ctl_from_fd(int fd, struct rk_ctl **ctl_p)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct rk_ctl *ctl;
	int one = 1;

	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -ENOMEM;
	ctl->ops = &tcp_ops;
	ctl->fd = fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!getpeername(fd, (struct sockaddr *)&ss, &sl))
		addr_str((struct sockaddr *)&ss, ctl->peer, sizeof(ctl->peer), true);
	sl = sizeof(ss);
	if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
		addr_str((struct sockaddr *)&ss, ctl->local_ip, sizeof(ctl->local_ip), false);
	*ctl_p = ctl;
	return 0;
}

int rk_tcp_listen(const char *bind_ip, uint16_t port, int *fd_p)
{
	struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				 .ai_socktype = SOCK_STREAM};
	struct addrinfo *res, *ai;
	char service[8];
	int fd = -1, one = 1, ret, gai;

	snprintf(service, sizeof(service), "%u", port);
	/* With no address, prefer the IPv6 wildcard: it takes IPv4 too. */
	hints.ai_family = bind_ip ? AF_UNSPEC : AF_INET6;
	gai = getaddrinfo(bind_ip, service, &hints, &res);
	if (gai && !bind_ip) {
		hints.ai_family = AF_INET;
		gai = getaddrinfo(NULL, service, &hints, &res);
	}
	if (gai) {
		rk_error("listen on %s port %u: %s", bind_ip ? bind_ip : "any address", port,
			 gai_strerror(gai));
		return -EINVAL;
	}
	ret = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6) {
			int zero = 0;

			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		}
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 8))
			break;
		ret = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		rk_error("listen on %s port %u: %s%s", bind_ip ? bind_ip : "any address", port,
			 rk_strerror(ret),
			 ret == -EADDRINUSE ? " (another server on that port? choose one with -p)" :
					      "");
		return ret;
	}
	*fd_p = fd;
	return 0;
}

int rk_tcp_accept(int listen_fd, int timeout_ms, struct rk_ctl **ctl_p)
{
	struct pollfd pfd = {.fd = listen_fd, .events = POLLIN};
	int fd, ret;

	for (;;) {
		/* A stop request that came before the wait (while a server
		 * set up) ends it too: its signal's EINTR was spent then. */
		if (rk_stop_requested())
			return -EINTR; /* not an error */
		ret = poll(&pfd, 1, timeout_ms);
		if (ret >= 0 || errno != EINTR)
			break;
	}
	if (ret == 0) {
		rk_error("no client connected within %d ms", timeout_ms);
		return -ETIMEDOUT;
	}
	if (ret < 0) {
		ret = -errno;
		rk_error("wait for a client: %m");
		return ret;
	}
	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		rk_error("accept a client: %m");
		return ret;
	}
	ret = ctl_from_fd(fd, ctl_p);
	if (ret)
		close(fd);
	return ret;
}

int rk_tcp_refuse_waiting(int listen_fd, int code, const char *reason)
{
	struct pollfd pfd = {.fd = listen_fd, .events = POLLIN};
	struct rk_ctl *ctl;
	int n = 0;

	while (poll(&pfd, 1, 0) == 1) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			break;
		if (ctl_from_fd(fd, &ctl)) {
			close(fd);
			break;
		}
		rk_info("refusing %s: %s", ctl->peer, reason);
		rk_ctl_send_error(ctl, code, "%s", reason);
		rk_ctl_close(ctl);
		n++;
	}
	return n;
}

/* One connection attempt to any of the resolved addresses. */
static int try_connect(const struct addrinfo *res, int *fd_p)
{
	int ret = -ECONNREFUSED;

	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);

		if (fd < 0) {
			ret = -errno;
			continue;
		}
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			*fd_p = fd;
			return 0;
		}
		ret = -errno;
		close(fd);
	}
	return ret;
}

int rk_tcp_connect(const char *host, uint16_t port, int retry_ms, struct rk_ctl **ctl_p)
{
	struct addrinfo hints = {.ai_flags = AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
	int64_t deadline = now_ms() + (retry_ms > 0 ? retry_ms : 0);
	struct addrinfo *res;
	char service[8];
	int fd = -1, ret, gai, tries = 0;

	snprintf(service, sizeof(service), "%u", port);
	gai = getaddrinfo(host, service, &hints, &res);
	if (gai) {
		rk_error("server address '%s': %s", host, gai_strerror(gai));
		return -EINVAL;
	}
	for (;;) {
		tries++;
		ret = try_connect(res, &fd);
		if (!ret)
			break;
		/* Nothing listening yet, or no route yet: the server may still be
		 * starting. Anything else will not get better by waiting. */
		if (ret != -ECONNREFUSED && ret != -ENETUNREACH && ret != -EHOSTUNREACH &&
		    ret != -ETIMEDOUT)
			break;
		if (now_ms() + RETRY_INTERVAL_MS > deadline)
			break;
		if (tries == 1)
			rk_info("%s port %u: %s; retrying for up to %d ms", host, port,
				rk_strerror(ret), retry_ms);
		usleep(RETRY_INTERVAL_MS * 1000);
	}
	freeaddrinfo(res);
	if (ret) {
		if (tries > 1)
			rk_error("connect to %s port %u: %s; gave up after %d tries in %d ms (is the "
				 "server running, and on that port?)",
				 host, port, rk_strerror(ret), tries, retry_ms);
		else
			rk_error("connect to %s port %u: %s", host, port, rk_strerror(ret));
		return ret; /* the error that failed, as said: a script reads it too */
	}
	ret = ctl_from_fd(fd, ctl_p);
	if (ret)
		close(fd);
	return ret;
}
