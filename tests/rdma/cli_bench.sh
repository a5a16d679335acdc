#!/bin/sh
# rdmakit bench, server and client as a user runs them: every test and mode
# moves real data and the side that was written, read, sent to or operated on
# checks it (pattern, counts, the atomic word). Correctness, not timings.
# Usage: cli_bench.sh RDMAKIT
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"

IP=${RDMAKIT_TEST_IP:-198.18.0.1}
PORT=$((30000 + $$ % 10000))
srv_out=$(mktemp)
trap 'rm -f "$out" "$err" "$srv_out"' EXIT

# bench_pair "SERVER ARGS" "CLIENT ARGS": server in the background, client with
# --json into $out (stderr $err); both must exit 0 (pair in lib.sh). Generous
# waits: the guest is emulated and may share its host with other guests.
cli_out=$out cli_err=$err
bench_pair() {
	pair 0 0 "$RDMAKIT bench --server -p @PORT@ --wait 60 --timeout 60 $1" \
		"$RDMAKIT bench $IP -p @PORT@ --timeout 60 --json $2"
}

# iters N [NRESULTS]: every result ran N iterations per QP, the peer's check passed.
iters() {
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

N=100
plain_only || echo "# sanitized run: the cases marked plain_only are left to the plain run"
# Bandwidth, RC: each operation, the target side's verdict.
bench_pair "" "--test write -s 64 -n $N" && iters $N &&
	has "$srv_out" "last WRITE's 64 bytes written match the pattern"
bench_pair "" "--test send -s 4k -n $N" && iters $N &&
	has "$srv_out" "received $N of $N SENDs, last message's 4096 bytes match"
bench_pair "" "--test read -s 4k -n $N" && iters $N &&
	json "assert d['results'][0]['check'] == '4096 bytes read match the peer\\'s pattern', d['results'][0]['check']"
bench_pair "" "--test fetch-add -n $N" && iters $N &&
	has "$srv_out" "word = $N after $N FETCH_ADD, as due" &&
	json "assert d['results'][0]['check'] == 'every FETCH_ADD returned the value due', d['results'][0]['check']"
# (the server's report as CSV this time)
bench_pair "--csv" "--test cmp-swap -n $N" && iters $N &&
	has "$srv_out" "cmp-swap,bw,RC,1,8,$N,$N," &&
	has "$srv_out" "word = $N after $N CMP_SWAP, as due"
# Multi-packet messages (rxe's MTU is 1024) and an inline-sized one in one sweep.
plain_only && bench_pair "" "--test write --sizes 256..1k -n 20" && iters 20 3 &&
	has "$srv_out" "last WRITE's 1024 bytes written match the pattern" &&
	has "$srv_out" "last WRITE's 256 bytes written match the pattern"
bench_pair "" "--test send --sizes 2,1000,64k -n 20" && iters 20 3 &&
	has "$srv_out" "received 20 of 20 SENDs, last message's 65536 bytes match"

# Latency: samples = iterations, the ponger answered every ping.
# (sanitized: read and fetch-add only; send and write share their paths)
lat_tests="send write read fetch-add"
plain_only || lat_tests="read fetch-add"
for t in $lat_tests; do
	bench_pair "" "--test $t --mode lat -n 50" && iters 50 &&
		json "
l = d['results'][0]['latency_us']
assert l['samples'] == 50, 'samples %d' % l['samples']
assert 0 < l['min'] <= l['median'] <= l['p99'] <= l['p99_9'] <= l['max'], l"
done
has "$srv_out" "word = 50 after 50 FETCH_ADD, as due"

# UC and UD.
plain_only && bench_pair "" "--transport uc --test write -s 4k -n $N" && iters $N &&
	has "$srv_out" "last WRITE's 4096 bytes written match the pattern"
plain_only && bench_pair "" "--transport uc --test send -s 4k -n $N" && iters $N &&
	has "$srv_out" "SENDs, last message's 4096 bytes match"
bench_pair "" "--transport ud --test send -s 1k -n $N" && iters $N &&
	has "$srv_out" "received $N of $N SENDs"
bench_pair "" "--transport ud --test send --mode lat -n 50" && iters 50
bench_pair "" "--transport uc --test write --mode lat -n 50" && iters 50

# Several QPs, both directions, RDMA CM, a duration, CSV.
plain_only && bench_pair "" "--test fetch-add --qps 2 -n $N" && iters $N &&
	has "$srv_out" "words (per QP), total = $((2 * N)) after $((2 * N)) FETCH_ADD"
plain_only && bench_pair "" "--test send --qps 2 -s 256 -n $N" && iters $N &&
	has "$srv_out" "received $((2 * N)) of $((2 * N)) SENDs"
plain_only && bench_pair "" "--test send --bidir -s 256 -n $N" && iters $N &&
	has "$srv_out" "received $N of $N SENDs" &&
	json "r = d['results'][0]; assert r['received'] == $N and r['peer_messages'] == $N, r"
bench_pair "" "--test write --bidir --qps 2 -s 1k -n $N" && iters $N &&
	has "$srv_out" "last WRITE's 1024 bytes written match the pattern"
# Threads, each driving its own QPs and CQs: every QP's messages counted.
plain_only && bench_pair "" "--test write --qps 4 --threads 2 -s 4k -n $N" && iters $N &&
	has "$srv_out" "last WRITE's 4096 bytes written match the pattern" &&
	json "assert d['threads'] == 2 and d['qps'] == 4, d"
plain_only && bench_pair "" "--test send --qps 2 --threads 2 -s 256 -n $N" && iters $N &&
	has "$srv_out" "received $((2 * N)) of $((2 * N)) SENDs"
bench_pair "" "--test fetch-add --qps 3 --threads 3 -n $N" && iters $N &&
	has "$srv_out" "words (per QP), total = $((3 * N)) after $((3 * N)) FETCH_ADD"
bench_pair "" "--test read --qps 2 --threads 2 -s 1k --duration 1" &&
	json "
r = d['results'][0]
assert r['iterations'] > 0 and r['messages'] >= 2 * r['iterations'] and r['peer_check'] == 'passed', r"
bench_pair "--cm" "--cm --test write -s 4k -n $N" && iters $N &&
	json "assert d['connection'] == 'rdma_cm', d['connection']" &&
	has "$srv_out" "last WRITE's 4096 bytes written match the pattern"
plain_only && bench_pair "" "--test write -s 64 --duration 1" &&
	json "
r = d['results'][0]
assert r['iterations'] > 0 and r['duration_ms'] == 1000 and r['peer_check'] == 'passed', r
assert 0.9 < r['seconds'] < 5, r['seconds']"
bench_pair "" "--test write -s 64 --wr-api off --inline 0 -n 50 --post-list 4 --signal-every 8 --ack-timeout 18" &&
	iters 50 && json "fp = d['fast_path']; assert fp['wr_api'] is False and fp['inline_granted'] == 0 and fp['post_list'] == 4 and fp['ack_timeout'] == 18, fp"

# Bad options: tests/cli/bad_options.sh (on the host).
finish
