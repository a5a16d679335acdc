/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit doctor, the host's checks: the kernel's RDMA modules, the device
 * files and this user's access, a user-space provider for each device, the
 * locked-memory limit and the huge page pool. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdmakit/error.h>

#include "base/hint_int.h"
#include "engines/doctor/doctor_int.h"
#include "verbs/device_int.h"

/* What every RDMA program needs of the kernel: the core, the verbs device
 * files (ib_uverbs) and RDMA CM's (rdma_ucm). */
static const char *const core_modules[] = {"ib_core", "ib_uverbs", "rdma_ucm"};
#define NCORE (sizeof(core_modules) / sizeof(core_modules[0]))

/* Whether line (of /proc/modules, modules.builtin or modules.dep) names
 * module: "ib_core 4... ", "kernel/.../ib_core.ko", "kernel/.../ib_core.ko.xz: ...". */
static bool line_names(const char *line, const char *module)
{
	size_t n = strlen(module);
	const char *slash, *p;

	if (!strncmp(line, module, n) && line[n] == ' ')
		return true;
	p = strstr(line, ".ko");
	if (!p)
		return false;
	for (slash = p; slash > line && slash[-1] != '/'; slash--)
		;
	return (size_t)(p - slash) == n && !strncmp(slash, module, n);
}

static bool file_names(const struct doc *d, const char *path, const char *module)
{
	char full[PATH_MAX], line[1024];
	bool found = false;
	FILE *f;

	doc_path(d, full, sizeof(full), "%s", path);
	f = fopen(full, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = line_names(line, module);
	fclose(f);
	return found;
}

static bool module_loaded(const struct doc *d, const char *rel, const char *module)
{
	char builtin[PATH_MAX];

	if (doc_exists(d, "/sys/module/%s", module) || file_names(d, "/proc/modules", module))
		return true;
	snprintf(builtin, sizeof(builtin), "/lib/modules/%s/modules.builtin", rel);
	return file_names(d, builtin, module);
}

static bool module_available(const struct doc *d, const char *rel, const char *module)
{
	char dep[PATH_MAX];

	snprintf(dep, sizeof(dep), "/lib/modules/%s/modules.dep", rel);
	return file_names(d, dep, module);
}

/* name into list (" a b") unless there already. */
static void list_add(char *list, size_t len, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
		if (p[-1] == ' ' && (p[n] == ' ' || !p[n]))
			return;
	doc_add(list, len, " %s", name);
}

void doc_check_modules(struct doc *d)
{
	char rel[128], want[512] = "", missing[512] = "", gone[512] = "";
	struct rk_doctor_check c;
	bool any_gone = false;

	if (doc_read(d, rel, sizeof(rel), "/proc/sys/kernel/osrelease") <= 0)
		snprintf(rel, sizeof(rel), "(unknown release)");
	doc_begin(&c, "kernel_modules", NULL, 0, "kernel RDMA modules");
	for (size_t i = 0; i < NCORE; i++)
		list_add(want, sizeof(want), core_modules[i]);
	for (int i = 0; i < d->ndevs; i++)
		if (d->devs[i].module[0])
			list_add(want, sizeof(want), d->devs[i].module);
	for (char *w = want, *end; *w; w = end) {
		char name[64];

		while (*w == ' ')
			w++;
		end = w + strcspn(w, " ");
		snprintf(name, sizeof(name), "%.*s", (int)(end - w), w);
		if (!name[0])
			break;
		if (module_loaded(d, rel, name)) {
			if (!strcmp(name, "ib_core"))
				d->core_loaded = true;
			if (!strcmp(name, "ib_uverbs"))
				d->uverbs_loaded = true;
			continue;
		}
		doc_add(missing, sizeof(missing), " %s", name);
		if (!module_available(d, rel, name)) {
			any_gone = true;
			doc_add(gone, sizeof(gone), "%s%s", gone[0] ? ", " : "", name);
		}
	}
	if (!missing[0]) {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "loaded:%s (Linux %s)", want, rel);
	} else if (any_gone) {
		doc_status(&c, RK_DOCTOR_FAIL, -ENOSYS);
		doc_seen(&c,
			 "not loaded:%s; Linux %s has no module to load for %s (nothing "
			 "under /lib/modules/%s lists them: a kernel built without "
			 "CONFIG_INFINIBAND, or its modules package is missing)",
			 missing, rel, gone, rel);
		doc_fix(&c,
			"boot a kernel with RDMA support (CONFIG_INFINIBAND, "
			"CONFIG_INFINIBAND_USER_ACCESS; a distribution's kernel has them, "
			"Ubuntu's in linux-modules-extra-%s), then: modprobe -a%s",
			rel, missing);
	} else {
		doc_status(&c, RK_DOCTOR_FAIL, -ENOENT);
		doc_seen(&c, "not loaded:%s (Linux %s has them)", missing, rel);
		doc_fix(&c, "modprobe -a%s (at boot: list them in /etc/modules-load.d/rdma.conf)",
			missing);
	}
	doc_emit(d, &c);
}

