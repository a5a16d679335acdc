#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# wire_doctor: `rdmakit doctor HOST` between two Soft-RoCE guests against
# `rdmakit doctor --server` (doctor_guest.sh), then each case checked here:
#   healthy  every check PASS, the local ones (the software device's with
#            its note: no line rate to expect) and the path's (TCP, RDMA CM
#            route, the server, GIDs, MTU, SEND, WRITE, READ, the probe), the
#            verdict line "PASS: RDMA works between", no WARN or FAIL, exit 0;
#            the same in the --json document;
#   dead     a peer address nobody has: FAIL naming TCP to it, exit 1, within
#            20 s;
#   rc-server  an rdmakit rc server on that port: WARN naming it and what it
#            allows, the path's RDMA checks skipped; exit 3;
#   mtu      the client's netdev at MTU 9000, the server's at 1500: WARN on the
#            path's MTU with the fix (ip link set dev eth0 mtu 1500), the data
#            still checked; exit 3;
#   drop     UDP 4791 dropped on its way into the server's guest (a tc
#            ingress filter: the guests have no nft or iptables), TCP not:
#            TCP, the route and the connection PASS, the SEND FAILs with
#            IBV_WC_RETRY_EXC_ERR and the fix names UDP 4791 and a firewall;
#            exit 1;
#   server   served the clients, stopped by SIGTERM with exit 0.
# An rdmakit without `doctor HOST` fails every case (it refuses the HOST).
# Usage: doctor.sh SOFTROCE RDMAKIT WORKDIR   (WORKDIR inside the project tree)
SOFTROCE=$1 RDMAKIT=$2 W=$3
HERE=$(cd "$(dirname "$0")" && pwd)
fails=0
fail() {
	echo "FAIL [$1]: $2"
	fails=$((fails + 1))
}
# has CASE TEXT: CASE's output has a line with TEXT (fixed string).
has() {
	grep -qF -- "$2" "$W/$1.out" 2>/dev/null || fail "$1" "expected a line with '$2'"
}
# rc_is CASE STATUS
rc_is() {
	got=$(cat "$W/$1.rc" 2>/dev/null || echo none)
	[ "$got" = "$2" ] || fail "$1" "exited $got, expected $2"
}

if [ "${DOCTOR_RECHECK:-0}" != 1 ]; then
	rm -rf "$W" && mkdir -p "$W/mods" || exit 1
	W=$(cd "$W" && pwd -P)
	# The modules of the drop case, from the guest kernel's package that
	# scripts/softroce setup keeps (the guests load them with insmod).
	cache=${RDMAKIT_SOFTROCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdmakit/softroce}
	deb=$(ls "$cache"/dl/linux-image-*.deb 2>/dev/null | head -1)
	if [ -n "$deb" ]; then
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$W/mods" --wildcards \
			'*/net/sched/sch_ingress.ko' '*/net/sched/cls_u32.ko' '*/net/sched/act_gact.ko'
		find "$W/mods" -name '*.ko' -exec mv {} "$W/mods/" \;
	fi
	[ -s "$W/mods/cls_u32.ko" ] || fail drop "no cls_u32.ko from the guest kernel's package ($deb)"
	t0=$(date +%s)
	"$SOFTROCE" run2 --cpus 1 --timeout "${DOCTOR_TIMEOUT:-500}" -- \
		sh "$HERE/doctor_guest.sh" "$RDMAKIT" "$W" -- sh "$HERE/doctor_guest.sh" "$RDMAKIT" "$W"
	rc=$?
	echo "doctor: both guests done in $(($(date +%s) - t0)) s (run2 exit $rc)"
	[ $rc -eq 0 ] || fail run2 "scripts/softroce run2 exited $rc, expected 0"
fi
for c in healthy dead rc-server mtu drop; do
	echo "---- $c (exit $(cat "$W/$c.rc" 2>/dev/null), $(cat "$W/$c.time" 2>/dev/null) s)"
	cat "$W/$c.out" "$W/$c.err" 2>/dev/null
done
echo "---- server (exit $(cat "$W/server.rc" 2>/dev/null))"
cat "$W/server.out" "$W/server.err" 2>/dev/null

