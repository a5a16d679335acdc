/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* rdmakit qp-states: what a queue pair really does in each state of the IB
 * state machine, observed on the device (the walk is rk_qps_observe()). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rdmakit/rdmakit.h>

#include "cli.h"
#include "cli_cmdline.h"
#include "cli_json.h"

struct qp_states_opts {
	struct cli_dev_opts dev;
	bool json;
};

static const char usage_text[] = "rdmakit qp-states [-d DEV] [-i PORT] [-g IDX] [--json]";
static const char description[] =
	"Walk one RC queue pair through RESET, INIT, RTR, RTS, SQD and ERR, and back through\n"
	"RESET, next to a peer QP connected to it. In each state post a receive and a send with\n"
	"the raw verbs and show what the device answered, what arrived while the QP was in that\n"
	"state and what became of the requests later; the peer sends to it in INIT, RTR, RTS\n"
	"and SQD. Then try transitions the spec forbids, and a send-queue error on UD and UC\n"
	"QPs (where the spec's SQE state would appear). Takes a few seconds. On iWARP, whose QPs\n"
	"reach RTS only through RDMA CM, one QP is walked unconnected first (RTS tried); then QP\n"
	"pairs connected through RDMA CM to the device's own address go through RTS, SQD, back\n"
	"to RTS, ERR and RESET, and the transitions from RTS and SQD are tried on fresh pairs,\n"
	"each followed by a send that shows whether the QP still sends. SQE (UD, UC) is named\n"
	"as not walked: iWARP has only RC QPs.";

static const char *short_status(enum ibv_wc_status st)
{
	const char *n = rk_wc_status_name(st);

	return strncmp(n, "IBV_WC_", 7) ? n : n + 7;
}

static json_object *wr_json(const struct rk_qps_report *rep, int i)
{
	const struct rk_qps_wr *r;
	json_object *j;
	char fate[160];

	if (i < 0 || i >= rep->nwrs)
		return NULL;
	r = &rep->wrs[i];
	j = json_object_new_object();
	cli_add_str(j, "what", r->what);
	cli_add_str(j, "posted_in", rep->rows[r->row].label);
	cli_add_str(j, "on", r->on_peer ? "peer" : "subject");
	cli_add_bool(j, "raw_verb", r->raw);
	cli_add_int(j, "post_ret", r->post_ret);
	cli_add_str(j, "post_errno", rk_qps_errno_name(r->post_ret));
	cli_add_bool(j, "accepted", r->post_ret == 0);
	cli_add_bool(j, "completed", r->completed);
	if (r->completed) {
		cli_add_str(j, "status", short_status(r->status));
		cli_add_str(j, "completed_in", rk_qp_state_str(r->completed_in));
		cli_add_str(j, "completed_during", rep->rows[r->completed_row].label);
	}
	if (r->is_send) {
		cli_add_bool(j, "delivered", r->delivered);
		if (r->delivered) {
			cli_add_str(j, "delivered_in", rk_qp_state_str(r->delivered_in));
			cli_add_str(j, "delivered_during", rep->rows[r->delivered_row].label);
			cli_add_bool(j, "intact", r->intact);
			if (r->delivered_into >= 0 && r->on_peer)
				cli_add_str(j, "landed_in_recv_posted_in",
					    rep->rows[rep->wrs[r->delivered_into].row].label);
		}
	}
	cli_add_str(j, "fate", rk_qps_fate_str(rep, i, fate, sizeof(fate)));
	return j;
}

static json_object *row_json(const struct rk_qps_report *rep, int i)
{
	const struct rk_qps_row *row = &rep->rows[i];
	json_object *j = json_object_new_object(), *q;

	cli_add_str(j, "state", rk_qp_state_str(row->state));
	cli_add_str(j, "label", row->label);
	cli_add_str(j, "spec", row->spec);
	cli_add_bool(j, "entered", row->modify_ret == 0);
	cli_add_int(j, "enter_ret", row->modify_ret);
	cli_add_str(j, "queried", rk_qp_state_str(row->queried));
	cli_add_bool(j, "spec_accepts_recv", rk_qps_spec_accepts(row->state, false));
	cli_add_bool(j, "spec_accepts_send", rk_qps_spec_accepts(row->state, true));
	json_object_object_add(j, "recv", wr_json(rep, row->recv_wr));
	json_object_object_add(j, "send", wr_json(rep, row->send_wr));
	json_object_object_add(j, "incoming", wr_json(rep, row->incoming_wr));
	if (row->nqueued) {
		q = json_object_new_array();
		for (int k = 0; k < row->nqueued; k++)
			json_object_array_add(q, wr_json(rep, row->queued[k]));
		json_object_object_add(
			j, row->state == IBV_QPS_SQD ? "queued_before" : "outstanding", q);
	}
	if (row->state == IBV_QPS_SQD) {
		cli_add_bool(j, "sq_drained_event", row->drained_event);
		cli_add_int(j, "resume_ret", row->resume_ret);
		cli_add_str(j, "resume_errno", rk_qps_errno_name(row->resume_ret));
		json_object_object_add(j, "kick", wr_json(rep, row->kick_wr));
	}
	cli_add_int(j, "completions_here", row->completions_here);
	return j;
}

