/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Internal to the doctor engine: one run's context, the files it reads
 * under the root, and the checks of each file. */
#ifndef RDMAKIT_LIB_DOCTOR_INT_H
#define RDMAKIT_LIB_DOCTOR_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* Whether a file or directory exists under the root. */
bool doc_exists(const struct doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A check (or the checks of each port) made and handed on: doctor_host.c's
 * before and after the ports, doctor_port.c's, doctor_firewall.c's. */
typedef void doc_check_fn(struct doc *d);
doc_check_fn doc_check_modules, doc_check_dev_files, doc_check_devices, doc_check_memlock,
	doc_check_hugepages, doc_check_ports, doc_check_counters, doc_check_software,
	doc_check_firewall;

#pragma GCC visibility pop

#endif
