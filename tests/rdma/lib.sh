# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Helpers for the CLI tests: run a command, check its exit code and output.
# Every check prints what it expected and what it got.

fails=0
# iwarp_dev: print the name of the device the tests run on when it is iWARP
# (sysfs node_type "RNIC", as Soft-iWARP's siw0): RDMAKIT_TEST_DEVICE when
# set, else the first device when every device here is iWARP (with a RoCE or
# InfiniBand one beside it the tests' default device, and RDMA CM's choice,
# may be that one). Nothing otherwise. fx_iwarp_dev() (fixture.c) is the same.
iwarp_dev() {
	_iw= _other=
	for _d in /sys/class/infiniband/*; do
		[ -r "$_d/node_type" ] || continue
		[ -z "${RDMAKIT_TEST_DEVICE:-}" ] || [ "${_d##*/}" = "$RDMAKIT_TEST_DEVICE" ] ||
			continue
		case $(cat "$_d/node_type") in
		*RNIC*) [ -n "$_iw" ] || _iw=${_d##*/} ;;
		*) _other=${_d##*/} ;;
		esac
	done
	[ -n "$_other" ] || printf '%s\n' "$_iw"
}
# IWARP: that iWARP device, empty elsewhere. A script with the label "siw"
# (tests/rdma/CMakeLists.txt) runs there the cases that apply on iWARP (QPs
# through RDMA CM only, RC only, no atomics, no immediate data) and says
# which it leaves out (iwarp_left_out).
IWARP=$(iwarp_dev)

# IWARP_CM: "--cm" on iWARP, empty elsewhere: for a run whose point is not
# the connection method (a refusal before connecting, say).
IWARP_CM=${IWARP:+--cm}

# iwarp_left_out WHAT: on iWARP, say which cases this run leaves out and why.
iwarp_left_out() {
	[ -z "$IWARP" ] || echo "# iWARP ($IWARP): left out: $1"
}

# tcp_exchange: true unless the device is iWARP, where QPs cannot connect over
# the TCP exchange: `tcp_exchange && pair ...`.
tcp_exchange() {
	[ -z "$IWARP" ]
}
# Debian's python3 directly: a version manager's shim in PATH costs seconds a
# start in the emulated guest.
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
# The server's address (guest 1 of scripts/softroce), and the first port:
# from PORT_BASE (30000 unless the script sets it before sourcing this),
# spread by the PID so that tests in parallel do not meet.
IP=${RDMAKIT_TEST_IP:-198.18.0.1}
PORT=$((${PORT_BASE:-30000} + $$ % 10000))

# run EXPECTED_RC CMD...: run CMD, keep stdout/stderr in $out/$err.
run() {
	want=$1
	shift
	json_ctx="$*"
	"$@" >"$out" 2>"$err"
	exit_is "'$*'" $? "$want" "$out" "$err"
}

# show LABEL FILE [N]: the last N (20) lines of FILE, each behind "  LABEL: ".
show() {
	sed "s/^/  $1: /" "$2" | tail -"${3:-20}"
}

# exit_is WHAT GOT WANT OUT [ERR]: WHAT exited GOT, and WANT was due; on a
# mismatch the last lines of its stdout (OUT) and stderr (ERR) are shown.
exit_is() {
	if [ "$2" -ne "$3" ]; then
		echo "FAIL: $1 exited $2, expected $3"
		show stdout "$4"
		[ -z "${5:-}" ] || show stderr "$5"
		fails=$((fails + 1))
		return 1
	fi
	echo "ok: $1 exited $2"
}

# has FILE TEXT: FILE contains TEXT.
has() {
	if ! grep -qF -- "$2" "$1"; then
		echo "FAIL: expected '$2' in $(basename "$1" | sed 's/.*/output/'), got:"
		sed 's/^/  | /' "$1" | head -20
		fails=$((fails + 1))
		return 1
	fi
}