static json_object *sqe_json(const struct rk_qps_report *rep, int i)
{
	const struct rk_qps_sqe *s = &rep->sqe[i];
	json_object *j = json_object_new_object();

	cli_add_str(j, "transport", rk_transport_str(s->transport));
	cli_add_int(j, "post_ret", s->post_ret);
	cli_add_bool(j, "completed", s->completed);
	if (s->completed)
		cli_add_str(j, "status", short_status(s->status));
	cli_add_str(j, "state_after", rk_qp_state_str(s->state_after));
	cli_add_bool(j, "sqe_reached", s->state_after == IBV_QPS_SQE);
	if (s->tried_resume) {
		cli_add_int(j, "resume_ret", s->resume_ret);
		cli_add_str(j, "state_final", rk_qp_state_str(s->state_final));
	}
	return j;
}

static json_object *transition_json(const struct rk_qps_report *rep, int i)
{
	const struct rk_qps_transition *t = &rep->transitions[i];
	json_object *j = json_object_new_object();

	cli_add_str(j, "from", rk_qp_state_str(t->from));
	cli_add_str(j, "to", rk_qp_state_str(t->to));
	cli_add_bool(j, "rule_allows", t->spec_allows);
	cli_add_bool(j, "accepted", t->ret == 0);
	cli_add_int(j, "ret", t->ret);
	cli_add_str(j, "errno", rk_qps_errno_name(t->ret));
	cli_add_str(j, "state_after", rk_qp_state_str(t->after));
	if (t->probed) {
		json_object *p = json_object_new_object();

		cli_add_int(p, "post_ret", t->probe_post_ret);
		cli_add_str(p, "post_errno", rk_qps_errno_name(t->probe_post_ret));
		cli_add_bool(p, "completed", t->probe_completed);
		if (t->probe_completed)
			cli_add_str(p, "status", short_status(t->probe_status));
		cli_add_bool(p, "received", t->probe_received);
		json_object_object_add(j, "send_after", p);
	}
	return j;
}

static json_object *event_json(const struct rk_qps_report *rep, int i)
{
	const struct rk_qps_event *e = &rep->events[i];
	json_object *j = json_object_new_object();

	cli_add_str(j, "during", rep->rows[e->row].label);
	cli_add_str(j, "subject_state", rk_qp_state_str(e->subject_state));
	if (e->is_async) {
		cli_add_str(j, "async", rk_async_event_name(e->async_type));
	} else {
		cli_add_str(j, "status", short_status(e->status));
		if (e->wr >= 0) {
			const struct rk_qps_wr *r = &rep->wrs[e->wr];

			cli_add_str(j, "on", r->on_peer ? "peer" : "subject");
			cli_add_str(j, "what", r->what);
			cli_add_str(j, "posted_in", rep->rows[r->row].label);
		}
	}
	return j;
}

/* key: an array of one(rep, i) for i below n. */
static void add_list(json_object *doc, const char *key, const struct rk_qps_report *rep, int n,
		     json_object *(*one)(const struct rk_qps_report *rep, int i))
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < n; i++)
		json_object_array_add(a, one(rep, i));
	json_object_object_add(doc, key, a);
}

