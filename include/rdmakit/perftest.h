/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: perftest's exchange with rdma_cm (ib_write_bw -R), both roles, so
 * that `rdmakit bench --proto perftest` and perftest measure RDMA WRITE
 * bandwidth against each other. Matched to perftest 6.06 (the tag
 * v4.5-0.17, Debian 12's package 4.5+0.17-1): src/write_bw.c and
 * src/perftest_communication.c.
 *
 * What ib_write_bw -R does on the wire (one QP, one size, one direction):
 *  1. A control connection through RDMA CM to the server's port (18515):
 *     an RC QP, no private data, one receive of 56 bytes always posted.
 *     Every exchange below is one SEND each way on it: the client sends
 *     first and then receives, the server receives and then answers, and
 *     each side reposts its receive before it sends again (on iWARP a SEND
 *     that finds no receive ends the connection).
 *  2. The version: 16 bytes, a NUL-terminated number ("6.06"); a peer
 *     older than 5.70 is refused (perftest's own rule).
 *  3. The page size (its cycle buffer) and the cache line size: 4 bytes
 *     each, big-endian int; both sides take the larger.
 *  4. The MTU: 2 bytes, the IBV_MTU_* value as a decimal digit and a NUL.
 *  5. A sync (a 56-byte pingpong_dest, zeros), then the data connection:
 *     a second RDMA CM connection to the same port (the server listens
 *     again), then another sync.
 *  6. Each side's pingpong_dest (below), twice, then one more sync. From
 *     here on every sync carries the side's own pingpong_dest again (zeros
 *     before step 6), and perftest's client takes the server's rkey and
 *     address from the last one it received: a sync of zeros here would
 *     send its WRITEs to STag 0 (siw: TERMINATE, invalid STag).
 *  7. The client WRITEs size bytes iters times into the server's buffer
 *     (when size is at most half the page size, at addresses that step
 *     through one page; otherwise always at its start); the server waits
 *     for a sync that says the client is done.
 *  8. The reports, client's first, each field a message of 8 bytes, big
 *     endian: size, iterations, peak and average bandwidth (MB/s, 2^20
 *     bytes per second, as perftest reports by default: a peer run with
 *     --report_gbits sends Gb/s and cannot be told apart), message rate
 *     (millions per second). The server prints the client's.
 *  9. A last sync; then each side tears down (the client disconnects the
 *     data connection and waits for DISCONNECTED).
 * Each message is checked for its exact length and its fields' ranges
 * where it is received; a malformed one ends the run naming the step. */
#ifndef RDMAKIT_PERFTEST_H
#define RDMAKIT_PERFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmakit/traffic.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_PERFTEST_DEFAULT_PORT 18515
#define RK_PERFTEST_VERSION "6.06"    /* what this side says it is */
#define RK_PERFTEST_MIN_VERSION 5.70  /* the oldest peer perftest 6.06 talks to */
#define RK_PERFTEST_VERSION_LEN 16
#define RK_PERFTEST_DEST_LEN 56       /* sizeof(struct pingpong_dest) on LP64 */

/* perftest's struct pingpong_dest, as perftest's rdma_write_keys() puts it
 * on the wire: lid, out_reads, qpn, psn, rkey (4 bytes each, big endian),
 * 4 bytes of padding, vaddr (8, big endian), gid (16), srqn, gid_index
 * (4 each, big endian; perftest's reader ignores both). */
struct rk_perftest_dest {
	int32_t lid;
	int32_t out_reads;
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t vaddr;
	uint8_t gid[16];
	uint32_t srqn;
	int32_t gid_index;
};

void rk_perftest_dest_encode(const struct rk_perftest_dest *d, uint8_t out[RK_PERFTEST_DEST_LEN]);

/* Decode a received message of n bytes: -EBADMSG (why says so) unless n is
 * exactly RK_PERFTEST_DEST_LEN and the QP and packet sequence numbers fit
 * in 24 bits. */
int rk_perftest_dest_decode(const uint8_t *buf, size_t n, struct rk_perftest_dest *d, char *why,
			    size_t why_len);

/* The peer's version message (n bytes): a number, NUL-terminated within
 * RK_PERFTEST_VERSION_LEN, at least RK_PERFTEST_MIN_VERSION. Its text is
 * copied to text (RK_PERFTEST_VERSION_LEN bytes). 0, or -EBADMSG /
 * -EPROTONOSUPPORT with why. */
int rk_perftest_version_decode(const uint8_t *buf, size_t n, char text[RK_PERFTEST_VERSION_LEN],
			       char *why, size_t why_len);

/* A run's figures, as perftest's bw_report_data carries them. */
struct rk_perftest_report {
	uint64_t size;     /* bytes per message */
	uint64_t iters;    /* messages */
	double bw_peak;    /* MB/s (2^20 bytes per second) */
	double bw_avg;     /* MB/s */
	double msg_rate;   /* millions of messages per second */
};

/* The five 8-byte report messages (size, iters, bw_peak, bw_avg,
 * msg_rate), big endian, as perftest's xchg_bw_reports() sends them. */
void rk_perftest_report_encode(const struct rk_perftest_report *r, uint8_t out[5][8]);

/* Check one decoded report: -EBADMSG with why when a bandwidth or rate is
 * not a finite number >= 0, or when want_run and size or iters is 0. */
int rk_perftest_report_check(const struct rk_perftest_report *r, bool want_run, char *why,
			     size_t why_len);

struct rk_perftest_opts {
	bool server;
	const char *host;       /* client: the server's address; server: the address
				   to listen on (NULL: any) */
	uint16_t port;          /* 0: RK_PERFTEST_DEFAULT_PORT */
	const char *device;     /* NULL: the one RDMA CM picks; else the device the
				   connection must be on (refused otherwise) */
	uint32_t size;          /* bytes per WRITE (1 .. 2^30); the server sizes its
				   buffer by it, as perftest's server does by its -s */
	uint64_t iters;         /* client: WRITEs to post (perftest's -n) */
	uint32_t tx_depth;      /* client: WRITEs outstanding at most (0: 128,
				   perftest's default) */
	int timeout_ms;         /* connecting, and each exchange */
	int accept_timeout_ms;  /* server: for the client to come (-1: forever) */
	struct rk_traffic traffic;
	void (*on_listening)(void *arg); /* server: called once it listens */
	void *arg;
};

struct rk_perftest_result {
	bool server;
	char device[64];
	uint8_t port_num;
	char peer[64];
	char peer_version[RK_PERFTEST_VERSION_LEN];
	int path_mtu;                /* bytes */
	uint32_t qpn, peer_qpn;      /* the data QP's, and the peer's as its dest says */
	uint32_t peer_rkey;
	uint64_t peer_vaddr;
	uint32_t cycle_buffer;       /* the page size both sides use (the larger) */
	bool measured;               /* report holds the run (client: its own; server: the
					client's, as it reported it) */
	struct rk_perftest_report report;
	double seconds;              /* client: from the first post to the last completion */
	char error[320];             /* a failure: what, in which step */
};

/* Run perftest's exchange (ib_write_bw -R) as server or client: connect
 * (the client retries while nothing listens, up to timeout_ms), exchange,
 * WRITE iters x size (client) or lend the buffer (server), exchange the
 * reports, tear down. 0 or a negative errno (logged, and in result->error);
 * *result always filled. */
int rk_perftest_run(const struct rk_perftest_opts *opts, struct rk_perftest_result *result);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
