#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit ping and rdmakit ud as users run them: rdmakit with rdmakit, and
# with rdma-core's own programs (rping, ibv_rc/uc/ud/srq_pingpong, udaddy) in
# both roles. Every pair checks both peers' exit codes.
# Usage: cli_ping.sh RDMAKIT ping|ud
RDMAKIT=$1
WHAT=${2:-ping}
. "$(dirname "$0")/lib.sh"

srv_out=$(mktemp) cli_out=$(mktemp) cli2_out=$(mktemp)
trap 'rm -f "$out" "$err" "$srv_out" "$cli_out" "$cli2_out"' EXIT

for tool in rping udaddy ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong; do
	command -v $tool >/dev/null || { echo "FAIL: $tool (rdma-core) is not installed"; exit 1; }
done

# pair (tests/rdma/lib.sh), each side bounded by 60 s.
PAIR_TIMEOUT=60

R="$RDMAKIT"
W="waiting for"

# IPv6: the link-local address of the netdev carrying $IP, with its scope
# (every netdev has one; TCP and RDMA CM both take "fe80::...%dev").
NETDEV=$(ip -o -4 addr show | awk -v ip="$IP" '{split($4, a, "/")} a[1] == ip {print $2; exit}')
IP6=$(ip -o -6 addr show dev "$NETDEV" scope link 2>/dev/null | awk '{split($4, a, "/"); print a[1]; exit}')
[ -n "$IP6" ] || { echo "FAIL: no IPv6 link-local address on '$NETDEV' (the netdev of $IP)"; exit 1; }
IP6="$IP6%$NETDEV"

# stopped_pair SERVER CLIENT: both in the background, SIGINT to the client
# a second after it connected; both must exit 0. (timeout --foreground:
# timeout passes our SIGINT on once, not also to its group, where a second
# one kills, as it should.)
stopped_pair() {
	PORT=$((PORT + 1))
	scmd=$(echo "$1" | sed "s/@PORT@/$PORT/g")
	ccmd=$(echo "$2" | sed "s/@PORT@/$PORT/g")
	# shellcheck disable=SC2086
	timeout 60 $scmd >"$srv_out" 2>&1 &
	spid=$!
	# shellcheck disable=SC2086
	timeout --foreground 60 $ccmd >"$cli_out" 2>&1 &
	cpid=$!
	wait_for "$cli_out" "client: connected to" && sleep 1
	kill -INT "$cpid"
	wait "$cpid"
	gc=$?
	wait "$spid"
	gs=$?
	if [ "$gc" -ne 0 ] || [ "$gs" -ne 0 ]; then
		echo "FAIL: server [$scmd] exited $gs, client [$ccmd] $gc after SIGINT (want 0/0)"
		show server "$srv_out" 15
		show client "$cli_out" 15
		fails=$((fails + 1))
		return 1
	fi
	echo "ok: server [$scmd] / client [$ccmd] stopped by SIGINT -> 0/0"
}

# killed_pair server|client CONN: a native pair over CONN ("" or --cm), the
# named side killed (SIGKILL) a second into the run; the other must fail
# within 5 s (not its 10 s timeout) saying its peer went away (killed()).
killed_pair() {
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086
	timeout 60 "$R" ping --server $2 -p "$PORT" -w 30 >"$srv_out" 2>&1 &
	spid=$!
	# shellcheck disable=SC2086
	timeout --foreground 60 "$R" ping "$IP" $2 -p "$PORT" -n 1000 -I 0.05 >"$cli_out" 2>&1 &
	cpid=$!
	wait_for "$cli_out" "client: connected to" && sleep 1
	if [ "$1" = server ]; then
		killed "$spid" "$cpid" "native $2, server killed" "$cli_out" || return 1
		has "$cli_out" "the server went away after "
	else
		killed "$cpid" "$spid" "native $2, client killed" "$srv_out" || return 1
		has "$srv_out" "the client went away after "
	fi
}

