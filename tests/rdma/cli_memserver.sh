#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit memserver as a user runs it: option errors name the option; the
# status comes on SIGUSR1 (text and --json) and on SIGTERM/SIGINT, which end
# the server with exit 0; a port in use and a missing --state-dir fail with
# exit 1 and say why. (Sessions themselves: test_memserver.)
# Usage: cli_memserver.sh RDMAKIT
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"

PORT=$((20000 + $$ % 10000))
dir=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$dir"' EXIT

# Bad options: tests/cli/bad_options.sh (on the host). Help, and a
# state directory that cannot be opened:
run 0 "$RDMAKIT" memserver --help && has "$out" "--state-dir DIR"
run 1 "$RDMAKIT" memserver -p "$PORT" --state-dir "$dir/none" && has "$err" "open the state directory $dir/none"

# start ARGS...: a server in the background, its output in $dir/s.out/.err.
start() {
	"$RDMAKIT" memserver -p "$PORT" "$@" >"$dir/s.out" 2>"$dir/s.err" &
	spid=$!
	wait_for "$dir/s.err" "listening for RDMA CM connections on 0.0.0.0:$PORT"
}

# stop SIGNAL WANT_RC
stop() {
	kill -"$1" "$spid"
	wait "$spid"
	rc=$?
	if [ "$rc" -ne "$2" ]; then
		echo "FAIL: memserver exited $rc after SIG$1, expected $2"
		sed 's/^/  | /' "$dir/s.err"
		fails=$((fails + 1))
	else
		echo "ok: memserver exited $rc after SIG$1"
	fi
}

# Text: SIGUSR1 prints the status and the server goes on; SIGTERM ends it.
start --keep 5 --allow 198.18.0.0/24 --allow fd00::/8
kill -USR1 "$spid"
wait_for "$dir/s.out" "bytes moved: the device ports' data counters"
has "$dir/s.out" "memserver on port $PORT since "
has "$dir/s.out" "0 sessions, 0 connections, 0 bytes held"
kill -0 "$spid" && echo "ok: still running after SIGUSR1" || { echo "FAIL: gone after SIGUSR1"; fails=$((fails + 1)); }
# A second server on the same port: exit 1, the port named.
run 1 "$RDMAKIT" memserver -p "$PORT" && has "$err" "port $PORT is already in use"
stop TERM 0
[ "$(grep -c "memserver on port $PORT" "$dir/s.out")" -eq 2 ] && echo "ok: status on SIGUSR1 and on exit" ||
	{ echo "FAIL: expected two status reports"; sed 's/^/  | /' "$dir/s.out"; fails=$((fails + 1)); }
has "$dir/s.err" "stopping"

# JSON: one document per report, parsed; SIGINT ends it too.
PORT=$((PORT + 1))
start --json --max-clients 3
kill -USR1 "$spid"
wait_for "$dir/s.out" '"port_counters"'
sleep 0.5
stop INT 0
"$PY" - "$dir/s.out" "$PORT" "$IWARP" <<'EOF' && echo "ok: two JSON status documents" || { echo "FAIL: JSON status"; sed 's/^/  | /' "$dir/s.out"; fails=$((fails + 1)); }
import json, sys
text = open(sys.argv[1]).read()
dec = json.JSONDecoder()
docs, i = [], 0
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    d, i = dec.raw_decode(text, i)
    docs.append(d)
assert len(docs) == 2, len(docs)
for d in docs:
    assert d["port"] == int(sys.argv[2]), d["port"]
    assert d["sessions"] == [], d["sessions"]
    assert d["totals"]["sessions"] == 0 and d["totals"]["bytes"] == 0, d["totals"]
    assert "4-byte words" in d["port_counters_note"]
    assert isinstance(d["port_counters"], list) and d["port_counters"], d["port_counters"]
    for c in d["port_counters"]:
        assert c["device"] and c["port"] >= 1, c
        assert c["available"] == ("xmit_bytes" in c), c
        if sys.argv[3]:  # iWARP: siw has no port counters at all
            assert not c["available"] and "sent_packets" not in c, c
        else:
            assert c["available"] or "sent_packets" in c, c  # rxe: hw_counters packets
EOF

finish
