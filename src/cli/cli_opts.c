/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Strict option parsing driven by one table per command. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"

#define MAX_OPTS 96

/* getopt_long's value for --version (above 256 + MAX_OPTS). */
#define VERSION_VAL 0x1000

static int count_opts(const struct cli_opt *opts)
{
	int n = 0;

	while (opts[n].name)
		n++;
	return n;
}

int cli_opt_choice(const char *const *choices, const char *text)
{
	for (int i = 0; choices && choices[i]; i++)
		if (!strcmp(choices[i], text))
			return i;
	return -1;
}

/* "'x' is not one of a, b, c" into err. */
static void not_a_choice(const struct cli_opt *o, const char *arg, char *err, size_t len)
{
	size_t at = (size_t)snprintf(err, len, "'%s' is not one of", arg);

	for (int i = 0; o->choices[i] && at < len; i++)
		at += (size_t)snprintf(err + at, len - at, "%s %s", i ? "," : "", o->choices[i]);
}

/* "1.5" for 1500 ms: seconds with no trailing zeros. */
static void seconds_text(uint64_t ms, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%" PRIu64, ms / 1000);

	if (ms % 1000 && n < len) {
		snprintf(buf + n, len - n, ".%03" PRIu64, ms % 1000);
		for (n = strlen(buf); buf[n - 1] == '0'; n--)
			buf[n - 1] = '\0';
	}
}

/* Seconds with fractions, in whole milliseconds within [min, max] ms. */
static int parse_seconds(const struct cli_opt *o, const char *arg, char *err, size_t len)
{
	char lo[32], hi[32];
	const char *end;
	double v, ms;
	uint64_t whole;
	size_t n;

	if (rk_decimal_scan(arg, &v, &end) || *end) {
		snprintf(err, len, arg[0] == '-' ? "'%s' is not a non-negative number" :
			 "'%s' is not a number of seconds (examples: 2, 0.2)", arg);
		return -EINVAL;
	}
	ms = v * 1000.0;
	whole = ms < (double)o->max + 1.0 ? (uint64_t)(ms + 0.5) : o->max + 1;
	if (whole <= o->max && (ms - (double)whole > 1e-6 || (double)whole - ms > 1e-6)) {
		snprintf(err, len, "'%s' is finer than a millisecond", arg);
		return -EINVAL;
	}
	if (whole < (uint64_t)o->min || whole > o->max) {
		seconds_text((uint64_t)o->min, lo, sizeof(lo));
		seconds_text(o->max, hi, sizeof(hi));
		snprintf(err, len, "%s is outside the range %s..%s (seconds", arg, lo, hi);
		n = strlen(err);
		/* A number of milliseconds that fits, as the option once took it */
		if (whole > o->max && v <= (double)o->max && v == (double)(uint64_t)v) {
			seconds_text((uint64_t)v, lo, sizeof(lo));
			snprintf(err + n, len - n, "; for %s ms give %s)", arg, lo);
		} else {
			snprintf(err + n, len - n, ", fractions allowed)");
		}
		return -ERANGE;
	}
	*(uint64_t *)o->dest = whole;
	return 0;
}

static int set_value(const char *prog, const struct cli_opt *o, const char *arg)
{
	char err[256];
	int ret = 0;

	switch (o->type) {
	case CLI_OPT_FLAG:
		*(bool *)o->dest = true;
		return 0;
	case CLI_OPT_GONE:
		return -EINVAL;
	case CLI_OPT_STRING:
		if (!arg[0]) {
			snprintf(err, sizeof(err), "an empty value");
			ret = -EINVAL;
			break;
		}
		if (o->choices && cli_opt_choice(o->choices, arg) < 0) {
			not_a_choice(o, arg, err, sizeof(err));
			ret = -EINVAL;
			break;
		}
		*(const char **)o->dest = arg;
		return 0;
	case CLI_OPT_LIST: {
		struct cli_opt_list *l = o->dest;

		if (!arg[0]) {
			snprintf(err, sizeof(err), "an empty value");
			ret = -EINVAL;
		} else if (o->choices && cli_opt_choice(o->choices, arg) < 0) {
			not_a_choice(o, arg, err, sizeof(err));
			ret = -EINVAL;
		} else if (l->n == CLI_OPT_LIST_MAX) {
			snprintf(err, sizeof(err), "given more than %d times", CLI_OPT_LIST_MAX);
			ret = -EINVAL;
		} else {
			l->v[l->n++] = arg;
		}
		break;
	}
	case CLI_OPT_SIZE:
	case CLI_OPT_COUNT:
		ret = rk_parse_u64(arg, (uint64_t)o->min, o->max,
				   o->type == CLI_OPT_SIZE ? 1024 : 1000, (uint64_t *)o->dest, err,
				   sizeof(err));
		break;
	case CLI_OPT_INT:
		ret = rk_parse_i64(arg, o->min, (int64_t)o->max, (int64_t *)o->dest, err,
				   sizeof(err));
		break;
	case CLI_OPT_SECONDS:
		ret = parse_seconds(o, arg, err, sizeof(err));
		break;
	}
	if (ret)
		fprintf(stderr, "rdmakit %s: option --%s: %s\n", prog, o->name, err);
	return ret;
}

