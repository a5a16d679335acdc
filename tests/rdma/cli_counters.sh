#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit counters, as a user runs it: text, --json, the deltas a known amount
# of traffic leaves (rxe's rdma_sends/rdma_recvs count SENDs completed and
# received), --watch until SIGINT/SIGTERM or --count, and bad input; and the
# counters in the reports of ping, rc, bench and ud.
RDMAKIT=$1
PORT_BASE=40000
. "$(dirname "$0")/lib.sh"

watch_out=$(mktemp) watch_err=$(mktemp) watch_txt=$(mktemp) srv_out=$(mktemp) cli_out=$(mktemp)
trap 'rm -f "$out" "$err" "$watch_out" "$watch_err" "$watch_txt" "$srv_out" "$cli_out"' EXIT

# deltas FILE SIDE PYTHON: check the "counters" of the JSON report in FILE;
# 'c' is that object, 'hw' its hw_counters deltas.
deltas() {
	if ! "$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
c = d['counters'] if 'counters' in d else d['results'][0]['counters']
assert c['scope'] == 'port-wide' and c['port'] == 1, c
hw = c['deltas'].get('hw_counters', {})
print('# $2 deltas:', c['deltas'])
$3
" "$1"; then
		echo "FAIL: $2 counters: $3"
		sed 's/^/  | /' "$1" | head -60
		fails=$((fails + 1))
	fi
}

# run_reports: the counters in the reports of runs whose SENDs are known
# exactly. Both ends share the device, so each side's port-wide deltas hold
# both sides' SENDs and receives.
run_reports() {
	# ping -n 7: 7 pings and 7 pongs, each a SEND and a receive; the
	# exchange and the sync points go over TCP.
	pair 0 0 "$RDMAKIT ping --server -p @PORT@ -w 30 --json" \
		"$RDMAKIT ping $IP -p @PORT@ -n 7 --json" || return 0
	for f in "$srv_out" "$cli_out"; do
		deltas "$f" "ping -n 7" "
assert (hw.get('rdma_sends'), hw.get('rdma_recvs')) == (14, 14), hw
assert hw.get('sent_pkts', 0) >= 14 and c['failures'] == [], c
assert c['left_out'] == 0 and c['note'] is None and c['seconds'] > 0, c"
	done
	# rc --op send, in text: one SEND, seen by each side.
	pair 0 0 "$RDMAKIT rc --server -p @PORT@ --wait 30" "$RDMAKIT rc $IP -p @PORT@ --op send" ||
		return 0
	for f in "$srv_out" "$cli_out"; do
		has "$f" "port counters ($dev port 1, port-wide, " || continue
		if ! grep "^port counters" "$f" | grep -qE "rdma_recvs \+1, rdma_sends \+1(,|\$)"; then
			echo "FAIL: rc --op send: no 'rdma_recvs +1, rdma_sends +1' in:"
			sed 's/^/  | /' "$f"
			fails=$((fails + 1))
		fi
	done
	# bench: SEND bandwidth, 300 messages of 64 bytes in one round, and the
	# SEND with immediate that ends the round on each QP (2 QPs: 302); the
	# round's counters under its row, and in its JSON result.
	pair 0 0 "$RDMAKIT bench --server -p @PORT@ -w 30" \
		"$RDMAKIT bench $IP -p @PORT@ -o send -s 64 -n 150 -q 2 --json" || return 0
	deltas "$cli_out" "bench send -n 150 -q 2" "
assert (hw.get('rdma_sends'), hw.get('rdma_recvs')) == (302, 302), hw
assert d['results'][0]['messages'] == 300, d['results'][0]['messages']"
	has "$srv_out" "   port counters ($dev port 1, port-wide, "
	# ud -n 6: 6 datagrams, each echoed: 12 SENDs and 12 receives.
	# (the same report code as ping's: left to the plain run under ASan/UBSan)
	plain_only || return 0
	pair 0 0 "$RDMAKIT ud --server -p @PORT@ -w 30 -n 6 --json" \
		"$RDMAKIT ud $IP -p @PORT@ -n 6 --json" || return 0
	deltas "$srv_out" "ud -n 6" "
assert (hw.get('rdma_sends'), hw.get('rdma_recvs')) == (12, 12), hw"
}

# stop_watch PID SIGNAL: send SIGNAL to the background watch PID; it must exit 0.
stop_watch() {
	kill -"$2" "$1"
	wait "$1"
	rc=$?
	cat "$watch_out"
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: counters --watch exited $rc on SIG$2, expected 0"
		sed 's/^/  stderr: /' "$watch_err"
		fails=$((fails + 1))
	fi
}

