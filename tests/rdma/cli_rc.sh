#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit rc, server and client as a user runs them, over both connection
# methods. Usage: cli_rc.sh RDMAKIT matrix|faults
RDMAKIT=$1
WHAT=${2:-matrix}
PORT_BASE=20000
. "$(dirname "$0")/lib.sh"

srv_out=$(mktemp) cli_out=$(mktemp)
trap 'rm -f "$out" "$err" "$srv_out" "$cli_out"' EXIT

# rc_pair WANT_SERVER WANT_CLIENT "SERVER ARGS" "CLIENT ARGS": an rc server
# and a client against it (pair in lib.sh). The client is started right
# away: it retries until the server listens.
rc_pair() {
	pair "$1" "$2" "$RDMAKIT rc --server -p @PORT@ --wait 30 $3" "$RDMAKIT rc $IP -p @PORT@ $4"
}

# one_case CONN EV OP SIZE SGE: one pair of the matrix and its checks.
one_case() {
	rc_pair 0 0 "$1 $2 -s $4 --sge $5" "$1 $2 --op $3 -s $4 --sge $5" || return 0
	has "$cli_out" "every byte checked: OK"
	has "$srv_out" "every byte checked: OK"
	# Over CM the control messages share the receive queue, and each finds
	# a receive posted: a clean run shows no RNR NAK (port-wide counters,
	# both ends on this port).
	[ "$1" = "--cm" ] && lacks "$cli_out" "rcvd_rnr_err"
	return 0
}

# Every pair of factors (connection method, completion mode, operation, size,
# SGE count) meets in at least one pair of processes: 15, a covering array
# of strength 2 in which each operation runs at each size (1 byte, one MTU
# packet, 1 MiB of 1024 packets), on both methods (the rkey and address
# travel differently) and with both SGE counts. The whole product (50 pairs
# once the 3-SGE single byte is left out) took 604 s of a whole-suite run:
# RDMAKIT_RC_MATRIX=full runs it.
covering_matrix() {
	for row in "- ev send 1 1" "cm - send 4k 1" "- ev send 1M 3" \
		"cm ev send-imm 1 1" "- ev send-imm 4k 3" "cm - send-imm 1M 3" \
		"- ev write 1 1" "- ev write 4k 1" "cm - write 1M 3" \
		"- - write-imm 1 1" "- - write-imm 4k 3" "cm ev write-imm 1M 1" \
		"- - read 1 1" "cm ev read 4k 1" "- ev read 1M 3"; do
		set -- $row
		conn="" ev=""
		[ "$1" = cm ] && conn="--cm"
		[ "$2" = ev ] && ev="--events"
		one_case "$conn" "$ev" "$3" "$4" "$5"
	done
}

full_matrix() {
	for conn in "" "--cm"; do
		i=0
		for op in send send-imm write write-imm read; do
			j=0
			for size in 1 4k 1M; do
				for sge in 1 3; do
					[ "$size" = 1 ] && [ "$sge" = 3 ] && continue
					ev=""
					[ $(((i + j) % 2)) -eq 1 ] && ev="--events"
					one_case "$conn" "$ev" "$op" "$size" "$sge"
					j=$((j + 1))
				done
			done
			i=$((i + 1))
		done
	done
}

