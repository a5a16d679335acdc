#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Wire tests: RoCE v2 on a real (virtual) wire between two Soft-RoCE guests.
# Guest 1 captures UDP 4791 and runs the servers, guest 2 the clients (see
# cases.sh); then every case is checked: the client's exit status and named
# result, and in the capture the BTH opcodes the client's requests carried
# (one per PSN), those the server's side answered with, and the AETH
# syndrome (ACK, or the NAK for a remote access error). Last, the mixed-MTU
# cases over RDMA CM (not captured).
# With MODE iwarp, the same between two Soft-iWARP (siw) guests: the iWARP
# cases of cases.sh over RDMA CM, checked by iwarp.sh from the TCP capture.
# Usage: wire.sh SOFTROCE RDMAKIT WORKDIR [roce|iwarp]   (WORKDIR inside the
# project tree). Needs tshark on the host (scripts/softroce setup installs it).
SOFTROCE=$1 RDMAKIT=$2 W=$3 MODE=${4:-roce}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/cases.sh"
fails=0
fail() {
	echo "FAIL [$1]: $2"
	fails=$((fails + 1))
}
# same NAME WHAT EXPECTED GOT: true when GOT is EXPECTED, else fail NAME
# showing both.
same() {
	[ "$4" = "$3" ] || { fail "$1" "$2: expected [$3], got [$4]"; return 1; }
}
# qps_of NAME: cqp and sqp (0x%06x), the QPs the client of case NAME names
# ("QP 0x12 <-> peer QP 0x12"); false when it never connected.
qps_of() {
	qps=$(sed -n 's/.*: QP \(0x[0-9a-f]*\) <-> peer QP \(0x[0-9a-f]*\),.*/\1 \2/p' "$W/$1.client" 2>/dev/null)
	[ -n "$qps" ] || return 1
	# shellcheck disable=SC2086 # two words on purpose
	set -- $qps
	cqp=$(printf '0x%06x' "$1") sqp=$(printf '0x%06x' "$2")
}

# exits NAME OUTCOME TEXT: case NAME's client and server exited as OUTCOME
# says (ok: both 0; fail: both a failure: the server hears the step failed)
# and the client printed TEXT; sets crc and src, their exit statuses. False,
# after saying what differed, when not.
exits() {
	crc=$(cat "$W/$1.client.rc" 2>/dev/null || echo none)
	src=$(cat "$W/$1.server.rc" 2>/dev/null || echo none)
	exits_ok=1
	case $2 in
	ok)
		[ "$crc" = 0 ] || { fail "$1" "client exited $crc, expected 0"; exits_ok=0; }
		[ "$src" = 0 ] || { fail "$1" "server exited $src, expected 0"; exits_ok=0; }
		;;
	fail)
		[ "$crc" != 0 ] && [ "$crc" != none ] ||
			{ fail "$1" "client exited $crc, expected a failure"; exits_ok=0; }
		[ "$src" != 0 ] && [ "$src" != none ] ||
			{ fail "$1" "server exited $src, expected a failure (it hears the step failed)"; exits_ok=0; }
		;;
	esac
	grep -qF -- "$3" "$W/$1.client" 2>/dev/null ||
		{ fail "$1" "expected '$3' in the client's output"; exits_ok=0; }
	[ $exits_ok = 1 ]
}

command -v tshark >/dev/null || { echo "FAIL: tshark not found on the host (run scripts/softroce setup)"; exit 1; }
if [ "${WIRE_RECHECK:-0}" = 1 ]; then
	# Check an earlier run's results again without booting (for debugging).
	echo "wire: WIRE_RECHECK=1: checking the results already in $W"
