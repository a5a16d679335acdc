/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The QP-state walk's report held against the IB spec (qp_states.h): the
 * walk records what the device did; the judging is here, apart from it. */
#include <stdio.h>

#include <rdmakit/qp_states.h>

bool rk_qps_spec_accepts(enum ibv_qp_state state, bool is_send)
{
	switch (state) {
	case IBV_QPS_RESET:
		return false;
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		return !is_send;
	default:
		return true;
	}
}

struct diffs {
	struct rk_qps_diff *v;
	int n, max;
	char spare[sizeof(((struct rk_qps_diff *)0)->text)]; /* for those beyond max */
};

/* Keep one difference (those beyond max are counted, not kept). */
static char *add(struct diffs *d, int row)
{
	if (d->n++ >= d->max)
		return d->spare;
	d->v[d->n - 1].row = row;
	return d->v[d->n - 1].text;
}

#define TEXT_LEN sizeof(((struct rk_qps_diff *)0)->text)

/* A work request posted in row i against the spec's word on it. */
static void judge_wr(const struct rk_qps_report *rep, int i, int wr, struct diffs *d)
{
	const struct rk_qps_row *row = &rep->rows[i];
	const struct rk_qps_wr *r = &rep->wrs[wr];
	bool spec = rk_qps_spec_accepts(row->state, r->is_send);
	char fate[160];

	if ((r->post_ret == 0) != spec)
		snprintf(add(d, i), TEXT_LEN, "%s: the raw post of a %s %s (the spec: %s)",
			 row->label, r->what, r->post_ret ? "was refused" : "was accepted",
			 spec ? "accepted" : "an immediate error");
	if (r->post_ret && (r->delivered || (r->completed && !r->is_send)))
		snprintf(add(d, i), TEXT_LEN, "%s: the refused %s ran anyway later (%s)",
			 row->label, r->what, rk_qps_fate_str(rep, wr, fate, sizeof(fate)));
	if (!r->post_ret && row->state == IBV_QPS_ERR && !r->completed)
		snprintf(add(d, i), TEXT_LEN, "%s: the %s posted in ERR was never completed (the "
			 "spec: flushed)", row->label, r->what);
}

/* Row i as a whole: requests flushed while the walk had not put the QP in
 * ERR, and SQD's drain and return to RTS. */
static void judge_row(const struct rk_qps_report *rep, int i, struct diffs *d)
{
	const struct rk_qps_row *row = &rep->rows[i];
	enum ibv_qp_state in = IBV_QPS_ERR;
	int flushed = 0;

	for (int k = 0; k < rep->nwrs; k++) {
		const struct rk_qps_wr *r = &rep->wrs[k];

		if (!r->on_peer && r->completed && r->completed_row == i &&
		    r->status == IBV_WC_WR_FLUSH_ERR && r->completed_in != IBV_QPS_ERR) {
			flushed++;
			in = r->completed_in;
		}
	}
	if (flushed)
		snprintf(add(d, i), TEXT_LEN, "%s: %d request%s completed WR_FLUSH_ERR while the QP "
			 "was in %s (the walk had not moved it to ERR)", row->label, flushed,
			 flushed == 1 ? "" : "s", rk_qp_state_str(in));
	if (row->state != IBV_QPS_SQD || row->modify_ret)
		return;
	if (!row->drained_event)
		snprintf(add(d, i), TEXT_LEN, "%s: no IBV_EVENT_SQ_DRAINED came (the spec: raised "
			 "once the sends queued before SQD are done)", row->label);
	if (row->resume_ret)
		snprintf(add(d, i), TEXT_LEN, "%s: SQD -> RTS was refused (%s)", row->label,
			 rk_qps_errno_name(row->resume_ret));
}

/* A transition's probe (iWARP): does the QP still send after it? */
static void judge_probe(const struct rk_qps_transition *t, struct diffs *d)
{
	bool ran = !t->probe_post_ret && t->probe_completed && t->probe_status == IBV_WC_SUCCESS;
	const char *from = rk_qp_state_str(t->from), *to = rk_qp_state_str(t->to);

	if (!t->probed || t->ret)
		return;
	if (t->to == IBV_QPS_RTS && !ran)
		snprintf(add(d, -1), TEXT_LEN, "%s -> %s was accepted, yet a send posted after it "
			 "did not run: the QP is not in RTS", from, to);
	else if (t->to != IBV_QPS_RTS && ran)
		snprintf(add(d, -1), TEXT_LEN, "%s -> %s was accepted, yet a send posted after it "
			 "ran%s: the QP stayed in %s", from, to,
			 t->probe_received ? " and was received" : "", from);
}

int rk_qps_differences(const struct rk_qps_report *rep, struct rk_qps_diff *diffs, int max)
{
	struct diffs d = {.v = diffs, .max = max};

	for (int i = 0; i < rep->nrows; i++) {
		if (rep->rows[i].recv_wr >= 0)
			judge_wr(rep, i, rep->rows[i].recv_wr, &d);
		if (rep->rows[i].send_wr >= 0)
			judge_wr(rep, i, rep->rows[i].send_wr, &d);
	}
	for (int i = 0; i < rep->nrows; i++)
		if (rep->rows[i].kick_wr >= 0)
			snprintf(add(&d, i), TEXT_LEN, "%s: the send posted in SQD did not start when "
				 "the QP returned to RTS; it ran only after the next post",
				 rep->rows[i].label);
	for (int i = 0; i < rep->nrows; i++)
		judge_row(rep, i, &d);
	for (int k = 0; k < rep->ntransitions; k++)
		judge_probe(&rep->transitions[k], &d);
	for (int k = 0; k < rep->nsqe; k++)
		if (rep->sqe[k].completed && rep->sqe[k].state_after != IBV_QPS_SQE)
			snprintf(add(&d, -1), TEXT_LEN, "%s send-queue error: the QP went to %s, "
				 "not SQE", rk_transport_str(rep->sqe[k].transport),
				 rk_qp_state_str(rep->sqe[k].state_after));
	return d.n;
}
