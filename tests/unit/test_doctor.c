/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit doctor's checks on trees of files laid out as /proc, /sys, /dev
 * and /lib/modules lay them out (a temporary root, so each fault can be
 * placed: a module not loaded or not in the kernel, a netdev down, no
 * address, an address without a GID, no SM, error counters, memlock, huge
 * pages), and the firewall parsers on nft's and iptables' text. libibverbs
 * is asked for real: it knows none of the tree's devices. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdmakit/doctor.h>

#include "unit.h"

#define MAX_CHECKS 64

struct seen {
	struct rk_doctor_check v[MAX_CHECKS];
	int n;
};

static char root[] = "/tmp/rk_doctor_XXXXXX";

/* The addresses the netdev has, for the addrs hook. */
static const char *addrs[4];

static int fake_addrs(const char *netdev, char (*out)[INET6_ADDRSTRLEN], int max, void *arg)
{
	int n = 0;

	(void)arg;
	if (strcmp(netdev, "eth9"))
		return 0;
	for (; n < max && n < 4 && addrs[n]; n++)
		snprintf(out[n], INET6_ADDRSTRLEN, "%s", addrs[n]);
	return n;
}

/* root/path with text, its directories made. */
static void put(const char *path, const char *text)
{
	char full[1024];
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", root, path);
	for (char *s = strchr(full + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(full, 0755);
		*s = '/';
	}
	f = fopen(full, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void rm(const char *path)
{
	char full[1024];

	snprintf(full, sizeof(full), "%s%s", root, path);
	assert_int_equal(unlink(full), 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

#define PORT "/sys/class/infiniband/mlx5_9/ports/1"
#define IB   "/sys/class/infiniband/ib9/ports/1"

/* A healthy host: the modules loaded, the device files, mlx5_9 (RoCE on
 * eth9, 198.18.0.1 with its RoCE v2 GID at index 1), ib9 (InfiniBand with
 * an SM), rxe9 (a software device), huge pages, CAP_IPC_LOCK. */
static const char *const healthy[][2] = {
	{"/proc/sys/kernel/osrelease", "6.1.0-test\n"},
	{"/proc/modules", "ib_core 1 0 - Live 0x0\nib_uverbs 1 0 - Live 0x0\n"
			  "rdma_ucm 1 0 - Live 0x0\nmlx5_ib 1 0 - Live 0x0\n"
			  "rdma_rxe 1 0 - Live 0x0\n"},
	{"/lib/modules/6.1.0-test/modules.dep", "kernel/drivers/infiniband/core/ib_core.ko.xz:\n"
						"kernel/drivers/infiniband/core/ib_uverbs.ko.xz: "
						"kernel/drivers/infiniband/core/ib_core.ko.xz\n"
						"kernel/drivers/infiniband/core/rdma_ucm.ko.xz: "
						"kernel/drivers/infiniband/core/ib_core.ko.xz\n"},
	{"/proc/meminfo", "MemTotal: 100 kB\nHugePages_Total:      16\nHugePages_Free:       16\n"
			  "Hugepagesize:       2048 kB\n"},
	{"/proc/self/status", "Name:\tx\nCapEff:\t0000000000004000\n"},
	{"/dev/infiniband/uverbs0", ""},
	{"/dev/infiniband/rdma_cm", ""},
	{"/sys/class/infiniband_verbs/uverbs0/ibdev", "mlx5_9\n"},
	{"/sys/class/infiniband/mlx5_9/node_type", "1: CA\n"},
	{"/sys/class/infiniband/mlx5_9/device/driver/.keep", ""},
	{PORT "/state", "4: ACTIVE\n"},
	{PORT "/phys_state", "5: LinkUp\n"},
	{PORT "/link_layer", "Ethernet\n"},
	{PORT "/gid_attrs/ndevs/0", "eth9\n"},
	{PORT "/gids/0", "fe80:0000:0000:0000:0000:00ff:fe00:0001\n"},
	{PORT "/gid_attrs/types/0", "RoCE v2\n"},
	{PORT "/gids/1", "0000:0000:0000:0000:0000:ffff:c612:0001\n"},
	{PORT "/gid_attrs/types/1", "RoCE v2\n"},
	{PORT "/gids/2", "0000:0000:0000:0000:0000:0000:0000:0000\n"},
	{PORT "/hw_counters/out_of_sequence", "0\n"},
	{PORT "/hw_counters/rx_write_requests", "12\n"},
	{"/sys/class/net/eth9/flags", "0x1003\n"},
	{"/sys/class/net/eth9/operstate", "up\n"},
	{"/sys/class/net/eth9/mtu", "1500\n"},
	{"/sys/class/infiniband/ib9/node_type", "1: CA\n"},
	{IB "/state", "4: ACTIVE\n"},
	{IB "/phys_state", "5: LinkUp\n"},
	{IB "/link_layer", "InfiniBand\n"},
	{IB "/lid", "0x5\n"},
	{IB "/sm_lid", "0x1\n"},
	{"/sys/class/infiniband/rxe9/node_type", "1: CA\n"},
	{"/sys/class/infiniband/rxe9/parent", "eth9\n"},
};

static int setup(void **state)
{
	char link[1024];

	(void)state;
	strcpy(root, "/tmp/rk_doctor_XXXXXX");
	assert_non_null(mkdtemp(root));
	for (size_t i = 0; i < ARRAY_SIZE(healthy); i++)
		put(healthy[i][0], healthy[i][1]);
	snprintf(link, sizeof(link), "%s/sys/class/infiniband/mlx5_9/device/driver/module", root);
	assert_int_equal(symlink("../../../../module/mlx5_ib", link), 0);
	addrs[0] = "198.18.0.1";
	addrs[1] = "fe80::ff:fe00:1";
	addrs[2] = NULL;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void keep(const struct rk_doctor_check *c, void *arg)
{
	struct seen *s = arg;

	assert_true(s->n < MAX_CHECKS);
	s->v[s->n++] = *c;
}

static const char nft_accept[] = "table inet filter { # handle 1\n"
				 "\tchain input { # handle 1\n"
				 "\t\ttype filter hook input priority filter; policy accept;\n"
				 "\t\ttcp dport 22 accept # handle 2\n"
				 "\t}\n}\n";

/* Run the checks on the tree, -d device when not NULL. */
static struct seen *run(const char *device)
{
	static struct seen s;
	struct rk_doctor_opts o = {
		.device = device, .root = root, .addrs = fake_addrs, .nft_text = nft_accept};
	struct rk_doctor_summary sum;

	memset(&s, 0, sizeof(s));
	assert_int_equal(rk_doctor_run(&o, keep, &s, &sum), 0);
	assert_int_equal(sum.pass + sum.warn + sum.fail + sum.skip, s.n);
	return &s;
}

/* The check id about device (NULL: any), failing the test when none. */
static const struct rk_doctor_check *find(const struct seen *s, const char *id, const char *device)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].id, id) && (!device || !strcmp(s->v[i].device, device)))
			return &s->v[i];
	fail_msg("no check %s%s%s", id, device ? " of " : "", device ? device : "");
	return NULL;
}

#define assert_status(c, st)                                                                       \
	do {                                                                                       \
		const struct rk_doctor_check *c_ = (c);                                            \
		if (c_->status != (st))                                                            \
			fail_msg("%s: %s, expected %s: %s; fix: %s", c_->title,                    \
				 rk_doctor_status_str(c_->status), rk_doctor_status_str(st),       \
				 c_->seen, c_->fix);                                               \
	} while (0)

/* c says status, with err (WARN, FAIL), seen and fix holding the texts
 * given (NULL: not looked at). */
static void expect(const struct rk_doctor_check *c, enum rk_doctor_status status, int err,
		   const char *seen, const char *fix)
{
	assert_status(c, status);
	assert_int_equal(c->err, err);
	if (seen)
		assert_contains(c->seen, seen);
	if (fix)
		assert_contains(c->fix, fix);
}

static void test_healthy(void **state)
{
	struct seen *s = run(NULL);
	const struct rk_doctor_check *c;

	(void)state;
	/* In order: the host's first, the ports', the limits, the counters. */
	assert_string_equal(s->v[0].id, "kernel_modules");
	assert_string_equal(s->v[1].id, "dev_files");
	assert_string_equal(s->v[2].id, "devices");
	c = find(s, "kernel_modules", NULL);
	assert_status(c, RK_DOCTOR_PASS);
	assert_contains(c->seen, "mlx5_ib");
	assert_contains(c->seen, "rdma_rxe");
	assert_status(find(s, "dev_files", NULL), RK_DOCTOR_PASS);
	assert_contains(find(s, "dev_files", NULL)->seen, "uverbs0 (mlx5_9)");
	c = find(s, "devices", NULL);
	assert_status(c, RK_DOCTOR_PASS);
	assert_string_equal(c->seen, "ib9 (driver unknown), mlx5_9 (mlx5_ib), rxe9 (rdma_rxe)");
	/* libibverbs knows none of these devices. */
	c = find(s, "provider", "mlx5_9");
	assert_status(c, RK_DOCTOR_FAIL);
	assert_contains(c->fix, "ibverbs-providers");
	assert_status(find(s, "port_state", "mlx5_9"), RK_DOCTOR_PASS);
	assert_status(find(s, "netdev", "mlx5_9"), RK_DOCTOR_PASS);
	assert_status(find(s, "addresses", "mlx5_9"), RK_DOCTOR_PASS);
	c = find(s, "roce_gids", "mlx5_9");
	assert_status(c, RK_DOCTOR_PASS);
	assert_string_equal(c->seen, "198.18.0.1 index 1, fe80::ff:fe00:1 index 0");
	/* The active MTU comes from libibverbs, which could not open it. */
	assert_status(find(s, "mtu", "mlx5_9"), RK_DOCTOR_SKIP);
	assert_status(find(s, "ib_lid_sm", "ib9"), RK_DOCTOR_PASS);
	assert_status(find(s, "memlock", NULL), RK_DOCTOR_PASS);
	assert_status(find(s, "hugepages", NULL), RK_DOCTOR_PASS);
	assert_status(find(s, "firewall", NULL), RK_DOCTOR_PASS);
	assert_status(find(s, "error_counters", "mlx5_9"), RK_DOCTOR_PASS);
	c = find(s, "error_counters", "ib9");
	assert_status(c, RK_DOCTOR_SKIP);
	assert_contains(c->seen, "no counters");
	c = find(s, "software_device", "rxe9");
	/* A PASS that keeps its note: a healthy rxe host exits 0. */
	assert_status(c, RK_DOCTOR_PASS);
	assert_contains(c->seen, "Soft-RoCE");
	assert_contains(c->seen, "no line rate to expect");
	assert_string_equal(c->fix, "");
	assert_int_equal(c->err, 0);
	for (int i = 0; i < s->n; i++)
		assert_true(strcmp(s->v[i].id, "software_device") ||
			    !strcmp(s->v[i].device, "rxe9"));
}

static void test_modules(void **state)
{
	const struct rk_doctor_check *c;
	struct seen *s;

	(void)state;
	put("/proc/modules", "ib_core 1 0 - Live 0x0\nmlx5_ib 1 0 - Live 0x0\n"
			     "rdma_rxe 1 0 - Live 0x0\n");
	s = run(NULL);
	expect(find(s, "kernel_modules", NULL), RK_DOCTOR_FAIL, -ENOENT,
	       "not loaded: ib_uverbs rdma_ucm", "modprobe -a ib_uverbs rdma_ucm");

	/* Built in: as good as loaded. */
	put("/lib/modules/6.1.0-test/modules.builtin",
	    "kernel/drivers/infiniband/core/ib_uverbs.ko\n"
	    "kernel/drivers/infiniband/core/rdma_ucm.ko\n");
	assert_status(find(run(NULL), "kernel_modules", NULL), RK_DOCTOR_PASS);
	rm("/lib/modules/6.1.0-test/modules.builtin");

	/* Not in the kernel at all: no modprobe alone will do. */
	put("/proc/modules", "");
	put("/lib/modules/6.1.0-test/modules.dep", "kernel/fs/ext4/ext4.ko.xz:\n");
	rm("/dev/infiniband/uverbs0");
	rm("/dev/infiniband/rdma_cm");
	rm("/sys/class/infiniband/mlx5_9/device/driver/module");
	s = run(NULL);
	c = find(s, "kernel_modules", NULL);
	expect(c, RK_DOCTOR_FAIL, -ENOSYS, "ib_core, ib_uverbs, rdma_ucm", "CONFIG_INFINIBAND");
	assert_contains(c->fix, "modprobe -a ib_core ib_uverbs rdma_ucm");
	/* What follows from it is skipped, saying why. */
	c = find(s, "dev_files", NULL);
	assert_status(c, RK_DOCTOR_SKIP);
	assert_contains(c->seen, "ib_uverbs is not loaded");
	/* rdma_cm and no uverbs: the same. */
	put("/dev/infiniband/rdma_cm", "");
	assert_status(find(run(NULL), "dev_files", NULL), RK_DOCTOR_SKIP);
}

static void test_dev_files(void **state)
{

	(void)state;
	rm("/dev/infiniband/rdma_cm");
	expect(find(run(NULL), "dev_files", NULL), RK_DOCTOR_FAIL, -ENOENT,
	       "/dev/infiniband/rdma_cm (RDMA CM) is missing", "modprobe rdma_ucm");
}

static void test_netdev_down(void **state)
{
	const struct rk_doctor_check *c;
	struct seen *s;

	(void)state;
	put(PORT "/state", "1: DOWN\n");
	put(PORT "/phys_state", "3: Disabled\n");
	put("/sys/class/net/eth9/flags", "0x1002\n");
	put("/sys/class/net/eth9/operstate", "down\n");
	s = run(NULL);
	c = find(s, "port_state", "mlx5_9");
	assert_status(c, RK_DOCTOR_FAIL);
	assert_string_equal(c->seen, "DOWN, physical state Disabled (RoCE)");
	assert_string_equal(c->fix, "ip link set eth9 up");
	expect(find(s, "netdev", "mlx5_9"), RK_DOCTOR_FAIL, -ENETDOWN,
	       "eth9 is down (operstate down)", "ip link set eth9 up");

	/* Up, but no carrier. */
	put("/sys/class/net/eth9/flags", "0x1003\n");
	c = find(run(NULL), "netdev", "mlx5_9");
	assert_status(c, RK_DOCTOR_FAIL);
	assert_contains(c->fix, "ethtool eth9");
}

static void test_addresses(void **state)
{
	const struct rk_doctor_check *c;
	struct seen *s;

	(void)state;
	addrs[0] = NULL;
	s = run(NULL);
	expect(find(s, "addresses", "mlx5_9"), RK_DOCTOR_FAIL, -EADDRNOTAVAIL,
	       "eth9 has no IP address", "ip addr add ADDRESS/PREFIX dev eth9");
	assert_status(find(s, "roce_gids", "mlx5_9"), RK_DOCTOR_SKIP);

	/* Only link-local: a peer off the link cannot reach it. */
	addrs[0] = "fe80::ff:fe00:1";
	c = find(run(NULL), "addresses", "mlx5_9");
	assert_status(c, RK_DOCTOR_FAIL);
	assert_contains(c->seen, "only link-local fe80::ff:fe00:1");

	/* An address without its GID. */
	addrs[0] = "198.18.0.1";
	addrs[1] = "198.18.0.2";
	c = find(run(NULL), "roce_gids", "mlx5_9");
	assert_status(c, RK_DOCTOR_FAIL);
	assert_contains(c->seen, "no RoCE v2 GID carries 198.18.0.2 of eth9; these have one: "
				 "198.18.0.1 index 1");
	/* A RoCE v1 GID does not count. */
	addrs[1] = NULL;
	put(PORT "/gid_attrs/types/1", "IB/RoCE v1\n");
	assert_status(find(run(NULL), "roce_gids", "mlx5_9"), RK_DOCTOR_FAIL);
}

static void test_ib_no_sm(void **state)
{
	const struct rk_doctor_check *c;

	(void)state;
	put(IB "/lid", "0x0\n");
	put(IB "/sm_lid", "0x0\n");
	put(IB "/state", "2: INIT\n");
	expect(find(run(NULL), "ib_lid_sm", "ib9"), RK_DOCTOR_FAIL, -ENETUNREACH, "no LID",
	       "opensm");
	c = find(run(NULL), "port_state", "ib9");
	assert_status(c, RK_DOCTOR_FAIL);
	assert_contains(c->fix, "no subnet manager");
}

static void test_counters(void **state)
{
	const struct rk_doctor_check *c;

	(void)state;
	put(PORT "/hw_counters/out_of_sequence", "3\n");
	put(PORT "/hw_counters/link_downed", "1\n");
	c = find(run(NULL), "error_counters", "mlx5_9");
	expect(c, RK_DOCTOR_WARN, -EIO, "link_downed 1 (the link went down)", NULL);
	assert_contains(c->seen, "out_of_sequence 3 (packets received out of sequence");
	assert_not_contains(c->seen, "rx_write_requests");
	assert_contains(c->fix, "rdmakit counters -d mlx5_9 -i 1 --watch 1");
}

static void test_memlock(void **state)
{
	struct rk_doctor_check c;
	struct rlimit old, low;

	(void)state;
	rk_doctor_memlock(64 << 10, false, 0, &c);
	expect(&c, RK_DOCTOR_FAIL, -ENOMEM, "ulimit -l is 64 KiB, below the 64 MiB",
	       "ulimit -l unlimited");
	rk_doctor_memlock(8 << 20, false, 0, &c);
	assert_status(&c, RK_DOCTOR_WARN);
	rk_doctor_memlock(8 << 20, false, 4 << 20, &c);
	assert_status(&c, RK_DOCTOR_PASS);
	rk_doctor_memlock((uint64_t)RLIM_INFINITY, false, 0, &c);
	assert_status(&c, RK_DOCTOR_PASS);
	assert_contains(c.seen, "unlimited");
	rk_doctor_memlock(64 << 10, true, 0, &c);
	assert_status(&c, RK_DOCTOR_PASS);
	assert_contains(c.seen, "CAP_IPC_LOCK");

	/* This process's real limit lowered, without the capability. */
	put("/proc/self/status", "Name:\tx\nCapEff:\t0000000000000000\n");
	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &old), 0);
	low = old;
	low.rlim_cur = 64 << 10;
	if (old.rlim_max != RLIM_INFINITY && old.rlim_max < low.rlim_cur)
		low.rlim_cur = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &low), 0);
	c = *find(run(NULL), "memlock", NULL);
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &old), 0);
	assert_status(&c, RK_DOCTOR_FAIL);

	/* A CapEff that is not one hex number whole is no capability (read
	 * up to the junk, it would be CAP_IPC_LOCK: PASS). */
	put("/proc/self/status", "Name:\tx\nCapEff:\t0000000000004000zz\n");
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &low), 0);
	c = *find(run(NULL), "memlock", NULL);
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &old), 0);
	assert_status(&c, RK_DOCTOR_FAIL);
}