ping_tests() {
	# rdmakit with rdmakit: TCP exchange polled, RDMA CM with events.
	# (with an RTT p99 threshold far above rxe's: met, exit 0)
	pair 0 0 "$R ping --server -p @PORT@ -w 30" \
		"$R ping $IP -p @PORT@ -n 5 -V -v --json --max-rtt-p99 10000000" &&
	has "$srv_out" "data checked in every round: OK" && {
		cp "$cli_out" "$out"
		json '
assert d["result"] == "ok" and d["proto"] == "native" and d["connection"] == "tcp", d
assert d["rounds"] == 5 and d["validated"] is True, d
t = d["rtt_us"]
assert 0 < t["min"] <= t["median"] <= t["p99"] <= t["max"], t
assert d["gid"]["type"] == "RoCE v2", d
g = d["gates"]
assert d["gates_passed"] is True and len(g) == 1, d
assert g[0]["name"] == "max-rtt-p99" and g[0]["graded"] and g[0]["passed"], g
assert g[0]["figure"] == t["p99"] and g[0]["limit"] == 10000000 and g[0]["unit"] == "us", g
'
	}
	# An RTT p99 threshold far under rxe's: the threshold, the figure and the
	# limit, and exit 3 (RK_EXIT_GATE); the server is not graded.
	pair 0 3 "$R ping --server -p @PORT@ -w 30" "$R ping $IP -p @PORT@ -n 5 --max-rtt-p99 0.001" &&
	has "$cli_out" "client: 5 rounds of 64 bytes, rtt min" &&
	has "$cli_out" "gate client: max-rtt-p99: " &&
	has "$cli_out" " us, limit at most 0.001 us: MISSED" &&
	has "$cli_out" "client: thresholds: 1 of 1 not passed (exit status 3)" &&
	has "$srv_out" "data not checked (use -V): OK"
	pair 0 0 "$R ping --server --cm -e -p @PORT@ -w 30" "$R ping $IP --cm -e -p @PORT@ -n 5 -s 4k -V" &&
	has "$cli_out" "5 rounds of 4096 bytes, rtt min" &&
	has "$cli_out" "data checked in every round: OK" &&
	has "$srv_out" "data checked in every round: OK" &&
	lacks "$cli_out" "rcvd_rnr_err" # every SEND over CM found a receive

	# rping's protocol, rdmakit as the client of 'rping -s', with -V.
	pair 0 0 "rping -s -a $IP -p @PORT@ -V -C 5" \
		"$R ping --proto rping -c -a $IP -p @PORT@ -C 5 -V -v" &&
	has "$cli_out" "round 5/5: 64 bytes, rtt" && has "$cli_out" "[rdma-ping-4: EFGH" &&
	has "$cli_out" "data checked in every round: OK"
	# ... and as the server of 'rping -c', checking rping's -V pattern.
	pair 0 0 "$R ping --proto rping -s -a $IP -p @PORT@ -V -v -w 30" \
		"rping -c -a $IP -p @PORT@ -V -C 5 -v" "$W" &&
	has "$cli_out" "ping data: rdma-ping-4: EFGH" &&
	has "$srv_out" "round 5: 64 bytes, served in" &&
	has "$srv_out" "checked: rping's pattern" &&
	has "$srv_out" "the client disconnected, as rping does: OK"

	# rping's client must get its last go-ahead before the connection goes:
	# dozens of rounds of rping -c -C 20 against the rdmakit server, without
	# -C (it serves until the client leaves) and with -C 20 (it once
	# disconnected first, and rping's client then hung with "wait for
	# RDMA_WRITE_COMPLETE state 10"). Each pair bounded by pair()'s
	# timeout; the first failure ends the loop. Under ASan/UBSan, where the
	# aim is memory errors and each start costs seconds, 6 pairs (3 each way).
	reps=30
	[ "${RDMAKIT_SANITIZED:-0}" = 1 ] && reps=6
	n=0
	while [ $n -lt $reps ]; do
		n=$((n + 1))
		sc=""
		[ $((n % 2)) -eq 0 ] && sc="-C 20"
		pair 0 0 "$R ping --proto rping -s -a $IP -p @PORT@ -S 4096 -V -w 30 $sc" \
			"rping -c -a $IP -p @PORT@ -S 4096 -C 20 -V" "$W" &&
		has "$srv_out" "20 rounds of 4096 bytes" &&
		has "$srv_out" "the client disconnected, as rping does: OK" || break
		if grep -q "state" "$cli_out"; then
			echo "FAIL: rping's client lost its state in pair $n:"
			sed 's/^/  | /' "$cli_out" | head -10
			fails=$((fails + 1))
			break
		fi
	done
	echo "rping -C 20 against the rdmakit server: $n of $reps pairs run"

	# rping's letters, as its scripts give them: -I (the client's source
	# address), -t (TOS, here --tclass), -d (debug messages).
	cli_err=$cli2_out
	pair 0 0 "rping -s -a $IP -p @PORT@ -V -C 3" \
		"$R ping --proto rping -c -a $IP -I $IP -p @PORT@ -C 3 -V -t 104 -d --json" && {
		cp "$cli_out" "$out"
		json '
assert d["result"] == "ok" and d["rounds"] == 3 and d["validated"] is True, d
assert d["traffic"]["tclass"] == 104, d["traffic"]
'
		has "$cli2_out" "debug: created QP 0x"
	}
	cli_err=
	# Ctrl-C ends a client with its summary and exit 0, as ping(8)'s:
	# rping's client pings until then by default (rping's server sees it
	# leave); the native client tells its server, which ends well too.
	stopped_pair "rping -s -a $IP -p @PORT@ -V" \
		"$R ping --proto rping -c -a $IP -p @PORT@ -V --interval 0.1" &&
	has "$cli_out" "rounds of 64 bytes, rtt min" &&
	has "$cli_out" "data checked in every round; stopped by SIGINT: OK"
	stopped_pair "$R ping --server -p @PORT@ -w 30" "$R ping $IP -p @PORT@ -V -n 1000 -I 0.1" &&
	has "$cli_out" "data checked in every round; stopped by SIGINT: OK" &&
	has "$srv_out" "data checked in every round; the client stopped before its count: OK"
	# Over RDMA CM the stop and the last sync travel as SENDs on the QP:
	# neither may meet an empty receive queue (the server's SYNC goes first).
	stopped_pair "$R ping --server --cm -p @PORT@ -w 30 --events" \
		"$R ping $IP --cm -p @PORT@ -V -n 100000 -I 0.01 --events" &&
	has "$cli_out" "data checked in every round; stopped by SIGINT: OK" &&
	has "$srv_out" "the client stopped before its count: OK" &&
	lacks "$cli_out" "rcvd_rnr_err" && lacks "$srv_out" "rcvd_rnr_err"

	# rping's server fails a ping larger than its -S and leaves (exit 255):
	# the client says so at once, not after its 10 s timeout.
	PAIR_BOUND=6 pair 255 1 "rping -s -a $IP -p @PORT@" \
		"$R ping --proto rping -c -a $IP -p @PORT@ -S 1000 -C 3" &&
	has "$cli_out" "the server went away (rping's server fails and leaves on a ping larger than its -S, here 1000 bytes)"

	# A native peer that dies mid-run is seen going at once, both ways.
	for conn in "" "--cm"; do
		killed_pair server "$conn"
		killed_pair client "$conn"
	done

	# A source address the client cannot connect from, or none at all.
	PORT=$((PORT + 1))
	run 1 "$R" ping --proto rping -c -a "$IP" -I 127.0.0.1 -p "$PORT" --timeout 3
	has "$err" "from source address 127.0.0.1: RDMA_CM_EVENT_ADDR_ERROR"
	run 1 "$R" ping --proto rping -c -a "$IP" -I nonsense -p "$PORT" --timeout 3
	has "$err" "source address 'nonsense': not a numeric IPv4 address"
	run 2 "$R" ping --proto rping -s -I "$IP" -p "$PORT"
	has "$err" "option --source (-I) is the rping client's"

	# IPv6: a server on the wildcard address listens for both families (an
	# IPv4 wildcard listener refused every IPv6 RDMA CM client with a bare
	# REJECT), for rdmakit's own client and for rping's.
	pair 0 0 "$R ping --server --cm -n 3 -p @PORT@ -w 30" "$R ping --cm $IP6 -n 3 -p @PORT@ -V" \
		"$W" && has "$cli_out" "data checked in every round: OK"
	pair 0 0 "$R ping --proto rping -s -p @PORT@ -V -w 30" "rping -c -a $IP6 -p @PORT@ -V -C 3" \
		"$W" && has "$srv_out" "the client disconnected, as rping does: OK"

	# ibv_*_pingpong's letters and long names (-l, --ib-dev, --gid-idx), and
	# ibv_ud_pingpong's default size, 2048: on rxe's 1024-byte MTU refused
	# by both sides' rules alike.
	pair 0 0 "ibv_ud_pingpong -d rxe0 -g 1 -n 5 -s 512 -l 0 -p @PORT@" \
		"$R ping --proto pingpong --transport ud --ib-dev rxe0 --gid-idx 1 -l 0 -n 5 -s 512 -c -p @PORT@ $IP" &&
	has "$cli_out" "data checked in every round: OK"
	pair 1 1 "$R ping --proto pingpong --transport ud -g 1 -p @PORT@ -w 30" \
		"$R ping --proto pingpong --transport ud -g 1 -p @PORT@ $IP" "$W" &&
	has "$cli_out" "a UD message of 2048 bytes does not fit the port's MTU of 1024 bytes"

	# Nothing in their exchange says -s or -n: a peer that differs fails
	# the run, and the failure says what both sides need.
	pair 1 1 "ibv_rc_pingpong -d rxe0 -g 1 -n 5 -s 4096 -p @PORT@" \
		"$R ping --proto pingpong -g 1 -n 5 -s 8192 -p @PORT@ $IP" &&
	has "$cli_out" "SEND (both sides need the same -s and -n) (wr_id 1) on QP" &&
	has "$cli_out" "failed: IBV_WC_REM_OP_ERR"
	pair 0 1 "ibv_rc_pingpong -d rxe0 -g 1 -n 5 -s 64 -p @PORT@" \
		"$R ping --proto pingpong -g 1 -n 8 -s 64 -p @PORT@ --timeout 3 $IP" &&
	has "$cli_out" " (both sides need the same -s and -n)" &&
	has "$cli_out" "client: FAILED after 5 rounds"

	# ibv_rc/uc/ud_pingpong in both roles (rxe: -g 1 is the RoCE v2 IPv4 GID;
	# UD's size must fit the 1024-byte MTU).
	for tr in rc uc ud; do
		sz=4096
		[ $tr = ud ] && sz=512
		pp="ibv_${tr}_pingpong -d rxe0 -g 1 -n 5 -s $sz -p @PORT@"
		if [ $tr = uc ]; then
			# UC: the MTU option (both sides) and the JSON summary.
			pair 0 0 "$pp -m 512" \
				"$R ping --proto pingpong --transport uc -n 5 -s $sz -m 512 -c --json -p @PORT@ $IP" &&
			has "$srv_out" "5 iters in" && {
				cp "$cli_out" "$out"
				json '
assert d["result"] == "ok" and d["proto"] == "pingpong" and d["transport"] == "UC", d
assert d["rounds"] == 5 and d["path_mtu"] == 512 and d["validated"] is True, d
t = d["rtt_us"]
assert 0 < t["min"] <= t["median"] <= t["p99"] <= t["max"], t
'
			}
		else
			pair 0 0 "$pp" "$R ping --proto pingpong --transport $tr -n 5 -s $sz -c -p @PORT@ $IP" &&
			has "$cli_out" "5 rounds of $sz bytes" &&
			has "$cli_out" "data checked in every round: OK" &&
			has "$srv_out" "5 iters in"
		fi
		pair 0 0 "$R ping --proto pingpong --transport $tr -n 5 -s $sz -c -v -p @PORT@ -w 30" \
			"$pp $IP" "$W" &&
		has "$srv_out" "round 5/5: $sz bytes, served in" &&
		has "$srv_out" "data checked in every round after the first" &&
		has "$cli_out" "5 iters in"
	done

	# ibv_srq_pingpong (--transport srq): 16 RC QPs over one SRQ each side,
	# in both roles; its count is the SENDs of all QPs together.
	pair 0 0 "ibv_srq_pingpong -d rxe0 -g 1 -n 100 -p @PORT@" \
		"$R ping --proto pingpong --transport srq -n 100 -c -p @PORT@ $IP" &&
	has "$cli_out" "and 15 more QPs each side" &&
	has "$cli_out" "100 rounds of 4096 bytes" &&
	has "$cli_out" "data checked in every round: OK" &&
	has "$srv_out" "100 iters in"
	pair 0 0 "$R ping --proto pingpong --transport srq -n 100 -c -p @PORT@ -w 30" \
		"ibv_srq_pingpong -d rxe0 -g 1 -n 100 -p @PORT@ $IP" "$W" &&
	has "$srv_out" "waiting for an ibv_srq_pingpong client" &&
	has "$srv_out" "data checked in every round after the first" &&
	has "$cli_out" "100 iters in"
	pair 0 0 "$R ping --proto pingpong --transport srq -q 4 -n 40 -s 64 -e -c -p @PORT@ -w 30 --json" \
		"$R ping --proto pingpong --transport srq -q 4 -n 40 -s 64 -c -p @PORT@ --json $IP" && {
		cp "$cli_out" "$out"
		json '
assert d["result"] == "ok" and d["transport"] == "RC" and d["srq_qps"] == 4, d
assert d["rounds"] == 40 and d["validated"] is True, d
'
	}
	# Another -q, or a RoCE client without -g: the server says what is
	# wrong, and ibv_srq_pingpong's client, whose read of the exchange
	# never ends on a closed connection, is reset and exits.
	PAIR_BOUND=15 pair 1 1 "$R ping --proto pingpong --transport srq -q 8 -p @PORT@ -w 30" \
		"ibv_srq_pingpong -d rxe0 -g 1 -n 100 -p @PORT@ $IP" "$W" &&
	has "$srv_out" "has 16 QPs and this side 8: both sides need the same -q"
	PAIR_BOUND=15 pair 1 1 "$R ping --proto pingpong --transport srq -p @PORT@ -w 30" \
		"ibv_srq_pingpong -d rxe0 -n 100 -p @PORT@ $IP" "$W" &&
	has "$srv_out" "sent no GID (all zeros), and RoCE needs one"

	# No server: a clear error within bounded time, each protocol.
	for args in "$IP" "$IP --cm" "--proto rping -c -a $IP" "--proto pingpong $IP"; do
		PORT=$((PORT + 1))
		start=$(date +%s)
		# (--timeout by name: in rping's mode -t is its TOS)
		# shellcheck disable=SC2086
		run 1 "$R" ping $args -p "$PORT" --timeout 2
		has "$err" "gave up"
		took=$(($(date +%s) - start))
		[ "$took" -le 30 ] || { echo "FAIL: '$args' gave up after ${took}s, not within 30"; fails=$((fails + 1)); }
	done

	# A peer that does not speak the pingpong exchange is refused plainly.
	PORT=$((PORT + 1))
	"$PY" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", int(sys.argv[1]))); s.listen(1)
c, _ = s.accept(); c.recv(52); c.sendall(b"0000:0000zz:000000:" + b"0" * 32 + b"\0"); c.close()
' "$PORT" &
fpid=$!
sleep 1
run 1 "$R" ping --proto pingpong "$IP" -p "$PORT" --timeout 5
has "$err" "not an ibv_*_pingpong address message: QPN: 'z' at offset 9"
wait "$fpid"
}

