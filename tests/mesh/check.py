#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Check an rdmakit-mesh --json document: valid against its JSON Schema
(docs/mesh/rdmakit-mesh-1.schema.json, with Debian's python3-jsonschema), n nodes,
full matrices of the stages run, and what the caller expects of the
outliers. Prints what is wrong and exits 1; 0 when all holds.

check.py FILE N [--stages reach,latency,bandwidth] [--clean]
         [--expect KIND:METRIC:NODE] [--expect-pair KIND:METRIC:SRC:DST]
         [--unreachable-node RANK] [--reason-contains TEXT] [--exit N]
NODE/SRC/DST are ranks; an --expect means: this outlier is there; with
--only, no other outlier is.
"""
import argparse
import json
import os
import sys

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "mesh",
                      "rdmakit-mesh-1.schema.json")

MATRIX = {"bandwidth": ["bandwidth_mbps"], "latency": ["latency_p50_us", "latency_p99_us"]}


def fail(msg):
    print("check.py: " + msg)
    sys.exit(1)


def failed_write(m, name, i, j):
    errors = m.get("bandwidth_errors") if name == "bandwidth_mbps" else None
    return bool(errors and errors[i][j])


def check_matrices(doc, n, stages, unreachable):
    m = doc["matrices"]
    for row, cells in enumerate(m["reach"]):
        for col, ok in enumerate(cells):
            bad = row in unreachable or col in unreachable
            want = row == col or not bad
            if ok != want:
                fail("reach[%d][%d] is %s, expected %s" % (row, col, ok, want))
            err = m["reach_errors"][row][col]
            if not ok and not err:
                fail("reach_errors[%d][%d] is empty for an unreachable pair" % (row, col))
    for stage in stages:
        for name in MATRIX.get(stage, []):
            mat = m.get(name)
            if not isinstance(mat, list) or len(mat) != n:
                fail("matrix %s missing or not %d rows" % (name, n))
            for i, cells in enumerate(mat):
                if len(cells) != n:
                    fail("matrix %s row %d has %d cells" % (name, i, len(cells)))
                for j, v in enumerate(cells):
                    bad = i in unreachable or j in unreachable
                    if i == j or bad:
                        if v is not None:
                            fail("%s[%d][%d] = %r, expected null" % (name, i, j, v))
                    elif failed_write(m, name, i, j):
                        # rdmakit-mesh counts WRITEs that failed on a reachable
                        # pair as 0 MB/s, the reason in bandwidth_errors
                        if v != 0:
                            fail("%s[%d][%d] = %r with a failed WRITE, expected 0" % (name, i, j, v))
                    elif not isinstance(v, (int, float)) or v <= 0:
                        fail("%s[%d][%d] = %r, expected a positive number" % (name, i, j, v))


def validate(doc):
    try:
        import jsonschema
    except ImportError:
        fail("python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    with open(SCHEMA) as f:
        schema = json.load(f)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    for e in errors[:10]:
        fail_soft("not valid against %s: %s at /%s" %
                  (os.path.basename(SCHEMA), e.message, "/".join(str(p) for p in e.path)))
    if errors:
        fail("%d schema error(s)" % len(errors))


def fail_soft(msg):
    print("check.py: " + msg)


def matches(o, kind, metric, node=None, src=None, dst=None):
    if o["kind"] != kind or o["metric"] != metric:
        return False
    if node is not None:
        return o["node"] == node
    return {o["src"], o["dst"]} == {src, dst} and o["node"] is None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("n", type=int)
    ap.add_argument("--stages", default="reach,latency,bandwidth")
    ap.add_argument("--clean", action="store_true")
    ap.add_argument("--only", action="store_true")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--expect-pair", action="append", default=[])
    ap.add_argument("--unreachable-node", type=int, action="append", default=[])
    ap.add_argument("--reason-contains", action="append", default=[])
    ap.add_argument("--counters-contains", action="append", default=[],
                    help="TEXT: in the re-test counters of an outlier")
    ap.add_argument("--exit", type=int)
    ap.add_argument("--only-pair", help="S:D: at least one outlier, all about pair {S,D}")
    a = ap.parse_args()
    with open(a.file) as f:
        doc = json.load(f)
    validate(doc)
    for key in ("nodes", "parameters", "matrices", "statistics", "outliers", "exit_status"):
        if key not in doc:
            fail("no %r" % key)
    if len(doc["nodes"]) != a.n:
        fail("%d nodes, expected %d" % (len(doc["nodes"]), a.n))
    for i, nd in enumerate(doc["nodes"]):
        if nd["rank"] != i or not nd["host"]:
            fail("node %d: %r" % (i, nd))
        if (nd["error"] is None) == (i in a.unreachable_node):
            fail("node %d error %r" % (i, nd["error"]))
    stages = a.stages.split(",")
    if doc["parameters"]["stages"] != stages:
        fail("stages %r, expected %r" % (doc["parameters"]["stages"], stages))
    check_matrices(doc, a.n, stages, set(a.unreachable_node))
    outs = doc["outliers"]
    for o in outs:
        for key in ("kind", "metric", "value", "expected", "reason"):
            if key not in o:
                fail("outlier without %r: %r" % (key, o))
    if a.clean and outs:
        fail("expected no outlier, got: " + "; ".join(o["reason"] for o in outs))
    wanted = []
    for e in a.expect:
        kind, metric, node = e.split(":")
        wanted.append(lambda o, k=kind, m=metric, nd=int(node): matches(o, k, m, node=nd))
    for e in a.expect_pair:
        kind, metric, s, d = e.split(":")
        wanted.append(lambda o, k=kind, m=metric, s=int(s), d=int(d):
                      matches(o, k, m, src=s, dst=d))
    for u in a.unreachable_node:
        wanted.append(lambda o, u=u: matches(o, "unreachable", "reach", node=u))
    for i, w in enumerate(wanted):
        if not any(w(o) for o in outs):
            fail("expected outlier %d not found; outliers: %s" %
                 (i, "; ".join(o["reason"] for o in outs) or "none"))
    if a.only:
        extra = [o for o in outs if not any(w(o) for w in wanted)]
        if extra:
            fail("unexpected outliers: " + "; ".join(o["reason"] for o in extra))
    if a.only_pair:
        s, d = (int(x) for x in a.only_pair.split(":"))
        if not outs:
            fail("expected outliers on pair %d-%d, got none" % (s, d))
        for o in outs:
            if o["node"] is not None or {o["src"], o["dst"]} != {s, d}:
                fail("outlier not about pair %d-%d: %s" % (s, d, o["reason"]))
    text = " ".join(o["reason"] for o in outs)
    for t in a.reason_contains:
        if t not in text:
            fail("no reason contains %r: %s" % (t, text))
    for t in a.counters_contains:
        if not any(t in (o.get("counters") or "") for o in outs):
            fail("no outlier's counters contain %r: %s" %
                 (t, " | ".join(str(o.get("counters")) for o in outs)))
    if a.exit is not None and doc["exit_status"] != a.exit:
        fail("exit_status %d, expected %d" % (doc["exit_status"], a.exit))
    print("check.py: %s: %d nodes, %d outliers, as expected" % (a.file, a.n, len(outs)))


main()
