/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* JSON output (cli_json.h): fields added one call each, documents printed once;
 * the outcome document completed at exit, with the error stderr said. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rdmakit/error.h>

#include "cli.h"
#include "cli_json.h"
#include "cli_opts.h"

json_object *cli_gid_json(const struct rk_gid_choice *gid)
{
	json_object *g = json_object_new_object();
	char text[64];

	cli_add_int(g, "index", gid->index);
	cli_add_str(g, "type", rk_gid_type_str(gid->type));
	cli_add_str(g, "gid", rk_gid_str(&gid->gid, text, sizeof(text)));
	cli_add_str(g, "why", gid->why);
	return g;
}

void cli_add_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

void cli_add_int(json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

void cli_add_bool(json_object *o, const char *key, bool v)
{
	json_object_object_add(o, key, json_object_new_boolean(v));
}

void cli_add_double(json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, json_object_new_double(v));
}

/* ---- what stderr said: the failure's text ---- */

/* Since the last document took one ("" when none): the library's first
 * error line (where the failure was first understood) and the CLI's last
 * (after any note of its own: a usage error ends the parse); and the text
 * that document took. Written under stderr's lock (the cookie's write),
 * read by the main thread once the run is over. */
static char said_lib[1024], said_cli[1024], said_taken[1024];
static char line[1024];
static size_t line_len;
static int fail_err; /* the last failure's negative errno (cli_fail(), cli_add_result()) */

/* An error line as these programs write them: "rdmakit: error: TEXT" (the
 * library's rk_error()) or "rdmakit CMD: TEXT", "rdmakit-mesh: TEXT" (the
 * CLI's own, but not a "note:" or "warning:"); the library's warnings and
 * infos are not. */
static void keep_line(const char *l)
{
	const char *colon;

	if (!strncmp(l, "rdmakit: ", 9)) {
		if (!strncmp(l + 9, "error: ", 7) && l[16] && !said_lib[0])
			snprintf(said_lib, sizeof(said_lib), "%s", l + 16);
	} else if ((!strncmp(l, "rdmakit ", 8) || !strncmp(l, "rdmakit-", 8)) &&
		   (colon = strstr(l, ": ")) != NULL && colon[2] &&
		   strncmp(colon + 2, "note:", 5) && strncmp(colon + 2, "warning:", 8)) {
		snprintf(said_cli, sizeof(said_cli), "%s", colon + 2);
	}
}

static ssize_t stderr_write(void *cookie, const char *buf, size_t size)
{
	size_t done = 0;

	(void)cookie;
	while (done < size) {
		ssize_t n = write(STDERR_FILENO, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	for (size_t i = 0; i < size; i++) {
		if (buf[i] != '\n') {
			if (line_len < sizeof(line) - 1)
				line[line_len++] = buf[i];
			continue;
		}
		line[line_len] = '\0';
		keep_line(line);
		line_len = 0;
	}
	return (ssize_t)size;
}

void cli_json_init(void)
{
	const cookie_io_functions_t io = {.write = stderr_write};
	FILE *f = fopencookie(NULL, "w", io);

	/* glibc's stderr is a variable a program may set (the library's
	 * messages read it too); line-buffered, each line written whole. */
	if (f && !setvbuf(f, NULL, _IOLBF, 0))
		stderr = f;
	else if (f)
		fclose(f);
}

/* The failure's text: what stderr said since the last document took it
 * (the library's error, else the CLI's), else what the last one took, else
 * err's strerror. */
static const char *error_text(int err)
{
	const char *said = said_lib[0] ? said_lib : said_cli;

	if (said[0]) {
		memcpy(said_taken, said, sizeof(said_taken));
		said_lib[0] = said_cli[0] = '\0';
	} else if (!said_taken[0]) {
		snprintf(said_taken, sizeof(said_taken), "%s", rk_strerror(err ? err : -EIO));
	}
	return said_taken;
}

const char *cli_errno_name(int err)
{
	static char other[24];
	const char *name = err ? strerrorname_np(err < 0 ? -err : err) : NULL;

	if (name)
		return name;
	snprintf(other, sizeof(other), "E%d", err < 0 ? -err : err);
	return other;
}

int cli_fail(int err)
{
	if (err)
		fail_err = err < 0 ? err : -err;
	return CLI_FAILED;
}

void cli_add_result(json_object *doc, int err)
{
	cli_add_str(doc, "result", err ? "failed" : "ok");
	if (!err)
		return;
	cli_fail(err);
	cli_add_str(doc, "error", error_text(err));
	cli_add_str(doc, "errno", cli_errno_name(err));
}

/* ---- printing ---- */

bool cli_json_lines, cli_json_records;
static bool wanted;
static json_object *outcome;

static void json_out(json_object *doc, int flags)
{
	puts(json_object_to_json_string_ext(doc, flags | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(doc);
}

static int format(void)
{
	return cli_json_lines ? JSON_C_TO_STRING_PLAIN : JSON_C_TO_STRING_PRETTY;
}

void cli_json_print(json_object *doc)
{
	if (cli_json_records) {
		json_out(doc, JSON_C_TO_STRING_PLAIN);
		return;
	}
	if (outcome) /* a command that reports more than once: the last is the outcome */
		json_out(outcome, format());
	outcome = doc;
}

void cli_json_now(json_object *doc)
{
	json_out(doc, format());
}

void cli_json_want(const struct cli_opt *opts, int argc, char **argv, bool parsed)
{
	for (const struct cli_opt *o = opts; o && o->name; o++) {
		if (strcmp(o->name, "json") || o->type != CLI_OPT_FLAG)
			continue;
		if (parsed) {
			wanted |= *(const bool *)o->dest;
			return;
		}
		/* A usage error may come before --json was read: look for it. */
		for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
			if (!strcmp(argv[i], "--json") ||
			    (o->key == 'j' && !strcmp(argv[i], "-j")))
				wanted = true;
		return;
	}
}

void cli_json_wanted(void)
{
	wanted = true;
}

int cli_json_finish(int status)
{
	bool failed = status != CLI_OK && status != CLI_GATE;
	json_object *doc = outcome, *v;

	outcome = NULL;
	if (!doc && (!wanted || !failed))
		return status;
	if (!doc)
		doc = json_object_new_object();
	if (json_object_is_type(doc, json_type_object)) {
		if (!json_object_object_get_ex(doc, "result", &v))
			cli_add_str(doc, "result", failed ? "failed" : "ok");
		else
			failed = strcmp(json_object_get_string(v), "ok") != 0;
		if (status == CLI_USAGE && !fail_err)
			fail_err = -EINVAL;
		if (failed && !json_object_object_get_ex(doc, "error", NULL))
			cli_add_str(doc, "error", error_text(fail_err));
		if (failed && !json_object_object_get_ex(doc, "errno", NULL))
			cli_add_str(doc, "errno", cli_errno_name(fail_err ? fail_err : -EIO));
	}
	json_out(doc, format());
	return status;
}

void cli_json_line(json_object *doc)
{
	json_out(doc, JSON_C_TO_STRING_PLAIN);
}
