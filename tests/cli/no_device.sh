#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Without a device, every client and server fails at once (issue 35): the
# device is opened and checked before anything listens or connects, so no
# server says it waits for a client, no client tries a server for its whole
# timeout, and the error names the device. Runs on the host (label unit).
# Each case with -d naming a device that does not exist runs on any host;
# those without -d only where the host has no RDMA device (else left out,
# with a note naming the host's devices; the -d cases still run).
# Usage: no_device.sh RDMAKIT
RDMAKIT=$1
. "$(dirname "$0")/../rdma/lib.sh"
PORT=$((PORT + 1))
# Each takes some 10 to 60 ms on an idle host; the bound leaves room for a
# loaded 2-core machine (1.5 s seen with a load average of 12) and a
# sanitized build, and still catches what it is for: a client trying its
# server for the 10 s of its timeout, a server waiting for a client.
LIMIT_MS=${RDMAKIT_NODEV_LIMIT_MS:-2000}
NODEV=rk_nodev9

ms() {
	echo $(($(date +%s%N) / 1000000))
}

# fast_fail WANT_ERR CMD...: CMD exits 1 within LIMIT_MS, stderr has
# WANT_ERR (a grep -E pattern), nothing says it waits for a client.
fast_fail() {
	want_err=$1
	shift
	t0=$(ms)
	run 1 timeout 15 "$@" </dev/null
	dt=$(($(ms) - t0))
	if [ "$dt" -ge "$LIMIT_MS" ]; then
		echo "FAIL: '$*' took $dt ms, not under $LIMIT_MS"
		fails=$((fails + 1))
	fi
	if ! grep -qE -- "$want_err" "$err"; then
		echo "FAIL: '$*': expected /$want_err/ on stderr, got:"
		sed 's/^/  | /' "$err" | head -5
		fails=$((fails + 1))
	fi
	lacks "$out" "waiting for"
	lacks "$err" "waiting for"
	lacks "$err" "is the server running"
}

# What the library says when it finds no device: no RDMA in the kernel at
# all, none found, or not the one named; RDMA CM without its device.
NONE='cannot list RDMA devices|no RDMA device found|no RDMA device named'
CM='RDMA CM event channel: No such device|no RDMA device|cannot list RDMA devices'
NAMED="cannot list RDMA devices|no RDMA device named '$NODEV'"

# The TCP exchange's servers and clients, one device named that is not there.
for server in "rc --server" "rc --server --persist" "rc --server --clients 2" \
	"ping --server" "ping --server --persist" "ping --proto pingpong --server" \
	"ping --proto pingpong --transport uc --server" "bench --server" "bench --server --persist" \
	"bench --server --clients 2" "bench --server --csv" "ud --server"; do
	# shellcheck disable=SC2086 # the words of the command
	fast_fail "$NAMED" "$RDMAKIT" $server -d "$NODEV" -p "$PORT"
done
for client in rc ping "ping --proto pingpong" bench "bench -T ud -o send" ud; do
	# shellcheck disable=SC2086
	fast_fail "$NAMED" "$RDMAKIT" $client 127.0.0.1 -d "$NODEV" -p "$PORT"
done

if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	echo "note: this host has RDMA devices ($(ls /sys/class/infiniband | tr '\n' ' '));" \
		"the cases without -d are left out"
else
	for server in "rc --server" "rc --server --persist" "rc --server --clients 2" \
		"ping --server" "ping --server --persist" "ping --proto pingpong --server" \
		"bench --server" "bench --server --persist" "bench --server --clients 2" \
		"ud --server"; do
		# shellcheck disable=SC2086
		fast_fail "$NONE" "$RDMAKIT" $server -p "$PORT"
	done
	for client in rc ping "ping --proto pingpong" bench ud; do
		# shellcheck disable=SC2086
		fast_fail "$NONE" "$RDMAKIT" $client 127.0.0.1 -p "$PORT"
	done
	# RDMA CM finds the device by address: its own message, as quickly.
	for cm in "rc --server --cm" "bench --server --cm" "ping --server --cm" \
		"ping --proto rping -s" "memserver" "rc --cm 127.0.0.1" "bench --cm 127.0.0.1" \
		"ping --proto rping -c -a 127.0.0.1"; do
		# shellcheck disable=SC2086
		fast_fail "$CM" "$RDMAKIT" $cm -p "$PORT"
	done
fi

finish