static json_object *report_json(const struct rk_qps_report *rep, bool iwarp, int result)
{
	json_object *doc = json_object_new_object(), *diffs = json_object_new_array();
	struct rk_qps_diff d[RK_QPS_MAX_DIFFS];
	int nd = rk_qps_differences(rep, d, RK_QPS_MAX_DIFFS);

	cli_add_str(doc, "device", rep->device);
	cli_add_int(doc, "subject_qpn", rep->subject_qpn);
	cli_add_int(doc, "peer_qpn", rep->peer_qpn);
	/* iWARP: the first QP is not connected (only RDMA CM could); the pairs
	 * after it are, through RDMA CM. */
	cli_add_bool(doc, "connected", !iwarp || rep->cm_walked);
	if (iwarp) {
		cli_add_int(doc, "cm_subject_qpn", rep->cm_subject_qpn);
		cli_add_int(doc, "cm_peer_qpn", rep->cm_peer_qpn);
		if (rep->cm_walked)
			cli_add_str(doc, "connected_from", rep->rows[rep->connected_from].label);
		cli_add_str(doc, "not_walked", rep->not_walked);
	}
	add_list(doc, "rows", rep, rep->nrows, row_json);
	add_list(doc, "sqe", rep, rep->nsqe, sqe_json);
	add_list(doc, "transitions", rep, rep->ntransitions, transition_json);
	add_list(doc, "events", rep, rep->nevents, event_json);
	for (int i = 0; i < nd && i < RK_QPS_MAX_DIFFS; i++)
		json_object_array_add(diffs, json_object_new_string(d[i].text));
	json_object_object_add(doc, "differences", diffs);
	cli_add_result(doc, result);
	return doc;
}

/* The peer's SEND posted in a row: where it was received. */
static const char *incoming_str(const struct rk_qps_report *rep, int row, char *buf, size_t len)
{
	const struct rk_qps_wr *r;

	if (rep->rows[row].incoming_wr < 0)
		return "-";
	r = &rep->wrs[rep->rows[row].incoming_wr];
	if (!r->delivered)
		snprintf(buf, len, "never received");
	else if (r->delivered_row == row && r->delivered_in == rep->rows[row].state)
		snprintf(buf, len, "received in %s", rk_qp_state_str(r->delivered_in));
	else
		snprintf(buf, len, "waited; received in %s", rk_qp_state_str(r->delivered_in));
	return buf;
}

static int count_status(const struct rk_qps_report *rep, const struct rk_qps_row *row,
			enum ibv_wc_status st)
{
	int n = 0;

	for (int k = 0; k < row->nqueued; k++)
		n += rep->wrs[row->queued[k]].completed && rep->wrs[row->queued[k]].status == st;
	return n;
}

/* The SQD row's extra lines: the sends queued before it, the doorbell, SQE. */
static void print_sqd_row(const struct rk_qps_report *rep, const struct rk_qps_row *row)
{
	char a[160];
	int done_sqd = 0;

	for (int k = 0; k < row->nqueued; k++) {
		const struct rk_qps_wr *r = &rep->wrs[row->queued[k]];

		done_sqd += r->completed && r->completed_in == IBV_QPS_SQD;
	}
	printf("%-17s %d sends queued in RTS just before SQD: %d SUCCESS (%d of "
	       "them "
	       "completed after the QP entered SQD); IBV_EVENT_SQ_DRAINED: %s\n",
	       "", row->nqueued, count_status(rep, row, IBV_WC_SUCCESS), done_sqd,
	       row->drained_event ? "yes" : "no");
	if (row->resume_ret)
		printf("%-17s SQD -> RTS: refused (%s)\n", "", rk_qps_errno_name(row->resume_ret));
	if (row->kick_wr >= 0) {
		const struct rk_qps_wr *sq = &rep->wrs[row->send_wr];

		printf("%-17s the send posted in SQD had not run 1.5 s after SQD "
		       "-> RTS; "
		       "the next send posted in RTS: %s; the SQD send then: %s\n",
		       "", rk_qps_fate_str(rep, row->kick_wr, a, sizeof(a)),
		       sq->delivered ? "ran" : "still not run");
	}
	for (int k = 0; k < rep->nsqe; k++) {
		const struct rk_qps_sqe *s = &rep->sqe[k];

		snprintf(a, sizeof(a), "SQE (%s)", rk_transport_str(s->transport));
		printf("%-17s a send with an invalid lkey: %s; the QP then queried "
		       "%s%s\n",
		       a, s->completed ? short_status(s->status) : "no completion",
		       rk_qp_state_str(s->state_after),
		       s->state_after == IBV_QPS_SQE
			       ? (s->resume_ret ? ", SQE -> RTS refused" : ", SQE -> RTS accepted")
			       : " (SQE not reached)");
	}
}