# healthy: all PASS, exit 0 (rxe's software device a PASS with its note).
rc_is healthy 0
rc_is healthy-json 0
for line in "PASS TCP to 198.18.0.1 port 18515" "PASS RDMA CM route to 198.18.0.1: 198.18.0.1 resolves to rxe0" \
	"PASS the server on 198.18.0.1 port 18515: 198.18.0.1:18515 is an rdmakit doctor server" \
	"PASS GIDs of the path: here GID index" "(RoCE v2)" "PASS MTU of the path: path MTU 1024" \
	"PASS SEND to 198.18.0.1: 32775 bytes, every byte checked" "PASS RDMA WRITE to 198.18.0.1: 32775 bytes" \
	"PASS RDMA READ from 198.18.0.1: 32775 bytes" "PASS bandwidth and latency to 198.18.0.1: RDMA WRITE" \
	"PASS rxe0 software device: rxe0 is Soft-RoCE (rdma_rxe), emulated by the kernel" \
	"no line rate to expect" \
	"verdict: PASS: RDMA works between this host (rxe0 port 1) and 198.18.0.1: RoCE v2, path MTU 1024"; do
	has healthy "$line"
done
! grep -q '^FAIL' "$W/healthy.out" || fail healthy "a check failed"
! grep '^WARN' "$W/healthy.out" || fail healthy "warnings (above), expected none"
python3 - "$W/healthy-json.out" <<'PY' || fail healthy-json "the --json document (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
ids = {c["id"]: c["status"] for c in doc["checks"] if c["id"].startswith("peer_")}
want = ["peer_tcp", "peer_cm_route", "peer_server", "peer_gid", "peer_mtu", "peer_send",
        "peer_write", "peer_read", "peer_probe"]
bad = [i for i in want if ids.get(i) != "PASS"]
assert not bad, f"not PASS: {bad} in {ids}"
assert doc["host"] == "198.18.0.1" and doc["verdict_line"].startswith("PASS: RDMA works"), doc
assert doc["verdict"] == "PASS" and doc["summary"]["warn"] == 0 and doc["summary"]["fail"] == 0, doc
sw = [c for c in doc["checks"] if c["id"] == "software_device"]
assert sw and sw[0]["status"] == "PASS" and "no line rate to expect" in sw[0]["seen"], sw
print("doctor: healthy-json: every check PASS, exit 0")
PY

# dead: an address on the link nobody has.
rc_is dead 1
grep -q '^FAIL TCP to 198.18.0.9 port 18515: 198.18.0.9:18515\( is unreachable\|: no answer\)' "$W/dead.out" ||
	fail dead "expected FAIL TCP to 198.18.0.9 naming it unreachable or unanswered"
has dead "FAIL RDMA CM route to 198.18.0.9"
has dead "verdict: FAIL"
[ "$(cat "$W/dead.time" 2>/dev/null || echo 999)" -le 20 ] || fail dead "took $(cat "$W/dead.time") s, more than 20"

# rc-server: another kind of rdmakit server.
rc_is rc-server 3
has rc-server "WARN the server on 198.18.0.1 port 18600: 198.18.0.1:18600 is an rdmakit rc server, not a doctor server: it allows \`rdmakit rc\` clients"
has rc-server "fix: run \`rdmakit doctor --server\` on 198.18.0.1"
has rc-server "SKIP SEND: the peer is an rdmakit rc server, not a doctor server"
has rc-server "verdict: WARN: the path to 198.18.0.1 was not checked through: the peer is an rdmakit rc server"

# mtu: jumbo here, 1500 on the server.
rc_is mtu 3
has mtu "WARN MTU of the path: path MTU 1024; port MTU here 4096, on 198.18.0.1 1024; netdev MTU here 9000 (eth0), on 198.18.0.1 1500"
has mtu "fix: the same MTU on both netdevs: ip link set dev eth0 mtu 1500 here, or the peer's netdev to 9000 on 198.18.0.1"
has mtu "PASS SEND to 198.18.0.1"
has mtu "PASS RDMA READ from 198.18.0.1"

# drop: RoCE lost, TCP not.
echo "---- drop: guest 1's filter"
cat "$W/drop.log" 2>/dev/null
[ "$(cat "$W/drop.ready" 2>/dev/null)" = 0 ] || fail drop "guest 1 could not set up the filter (above)"
rc_is drop 1
has drop "PASS TCP to 198.18.0.1 port 18515"
has drop "PASS the server on 198.18.0.1 port 18515"
has drop "FAIL SEND to 198.18.0.1: SEND failed: "
has drop "RETRY_EXC"
has drop "fix: RoCE's packets (UDP 4791) do not get through while TCP does: a firewall rule drops them on one side"
has drop "SKIP RDMA WRITE: the SEND before failed"
has drop "verdict: FAIL: 1 check failed, the first: SEND to 198.18.0.1"

rc_is server 0
has server "stopped by SIGTERM"
has server "doctor server: served 198.18.0.2"

[ $fails = 0 ] || { echo "doctor: $fails failure(s)"; exit 1; }
echo "doctor: every case as expected"
