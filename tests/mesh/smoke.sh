#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit-mesh on one device: `mpirun -np 3` with every rank on the same rxe
# (the one-guest smoke test of issue 14). Checks the bootstrap, each schedule,
# each output (JSON valid with full matrices, SVG with a tooltip per cell,
# CSV), --baseline, usage errors (exit 2). Thresholds are opened wide: three
# ranks sharing one emulated device on two cores measure noise, not a fabric;
# the verdicts are tested on real matrices by tests/mesh/fabric.sh and on
# synthetic ones by test_mesh.
# usage: smoke.sh RDMAKIT-MESH CHECK.PY
set -u
MESH=$1
CHECK=$2
N=3
fails=0
# Debian's python3 (with python3-jsonschema): a version manager's shim first
# in PATH costs seconds a start in the emulated guest.
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
T=$(mktemp -d /tmp/mesh-smoke.XXXXXX)
trap 'rm -rf "$T"' EXIT

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI refuses a node name of "(none)", what a bare guest has.
if [ "$(hostname)" = "(none)" ] && [ -n "${RDMAKIT_SOFTROCE_GUEST:-}" ]; then
	hostname "guest$RDMAKIT_SOFTROCE_GUEST"
fi
MPIRUN="mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader,tcp"
LOOSE="--bw-low 1 --lat-high 100000 --lat-jitter 100000"
SMALL="-e -n 20 --bw-iters 10 --size 16k --window 4"

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# run NAME EXPECTED-EXIT ARGS...: rdmakit-mesh on N ranks, output in $T/NAME.out
run() {
	name=$1 want=$2
	shift 2
	start=$(date +%s)
	$MPIRUN -np $N "$MESH" "$@" >"$T/$name.out" 2>&1
	rc=$?
	echo "  ($name: exit $rc after $(($(date +%s) - start)) s)"
	if [ "$rc" -ne "$want" ]; then
		fail "$name: exit $rc, expected $want"
		sed 's/^/    | /' "$T/$name.out"
		return 1
	fi
	return 0
}

