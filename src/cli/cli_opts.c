/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Strict option parsing driven by one table per command. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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
	case CLI_OPT_ALIAS:
	case CLI_OPT_FOREIGN:
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

/* Whether a row is an option in use (not an old spelling nor another
 * program's). A refused row's letter that a live row also has is only a
 * note on that row. */
static bool is_live(const struct cli_opt *o)
{
	return o->type < CLI_OPT_GONE;
}

/* An old spelling or another program's, refused by name. */
static bool is_refused(const struct cli_opt *o)
{
	return o->type == CLI_OPT_GONE || o->type == CLI_OPT_FOREIGN;
}

static const struct cli_opt *live_with_key(const struct cli_opt *opts, int key)
{
	for (const struct cli_opt *o = opts; key && o->name; o++)
		if (is_live(o) && o->key == key)
			return o;
	return NULL;
}

static const struct cli_opt *refused_with_key(const struct cli_opt *opts, int key)
{
	for (const struct cli_opt *o = opts; key && o->name; o++)
		if (is_refused(o) && o->key == key)
			return o;
	return NULL;
}

static const struct cli_opt *alias_with_key(const struct cli_opt *opts, int key)
{
	for (const struct cli_opt *o = opts; key && o->name; o++)
		if (o->type == CLI_OPT_ALIAS && o->key == key)
			return o;
	return NULL;
}

/* The live row an alias is (the one with its dest), or NULL. */
static const struct cli_opt *alias_target(const struct cli_opt *opts, const struct cli_opt *a)
{
	for (const struct cli_opt *o = opts; a->dest && o->name; o++)
		if (is_live(o) && o->dest == a->dest)
			return o;
	return NULL;
}

