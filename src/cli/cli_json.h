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

/* "result": "ok" or "failed", and with a failure "error": its rk_strerror()
 * text. */
void cli_add_result(json_object *doc, int err);

/* Print a JSON document on stdout, pretty (on one line when cli_json_lines
 * is set: a server with --persist prints one document per client). Takes
 * ownership. */
void cli_json_print(json_object *doc);
extern bool cli_json_lines;
/* The same on one line always: a record of a stream (--interval, --watch). */
void cli_json_line(json_object *doc);

#endif
