/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit CLI: one option table per command drives getopt_long, --help (with
 * live defaults) and validation. Numbers go through one strict parser. */
#ifndef RDMAKIT_CLI_OPTS_H
#define RDMAKIT_CLI_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rdmakit/units.h>

enum cli_opt_type {
	CLI_OPT_FLAG,   /* bool; no argument */
	CLI_OPT_STRING, /* const char * */
	CLI_OPT_SIZE,   /* uint64_t; suffixes k, M, G are powers of 1024 */
	CLI_OPT_COUNT,  /* uint64_t; suffixes k, M, G are powers of 1000 */
	CLI_OPT_INT,    /* int64_t; plain decimal, may be negative */
	CLI_OPT_SECONDS, /* uint64_t milliseconds, given in seconds with fractions as
			   ping(8)'s -i ("0.2": 200); min and max in milliseconds */
	CLI_OPT_LIST,   /* struct cli_opt_list; repeatable, each value kept */
	CLI_OPT_GONE,   /* an old spelling, kept to name the new one: no dest */
	CLI_OPT_ALIAS,  /* another program's spelling of a live row (CLI_OPT_ALIAS_ROW) */
	CLI_OPT_FOREIGN, /* another program's spelling refused by name (CLI_OPT_FOREIGN_ROW) */
};

#define CLI_OPT_LIST_MAX 16

/* The values of a repeatable option, in the order given. */
struct cli_opt_list {
	const char *v[CLI_OPT_LIST_MAX];
	int n;
};

struct cli_opt {
	const char *name;      /* long name, without "--" */
	int key;               /* short letter, or 0 */
	enum cli_opt_type type;
	void *dest;            /* bool *, const char **, uint64_t *, int64_t *, cli_opt_list * */
	int64_t min;           /* numeric range, inclusive */
	uint64_t max;
	const char *arg;       /* argument name in --help */
	const char *help;      /* CLI_OPT_GONE: the message, "--test is now -o/--op" */
	/* CLI_OPT_STRING and CLI_OPT_LIST: the values it takes, NULL-terminated
	 * (the parser refuses others; --help, man and completion show them);
	 * NULL: any text. */
	const char *const *choices;
	/* The default as --help and the man page show it, where the live value
	 * does not say it ("5000 for bw, 1000 for lat"); NULL: the live value. */
	const char *def;
	/* The values to offer (completion, the man page's Values) where the
	 * command checks the value itself, its message saying more than the
	 * parser's would ("'dm' is not one of ... here"); NULL-terminated. */
	const char *const *values;
	/* CLI_OPT_ALIAS: the value it stands for, given without an argument
	 * (perftest's -a: "2..8M" for --size); NULL: it takes the live row's. */
	const char *value;
};

/* Terminates a table. */
#define CLI_OPT_END {0}

/* An old spelling: given, the parse fails with "rdmakit CMD: MSG" (exit 2).
 * name "" for a letter alone. A letter that a live row of the same table
 * has too is that row's old meaning: MSG follows an error in its value
 * ("bench -t write": "-t is now --timeout; the test is -o/--op"). Not shown
 * by --help; the man page lists them under OLD SPELLINGS. */
#define CLI_OPT_GONE_ROW(name, key, msg) {(name), (key), CLI_OPT_GONE, NULL, 0, 0, NULL, (msg)}

/* Another program's spelling (perftest's -x, ibv_rc_pingpong's -t) where a
 * script may meet rdmakit with it. Neither is shown by --help; the man page
 * lists them under OTHER PROGRAMS' SPELLINGS. The letter of a live row of
 * the same table cannot be one.
 *
 * An alias is the live row of the same table whose dest it shares, its
 * value parsed as that row's ("perftest's -x 1" is --gid-index 1); with
 * value, a spelling without an argument that gives the row that value
 * (perftest's -a is --size 2..8M). dest NULL: taken and ignored, and
 * "rdmakit CMD: MSG" said on stderr (perftest's -F). who names the program
 * ("perftest's"). */
#define CLI_OPT_ALIAS_ROW(name, key, dest, value_, who)                                         \
	{(name), (key), CLI_OPT_ALIAS, (dest), 0, 0, NULL, (who), .value = (value_)}
#define CLI_OPT_IGNORED_ROW(name, key, msg) {(name), (key), CLI_OPT_ALIAS, NULL, 0, 0, NULL, (msg)}

/* A spelling of another program whose meaning rdmakit has not one to one:
 * given, the parse fails with "rdmakit CMD: MSG" (exit 2); MSG names
 * rdmakit's way ("-t is perftest's --tx-depth; rdmakit: --tx-depth N"). */
#define CLI_OPT_FOREIGN_ROW(name, key, msg)                                                     \
	{(name), (key), CLI_OPT_FOREIGN, NULL, 0, 0, NULL, (msg)}

/* Parse argv against the table (argv[0] is the command name). Positional
 * arguments are left in argv[*first_arg_p .. argc-1]. Returns 1 for --help
 * (the caller prints cli_opts_help()), 2 for --version (the caller prints
 * its version). On bad input prints "rdmakit CMD: ..." naming the option to
 * stderr and returns -EINVAL. prog names the command in messages. */
int cli_opts_parse(const char *prog, const struct cli_opt *opts, int argc, char **argv,
		  int *first_arg_p);

/* Whether the option whose value lands in dest was given in the last
 * cli_opts_parse() (a default and the same value given are told apart). */
bool cli_opts_given(const void *dest);

/* The index of text in choices (NULL-terminated), or -1. */
int cli_opt_choice(const char *const *choices, const char *text);

/* Print usage, a description and every option with its current (default)
 * value. With RDMAKIT_HELP_FORMAT=tsv in the environment it prints the same
 * as tab-separated records instead, for the generator of the man pages and
 * the completion (docs/gendocs.py reads them):
 *   usage/description/epilog TAB TEXT    (backslash, tab, newline escaped)
 *   option TAB LONG TAB LETTER TAB TYPE TAB ARG TAB DEFAULT TAB CHOICES TAB HELP TAB MEANS
 * LETTER "" when none, CHOICES (or the values offered) joined by "|", TYPE flag, string, size,
 * count, int, seconds, list, gone, alias or foreign; MEANS an alias's live
 * row as given ("--gid-index IDX", "--size 2..8M"; "" when ignored). With
 * RDMAKIT_HELP_WIDTH=N the usage, description and epilog are wrapped to N
 * columns as the text help wraps them (docs/gendocs.py: the man pages').
 *
 * The text help fits the terminal's width (80 columns when out is not a
 * terminal; RDMAKIT_HELP_WIDTH=N sets it): an option's help wraps under its
 * column; a paragraph of the usage, description or epilog (lines not
 * starting with a space) that has a line too long is filled anew, and an
 * indented line too long is wrapped under its text (with the lines that
 * continue it: "  import  the owner ..." and the lines below under "the"). */
void cli_opts_help(FILE *out, const char *usage, const char *description,
		  const struct cli_opt *opts);

/* Whether RDMAKIT_HELP_FORMAT=tsv asks for the records above. */
bool cli_opts_help_tsv(void);

/* cli_opts_help(), then epilog (when not NULL) after the options: what the
 * options come to together, exit statuses. */
void cli_opts_help_epilog(FILE *out, const char *usage, const char *description,
			 const struct cli_opt *opts, const char *epilog);

#endif
