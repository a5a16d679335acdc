#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit bench, server and client as a user runs them: every test and mode
# moves real data and the side that was written, read, sent to or operated on
# checks it (pattern, counts, the atomic word). Correctness, not timings.
# Usage: cli_bench.sh RDMAKIT [soak]   (soak: --duration 0, --interval, stop
# signals on either side, the link going down mid-run)
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"

srv_out=$(mktemp)
trap 'rm -f "$out" "$err" "$srv_out"' EXIT

# bench_pair "SERVER ARGS" "CLIENT ARGS": server in the background, client with
# --json into $out (stderr $err); both must exit 0 (pair in lib.sh). Generous
# waits: the guest is emulated and may share its host with other guests.
cli_out=$out cli_err=$err
bench_pair() {
	pair 0 0 "$RDMAKIT bench --server -p @PORT@ --wait 60 --timeout 60 $1" \
		"$RDMAKIT bench $IP -p @PORT@ --timeout 60 --json $2"
}

# units_passed SIZE: a --units Gb --expect-bw 0.01MiB run: the figures in Gb/s
# beside the raw bytes/s and MiB/s; rxe's link rate is made up from its
# netdev, so no share of it; the one threshold met.
units_passed() {
	json "
r = d['results'][0]
assert d['units'] == 'Gb' and r['bw_unit'] == 'Gb/s', d
assert r['bw_avg_Bps'] > 0 and abs(r['bw_avg'] * 1e9 / 8 - r['bw_avg_Bps']) <= 1e-9 * r['bw_avg_Bps'], r
assert abs(r['bw_avg_Bps'] / 1048576 - r['bw_avg_MiBps']) <= 1e-9 * r['bw_avg_MiBps'], r
assert abs(r['bw_peak'] * 1e9 / 8 - r['bw_peak_Bps']) <= 1e-9 * r['bw_peak_Bps'], r
link = d['link']
assert link['rate_meaningful'] is False and 'emulated device (Soft-RoCE)' in link['note'], link
assert r['link_pct'] is None, r
g = d['gates']
assert d['ok'] is True and d['gates_passed'] is True and len(g) == 1, d
assert g[0]['name'] == 'expect-bw' and g[0]['graded'] and g[0]['passed'] and g[0]['size'] == $1, g
assert g[0]['unit'] == 'Gb/s' and abs(g[0]['limit'] - 0.01 * 1048576 * 8 / 1e9) < 1e-12, g
assert abs(g[0]['figure'] - r['bw_avg']) <= 1e-9 * r['bw_avg'] and g[0]['figure'] > g[0]['limit'], g"
}

# ---- soak: --duration 0, --interval, stop signals, the link going down ----

# lines_sum: the --json output of a soak client ($out) is JSON lines: the
# interval records, then the summary document; its intervals add up to the
# round's total exactly. NREC: the records expected ("" for any). KEY:
# messages (bandwidth) or iterations (latency).
lines_sum() {
	"$PY" -c "
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ivs = [l for l in lines if l.get('record') == 'interval']
s = lines[-1]
assert s.get('record') == 'summary', 'the last line is not the summary: %r' % s
r = s['results'][0]
nrec, key = '$1', '$2'
if nrec:
    assert len(ivs) == int(nrec), 'expected %s interval records, got %d' % (nrec, len(ivs))
assert [i['index'] for i in ivs] == list(range(len(ivs))), [i['index'] for i in ivs]
assert all(i['ok'] for i in ivs), [i for i in ivs if not i['ok']]
assert ivs[-1]['last'] and not any(i['last'] for i in ivs[:-1]), 'last flags'
total = sum(i[key] for i in ivs)
want = r['messages'] if key == 'messages' else r['iterations']
assert total == want, 'intervals add up to %d %s, the round has %d' % (total, key, want)
assert sum(i['bytes'] for i in ivs) == total * r['size'], 'bytes'
for a, b in zip(ivs, ivs[1:]):
    assert abs(a['end_s'] - b['start_s']) < 1e-6, 'interval %d ends at %f, %d starts at %f' % (a['index'], a['end_s'], b['index'], b['start_s'])
k = r['intervals']
assert k['count'] == len(ivs), k
if k['ranked']:
    v = 'p99' if key == 'iterations' else 'bw_MiBps'
    lo = k['min']['latency_us'][v] if key == 'iterations' else k['min'][v]
    hi = k['max']['latency_us'][v] if key == 'iterations' else k['max'][v]
    assert 0 < lo <= hi, (lo, hi)
$3
print('ok: %d interval records, %d %s in all as the round counted' % (len(ivs), total, key))
" "$out" || { echo "FAIL: soak records:"; sed 's/^/  | /' "$out" | head -30; fails=$((fails + 1)); }
}

