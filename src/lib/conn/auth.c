/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Shared-secret challenge-response on the control channel (auth.h). The
 * secret is never logged; buffers that held it are wiped. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <rdmakit/auth.h>
#include <rdmakit/error.h>
#include <rdmakit/log.h>

#define LABEL_CLIENT "rdmakit-auth-v1 client"
#define LABEL_SERVER "rdmakit-auth-v1 server"

_Static_assert(RK_AUTH_NONCE_LEN == RK_WIRE_AUTH_DATA, "AUTH message carries one nonce");
_Static_assert(RK_AUTH_MAC_LEN == RK_WIRE_AUTH_DATA, "AUTH message carries one HMAC");

struct rk_auth {
	size_t len;
	uint8_t key[RK_AUTH_SECRET_MAX];
};

int rk_auth_from_bytes(const void *secret, size_t len, struct rk_auth **auth_p)
{
	struct rk_auth *a;

	if (!secret || !len || len > RK_AUTH_SECRET_MAX)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	memcpy(a->key, secret, len);
	a->len = len;
	*auth_p = a;
	return 0;
}

void rk_auth_free(struct rk_auth *auth)
{
	if (!auth)
		return;
	OPENSSL_cleanse(auth, sizeof(*auth));
	free(auth);
}

/* Read all of fd (at most max bytes; one more tells it is too long). */
static ssize_t read_all(int fd, uint8_t *buf, size_t max)
{
	size_t got = 0;

	while (got <= max) {
		ssize_t n = read(fd, buf + got, max + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int rk_auth_load(const char *path, struct rk_auth **auth_p)
{
	uint8_t buf[RK_AUTH_SECRET_MAX + 1];
	struct stat st;
	ssize_t n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		rk_error("auth file %s: %m", path);
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		rk_error("auth file %s: stat: %m", path);
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rk_error("auth file %s: not a regular file", path);
		ret = -EINVAL;
		goto err_close;
	}
	/* As ssh does for private keys: a secret others can read is no secret. */
	if (st.st_mode & 077) {
		rk_error("auth file %s: group or others may access it (mode 0%03o); make it "
			 "private with: chmod 600 %s",
			 path, (unsigned int)(st.st_mode & 0777), path);
		ret = -EACCES;
		goto err_close;
	}
	n = read_all(fd, buf, RK_AUTH_SECRET_MAX);
	if (n < 0) {
		ret = -errno;
		rk_error("auth file %s: read: %m", path);
		goto err_close;
	}
	if ((size_t)n > RK_AUTH_SECRET_MAX) {
		rk_error("auth file %s: longer than %d bytes; a shared secret file holds one "
			 "secret (for example: head -c 32 /dev/urandom | base64 > FILE)",
			 path, RK_AUTH_SECRET_MAX);
		ret = -EFBIG;
		goto err_wipe;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if (n == 0) {
		rk_error("auth file %s: empty (for example: head -c 32 /dev/urandom | base64 > "
			 "FILE; chmod 600 FILE)",
			 path);
		ret = -EINVAL;
		goto err_wipe;
	}
	if (n < RK_AUTH_SECRET_WEAK)
		rk_warn("auth file %s: the secret has only %zd bytes; one observed exchange lets "
			"an eavesdropper guess a short secret offline (use %d or more random "
			"bytes)",
			path, n, RK_AUTH_SECRET_WEAK);
	ret = rk_auth_from_bytes(buf, (size_t)n, auth_p);
err_wipe:
	OPENSSL_cleanse(buf, sizeof(buf));
err_close:
	close(fd);
	return ret;
}

int rk_auth_mac(const struct rk_auth *auth, enum rk_auth_role role,
		const uint8_t server_nonce[RK_AUTH_NONCE_LEN],
		const uint8_t client_nonce[RK_AUTH_NONCE_LEN], uint8_t mac[RK_AUTH_MAC_LEN])
{
	const char *label = role == RK_AUTH_CLIENT ? LABEL_CLIENT : LABEL_SERVER;
	uint8_t data[sizeof(LABEL_CLIENT) - 1 + 2 * RK_AUTH_NONCE_LEN];
	size_t llen = strlen(label);
	unsigned int mlen = 0;

	_Static_assert(sizeof(LABEL_CLIENT) == sizeof(LABEL_SERVER), "labels of one length");
	memcpy(data, label, llen);
	memcpy(data + llen, server_nonce, RK_AUTH_NONCE_LEN);
	memcpy(data + llen + RK_AUTH_NONCE_LEN, client_nonce, RK_AUTH_NONCE_LEN);
	if (!HMAC(EVP_sha256(), auth->key, (int)auth->len, data, sizeof(data), mac, &mlen) ||
	    mlen != RK_AUTH_MAC_LEN) {
		rk_error("HMAC-SHA256 failed in libcrypto");
		return -EIO;
	}
	return 0;
}

bool rk_auth_verify(const struct rk_auth *auth, enum rk_auth_role role,
		    const uint8_t server_nonce[RK_AUTH_NONCE_LEN],
		    const uint8_t client_nonce[RK_AUTH_NONCE_LEN],
		    const uint8_t mac[RK_AUTH_MAC_LEN])
{
	uint8_t want[RK_AUTH_MAC_LEN];
	bool ok;

	if (rk_auth_mac(auth, role, server_nonce, client_nonce, want))
		return false;
	ok = CRYPTO_memcmp(want, mac, RK_AUTH_MAC_LEN) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}

static int make_nonce(uint8_t nonce[RK_AUTH_NONCE_LEN])
{
	if (RAND_bytes(nonce, RK_AUTH_NONCE_LEN) != 1) {
		rk_error("no random bytes from libcrypto for the authentication nonce");
		return -EIO;
	}
	return 0;
}

static int send_auth(struct rk_ctl *ctl, enum rk_msg_type type, const uint8_t *data)
{
	struct rk_msg msg = {.type = type};

	memcpy(msg.u.auth.data, data, RK_WIRE_AUTH_DATA);
	return rk_ctl_send(ctl, &msg);
}

/* One step of the handshake: send type with data, then the peer's answer,
 * which must be a want (rk_ctl_expect()). */
static int auth_step(struct rk_ctl *ctl, enum rk_msg_type type, const uint8_t *data,
		     enum rk_msg_type want, int timeout_ms, struct rk_msg *msg_p)
{
	int ret = send_auth(ctl, type, data);

	if (ret)
		return ret;
	return rk_ctl_expect(ctl, want, timeout_ms, msg_p);
}

/* Refuse the peer: log why (fmt), tell it tell. Returns -EACCES. */
static __attribute__((format(printf, 3, 4))) int refuse(struct rk_ctl *ctl, const char *tell,
							const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	rk_error("%s", why);
	rk_ctl_send_error(ctl, -EACCES, "%s", tell);
	return -EACCES;
}

/* A wrong proof, by the role that should have made it: why the side that
 * checked it refuses (in its log), and what it tells the peer. */
static const struct {
	const char *why, *tell;
} wrong_proof[] = {
	[RK_AUTH_SERVER] = {"the server's proof does not match this side's shared secret "
			    "(different --auth-file on the two sides, or not the server meant)",
			    "authentication failed: the client found the server's proof wrong "
			    "(different --auth-file?)"},
	[RK_AUTH_CLIENT] = {"its response does not match this server's shared secret (wrong "
			    "--auth-file on the client?)",
			    "the server refused: authentication failed (wrong shared secret in "
			    "--auth-file)"},
};

/* Check the peer's proof mac, made as role over the nonces: 0, or -EACCES
 * after refusing the peer. */
static int check_proof(struct rk_ctl *ctl, const struct rk_auth *auth, enum rk_auth_role role,
		       const uint8_t *ns, const uint8_t *nc, const uint8_t *mac)
{
	if (rk_auth_verify(auth, role, ns, nc, mac))
		return 0;
	return refuse(ctl, wrong_proof[role].tell, "refusing %s: authentication failed: %s",
		      ctl->peer, wrong_proof[role].why);
}

int rk_auth_client(struct rk_ctl *ctl, const struct rk_auth *auth, int timeout_ms)
{
	uint8_t nc[RK_AUTH_NONCE_LEN], ns[RK_AUTH_NONCE_LEN], mac[RK_AUTH_MAC_LEN];
	struct rk_msg msg;
	int ret;

	ret = make_nonce(nc);
	if (ret)
		return ret;
	/* A server without a secret answers with an ERROR: logged by rk_ctl_recv. */
	ret = auth_step(ctl, RK_MSG_AUTH_BEGIN, nc, RK_MSG_AUTH_CHALLENGE, timeout_ms, &msg);
	if (ret)
		return ret;
	memcpy(ns, msg.u.auth.data, sizeof(ns));
	ret = rk_auth_mac(auth, RK_AUTH_CLIENT, ns, nc, mac);
	if (ret)
		return ret;
	ret = auth_step(ctl, RK_MSG_AUTH_RESPONSE, mac, RK_MSG_AUTH_OK, timeout_ms, &msg);
	if (ret)
		return ret;
	ret = check_proof(ctl, auth, RK_AUTH_SERVER, ns, nc, msg.u.auth.data);
	if (ret)
		return ret;
	rk_info("authenticated with %s by the shared secret", ctl->peer);
	return 0;
}

int rk_auth_server(struct rk_ctl *ctl, const struct rk_auth *auth, int timeout_ms)
{
	uint8_t nc[RK_AUTH_NONCE_LEN], ns[RK_AUTH_NONCE_LEN], mac[RK_AUTH_MAC_LEN];
	struct rk_msg msg;
	int ret;

	ret = rk_ctl_recv(ctl, timeout_ms, &msg);
	if (ret)
		return ret;
	if (msg.type != RK_MSG_AUTH_BEGIN)
		return refuse(ctl,
			      "the server requires a shared secret: start the client with "
			      "--auth-file",
			      "refusing %s: it sent %s without authenticating, and this server "
			      "requires the shared secret (--auth-file)",
			      ctl->peer, rk_msg_type_str(msg.type));
	memcpy(nc, msg.u.auth.data, sizeof(nc));
	ret = make_nonce(ns);
	if (ret)
		goto err_tell_peer;
	ret = auth_step(ctl, RK_MSG_AUTH_CHALLENGE, ns, RK_MSG_AUTH_RESPONSE, timeout_ms, &msg);
	if (ret)
		return ret;
	ret = check_proof(ctl, auth, RK_AUTH_CLIENT, ns, nc, msg.u.auth.data);
	if (ret)
		return ret;
	ret = rk_auth_mac(auth, RK_AUTH_SERVER, ns, nc, mac);
	if (ret)
		goto err_tell_peer;
	ret = send_auth(ctl, RK_MSG_AUTH_OK, mac);
	if (ret)
		return ret;
	rk_info("authenticated %s by the shared secret", ctl->peer);
	return 0;

err_tell_peer:
	rk_ctl_send_error(ctl, ret, "the server could not authenticate: %s", rk_strerror(ret));
	return ret;
}
