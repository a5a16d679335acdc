/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit: why RDMA does not work on this host, and what to change.
 *
 * rk_doctor_run() makes the local checks in order, one result each, handed
 * to a callback as it is made: the kernel's RDMA modules; /dev/infiniband
 * and this user's access to it; a user-space provider (libibverbs) for each
 * device; each port's state and physical state; on a RoCE port its netdev
 * (up, its IP addresses, a RoCE v2 GID for each, its MTU against the port's
 * active MTU); on an InfiniBand port its LID and subnet manager; the
 * locked-memory limit; the huge page pool; firewall rules that drop RoCE v2
 * (UDP 4791) or rdmakit's port; error counters that moved since boot; and
 * the software devices (rxe, siw), which have no line rate.
 *
 * What the kernel shows in /proc, /sys and /dev is read under a root
 * directory (the real / by default), so a test can give it a tree of its
 * own; libibverbs is asked for real.
 *
 * With a host (rk_doctor_opts.host), the checks go on along the path to a
 * peer that serves doctor clients (rk_doctor_serve(), `rdmakit doctor
 * --server`): TCP reach, RDMA CM's route and the device it picks, a
 * connection over the TCP exchange (another rdmakit server is named by what
 * it is and allows), both sides' GID and its type, the path MTU and the two
 * ends' MTUs, a SEND, an RDMA WRITE and an RDMA READ each checked byte by
 * byte, and a short bandwidth and latency probe; then a one-line verdict.
 */
#ifndef RDMAKIT_DOCTOR_H
#define RDMAKIT_DOCTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

enum rk_doctor_status {
	RK_DOCTOR_PASS = 0,
	RK_DOCTOR_WARN,
	RK_DOCTOR_FAIL,
	RK_DOCTOR_SKIP, /* could not be checked: seen says why */
};

/* What a typical run pins, for the locked-memory check: rdmakit bench's
 * buffers and a provider's queues on one or two QPs come to a few MiB; 64 MiB
 * leaves room for larger messages and several connections. */
#define RK_DOCTOR_MEMLOCK_TYPICAL (64ull << 20)
/* Below this even one small QP and its buffer may not register. */
#define RK_DOCTOR_MEMLOCK_MIN (1ull << 20)

/* One check's result. */
struct rk_doctor_check {
	const char *id;	 /* what was checked, stable for scripts: "kernel_modules",
			    "dev_files", "devices", "provider", "port_state", "netdev",
			    "addresses", "roce_gids", "mtu", "ib_lid_sm", "memlock",
			    "hugepages", "firewall", "error_counters", "software_device";
			    with a host: "peer_tcp", "peer_cm_route", "peer_server",
			    "peer_gid", "peer_mtu", "peer_send", "peer_write",
			    "peer_read", "peer_probe" */
	char title[96];	 /* "kernel RDMA modules", "rxe0 port 1 netdev" */
	char device[64]; /* the device it is about, "" for the host */
	uint8_t port;	 /* its port, 0 for none */
	enum rk_doctor_status status;
	int err;	 /* WARN, FAIL: a negative errno of the kind of trouble
			    (-ENOENT missing, -EACCES no access, -ENETDOWN down,
			    -EADDRNOTAVAIL no address, -ENOMEM memory); else 0 */
	char seen[1024]; /* what was seen, or for SKIP why it was not checked */
	char fix[1024];	 /* WARN, FAIL: the command or setting that fixes it; "" else */
};

/* Called with each check as it is made; the check is valid during the call. */
typedef void (*rk_doctor_fn)(const struct rk_doctor_check *check, void *arg);

/* The IP addresses of netdev (as text, "198.18.0.1", "fe80::1"): up to max
 * into addrs; returns how many, or a negative errno. */
typedef int (*rk_doctor_addrs_fn)(const char *netdev, char (*addrs)[INET6_ADDRSTRLEN], int max,
				  void *arg);

struct rk_doctor_opts {
	const char *device;    /* NULL: every device */
	const char *root;      /* NULL: "/"; a directory whose proc/, sys/, dev/ and
				  lib/modules/ stand for the host's */
	uint64_t memlock_need; /* bytes a typical run pins; 0: RK_DOCTOR_MEMLOCK_TYPICAL */
	/* Tests: stand-ins for what is not a file. NULL: getifaddrs(3); run
	   `nft -a list ruleset` and `iptables -S` where present (as root). */
	rk_doctor_addrs_fn addrs;
	void *addrs_arg;
	const char *nft_text;	   /* the ruleset as nft -a list ruleset prints it */
	const char *iptables_text; /* the rules as iptables -S prints them */
	/* The path to a peer serving doctor clients, after the local checks.
	   NULL: the local checks alone. device (when set) is the one the
	   peer's route must go through. */
	const char *host;
	uint16_t port;	/* 0: RK_DEFAULT_PORT (TCP) */
	int timeout_ms; /* bound on each wait of the path's checks; 0: 5000 */
	int probe_ms;	/* the bandwidth and latency probe, half each; 0: 2000 */
};

