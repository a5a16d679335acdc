/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: a shared secret on the control channel, so that a server hands
 * its buffer's address and rkey only to a client that knows the secret.
 *
 * Both sides read the same secret from a file (--auth-file). Before any key
 * or address travels, they run a challenge-response on the control channel
 * (wire.h's AUTH_* messages), HMAC-SHA256 from OpenSSL's libcrypto, with
 * fresh random nonces on both sides:
 *
 *   client -> server  AUTH_BEGIN     Nc (32 random bytes)
 *   server -> client  AUTH_CHALLENGE Ns (32 random bytes)
 *   client -> server  AUTH_RESPONSE  HMAC(secret, "rdmakit-auth-v1 client" || Ns || Nc)
 *   server -> client  AUTH_OK        HMAC(secret, "rdmakit-auth-v1 server" || Ns || Nc)
 *
 * The server checks the client's HMAC (CRYPTO_memcmp, constant time) and
 * refuses with an ERROR message naming why; the client checks the server's
 * HMAC, so it also knows it talks to a holder of the secret. The client
 * proves itself first: a peer without the secret never receives an HMAC made
 * with it over a nonce of its choice from a server. The labels differ per
 * role, so a response cannot be reflected back as a proof.
 *
 * What this does and does not protect: README.md, "Threat model".
 */
#ifndef RDMAKIT_AUTH_H
#define RDMAKIT_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmakit/ctl.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_AUTH_NONCE_LEN   32
#define RK_AUTH_MAC_LEN	    32
#define RK_AUTH_SECRET_MAX  4096 /* a longer file is refused: not a secret file */
#define RK_AUTH_SECRET_WEAK 16	 /* shorter secrets are accepted with a warning */

/* A loaded secret. Opaque; never printed. */
struct rk_auth;

enum rk_auth_role {
	RK_AUTH_CLIENT,
	RK_AUTH_SERVER,
};

/* Read the secret from path: the whole file, without trailing newlines (so
 * "echo secret > f" and "printf secret > f" agree). Refused, with a message
 * naming the file and why: a file that cannot be read, is empty, is larger
 * than RK_AUTH_SECRET_MAX, is not a regular file, or that group or others may
 * access (mode & 077: "chmod 600 PATH"). A secret under RK_AUTH_SECRET_WEAK
 * bytes is accepted with a warning. -ENOENT, -EACCES, -EINVAL, -EFBIG. */
int rk_auth_load(const char *path, struct rk_auth **auth_p);

/* A secret from memory (tests, or a tool with its own key store). len must
 * be 1..RK_AUTH_SECRET_MAX. */
int rk_auth_from_bytes(const void *secret, size_t len, struct rk_auth **auth_p);

/* Wipe and free. NULL is ignored. */
void rk_auth_free(struct rk_auth *auth);

/* role's proof: HMAC-SHA256(secret, "rdmakit-auth-v1 client|server" ||
 * server_nonce || client_nonce) into mac. */
int rk_auth_mac(const struct rk_auth *auth, enum rk_auth_role role,
		const uint8_t server_nonce[RK_AUTH_NONCE_LEN],
		const uint8_t client_nonce[RK_AUTH_NONCE_LEN], uint8_t mac[RK_AUTH_MAC_LEN]);

/* Whether mac is role's proof over the two nonces; constant-time compare. */
bool rk_auth_verify(const struct rk_auth *auth, enum rk_auth_role role,
		    const uint8_t server_nonce[RK_AUTH_NONCE_LEN],
		    const uint8_t client_nonce[RK_AUTH_NONCE_LEN],
		    const uint8_t mac[RK_AUTH_MAC_LEN]);

/* The client's side of the exchange on ctl, each wait bounded by
 * timeout_ms. 0 once the server accepted and proved it holds the secret;
 * -ECONNABORTED when the server refused (its reason is logged), -EACCES when
 * the server's proof is wrong (the server is told), or the channel's error. */
int rk_auth_client(struct rk_ctl *ctl, const struct rk_auth *auth, int timeout_ms);

/* The server's side: the first message on ctl must be AUTH_BEGIN. Anything
 * else (a client without a secret sends its HELLO) or a wrong response is
 * refused with -EACCES, logged here and told to the client. */
int rk_auth_server(struct rk_ctl *ctl, const struct rk_auth *auth, int timeout_ms);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
