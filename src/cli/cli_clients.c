/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* --clients N: the bench and rc servers of several clients at once. The
 * options' rules, the aggregate and the verdict that names each failed and
 * each missing client; the commands print their own per-client rows. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"
#include "cli_serve.h"

int cli_clients_check(const char *cmd, uint64_t clients, bool server, bool persist)
{
	if (cli_server_only(cmd, "--clients", clients, server))
		return -EINVAL;
	if (clients && persist) {
		fprintf(stderr, "rdmakit %s: options --clients and --persist exclude each other: "
				"--clients N serves N clients at once and ends, --persist one "
				"after another until stopped\n", cmd);
		return -EINVAL;
	}
	return 0;
}

void cli_client_end_text(const char *who, const struct rk_client_outcome *c, const char *unit,
			 const char *checked)
{
	if (c->status)
		printf("%s: client %u (%s) FAILED after %u %s%s: %s\n", who, c->index, c->peer,
		       c->done, unit, c->done == 1 ? "" : "s", c->error);
	else
		printf("%s: client %u (%s) done, %u %s%s%s\n", who, c->index, c->peer, c->done,
		       unit, c->done == 1 ? "" : "s", checked);
	fflush(stdout);
}

bool cli_client_text_head(const struct rk_client_outcome *c, bool set_up, const char *not_set_up)
{
	printf("client %u (%s): ", c->index, c->peer);
	if (!set_up)
		printf("%s: %s\n", not_set_up, c->error);
	return set_up;
}

static void total_text(const struct rk_clients_total *t, const char *msgs_name, double unit_bw,
		       const char *unit)
{
	printf(" aggregate: %u of %u client%s OK, %" PRIu64 " bytes, %" PRIu64 " %s in %.6f s "
	       "(the union of their measured spans): %.2f %s, %.6f million %s/s\n", t->ok, t->wanted,
	       t->wanted == 1 ? "" : "s", t->bytes, t->msgs, msgs_name, t->seconds, unit_bw, unit,
	       t->msg_rate / 1e6, msgs_name);
}

static json_object *total_json(const struct rk_clients_total *t, const char *msgs_name)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "clients_wanted", json_object_new_int64(t->wanted));
	json_object_object_add(j, "clients_arrived", json_object_new_int64(t->arrived));
	json_object_object_add(j, "clients_ok", json_object_new_int64(t->ok));
	json_object_object_add(j, "clients_failed", json_object_new_int64(t->failed));
	json_object_object_add(j, "clients_missing", json_object_new_int64(t->missing));
	json_object_object_add(j, "bytes", json_object_new_int64((int64_t)t->bytes));
	json_object_object_add(j, msgs_name, json_object_new_int64((int64_t)t->msgs));
	json_object_object_add(j, "seconds", json_object_new_double(t->seconds));
	json_object_object_add(j, "bw_Bps", json_object_new_double(t->bw));
	json_object_object_add(j, "bw_MiBps", json_object_new_double(t->bw / (1024.0 * 1024.0)));
	json_object_object_add(j, "rate_per_s", json_object_new_double(t->msg_rate));
	return j;
}

static const struct rk_client_outcome *outcome(const struct cli_clients_report *r, uint32_t i)
{
	return (const struct rk_client_outcome *)((const char *)r->clients + i * r->stride);
}

static json_object *failed_json(const struct rk_client_outcome *c)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "client", json_object_new_int64(c->index));
	json_object_object_add(j, "peer", json_object_new_string(c->peer));
	json_object_object_add(j, "error", json_object_new_string(c->error));
	return j;
}

static int verdict(const struct cli_clients_report *r, json_object *doc)
{
	json_object *failed = json_object_new_array(), *missing = json_object_new_array();
	uint32_t nfailed = 0, nmissing = 0, n = r->n;
	const char *who = r->who;
	int first_err = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct rk_client_outcome *c = outcome(r, i);

		if (!c->arrived) {
			nmissing++;
			json_object_array_add(missing, json_object_new_int64(c->index));
			if (!doc)
				printf(r->wait_s ? "%s: client %u of %u did not arrive within --wait %"
						   PRIu64 " s\n" :
						   "%s: client %u of %u did not arrive (stopped while "
						   "waiting)\n", who, c->index, n, r->wait_s);
		} else if (c->status) {
			nfailed++;
			if (!first_err)
				first_err = c->status;
			json_object_array_add(failed, failed_json(c));
			if (!doc)
				printf("%s: client %u (%s) FAILED: %s\n", who, c->index, c->peer,
				       c->error);
		}
	}
	if (doc) {
		json_object_object_add(doc, "failed_clients", failed);
		json_object_object_add(doc, "missing_clients", missing);
		json_object_object_add(doc, "ok", json_object_new_boolean(!nfailed && !nmissing));
		/* The verdict on stderr, the outcome's "error" (cli_json.h). */
		if (nfailed || nmissing)
			fprintf(stderr, "rdmakit %s: %u client%s: %u OK, %u failed, %u missing\n",
				who, n, n == 1 ? "" : "s", n - nfailed - nmissing, nfailed,
				nmissing);
	} else {
		json_object_put(failed);
		json_object_put(missing);
		if (!nfailed && !nmissing)
			printf("%s: %u client%s, every one checked: OK\n", who, n, n == 1 ? "" : "s");
		else
			printf("%s: %u client%s: %u OK, %u failed, %u missing: FAILED\n", who, n,
			       n == 1 ? "" : "s", n - nfailed - nmissing, nfailed, nmissing);
	}
	if (nfailed || nmissing)
		return cli_fail(first_err ? first_err : -ETIMEDOUT); /* failed, else missing */
	return CLI_OK;
}

static json_object *client_json(const struct cli_clients_report *r, uint32_t i)
{
	const struct rk_client_outcome *c = outcome(r, i);
	json_object *j = json_object_new_object();

	cli_add_int(j, "client", c->index);
	cli_add_bool(j, "arrived", c->arrived);
	if (!c->arrived)
		return j;
	cli_add_str(j, "peer", c->peer);
	cli_add_bool(j, "ok", !c->status);
	if (c->status)
		cli_add_str(j, "error", c->error);
	r->json(j, c, r->arg);
	return j;
}

int cli_clients_report(const struct cli_clients_report *r, json_object *doc)
{
	json_object *arr = NULL;
	int status;

	if (doc) {
		arr = json_object_new_array();
		json_object_object_add(doc, "clients", arr);
	}
	for (uint32_t i = 0; i < r->n; i++) {
		if (doc)
			json_object_array_add(arr, client_json(r, i));
		else if (outcome(r, i)->arrived)
			r->text(outcome(r, i), r->arg);
	}
	if (doc)
		json_object_object_add(doc, "aggregate", total_json(r->total, r->msgs_name));
	else
		total_text(r->total, r->msgs_name, r->unit_bw, r->unit);
	status = verdict(r, doc);
	if (doc)
		cli_json_print(doc);
	return status;
}