else
	rm -rf "$W" && mkdir -p "$W" || exit 1
	W=$(cd "$W" && pwd -P)
	t0=$(date +%s)
	provider=rxe
	[ "$MODE" = iwarp ] && provider=siw
	"$SOFTROCE" run2 --provider $provider --timeout "${WIRE_TIMEOUT:-400}" -- \
		sh "$HERE/guest1.sh" "$RDMAKIT" "$W" "$MODE" -- sh "$HERE/guest2.sh" "$RDMAKIT" "$W" "$MODE"
	rc=$?
	echo "wire: both guests done in $(($(date +%s) - t0)) s (run2 exit $rc)"
	[ $rc -eq 0 ] || fail run2 "scripts/softroce run2 exited $rc, expected 0"
fi
[ -s "$W/capture.pcapng" ] || { fail capture "no capture file $W/capture.pcapng"; exit 1; }
if [ "$MODE" = iwarp ]; then
	. "$HERE/iwarp.sh"
	exit
fi

# One line per RoCE packet: source, dest QP, PSN, opcode, AETH syndrome,
# RETH DMA length, the IP header's DSCP and TTL.
tshark -r "$W/capture.pcapng" -T fields -E separator=, -e ip.src -e infiniband.bth.destqp \
	-e infiniband.bth.psn -e infiniband.bth.opcode -e infiniband.aeth.syndrome \
	-e infiniband.reth.dmalen -e ip.dsfield.dscp -e ip.ttl >"$W/packets.csv" 2>"$W/tshark.err"
echo "wire: $(wc -l <"$W/packets.csv") RoCE packets captured"

# Under emulation an ACK can come later than the 67 ms ACK timeout, so the
# capture may hold retransmissions and NAKs; what each operation sends is
# read past them:
# requests SRC DESTQP: the request opcodes (all but 13-18) of SRC's first
# transmission, in capture order: a packet counts only when its PSN is past
# all PSNs sent so far (a READ request covers one PSN per response packet:
# its length / path MTU).
requests() {
	awk -F, -v src="$1" -v qp="$2" -v mtu="$MTU" '$1 == src && $2 == qp && ($4 < 13 || $4 > 18) {
		psn = $3 + 0
		if (seen && psn <= hi) next
		out = out (seen ? " " : "") $4
		span = 1
		if ($4 == 12 && $6 > 0) span = int(($6 + mtu - 1) / mtu)
		hi = psn + span - 1
		seen = 1
	} END { print out }' "$W/packets.csv"
}
# responses SRC DESTQP: the response opcodes (13-18) SRC answered with, one
# per PSN (first seen) in PSN order, runs of (atomic) acknowledges counted
# once: an ACK may cover one packet or several, and NAKs before it (RNR,
# PSN sequence error) are acknowledges too (syndromes are checked apart).
responses() {
	awk -F, -v src="$1" -v qp="$2" '$1 == src && $2 == qp && $4 >= 13 && $4 <= 18' "$W/packets.csv" |
		sort -s -t, -k3,3n -u | cut -d, -f4 |
		awk '($1 == 17 || $1 == 18) && $1 == prev { next } { out = out (NR > 1 ? " " : "") $1; prev = $1 } END { print out }'
}
# syndromes SRC DESTQP: the distinct AETH syndromes, as 0xNN.
syndromes() {
	awk -F, -v src="$1" -v qp="$2" '$1 == src && $2 == qp && $5 != "" { print $5 }' "$W/packets.csv" |
		sort -un | while read -r s; do printf '0x%02x ' "$s"; done | sed 's/ $//'
}
# last_syndrome SRC DESTQP: the syndrome of SRC's last AETH, as 0xNN.
last_syndrome() {
	awk -F, -v src="$1" -v qp="$2" '$1 == src && $2 == qp && $5 != "" { s = $5 } END { if (s != "") printf "0x%02x\n", s }' "$W/packets.csv"
}

