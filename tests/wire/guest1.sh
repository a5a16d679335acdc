#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Guest 1 (198.18.0.1) of the wire test: capture RoCE v2 (UDP 4791) on the
# wire with dumpcap (tshark's capture engine), and serve each case of
# cases.sh, one `rdmakit rc --server` per case on its own port.
# With MODE iwarp (two siw guests): the iWARP cases of cases.sh instead,
# servers over RDMA CM, the capture on their TCP ports, and nothing after it.
# Usage (inside `scripts/softroce run2`): guest1.sh RDMAKIT WORKDIR [roce|iwarp]
# Writes WORKDIR/capture.pcapng and WORKDIR/CASE.server{,.rc}.
RDMAKIT=$1 W=$2 MODE=${3:-roce}
. "$(dirname "$0")/cases.sh"
DEV=${RDMAKIT_SOFTROCE_NETDEV:-eth0}
wire_mode "$MODE"

# await PID FILE TEXT WHAT: until FILE shows TEXT (up to 60 s) while process
# PID lives; else say WHAT went wrong, show FILE, end PID and the script.
await() {
	n=0
	until grep -q "$3" "$2" 2>/dev/null; do
		if ! kill -0 "$1" 2>/dev/null || [ $n -ge 600 ]; then
			echo "wire: $4:"
			cat "$2"
			kill "$1" 2>/dev/null
			exit 1
		fi
		sleep 0.1
		n=$((n + 1))
	done
}

dumpcap -q -i "$DEV" -f "$FILTER" -w "$W/capture.pcapng" 2>"$W/dumpcap.err" &
cap=$!
# Serve nothing until the capture runs: dumpcap says so on stderr.
await "$cap" "$W/dumpcap.err" 'Capturing on' "dumpcap did not start capturing on $DEV within 60 s"
echo "wire: capturing $FILTER on $DEV into $W/capture.pcapng"

# The traffic cases' servers, started now too (their clients come last).
echo "$TRAFFIC" | {
	j=0
	while IFS="|" read -r name sargs _; do
		[ -n "$name" ] || continue
		j=$((j + 1))
		(
			# shellcheck disable=SC2086 # sargs is a word list by design
			"$RDMAKIT" rc --server -p $((WIRE_TRAFFIC_PORT + j)) --wait 120 -t 20 $sargs >"$W/$name.server" 2>&1
			echo $? >"$W/$name.server.rc"
		) &
	done
	wait
} &
traffic=$!

# All servers at once, each on its own port (the clients come one by one and
# need not wait for a server to start); each records its exit status.
i=0
echo "$CASES" | {
	while IFS="|" read -r name sargs _; do
		[ -n "$name" ] || continue
		i=$((i + 1))
		(
			# shellcheck disable=SC2086 # sargs is a word list by design
			"$RDMAKIT" rc --server -p $((PORT + i)) --wait 120 -t 20 $CM $sargs >"$W/$name.server" 2>&1
			rc=$?
			echo $rc >"$W/$name.server.rc"
			echo "wire: server for $name exited $rc"
		) &
	done
	wait
}

wait "$traffic"
echo "wire: the traffic cases' servers are done"

# The last case's final ACK has left by now (the server saw its step end);
# give the capture a moment, then stop it cleanly so the file is complete.
sleep 1
kill -INT "$cap"
wait "$cap"
rc=$?
echo "wire: dumpcap exited $rc"
[ "$MODE" = roce ] || exit 0

# The peer killed mid-transfer (not captured: 64 MiB is 65536 packets): the
# server process is killed with SIGKILL while the client's WRITE is running.
"$RDMAKIT" rc --server -p "$WIRE_KILL_PORT" -s 64M --wait 60 -t 20 >"$W/peer-killed.server" 2>&1 &
srv=$!
await "$srv" "$W/peer-killed.server" exposing "the peer-killed server never got a client"
sleep 0.3
kill -9 "$srv"
wait "$srv"
echo "wire: server for peer-killed killed with SIGKILL (wait status $?)"

# Mixed MTU (cases.sh), guest 1 at 1024: an rping server, an rc server, and
# a client of guest 2's rc server.
"$RDMAKIT" ping --proto rping -s -a 0.0.0.0 -p "$WIRE_MTU_PORT" -C 3 -S 8000 \
	>"$W/mtu-rping.server" 2>&1
echo $? >"$W/mtu-rping.server.rc"
"$RDMAKIT" rc --server --cm -p $((WIRE_MTU_PORT + 1)) --wait 60 -t 20 -s 8192 >"$W/mtu-bigger.server" 2>&1
echo $? >"$W/mtu-bigger.server.rc"
"$RDMAKIT" rc "${RDMAKIT_SOFTROCE_PEER:-198.18.0.2}" --cm -p $((WIRE_MTU_PORT + 2)) -t 60 --op all \
	-s 8192 >"$W/mtu-smaller.client" 2>&1
echo $? >"$W/mtu-smaller.client.rc"
