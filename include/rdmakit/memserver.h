/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: the remote-memory server (`rdmakit memserver`), the server side of
 * memproto.h.
 *
 * One event loop serves every client: one RDMA CM event channel for the
 * listener and all its connections, the completion channel of the region
 * SENDs, a signalfd (optional) and a stop eventfd, all under one poll().
 * Every client session is a region of host memory of the size it asked,
 * zeroed, registered LOCAL_WRITE|REMOTE_READ|REMOTE_WRITE; every queue of the
 * session is an RC connection that receives one struct rk_mem_region. A
 * session without connections is kept opts.keep_s seconds, then freed.
 *
 * The pure parts (request checks, CIDR) are public too, for tests and for
 * other servers.
 */
#ifndef RDMAKIT_MEMSERVER_H
#define RDMAKIT_MEMSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <rdmakit/memproto.h>
#include <rdmakit/region.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define RK_MEMSERVER_MAX_COUNTERS 8

/* An address block: 198.18.0.0/24, fd00::/8, or one address (/32, /128). */
struct rk_cidr {
	int family;       /* AF_INET or AF_INET6 */
	uint8_t addr[16]; /* network byte order; 4 bytes used for AF_INET */
	unsigned int prefix;
};

/* Parse "ADDR[/PREFIX]". -EINVAL with a reason in why ("'10.0.0.0/33': the
 * prefix is above 32"). Host bits set below the prefix are an error too. */
int rk_cidr_parse(const char *text, struct rk_cidr *cidr_p, char *why, size_t why_len);

/* Whether sa (AF_INET or AF_INET6; an IPv4-mapped IPv6 address counts as its
 * IPv4 address) lies in cidr. */
bool rk_cidr_match(const struct rk_cidr *cidr, const struct sockaddr *sa);

/* "198.18.0.0/24". */
const char *rk_cidr_str(const struct rk_cidr *cidr, char *buf, size_t len);

/* A connect request, decoded (host byte order). */
struct rk_mem_request {
	uint16_t version;
	uint16_t queue;
	uint16_t queues;
	uint16_t flags; /* RK_MEM_REQ_* (in what was padding: the size is unchanged) */
	uint64_t session;
	uint64_t size;
};

/* Check a request's private data field by field (len bytes at data; RoCE
 * and IB pad it to 56). Returns 0 and fills *req_p, or a negative errno
 * with the reason in why: -EBADMSG (short, magic, reserved, unknown flags),
 * -EPROTONOSUPPORT (version), -EINVAL (queue, queues, size, a new session
 * on a queue other than 0), -ENOSPC (size above max_size; 0: no limit). */
int rk_mem_request_check(const void *data, size_t len, uint64_t max_size,
			 struct rk_mem_request *req_p, char *why, size_t why_len);

/* Encode the region SEND (40 bytes, big endian) into buf. */
void rk_mem_region_encode(uint16_t queue, uint64_t session, uint64_t addr, uint64_t length,
			  uint32_t rkey, uint32_t flags, struct rk_mem_region *out);

/* Decode a reject's private data (an rdmakit ERROR message). 0 and the code
 * and text, or -EBADMSG when it is not one. */
int rk_mem_reject_decode(const void *data, size_t len, int *code_p, char *text,
			 size_t text_len);

struct rk_memserver;

/* Faults for tests of clients (the rkblk module): what every established
 * queue's region message (or the region behind it) gets wrong. */
enum rk_memserver_inject {
	RK_MS_INJECT_NONE,
	RK_MS_INJECT_REGION_MAGIC,  /* a magic that is not RK_MEM_MAGIC */
	RK_MS_INJECT_REGION_LENGTH, /* length one block more than the session's */
	RK_MS_INJECT_REGION_SHORT,  /* 20 of the message's 40 bytes */
	RK_MS_INJECT_REGION_WRAP,   /* an address where address + length wraps */
	RK_MS_INJECT_WRONG_RKEY,    /* a well-formed message whose rkey is not the MR's */
	RK_MS_INJECT_READ_ONLY,     /* the region registered without REMOTE_WRITE */
	RK_MS_INJECT_REGISTER_FAIL, /* the registration after the accept fails (-ENOSPC) */
};

/* "region-magic", ... "wrong-rkey", "read-only", "register-fail" into *inject_p; -EINVAL for another name. */
int rk_memserver_inject_parse(const char *name, enum rk_memserver_inject *inject_p);

