#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit-mesh on N Soft-RoCE guests (scripts/softroce mesh), faults injected
# and removed between runs, all in one boot:
#   clean              exit 0, every pair reachable, full matrices, no outlier
#   mtu                the last guest's netdev at MTU 9000 (RoCE 4096), the
#                      others' at 1500: every pair reachable, that node a
#                      config outlier for its port MTU, no other
#   netem delay        on the last guest: that node flagged for latency, no other
#   netem loss         from guest 1 towards the last guest only (prio + u32
#                      filter on the destination): outliers on that pair only,
#                      its re-test counters naming packets out of sequence
#   rdma link delete   rxe0 gone on the last guest: its row and column
#                      unreachable, the node named, exit 4
# The host side (host mode) makes sure sch_prio and cls_u32 are at hand (taken
# from the cached kernel package: the guests' on-demand modules lack them) and
# boots the guests; the guest side (guest mode) runs the scenarios.
# usage: fabric.sh host SOFTROCE RDMAKIT-MESH CHECK.PY KMOD-DIR [N]
#        fabric.sh guest RDMAKIT-MESH CHECK.PY KMOD-DIR N
set -u
mode=$1
shift

if [ "$mode" = host ]; then
	SOFTROCE=$1 MESH=$2 CHECK=$3 KMOD=$4 N=${5:-3}
	if [ ! -r "$KMOD/sch_prio.ko" ] || [ ! -r "$KMOD/cls_u32.ko" ]; then
		cache=${RDMAKIT_SOFTROCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdmakit/softroce}
		kver=$(cut -d' ' -f1 "$cache/current" 2>/dev/null)
		deb=$(ls "$cache"/dl/linux-image-"$kver"_*.deb 2>/dev/null | head -n 1)
		if [ -z "$kver" ] || [ -z "$deb" ]; then
			echo "fabric.sh: no cached kernel package in $cache/dl (run scripts/softroce once)"
			exit 1
		fi
		mkdir -p "$KMOD.tmp" || exit 1
		dpkg --fsys-tarfile "$deb" | tar -x -C "$KMOD.tmp" --wildcards \
			"*/$kver/kernel/net/sched/sch_prio.ko*" "*/$kver/kernel/net/sched/cls_u32.ko*" ||
			{ echo "fabric.sh: sch_prio/cls_u32 not found in $deb"; exit 1; }
		mkdir -p "$KMOD" && find "$KMOD.tmp" -name '*.ko*' -exec mv {} "$KMOD/" \;
		rm -rf "$KMOD.tmp"
		for f in "$KMOD"/*.ko.xz; do [ -e "$f" ] && xz -d -f "$f"; done
	fi
	exec "$SOFTROCE" mesh "$N" --timeout 2400 -- sh "$0" guest "$MESH" "$CHECK" "$KMOD" "$N"
fi

MESH=$1 CHECK=$2 KMOD=$3 N=$4
LAST=$N
LASTR=$((N - 1))
T=$(mktemp -d /tmp/mesh-fabric.XXXXXX)
fails=0
# Debian's python3 (with python3-jsonschema): a version manager's shim first
# in PATH costs seconds a start in the emulated guest.
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
EXEC=$RDMAKIT_GUEST_EXEC
# TCG guests sharing two cores: a long RC ACK timeout (1 s) keeps slow ACKs
# from passing for losses; p50 latency flagged above 3x the reference (the
# clean spread between identical guests here is about 1.3x). Bandwidth
# between identical TCG guests varies up to 20x with the host's load, so it
# is graded only below 1% of the reference here (a lossy link, each loss
# costing the 1 s ACK timeout, falls far below that).
COMMON="-e -n 30 --bw-iters 10 --size 16k --window 4 --ack-timeout 18 --lat-high 300 --bw-low 1"
COMMON="$COMMON ${RDMAKIT_MESH_TEST_ARGS:-}"

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run NAME EXIT ARGS...
run() {
	name=$1 want=$2
	shift 2
	start=$(date +%s)
	$RDMAKIT_MPIRUN -np "$N" "$MESH" $COMMON --json-file "$T/$name.json" --svg "$T/$name.svg" "$@" \
		>"$T/$name.out" 2>&1
	rc=$?
	echo "--- $name: exit $rc after $(($(date +%s) - start)) s"
	grep -v '^\(--\|Primary job\|a non-zero\|mpirun detected\|the job to\|  Process name\|  Exit code\|$\)' \
		"$T/$name.out" | sed 's/^/  | /'
	[ "$rc" -eq "$want" ] || { fail "$name: exit $rc, expected $want"; return 1; }
	# RDMAKIT_MESH_KEEP=DIR keeps each run's JSON, SVG and output
	[ -n "${RDMAKIT_MESH_KEEP:-}" ] && cp "$T/$name.json" "$T/$name.svg" "$T/$name.out" \
		"$RDMAKIT_MESH_KEEP/"
	return 0
}

check() {
	name=$1
	shift
	"$PY" "$CHECK" "$T/$name.json" "$N" "$@" || fail "$name: JSON check"
}

guest() { # I COMMAND: run on guest I, fail loudly if it fails
	$EXEC -t 60 "$1" "$2" || fail "on guest $1: $2"
}

run clean 0 && check clean --clean --exit 0

# Jumbo frames on one node only: every pair still connects (at the smaller
# MTU), and that node is named for its configuration.
guest "$LAST" 'ip link set eth0 mtu 9000 && sleep 2'
run mtu 1 --stages reach,latency &&
	check mtu --stages reach,latency --only --expect "config:port_mtu:$LASTR" \
		--reason-contains "guest$LAST (rank $LASTR): port MTU 4096 where $((N - 1)) of $N nodes have 1024" --exit 1
guest "$LAST" 'ip link set eth0 mtu 1500 && sleep 2'

# 100 ms: 50 ms was not flagged once when a busy host made the fabric's best
# pair 3x slower too (p50 16 ms, the delayed node's pairs 32-35 ms: 2x).
guest "$LAST" 'modprobe sch_netem && tc qdisc add dev eth0 root netem delay 100ms'
run delay 1 --stages reach,latency &&
	check delay --stages reach,latency --only --expect "latency:latency_p50:$LASTR" \
		--reason-contains "guest$LAST (rank $LASTR): p50 latency to every peer is high" --exit 1
guest "$LAST" 'tc qdisc del dev eth0 root'

guest 1 "modprobe sch_netem; insmod $KMOD/sch_prio.ko; insmod $KMOD/cls_u32.ko; tc qdisc add dev eth0 root handle 1: prio &&
	tc qdisc add dev eth0 parent 1:3 handle 30: netem loss 10% &&
	tc filter add dev eth0 parent 1:0 protocol ip prio 1 u32 match ip dst 198.18.0.$LAST/32 flowid 1:3"
run loss 1 && check loss --only-pair "0:$LASTR" --counters-contains "packets out of sequence" --exit 1
guest 1 'tc -s qdisc show dev eth0; tc qdisc del dev eth0 root'

guest "$LAST" 'rdma link delete rxe0'
run unreachable 4 && check unreachable --unreachable-node "$LASTR" \
	--reason-contains "guest$LAST (rank $LASTR) is unreachable" --exit 4

rm -rf "$T"
[ $fails -eq 0 ] && echo "fabric: all passed" || echo "fabric: $fails failed"
[ $fails -eq 0 ]
