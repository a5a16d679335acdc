/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* JSON output (cli_json.h): fields added one call each, documents printed once. */
#include <stdio.h>

#include <rdmakit/error.h>

#include "cli_json.h"

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

void cli_add_result(json_object *doc, int err)
{
	cli_add_str(doc, "result", err ? "failed" : "ok");
	if (err)
		cli_add_str(doc, "error", rk_strerror(err));
}

bool cli_json_lines;

static void json_out(json_object *doc, int flags)
{
	puts(json_object_to_json_string_ext(doc, flags | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(doc);
}

void cli_json_print(json_object *doc)
{
	json_out(doc, cli_json_lines ? JSON_C_TO_STRING_PLAIN : JSON_C_TO_STRING_PRETTY);
}

void cli_json_line(json_object *doc)
{
	json_out(doc, JSON_C_TO_STRING_PLAIN);
}
