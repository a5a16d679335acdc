/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit CLI: JSON output, the document built with json-c and printed once
 * (or a line per record of a stream). */
#ifndef RDMAKIT_CLI_JSON_H
#define RDMAKIT_CLI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include <rdmakit/gid.h>

/* A chosen GID as JSON: {index, type, gid, why}. */
json_object *cli_gid_json(const struct rk_gid_choice *gid);

/* Add key: value to a JSON object, one call each kind (the string is copied). */
void cli_add_str(json_object *o, const char *key, const char *v);
void cli_add_int(json_object *o, const char *key, int64_t v);
void cli_add_bool(json_object *o, const char *key, bool v);
void cli_add_double(json_object *o, const char *key, double v);

/* The outcome of a command run with --json is one document on stdout, in
 * every outcome: the command's report, or where it has none (it failed
 * before there was anything to report, or a usage error) one that main()
 * makes. Either way it carries "result": "ok" or "failed", and a failure
 * "error", the text of the error line stderr showed for it (the library's
 * first "rdmakit: error: TEXT", else the CLI's last "rdmakit CMD: TEXT" that
 * is not a "note:": TEXT), and "errno", the failure's errno name
 * ("ECONNREFUSED"). docs/json.md describes it. */

/* From main() before a command runs: stderr becomes a stream that writes
 * to fd 2 as before and keeps the error lines (the library's messages go
 * through it as well), for the failure's "error". */
void cli_json_init(void);

/* After a command's parse (cli_cmdline.c): --json was given (parsed: read
 * from opts' "json" row; a usage error: looked for in argv). A command that
 * parses no options of its own says so with cli_json_wanted(). */
struct cli_opt;
void cli_json_want(const struct cli_opt *opts, int argc, char **argv, bool parsed);
void cli_json_wanted(void);

/* main(): print the outcome document (the command's, completed with
 * "result" and, failed, "error" and "errno"; or one of those alone when the
 * command printed none and failed); returns status. */
int cli_json_finish(int status);

/* CLI_FAILED, keeping err (a negative errno) as the failure's errno. */
int cli_fail(int err);

/* "ENOENT" for -ENOENT (or ENOENT); "E1234" for a number without a name. */
const char *cli_errno_name(int err);

/* "result": "ok" or "failed", and with a failure "error" (the text stderr
 * showed for it, else rk_strerror()) and "errno" (its name); keeps err as
 * cli_fail() does. */
void cli_add_result(json_object *doc, int err);

/* The command's document: kept and printed by cli_json_finish() as the
 * outcome (pretty, on one line when cli_json_lines is set: a record stream
 * before it, --watch, --interval). Where cli_json_records is set (a server
 * with --persist: one report per client) it is a record, printed now on one
 * line. A second document prints the first. Takes ownership. */
void cli_json_print(json_object *doc);
extern bool cli_json_lines, cli_json_records;
/* A record printed now as cli_json_lines says (memserver's status on
 * SIGUSR1). Takes ownership. */
void cli_json_now(json_object *doc);
/* A record of a stream printed now on one line (--interval, --watch). */
void cli_json_line(json_object *doc);

#endif
