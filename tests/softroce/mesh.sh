#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# scripts/softroce mesh: three guests on one hub. In one boot: Open MPI ranks
# start on all three without ssh, one per guest in rank order (an MPI program
# gathers the host names); RDMAKIT_GUEST_EXEC runs commands on a named guest
# with their output and status (and -t stops them); every guest has rxe0
# ACTIVE on eth0; netem on guest 3 delays what crosses the hub to it; rping
# (RDMA CM, RC send/RDMA read/write) from guest 1 to guest 3 works and guest
# 3's rxe counts the packets it received; the command's status (3) is the
# runner's. Then the bounded failure paths: guests that cannot boot in time,
# bad N, no command.
SOFTROCE=$1
HELLO_SRC=$2
fails=0
check() { # check WHAT WANT GOT
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: want [$2], got [$3]"; fails=$((fails + 1)); fi
}
# The guests see the cwd (ctest's build directory) at the same path.
dir=$(mktemp -d "$PWD/.mesh-check.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
if ! command -v mpicc >/dev/null; then
	echo "FAIL: mpicc not found: install openmpi-bin libopenmpi-dev (RDMAKIT_MESH_PACKAGES in scripts/deps.sh)"
	exit 1
fi
mpicc -O2 -o "$dir/mesh_hello" "$HELLO_SRC" || { echo "FAIL: mpicc $HELLO_SRC"; exit 1; }

cat >"$dir/guest1.sh" <<'GUEST'
dir=$1
x=$RDMAKIT_GUEST_EXEC
echo "hosts=$RDMAKIT_MESH_HOSTS"
echo "self=$(hostname) $RDMAKIT_SOFTROCE_ADDR"
$RDMAKIT_MPIRUN -np 3 "$dir/mesh_hello" >"$dir/mpi.out" 2>"$dir/mpi.err"
echo "mpirun=$?"
sed 's/^/mpi: /' "$dir/mpi.out"
sed 's/^/mpi stderr: /' "$dir/mpi.err" >&2
for g in 1 2 3; do
	echo "g$g link=$($x $g 'rdma link show rxe0/1' | grep -o 'state [A-Z]* .* netdev eth0')"
	echo "g$g ibv=$($x $g 'ibv_devices' | awk '$1 == "rxe0" { n++ } END { print n + 0 }')"
done
echo "g3 addr=$($x 3 'ip -br addr show dev eth0' | grep -o '198[0-9.]*/24')"
$x guest2 'echo out $RDMAKIT_SOFTROCE_GUEST; echo err >&2; exit 5' >"$dir/o" 2>"$dir/e"
echo "exec rc=$? out=$(cat "$dir/o") err=$(cat "$dir/e")"
$x 9 true 2>/dev/null
echo "exec bad guest rc=$?"
t0=$(date +%s)
$x -t 2 198.18.0.2 'sleep 100' 2>/dev/null
rc=$?
echo "exec -t rc=$rc stopped=$([ $(($(date +%s) - t0)) -lt 30 ] && echo yes)"
$x 3 'modprobe sch_netem && tc qdisc add dev eth0 root netem delay 40ms'
echo "netem add=$?"
rtt=$(busybox ping -c 2 198.18.0.3 | sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' | tail -n 1)
echo "netem delay seen=$(awk -v t="$rtt" 'BEGIN { print (t >= 40) ? "yes" : "no " t }')"
$x 3 'tc qdisc del dev eth0 root'
echo "netem del=$?"
cnt=/sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts
before=$($x 3 "cat $cnt")
$x 3 'rping -s -a 198.18.0.3 -C 3 -v' >"$dir/srv.out" 2>&1 &
srv=$!
# rping does not retry: again until guest 3's server listens, for up to
# 150 s (under a whole-suite load starting it on guest 3 took over 30 s).
i=0
end=$(($(date +%s) + 150))
until rping -c -a 198.18.0.3 -C 3 -v >"$dir/cli.out" 2>&1; do
	i=$((i + 1))
	[ "$(date +%s)" -lt $end ] || break
	sleep 1
done
echo "rping client tries=$((i + 1)) data=$(grep -c 'ping data' "$dir/cli.out")"
wait $srv
echo "rping server=$? data=$(grep -c 'server ping data' "$dir/srv.out")"
after=$($x 3 "cat $cnt")
echo "rxe packets into guest 3=$([ $((after - before)) -gt 0 ] && echo yes || echo "no ($before -> $after)")"
exit 3
GUEST

start=$(date +%s)
out=$("$SOFTROCE" mesh 3 --timeout 600 -- bash "$dir/guest1.sh" "$dir" 2>"$dir/stderr" </dev/null)
rc=$?
echo "mesh 3 took $(($(date +%s) - start)) s; its output:"
echo "$out" | sed 's/^/  | /'
sed 's/^/  2| /' "$dir/stderr"
line() { echo "$out" | grep "^$1" | head -n 1; }
check "the command's status (3) is the runner's" 3 $rc
check "RDMAKIT_MESH_HOSTS" "hosts=198.18.0.1,198.18.0.2,198.18.0.3" "$(line hosts=)"
check "the command runs on guest 1" "self=guest1 198.18.0.1" "$(line self=)"
check "mpirun across the guests without ssh" "mpirun=0" "$(line mpirun=)"
for r in 0 1 2; do
	check "rank $r runs on guest $((r + 1))" "mpi: rank $r of 3 on guest$((r + 1))" "$(line "mpi: rank $r ")"
done
for g in 1 2 3; do
	check "guest $g: rxe0 ACTIVE on eth0" "g$g link=state ACTIVE physical_state LINK_UP netdev eth0" "$(line "g$g link=")"
	check "guest $g: ibv_devices lists rxe0" "g$g ibv=1" "$(line "g$g ibv=")"
done
check "guest 3's address" "g3 addr=198.18.0.3/24" "$(line "g3 addr=")"
check "guest-exec: status, stdout, stderr, env" "exec rc=5 out=out 2 err=err" "$(line "exec rc=")"
check "guest-exec: no guest 9 (exit 2)" "exec bad guest rc=2" "$(line "exec bad guest")"
check "guest-exec -t 2 stops a command (exit 124)" "exec -t rc=124 stopped=yes" "$(line "exec -t")"
check "netem loads and applies on guest 3" "netem add=0" "$(line "netem add=")"
check "the hub carries netem's delay" "netem delay seen=yes" "$(line "netem delay")"
check "netem removed" "netem del=0" "$(line "netem del=")"
check "rping guest 1 -> guest 3: 3 pings" "data=3" "$(line "rping client" | grep -o 'data=.*')"
check "rping server on guest 3" "rping server=0 data=3" "$(line "rping server")"
check "guest 3's rxe received RoCE packets" "rxe packets into guest 3=yes" "$(line "rxe packets")"
check "guest 1 reported all guests up" yes \
	"$(grep -q '3 guests up, rxe0 ACTIVE on each, hub checked' "$dir/stderr" && echo yes)"

# Guests that do not boot in time: a clear message and 125, no hang.
start=$(date +%s)
out=$(RDMAKIT_SOFTROCE_BOOT_TIMEOUT=1 "$SOFTROCE" mesh 3 -- true 2>&1 </dev/null)
rc=$?
check "a guest that does not boot: exit 125" 125 $rc
check "a guest that does not boot: named" yes "$(echo "$out" | grep -q 'guest 1 did not boot within 1 s' && echo yes)"
check "a guest that does not boot: no hang" yes "$([ $(($(date +%s) - start)) -lt 60 ] && echo yes)"
out=$("$SOFTROCE" mesh 1 -- true 2>&1 </dev/null)
check "mesh 1 is refused (125)" 125 $?
check "mesh 1: the message says why" yes "$(echo "$out" | grep -q 'number of guests must be 2 to 8' && echo yes)"
out=$("$SOFTROCE" mesh 3 2>&1 </dev/null)
check "mesh without a command is refused (125)" 125 $?
[ $fails -eq 0 ] && echo "all checks passed"
exit $fails