/* This user, for messages: "alice (uid 1000)". */
static void user_text(char *buf, size_t len)
{
	struct passwd *pw = getpwuid(geteuid());

	snprintf(buf, len, "%s (uid %u)", pw ? pw->pw_name : "this user", (unsigned int)geteuid());
}

/* One device file: missing, or not readable and writable by this user
 * (appended to c, with the fix). Returns whether it is usable. */
static bool dev_file_ok(const struct doc *d, const char *name, const char *what,
			struct rk_doctor_check *c)
{
	char path[PATH_MAX], user[96];
	struct group *gr;
	struct stat st;

	doc_path(d, path, sizeof(path), "/dev/infiniband/%s", name);
	if (stat(path, &st)) {
		doc_seen(c, "%s/dev/infiniband/%s%s is missing", c->seen[0] ? "; " : "", name,
			 what);
		doc_fix(c, "%s%s", c->fix[0] ? "; " : "",
			!strcmp(name, "rdma_cm")
				? "modprobe rdma_ucm"
				: "udevadm trigger --subsystem-match=infiniband_verbs");
		return false;
	}
	if (!faccessat(AT_FDCWD, path, R_OK | W_OK, AT_EACCESS))
		return true;
	user_text(user, sizeof(user));
	gr = getgrgid(st.st_gid);
	doc_seen(c,
		 "%s/dev/infiniband/%s%s is mode %04o, group %s: not readable and writable "
		 "by %s",
		 c->seen[0] ? "; " : "", name, what, (unsigned int)(st.st_mode & 07777),
		 gr ? gr->gr_name : "?", user);
	if (!strstr(c->fix, "chmod 0666")) {
		doc_fix(c, "%s", c->fix[0] ? "; " : "");
		if (gr && st.st_gid && (st.st_mode & 0060) == 0060)
			doc_fix(c, "usermod -aG %s USER (then log in again); or ", gr->gr_name);
		doc_fix(c, "chmod 0666 /dev/infiniband/uverbs* /dev/infiniband/rdma_cm (until "
			   "reboot; for good a udev rule in /etc/udev/rules.d/90-rdma.rules: "
			   "KERNEL==\"uverbs*|rdma_cm\", MODE=\"0666\")");
	}
	return false;
}

