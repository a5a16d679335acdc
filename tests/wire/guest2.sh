#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Guest 2 (198.18.0.2) of the wire test: one `rdmakit rc` client per case of
# cases.sh against guest 1, one after another. Each client keeps retrying
# until its server listens (the servers start once the capture runs).
# With MODE iwarp: the iWARP cases over RDMA CM, and nothing after them.
# Usage (inside `scripts/softroce run2`): guest2.sh RDMAKIT WORKDIR [roce|iwarp]
# Writes WORKDIR/CASE.client{,.rc}.
RDMAKIT=$1 W=$2 MODE=${3:-roce}
. "$(dirname "$0")/cases.sh"
PEER=${RDMAKIT_SOFTROCE_PEER:-198.18.0.1}
wire_mode "$MODE"

i=0
echo "$CASES" | while IFS="|" read -r name _ cargs _; do
	[ -n "$name" ] || continue
	i=$((i + 1))
	# The first client also waits for the guest 1 boot and capture start.
	# shellcheck disable=SC2086 # cargs is a word list by design
	"$RDMAKIT" rc "$PEER" -p $((PORT + i)) -t 60 $CM $cargs >"$W/$name.client" 2>&1
	rc=$?
	echo $rc >"$W/$name.client.rc"
	echo "wire: client for $name exited $rc"
done
[ "$MODE" = roce ] || exit 0

# The traffic cases, one after another (their time noted for the record).
t0=$(date +%s.%N)
j=0
echo "$WIRE_TRAFFIC_CASES" | while IFS="|" read -r name _ cargs _; do
	[ -n "$name" ] || continue
	j=$((j + 1))
	# shellcheck disable=SC2086 # cargs is a word list by design
	"$RDMAKIT" rc "$PEER" -p $((WIRE_TRAFFIC_PORT + j)) -t 60 $cargs >"$W/$name.client" 2>&1
	echo $? >"$W/$name.client.rc"
	echo "wire: client for $name exited $(cat "$W/$name.client.rc")"
done
awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "wire: the traffic cases took %.1f s\n", b - a }'

# The peer killed mid-transfer: --retry 1, since rxe retries forever at 7.
# Also noted: when the WRITE started (stdout line-buffered, polled) and so how
# long the error took after it.
t0=$(date +%s)
stdbuf -oL "$RDMAKIT" rc "$PEER" -p "$WIRE_KILL_PORT" -t 90 --op write -s 64M --retry 1 \
	>"$W/peer-killed.client" 2>&1 &
cpid=$!
tw=
while kill -0 "$cpid" 2>/dev/null; do
	[ -z "$tw" ] && grep -q 'running WRITE' "$W/peer-killed.client" && tw=$(date +%s.%N)
	sleep 0.2
done
wait "$cpid"
echo $? >"$W/peer-killed.client.rc"
t1=$(date +%s.%N)
echo $((${t1%.*} - t0)) >"$W/peer-killed.client.took"
[ -n "$tw" ] && awk -v a="$tw" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >"$W/peer-killed.client.after-write"
echo "wire: client for peer-killed exited $(cat "$W/peer-killed.client.rc") after $(cat "$W/peer-killed.client.took") s"

# Mixed MTU (cases.sh), jumbo here: rdma-core's rping client (once guest 1's
# rping server listens: rping does not retry), an rc client, an rc server.
DEV=${RDMAKIT_SOFTROCE_NETDEV:-eth0}
ip link set "$DEV" mtu 9000 || echo "wire: cannot set $DEV's MTU to 9000"
n=0
until grep -q 'waiting for an rping client' "$W/mtu-rping.server" 2>/dev/null || [ $n -ge 600 ]; do
	sleep 0.1
	n=$((n + 1))
done
rping -c -a "$PEER" -p "$WIRE_MTU_PORT" -C 3 -S 8000 -v >"$W/mtu-rping.client" 2>&1
echo $? >"$W/mtu-rping.client.rc"
"$RDMAKIT" rc "$PEER" --cm -p $((WIRE_MTU_PORT + 1)) -t 60 --op all -s 8192 >"$W/mtu-bigger.client" 2>&1
echo $? >"$W/mtu-bigger.client.rc"
"$RDMAKIT" rc --server --cm -p $((WIRE_MTU_PORT + 2)) --wait 60 -t 20 -s 8192 >"$W/mtu-smaller.server" 2>&1
echo $? >"$W/mtu-smaller.server.rc"
ip link set "$DEV" mtu 1500
echo "wire: mixed MTU done"