# lacks FILE TEXT: FILE does not contain TEXT.
lacks() {
	if grep -qF -- "$2" "$1"; then
		echo "FAIL: '$2' should not be in the output:"
		grep -F -- "$2" "$1" | sed 's/^/  | /' | head -5
		fails=$((fails + 1))
		return 1
	fi
}

# json PYTHON-ASSERTIONS: check $out as JSON; 'd' is the document. The
# checks are queued (a copy of $out each) and finish() runs them all in one
# python: a python start costs seconds in the emulated guest, and a script
# makes dozens of checks. A failure names the command that made the document.
json_q=
json_n=0
json_ctx=
json() {
	[ -n "$json_q" ] || json_q=$(mktemp -d)
	json_n=$((json_n + 1))
	cp "$out" "$json_q/$json_n.json"
	printf '%s\n' "$1" >"$json_q/$json_n.py"
	printf '%s\n' "$json_ctx" >"$json_q/$json_n.ctx"
}

# json_flush: run the queued JSON checks; each failure counts in $fails.
json_flush() {
	[ "$json_n" -gt 0 ] || return 0
	"$PY" - "$json_q" "$json_n" <<'PYEOF'
import json, sys
q, n, bad = sys.argv[1], int(sys.argv[2]), 0
for i in range(1, n + 1):
    code = open('%s/%d.py' % (q, i)).read()
    try:
        d = json.load(open('%s/%d.json' % (q, i)))
        exec(code, {'json': json, 'sys': sys, 'd': d})
    except BaseException as e:
        bad += 1
        print('FAIL: JSON check %d of %d: %s: %s' % (i, n, type(e).__name__, e))
        print('  document of: %s' % open('%s/%d.ctx' % (q, i)).read().strip())
        print('  check:' + ''.join('\n  > ' + l for l in code.strip().splitlines()))
        # (a document that does not parse is shown whole: what follows it
        # is the clue)
        keep = 200 if isinstance(e, ValueError) else 40
        for l in open('%s/%d.json' % (q, i)).read().splitlines()[:keep]:
            print('  | ' + l)
print('%d of %d JSON checks passed' % (n - bad, n))
sys.exit(min(bad, 100))
PYEOF
	bad=$?
	fails=$((fails + bad))
	rm -rf "$json_q"
	json_q=
	json_n=0
}

# pair WANT_SERVER WANT_CLIENT "SERVER CMD" "CLIENT CMD" [READY-TEXT]: the
# server in the background (stdout and stderr in $srv_out), then the client
# once the server printed READY-TEXT (or at once: our clients retry); both
# exit codes checked, and the time against $PAIR_BOUND seconds when set.
# Commands are word-split; "@PORT@" is a fresh port. The client's output goes
# to $cli_out, its stderr to $cli_err when that is set (else with stdout).
# $PAIR_TIMEOUT (when set) bounds each side with timeout(1).
pair() {
	ws=$1 wc=$2
	PORT=$((PORT + 1))
	scmd=$(echo "$3" | sed "s/@PORT@/$PORT/g")
	ccmd=$(echo "$4" | sed "s/@PORT@/$PORT/g")
	tmo=${PAIR_TIMEOUT:+timeout $PAIR_TIMEOUT}
	json_ctx="server [$scmd] / client [$ccmd]"
	start=$(date +%s)
	# shellcheck disable=SC2086
	$tmo $scmd >"$srv_out" 2>&1 &
	spid=$!
	[ -n "$5" ] && ready "$srv_out" "$5"
	# shellcheck disable=SC2086
	if [ -n "${cli_err:-}" ]; then
		$tmo $ccmd >"$cli_out" 2>"$cli_err"
	else
		$tmo $ccmd >"$cli_out" 2>&1
	fi
	gc=$?
	wait "$spid"
	gs=$?
	took=$(($(date +%s) - start))
	if [ "$gs" -ne "$ws" ] || [ "$gc" -ne "$wc" ] || [ "$took" -gt "${PAIR_BOUND:-999999}" ]; then
		echo "FAIL: server [$scmd] exited $gs (want $ws), client [$ccmd] exited $gc" \
			"(want $wc), in ${took}s${PAIR_BOUND:+ (bound ${PAIR_BOUND}s)}"
		show server "$srv_out" 15
		show client "$cli_out" 15
		[ -z "${cli_err:-}" ] || show "client stderr" "$cli_err" 15
		fails=$((fails + 1))
		return 1
	fi
	echo "ok: server [$scmd] / client [$ccmd] -> $gs/$gc in ${took}s"
}