/* The destinations of the options the last parse was given. */
static const void *given[MAX_OPTS];
static int ngiven;

bool cli_opts_given(const void *dest)
{
	for (int i = 0; i < ngiven; i++)
		if (given[i] == dest)
			return true;
	return false;
}

/* Whether a row is an option in use (not an old spelling). A gone row's
 * letter that a live row also has is only a note on that row. */
static bool is_live(const struct cli_opt *o)
{
	return o->type != CLI_OPT_GONE;
}

static const struct cli_opt *live_with_key(const struct cli_opt *opts, int key)
{
	for (const struct cli_opt *o = opts; key && o->name; o++)
		if (is_live(o) && o->key == key)
			return o;
	return NULL;
}

static const struct cli_opt *gone_with_key(const struct cli_opt *opts, int key)
{
	for (const struct cli_opt *o = opts; key && o->name; o++)
		if (!is_live(o) && o->key == key)
			return o;
	return NULL;
}

/* getopt_long's tables from ours: sopts ":ab:..h", lopts with --help and
 * --version. */
static void build_getopt(const struct cli_opt *opts, int n, struct option *lopts, char *sopts)
{
	int s = 0, l = 0;

	/* Options may follow positionals ("rc HOST -s 4k"): glibc permutes. */
	sopts[s++] = ':';
	for (int i = 0; i < n; i++) {
		const struct cli_opt *o = &opts[i];

		if (o->name[0]) {
			lopts[l].name = o->name;
			lopts[l].has_arg = o->type == CLI_OPT_FLAG ? no_argument : required_argument;
			if (!is_live(o))
				lopts[l].has_arg = optional_argument;
			lopts[l].flag = NULL;
			lopts[l++].val = 256 + i;
		}
		if (o->key && (is_live(o) || !live_with_key(opts, o->key))) {
			sopts[s++] = (char)o->key;
			if (is_live(o) && o->type != CLI_OPT_FLAG)
				sopts[s++] = ':';
		}
	}
	lopts[l++] = (struct option){"help", no_argument, NULL, 'h'};
	lopts[l++] = (struct option){"version", no_argument, NULL, VERSION_VAL};
	lopts[l] = (struct option){0};
	sopts[s++] = 'h';
	sopts[s] = '\0';
}

/* getopt_long's '?' or ':' said as "rdmakit PROG: ...". */
static void say_bad_option(const char *prog, const struct cli_opt *opts, int c, char **argv)
{
	if (c == ':')
		fprintf(stderr, "rdmakit %s: option %s needs a value\n", prog, argv[optind - 1]);
	else if (optopt >= 256 && optopt < 256 + MAX_OPTS)
		fprintf(stderr, "rdmakit %s: option --%s takes no value\n", prog,
			opts[optopt - 256].name);
	else if (optopt == VERSION_VAL)
		fprintf(stderr, "rdmakit %s: option --version takes no value\n", prog);
	else if (optopt)
		fprintf(stderr, "rdmakit %s: unknown option -%c (see --help)\n", prog, optopt);
	else
		fprintf(stderr, "rdmakit %s: unknown option %s (see --help)\n", prog,
			argv[optind - 1]);
}

int cli_opts_parse(const char *prog, const struct cli_opt *opts, int argc, char **argv,
		  int *first_arg_p)
{
	struct option lopts[MAX_OPTS + 3];
	char sopts[MAX_OPTS * 2 + 4];
	int n = count_opts(opts), c, idx;

	if (n > MAX_OPTS)
		return -EINVAL;
	build_getopt(opts, n, lopts, sopts);
	ngiven = 0;
	optind = 0; /* 0, not 1: also forgets a half-read cluster like -hv */
	opterr = 0;
	while ((c = getopt_long(argc, argv, sopts, lopts, &idx)) != -1) {
		const struct cli_opt *o;

		if (c == 'h')
			return 1;
		if (c == VERSION_VAL)
			return 2;
		if (c == '?' || c == ':') {
			say_bad_option(prog, opts, c, argv);
			return -EINVAL;
		}
		o = c >= 256 ? &opts[c - 256] : live_with_key(opts, c);
		if (!o)
			o = gone_with_key(opts, c);
		if (!o)
			return -EINVAL;
		if (!is_live(o)) {
			fprintf(stderr, "rdmakit %s: %s\n", prog, o->help);
			return -EINVAL;
		}
		if (set_value(prog, o, optarg)) {
			const struct cli_opt *note = c < 256 ? gone_with_key(opts, c) : NULL;

			if (note)
				fprintf(stderr, "rdmakit %s: %s\n", prog, note->help);
			return -EINVAL;
		}
		if (!cli_opts_given(o->dest) && ngiven < MAX_OPTS)
			given[ngiven++] = o->dest;
	}
	*first_arg_p = optind;
	return 0;
}