static void test_hugepages(void **state)
{

	(void)state;
	put("/proc/meminfo",
	    "MemTotal: 100 kB\nHugePages_Total:       0\nHugePages_Free:        0\n"
	    "Hugepagesize:       2048 kB\n");
	expect(find(run(NULL), "hugepages", NULL), RK_DOCTOR_WARN, -ENOMEM,
	       "no huge pages reserved", "sysctl vm.nr_hugepages=64");
	/* Not a number whole: not read as 16 (a PASS), but as none there. */
	put("/proc/meminfo",
	    "MemTotal: 100 kB\nHugePages_Total:      16x\nHugePages_Free:       16\n"
	    "Hugepagesize:       2048 kB\n");
	expect(find(run(NULL), "hugepages", NULL), RK_DOCTOR_SKIP, 0, "no HugePages_Total", NULL);
}

/* An iWARP port (siw: node type RNIC, Ethernet link layer, no GID table):
 * its netdev (the parent here) and addresses checked, no RoCE v2 GIDs or
 * RoCE MTU check, named iWARP; the software device a PASS. */
static void test_iwarp_port(void **state)
{
	const struct rk_doctor_check *c;
	struct seen *s;

	(void)state;
	put("/sys/class/infiniband/siw9/node_type", "4: RNIC\n");
	put("/sys/class/infiniband/siw9/parent", "eth9\n");
	put("/sys/class/infiniband/siw9/ports/1/state", "4: ACTIVE\n");
	put("/sys/class/infiniband/siw9/ports/1/phys_state", "5: LinkUp\n");
	put("/sys/class/infiniband/siw9/ports/1/link_layer", "Ethernet\n");
	s = run("siw9");
	c = find(s, "port_state", "siw9");
	assert_status(c, RK_DOCTOR_PASS);
	assert_contains(c->seen, "(iWARP)");
	assert_status(find(s, "netdev", "siw9"), RK_DOCTOR_PASS);
	assert_status(find(s, "addresses", "siw9"), RK_DOCTOR_PASS);
	for (int i = 0; i < s->n; i++)
		assert_true(strcmp(s->v[i].id, "roce_gids") && strcmp(s->v[i].id, "mtu"));
	c = find(s, "software_device", "siw9");
	assert_status(c, RK_DOCTOR_PASS);
	assert_contains(c->seen, "Soft-iWARP");
	/* Without a netdev: named for iWARP, re-created as siw. */
	rm("/sys/class/infiniband/siw9/parent");
	expect(find(run("siw9"), "netdev", "siw9"), RK_DOCTOR_FAIL, -ENODEV,
	       "the iWARP port names no netdev", "rdma link add siw9 type siw netdev IFACE");
}

