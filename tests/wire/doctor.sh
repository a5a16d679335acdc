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
#   fw       an nftables rule in the client's guest drops UDP 4791 coming
#            in (nft add rule inet rk_doctor input udp dport 4791 drop): an
#            rdmakit rc client fails (real traffic does not pass); local
#            doctor FAILs the firewall check naming the rule and its fix (nft
#            delete rule inet rk_doctor input handle N), exit 1; doctor HOST
#            the same, and its SEND FAILs with IBV_WC_RETRY_EXC_ERR naming
#            that rule and fix; text and --json;
#   drop     UDP 4791 dropped on its way into the server's guest by a tc
#            ingress filter (not a firewall rule: doctor cannot read it), TCP
#            not: TCP, the route and the connection PASS, the SEND FAILs with
#            IBV_WC_RETRY_EXC_ERR and the fix names UDP 4791, a firewall on
#            one side or a tc filter; exit 1; the server guest's local doctor
#            does not FAIL its firewall check (it cannot see the filter);
#   server   served the clients, stopped by SIGTERM with exit 0; the rc
#            --persist server too (it was killed before: a SIGTERM that came
#            while it set up was missed).
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
			'*/net/sched/sch_ingress.ko' '*/net/sched/cls_u32.ko' '*/net/sched/act_gact.ko' \
		'*/crypto/crc32c_generic.ko' '*/lib/libcrc32c.ko' '*/net/netfilter/nfnetlink.ko' \
		'*/net/netfilter/nf_tables.ko'
		find "$W/mods" -name '*.ko' -exec mv {} "$W/mods/" \;
	fi
	[ -s "$W/mods/cls_u32.ko" ] || fail drop "no cls_u32.ko from the guest kernel's package ($deb)"
	[ -s "$W/mods/nf_tables.ko" ] || fail fw "no nf_tables.ko from the guest kernel's package ($deb)"
	command -v nft >/dev/null || fail fw "no nft here (the guests run the host's): apt-get install nftables"
	t0=$(date +%s)
	"$SOFTROCE" run2 --cpus 1 --timeout "${DOCTOR_TIMEOUT:-800}" -- \
		sh "$HERE/doctor_guest.sh" "$RDMAKIT" "$W" -- sh "$HERE/doctor_guest.sh" "$RDMAKIT" "$W"
	rc=$?
	echo "doctor: both guests done in $(($(date +%s) - t0)) s (run2 exit $rc)"
	[ $rc -eq 0 ] || fail run2 "scripts/softroce run2 exited $rc, expected 0"
fi
for c in healthy dead rc-server mtu fw-local fw drop drop-local; do
	echo "---- $c (exit $(cat "$W/$c.rc" 2>/dev/null), $(cat "$W/$c.time" 2>/dev/null) s)"
	cat "$W/$c.out" "$W/$c.err" 2>/dev/null
done
echo "---- server (exit $(cat "$W/server.rc" 2>/dev/null))"
cat "$W/server.out" "$W/server.err" 2>/dev/null

# healthy: all PASS, exit 0 (rxe's software device a PASS with its note).
rc_is healthy 0
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
# The second run (--json) may find error counters the first one's probe
# moved (rxe's retries under TCG): then that warning alone, and exit 3.
python3 - "$W/healthy-json.out" "$(cat "$W/healthy-json.rc" 2>/dev/null)" <<'PY' || fail healthy-json "the --json document (above)"
import json, sys
doc = json.load(open(sys.argv[1]))
warns = [c["id"] for c in doc["checks"] if c["status"] == "WARN"]
assert set(warns) <= {"error_counters"}, f"warnings other than moved counters: {warns}"
verdict = "WARN" if warns else "PASS"
assert sys.argv[2] == ("3" if warns else "0"), f"exit {sys.argv[2]} with warnings {warns}"
ids = {c["id"]: c["status"] for c in doc["checks"] if c["id"].startswith("peer_")}
want = ["peer_tcp", "peer_cm_route", "peer_server", "peer_gid", "peer_mtu", "peer_send",
        "peer_write", "peer_read", "peer_probe"]
