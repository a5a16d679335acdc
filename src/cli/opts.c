/* Strict option parsing driven by one table per command. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

#define MAX_OPTS 64

static int count_opts(const struct rk_opt *opts)
{
	int n = 0;

	while (opts[n].name)
		n++;
	return n;
}

static int set_value(const char *prog, const struct rk_opt *o, const char *arg)
{
	char err[160];
	int ret = 0;

	switch (o->type) {
	case RK_OPT_FLAG:
		*(bool *)o->dest = true;
		return 0;
	case RK_OPT_STRING:
		if (!arg[0]) {
			snprintf(err, sizeof(err), "an empty value");
			ret = -EINVAL;
			break;
		}
		*(const char **)o->dest = arg;
		return 0;
	case RK_OPT_LIST: {
		struct rk_opt_list *l = o->dest;

		if (!arg[0]) {
			snprintf(err, sizeof(err), "an empty value");
			ret = -EINVAL;
		} else if (l->n == RK_OPT_LIST_MAX) {
			snprintf(err, sizeof(err), "given more than %d times", RK_OPT_LIST_MAX);
			ret = -EINVAL;
		} else {
			l->v[l->n++] = arg;
		}
		break;
	}
	case RK_OPT_SIZE:
	case RK_OPT_COUNT:
		ret = rk_parse_u64(arg, (uint64_t)o->min, o->max,
				   o->type == RK_OPT_SIZE ? 1024 : 1000, (uint64_t *)o->dest, err,
				   sizeof(err));
		break;
	case RK_OPT_INT:
		ret = rk_parse_i64(arg, o->min, (int64_t)o->max, (int64_t *)o->dest, err,
				   sizeof(err));
		break;
	}
	if (ret)
		fprintf(stderr, "rdmakit %s: option --%s: %s\n", prog, o->name, err);
	return ret;
}

/* The destinations of the options the last parse was given. */
static const void *given[MAX_OPTS];
static int ngiven;

bool rk_opts_given(const void *dest)
{
	for (int i = 0; i < ngiven; i++)
		if (given[i] == dest)
			return true;
	return false;
}

int rk_opts_parse(const char *prog, const struct rk_opt *opts, int argc, char **argv,
		  int *first_arg_p)
{
	struct option lopts[MAX_OPTS + 2];
	char sopts[MAX_OPTS * 2 + 4];
	int n = count_opts(opts), s = 0, c, idx;

	if (n > MAX_OPTS)
		return -EINVAL;
	/* Options may follow positionals ("rc HOST -s 4k"): glibc permutes. */
	sopts[s++] = ':';
	for (int i = 0; i < n; i++) {
		lopts[i].name = opts[i].name;
		lopts[i].has_arg = opts[i].type == RK_OPT_FLAG ? no_argument : required_argument;
		lopts[i].flag = NULL;
		lopts[i].val = 256 + i;
		if (opts[i].key) {
			sopts[s++] = (char)opts[i].key;
			if (opts[i].type != RK_OPT_FLAG)
				sopts[s++] = ':';
		}
	}
	lopts[n] = (struct option){"help", no_argument, NULL, 'h'};
	lopts[n + 1] = (struct option){0};
	sopts[s++] = 'h';
	sopts[s] = '\0';

	ngiven = 0;
	optind = 0; /* 0, not 1: also forgets a half-read cluster like -hv */
	opterr = 0;
	while ((c = getopt_long(argc, argv, sopts, lopts, &idx)) != -1) {
		const struct rk_opt *o = NULL;

		if (c == 'h')
			return 1;
		if (c == '?') {
			if (optopt >= 256)
				fprintf(stderr, "rdmakit %s: option --%s takes no value\n", prog,
					opts[optopt - 256].name);
			else if (optopt)
				fprintf(stderr, "rdmakit %s: unknown option -%c (see --help)\n", prog,
					optopt);
			else
				fprintf(stderr, "rdmakit %s: unknown option %s (see --help)\n", prog,
					argv[optind - 1]);
			return -EINVAL;
		}
		if (c == ':') {
			fprintf(stderr, "rdmakit %s: option %s needs a value\n", prog,
				argv[optind - 1]);
			return -EINVAL;
		}
		if (c >= 256) {
			o = &opts[c - 256];
		} else {
			for (int i = 0; i < n && !o; i++)
				if (opts[i].key == c)
					o = &opts[i];
		}
		if (!o)
			return -EINVAL;
		if (set_value(prog, o, optarg))
			return -EINVAL;
		if (!rk_opts_given(o->dest) && ngiven < MAX_OPTS)
			given[ngiven++] = o->dest;
	}
	*first_arg_p = optind;
	return 0;
}

static void format_default(const struct rk_opt *o, char *buf, size_t len)
{
	buf[0] = '\0';
	switch (o->type) {
	case RK_OPT_FLAG:
	case RK_OPT_LIST:
		break;
	case RK_OPT_STRING:
		if (*(const char **)o->dest)
			snprintf(buf, len, " (default: %s)", *(const char **)o->dest);
		break;
	case RK_OPT_SIZE:
	case RK_OPT_COUNT:
		snprintf(buf, len, " (default: %" PRIu64 ")", *(uint64_t *)o->dest);
		break;
	case RK_OPT_INT:
		snprintf(buf, len, " (default: %" PRId64 ")", *(int64_t *)o->dest);
		break;
	}
}

void rk_opts_help(FILE *out, const char *usage, const char *description,
		  const struct rk_opt *opts)
{
	rk_opts_help_epilog(out, usage, description, opts, NULL);
}

void rk_opts_help_epilog(FILE *out, const char *usage, const char *description,
			 const struct rk_opt *opts, const char *epilog)
{
	fprintf(out, "usage: %s\n\n%s\n\noptions:\n", usage, description);
	for (const struct rk_opt *o = opts; o->name; o++) {
		char left[64], def[96];

		if (o->type == RK_OPT_FLAG)
			snprintf(left, sizeof(left), "%s%c%s--%s", o->key ? "-" : "",
				 o->key ? o->key : ' ', o->key ? ", " : "   ", o->name);
		else
			snprintf(left, sizeof(left), "%s%c%s--%s %s", o->key ? "-" : "",
				 o->key ? o->key : ' ', o->key ? ", " : "   ", o->name,
				 o->arg ? o->arg : "VALUE");
		format_default(o, def, sizeof(def));
		fprintf(out, "  %-28s %s%s\n", left, o->help, def);
	}
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help");
	if (epilog)
		fprintf(out, "\n%s\n", epilog);
}
