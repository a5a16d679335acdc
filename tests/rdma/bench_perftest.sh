#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit bench --proto perftest against perftest's own ib_write_bw -R, both
# roles: each pair runs RDMA WRITE bandwidth to the end, both tools report,
# and the reports agree (bytes and iterations; bandwidth above zero).
# Skipped (77) without perftest or an RDMA device. Usage: bench_perftest.sh RDMAKIT
RDMAKIT=$1
PORT_BASE=22000
. "$(dirname "$0")/lib.sh"

pt_out=$(mktemp) rk_out=$(mktemp)
trap 'rm -f "$out" "$err" "$pt_out" "$rk_out"' EXIT

if ! command -v ib_write_bw >/dev/null 2>&1; then
	echo "SKIP: needs perftest's ib_write_bw (Debian: apt install perftest)"
	exit 77
fi
DEV=${RDMAKIT_TEST_DEV:-}
if [ -z "$DEV" ]; then
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] && DEV=$(basename "$d") && break
	done
fi
if [ -z "$DEV" ]; then
	echo "SKIP: needs an RDMA device; this machine has none"
	exit 77
fi
echo "device $DEV, $(ib_write_bw --version 2>&1 | head -1)"
SIZE=65536 N=200
TMO="timeout ${BENCH_PERFTEST_TIMEOUT:-120}"

# listening FILE TEXT PID: wait until FILE shows TEXT (the server PID
# listens), by the clock (a process start costs up to a second in the
# emulated guest), 40 s, or until PID is gone.
listening() {
	end=$(($(date +%s) + 40))
	until grep -qF -- "$2" "$1" 2>/dev/null; do
		if [ "$(date +%s)" -gt "$end" ] || ! kill -0 "$3" 2>/dev/null; then
			echo "FAIL: no '$2' from the server (gone, or 40 s); got:"
			sed 's/^/  | /' "$1" | head -20
			fails=$((fails + 1))
			return 1
		fi
		sleep 0.5
	done
}

# pt_row FILE: perftest's report row "SIZE ITERS PEAK AVG RATE" (the first
# line whose first two fields are the size and a count).
pt_row() {
	awk -v s="$SIZE" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 5 { print; exit }' "$1"
}

# check_rows WHO_PT PT_ROW WHO_RK RK_ROW: both rows have SIZE and N, and
# average bandwidths above zero.
check_rows() {
	echo "  $1: $2"
	echo "  $3: $4"
	# shellcheck disable=SC2086
	set -- "$1" $2 "$3" $4
	# now: WHO_PT size iters peak avg rate WHO_RK size iters peak avg rate
	if [ "$2" != "$SIZE" ] || [ "$3" != "$N" ] || [ "$8" != "$SIZE" ] || [ "$9" != "$N" ]; then
		echo "FAIL: bytes/iterations: $1 says $2/$3, $7 says $8/$9, want $SIZE/$N"
		fails=$((fails + 1))
		return 1
	fi
	if ! awk -v a="$5" -v b="${11}" 'BEGIN { exit !(a > 0 && b > 0) }'; then
		echo "FAIL: average bandwidth: $1 $5 MB/s, $7 ${11} MB/s (want both above 0)"
		fails=$((fails + 1))
		return 1
	fi
	echo "ok: $SIZE bytes x $N iterations in both reports; $1 $5 MB/s, $7 ${11} MB/s"
}

# pair_end CLIENT_RC SERVER CLIENT RK_TEXT PT_LABEL PT_FILE RK_LABEL RK_FILE:
# the server ($spid) waited for; both must exit 0, rdmakit's output show
# RK_TEXT, and the reports agree (check_rows).
pair_end() {
	rc=$1
	wait $spid
	src=$?
	if [ "$rc" -ne 0 ] || [ $src -ne 0 ]; then
		echo "FAIL: $2 exited $src, $3 $rc"
		show "$5" "$6" 30
		show "$7" "$8" 30
		fails=$((fails + 1))
		return 1
	fi
	echo "ok: $2 / $3 -> 0/0"
	has "$8" "$4"
	check_rows "$5" "$(pt_row "$6")" "$7" "$(pt_row "$8")"
}

# 1. perftest's server, rdmakit's client.
PORT=$((PORT + 1))
# shellcheck disable=SC2086
$TMO stdbuf -oL ib_write_bw -R -d "$DEV" -p $PORT -s $SIZE -n $N >"$pt_out" 2>&1 &
spid=$!
listening "$pt_out" "Waiting for client to connect" $spid
# shellcheck disable=SC2086
$TMO "$RDMAKIT" bench --proto perftest -d "$DEV" -p $PORT -s $SIZE -n $N --timeout 60 "$IP" \
	>"$rk_out" 2>&1
pair_end $? "ib_write_bw -R server" "rdmakit bench --proto perftest client" "rdmakit bench: ok" \
	"ib_write_bw server" "$pt_out" "rdmakit client" "$rk_out"

# 2. rdmakit's server, perftest's client.
PORT=$((PORT + 1))
# shellcheck disable=SC2086
$TMO "$RDMAKIT" bench --server --proto perftest -d "$DEV" -p $PORT -s $SIZE --wait 60 \
	--timeout 60 >"$rk_out" 2>&1 &
spid=$!
listening "$rk_out" "waiting for" $spid
# shellcheck disable=SC2086
$TMO ib_write_bw -R -d "$DEV" -p $PORT -s $SIZE -n $N "$IP" >"$pt_out" 2>&1
pair_end $? "rdmakit bench --proto perftest server" "ib_write_bw -R client" "the client's report" \
	"ib_write_bw client" "$pt_out" "rdmakit server" "$rk_out"
finish