bad = [i for i in want if ids.get(i) != "PASS"]
assert not bad, f"not PASS: {bad} in {ids}"
assert doc["host"] == "198.18.0.1" and doc["verdict_line"].startswith(verdict + ": RDMA works"), doc
assert doc["verdict"] == verdict and doc["summary"]["warn"] == len(warns) and doc["summary"]["fail"] == 0, doc
sw = [c for c in doc["checks"] if c["id"] == "software_device"]
assert sw and sw[0]["status"] == "PASS" and "no line rate to expect" in sw[0]["seen"], sw
print(f"doctor: healthy-json: every check PASS{' but moved counters: ' + str(warns) if warns else ''}, exit {sys.argv[2]}")
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

# fw: an nftables rule in the client's guest drops UDP 4791 coming in.
echo "---- fw: guest 2's rule, and an rc client with it (exit $(cat "$W/fw-rc.rc" 2>/dev/null))"
cat "$W/fw.log" "$W/fw-rc.out" 2>/dev/null
[ "$(cat "$W/fw.ready" 2>/dev/null)" = 0 ] || fail fw "guest 2 could not add the nft rule (above)"
[ "$(cat "$W/fw-rc.rc" 2>/dev/null || echo 0)" != 0 ] || fail fw-rc "the rc client got through the rule (exit 0)"
has fw-rc "RETRY_EXC"
fwline="FAIL firewall (nftables): RoCE v2 and its RDMA CM (UDP 4791) is dropped by: udp dport 4791 drop (chain inet rk_doctor input)"
fwfix="fix: nft delete rule inet rk_doctor input handle "
for c in fw-local fw; do
	rc_is $c 1
	has $c "$fwline"
	has $c "$fwfix"
done
has fw "PASS TCP to 198.18.0.1 port 18515"
has fw "FAIL SEND to 198.18.0.1: SEND failed: "
has fw "RETRY_EXC"
has fw "fix: RoCE's packets (UDP 4791) do not get through while TCP does: this host's firewall drops them (the firewall check above): udp dport 4791 drop (chain inet rk_doctor input); remove it: nft delete rule inet rk_doctor input handle "
has fw "verdict: FAIL: "
has fw "the first: firewall (nftables)"
python3 - "$W/fw-local-json.out" "$W/fw-json.out" <<'PY' || fail fw-json "the --json documents (above)"
import json, sys
for path in sys.argv[1:]:
    doc = json.load(open(path))
    fw = [c for c in doc["checks"] if c["id"] == "firewall"]
    assert fw and fw[0]["status"] == "FAIL", (path, fw)
    assert "udp dport 4791 drop (chain inet rk_doctor input)" in fw[0]["seen"], fw
    assert fw[0]["fix"].startswith("nft delete rule inet rk_doctor input handle "), fw
    assert doc["verdict"] == "FAIL" and doc["result"] == "failed", doc
    if "host" in doc:
        send = [c for c in doc["checks"] if c["id"] == "peer_send"][0]
        assert send["status"] == "FAIL" and fw[0]["fix"] in send["fix"], send
print("doctor: fw-json: the rule and its fix in both documents (and the SEND's)")
PY

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
has drop "a tc filter, which doctor does not read"
# guest 1's local doctor with the filter: its firewall check cannot see it.
! grep -q '^FAIL firewall' "$W/drop-local.out" || fail drop-local "doctor named a firewall rule for a tc filter"
grep -q '^\(PASS\|SKIP\) firewall' "$W/drop-local.out" || fail drop-local "no firewall check"
has drop "SKIP RDMA WRITE: the SEND before failed"
has drop "verdict: FAIL: 1 check failed, the first: SEND to 198.18.0.1"

rc_is server 0
has server "stopped by SIGTERM"
# The rc prop (--persist) stopped by its SIGTERM, not killed.
echo "---- the rc --persist server (exit $(cat "$W/rc-prop.rc" 2>/dev/null))"
tail -3 "$W/rc-prop.out" 2>/dev/null
[ "$(cat "$W/rc-prop.rc" 2>/dev/null)" = 0 ] ||
	fail rc-prop "the rc --persist server exited $(cat "$W/rc-prop.rc" 2>/dev/null) after SIGTERM, expected 0"
grep -q "stopped by SIGTERM" "$W/rc-prop.out" || fail rc-prop "no 'stopped by SIGTERM' from the rc server"
has server "doctor server: served 198.18.0.2"

[ $fails = 0 ] || { echo "doctor: $fails failure(s)"; exit 1; }
echo "doctor: every case as expected"
