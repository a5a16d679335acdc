/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit CLI: the port counters a run moved and the troubles they show, as
 * every command that reports a run prints them (text or JSON). */
#ifndef RDMAKIT_CLI_REPORT_H
#define RDMAKIT_CLI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include <rdmakit/counters.h>

/* The port counters a run moved, for every command that reports a run: one
 * line "port counters (DEV port N, port-wide, S s): name +N, ..." (a port
 * without counters says so once per process), then for each failed
 * completion of the run its name, hint and the counters that explain it.
 * Nothing when the run never read them. */
void cli_counters_text(const struct rk_run_counters *c, const char *indent);

/* The same as a JSON object {device, port, scope, seconds, deltas: {group:
 * {name: N}}, left_out, failures: [{status, count, hint, counters}], note};
 * NULL (JSON null) when the run never read them. */
json_object *cli_counters_json(const struct rk_run_counters *c);

/* What the transport recovered from, as changes d show it (rk_counters_trouble()):
 * a line "INDENTnote: NAME (COUNTERS): HINT" per trouble. With hinted (an
 * array of RK_TROUBLE_COUNT, kept across calls) a trouble's hint is given the
 * first time only. */
void cli_troubles_text(const struct rk_counters_delta *d, const char *indent, bool *hinted);

/* The same as an array [{name, hint, counters: {name: N}}]. */
json_object *cli_troubles_json(const struct rk_counters_delta *d);

/* "peer QP 0x12", or "peer QP not known (iWARP)" where the connection setup
 * carried no QP number: iWARP's MPA does not, and 0 is never an RC QP's. */
const char *cli_peer_qp_str(uint32_t qpn, char *buf, size_t len);

/* key: the peer's QP number, JSON null where it is not known (0, as above). */
void cli_add_peer_qpn(json_object *o, const char *key, uint32_t qpn);

/* key: sec as a JSON number printed with 3 decimals ("seconds": 1.002). */
void cli_add_seconds(json_object *o, const char *key, double sec);

/* name: delta into groups' object for group (made on first use): the shape
 * of "deltas" in the counters reports, {"hw_counters": {"rdma_sends": 4}}. */
void cli_add_grouped(json_object *groups, enum rk_counter_group group, const char *name,
		     int64_t delta);

#endif
