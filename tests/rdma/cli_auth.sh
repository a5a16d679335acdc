#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit rc --auth-file: a server hands its buffer's address and rkey only
# to a client that proves the shared secret, over the TCP exchange and RDMA
# CM. Every refusal is checked on both sides, with its message, within a
# bound. Usage: cli_auth.sh RDMAKIT
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"

BOUND=20 # seconds any run, refused or not, may take
iwarp_left_out "the runs over the TCP exchange (iWARP QPs connect only through RDMA CM)"
# The whole flow (--op all) has atomics: on iWARP, which has none, a READ.
flow=all
[ -z "$IWARP" ] || flow=read
dir=$(mktemp -d)
srv_out=$dir/server.out cli_out=$dir/client.out
trap 'rm -rf "$out" "$err" "$dir"' EXIT

# Secrets: two different ones, private; and files that must be refused.
printf 'rdmakit test secret %s\n' "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" >"$dir/good"
cp "$dir/good" "$dir/same"
printf 'some other secret, 32 bytes long\n' >"$dir/other"
printf 'rdmakit test secret' >"$dir/open"
: >"$dir/empty"
chmod 600 "$dir/good" "$dir/same" "$dir/other" "$dir/empty"
chmod 644 "$dir/open"

# rc_pair WANT_SERVER WANT_CLIENT "SERVER ARGS" "CLIENT ARGS": as in cli_rc.sh,
# every run within BOUND seconds.
PAIR_BOUND=$BOUND
rc_pair() {
	pair "$1" "$2" "$RDMAKIT rc --server -p @PORT@ --wait 30 $3" "$RDMAKIT rc $IP -p @PORT@ $4"
}

for conn in "" "--cm"; do
	[ -z "$conn" ] && ! tcp_exchange && continue
	# The right secret on both sides (two copies of one file): the whole flow.
	rc_pair 0 0 "$conn --auth-file $dir/good" "$conn --op $flow --auth-file $dir/same" &&
	has "$cli_out" "every byte checked: OK" && has "$srv_out" "every byte checked: OK" &&
	has "$cli_out" "server exposes 4096 bytes" &&
	lacks "$cli_out" "rcvd_rnr_err" && lacks "$srv_out" "rcvd_rnr_err"

	# A wrong secret: refused by the server, told to the client, which never
	# learns the buffer.
	rc_pair 1 1 "$conn --auth-file $dir/good" "$conn --op write --auth-file $dir/other" &&
	has "$srv_out" "authentication failed: its response does not match this server's shared secret" &&
	has "$cli_out" "the server refused: authentication failed (wrong shared secret" &&
	lacks "$cli_out" "server exposes" && lacks "$srv_out" "exposing"

	# No secret on the client; the server requires one.
	# Under ASan/UBSan the refusals below once, over the TCP exchange.
	[ -n "$conn" ] && ! plain_only && continue
	rc_pair 1 1 "$conn --auth-file $dir/good" "$conn --op read" &&
	has "$srv_out" "this server requires" &&
	has "$cli_out" "the server requires a shared secret: start the client with --auth-file" &&
	lacks "$cli_out" "server exposes"

	# A secret on the client only: the server cannot authenticate; both say so.
	rc_pair 1 1 "$conn" "$conn --op read --auth-file $dir/good" &&
	has "$srv_out" "authenticates with a shared secret (--auth-file), and this server has none" &&
	has "$cli_out" "the server has no shared secret: start it with --auth-file too"
done

# Authenticated, then refused for what it asks: with CM the request is judged
# only after the secret, so the refusal travels on the control channel.
for conn in "" "--cm"; do
	[ -z "$conn" ] && ! tcp_exchange && continue
	[ -n "$conn" ] && ! plain_only && continue
	rc_pair 1 1 "$conn --op read --auth-file $dir/good" "$conn --op write --auth-file $dir/same" &&
	has "$cli_out" "serves only read" && lacks "$cli_out" "server exposes"
done

# --json still one valid document with authentication on.
tcp_exchange && rc_pair 0 0 "--json --auth-file $dir/good" "--json --op read --auth-file $dir/same" && {
	cp "$cli_out" "$out"
	json 'assert d["result"] == "ok", d'
}

# Secret files that are refused before anything is sent, on either side.
sides="--server $IWARP_CM -p $((PORT + 100))|$IP $IWARP_CM -p $((PORT + 100))"
plain_only || sides="--server $IWARP_CM -p $((PORT + 100))" # one file loader for both sides
IFS='|'
set -- $sides
unset IFS
for side in "$@"; do
	# shellcheck disable=SC2086
	run 1 "$RDMAKIT" rc $side --auth-file "$dir/open" && has "$err" "mode 0644" &&
	has "$err" "chmod 600 $dir/open"
	# shellcheck disable=SC2086
	run 1 "$RDMAKIT" rc $side --auth-file "$dir/empty" && has "$err" "empty"
	# shellcheck disable=SC2086
	run 1 "$RDMAKIT" rc $side --auth-file "$dir/missing" && has "$err" "No such file"
	lacks "$err" "rdmakit test secret"
done

finish