void doc_check_dev_files(struct doc *d)
{
	char path[PATH_MAX], ok[512] = "", user[96];
	struct rk_doctor_check c;
	struct dirent **names;
	int n, bad = 0, nverbs = 0;

	doc_begin(&c, "dev_files", NULL, 0, "/dev/infiniband access");
	doc_path(d, path, sizeof(path), "/dev/infiniband");
	n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++)
		nverbs += !strncmp(names[i]->d_name, "uverbs", 6);
	if (!nverbs && !d->uverbs_loaded) {
		for (int i = 0; i < n; i++)
			free(names[i]);
		if (n >= 0)
			free(names);
		doc_status(&c, RK_DOCTOR_SKIP, 0);
		doc_seen(&c, "no /dev/infiniband/uverbs*: ib_uverbs is not loaded (see kernel RDMA "
			     "modules)");
		doc_emit(d, &c);
		return;
	}
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		char ibdev[64] = "", what[80] = "";

		if (!strncmp(name, "uverbs", 6)) {
			if (doc_read(d, ibdev, sizeof(ibdev),
				     "/sys/class/infiniband_verbs/%s/ibdev", name) > 0)
				snprintf(what, sizeof(what), " (%s)", ibdev);
			if (dev_file_ok(d, name, what, &c))
				doc_add(ok, sizeof(ok), "%s%s%s", ok[0] ? ", " : "", name, what);
			else
				bad++;
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	if (!dev_file_ok(d, "rdma_cm", " (RDMA CM)", &c))
		bad++;
	else
		doc_add(ok, sizeof(ok), "%srdma_cm", ok[0] ? ", " : "");
	if (!nverbs && d->nall) {
		doc_seen(&c, "%sno /dev/infiniband/uverbs* though %d RDMA device(s) exist",
			 c.seen[0] ? "; " : "", d->nall);
		doc_fix(&c,
			"%sudevadm trigger --subsystem-match=infiniband_verbs (or mount "
			"devtmpfs on /dev)",
			c.fix[0] ? "; " : "");
		bad++;
	}
	user_text(user, sizeof(user));
	if (bad) {
		doc_status(&c, RK_DOCTOR_FAIL, strstr(c.seen, "not readable") ? -EACCES : -ENOENT);
	} else {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "%s: readable and writable by %s%s", ok, user,
			 nverbs ? "" : " (no uverbs file: there is no RDMA device)");
	}
	doc_emit(d, &c);
}

/* Whether libibverbs lists name among devs. */
static struct ibv_device *verbs_find(struct ibv_device **list, int n, const char *name)
{
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			return list[i];
	return NULL;
}

static void check_provider(struct doc *d, struct doc_dev *dd, struct ibv_device **list, int n,
			   int list_err)
{
	struct ibv_device *vd = verbs_find(list, n, dd->name);
	struct rk_doctor_check c;
	struct ibv_context *ctx;
	const char *mod = dd->module[0] ? dd->module : "unknown";

	doc_begin(&c, "provider", dd->name, 0, "%s user-space provider", dd->name);
	if (!vd) {
		doc_status(&c, RK_DOCTOR_FAIL, -ENOENT);
		doc_seen(&c,
			 "the kernel has %s (driver %s), but libibverbs %s: no user-space "
			 "provider for it",
			 dd->name, mod, list ? "does not list it" : "lists no device");
		if (!list)
			doc_seen(&c, " (%s)", rk_strerror(list_err));
		doc_fix(&c, "install rdma-core's providers (Debian, Ubuntu: apt install "
			    "ibverbs-providers; Fedora, RHEL: dnf install libibverbs); a provider "
			    "installed elsewhere needs its driver file in /etc/libibverbs.d");
		doc_emit(d, &c);
		return;
	}
	ctx = ibv_open_device(vd);
	if (!ctx) {
		int err = errno ? -errno : -EIO;

		doc_status(&c, RK_DOCTOR_FAIL, err);
		doc_seen(&c, "libibverbs lists %s but cannot open it: %s", dd->name,
			 rk_strerror(err));
		doc_fix(&c,
			err == -EACCES || err == -EPERM
				? "give this user access to /dev/infiniband (see /dev/infiniband "
				  "access)"
				: "see dmesg for the driver's message; reload it: modprobe -r %s; "
				  "modprobe %s",
			mod, mod);
		doc_emit(d, &c);
		return;
	}
	if (rk_device_wrap(ctx, &dd->dev)) {
		dd->dev = NULL;
		ibv_close_device(ctx);
		doc_status(&c, RK_DOCTOR_FAIL, -EIO);
		doc_seen(&c, "libibverbs opens %s but querying it or its ports fails", dd->name);
		doc_fix(&c, "see dmesg for the driver's message (ibv_devinfo -d %s shows the same)",
			dd->name);
		doc_emit(d, &c);
		return;
	}
	doc_status(&c, RK_DOCTOR_PASS, 0);
	doc_seen(&c, "libibverbs opens %s (driver %s, %s, %u port%s)", dd->name, mod,
		 ibv_node_type_str(vd->node_type), dd->dev->info.phys_port_cnt,
		 dd->dev->info.phys_port_cnt == 1 ? "" : "s");
	doc_emit(d, &c);
}