struct rk_memserver_opts {
	const char *bind;      /* NULL: every address */
	uint16_t port;         /* 0: RK_MEM_DEFAULT_PORT */
	const char *device;    /* NULL: any; else requests through other devices are refused */
	uint64_t max_size;     /* per session; 0: no limit */
	unsigned int max_clients; /* sessions at once; 0: no limit */
	unsigned int keep_s;   /* how long a session without connections is kept */
	const struct rk_cidr *allow; /* nallow blocks; 0: everyone */
	int nallow;
	const char *state_dir; /* NULL: anonymous memory */
	enum rk_mem_kind mem;  /* the sessions' memory without state_dir: host
				  (anonymous), hugepage, memfd, memfd-huge, or
				  auto (hugepage while the pool has room for the
				  session, else host); never dm. With state_dir:
				  host only (the files are the memory) */
	bool odp;              /* register sessions with on-demand paging */
	bool signals;          /* take SIGINT/SIGTERM (stop) and SIGUSR1 (status) */
	enum rk_memserver_inject inject; /* for tests; RK_MS_INJECT_NONE */
	/* Called from the loop on SIGUSR1 (may call rk_memserver_status()). */
	void (*on_status)(struct rk_memserver *srv, void *arg);
	void *arg;
};

/* The memory options checked as a command line gives them: never dm, and
 * host only with state_dir. 0, or -EINVAL with why naming the option. Pure
 * logic; rk_memserver_create() checks the same. */
int rk_memserver_check(const struct rk_memserver_opts *opts, char *why, size_t why_len);

/* Listen and adopt the sessions in opts->state_dir. Errors logged: -EINVAL
 * for dm or a kind other than host with state_dir, -EOPNOTSUPP for odp on a
 * device without it (opts->device, or the first), -ENOMEM for hugepage with
 * an empty pool. The opts
 * (and the arrays and strings it points to) must outlive the server. */
int rk_memserver_create(const struct rk_memserver_opts *opts, struct rk_memserver **srv_p);

/* The port it listens on (the one asked, or the default). */
uint16_t rk_memserver_port(const struct rk_memserver *srv);

/* Serve until rk_memserver_stop() or SIGINT/SIGTERM (with opts.signals).
 * Returns 0 for a requested stop, or a negative errno for a failure of the
 * loop itself (the listener's device removed, ...). */
int rk_memserver_run(struct rk_memserver *srv);

/* Ask run() to return; async-signal-safe and thread-safe. */
void rk_memserver_stop(struct rk_memserver *srv);

/* Free everything: connections closed, sessions freed (their files in the
 * state directory are kept, for the next server to adopt). NULL ignored. */
void rk_memserver_destroy(struct rk_memserver *srv);

struct rk_memserver_session_info {
	uint64_t id;
	char client[64];      /* address of the client that made it ("-": adopted, none yet) */
	uint64_t size;
	unsigned int queues;  /* connected now */
	uint64_t queue_mask;  /* which */
	time_t created;       /* wall clock */
	time_t idle_since;    /* 0 while connected */
	time_t expires;       /* 0 while connected */
	bool adopted;         /* from --state-dir at start */
	enum rk_mem_kind mem; /* what its memory is */
};

/* Data counters of one device port, as the device counts them for all its
 * traffic (one-sided RDMA is invisible to the server's software). */
struct rk_memserver_counters {
	char device[64];
	uint8_t port;
	bool available;       /* the port has counters/port_{xmit,rcv}_data */
	uint64_t xmit_bytes;  /* since the server started (the counter is in 4-byte words) */
	uint64_t rcv_bytes;
	/* Without data counters (rxe): the packet counters of hw_counters
	 * (sent_pkts, rcvd_pkts) since the server started, when there are. */
	bool has_packets;
	uint64_t sent_packets;
	uint64_t rcvd_packets;
};

struct rk_memserver_status {
	time_t started;
	uint16_t port;
	int nsessions;
	struct rk_memserver_session_info *sessions;
	uint64_t bytes;        /* sum of session sizes */
	unsigned int connections;
	uint64_t accepted, rejected, disconnected, expired, sessions_made;
	int ncounters;
	struct rk_memserver_counters counters[RK_MEMSERVER_MAX_COUNTERS];
};

/* A snapshot; free it with rk_memserver_status_free(). Call it from the
 * thread running the loop (or when it is not running). */
int rk_memserver_status(struct rk_memserver *srv, struct rk_memserver_status **st_p);
void rk_memserver_status_free(struct rk_memserver_status *st);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
