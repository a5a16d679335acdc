/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The command line the commands share (cli_cmdline.h): parsing with --help
 * and --version, the role and HOST, and the memory group. */
#include <errno.h>
#include <stdio.h>

#include <rdmakit/version.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"

int cli_version(void)
{
	printf("rdmakit %s\n", rk_version());
	return CLI_OK;
}

int cli_parse(const char *cmd, const char *usage, const char *description,
	      const struct cli_opt *opts, int argc, char **argv, int *first_arg_p)
{
	return cli_parse_epilog(cmd, usage, description, NULL, opts, argc, argv, first_arg_p);
}

int cli_parse_epilog(const char *cmd, const char *usage, const char *description,
		     const char *epilog, const struct cli_opt *opts, int argc, char **argv,
		     int *first_arg_p)
{
	int ret = cli_opts_parse(cmd, opts, argc, argv, first_arg_p);

	cli_json_want(opts, argc, argv, ret == 0);
	if (ret == 1) {
		cli_opts_help_epilog(stdout, usage, description, opts, epilog);
		return CLI_OK;
	}
	if (ret == 2)
		return cli_version();
	if (ret)
		return CLI_USAGE;
	return -1;
}

int cli_parse_noargs(const char *cmd, const char *usage, const char *description,
		     const struct cli_opt *opts, int argc, char **argv)
{
	int first, ret = cli_parse(cmd, usage, description, opts, argc, argv, &first);

	if (ret < 0 && first < argc) {
		fprintf(stderr, "rdmakit %s: unexpected argument '%s'\n", cmd, argv[first]);
		return CLI_USAGE;
	}
	return ret;
}

int cli_check_role(const char *cmd, bool server, const char *host)
{
	if (server && host) {
		fprintf(stderr, "rdmakit %s: a server takes no HOST ('%s')\n", cmd, host);
		return CLI_USAGE;
	}
	if (!server && !host) {
		fprintf(stderr, "rdmakit %s: give the server's address (or --server)\n", cmd);
		return CLI_USAGE;
	}
	return -1;
}

int cli_check_role_args(const char *cmd, bool server, int argc, char **argv, int first)
{
	if (server)
		return cli_check_role(cmd, true, first < argc ? argv[first] : NULL);
	if (first < argc - 1) {
		fprintf(stderr, "rdmakit %s: one HOST only ('%s' is extra)\n", cmd, argv[first + 1]);
		return CLI_USAGE;
	}
	return cli_check_role(cmd, false, first < argc ? argv[first] : NULL);
}

int cli_parse_role(const char *cmd, const char *usage, const char *description,
		   const struct cli_opt *opts, int argc, char **argv,
		   const struct cli_conn_opts *conn, struct rk_traffic *traffic,
		   const char **host_p)
{
	int first, ret;

	ret = cli_parse(cmd, usage, description, opts, argc, argv, &first);
	if (ret < 0)
		ret = cli_check_role_args(cmd, conn->server, argc, argv, first);
	if (ret < 0 && cli_traffic(cmd, &conn->traffic, traffic))
		ret = CLI_USAGE;
	if (ret < 0)
		*host_p = conn->server ? NULL : argv[first];
	return ret;
}

int cli_server_only(const char *cmd, const char *option, bool given, bool server)
{
	if (given && !server) {
		fprintf(stderr, "rdmakit %s: option %s is for the server (--server)\n", cmd, option);
		return -EINVAL;
	}
	return 0;
}

const char *const cli_mem_kinds[] = {"host", "hugepage", "memfd", "memfd-huge", "dm", "auto",
				      NULL};
const char *const cli_mem_kinds_no_dm[] = {"host", "hugepage", "memfd", "memfd-huge", "auto",
					   NULL};

int cli_mem_parse(const char *cmd, const struct cli_mem_opts *o, unsigned int allow,
		  enum rk_mem_kind *kind_p)
{
	char names[80] = "";
	size_t off = 0;
	enum rk_mem_kind k;

	if (!rk_mem_kind_parse(o->mem, &k) && (allow & (1u << k))) {
		*kind_p = k;
		return 0;
	}
	for (int i = RK_MEM_HOST; i <= RK_MEM_AUTO; i++)
		if (allow & (1u << i))
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
						off ? ", " : "", rk_mem_kind_name(i));
	fprintf(stderr, "rdmakit %s: option --mem: '%s' is not one of %s%s\n", cmd, o->mem, names,
		!rk_mem_kind_parse(o->mem, &k) ? " here" : "");
	return -EINVAL;
}

const char *cli_mem_text(enum rk_mem_kind kind)
{
	switch (kind) {
	case RK_MEM_HUGEPAGE: return "huge pages";
	case RK_MEM_MEMFD: return "memfd memory";
	case RK_MEM_MEMFD_HUGE: return "memfd huge pages";
	case RK_MEM_DM: return "device memory";
	default: return "host memory";
	}
}

void cli_mem_json(json_object *doc, enum rk_mem_kind kind, bool chosen, const char *why,
		  bool odp)
{
	cli_add_str(doc, "memory", rk_mem_kind_name(kind));
	cli_add_bool(doc, "memory_chosen_by_auto", chosen);
	if (chosen && why && why[0])
		cli_add_str(doc, "memory_why", why);
	cli_add_bool(doc, "odp", odp);
}