/* A directory under ports/ that is not a port number whole is no port
 * (read up to the junk, "2x" would be a port 2). */
static void test_port_names(void **state)
{
	struct seen *s;

	(void)state;
	put("/sys/class/infiniband/mlx5_9/ports/2x/state", "4: ACTIVE\n");
	put("/sys/class/infiniband/mlx5_9/ports/0/state", "4: ACTIVE\n");
	s = run(NULL);
	assert_status(find(s, "port_state", "mlx5_9"), RK_DOCTOR_PASS);
	for (int i = 0; i < s->n; i++)
		assert_true(strcmp(s->v[i].device, "mlx5_9") || s->v[i].port <= 1);
}

static void test_device_named(void **state)
{
	struct seen *s;

	(void)state;
	s = run("nosuch9");
	expect(find(s, "devices", NULL), RK_DOCTOR_FAIL, -ENODEV,
	       "no RDMA device named 'nosuch9' (3 others are there)", NULL);
	for (int i = 0; i < s->n; i++)
		assert_true(strcmp(s->v[i].id, "port_state"));
	/* -d one: the others' ports are left out. */
	s = run("ib9");
	assert_status(find(s, "port_state", "ib9"), RK_DOCTOR_PASS);
	for (int i = 0; i < s->n; i++)
		assert_true(!s->v[i].device[0] || !strcmp(s->v[i].device, "ib9"));
}