/* The default as text ("" when there is none to show): o->def, or the live
 * value. */
static void default_text(const struct cli_opt *o, char *buf, size_t len)
{
	buf[0] = '\0';
	if (o->def) {
		snprintf(buf, len, "%s", o->def);
		return;
	}
	switch (o->type) {
	case CLI_OPT_FLAG:
	case CLI_OPT_LIST:
	case CLI_OPT_GONE:
		break;
	case CLI_OPT_STRING:
		if (*(const char **)o->dest)
			snprintf(buf, len, "%s", *(const char **)o->dest);
		break;
	case CLI_OPT_SIZE:
	case CLI_OPT_COUNT:
		snprintf(buf, len, "%" PRIu64, *(uint64_t *)o->dest);
		break;
	case CLI_OPT_INT:
		snprintf(buf, len, "%" PRId64, *(int64_t *)o->dest);
		break;
	case CLI_OPT_SECONDS:
		seconds_text(*(uint64_t *)o->dest, buf, len);
		break;
	}
}

void cli_opts_help(FILE *out, const char *usage, const char *description,
		  const struct cli_opt *opts)
{
	cli_opts_help_epilog(out, usage, description, opts, NULL);
}

/* text with backslash, tab and newline escaped (one TSV field). */
static void tsv_field(FILE *out, const char *text)
{
	for (const char *p = text ? text : ""; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p == '\t')
			fputs("\\t", out);
		else if (*p == '\n')
			fputs("\\n", out);
		else
			fputc(*p, out);
	}
}

static void help_tsv(FILE *out, const char *usage, const char *description,
		     const struct cli_opt *opts, const char *epilog)
{
	static const char *const types[] = {"flag", "string", "size", "count", "int", "seconds",
					    "list", "gone"};
	const char *heads[] = {"usage", usage, "description", description, "epilog", epilog};

	for (int i = 0; i < 6; i += 2) {
		fprintf(out, "%s\t", heads[i]);
		tsv_field(out, heads[i + 1]);
		fputc('\n', out);
	}
	for (const struct cli_opt *o = opts; o->name; o++) {
		char key[2] = {(char)o->key, 0}, def[128];

		default_text(o, def, sizeof(def));
		fprintf(out, "option\t%s\t%s\t%s\t", o->name, key, types[o->type]);
		tsv_field(out, o->arg ? o->arg : (o->type == CLI_OPT_FLAG ? "" : "VALUE"));
		fputc('\t', out);
		tsv_field(out, def);
		fputc('\t', out);
		for (int i = 0; o->choices && o->choices[i]; i++)
			fprintf(out, "%s%s", i ? "|" : "", o->choices[i]);
		fputc('\t', out);
		tsv_field(out, o->help);
		fputc('\n', out);
	}
}

bool cli_opts_help_tsv(void)
{
	const char *f = getenv("RDMAKIT_HELP_FORMAT");

	return f && !strcmp(f, "tsv");
}

void cli_opts_help_epilog(FILE *out, const char *usage, const char *description,
			 const struct cli_opt *opts, const char *epilog)
{
	if (cli_opts_help_tsv()) {
		help_tsv(out, usage, description, opts, epilog);
		return;
	}
	fprintf(out, "usage: %s\n\n%s\n\noptions:\n", usage, description);
	for (const struct cli_opt *o = opts; o->name; o++) {
		char left[64], def[128];

		if (!is_live(o))
			continue;
		if (o->type == CLI_OPT_FLAG)
			snprintf(left, sizeof(left), "%s%c%s--%s", o->key ? "-" : "",
				 o->key ? o->key : ' ', o->key ? ", " : "   ", o->name);
		else
			snprintf(left, sizeof(left), "%s%c%s--%s %s", o->key ? "-" : "",
				 o->key ? o->key : ' ', o->key ? ", " : "   ", o->name,
				 o->arg ? o->arg : "VALUE");
		default_text(o, def, sizeof(def));
		fprintf(out, "  %-28s %s%s%s%s\n", left, o->help, def[0] ? " (default: " : "", def,
			def[0] ? ")" : "");
	}
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help");
	fprintf(out, "  %-28s %s\n", "    --version", "print rdmakit's version");
	if (epilog)
		fprintf(out, "\n%s\n", epilog);
}