echo "$WIRE_CASES" | {
	while IFS="|" read -r name _ _ outcome req resp syn text; do
		[ -n "$name" ] || continue
		ok=1
		exits "$name" "$outcome" "$text" || ok=0
		if ! qps_of "$name"; then
			fail "$name" "the client never connected"
			sed 's/^/  client| /' "$W/$name.client" 2>/dev/null | tail -8
			sed 's/^/  server| /' "$W/$name.server" 2>/dev/null | tail -8
			continue
		fi
		MTU=$(sed -n 's/.*, path MTU \([0-9]*\).*/\1/p' "$W/$name.client")
		got_req=$(requests 198.18.0.2 "$sqp")
		got_resp=$(responses 198.18.0.1 "$cqp")
		got_syn=$(syndromes 198.18.0.1 "$cqp")
		last_syn=$(last_syndrome 198.18.0.1 "$cqp")
		same "$name" "client -> server opcodes" "$req" "$got_req" || ok=0
		same "$name" "server -> client opcodes" "$resp" "$got_resp" || ok=0
		if [ "$syn" = ack ]; then
			# The last word is an ACK (0b000 in bits 7-5: 0x00-0x1f).
			[ -n "$last_syn" ] && [ $((last_syn & 0xe0)) -eq 0 ] ||
				{ fail "$name" "last AETH syndrome: expected an ACK (0x00-0x1f), got [$last_syn]"; ok=0; }
		else
			case " $got_syn " in
			*" $syn "*) ;;
			*) fail "$name" "AETH syndromes: expected $syn among them, got [$got_syn]"; ok=0 ;;
			esac
		fi
		if [ $ok = 1 ]; then
			echo "ok [$name]: client $crc, server $src, QP $cqp <-> $sqp, client -> server [$got_req], server -> client [$got_resp], AETH [$got_syn]"
		else
			sed 's/^/  client| /' "$W/$name.client" | tail -6
		fi
	done

	# The server process killed (SIGKILL) in the middle of a 64 MiB WRITE,
	# client with --retry 1: the transport gives up with RETRY_EXC_ERR.
	name=peer-killed ok=1
	crc=$(cat "$W/$name.client.rc" 2>/dev/null || echo none)
	took=$(cat "$W/$name.client.took" 2>/dev/null || echo none)
	[ "$crc" != 0 ] && [ "$crc" != none ] || { fail $name "client exited $crc, expected a failure"; ok=0; }
	grep -q 'IBV_WC_RETRY_EXC_ERR' "$W/$name.client" 2>/dev/null ||
		{ fail $name "expected IBV_WC_RETRY_EXC_ERR in the client's output"; ok=0; }
	after=$(cat "$W/$name.client.after-write" 2>/dev/null || echo none)
	[ "$after" != none ] && awk -v a="$after" -v b="$WIRE_KILL_BOUND" 'BEGIN { exit !(a <= b) }' ||
		{ fail $name "client exited $after s after its WRITE started, bound $WIRE_KILL_BOUND s"; ok=0; }
	[ "$took" != none ] && [ "$took" -le "$WIRE_KILL_TOTAL" ] ||
		{ fail $name "client took $took s from its start, bound $WIRE_KILL_TOTAL s"; ok=0; }
	if [ $ok = 1 ]; then
		echo "ok [$name]: client exited $crc $after s after its WRITE started (bound" \
			"$WIRE_KILL_BOUND s), $took s after its start (bound $WIRE_KILL_TOTAL s):" \
			"$(grep -m1 -o 'IBV_WC_RETRY_EXC_ERR.*' "$W/$name.client")"
	else
		sed 's/^/  client| /' "$W/$name.client" 2>/dev/null | tail -6
	fi

	# Mixed MTU: rdmakit's client and server at 4096 each connect at 1024
	# and check every step; rping's client at 4096 is refused by name.
	# expect NAME SIDE RC TEXT: SIDE of case NAME exited RC and printed TEXT.
	expect() {
		got=$(cat "$W/$1.$2.rc" 2>/dev/null || echo none)
		[ "$got" = "$3" ] || { fail "$1" "$2 exited $got, expected $3"; sed "s/^/  $2| /" "$W/$1.$2" 2>/dev/null | tail -6; return 1; }
		grep -qF -- "$4" "$W/$1.$2" 2>/dev/null ||
			{ fail "$1" "expected '$4' in the $2's output"; sed "s/^/  $2| /" "$W/$1.$2" 2>/dev/null | tail -6; return 1; }
	}
	for name in mtu-bigger mtu-smaller; do
		expect $name client 0 'path MTU 1024' && expect $name server 0 'path MTU 1024' &&
			expect $name client 0 '5 steps done, every byte checked: OK' &&
			echo "ok [$name]: guest 2 at 4096 (the $([ $name = mtu-bigger ] && echo client || echo server)), guest 1 at 1024: path MTU 1024 both sides, every step checked"
	done
	crc=$(cat "$W/mtu-rping.client.rc" 2>/dev/null || echo none)
	[ "$crc" != 0 ] && [ "$crc" != none ] || fail mtu-rping "rping client exited $crc, expected a failure"
	grep -qF 'RDMA_CM_EVENT_REJECTED' "$W/mtu-rping.client" 2>/dev/null ||
		fail mtu-rping "expected RDMA_CM_EVENT_REJECTED in rping's output"
	expect mtu-rping server 1 'its path MTU is 4096 bytes, above the active MTU 1024 of rxe0 port 1' &&
		echo "ok [mtu-rping]: rping's client at 4096 refused by the rdmakit rping server at 1024, by name"
	exit $fails
}
fails=$?