/* ---- the firewall's text ---- */

/* What parse made of text: want, with a fix holding fix (NULL: none). */
static void rules(void (*parse)(const char *text, struct rk_doctor_check *c), const char *text,
		  enum rk_doctor_status want, const char *fix)
{
	struct rk_doctor_check c;

	parse(text, &c);
	assert_string_equal(c.id, "firewall");
	if (c.status != want)
		fail_msg("rules\n%s\ngave %s: %s", text, rk_doctor_status_str(c.status), c.seen);
	if (fix)
		assert_contains(c.fix, fix);
	else
		assert_string_equal(c.fix, "");
}

static void ipt(const char *text, enum rk_doctor_status want, const char *fix)
{
	rules(rk_doctor_firewall_iptables, text, want, fix);
}

static void test_iptables(void **state)
{
	(void)state;
	ipt("-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n", RK_DOCTOR_PASS, NULL);
	ipt("-P INPUT ACCEPT\n-A INPUT -p udp -m udp --dport 4791 -j DROP\n", RK_DOCTOR_FAIL,
	    "iptables -D INPUT -p udp -m udp --dport 4791 -j DROP");
	ipt("-P OUTPUT ACCEPT\n-A OUTPUT -p udp -m udp --dport 4791 -j REJECT --reject-with "
	    "icmp-port-unreachable\n",
	    RK_DOCTOR_FAIL, "iptables -D OUTPUT -p udp");
	/* Accepted before the drop. */
	ipt("-A INPUT -p udp -m udp --dport 4791 -j ACCEPT\n-A INPUT -p tcp -j ACCEPT\n"
	    "-A INPUT -j DROP\n",
	    RK_DOCTOR_PASS, NULL);
	/* A drop of everything drops both. */
	ipt("-A INPUT -j DROP\n", RK_DOCTOR_FAIL, "iptables -D INPUT -j DROP");
	/* A range and a list. */
	ipt("-A INPUT -p udp -m multiport --dports 53,4000:5000 -j DROP\n", RK_DOCTOR_FAIL,
	    "iptables -D INPUT -p udp -m multiport");
	ipt("-A INPUT -p udp -m multiport --dports 53,5000:6000 -j DROP\n", RK_DOCTOR_PASS, NULL);
	/* The other protocol, another port, a partial rule: not these packets. */
	ipt("-A INPUT -p tcp -m tcp --dport 4791 -j DROP\n", RK_DOCTOR_PASS, NULL);
	ipt("-A INPUT -p udp -m udp --dport 4792 -j DROP\n", RK_DOCTOR_PASS, NULL);
	ipt("-A INPUT -i eth0 -j DROP\n-A INPUT -s 10.0.0.0/8 -j DROP\n"
	    "-A INPUT -m conntrack --ctstate INVALID -j DROP\n",
	    RK_DOCTOR_PASS, NULL);
	/* rdmakit's TCP port. */
	ipt("-A INPUT -p tcp -m tcp --dport 18515 -j DROP\n", RK_DOCTOR_FAIL,
	    "iptables -D INPUT -p tcp -m tcp --dport 18515 -j DROP");
	/* A policy that drops what no rule accepts. */
	ipt("-P INPUT DROP\n-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT\n", RK_DOCTOR_FAIL,
	    "iptables -I INPUT -p udp --dport 4791 -j ACCEPT");
	ipt("-P INPUT DROP\n-A INPUT -p udp -m udp --dport 4791 -j ACCEPT\n"
	    "-A INPUT -p tcp -m tcp --dport 18515 -j ACCEPT\n",
	    RK_DOCTOR_PASS, NULL);
	ipt("", RK_DOCTOR_PASS, NULL);
}