# lines FILE PATTERN: how many lines of FILE match PATTERN.
lines() { grep -c -- "$2" "$1"; }

run 0 "$RDMAKIT" devices --json
dev=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["name"])' "$out")
echo "# first device: $dev"

run 0 "$RDMAKIT" counters
cat "$out"
has "$out" "$dev port 1"

run 0 "$RDMAKIT" counters -d "$dev" -i 1 --json
json "
assert d['device'] == '$dev' and d['port'] == 1, (d['device'], d['port'])
assert d['skipped'] == 0, d['skipped']
groups = d['groups']
assert set(groups) <= {'counters', 'hw_counters'}, groups.keys()
if not groups:
    assert 'exposes no counters' in d['note'], d['note']
for g in groups.values():
    for k, v in g.items():
        assert isinstance(v, int) and v >= 0, (k, v)
"

# On Soft-RoCE: hw_counters only (no IB port counters), without lifespan (a
# setting); and a SEND counted once at each end, so the deltas of a loopback
# run are exactly its SEND count (its WRITEs and READs are not counted there).
case "$dev" in
rxe*)
	json "
hw = d['groups']['hw_counters']
for k in ('rdma_sends', 'rdma_recvs', 'sent_pkts', 'rcvd_pkts', 'retry_exceeded_err',
          'rcvd_rnr_err', 'send_rnr_err', 'retry_rnr_exceeded_err'):
    assert k in hw, (k, sorted(hw))
assert 'lifespan' not in hw
assert 'counters' not in d['groups'], d['groups'].keys()
assert d['note'] is None, d['note']
"
	has "$out" "hw_counters"
	before=$(mktemp) after=$(mktemp)
	ns="7 13"
	plain_only || ns=7 # under ASan/UBSan the same path once
	for n in $ns; do
		"$RDMAKIT" counters --json >"$before"
		run 0 "$RDMAKIT" loopback -n $n -s 64k --json
		json "
send = [s for s in d['steps'] if s['op'] == 'SEND'][0]
assert send['ok'] and send['checked'] == $n, send
"
		"$RDMAKIT" counters --json >"$after"
		if "$PY" -c "
import json, sys
a = json.load(open(sys.argv[1]))['groups']['hw_counters']
b = json.load(open(sys.argv[2]))['groups']['hw_counters']
d = {k: b[k] - a[k] for k in b if b[k] != a[k]}
print('# deltas of loopback -n $n:', d)
assert d.get('rdma_sends') == $n, ('rdma_sends', d.get('rdma_sends'), $n)
assert d.get('rdma_recvs') == $n, ('rdma_recvs', d.get('rdma_recvs'), $n)
assert d.get('sent_pkts', 0) > 0, d
assert d.get('retry_exceeded_err', 0) == 0, d
" "$before" "$after"; then
			echo "ok: rdma_sends and rdma_recvs moved by $n"
		else
			echo "FAIL: counter deltas of loopback -n $n"
			fails=$((fails + 1))
		fi
	done
	rm -f "$before" "$after"
	run_reports

	# --watch --json: one object per line; traffic in the middle shows in the
	# intervals' deltas, in sum exactly; SIGTERM ends it with exit 0.
	"$RDMAKIT" counters --watch 1 --json >"$watch_out" 2>"$watch_err" &
	pid=$!
	wait_for "$watch_out" '"interval":1' 60
	run 0 "$RDMAKIT" loopback -n 5
	n0=$(lines "$watch_out" '"interval"')
	wait_for "$watch_out" "\"interval\":$((n0 + 2))," 60
	stop_watch "$pid" TERM
	"$PY" -c "
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
end = rows[-1]
assert end['end'] == 'SIGTERM' and end['intervals'] == len(rows) - 1, end
sends = recvs = 0
for i, r in enumerate(rows[:-1]):
    assert r['interval'] == i + 1, r
    assert 0.5 < r['seconds'] < 30, r
    hw = r['deltas'].get('hw_counters', {})
    sends += hw.get('rdma_sends', 0)
    recvs += hw.get('rdma_recvs', 0)
