#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# --mem and --odp of rc, bench and memserver as a user runs them: huge pages
# from the kernel's pool (reserved here, as root, and put back after) moving
# checked data; the message when the pool is empty or short; memfd; what
# auto chose; a locked-memory limit too low; on-demand paging refused by
# name where the device has none.
# (Sessions of memserver in huge pages: test_memserver. Device memory:
# cli_rc_dm.) Usage: cli_mem.sh RDMAKIT
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"

IP=${RDMAKIT_TEST_IP:-198.18.0.1}
PORT=$((20000 + $$ % 10000))
srv_out=$(mktemp) cli_out=$(mktemp)
POOL=/proc/sys/vm/nr_hugepages
saved=$(cat "$POOL")
trap 'echo "$saved" >"$POOL"; rm -f "$out" "$err" "$srv_out" "$cli_out"' EXIT

rc_pair() {
	pair "$1" "$2" "$RDMAKIT rc --server -p @PORT@ --wait 30 $3" "$RDMAKIT rc $IP -p @PORT@ $4"
}
bench_pair() {
	pair "$1" "$2" "$RDMAKIT bench --server -p @PORT@ --wait 30 $3" \
		"$RDMAKIT bench $IP -p @PORT@ --size 64k --count 100 $4"
}
# pool N: reserve N huge pages (the kernel may give fewer when memory is short).
pool() {
	echo "$1" >"$POOL" || { echo "FAIL: cannot write $POOL (tests run as root)"; exit 1; }
	got=$(cat "$POOL")
	[ "$got" -eq "$1" ] || { echo "FAIL: asked for $1 huge pages, the kernel gave $got"; exit 1; }
}

# The pool empty: each command refuses before it connects, saying what is
# free and how to reserve pages.
pool 0
run 1 "$RDMAKIT" rc --server --mem hugepage -p "$PORT" --wait 5 &&
	has "$err" "the pool has 0 of 0 huge pages of" && has "$err" "sysctl vm.nr_hugepages=1"
run 1 "$RDMAKIT" bench "$IP" --mem hugepage -p "$PORT" && has "$err" "sysctl vm.nr_hugepages="
run 1 "$RDMAKIT" memserver --mem memfd-huge -p "$PORT" && has "$err" "the pool has 0 of 0"
# auto with no pages to be had: host memory, and why. (Under ASan/UBSan the
# pairs whose code the others and test_region run are left to the plain run.)
plain_only && rc_pair 0 0 "--mem auto" "--op write" && has "$srv_out" "server memory: auto chose host:" &&
	has "$srv_out" "0 of 0 huge pages" && has "$srv_out" "exposing 4096 bytes of host memory"

# 8 pages of 2 MiB: 16 MiB of the guest's memory.
avail=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
[ "$avail" -gt 262144 ] || { echo "FAIL: the guest has only $avail kB available"; exit 1; }
pool 8
# A request bigger than the pool: the pages it takes and what there is.
run 1 "$RDMAKIT" rc --server --mem hugepage -s 32M -p "$PORT" --wait 5 &&
	has "$err" "33554432 bytes take 16 pages of 2048 kB" && has "$err" "8 of 8 huge pages"
# Checked data both ways in huge pages: every rc step, and a bench run
# whose client's auto finds room in the pool.
rc_pair 0 0 "--mem hugepage -s 64k" "--mem hugepage -s 64k --op all" &&
	has "$srv_out" "exposing 65536 bytes of huge pages" &&
	has "$cli_out" "from 65536 bytes of huge pages" &&
	has "$cli_out" "5 steps done, every byte checked: OK"
bench_pair 0 0 "--mem hugepage" "--mem auto --json" &&
	has "$srv_out" "memory    huge pages" && has "$srv_out" "every size checked: OK" &&
	has "$cli_out" '"memory":"hugepage"' && has "$cli_out" '"memory_chosen_by_auto":true' &&
	has "$cli_out" '"memory_why":"auto chose hugepage: this command cannot use device memory; ' &&
	has "$cli_out" '"result":"ok"'
# memfd (and memfd-huge): checked data in shared memfd mappings.
plain_only && rc_pair 0 0 "--mem memfd --json" "--mem memfd-huge --op read" &&
	has "$cli_out" "from 4096 bytes of memfd huge pages" &&
	has "$srv_out" '"memory":"memfd"' && has "$srv_out" '"memory_chosen_by_auto":false' &&
	has "$srv_out" '"result":"ok"'
pool "$saved"

# Locked memory: a user without CAP_IPC_LOCK under a 64 kB limit cannot
# register the buffer. That side says to look at ulimit -l; the other names
# its failure once (not "...: ENOMEM text (ENOMEM text)").
low="prlimit --memlock=65536:65536 setpriv --reuid=65534 --regid=65534 --clear-groups"
pair 1 1 "$RDMAKIT rc --server -p @PORT@ --wait 30" "$low $RDMAKIT rc $IP -p @PORT@ -s 1M" &&
	has "$cli_out" "Cannot allocate memory (locked-memory limit too low? see ulimit -l)" &&
	has "$srv_out" "gave up: the client could not set up (Cannot allocate memory)"
pair 1 1 "$low $RDMAKIT bench --server -p @PORT@ --wait 30" \
	"$RDMAKIT bench $IP -p @PORT@ --size 1M --count 10" &&
	has "$srv_out" "(locked-memory limit too low? see ulimit -l)" &&
	has "$cli_out" "gave up: the server could not set up (Cannot allocate memory)"

# On-demand paging: used where the device reports it, refused by name where
# not (rxe on Linux 6.1 has none).
if "$RDMAKIT" devices --json | grep -q '"odp":true'; then
	rc_pair 0 0 "--odp" "--odp --op all" && has "$cli_out" "(on-demand paging)"
else
	why="has no on-demand paging (odp_caps.general_caps lacks IBV_ODP_SUPPORT)"
	run 1 "$RDMAKIT" rc --server --odp -p "$PORT" --wait 5 && has "$err" "$why"
	run 1 "$RDMAKIT" rc "$IP" --odp -p "$PORT" && has "$err" "$why"
	run 1 "$RDMAKIT" bench "$IP" --odp -p "$PORT" && has "$err" "$why"
	run 1 "$RDMAKIT" memserver --odp -p "$PORT" && has "$err" "$why"
fi
finish
