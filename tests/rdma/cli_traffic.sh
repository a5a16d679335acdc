#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The traffic group (--tclass/--dscp/--sl/--flow-label/--hop-limit) on the
# device, as a user runs it: the connection line and --json show what was
# asked, and what Soft-RoCE or RDMA CM does not carry is said once, by name.
# (What reaches the IP header is checked on a wire: tests/wire.)
# Usage: cli_traffic.sh RDMAKIT
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"

IP=${RDMAKIT_TEST_IP:-198.18.0.1}
PORT=$((20000 + $$ % 10000))
srv_out=$(mktemp) cli_out=$(mktemp) cli_err=$(mktemp)
trap 'rm -f "$out" "$err" "$srv_out" "$cli_out" "$cli_err"' EXIT

# count FILE TEXT N: TEXT on exactly N lines of FILE.
count() {
	n=$(grep -cF -- "$2" "$1")
	[ "$n" -eq "$3" ] || { echo "FAIL: '$2' on $n lines, expected $3:"; sed 's/^/  | /' "$1" | head -20; fails=$((fails + 1)); }
}

# rc over the TCP exchange: each side's fields in its connection line; the
# client's in its JSON; SL and hop limit named once as not on the wire.
pair 0 0 "$RDMAKIT rc --server -p @PORT@ --wait 30 -s 64 --dscp 10 --sl 3 --hop-limit 9" \
	"$RDMAKIT rc $IP -p @PORT@ --op write -s 64 --tclass 105 --sl 2 --flow-label 0x12345 --hop-limit 17 --json" &&
	has "$srv_out" "path MTU 1024, tclass 40 (DSCP 10, ECN 0), SL 3, hop limit 9" &&
	count "$srv_out" "SL 3 is not on the wire" 1 && count "$srv_out" "hop limit 9 is not on the wire" 1 &&
	count "$cli_err" "SL 2 is not on the wire" 1 && count "$cli_err" "flow label 0x12345 is not on the wire" 1 &&
	cp "$cli_out" "$out" && json '
assert d["result"] == "ok", d
assert d["traffic"] == {"tclass": 105, "dscp": 26, "ecn": 1, "sl": 2, "flow_label": 0x12345,
                        "hop_limit": 17}, d["traffic"]
'
# rc over RDMA CM: the client's class is CM's type of service; the server's
# QP takes the client's, and the server says so; CM names what it does not
# take (the hop limit).
pair 0 0 "$RDMAKIT rc --server --cm -p @PORT@ --wait 30 -s 64 --dscp 10" \
	"$RDMAKIT rc $IP --cm -p @PORT@ --op write -s 64 --dscp 26 --hop-limit 5" &&
	has "$cli_out" "tclass 104 (DSCP 26, ECN 0), hop limit 5" &&
	count "$cli_err" "RDMA CM sets the hop limit of the QP it connects from the route itself" 1 &&
	has "$srv_out" "QP 0x" && count "$srv_out" "carries traffic class 104 (DSCP 26), not the 40 (DSCP 10) asked for: under RDMA CM a server's QP takes the traffic class of the client's connect request" 1
# ud and ping's pingpong (UD address handles): the fields in each connection
# line; JSON fields not given are null. (bench, native ping and rping print
# theirs the same way, through the same helper.)
pair 0 0 "$RDMAKIT ud --server -p @PORT@ --wait 30 -s 64 -n 3 --dscp 12" \
	"$RDMAKIT ud $IP -p @PORT@ -s 64 -n 3 --dscp 46 --json" &&
	has "$srv_out" "tclass 48 (DSCP 12, ECN 0)" && cp "$cli_out" "$out" && json '
assert d["traffic"] == {"tclass": 184, "dscp": 46, "ecn": 0, "sl": None, "flow_label": None,
                        "hop_limit": None}, d["traffic"]
'
pair 0 0 "$RDMAKIT ping --proto pingpong --transport ud -p @PORT@ -n 3 -s 64 --wait 30 --dscp 20" \
	"$RDMAKIT ping --proto pingpong --transport ud $IP -p @PORT@ -n 3 -s 64 --dscp 22" &&
	has "$cli_out" "tclass 88 (DSCP 22, ECN 0)" && has "$srv_out" "tclass 80 (DSCP 20, ECN 0)"
finish
