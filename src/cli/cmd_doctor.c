/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit doctor: why RDMA does not work on this host, and what to change
 * (the checks are rk_doctor_run()'s; this prints them as they come). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"

struct doctor_opts {
	const char *device;
	bool json;
};

/* What the run saw: the JSON checks, the first failure. */
struct doctor_out {
	bool json;
	json_object *checks;
	char first_fail[256];
	int first_err;
	int nfail;
};

static const char usage_text[] = "rdmakit doctor [-d DEV] [--json]";
static const char description[] =
	"Check what RDMA needs on this host, in order, and say for each check PASS, WARN or\n"
	"FAIL with what was seen and the command or setting that fixes it: the kernel's RDMA\n"
	"modules; /dev/infiniband and this user's access to it; a user-space provider for\n"
	"each device; each port's state; on RoCE its netdev, the netdev's IP addresses, a\n"
	"RoCE v2 GID for each and the MTUs; on InfiniBand the LID and subnet manager; the\n"
	"locked-memory limit; the huge page pool; firewall rules dropping UDP 4791 (RoCE v2)\n"
	"or TCP 18515; error counters that moved since boot; software devices (rxe, siw).";
static const char epilog[] =
	"exit status: 0 every check passed (or could not be made: SKIP); 1 a check failed;\n"
	"2 bad usage; 3 warnings only.";

static void on_check(const struct rk_doctor_check *c, void *arg)
{
	struct doctor_out *out = arg;
	json_object *j;

	if (c->status == RK_DOCTOR_FAIL && !out->nfail++) {
		snprintf(out->first_fail, sizeof(out->first_fail), "%s", c->title);
		out->first_err = c->err;
	}
	if (!out->json) {
		printf("%s %s: %s", rk_doctor_status_str(c->status), c->title, c->seen);
		if (c->fix[0])
			printf("; fix: %s", c->fix);
		printf("\n");
		fflush(stdout);
		return;
	}
	j = json_object_new_object();
	cli_add_str(j, "id", c->id);
	cli_add_str(j, "title", c->title);
	if (c->device[0])
		cli_add_str(j, "device", c->device);
	if (c->port)
		cli_add_int(j, "port", c->port);
	cli_add_str(j, "status", rk_doctor_status_str(c->status));
	cli_add_str(j, "seen", c->seen);
	if (c->fix[0])
		cli_add_str(j, "fix", c->fix);
	if (c->err)
		cli_add_str(j, "errno", cli_errno_name(c->err));
	json_object_array_add(out->checks, j);
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor_opts o = {0};
	const struct cli_opt opts[] = {
		{"device", 'd', CLI_OPT_STRING, &o.device, 0, 0, "DEV", "only this device",
		 .def = "every device"},
		CLI_JSON_OPT(&o.json),
		CLI_OPT_END,
	};
	struct rk_doctor_opts dopts = {0};
	struct doctor_out out = {0};
	struct rk_doctor_summary sum;
	json_object *doc, *s;
	char why[512];
	int ret, status, first;

	ret = cli_parse_epilog("doctor", usage_text, description, epilog, opts, argc, argv, &first);
	if (ret >= 0)
		return ret;
	if (first < argc) {
		fprintf(stderr,
			"rdmakit doctor: unexpected argument '%s' (the local checks take "
			"none)\n",
			argv[first]);
		return CLI_USAGE;
	}
	dopts.device = o.device;
	out.json = o.json;
	if (o.json)
		out.checks = json_object_new_array();
	ret = rk_doctor_run(&dopts, on_check, &out, &sum);
	if (ret) {
		json_object_put(out.checks);
		return cli_fail(ret);
	}
	status = rk_doctor_exit_status(&sum);
	snprintf(why, sizeof(why), "%d check%s failed, the first: %s", out.nfail,
		 out.nfail == 1 ? "" : "s", out.first_fail);
	if (!o.json) {
		printf("doctor: %d passed, %d warning%s, %d failed, %d skipped\n", sum.pass,
		       sum.warn, sum.warn == 1 ? "" : "s", sum.fail, sum.skip);
	} else {
		doc = json_object_new_object();
		if (o.device)
			cli_add_str(doc, "device", o.device);
		json_object_object_add(doc, "checks", out.checks);
		s = json_object_new_object();
		cli_add_int(s, "pass", sum.pass);
		cli_add_int(s, "warn", sum.warn);
		cli_add_int(s, "fail", sum.fail);
		cli_add_int(s, "skip", sum.skip);
		json_object_object_add(doc, "summary", s);
		cli_add_str(doc, "verdict", sum.fail ? "FAIL" : sum.warn ? "WARN" : "PASS");
		cli_add_str(doc, "result", sum.fail ? "failed" : "ok");
		if (sum.fail) {
			cli_add_str(doc, "error", why);
			cli_add_str(doc, "errno",
				    cli_errno_name(out.first_err ? out.first_err : -EIO));
		}
		cli_json_print(doc);
	}
	if (sum.fail) {
		fprintf(stderr, "rdmakit doctor: %s\n", why);
		cli_fail(out.first_err ? out.first_err : -EIO);
	}
	return status;
}