struct rk_doctor_summary {
	int pass, warn, fail, skip;
	/* With a host: the verdict in one line, "PASS: ...", "WARN: ..." or
	   "FAIL: ..." naming the first failure (or warning); "" without. */
	char verdict[320];
};

/* Make the checks, calling fn with each (fn may be NULL), and count them
 * into *sum_p. Returns 0 when the checks could be made (whatever they
 * found), or a negative errno (-ENOMEM) when they could not. Logs nothing
 * of what it finds: the checks say it (with a host, the library's own
 * errors on the way, as RDMA CM's or a connection's, are logged as ever and
 * quoted in the check they fail). */
int rk_doctor_run(const struct rk_doctor_opts *opts, rk_doctor_fn fn, void *arg,
		  struct rk_doctor_summary *sum_p);

/* The exit status a summary calls for: 0 all passed (or were skipped),
 * 1 any failed, 3 (RK_EXIT_GATE) only warnings. */
int rk_doctor_exit_status(const struct rk_doctor_summary *sum);

/* "PASS", "WARN", "FAIL", "SKIP". */
const char *rk_doctor_status_str(enum rk_doctor_status status);

/* ---- The server of doctor clients ---- */

struct rk_doctor_server_opts {
	const char *bind_ip;  /* NULL: every address */
	uint16_t port;	      /* 0: RK_DEFAULT_PORT */
	const char *device;   /* NULL: the first device */
	uint8_t port_num;     /* 0 means 1 */
	int timeout_ms;	      /* bound on each wait with a client; 0: 5000 */
	int wait_ms;	      /* give up when no client came this long; -1: forever */
	void (*on_listening)(void *arg); /* once it listens, with rk_doctor_serve()'s
					    arg (NULL: none) */
};

/* One client served. */
struct rk_doctor_served {
	char peer[80];	 /* "198.18.0.2:40112" */
	bool probe;	 /* it connected and left without a word: a reach probe */
	int status;	 /* 0, or the negative errno it ended with */
	char error[256]; /* status: what went wrong, as first logged */
	char device[64]; /* the device and port it was served on */
	uint8_t port_num;
	int path_mtu;	 /* bytes */
};

struct rk_doctor_serve_total {
	int served, failed, probes;
};

/* Listen once and serve doctor clients one after another (each its checked
 * SEND, WRITE, READ and probe) until a stop request (stop.h) or until no
 * client came within wait_ms; a client that fails or vanishes ends only its
 * own turn. A client of another command is refused, naming this server.
 * on_client (NULL: none) with each client as its turn ends. Returns 0 when
 * stopped, -ETIMEDOUT when wait_ms passed without a client, or the negative
 * errno (logged) of a listener that could not be set up; *total_p (may be
 * NULL) is filled in every case. */
int rk_doctor_serve(const struct rk_doctor_server_opts *opts,
		    void (*on_client)(const struct rk_doctor_served *c, void *arg), void *arg,
		    struct rk_doctor_serve_total *total_p);

/* ---- The parts that read text, for tests ---- */

/* The firewall rules in text (nft -a list ruleset's, or iptables -S's) held
 * against RoCE v2 (UDP 4791) and rdmakit's TCP/CM port (RK_DEFAULT_PORT):
 * the first rule of an input or output chain that decides such a packet,
 * or the chain's policy. FAIL naming a dropping rule and the command that
 * removes it (nft delete rule ... handle N; iptables -D ...), PASS when
 * nothing drops them. c->id, title and the rest are set. */
void rk_doctor_firewall_nft(const char *text, struct rk_doctor_check *c);
void rk_doctor_firewall_iptables(const char *text, struct rk_doctor_check *c);

/* The locked-memory check: soft limit (RLIM_INFINITY for none) against need,
 * with or without CAP_IPC_LOCK (which lifts the limit for registration). */
void rk_doctor_memlock(uint64_t limit, bool cap_ipc_lock, uint64_t need, struct rk_doctor_check *c);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