# bg_pair "SERVER ARGS" "CLIENT ARGS": both in the background, client --json
# lines into $out (stderr $err), server text into $srv_out; pids in $spid and
# $cpid (rdmakit's own: timeout(1) would turn a forwarded signal into its
# own exit status), a watchdog kills both after 120 s (its sleep writes
# nowhere: ctest waits for every holder of the test's output to exit).
bg_pair() {
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086
	"$RDMAKIT" bench --server -p "$PORT" --wait 60 --timeout 60 $1 >"$srv_out" 2>&1 &
	spid=$!
	# shellcheck disable=SC2086
	"$RDMAKIT" bench "$IP" -p "$PORT" --timeout 60 --json $2 >"$out" 2>"$err" &
	cpid=$!
	(sleep 120; kill -9 "$spid" "$cpid") >/dev/null 2>&1 &
	wpid=$!
}

# records N: wait (up to 60 s) until the client printed N interval records.
records() {
	i=0
	while [ $i -lt 600 ]; do
		[ "$(grep -c '"record":"interval"' "$out")" -ge "$1" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "FAIL: the client never printed $1 interval records:"
	sed 's/^/  | /' "$out" "$err" | tail -20
	fails=$((fails + 1))
	return 1
}

# ended WANT_SERVER WANT_CLIENT WHAT: wait for both, check their exit codes.
ended() {
	wait "$cpid"
	gc=$?
	wait "$spid"
	gs=$?
	kill "$wpid" 2>/dev/null
	exit_is "[$3] the server" "$gs" "$1" "$srv_out" &&
		exit_is "[$3] the client" "$gc" "$2" "$out" "$err"
}

soak_tests() {
	# Six seconds in intervals of one: six records adding up to the round.
	bench_pair "" "--op write -s 4k --duration 6 --interval 1" && lines_sum 6 messages "
assert r['duration_ms'] == 6000 and not r['stopped'] and r['peer_check'] == 'passed', r
assert 5.9 < ivs[-1]['end_s'] < 8, ivs[-1]
assert k['ranked'] >= 5, k"
	# Latency: intervals of iterations with their own p50/p99.
	bench_pair "" "--op send --mode lat --duration 3 --interval 1" && lines_sum 3 iterations "
assert all(i['latency_us']['p50'] <= i['latency_us']['p99'] for i in ivs), ivs"

	# SIGINT to the client of a run until stopped: both end cleanly with a summary.
	bg_pair "" "--op write -s 4k --duration 0 --interval 1"
	records 2 && kill -INT "$cpid"
	ended 0 0 "SIGINT to the client" && lines_sum "" messages "
assert r['until_stopped'] and r['stopped'] and r['stopped_by'] == 'SIGINT', r
assert s['ok'] is True, s" && has "$srv_out" "bench server: every size checked: OK"

	# SIGTERM to the server: it tells the client, which ends the round and reports.
	bg_pair "" "--op send -s 1k --duration 0 --interval 1"
	records 2 && kill -TERM "$spid"
	ended 0 0 "SIGTERM to the server" && lines_sum "" messages "
assert r['stopped'] and r['stopped_by'] == 'the peer' and r['peer_check'] == 'passed', r" &&
		has "$srv_out" "received" && has "$srv_out" "bench server: every size checked: OK"

	# The link goes down mid-soak: a failed interval naming the error, exit 1.
	# rxe fails the request at once (IBV_WC_LOC_QP_OP_ERR) or, in about one
	# run of four, retries into the downed netdev without failing it: then
	# the port's event ends the round after a second without completions,
	# not the whole --timeout.
	DEV=$("$RDMAKIT" devices --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["name"])')
	NETDEV=$(rdma link show "$DEV/1" | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
	bg_pair "" "--op write -s 4k --duration 0 --interval 1"
	records 2 && ip link set "$NETDEV" down
	wait "$cpid"
	gc=$?
	ip link set "$NETDEV" up
	kill "$spid" 2>/dev/null
	wait "$spid"
	kill "$wpid" 2>/dev/null
	sleep 1 # the port comes back ACTIVE
	if [ "$gc" -ne 1 ]; then
		echo "FAIL [link down]: the client exited $gc, want 1"
		sed 's/^/  client: /' "$out" | tail -10
		sed 's/^/  client stderr: /' "$err" | tail -10
		fails=$((fails + 1))
	else
		"$PY" -c "
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ivs = [l for l in lines if l.get('record') == 'interval']
bad = ivs[-1]
assert len(ivs) >= 3 and all(i['ok'] for i in ivs[:-1]), ivs
assert not bad['ok'] and bad['last'], bad
assert bad['error'].startswith(('IBV_WC_', 'IBV_EVENT_PORT_ERR on ')), bad
assert bad['end_s'] - ivs[-2]['end_s'] < 30, (ivs[-2], bad)
assert lines[-1].get('record') == 'summary' and lines[-1]['ok'] is False, lines[-1]
print('ok [link down]: interval %d failed: %s' % (bad['index'], bad['error']))
" "$out" || { echo "FAIL [link down]:"; sed 's/^/  | /' "$out" "$err" | tail -20; fails=$((fails + 1)); }
	fi
}

if [ "${2:-}" = soak ]; then
	soak_tests
	finish
	exit 0
fi

N=100
plain_only || echo "# sanitized run: the cases marked plain_only are left to the plain run"
# Bandwidth, RC: each operation, the target side's verdict.
bench_pair "" "--op write -s 64 -n $N" && bench_iters $N &&
	has "$srv_out" "last WRITE's 64 bytes written match the pattern"
bench_pair "" "--op send -s 4k -n $N" && bench_iters $N &&
	has "$srv_out" "received $N of $N SENDs, last message's 4096 bytes match"
bench_pair "" "--op read -s 4k -n $N" && bench_iters $N &&
	json "assert d['results'][0]['check'] == '4096 bytes read match the peer\\'s pattern', d['results'][0]['check']"
bench_pair "" "--op fetch-add -n $N" && bench_iters $N &&
	has "$srv_out" "word = $N after $N FETCH_ADD, as due" &&
	json "assert d['results'][0]['check'] == 'every FETCH_ADD returned the value due', d['results'][0]['check']"
# (the server's report as CSV this time)
bench_pair "--csv" "--op cmp-swap -n $N" && bench_iters $N &&
	has "$srv_out" "cmp-swap,bw,RC,1,8,$N,$N," &&
	has "$srv_out" "word = $N after $N CMP_SWAP, as due"
# Multi-packet messages (rxe's MTU is 1024) and an inline-sized one in one sweep.
plain_only && bench_pair "" "--op write --size 256..1k -n 20" && bench_iters 20 3 &&
	has "$srv_out" "last WRITE's 1024 bytes written match the pattern" &&
	has "$srv_out" "last WRITE's 256 bytes written match the pattern"
bench_pair "" "--op send --size 2,1000,64k -n 20" && bench_iters 20 3 &&
	has "$srv_out" "received 20 of 20 SENDs, last message's 65536 bytes match"

# Latency: samples = iterations, the ponger answered every ping.
# (sanitized: read and fetch-add only; send and write share their paths)
lat_tests="send write read fetch-add"
plain_only || lat_tests="read fetch-add"
for t in $lat_tests; do
	bench_pair "" "--op $t --mode lat -n 50" && bench_iters 50 &&
		json "
l = d['results'][0]['latency_us']
assert l['samples'] == 50, 'samples %d' % l['samples']
assert 0 < l['min'] <= l['median'] <= l['p99'] <= l['p99_9'] <= l['max'], l"
done
has "$srv_out" "word = 50 after 50 FETCH_ADD, as due"

# UC and UD.
plain_only && bench_pair "" "--transport uc --op write -s 4k -n $N" && bench_iters $N &&
	has "$srv_out" "last WRITE's 4096 bytes written match the pattern"
plain_only && bench_pair "" "--transport uc --op send -s 4k -n $N" && bench_iters $N &&
	has "$srv_out" "SENDs, last message's 4096 bytes match"
bench_pair "" "--transport ud --op send -s 1k -n $N" && bench_iters $N &&
	has "$srv_out" "received $N of $N SENDs"
bench_pair "" "--transport ud --op send --mode lat -n 50" && bench_iters 50
# (with a latency p99 threshold far above rxe's: met, exit 0)
bench_pair "" "--transport uc --op write --mode lat -n 50 --max-lat-p99 10000000" && bench_iters 50 &&
	json "
g = d['gates']
assert d['gates_passed'] is True and len(g) == 1, d
assert g[0]['name'] == 'max-lat-p99' and g[0]['graded'] and g[0]['passed'] and g[0]['unit'] == 'us', g
assert g[0]['figure'] == d['results'][0]['latency_us']['p99'] and g[0]['limit'] == 10000000, g"

# Several QPs, both directions, RDMA CM, a duration, CSV.
plain_only && bench_pair "" "--op fetch-add --qps 2 -n $N" && bench_iters $N &&
	has "$srv_out" "words (per QP), total = $((2 * N)) after $((2 * N)) FETCH_ADD"
plain_only && bench_pair "" "--op send --qps 2 -s 256 -n $N" && bench_iters $N &&
	has "$srv_out" "received $((2 * N)) of $((2 * N)) SENDs"
plain_only && bench_pair "" "--op send --bidir -s 256 -n $N" && bench_iters $N &&
	has "$srv_out" "received $N of $N SENDs" &&
	json "r = d['results'][0]; assert r['received'] == $N and r['peer_messages'] == $N, r"
bench_pair "" "--op write --bidir --qps 2 -s 1k -n $N" && bench_iters $N &&
	has "$srv_out" "last WRITE's 1024 bytes written match the pattern"
# 128 QPs (as ib_write_bw -q 128): each QP's depths shrink so that all fit the
# CQs of the device's max_cqe; every QP's messages counted and checked.
bench_pair "--qps 128" "--op write --qps 128 -s 64 -n 20" && bench_iters 20 &&
	has "$srv_out" "last WRITE's 64 bytes written match the pattern" &&
	json "assert d['qps'] == 128 and len(d['results']) == 1, d"
plain_only && bench_pair "" "--op send --qps 128 --threads 2 -s 64 -n 20" && bench_iters 20 &&
	has "$srv_out" "received 2560 of 2560 SENDs"
# Threads, each driving its own QPs and CQs: every QP's messages counted.
plain_only && bench_pair "" "--op write --qps 4 --threads 2 -s 4k -n $N" && bench_iters $N &&
	has "$srv_out" "last WRITE's 4096 bytes written match the pattern" &&
	json "assert d['threads'] == 2 and d['qps'] == 4, d"
plain_only && bench_pair "" "--op send --qps 2 --threads 2 -s 256 -n $N" && bench_iters $N &&
	has "$srv_out" "received $((2 * N)) of $((2 * N)) SENDs"
bench_pair "" "--op fetch-add --qps 3 --threads 3 -n $N" && bench_iters $N &&
	has "$srv_out" "words (per QP), total = $((3 * N)) after $((3 * N)) FETCH_ADD"
bench_pair "" "--op read --qps 2 --threads 2 -s 1k --duration 1" &&
	json "
r = d['results'][0]
assert r['iterations'] > 0 and r['messages'] >= 2 * r['iterations'] and r['peer_check'] == 'passed', r"
bench_pair "--cm" "--cm --op write -s 4k -n $N" && bench_iters $N &&
	json "assert d['connection'] == 'rdma_cm', d['connection']" &&
	has "$srv_out" "last WRITE's 4096 bytes written match the pattern"
# (in Gb/s, with a rate far under rxe's: met, exit 0; see "Units and thresholds")
bench_pair "" "--op write -s 64 --duration 1 --units Gb --expect-bw 0.01MiB" &&
	json "
r = d['results'][0]
assert r['iterations'] > 0 and r['duration_ms'] == 1000 and r['peer_check'] == 'passed', r
assert 0.9 < r['seconds'] < 5, r['seconds']" && units_passed 64
bench_pair "" "--op write -s 64 --wr-api off --inline 0 -n 50 --post-list 4 --signal-every 8 --ack-timeout 18" &&
	bench_iters 50 && json "fp = d['fast_path']; assert fp['wr_api'] is False and fp['inline_granted'] == 0 and fp['post_list'] == 4 and fp['ack_timeout'] == 18, fp"
# A run that worked still names the trouble its counters show: with a local
# ACK timeout of 33.6 ms (--ack-timeout 13) rxe resends 64 KiB WRITEs here
# (at the default 14 too, less often), and both sides say so in a note.
bench_pair "" "--op write -s 65536 -n 300 --ack-timeout 13" && bench_iters 300 &&
	json "
t = d['results'][0]['counters']['troubles']
assert [x['name'] for x in t][:1] == ['retransmissions'], t
assert t[0]['counters'].get('completer_retry_err', 0) > 0, t
assert 'longer local ACK timeout' in t[0]['hint'], t" &&
	has "$srv_out" "note: retransmissions (completer_retry_err +"

# Units and thresholds (a rate far under rxe's is met: the --duration run
# above). A rate far above rxe's, and a share of a link rate rxe does not
# have: each threshold with its figure and limit, exit 3 (RK_EXIT_GATE), in
# text. The client's Gb/s row against the server's MiB/s row of the same run.
pair 0 3 "$RDMAKIT bench --server -p @PORT@ --wait 60 --timeout 60" \
	"$RDMAKIT bench $IP -p @PORT@ --timeout 60 --op write -s 64k -n 100 --units Gb --expect-bw 1000Gb --min-link-pct 50" &&
	has "$out" "BW average[Gb/s]" &&
	has "$out" "link      rate unknown (emulated device (Soft-RoCE)" &&
	has "$out" "gate 65536 bytes: expect-bw: " &&
	has "$out" " Gb/s, limit at least 1000 Gb/s: MISSED" &&
	has "$out" "gate 65536 bytes: min-link-pct: cannot grade (link rate unknown: emulated device (Soft-RoCE)" &&
	has "$out" "limit at least 50 %: not passed" &&
	has "$out" "bench client: thresholds: 2 of 2 not passed (exit status 3)" &&
	has "$out" "bench client: every size checked: OK" &&
	has "$srv_out" "BW average[MiB/s]" && {
	gb=$(awk '$1 == 65536 { print $4 }' "$out")
	mib=$(awk '$1 == 65536 { print $4 }' "$srv_out")
	# Both rows print two decimals: 0.005 Gb/s is 0.6 MiB/s.
	"$PY" -c "
import sys
gb, mib = float(sys.argv[1]), float(sys.argv[2])
assert mib > 0 and abs(gb * 1e9 / 8 / 1048576 - mib) <= 0.05 * mib + 0.6, (gb, mib)
" "$gb" "$mib" || { echo "FAIL: client $gb Gb/s is not the server's $mib MiB/s"; fails=$((fails + 1)); }
}
# A latency p99 far under rxe's: missed, in the JSON.
pair 0 3 "$RDMAKIT bench --server -p @PORT@ --wait 60 --timeout 60" \
	"$RDMAKIT bench $IP -p @PORT@ --timeout 60 --json --op write --mode lat -n 50 --max-lat-p99 0.001" &&
	bench_iters 50 && json "
g = d['gates']
assert d['gates_passed'] is False and len(g) == 1, d
assert g[0]['name'] == 'max-lat-p99' and g[0]['graded'] and not g[0]['passed'] and g[0]['limit'] == 0.001, g
assert g[0]['figure'] == d['results'][0]['latency_us']['p99'] > 0.001 and g[0]['size'] == 2, g"

# Perftest habits: the server given the same run options as the client runs
# as ever; one given otherwise refuses the client by name, on both sides
# (the client exits 1, the server of one client too).
bench_pair "--op write -s 4k -n $N --qps 2 --threads 2 --mode bw --transport rc" \
	"--op write -s 4k -n $N --qps 2 --threads 2" && bench_iters $N
plain_only && bench_pair "--op send --transport uc --bidir --size 64,1k -n 20" \
	"--op send --transport uc --bidir --size 64,1k -n 20" && bench_iters 20 2
plain_only && bench_pair "--op read --size 64..256 --duration 1" \
	"--op read --size 64..256 --duration 1" && json "assert d['ok'] and len(d['results']) == 3, d"
# refused WHAT "SERVER ARGS" "CLIENT ARGS": both exit 1, both name WHAT.
refused() {
	pair 1 1 "$RDMAKIT bench --server -p @PORT@ --wait 60 --timeout 60 $2" \
		"$RDMAKIT bench $IP -p @PORT@ --timeout 60 $3" &&
		has "$err" "the server refused: $1" && has "$srv_out" "$1"
}
refused "--size: client 4096, server 65536" "-s 65536" "-s 4096 -n 10"
refused "--op: client read, server write" "--op write" "--op read -n 10"
refused "--qps: client 1, server 2" "--qps 2" "-n 10"
refused "--count: client 20, server 10" "-n 10" "-n 20"
refused "--bidir: client off, server on" "--bidir" "-n 10"
refused "--size: client 4096, server 65536" "--cm -s 65536" "--cm -s 4096 -n 10"
plain_only && refused "--mode: client lat, server bw" "--mode bw" "--mode lat -n 10"
plain_only && refused "--transport: client uc, server rc" "--transport rc" "--transport uc -n 10"
plain_only && refused "--size: client 3 sizes 64..4096, server 2 sizes 64..4096" \
	"--size 64,4k" "--size 64,1k,4k -n 10"
plain_only && refused "--size: client 2 sizes 64..4096, server 2 sizes 64..4096 (the lists differ)" \
	"--size 64,4k" "--size 4k,64 -n 10"
plain_only && refused "--count: client none (runs by --duration), server 10" "-n 10" "--duration 1"
plain_only && refused "--duration: client 1, server 2" "--duration 2" "--duration 1"
plain_only && refused "--threads: client 1, server 2" "--qps 2 --threads 2" "--qps 2 -n 10"

# A peer killed (SIGKILL) in a 10 s run, over the TCP exchange and RDMA CM:
# the other side fails within 5 s naming the closed control connection.
# Over CM its QP never answers and CM alone says so (the server waited
# 67 s, to the end of the run and its timeout, before).
for conn in "" "--cm"; do
	for victim in server client; do
		PORT=$((PORT + 1))
		# shellcheck disable=SC2086
		timeout 60 "$RDMAKIT" bench --server $conn -p "$PORT" -w 30 >"$srv_out" 2>&1 &
		spid=$!
		# shellcheck disable=SC2086
		timeout 60 "$RDMAKIT" bench "$IP" $conn -p "$PORT" -D 10 -s 4k >"$cli_out" 2>"$cli_err" &
		cpid=$!
		# both set up and running (their column headers), then into the run:
		# a fixed sleep killed mid-setup in a slow (sanitized) guest
		wait_for "$srv_out" "#bytes" 60 && wait_for "$cli_out" "#bytes" 60
		sleep 1
		if [ $victim = server ]; then
			killed "$spid" "$cpid" "bench $conn, server killed" "$cli_err" &&
			has "$cli_err" "closed the control connection"
		else
			killed "$cpid" "$spid" "bench $conn, client killed" "$srv_out" &&
			has "$srv_out" "closed the control connection"
		fi
	done
done

# Bad options: tests/cli/bad_options.sh (on the host).
finish