/* The rules of chain input (policy policy) in a ruleset. */
static void nft(const char *chain, const char *policy, enum rk_doctor_status want, const char *fix)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "table inet filter { # handle 1\n"
		 "\tset blocked { # handle 3\n\t\ttype ipv4_addr\n\t\telements = { 192.0.2.1 "
		 "}\n\t}\n"
		 "\tchain input { # handle 1\n"
		 "\t\ttype filter hook input priority filter; policy %s;\n%s"
		 "\t}\n"
		 "\tchain helper { # handle 2\n\t\tudp dport 4791 drop # handle 9\n\t}\n"
		 "}\n",
		 policy, chain);
	rules(rk_doctor_firewall_nft, text, want, fix);
}

static void test_nft(void **state)
{
	(void)state;
	/* The helper chain has no hook: its drop is not reached by itself. */
	nft("", "accept", RK_DOCTOR_PASS, NULL);
	nft("\t\tudp dport 4791 drop # handle 4\n", "accept", RK_DOCTOR_FAIL,
	    "nft delete rule inet filter input handle 4");
	nft("\t\tudp dport { 53, 4791 } counter packets 0 bytes 0 drop # handle 7\n", "accept",
	    RK_DOCTOR_FAIL, "nft delete rule inet filter input handle 7");
	nft("\t\tudp dport 4000-5000 reject with icmp type port-unreachable # handle 8\n", "accept",
	    RK_DOCTOR_FAIL, "nft delete rule inet filter input handle 8");
	nft("\t\tmeta l4proto udp drop # handle 5\n", "accept", RK_DOCTOR_FAIL,
	    "nft delete rule inet filter input handle 5");
	nft("\t\tudp dport 4791 accept # handle 4\n\t\tdrop # handle 5\n", "accept", RK_DOCTOR_FAIL,
	    "nft delete rule inet filter input handle 5");
	nft("\t\tiifname \"eth0\" drop # handle 4\n\t\tip saddr @blocked drop # handle 6\n"
	    "\t\tct state invalid drop # handle 10\n\t\ttcp dport 22 drop # handle 11\n",
	    "accept", RK_DOCTOR_PASS, NULL);
	nft("\t\ttcp dport 22 accept # handle 4\n", "drop", RK_DOCTOR_FAIL,
	    "nft insert rule inet filter input udp dport 4791 accept");
	nft("\t\tudp dport 4791 accept # handle 4\n\t\ttcp dport 18515 accept # handle 5\n", "drop",
	    RK_DOCTOR_PASS, NULL);
	nft("\t\tjump helper # handle 4\n", "accept", RK_DOCTOR_PASS, NULL);
	/* A handle that is not a number whole is not taken for one. */
	nft("\t\tudp dport 4791 drop # handle 4x\n", "accept", RK_DOCTOR_FAIL,
	    "nft -a list chain inet filter input shows the rule's handle");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_healthy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_modules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dev_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_netdev_down, setup, teardown),
		cmocka_unit_test_setup_teardown(test_addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ib_no_sm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memlock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hugepages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_named, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_iwarp_port, setup, teardown),
		cmocka_unit_test(test_iptables),
		cmocka_unit_test(test_nft),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