/* "; a send after it: ran", "...: refused (ENOTCONN)", "...: WR_FLUSH_ERR". */
static void probe_str(const struct rk_qps_transition *t, char *buf, size_t len)
{
	const char *what;

	if (t->probe_post_ret)
		what = rk_qps_errno_name(t->probe_post_ret);
	else if (!t->probe_completed)
		what = "no completion";
	else if (t->probe_status == IBV_WC_SUCCESS)
		what = t->probe_received ? "ran, received" : "ran, not received";
	else
		what = short_status(t->probe_status);
	snprintf(buf, len, "; a send after it: %s%s%s", t->probe_post_ret ? "refused (" : "", what,
		 t->probe_post_ret ? ")" : "");
}

static void print_transitions(const struct rk_qps_report *rep)
{
	char a[160], b[160];

	printf("\nTransitions tried with ibv_modify_qp on fresh QPs (RULE: the IB state table as "
	       "the Linux verbs core encodes it):\n");
	printf("%-16s %-8s %s\n", "TRANSITION", "RULE", "DEVICE");
	for (int i = 0; i < rep->ntransitions; i++) {
		const struct rk_qps_transition *t = &rep->transitions[i];

		snprintf(a, sizeof(a), "%s -> %s", rk_qp_state_str(t->from),
			 rk_qp_state_str(t->to));
		if (t->ret)
			snprintf(b, sizeof(b), "refused (%s), still %s", rk_qps_errno_name(t->ret),
				 rk_qp_state_str(t->after));
		else
			snprintf(b, sizeof(b), "accepted, now %s", rk_qp_state_str(t->after));
		if (t->probed)
			probe_str(t, b + strlen(b), sizeof(b) - strlen(b));
		printf("%-16s %-8s %s%s\n", a, t->spec_allows ? "allowed" : "refused", b,
		       (t->ret == 0) != t->spec_allows ? "   <- differs from the rule" : "");
	}
}

static void print_differences(const struct rk_qps_report *rep)
{
	struct rk_qps_diff d[RK_QPS_MAX_DIFFS];
	int n = rk_qps_differences(rep, d, RK_QPS_MAX_DIFFS);

	printf("\nDifferences from the spec seen on %s:\n", rep->device);
	for (int i = 0; i < n && i < RK_QPS_MAX_DIFFS; i++)
		printf("  %s\n", d[i].text);
	if (!n)
		printf("  none\n");
}

/* The first row with posts in state s. */
static int first_row_of(const struct rk_qps_report *rep, enum ibv_qp_state s)
{
	for (int i = 0; i < rep->nrows; i++)
		if (rep->rows[i].state == s && rep->rows[i].recv_wr >= 0)
			return i;
	return -1;
}

/* The sends that were received, their payloads checked byte for byte. */
static void print_payloads(const struct rk_qps_report *rep)
{
	int delivered = 0, intact = 0;

	for (int i = 0; i < rep->nwrs; i++) {
		delivered += rep->wrs[i].is_send && rep->wrs[i].delivered;
		intact += rep->wrs[i].is_send && rep->wrs[i].delivered && rep->wrs[i].intact;
	}
	printf("%-17s payloads: %d sends received, %d of them byte for byte as sent\n", "",
	       delivered, intact);
}

