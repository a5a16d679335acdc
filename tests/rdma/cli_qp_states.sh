#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit qp-states: every row of the walk asserted from --json, against the
# IB spec, and against rxe's known deviations where the device is rxe.
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"

run 0 "$RDMAKIT" qp-states --json
json '
rxe = d["device"].startswith("rxe")
fails = []
def check(what, got, want):
    ok = got == want
    print(("ok:   " if ok else "FAIL: ") + "%s: expected %r, got %r" % (what, want, got))
    if not ok:
        fails.append(what)

rows = {r["label"]: r for r in d["rows"]}
check("row labels", [r["label"] for r in d["rows"]],
      ["RESET", "INIT", "RTR", "RTS", "SQD", "ERR", "RESET (from ERR)", "RTS (recovered)"])
for r in d["rows"]:
    check(r["label"] + ": entered", r["entered"], True)
    check(r["label"] + ": state the device reports", r["queried"], r["state"])

def wr(row, key):
    return rows[row][key] or {}

# A send posted in a state that cannot send: an immediate error; rxe runs it
# once the QP reaches RTS (its provider queued it first).
def send_refused(row):
    check(row + " send accepted", wr(row, "send")["accepted"], False)
    check(row + " refused send ran later", wr(row, "send")["delivered"], rxe)
    if rxe:
        check(row + " refused send ran in", wr(row, "send").get("delivered_in"), "RTS")

# RESET: both posts are an immediate error (spec and rxe).
check("RESET recv accepted", wr("RESET", "recv")["accepted"], False)
check("RESET recv errno", wr("RESET", "recv")["post_errno"], "EINVAL" if rxe else wr("RESET", "recv")["post_errno"])
check("RESET recv completed", wr("RESET", "recv")["completed"], False)
send_refused("RESET")

# INIT: receives accepted and wait; the peer SEND is not processed in INIT
# (it is retransmitted and lands in RTR); a send is an immediate error.
check("INIT recv accepted", wr("INIT", "recv")["accepted"], True)
check("INIT recv status", wr("INIT", "recv").get("status"), "SUCCESS")
check("INIT recv filled in", wr("INIT", "recv").get("completed_in"), "RTR")
check("INIT incoming received", wr("INIT", "incoming")["delivered"], True)
check("INIT incoming received in", wr("INIT", "incoming").get("delivered_in"), "RTR")
send_refused("INIT")

# RTR: receives, cannot send.
check("RTR recv accepted", wr("RTR", "recv")["accepted"], True)
check("RTR recv filled in", wr("RTR", "recv").get("completed_in"), "RTR")
check("RTR incoming received in", wr("RTR", "incoming").get("delivered_in"), "RTR")
send_refused("RTR")

# RTS: both.
for label in ("RTS", "RTS (recovered)"):
    check(label + " recv accepted", wr(label, "recv")["accepted"], True)
    check(label + " recv filled in", wr(label, "recv").get("completed_in"), "RTS")
    check(label + " send accepted", wr(label, "send")["accepted"], True)
    check(label + " send status", wr(label, "send").get("status"), "SUCCESS")
    check(label + " send ran in", wr(label, "send").get("delivered_in"), "RTS")
    check(label + " incoming received in", wr(label, "incoming").get("delivered_in"), "RTS")

# SQD: what was queued before finishes, SQ_DRAINED comes; a send posted in
# SQD does not run while in SQD; receiving goes on.
q = rows["SQD"]["queued_before"]
check("SQD queued sends", len(q), 4)
check("SQD queued sends all SUCCESS", [x.get("status") for x in q], ["SUCCESS"] * 4)
check("SQD drained event", rows["SQD"]["sq_drained_event"], True)
check("SQD recv filled in", wr("SQD", "recv").get("completed_in"), "SQD")
check("SQD incoming received in", wr("SQD", "incoming").get("delivered_in"), "SQD")
check("SQD send accepted", wr("SQD", "send")["accepted"], True)
check("SQD send ran while in SQD", wr("SQD", "send").get("delivered_in") == "SQD", False)
check("SQD send ran after the return to RTS", wr("SQD", "send").get("delivered_in"), "RTS")
if rxe:
    # rxe does not restart the send queue on SQD -> RTS: the next post does.
    check("SQD: rxe needed a later post to start the SQD send", rows["SQD"]["kick"] is not None, True)
    check("SQD: the later send ran", (rows["SQD"]["kick"] or {}).get("delivered"), True)

# ERR: everything outstanding is flushed; a send posted in ERR is flushed;
# a receive posted in ERR is flushed by the spec, never completed on rxe.
o = rows["ERR"]["outstanding"]
check("ERR outstanding requests", len(o), 5)
check("ERR outstanding statuses", [x.get("status") for x in o], ["WR_FLUSH_ERR"] * 5)
check("ERR outstanding flushed in", set(x.get("completed_in") for x in o), {"ERR"})
check("ERR send accepted", wr("ERR", "send")["accepted"], True)
check("ERR send status", wr("ERR", "send").get("status"), "WR_FLUSH_ERR")
check("ERR recv accepted", wr("ERR", "recv")["accepted"], True)
if rxe:
    check("ERR recv posted in ERR completed (rxe 6.1: never)", wr("ERR", "recv")["completed"], False)
else:
    check("ERR recv status", wr("ERR", "recv").get("status"), "WR_FLUSH_ERR")
check("RESET (from ERR): completions", rows["RESET (from ERR)"]["completions_here"], 0)

# Transitions: the device follows the state table, and the QP stays put.
for t in d["transitions"]:
    name = "%s -> %s" % (t["from"], t["to"])
    check(name + " accepted", t["accepted"], t["rule_allows"])
    check(name + " state after", t["state_after"], t["to"] if t["accepted"] else t["from"])
check("transitions tried", len(d["transitions"]), 23)

# SQE: a send-queue error on UD and UC.
check("SQE experiments", [s["transport"] for s in d["sqe"]], ["UD", "UC"])
for s in d["sqe"]:
    check(s["transport"] + " bad-lkey send completed", s["completed"], True)
    check(s["transport"] + " bad-lkey send failed", s.get("status") != "SUCCESS", True)
    if rxe:
        check(s["transport"] + " status (rxe)", s.get("status"), "LOC_QP_OP_ERR")
        check(s["transport"] + " state after (rxe: ERR, no SQE)", s["state_after"], "ERR")
    elif s["sqe_reached"]:
        check(s["transport"] + " SQE -> RTS", s.get("state_final"), "RTS")
    else:
        print("note: %s went to %s, not SQE" % (s["transport"], s["state_after"]))
check("result", d["result"], "ok")
assert not fails, fails
'

# The text table says the same.
run 0 "$RDMAKIT" qp-states
for s in "RESET " "INIT " "RTR " "RTS " "SQD " "ERR " "RESET (from ERR)" "RTS (recovered)" "SQE (UD)" "RESET -> RTR"; do
	has "$out" "$s"
done
has "$out" "waited; received in RTR"
# Bad input.
run 1 "$RDMAKIT" qp-states -d nosuchdev0
has "$err" "no RDMA device named 'nosuchdev0'"
finish
