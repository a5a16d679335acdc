/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared-secret authentication: the HMAC against values computed apart
 * (Python's hmac module), the secret file's checks, and the whole
 * challenge-response over a real TCP control channel on 127.0.0.1. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdmakit/auth.h>
#include <rdmakit/ctl.h>
#include <rdmakit/tcp.h>
#include <rdmakit/log.h>

#include "unit.h"

#define SECRET "correct horse battery staple"

/* hmac.new(b"correct horse battery staple", b"rdmakit-auth-v1 client" +
 * bytes(range(32)) + bytes(range(32, 64)), hashlib.sha256), and "server". */
static const char kat_client[] = "508b595ab821317c305f76495839ec189d692f927eac9a9cce2ae165dc033460";
static const char kat_server[] = "c017985366ac344fc54931e44ebc95643635f8381c3988eba999e223094cd3d5";

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void nonces(uint8_t ns[RK_AUTH_NONCE_LEN], uint8_t nc[RK_AUTH_NONCE_LEN])
{
	for (int i = 0; i < RK_AUTH_NONCE_LEN; i++) {
		ns[i] = (uint8_t)i;
		nc[i] = (uint8_t)(32 + i);
	}
}

/* Every log line, so tests can check what was said (and what never was). */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logbuf[8192];

static void capture(enum rk_log_level level, const char *msg, void *arg)
{
	pthread_mutex_lock(&log_lock);
	size_t n = strlen(logbuf);

	snprintf(logbuf + n, sizeof(logbuf) - n, "%s\n", msg);
	pthread_mutex_unlock(&log_lock);
}

static int setup_log(void **state)
{
	logbuf[0] = '\0';
	rk_log_set_level(RK_LOG_INFO);
	rk_log_set_handler(capture, NULL);
	return 0;
}

static int teardown_log(void **state)
{
	rk_log_set_handler(NULL, NULL);
	rk_log_set_level(RK_LOG_WARN);
	return 0;
}

static void test_mac_known_answer(void **state)
{
	uint8_t ns[RK_AUTH_NONCE_LEN], nc[RK_AUTH_NONCE_LEN], mac[RK_AUTH_MAC_LEN];
	char text[2 * RK_AUTH_MAC_LEN + 1];
	struct rk_auth *a;

	nonces(ns, nc);
	assert_int_equal(rk_auth_from_bytes(SECRET, strlen(SECRET), &a), 0);
	assert_int_equal(rk_auth_mac(a, RK_AUTH_CLIENT, ns, nc, mac), 0);
	hex(mac, sizeof(mac), text);
	assert_string_equal(text, kat_client);
	assert_int_equal(rk_auth_mac(a, RK_AUTH_SERVER, ns, nc, mac), 0);
	hex(mac, sizeof(mac), text);
	assert_string_equal(text, kat_server);
	rk_auth_free(a);
}

static void test_verify(void **state)
{
	uint8_t ns[RK_AUTH_NONCE_LEN], nc[RK_AUTH_NONCE_LEN], mac[RK_AUTH_MAC_LEN];
	struct rk_auth *a, *other;

	nonces(ns, nc);
	assert_int_equal(rk_auth_from_bytes(SECRET, strlen(SECRET), &a), 0);
	assert_int_equal(rk_auth_from_bytes(SECRET "!", strlen(SECRET) + 1, &other), 0);
	assert_int_equal(rk_auth_mac(a, RK_AUTH_CLIENT, ns, nc, mac), 0);
	assert_true(rk_auth_verify(a, RK_AUTH_CLIENT, ns, nc, mac));
	/* The other role's label, another secret, swapped or changed nonces. */
	assert_false(rk_auth_verify(a, RK_AUTH_SERVER, ns, nc, mac));
	assert_false(rk_auth_verify(other, RK_AUTH_CLIENT, ns, nc, mac));
	assert_false(rk_auth_verify(a, RK_AUTH_CLIENT, nc, ns, mac));
	ns[31] ^= 1;
	assert_false(rk_auth_verify(a, RK_AUTH_CLIENT, ns, nc, mac));
	ns[31] ^= 1;
	for (int bit = 0; bit < 8 * RK_AUTH_MAC_LEN; bit += 37) {
		mac[bit / 8] ^= (uint8_t)(1 << bit % 8);
		assert_false(rk_auth_verify(a, RK_AUTH_CLIENT, ns, nc, mac));
		mac[bit / 8] ^= (uint8_t)(1 << bit % 8);
	}
	assert_true(rk_auth_verify(a, RK_AUTH_CLIENT, ns, nc, mac));
	rk_auth_free(a);
	rk_auth_free(other);
	rk_auth_free(NULL);
}

static void test_from_bytes_limits(void **state)
{
	static uint8_t big[RK_AUTH_SECRET_MAX + 1];
	struct rk_auth *a = NULL;

	assert_int_equal(rk_auth_from_bytes("", 0, &a), -EINVAL);
	assert_int_equal(rk_auth_from_bytes(NULL, 3, &a), -EINVAL);
	assert_int_equal(rk_auth_from_bytes(big, sizeof(big), &a), -EINVAL);
	assert_null(a);
	assert_int_equal(rk_auth_from_bytes(big, RK_AUTH_SECRET_MAX, &a), 0);
	rk_auth_free(a);
}

/* A file in a fresh directory with content and mode; returns its path. */
static char dir[64];

static const char *write_file(const char *name, const void *data, size_t len, mode_t mode)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static void test_load(void **state)
{
	uint8_t ns[RK_AUTH_NONCE_LEN], nc[RK_AUTH_NONCE_LEN], mac[RK_AUTH_MAC_LEN];
	static char big[RK_AUTH_SECRET_MAX + 1];
	char text[2 * RK_AUTH_MAC_LEN + 1], path[160];
	struct rk_auth *a = NULL;
	const char *p;

	snprintf(dir, sizeof(dir), "/tmp/rk_auth_XXXXXX");
	assert_non_null(mkdtemp(dir));
	nonces(ns, nc);

	/* A trailing newline is not part of the secret. */
	p = write_file("good", SECRET "\n", strlen(SECRET) + 1, 0600);
	assert_int_equal(rk_auth_load(p, &a), 0);
	assert_int_equal(rk_auth_mac(a, RK_AUTH_CLIENT, ns, nc, mac), 0);
	hex(mac, sizeof(mac), text);
	assert_string_equal(text, kat_client);
	rk_auth_free(a);
	a = NULL;
	p = write_file("crlf", SECRET "\r\n", strlen(SECRET) + 2, 0400);
	assert_int_equal(rk_auth_load(p, &a), 0);
	assert_true(rk_auth_verify(a, RK_AUTH_CLIENT, ns, nc, mac));
	rk_auth_free(a);
	a = NULL;
	assert_not_contains(logbuf, SECRET);

	/* Others may read it: refused, saying how to fix it. */
	p = write_file("open", SECRET, strlen(SECRET), 0644);
	assert_int_equal(rk_auth_load(p, &a), -EACCES);
	assert_contains(logbuf, "mode 0644");
	assert_contains(logbuf, "chmod 600");
	p = write_file("group", SECRET, strlen(SECRET), 0640);
	assert_int_equal(rk_auth_load(p, &a), -EACCES);

	p = write_file("empty", "", 0, 0600);
	assert_int_equal(rk_auth_load(p, &a), -EINVAL);
	assert_contains(logbuf, "empty");
	p = write_file("newline", "\n\n", 2, 0600);
	assert_int_equal(rk_auth_load(p, &a), -EINVAL);

	memset(big, 'x', sizeof(big));
	p = write_file("big", big, sizeof(big), 0600);
	assert_int_equal(rk_auth_load(p, &a), -EFBIG);
	assert_contains(logbuf, "longer than 4096 bytes");
	p = write_file("max", big, RK_AUTH_SECRET_MAX, 0600);
	assert_int_equal(rk_auth_load(p, &a), 0);
	rk_auth_free(a);
	a = NULL;

	/* Short secrets work, with a warning. */
	p = write_file("short", "abc", 3, 0600);
	assert_int_equal(rk_auth_load(p, &a), 0);
	assert_contains(logbuf, "only 3 bytes");
	rk_auth_free(a);
	a = NULL;

	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(rk_auth_load(path, &a), -ENOENT);
	assert_contains(logbuf, "No such file");
	assert_int_equal(rk_auth_load(dir, &a), -EINVAL);
	assert_contains(logbuf, "not a regular file");
	assert_null(a);
	assert_not_contains(logbuf, SECRET);

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

/* ---- the exchange over TCP on 127.0.0.1 ---- */

struct peer {
	int listen_fd;
	uint16_t port;
	const struct rk_auth *auth; /* NULL: behave as a side without a secret */
	int ret;
};

/* Server: authenticate (or, without a secret, expect a HELLO), then send
 * one SYNC as the "buffer" that only an authenticated client may see. */
/* Waits are bounds, not measurements: generous, as valgrind on a loaded
 * 2-core host once took over 5 s for one step. */
#define WAIT_MS 30000

static void *server_main(void *arg)
{
	struct peer *p = arg;
	struct rk_ctl *ctl;
	struct rk_msg msg = {.type = RK_MSG_SYNC};

	p->ret = rk_tcp_accept(p->listen_fd, WAIT_MS, &ctl);
	if (p->ret)
		return NULL;
	if (p->auth)
		p->ret = rk_auth_server(ctl, p->auth, WAIT_MS);
	else
		p->ret = rk_ctl_expect(ctl, RK_MSG_HELLO, WAIT_MS, &msg);
	if (!p->ret) {
		msg.type = RK_MSG_SYNC;
		msg.u.sync.step = 42;
		p->ret = rk_ctl_send(ctl, &msg);
	}
	/* Everything the client sent was read: closing sends FIN, not RST,
	 * so the client still reads what came before. */
	rk_ctl_close(ctl);
	return NULL;
}

/* A secret as a process loads it; NULL for none. */
static struct rk_auth *load_secret(const char *secret)
{
	struct rk_auth *auth = NULL;

	if (secret)
		assert_int_equal(rk_auth_from_bytes(secret, strlen(secret), &auth), 0);
	return auth;
}

/* Run a server holding server_secret and a client holding client_secret
 * (NULL: a side without one); the client's result and the SYNC step it got
 * (0 if none). */
static int exchange(const char *server_secret, const char *client_secret, int *server_ret,
		    uint32_t *step)
{
	struct rk_auth *server_auth = load_secret(server_secret);
	struct rk_auth *client_auth = load_secret(client_secret);
	struct peer srv = {.auth = server_auth};
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct rk_ctl *ctl;
	struct rk_msg msg;
	pthread_t t;
	int ret;

	*step = 0;
	assert_int_equal(rk_tcp_listen("127.0.0.1", 0, &srv.listen_fd), 0);
	assert_int_equal(getsockname(srv.listen_fd, (struct sockaddr *)&sin, &len), 0);
	srv.port = ntohs(sin.sin_port);
	assert_int_equal(pthread_create(&t, NULL, server_main, &srv), 0);
	ret = rk_tcp_connect("127.0.0.1", srv.port, WAIT_MS, &ctl);
	assert_int_equal(ret, 0);
	if (client_auth) {
		ret = rk_auth_client(ctl, client_auth, WAIT_MS);
	} else {
		memset(&msg, 0, sizeof(msg));
		msg.type = RK_MSG_HELLO;
		msg.u.hello.ep.mtu = IBV_MTU_1024;
		ret = rk_ctl_send(ctl, &msg);
	}
	if (!ret) {
		ret = rk_ctl_expect(ctl, RK_MSG_SYNC, WAIT_MS, &msg);
		if (!ret)
			*step = msg.u.sync.step;
	}
	rk_ctl_close(ctl);
	pthread_join(t, NULL);
	close(srv.listen_fd);
	rk_auth_free(server_auth);
	rk_auth_free(client_auth);
	*server_ret = srv.ret;
	return ret;
}

static void test_exchange_right_secret(void **state)
{
	uint32_t step;
	int sret;

	/* Two loads of the same secret, as two processes would have. */
	assert_int_equal(exchange(SECRET, SECRET, &sret, &step), 0);
	assert_int_equal(sret, 0);
	assert_int_equal(step, 42);
	assert_contains(logbuf, "authenticated");
	assert_not_contains(logbuf, SECRET);
}

static void test_exchange_wrong_secret(void **state)
{
	uint32_t step;
	int sret;

	/* The server refuses; the client hears why; nothing else arrives. */
	assert_int_equal(exchange(SECRET, "not the secret", &sret, &step), -ECONNABORTED);
	assert_int_equal(sret, -EACCES);
	assert_int_equal(step, 0);
	assert_contains(logbuf, "authentication failed: its response does not match this "
				"server's shared secret");
	assert_contains(logbuf, "gave up: the server refused: authentication failed");
	assert_not_contains(logbuf, SECRET);
}

static void test_exchange_client_without_secret(void **state)
{
	uint32_t step;
	int sret, ret;

	ret = exchange(SECRET, NULL, &sret, &step);
	assert_int_equal(sret, -EACCES);
	assert_int_equal(ret, -ECONNABORTED);
	assert_int_equal(step, 0);
	assert_contains(logbuf, "sent HELLO without authenticating");
	assert_contains(logbuf, "start the client with --auth-file");
}

static void test_exchange_server_without_secret(void **state)
{
	uint32_t step;
	int sret, ret;

	/* A server that expects a HELLO gets AUTH_BEGIN: a protocol error for
	 * it (the library's server says more: tests/rdma/cli_auth.sh), and the
	 * client, left without a challenge, does not go on. */
	ret = exchange(NULL, SECRET, &sret, &step);
	assert_int_equal(sret, -EPROTO);
	assert_int_not_equal(ret, 0);
	assert_int_equal(step, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mac_known_answer),
		cmocka_unit_test(test_verify),
		cmocka_unit_test(test_from_bytes_limits),
		cmocka_unit_test_setup_teardown(test_load, setup_log, teardown_log),
		cmocka_unit_test_setup_teardown(test_exchange_right_secret, setup_log,
						teardown_log),
		cmocka_unit_test_setup_teardown(test_exchange_wrong_secret, setup_log,
						teardown_log),
		cmocka_unit_test_setup_teardown(test_exchange_client_without_secret, setup_log,
						teardown_log),
		cmocka_unit_test_setup_teardown(test_exchange_server_without_secret, setup_log,
						teardown_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
