/* rdmakit CLI: one option table per command drives getopt_long, --help (with
 * live defaults) and validation. Numbers go through one strict parser. */
#ifndef RDMAKIT_CLI_OPTS_H
#define RDMAKIT_CLI_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rdmakit/units.h>

enum rk_opt_type {
	RK_OPT_FLAG,   /* bool; no argument */
	RK_OPT_STRING, /* const char * */
	RK_OPT_SIZE,   /* uint64_t; suffixes k, M, G are powers of 1024 */
	RK_OPT_COUNT,  /* uint64_t; suffixes k, M, G are powers of 1000 */
	RK_OPT_INT,    /* int64_t; plain decimal, may be negative */
	RK_OPT_LIST,   /* struct rk_opt_list; repeatable, each value kept */
};

#define RK_OPT_LIST_MAX 16

/* The values of a repeatable option, in the order given. */
struct rk_opt_list {
	const char *v[RK_OPT_LIST_MAX];
	int n;
};

struct rk_opt {
	const char *name;      /* long name, without "--" */
	int key;               /* short letter, or 0 */
	enum rk_opt_type type;
	void *dest;            /* bool *, const char **, uint64_t *, int64_t *, rk_opt_list * */
	int64_t min;           /* numeric range, inclusive */
	uint64_t max;
	const char *arg;       /* argument name in --help */
	const char *help;
};

/* Terminates a table. */
#define RK_OPT_END {0}

/* Parse argv against the table (argv[0] is the command name). Positional
 * arguments are left in argv[*first_arg_p .. argc-1]. Returns 1 for --help
 * (the caller prints rk_opts_help()). On bad input prints "rdmakit CMD: ..." naming the option to
 * stderr and returns -EINVAL. prog names the command in messages. */
int rk_opts_parse(const char *prog, const struct rk_opt *opts, int argc, char **argv,
		  int *first_arg_p);

/* Whether the option whose value lands in dest was given in the last
 * rk_opts_parse() (a default and the same value given are told apart). */
bool rk_opts_given(const void *dest);

/* Print usage, a description and every option with its current (default)
 * value. */
void rk_opts_help(FILE *out, const char *usage, const char *description,
		  const struct rk_opt *opts);

/* rk_opts_help(), then epilog (when not NULL) after the options: what the
 * options come to together, exit statuses. */
void rk_opts_help_epilog(FILE *out, const char *usage, const char *description,
			 const struct rk_opt *opts, const char *epilog);

#endif