void doc_check_devices(struct doc *d)
{
	struct ibv_device **list;
	struct rk_doctor_check c;
	int n = 0, list_err;

	doc_begin(&c, "devices", NULL, 0, "RDMA devices");
	if (!d->nall || !d->ndevs) {
		if (!d->core_loaded && !d->nall) {
			doc_status(&c, RK_DOCTOR_SKIP, 0);
			doc_seen(&c, "no RDMA device can exist: ib_core is not loaded (see kernel "
				     "RDMA modules)");
		} else if (!d->nall) {
			doc_status(&c, RK_DOCTOR_FAIL, -ENODEV);
			doc_seen(&c, "no RDMA device in /sys/class/infiniband: no provider driver "
				     "made one");
			doc_fix(&c,
				"load the RNIC's driver (mlx5_ib, irdma, bnxt_re, ...: "
				"modprobe DRIVER); %s",
				rk_hint_no_device());
		} else {
			doc_status(&c, RK_DOCTOR_FAIL, -ENODEV);
			doc_seen(&c, "no RDMA device named '%s' (%d other%s there)", d->o->device,
				 d->nall, d->nall == 1 ? " is" : "s are");
			doc_fix(&c, "name one of them with -d (rdma link show lists them)");
		}
		doc_emit(d, &c);
		return;
	}
	doc_status(&c, RK_DOCTOR_PASS, 0);
	for (int i = 0; i < d->ndevs; i++)
		doc_seen(&c, "%s%s (%s)", i ? ", " : "", d->devs[i].name,
			 d->devs[i].module[0] ? d->devs[i].module : "driver unknown");
	doc_emit(d, &c);

	errno = 0;
	list = ibv_get_device_list(&n);
	list_err = errno ? -errno : -ENODEV;
	for (int i = 0; i < d->ndevs; i++)
		check_provider(d, &d->devs[i], list, n, list_err);
	if (list)
		ibv_free_device_list(list);
}

/* "64 KiB", "unlimited". */
static const char *limit_text(uint64_t v, char *buf, size_t len)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
	unsigned int u = 0;

	if (v == (uint64_t)RLIM_INFINITY)
		return "unlimited";
	while (u < 4 && v >= 1024 && !(v % 1024)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %s", v, units[u]);
	return buf;
}