# Under ASan/UBSan (each process start costs seconds in the emulated guest)
# every pair of factors instead of every combination, one size past the MTU:
# each operation runs twice, the second time with the other method, mode and
# SGE count, and the first rows vary so that every method, mode and SGE
# count also meet each other.
pairwise_matrix() {
	for row in "send  1" "send-imm --events 3" "write  3" "write-imm --events 1" "read  1"; do
		set -- $row
		op=$1
		if [ $# -eq 3 ]; then ev=$2 sge=$3; else ev="" sge=$2; fi
		one_case "" "$ev" "$op" 4k "$sge"
		# The complement: RDMA CM, the other completion mode and SGE count.
		if [ -n "$ev" ]; then ev2=""; else ev2="--events"; fi
		one_case "--cm" "$ev2" "$op" 4k $((4 - sge))
	done
}

matrix() {
	if [ "${RDMAKIT_RC_MATRIX:-}" = full ]; then
		full_matrix
	elif [ "${RDMAKIT_SANITIZED:-0}" = 1 ]; then
		pairwise_matrix
	else
		covering_matrix
	fi
	for conn in "" "--cm"; do
		for ev in "" "--events"; do
			# Under ASan/UBSan two of the four: each method and mode once.
			plain_only || [ "$conn$ev" = "" ] || [ "$conn$ev" = "--cm--events" ] || continue
			for op in fetch-add cmp-swap; do
				rc_pair 0 0 "$conn $ev -s 8" "$conn $ev --op $op -s 8" || continue
				has "$srv_out" "as expected"
			done
			rc_pair 0 0 "$conn $ev" "$conn $ev --op all" || continue
			for s in 1 2 3 4 5; do has "$cli_out" "step $s/5"; done
			has "$srv_out" "word 1001 -> 2000"
		done
	done
	# --json on both sides: one document each, with every step checked.
	rc_pair 0 0 "--json -s 4k" "--json --op all -s 4k --sge 2" &&
	for f in "$srv_out" "$cli_out"; do
		cp "$f" "$out"
		json '
assert d["result"] == "ok", d
assert [s["op"] for s in d["steps"]] == ["SEND", "READ", "WRITE", "FETCH_ADD", "CMP_SWAP"], d["steps"]
assert all(s["ok"] for s in d["steps"]), d["steps"]
assert d["gid"]["type"] == "RoCE v2", d.get("gid")
'
	done
}

# Time bounds: each is well under what the failure it rules out would take
# (a wait for the whole timeout), not a speed test: a whole-suite run loads
# the emulated guests 3-5 times, and a sanitized process start alone took
# 7-11 s there; three times as long again under the sanitizers.
slow=1
[ "${RDMAKIT_SANITIZED:-0}" = 1 ] && slow=3

faults() {
	# Nothing listens: --json's document names the error stderr names, the
	# refusal, not a timeout (issue 35: it said "Connection timed out").
	run 1 "$RDMAKIT" rc "$IP" -p "$PORT" -t 2 --json
	has "$err" "Connection refused; gave up after"
	json '
assert d["result"] == "failed" and d["errno"] == "ECONNREFUSED", d
assert "Connection refused; gave up after" in d["error"], d
'
	# A wrong rkey: the client gets the remote access error and its hint,
	# the server hears the step failed; both end within seconds.
	for conn in "" "--cm"; do
		rc_pair 1 1 "$conn" "$conn --op write --inject wrong-rkey" &&
		has "$cli_out" "IBV_WC_REM_ACCESS_ERR" && has "$cli_out" "rkey" &&
		# The report's counters; rxe counts no remote access errors, and says so.
		has "$cli_out" "port counters (" &&
		has "$cli_out" "IBV_WC_REM_ACCESS_ERR: the peer's MR lacks the access flag" &&
		has "$cli_out" "none of the counters that tell of it moved on"
		[ "$took" -le $((25 * slow)) ] || { echo "FAIL: took ${took}s"; fails=$((fails + 1)); }
	done
	# The server withholds the remote access flag: READ refused by its HCA.
	rc_pair 1 1 "--inject no-access" "--op read" &&
	has "$cli_out" "IBV_WC_REM_ACCESS_ERR" && has "$cli_out" "access flag"
	# Just past the end of the exposed buffer.
	rc_pair 1 1 "" "--op read --inject outside" && has "$cli_out" "IBV_WC_REM_ACCESS_ERR"
	# The server only serves what it was told to.
	rc_pair 1 1 "--op read" "--op write" && has "$cli_out" "serves only read"
	# A client asking for more than the server exposes.
	rc_pair 1 1 "-s 4k" "-s 8k --op write" && has "$cli_out" "exposes 4096 bytes"
	for conn in "" "--cm"; do
		rc_pair 1 1 "$conn -s 4k" "$conn -s 8k --op read" && has "$cli_out" "exposes 4096"
	done

	# Device memory: rxe has none. dm is refused plainly; auto falls back.
	run 1 "$RDMAKIT" rc --server --mem dm -p "$PORT"
	has "$err" "no device memory (max_dm_size 0)"
	rc_pair 0 0 "--mem auto" "--op all" && has "$srv_out" "server memory: auto chose" &&
		has "$srv_out" "has no device memory" &&
		if grep -q "error:" "$srv_out"; then
			echo "FAIL: --mem auto logged an error while falling back as asked:"
			grep "error:" "$srv_out" | sed 's/^/  | /'
			fails=$((fails + 1))
		fi

	# A client started before its server connects once the server is up.
	for conn in "" "--cm"; do
		PORT=$((PORT + 1))
		"$RDMAKIT" rc "$IP" -p "$PORT" $conn --op write >"$cli_out" 2>&1 &
		cpid=$!
		sleep 2
		"$RDMAKIT" rc --server -p "$PORT" $conn --wait 20 >"$srv_out" 2>&1
		gs=$?
		wait "$cpid"
		gc=$?
		if [ "$gs" -ne 0 ] || [ "$gc" -ne 0 ]; then
			echo "FAIL: late server $conn: server $gs client $gc"
			cat "$srv_out" "$cli_out"
			fails=$((fails + 1))
		else
			echo "ok: client started 2 s before its server ($conn) connected"
		fi
	done
	# No server at all: the client gives up in bounded time and says so.
	for conn in "" "--cm"; do
		PORT=$((PORT + 1))
		start=$(date +%s)
		run 1 "$RDMAKIT" rc "$IP" -p "$PORT" $conn -t 3
		has "$err" "gave up"
		took=$(($(date +%s) - start))
		[ "$took" -le $((20 * slow)) ] ||
			{ echo "FAIL: gave up after ${took}s"; fails=$((fails + 1)); }
	done

	# A port or GID the device lacks (issue 35): servers and clients of the
	# TCP exchange refuse at once, before listening or connecting, naming
	# it; they did wait for a client (a client: for the whole timeout).
	for case in "rc --server -i 2|has no port 2" "bench --server -g 99|has no GID at index 99" \
		"ping --proto pingpong --server -i 2|has no port 2" \
		"rc --server --clients 2 -g 99|has no GID at index 99" \
		"rc $IP -g 99|has no GID at index 99" "ping $IP -i 2|has no port 2"; do
		cmd=${case%%|*} what=${case#*|}
		PORT=$((PORT + 1))
		start=$(date +%s)
		# shellcheck disable=SC2086 # the words of the command
		run 1 timeout 90 "$RDMAKIT" $cmd -p "$PORT" --timeout 60
		has "$err" "$what"
		lacks "$out" "waiting for"
		took=$(($(date +%s) - start))
		# (well under the 60 s a server that waited would take)
		[ "$took" -le $((slow > 1 ? 40 : 20)) ] ||
			{ echo "FAIL: '$cmd' took ${took}s"; fails=$((fails + 1)); }
	done

	# Garbled and truncated exchange messages, both directions: a fake
	# server sends KIND, and the client says WHAT.
	for case in "garbage|bad exchange message" "truncated|in the middle of a message"; do
		kind=${case%%|*} what=${case#*|}
		PORT=$((PORT + 1))
		"$PY" "$(dirname "$0")/fake_peer.py" serve "$PORT" "$kind" >"$srv_out" 2>&1 &
		fpid=$!
		wait_for "$srv_out" "listening on port" 30
		run 1 "$RDMAKIT" rc "$IP" -p "$PORT" -t 5
		has "$err" "$what"
		wait "$fpid"
	done
	for kind in garbage oversized text; do
		PORT=$((PORT + 1))
		"$RDMAKIT" rc --server -p "$PORT" --wait 20 >"$srv_out" 2>&1 &
		spid=$!
		"$PY" "$(dirname "$0")/fake_peer.py" connect "$IP" "$PORT" "$kind"
		wait "$spid"
		gs=$?
		if [ "$gs" -ne 1 ] || ! grep -q "bad exchange message" "$srv_out"; then
			echo "FAIL: server fed $kind exited $gs:"
			cat "$srv_out"
			fails=$((fails + 1))
		else
			echo "ok: server refused a $kind exchange message: $(grep -m1 'bad exchange' "$srv_out")"
		fi
	done
}

# Device memory served to the client for every operation. Only where the
# device has some: elsewhere (rxe: max_dm_size 0) this exits 77, skipped.
dm() {
	"$RDMAKIT" devices --json >"$out" 2>"$err" || { echo "FAIL: devices"; exit 1; }
	dm_size=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][0]["max_dm_size"])' "$out")
	if [ "$dm_size" -eq 0 ]; then
		echo "SKIP: the device has no device memory (max_dm_size 0), so --mem dm cannot be exercised here"
		exit 77
	fi
	for conn in "" "--cm"; do
		for op in send write write-imm read fetch-add cmp-swap all; do
			rc_pair 0 0 "$conn --mem dm -s 4k" "$conn --op $op -s 4k" &&
			has "$srv_out" "device memory"
		done
	done
}

$WHAT
finish