assert (sends, recvs) == (5, 5), (sends, recvs)
" "$watch_out" || { echo "FAIL: --watch --json records"; fails=$((fails + 1)); }

	# --watch names the trouble an interval shows: with a local ACK timeout
	# of 33.6 ms rxe resends 64 KiB WRITEs here (cli_bench), which the
	# intervals note, in JSON and in text, both watching. Two runs, an
	# interval apart: the text gives the hint once.
	"$RDMAKIT" counters --watch 1 --json >"$watch_out" 2>"$watch_err" &
	pid=$!
	"$RDMAKIT" counters --watch 1 >"$watch_txt" 2>&1 &
	tpid=$!
	wait_for "$watch_out" '"interval":1' 60
	wait_for "$watch_txt" "interval 1 " 60
	for k in 1 2; do
		pair 0 0 "$RDMAKIT bench --server -p @PORT@ -w 30" \
			"$RDMAKIT bench $IP -p @PORT@ --op write -s 65536 -n 300 --ack-timeout 13"
		n0=$(lines "$watch_txt" '^interval ')
		wait_for "$watch_txt" "interval $((n0 + 2)) " 60
	done
	n0=$(lines "$watch_out" '"interval"')
	wait_for "$watch_out" "\"interval\":$((n0 + 2))," 60
	stop_watch "$pid" TERM
	kill -INT "$tpid"
	wait "$tpid"
	sed 's/^/  text| /' "$watch_txt"
	"$PY" -c "
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])][:-1]
seen = []
for r in rows:
    names = [t['name'] for t in r['troubles']]
    assert len(set(names)) == len(names), r['troubles']
    for t in r['troubles']:
        assert t['hint'] and t['counters'], t
        assert all(v > 0 for v in t['counters'].values()), t
    seen += [t for t in r['troubles'] if t['name'] == 'retransmissions']
assert seen and any(t['counters'].get('completer_retry_err', 0) > 0 for t in seen), rows
" "$watch_out" || { echo "FAIL: --watch --json: no interval notes retransmissions"; fails=$((fails + 1)); }
	has "$watch_txt" "  note: retransmissions (completer_retry_err +"
	nnote=$(lines "$watch_txt" "^  note: retransmissions (")
	nhint=$(lines "$watch_txt" "^  note: retransmissions (.*): the transport resent")
	echo "# text --watch: $nnote retransmissions notes, $nhint with the hint"
	[ "$nhint" = 1 ] ||
		{ echo "FAIL: text --watch gave the retransmissions hint $nhint times, want once"; fails=$((fails + 1)); }
	;;
esac

# --watch in text: intervals until SIGINT, then a last line and exit 0; the
# SENDs of a loopback run in the middle show as "rdma_sends +N" (on rxe).
"$RDMAKIT" counters --watch 1 >"$watch_out" 2>"$watch_err" &
pid=$!
wait_for "$watch_out" "watching $dev port 1 every 1 s" 60
wait_for "$watch_out" "interval 1 " 60
run 0 "$RDMAKIT" loopback -n 3
n0=$(lines "$watch_out" '^interval ')
wait_for "$watch_out" "interval $((n0 + 2)) " 60
stop_watch "$pid" INT
case "$dev" in
rxe*)
	sends=$(awk '/^interval /{for (i = 1; i < NF; i++) if ($i == "rdma_sends") {
		v = $(i + 1); gsub(/[+,]/, "", v); s += v } } END { print s + 0 }' "$watch_out")
	[ "$sends" = 3 ] ||
		{ echo "FAIL: text intervals sum rdma_sends to '$sends', expected 3"; fails=$((fails + 1)); }
	;;
esac
tail -n 1 "$watch_out" | grep -q "^stopped by SIGINT after [0-9]* intervals\$" ||
	{ echo "FAIL: last line: $(tail -n 1 "$watch_out")"; fails=$((fails + 1)); }

# --count ends the watch by itself.
if plain_only; then
	run 0 "$RDMAKIT" counters --watch 1 -n 2
	cat "$out"
	[ "$(lines "$out" '^interval ')" -eq 2 ] ||
		{ echo "FAIL: expected 2 intervals, got $(lines "$out" '^interval ')"; fails=$((fails + 1)); }
	has "$out" "done: 2 intervals"
fi

# Bad input: named, refused, non-zero.
run 1 "$RDMAKIT" counters -d nosuchdev0
has "$err" "no RDMA device named 'nosuchdev0'"
run 1 "$RDMAKIT" counters -i 99
has "$err" "has no port 99"
# (usage errors, exit 2: tests/cli/bad_options.sh, on the host)
run 0 "$RDMAKIT" counters --help
has "$out" "--watch SEC"
run 0 "$RDMAKIT" --help
has "$out" "counters"
finish