# json FILE EXPR: a Python expression on the document d is true
json() {
	"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}

for s in pairs shift serial; do
	if run "$s" 0 $SMALL $LOOSE --schedule "$s" --json-file "$T/$s.json" --svg "$T/$s.svg" \
		--csv "$T/$s.csv"; then
		before=$fails
		"$PY" "$CHECK" "$T/$s.json" $N --clean --exit 0 || fail "$s: JSON"
		json "$T/$s.json" "d['parameters']['schedule'] == '$s'" || fail "$s: schedule not in JSON"
		grep -q '^verdict: clean' "$T/$s.out" || fail "$s: no clean verdict line"
		titles=$(grep -c '<title>' "$T/$s.svg")
		# one per cell of 3 panels (reach, bandwidth, latency) and the document's
		[ "$titles" -eq $((3 * N * N + 1)) ] || fail "$s: SVG has $titles <title>"
		grep -qi '<script' "$T/$s.svg" && fail "$s: SVG has a script"
		"$PY" -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$T/$s.svg" ||
			fail "$s: SVG is not well-formed XML"
		for m in reach bandwidth_mbps latency_p50_us latency_p99_us; do
			lines=$(wc -l <"$T/$s.csv/$m.csv" 2>/dev/null || echo 0)
			[ "$lines" -eq $((N + 1)) ] || fail "$s: $m.csv has $lines lines"
		done
		[ $fails -eq $before ] && ok "schedule $s: exit 0, JSON, SVG ($titles titles), CSV"
	fi
done

# A baseline compared with itself: no regression.
if run baseline 0 $SMALL $LOOSE --baseline "$T/pairs.json" --json-file "$T/b.json"; then
	grep -q "^baseline: compared with $T/pairs.json" "$T/baseline.out" &&
		json "$T/b.json" "d['baseline'] == '$T/pairs.json' and d['exit_status'] == 0" &&
		ok "baseline" || fail "baseline not reported"
fi
# A baseline far better than this run: every cell a regression, exit 1.
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for name, f in (("bandwidth_mbps", 1e6), ("latency_p50_us", 1e-6)):
    d["matrices"][name] = [[None if v is None else v * f for v in row] for row in d["matrices"][name]]
json.dump(d, open(sys.argv[2], "w"))' "$T/pairs.json" "$T/better.json"
if run regression 1 $SMALL $LOOSE --baseline "$T/better.json" --json-file "$T/reg.json"; then
	json "$T/reg.json" "len([o for o in d['outliers'] if o['kind'] == 'regression']) == 2 * $N * ($N - 1) - $N * ($N - 1) // 2 and d['exit_status'] == 1" &&
		ok "baseline regressions: exit 1" ||
		fail "regressions: $("$PY" -c 'import json, sys; print([o["reason"] for o in json.load(open(sys.argv[1]))["outliers"]])' "$T/reg.json")"
fi
# One stage only: no other matrix. Its links marked DSCP 26 (issue 15): in the
# header line and the JSON's parameters.
if run reach-only 0 -e --stages reach --dscp 26 --json-file "$T/r.json"; then
	"$PY" "$CHECK" "$T/r.json" $N --stages reach --clean &&
		! grep -q bandwidth_mbps "$T/r.json" && ok "--stages reach" || fail "--stages reach"
	grep -q '^rdmakit-mesh: .*, tclass 104 (DSCP 26, ECN 0)' "$T/reach-only.out" &&
		json "$T/r.json" "d['parameters']['traffic'] == {'tclass': 104, 'dscp': 26, 'ecn': 0, 'sl': None, 'flow_label': None, 'hop_limit': None}" &&
		ok "--dscp 26: header and JSON" || fail "--dscp 26 not shown"
fi
# Usage errors: exit 2 (as every rdmakit command's), a message naming what is
# wrong; -np 1 is a setup error, exit 3. Option errors and -np 1 need no
# launcher: the program alone is an MPI singleton (no mpirun start-up).
alone() { # NAME ARGS...
	name=$1
	shift
	want=2
	[ "$name" = one-rank ] && want=3
	"$MESH" "$@" >"$T/$name.out" 2>&1
	rc=$?
	[ $rc -eq $want ] || { fail "$name: exit $rc, expected $want: $(cat "$T/$name.out")"; return 1; }
}
alone bad-schedule --schedule ring &&
	grep -q "'ring' is not one of pairs, shift, serial" "$T/bad-schedule.out" &&
	ok "--schedule ring: exit 2" || fail "--schedule ring message"
alone bad-stage --stages reach,speed && grep -q "unknown stage 'speed'" "$T/bad-stage.out" &&
	ok "--stages speed: exit 2" || fail "--stages message"
alone bad-size --size 10x && grep -q "'10x' is not a number" "$T/bad-size.out" &&
	ok "--size 10x: exit 2" || fail "--size message"
alone bad-traffic --tclass 104 --dscp 27 &&
	grep -q -- "--tclass 104 (DSCP 26) and --dscp 27 disagree" "$T/bad-traffic.out" &&
	ok "--tclass/--dscp disagreeing: exit 2" || fail "--tclass/--dscp message"
alone one-rank && grep -q "at least 2 ranks" "$T/one-rank.out" && ok "one rank: exit 3" ||
	fail "one rank message"
# Old spellings name the new one (issue 16: --json is a flag elsewhere, -t seconds).
alone old-json --json "$T/x.json" && grep -q "is now --json-file FILE" "$T/old-json.out" &&
	ok "--json FILE: exit 2, names --json-file" || fail "--json FILE message"
alone old-timeout -t 500 && grep -q "is now --wc-timeout MS" "$T/old-timeout.out" &&
	ok "-t MS: exit 2, names --wc-timeout" || fail "-t message"
# A baseline that is not there: found out after measuring, still exit 3.
run bad-baseline 3 -e --stages reach --baseline "$T/none.json" &&
	grep -q "baseline $T/none.json" "$T/bad-baseline.out" && ok "missing baseline: exit 3" ||
	fail "--baseline message"

[ $fails -eq 0 ] && echo "smoke: all passed" || echo "smoke: $fails failed"
[ $fails -eq 0 ]