ud_tests() {
	# Two clients served by one server QP, over the TCP exchange and over
	# RDMA CM (RDMA_PS_UDP); one client polls, the other sleeps on events.
	for conn in "" "--cm"; do
		PORT=$((PORT + 1))
		# shellcheck disable=SC2086
		timeout 60 "$R" ud --server $conn -p "$PORT" --clients 2 -n 5 -w 30 --json >"$srv_out" 2>&1 &
		spid=$!
		sleep 0.5
		# shellcheck disable=SC2086
		timeout 60 "$R" ud "$IP" $conn -p "$PORT" -n 5 -v >"$cli2_out" 2>&1 &
		c1=$!
		# shellcheck disable=SC2086
		timeout 60 "$R" ud "$IP" $conn -p "$PORT" -n 5 -e >"$cli_out" 2>&1
		g2=$?
		wait "$c1"
		g1=$?
		wait "$spid"
		gs=$?
		if [ "$gs" -ne 0 ] || [ "$g1" -ne 0 ] || [ "$g2" -ne 0 ]; then
			echo "FAIL: ud $conn: server $gs, clients $g1 and $g2 (want 0)"
			sed 's/^/  server: /' "$srv_out" | tail -15
			sed 's/^/  client 1: /' "$cli2_out" | tail -15
			sed 's/^/  client 2: /' "$cli_out" | tail -15
			fails=$((fails + 1))
			continue
		fi
		echo "ok: ud server $conn with two clients -> 0/0/0"
		has "$cli2_out" "echo 5/5 from QP" && has "$cli2_out" "every byte checked: OK"
		has "$cli_out" "every byte checked: OK"
		cp "$srv_out" "$out"
		json '
assert d["result"] == "ok" and d["validated"] is True, d
assert len(d["clients"]) == 2 and all(c["received"] == 5 and c["echoed"] == 5 and c["rdmakit"] for c in d["clients"]), d["clients"]
assert d["received"] == 10, d
assert len(set(c["qpn"] for c in d["clients"])) == 2, d["clients"]
'
	done

	# A CM client started before its server keeps asking (the SIDR reply
	# says no listener) until the server is up.
	PORT=$((PORT + 1))
	timeout 60 "$R" ud "$IP" --cm -p "$PORT" -n 3 -t 20 >"$cli_out" 2>&1 &
	c1=$!
	sleep 2
	timeout 60 "$R" ud --server --cm -p "$PORT" -n 3 -w 30 >"$srv_out" 2>&1
	gs=$?
	wait "$c1"
	g1=$?
	if [ "$gs" -ne 0 ] || [ "$g1" -ne 0 ]; then
		echo "FAIL: ud --cm, client first: server $gs, client $g1 (want 0)"
		sed 's/^/  server: /' "$srv_out" | tail -8
		sed 's/^/  client: /' "$cli_out" | tail -8
		fails=$((fails + 1))
	else
		echo "ok: ud --cm client started 2 s before its server -> 0/0"
		has "$cli_out" "every byte checked: OK"
	fi

	# udaddy's protocol (RDMA CM, RDMA_PS_UDP, its fixed port 7174) both ways.
	pair 0 0 "$R ud --server --cm -n 5 -w 30" "udaddy -s $IP -C 5 -S 100" "$W" &&
	has "$srv_out" "5 datagrams of 100 bytes received and echoed" &&
	has "$cli_out" "data transfers complete"
	PORT=$((PORT + 1))
	timeout 60 udaddy -C 5 -S 100 >"$srv_out" 2>&1 &
	spid=$!
	sleep 1
	run 0 timeout 60 "$R" ud "$IP" --cm -n 5 -v
	has "$out" "echo 5/5 from QP" && has "$out" "5 datagrams of 100 bytes sent and echoed back"
	wait "$spid"
	gs=$?
	if [ "$gs" -ne 0 ] || ! grep -q "data transfers complete" "$srv_out"; then
		echo "FAIL: udaddy server exited $gs (want 0):"
		sed 's/^/  | /' "$srv_out"
		fails=$((fails + 1))
	else
		echo "ok: udaddy server exited 0 after serving rdmakit ud"
	fi

	# IPv6: one TCP server answers an IPv6 and an IPv4 client, each from
	# the GID carrying the address it reached (the QP's default GID, the
	# IPv4 one, cannot reach an IPv6 GID: the address handle was refused);
	# over RDMA CM the server listens on both families, for udaddy too.
	PORT=$((PORT + 1))
	timeout 60 "$R" ud --server -p "$PORT" --clients 2 -n 5 -w 30 >"$srv_out" 2>&1 &
	spid=$!
	ready "$srv_out" "$W"
	run 0 timeout 30 "$R" ud "$IP6" -p "$PORT" -n 5
	has "$out" "every byte checked: OK"
	run 0 timeout 30 "$R" ud "$IP" -p "$PORT" -n 5
	has "$out" "every byte checked: OK"
	wait "$spid"
	exit_is "ud server of an IPv6 and an IPv4 client" $? 0 "$srv_out" &&
	has "$srv_out" "10 datagrams of 100 bytes received and echoed"
	pair 0 0 "$R ud --server --cm -n 5 -p @PORT@ -w 30" "$R ud --cm $IP6 -n 5 -p @PORT@" "$W" &&
	has "$cli_out" "every byte checked: OK"
	pair 0 0 "$R ud --server --cm -n 5 -w 30" "udaddy -s $IP6 -C 5 -S 100" "$W" &&
	has "$cli_out" "data transfers complete"

	# A client killed mid-run: the server says it went away (its TCP
	# exchange closed) at once, not "nothing arrived" after its timeout.
	PORT=$((PORT + 1))
	timeout 60 "$R" ud --server -p "$PORT" -w 30 >"$srv_out" 2>&1 &
	spid=$!
	timeout 60 "$R" ud "$IP" -p "$PORT" -n 100000 >"$cli_out" 2>&1 &
	cpid=$!
	sleep 2
	killed "$cpid" "$spid" "ud client killed" "$srv_out" &&
	has "$srv_out" "of 100000 datagrams (it closed the TCP exchange)"

	# A message larger than the path MTU is refused, on either side.
	run 1 "$R" ud "$IP" -s 2000 -p "$PORT"
	has "$err" "larger than the path MTU"
	run 1 "$R" ud --server --cm -s 1500 -p "$PORT"
	has "$err" "a datagram is one packet"
	# Sizes that differ over RDMA CM: the SIDR reply that refuses carries
	# the server's reason, and the client prints it.
	pair 1 1 "$R ud --server --cm -s 100 -p @PORT@ -w 30" "$R ud $IP --cm -s 400 -p @PORT@ -t 20" &&
		has "$srv_out" "refusing" &&
		has "$cli_out" 'the server refused this client; the server says: "you send 400-byte datagrams; this server takes 100-byte ones (-s 100)"'
	# No server.
	PORT=$((PORT + 1))
	run 1 "$R" ud "$IP" -p "$PORT" -t 3
	has "$err" "gave up"
	run 1 "$R" ud "$IP" --cm -p "$PORT" -t 3
	has "$err" "nothing listens there; gave up after"
}

case $WHAT in
ping) ping_tests ;;
ud) ud_tests ;;
*) echo "usage: $0 RDMAKIT ping|ud"; exit 2 ;;
esac
finish