static void print_text(const struct rk_qps_report *rep, bool iwarp)
{
	char a[160], b[160], c[160];

	if (iwarp && rep->cm_walked)
		printf("qp-states on %s: QP 0x%x (RC) not connected first (%s is an iWARP device, "
		       "whose QPs reach RTS only through RDMA CM); from %s on, QP pairs connected "
		       "through RDMA CM to the device's own address (the last: subject 0x%x, peer "
		       "0x%x)\n",
		       rep->device, rep->subject_qpn, rep->device,
		       rep->rows[rep->connected_from].label, rep->cm_subject_qpn, rep->cm_peer_qpn);
	else if (iwarp)
		printf("qp-states on %s: QP 0x%x (RC), not connected: %s is an iWARP device, "
		       "whose QPs reach RTS only through RDMA CM\n",
		       rep->device, rep->subject_qpn, rep->device);
	else
		printf("qp-states on %s: subject QP 0x%x, peer QP 0x%x (RC, connected to each "
		       "other)\n",
		       rep->device, rep->subject_qpn, rep->peer_qpn);
	printf("Posts are the raw ibv_post_recv/ibv_post_send: what the device itself does.\n\n");
	printf("%-17s %-34s %-34s %s\n", "STATE", "RECV POSTED HERE", "SEND POSTED HERE",
	       "PEER'S SEND POSTED HERE");
	for (int i = 0; i < rep->nrows; i++) {
		const struct rk_qps_row *row = &rep->rows[i];

		if (row->modify_ret) {
			printf("%-17s could not be entered: %s (%s)\n", row->label,
			       rk_strerror(row->modify_ret), rk_qps_errno_name(row->modify_ret));
			continue;
		}
		if (row->recv_wr < 0 && row->send_wr < 0)
			printf("%-17s (no posts) completions while here: %d\n", row->label,
			       row->completions_here);
		else
			printf("%-17s %-34s %-34s %s\n", row->label,
			       rk_qps_fate_str(rep, row->recv_wr, a, sizeof(a)),
			       rk_qps_fate_str(rep, row->send_wr, b, sizeof(b)),
			       incoming_str(rep, i, c, sizeof(c)));
		if (row->state == IBV_QPS_SQD)
			print_sqd_row(rep, row);
		if (row->state == IBV_QPS_ERR)
			printf("%-17s %d requests outstanding when ERR was entered: %d "
			       "WR_FLUSH_ERR\n",
			       "", row->nqueued, count_status(rep, row, IBV_WC_WR_FLUSH_ERR));
	}
	if (iwarp)
		print_payloads(rep);
	for (int i = 0; i < rep->nrows; i++)
		if (rep->rows[i].queried == IBV_QPS_UNKNOWN) {
			printf("%-17s ibv_query_qp() names no state on %s%s: UNKNOWN in the "
			       "transitions below\n",
			       "", rep->device, iwarp ? " (siw leaves it out)" : "");
			break;
		}
	printf("\nWhat the IB spec says:\n");
	for (int i = 0; i < rep->nrows; i++)
		if (rep->rows[i].recv_wr >= 0 && rep->rows[i].state != IBV_QPS_RTS &&
		    first_row_of(rep, rep->rows[i].state) == i)
			printf("  %-6s %s\n", rk_qp_state_str(rep->rows[i].state),
			       rep->rows[i].spec);
	printf("  SQE    entered by the device on a send-queue error of a UD or UC QP (RC goes to "
	       "ERR); SQE -> RTS resumes\n");
	if (rep->not_walked[0])
		printf("\nNot walked on %s: %s\n", rep->device, rep->not_walked);

	print_transitions(rep);
	print_differences(rep);
}

/* The port, its GID chosen; an iWARP device is taken without one (the walk
 * does there what needs no connection). */
static int open_port(const struct qp_states_opts *o, struct rk_port_sel *d, bool *iwarp_p)
{
	struct rk_device *dev;
	uint8_t port = o->dev.port ? (uint8_t)o->dev.port : 1;
	int ret;

	ret = rk_device_open(o->dev.device, &dev);
	if (ret)
		return ret;
	*iwarp_p = rk_device_is_iwarp(dev);
	if (!*iwarp_p) {
		rk_device_close(dev);
		return rk_port_open(o->dev.device, (uint8_t)o->dev.port, (int)o->dev.gid_index,
				    NULL, d);
	}
	ret = -EINVAL;
	if (o->dev.gid_index >= 0)
		fprintf(stderr, "rdmakit qp-states: %s is an iWARP device: it has no GID to choose "
				"(its QPs are addressed by IP through RDMA CM); leave out -g\n",
			dev->info.name);
	else
		ret = rk_port_check_active(dev, port);
	if (ret) {
		rk_device_close(dev);
		return ret;
	}
	d->dev = dev;
	d->port_num = port;
	d->has_gid = false;
	return 0;
}

int cmd_qp_states(int argc, char **argv)
{
	struct qp_states_opts o = {.dev = CLI_DEV_OPTS_DEFAULT};
	const struct cli_opt opts[] = {
		CLI_DEV_OPTS(&o.dev),
		CLI_JSON_OPT(&o.json),
		CLI_OPT_END,
	};
	static struct rk_qps_report rep;
	struct rk_port_sel d = {0};
	bool iwarp;
	int ret;

	ret = cli_parse_noargs("qp-states", usage_text, description, opts, argc, argv);
	if (ret >= 0)
		return ret;
	ret = open_port(&o, &d, &iwarp);
	if (ret)
		return cli_fail(ret);
	ret = rk_qps_observe(d.dev, d.port_num, d.has_gid ? &d.gid : NULL, &rep);
	if (o.json)
		cli_json_print(report_json(&rep, iwarp, ret));
	else if (rep.nrows)
		print_text(&rep, iwarp);
	if (ret)
		fprintf(stderr, "rdmakit qp-states: the walk stopped: %s\n", rk_strerror(ret));
	rk_port_close(&d);
	return ret ? cli_fail(ret) : CLI_OK;
}