/* Whether a row's spelling takes an argument. */
static bool takes_arg(const struct cli_opt *opts, const struct cli_opt *o)
{
	const struct cli_opt *t = o;

	if (o->type == CLI_OPT_ALIAS)
		t = o->value ? NULL : alias_target(opts, o);
	return t && is_live(t) && t->type != CLI_OPT_FLAG;
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
			lopts[l].has_arg = takes_arg(opts, o) ? required_argument : no_argument;
			if (is_refused(o))
				lopts[l].has_arg = optional_argument;
			lopts[l].flag = NULL;
			lopts[l++].val = 256 + i;
		}
		if (o->key && (is_live(o) || !live_with_key(opts, o->key))) {
			sopts[s++] = (char)o->key;
			if (takes_arg(opts, o))
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
		const char *arg = optarg;

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
			o = alias_with_key(opts, c);
		if (!o)
			o = refused_with_key(opts, c);
		if (!o)
			return -EINVAL;
		if (is_refused(o)) {
			fprintf(stderr, "rdmakit %s: %s\n", prog, o->help);
			return -EINVAL;
		}
		if (o->type == CLI_OPT_ALIAS && !o->dest) {
			fprintf(stderr, "rdmakit %s: %s\n", prog, o->help);
			continue;
		}
		if (o->type == CLI_OPT_ALIAS) {
			arg = o->value ? o->value : optarg;
			o = alias_target(opts, o);
			if (!o)
				return -EINVAL;
		}
		if (set_value(prog, o, arg)) {
			const struct cli_opt *note = c < 256 ? refused_with_key(opts, c) : NULL;

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
	case CLI_OPT_ALIAS:
	case CLI_OPT_FOREIGN:
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

/* ---- text to a width ---- */

/* The width the text help fits: RDMAKIT_HELP_WIDTH, else the terminal's
 * when out is one, else 80 (0 for the records: no wrapping). */
static int help_width(FILE *out)
{
	const char *env = getenv("RDMAKIT_HELP_WIDTH");
	struct winsize ws;
	char err[128];
	int64_t w;

	if (env && *env) {
		if (!rk_parse_i64(env, 40, 1000, &w, err, sizeof(err)))
			return (int)w;
		fprintf(stderr, "rdmakit: RDMAKIT_HELP_WIDTH ignored: %s\n", err);
	}
	if (cli_opts_help_tsv())
		return 0;
	if (isatty(fileno(out)) && !ioctl(fileno(out), TIOCGWINSZ, &ws) && ws.ws_col >= 40)
		return ws.ws_col;
	return 80;
}

/* prefix, then the words of text[0..len) (split at spaces and newlines)
 * filled to width, each line after the first indented by indent; a newline
 * at the end. */
static void fill(FILE *out, const char *prefix, const char *text, size_t len, int width,
		 int indent)
{
	const char *p = text, *end = text + len;
	int col = fprintf(out, "%s", prefix);
	bool fresh = true; /* nothing on this line after the prefix or indent */

	while (p < end) {
		const char *w;
		int n;

		while (p < end && (*p == ' ' || *p == '\n'))
			p++;
		if (p == end)
			break;
		for (w = p; p < end && *p != ' ' && *p != '\n'; p++)
			;
		n = (int)(p - w);
		if (!fresh && col + 1 + n > width) {
			col = fprintf(out, "\n%*s", indent, "") - 1;
			fresh = true;
		}
		/* A word longer than a line ("a|b|c|..."): cut after its last '|'
		 * or ',' that fits; the rest goes on the next line. */
		if (fresh && col + n > width)
			for (int j = width - col - 1; j > 0; j--)
				if (w[j] == '|' || w[j] == ',') {
					n = j + 1;
					p = w + n;
					break;
				}
		if (!fresh)
			col += fprintf(out, " ");
		col += fprintf(out, "%.*s", n, w);
		fresh = false;
	}
	fputc('\n', out);
}

/* One line of a block: its start, length, leading spaces. */
struct line {
	const char *s;
	int n, lead;
};

/* The column an indented line's continuation lines stand at: the word's
 * after its first gap of two spaces or more ("  import  the owner",
 * "  --proto native    (default) ..."), else -1. */
static int hang_of(const struct line *l)
{
	for (int i = l->lead; i + 2 < l->n; i++)
		if (l->s[i] == ' ' && l->s[i + 1] == ' ') {
			while (i < l->n && l->s[i] == ' ')
				i++;
			return i < l->n ? i : -1;
		}
	return -1;
}

/* Whether line k continues the group that line i starts: a paragraph's
 * prose line (a usage's line: one indented deeper than the usage's lines),
 * the lines under an indented line's hang (without one: indented deeper). */
static bool continues(const struct line *li, const struct line *lk, int hang, bool usage)
{
	if (lk->lead == lk->n)
		return false;
	if (!li->lead)
		return lk->lead == 0 || (usage && lk->lead > 7);
	return hang > 0 ? lk->lead == hang : lk->lead > li->lead;
}

/* text as the usage, description or epilog (cli_opts.h): as written where
 * it fits width (0: any), else filled anew by groups of lines; usage: text
 * is "usage: " and a usage, whose lines are indented by 7. */
static void put_block(FILE *out, const char *text, int width, bool usage)
{
	struct line *lines;
	int n = 1, i = 0, k, hang;
	const char *p;

	for (p = text; *p; p++)
		n += *p == '\n';
	lines = calloc((size_t)n, sizeof(*lines));
	if (!lines) {
		fprintf(out, "%s\n", text);
		return;
	}
	for (p = text, n = 0;; n++) {
		const char *eol = strchr(p, '\n');

		lines[n].s = p;
		lines[n].n = eol ? (int)(eol - p) : (int)strlen(p);
		while (lines[n].lead < lines[n].n && p[lines[n].lead] == ' ')
			lines[n].lead++;
		if (!eol) {
			n++;
			break;
		}
		p = eol + 1;
	}
	while (i < n) {
		bool too_long = false;
		char prefix[128];
		int at, indent;

		if (lines[i].lead == lines[i].n) { /* blank */
			fputc('\n', out);
			i++;
			continue;
		}
		hang = lines[i].lead ? hang_of(&lines[i]) : -1;
		for (k = i + 1; k < n && continues(&lines[i], &lines[k], hang, usage); k++)
			;
		for (int j = i; j < k; j++)
			too_long |= width && lines[j].n > width;
		if (!too_long) {
			for (int j = i; j < k; j++)
				fprintf(out, "%.*s\n", lines[j].n, lines[j].s);
			i = k;
			continue;
		}
		/* The prefix kept as written: the indent, or up to the hang. */
		at = hang > 0 && hang < (int)sizeof(prefix) ? hang : lines[i].lead;
		if (hang > 0)
			indent = hang;
		else if (k > i + 1 && lines[i + 1].lead > lines[i].lead)
			indent = lines[i + 1].lead;
		else
			indent = lines[i].lead + (usage ? 11 : lines[i].lead ? 4 : 0);
		snprintf(prefix, sizeof(prefix), "%.*s", at, lines[i].s);
		fill(out, prefix, lines[i].s + at,
		     (size_t)(lines[k - 1].s + lines[k - 1].n - lines[i].s - at), width, indent);
		i = k;
	}
	free(lines);
}

/* "usage: " and the usage, to width. */
static void put_usage(FILE *out, const char *usage, int width)
{
	size_t len = strlen(usage) + 8;
	char *text = malloc(len);

	if (!text) {
		fprintf(out, "usage: %s\n", usage);
		return;
	}
	snprintf(text, len, "usage: %s", usage);
	put_block(out, text, width, true);
	free(text);
}

/* text as put_block() prints it to width (0: as written), as one TSV field;
 * the usage without its "usage: " column. */
static void tsv_block(FILE *out, const char *text, bool usage, int width)
{
	char *buf = NULL, *p;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	if (!mem) {
		tsv_field(out, text);
		return;
	}
	if (usage)
		put_usage(mem, text ? text : "", width);
	else if (text)
		put_block(mem, text, width, false);
	fclose(mem);
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (usage) { /* each line without the 7 columns of "usage: " */
		char *to = buf;

		for (p = buf; *p;) {
			bool first = p == buf;

			for (int skip = 0; skip < 7 && *p && *p != '\n' && (first || *p == ' ');
			     skip++)
				p++;
			while (*p && *p != '\n')
				*to++ = *p++;
			if (*p)
				*to++ = *p++;
		}
		*to = '\0';
	}
	tsv_field(out, buf);
	free(buf);
}

static void help_tsv(FILE *out, const char *usage, const char *description,
		     const struct cli_opt *opts, const char *epilog)
{
	static const char *const types[] = {"flag", "string", "size", "count", "int", "seconds",
					    "list", "gone", "alias", "foreign"};
	const char *heads[] = {"usage", usage, "description", description, "epilog", epilog};
	int width = help_width(out);

	for (int i = 0; i < 6; i += 2) {
		fprintf(out, "%s\t", heads[i]);
		tsv_block(out, heads[i + 1], i == 0, width);
		fputc('\n', out);
	}
	for (const struct cli_opt *o = opts; o->name; o++) {
		const struct cli_opt *t = o->type == CLI_OPT_ALIAS ? alias_target(opts, o) : NULL;
		const char *const *offered = o->choices ? o->choices : o->values;
		char key[2] = {(char)o->key, 0}, def[128], means[128] = "";

		default_text(o, def, sizeof(def));
		if (t)
			snprintf(means, sizeof(means), "--%s%s%s", t->name,
				 o->value || t->type != CLI_OPT_FLAG ? " " : "",
				 o->value ? o->value :
				 t->type != CLI_OPT_FLAG ? (t->arg ? t->arg : "VALUE") : "");
		fprintf(out, "option\t%s\t%s\t%s\t", o->name, key, types[o->type]);
		if (o->type == CLI_OPT_ALIAS)
			tsv_field(out, t && !o->value && t->type != CLI_OPT_FLAG ?
				       (t->arg ? t->arg : "VALUE") : "");
		else
			tsv_field(out, o->arg ? o->arg :
				       (o->type == CLI_OPT_FLAG || !is_live(o) ? "" : "VALUE"));
		fputc('\t', out);
		tsv_field(out, def);
		fputc('\t', out);
		for (int i = 0; offered && offered[i]; i++)
			fprintf(out, "%s%s", i ? "|" : "", offered[i]);
		fputc('\t', out);
		tsv_field(out, o->help);
		fputc('\t', out);
		tsv_field(out, means);
		fputc('\n', out);
	}
}

bool cli_opts_help_tsv(void)
{
	const char *f = getenv("RDMAKIT_HELP_FORMAT");

	return f && !strcmp(f, "tsv");
}

/* The left column of an option's line. */
#define HELP_LEFT 28

void cli_opts_help_epilog(FILE *out, const char *usage, const char *description,
			 const struct cli_opt *opts, const char *epilog)
{
	int width;

	if (cli_opts_help_tsv()) {
		help_tsv(out, usage, description, opts, epilog);
		return;
	}
	width = help_width(out);
	put_usage(out, usage, width);
	fputc('\n', out);
	put_block(out, description, width, false);
	fputs("\noptions:\n", out);
	for (const struct cli_opt *o = opts; o->name; o++) {
		char left[64], prefix[96], def[128], *text;
		size_t len;

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
		snprintf(prefix, sizeof(prefix), "  %-*s ", HELP_LEFT, left);
		len = strlen(o->help) + strlen(def) + 16;
		text = malloc(len);
		if (!text) {
			fprintf(out, "%s%s\n", prefix, o->help);
			continue;
		}
		snprintf(text, len, "%s%s%s%s", o->help, def[0] ? " (default: " : "", def,
			 def[0] ? ")" : "");
		fill(out, prefix, text, strlen(text), width, HELP_LEFT + 3);
		free(text);
	}
	fprintf(out, "  %-*s %s\n", HELP_LEFT, "-h, --help", "show this help");
	fprintf(out, "  %-*s %s\n", HELP_LEFT, "    --version", "print rdmakit's version");
	if (epilog) {
		fputc('\n', out);
		put_block(out, epilog, width, false);
	}
}