# killed VICTIM SURVIVOR LABEL FILE: SIGKILL the rdmakit that VICTIM (a
# timeout(1) in the background) runs; SURVIVOR, the other side, must exit 1
# within 5 s (a dead peer seen, not waited out); FILE is its output.
killed() {
	pkill -KILL -P "$1" rdmakit
	start=$(date +%s)
	wait "$2"
	rc=$?
	took=$(($(date +%s) - start))
	wait "$1"
	if [ "$rc" -ne 1 ] || [ "$took" -gt 5 ]; then
		echo "FAIL: $3: the other side exited $rc after ${took}s (want 1 within 5 s)"
		show other "$4"
		fails=$((fails + 1))
		return 1
	fi
	echo "ok: $3: the other side exited 1 after ${took}s"
}

# ready FILE TEXT: wait (up to 10 s) until FILE shows TEXT: a server is listening.
ready() {
	i=0
	while [ $i -lt 100 ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "FAIL: the server never printed '$2':"
	sed 's/^/  | /' "$1" | head -20
	fails=$((fails + 1))
	return 1
}

# wait_for FILE TEXT [SECONDS]: until FILE contains TEXT (a fixed string), up
# to SECONDS (default 30: an emulated guest is slow); 1 when it never does.
wait_for() {
	i=0
	while ! grep -qF -- "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -gt $((${3:-30} * 10)) ]; then
			echo "FAIL: no '$2' in $1 within ${3:-30} s; got:"
			sed 's/^/  | /' "$1" | head -20
			fails=$((fails + 1))
			return 1
		fi
		sleep 0.1
	done
}

# plain_only: true in the plain run, false in the sanitized one
# (RDMAKIT_SANITIZED=1), for a case whose code paths other cases of the same
# script already run there: `plain_only && pair ...`.
plain_only() {
	[ "${RDMAKIT_SANITIZED:-0}" != 1 ]
}

# bench_iters N [NRESULTS]: every result of the bench client's JSON in $out
# ran N iterations per QP (messages: N per QP), and the peer's check passed.
bench_iters() {
	json "
n = $1
rs = d['results']
assert d['ok'] is True, 'ok is %r' % d['ok']
assert len(rs) == ${2:-1}, 'expected ${2:-1} results, got %d' % len(rs)
for r in rs:
    assert r['iterations'] == n, 'size %d: expected %d iterations, got %d' % (r['size'], n, r['iterations'])
    assert r['messages'] == n * d['qps'], 'expected %d messages, got %d' % (n * d['qps'], r['messages'])
    assert r['peer_check'] == 'passed', 'peer check: %r' % r['peer_check']
"
}

# iwarp_devices: DEV the first iWARP device (node type RNIC), OTHER the
# first other one ("" when none).
iwarp_devices() {
	DEV= OTHER=
	for d in /sys/class/infiniband/*; do
		[ -e "$d/node_type" ] || continue
		case $(cat "$d/node_type") in
		*RNIC*) [ -n "$DEV" ] || DEV=$(basename "$d") ;;
		*) [ -n "$OTHER" ] || OTHER=$(basename "$d") ;;
		esac
	done
}

finish() {
	json_flush
	if [ "$fails" -ne 0 ]; then
		echo "$fails check(s) failed"
		exit 1
	fi
	echo "all checks passed"
}