void rk_doctor_memlock(uint64_t limit, bool cap_ipc_lock, uint64_t need, struct rk_doctor_check *c)
{
	char lim_buf[32], nd_buf[32];
	const char *lim, *nd;

	doc_begin(c, "memlock", NULL, 0, "locked-memory limit");
	if (!need)
		need = RK_DOCTOR_MEMLOCK_TYPICAL;
	lim = limit_text(limit, lim_buf, sizeof(lim_buf));
	nd = limit_text(need, nd_buf, sizeof(nd_buf));
	if (cap_ipc_lock) {
		doc_status(c, RK_DOCTOR_PASS, 0);
		doc_seen(c,
			 "ulimit -l is %s, but this process holds CAP_IPC_LOCK: memory "
			 "registration ignores the limit",
			 lim);
		return;
	}
	if (limit == (uint64_t)RLIM_INFINITY || limit >= need) {
		doc_status(c, RK_DOCTOR_PASS, 0);
		doc_seen(c,
			 "ulimit -l is %s, at least the %s a typical run pins (buffers of a "
			 "benchmark and the queues of a few QPs)",
			 lim, nd);
		return;
	}
	doc_status(c, limit < RK_DOCTOR_MEMLOCK_MIN ? RK_DOCTOR_FAIL : RK_DOCTOR_WARN, -ENOMEM);
	doc_seen(c,
		 "ulimit -l is %s, below the %s a typical run pins (buffers of a benchmark "
		 "and the queues of a few QPs)%s",
		 lim, nd,
		 limit < RK_DOCTOR_MEMLOCK_MIN
			 ? ": even one small QP and buffer may fail to register (ENOMEM from "
			   "ibv_reg_mr or ibv_create_qp)"
			 : ": larger runs fail to register memory (ENOMEM)");
	doc_fix(c, "ulimit -l unlimited (in this shell, up to the hard limit); for good "
		   "'USER - memlock unlimited' in /etc/security/limits.d/rdma.conf (then log in "
		   "again), LimitMEMLOCK=infinity for a systemd service, --ulimit memlock=-1 for a "
		   "container");
}

/* CAP_IPC_LOCK (bit 14) in the effective set of /proc/self/status. */
static bool has_ipc_lock(const struct doc *d)
{
	char text[4096];
	uint64_t caps;

	if (doc_read(d, text, sizeof(text), "/proc/self/status") < 0 ||
	    doc_line_num(text, "CapEff:", true, UINT64_MAX, &caps))
		return false;
	return (caps >> 14) & 1;
}

void doc_check_memlock(struct doc *d)
{
	struct rk_doctor_check c;
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl)) {
		doc_begin(&c, "memlock", NULL, 0, "locked-memory limit");
		doc_status(&c, RK_DOCTOR_SKIP, 0);
		doc_seen(&c, "getrlimit(RLIMIT_MEMLOCK): %s", rk_strerror(-errno));
	} else {
		rk_doctor_memlock((uint64_t)rl.rlim_cur, has_ipc_lock(d), d->o->memlock_need, &c);
	}
	doc_emit(d, &c);
}

/* A "Key:   N" line of /proc/meminfo, or -1 (none, or not a number). */
static long meminfo(const char *text, const char *key)
{
	uint64_t v;

	return doc_line_num(text, key, false, LONG_MAX, &v) ? -1 : (long)v;
}

void doc_check_hugepages(struct doc *d)
{
	struct rk_doctor_check c;
	long total, free_pages, kb;
	char text[8192];

	doc_begin(&c, "hugepages", NULL, 0, "huge page pool");
	if (doc_read(d, text, sizeof(text), "/proc/meminfo") < 0 ||
	    (total = meminfo(text, "HugePages_Total:")) < 0) {
		doc_status(&c, RK_DOCTOR_SKIP, 0);
		doc_seen(&c,
			 "/proc/meminfo shows no HugePages_Total: this kernel has no huge pages");
		doc_emit(d, &c);
		return;
	}
	free_pages = meminfo(text, "HugePages_Free:");
	kb = meminfo(text, "Hugepagesize:");
	if (total > 0 && free_pages > 0) {
		doc_status(&c, RK_DOCTOR_PASS, 0);
		doc_seen(&c, "%ld of %ld huge pages of %ld kB free (for --mem hugepage)",
			 free_pages, total, kb);
	} else {
		doc_status(&c, RK_DOCTOR_WARN, -ENOMEM);
		if (total)
			doc_seen(&c, "all %ld huge pages of %ld kB are in use", total, kb);
		else
			doc_seen(&c, "no huge pages reserved");
		doc_seen(&c, ": --mem hugepage fails (the rest works without)");
		doc_fix(&c,
			"sysctl vm.nr_hugepages=%ld (%ld MiB of %ld kB pages; for good in "
			"/etc/sysctl.d/)",
			total + 64, (total + 64) * (kb > 0 ? kb : 2048) / 1024, kb > 0 ? kb : 2048);
	}
	doc_emit(d, &c);
}
