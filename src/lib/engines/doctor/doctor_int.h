/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to the doctor engine: one run's context, the files it reads
 * under the root, and the checks of each file. */
#ifndef RDMAKIT_LIB_DOCTOR_INT_H
#define RDMAKIT_LIB_DOCTOR_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmakit/conn.h>
#include <rdmakit/device.h>
#include <rdmakit/doctor.h>

#pragma GCC visibility push(hidden)

#define DOC_MAX_DEVICES 32

/* A device as sysfs shows it, and libibverbs' view of it when it opens. */
struct doc_dev {
	char name[64];
	char module[64];       /* its kernel driver ("mlx5_ib", "rdma_rxe", "siw"), "" unknown */
	struct rk_device *dev; /* opened through libibverbs, NULL when not */
};

/* This host's firewall rule (or policy) that drops RoCE v2 (UDP 4791), and
 * the command that removes it: "" when none was found. */
struct doc_fw_drop {
	char rule[256];
	char fix[320];
};

struct doc {
	const struct rk_doctor_opts *o;
	char root[PATH_MAX]; /* "" for the real / */
	rk_doctor_fn fn;
	void *arg;
	struct rk_doctor_summary sum;
	bool core_loaded;   /* ib_core */
	bool uverbs_loaded; /* ib_uverbs */
	struct doc_dev devs[DOC_MAX_DEVICES];
	int ndevs; /* those checked (-d: the one) */
	int nall;  /* all there are in sysfs */
	char first_fail[96], first_warn[96]; /* the titles, for the verdict */
	struct doc_fw_drop fw_roce;	     /* the firewall check's, for the path's */
};

/* Start a check: cleared, with its id, device, port and title. */
void doc_begin(struct rk_doctor_check *c, const char *id, const char *device, uint8_t port,
	       const char *title_fmt, ...) __attribute__((format(printf, 5, 6)));
/* Its outcome, with err for WARN and FAIL. */
void doc_status(struct rk_doctor_check *c, enum rk_doctor_status status, int err);
/* Append to a text field (seen or fix). */
void doc_add(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define doc_seen(c, ...) doc_add((c)->seen, sizeof((c)->seen), __VA_ARGS__)
#define doc_fix(c, ...)	 doc_add((c)->fix, sizeof((c)->fix), __VA_ARGS__)
/* Count the check and hand it to the callback. */
void doc_emit(struct doc *d, const struct rk_doctor_check *c);

/* The path of a file under the root ("/sys/..." at the real root). */
void doc_path(const struct doc *d, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Read a file under the root into buf, the trailing newline cut: its length,
 * or a negative errno. */
int doc_read(const struct doc *d, char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A number from a file under the root ("4: ACTIVE" gives 4, "0x1a" 26): 0 or
 * a negative errno. */
int doc_read_num(const struct doc *d, long *v_p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The number at p (spaces and tabs skipped), up to the next white space or
 * the end, parsed whole (rk_parse_u64): hex digits without 0x when hex,
 * else decimal; within [min, max]. 0 or -EINVAL, -ERANGE. */
int doc_num_at(const char *p, bool hex, uint64_t min, uint64_t max, uint64_t *v_p);
/* The same after the first line of text that starts with key ("CapEff:",
 * "HugePages_Total:"): -ENOENT when no line does. */
int doc_line_num(const char *text, const char *key, bool hex, uint64_t max, uint64_t *v_p);
/* Whether a file or directory exists under the root. */
bool doc_exists(const struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A check (or the checks of each port) made and handed on: doctor_host.c's
 * before and after the ports, doctor_port.c's, doctor_firewall.c's. */
typedef void doc_check_fn(struct doc *d);
doc_check_fn doc_check_modules, doc_check_dev_files, doc_check_devices, doc_check_memlock,
	doc_check_hugepages, doc_check_ports, doc_check_counters, doc_check_software,
	doc_check_firewall;

/* ---- The path to a peer (doctor_peer.c, the client; doctor_serve.c) ----
 *
 * A doctor client connects over the TCP exchange (conn.h) with request code
 * RK_WIRE_OP_DOCTOR, its probe's length in ms as the request's offset; the
 * server answers with its buffer (DOC_BUF_LEN bytes, remote write and read)
 * and its netdev's MTU as the reply's size. Then, kept in step by sync points:
 * the server posts a receive (1); the client SENDs, the server checks what
 * came (2); the client WRITEs (3), the server checks its buffer (4); the
 * server fills it (5), the client READs and checks (6); the client probes
 * (7). A sync's status is the side's check: the peer hears a failure. */
#define DOC_BUF_LEN   (1u << 20)
#define DOC_CHECK_LEN 32775u /* several packets at any MTU, a multiple of none */
#define DOC_SEED_SEND  0xd0c70001u
#define DOC_SEED_WRITE 0xd0c70002u
#define DOC_SEED_READ  0xd0c70003u
enum {
	DOC_SYNC_RECV_POSTED = 1,
	DOC_SYNC_SEND_CHECKED,
	DOC_SYNC_WRITTEN,
	DOC_SYNC_WRITE_CHECKED,
	DOC_SYNC_READ_READY,
	DOC_SYNC_READ_CHECKED,
	DOC_SYNC_PROBED,
};

/* The netdev under a RoCE port (its GID table's, else the software
 * device's parent) into netdev, and its MTU: 0, or -ENOENT when the port
 * has none (InfiniBand, iWARP without one). */
int doc_port_netdev(const struct doc *d, const char *device, uint8_t port, char *netdev,
		    size_t len, long *mtu_p);

/* A connection's release callback (conn.h) for an arg whose first member
 * is the struct rk_mr * its prepare or on_request registered: freed, NULL. */
void doc_release_mr(struct rk_conn *conn, void *arg);

/* The checks along the path to opts->host (doctor_peer.c). */
doc_check_fn doc_check_peer;

#pragma GCC visibility pop

#endif