# The traffic cases: every packet of the two data QPs, each way, carries the
# DSCP and TTL expected (one DSCP/TTL pair per direction). The loop runs in
# this shell (a here-document, not a pipe): fail() counts into fails.
# ip_fields SRC DESTQP: SRC's distinct DSCP/TTL pairs towards DESTQP.
ip_fields() {
	awk -F, -v src="$1" -v qp="$2" '$1 == src && $2 == qp { print $7 "/" $8 }' "$W/packets.csv" |
		sort -u | tr '\n' ' ' | sed 's/ $//'
}
while IFS="|" read -r name _ _ c2s s2c ctext stext; do
	[ -n "$name" ] || continue
	ok=1
	crc=$(cat "$W/$name.client.rc" 2>/dev/null || echo none)
	src=$(cat "$W/$name.server.rc" 2>/dev/null || echo none)
	[ "$crc" = 0 ] || { fail "$name" "client exited $crc, expected 0"; ok=0; }
	[ "$src" = 0 ] || { fail "$name" "server exited $src, expected 0"; ok=0; }
	grep -qF -- "$ctext" "$W/$name.client" 2>/dev/null ||
		{ fail "$name" "expected '$ctext' in the client's output"; ok=0; }
	grep -qF -- "$stext" "$W/$name.server" 2>/dev/null ||
		{ fail "$name" "expected '$stext' in the server's output"; ok=0; }
	if ! qps_of "$name"; then
		fail "$name" "the client never connected"
		ok=0
	else
		got_c2s=$(ip_fields 198.18.0.2 "$sqp")
		got_s2c=$(ip_fields 198.18.0.1 "$cqp")
		same "$name" "client -> server DSCP/TTL" "$c2s" "$got_c2s" || ok=0
		same "$name" "server -> client DSCP/TTL" "$s2c" "$got_s2c" || ok=0
	fi
	if [ $ok = 1 ]; then
		echo "ok [$name]: QP $cqp <-> $sqp, client -> server DSCP/TTL [$got_c2s], server -> client [$got_s2c]"
	else
		sed 's/^/  client| /' "$W/$name.client" 2>/dev/null | tail -6
		sed 's/^/  server| /' "$W/$name.server" 2>/dev/null | tail -6
	fi
done <<TRAFFIC
$WIRE_TRAFFIC_CASES
TRAFFIC
if [ $fails -ne 0 ]; then
	echo "$fails check(s) failed; packets (src,destqp,psn,opcode,syndrome) in $W/packets.csv"
	exit 1
fi
echo "all checks passed"
