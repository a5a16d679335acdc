#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every command's usage errors: refused before anything is opened, exit 2,
# the message naming what was wrong. No device needed, so this runs on the
# host (label unit, and under ASan/UBSan in that stage) rather than in the
# emulated guest, where each start of an instrumented rdmakit took seconds.
# Usage: bad_options.sh RDMAKIT
RDMAKIT=$1
R=$RDMAKIT
. "$(dirname "$0")/../rdma/lib.sh"
IP=198.18.0.1
PORT=20000

# devices, and the command table
run 2 "$RDMAKIT" devices --bogus
has "$err" "unknown option --bogus"
run 2 "$RDMAKIT" devices extra
has "$err" "unexpected argument 'extra'"
run 2 "$RDMAKIT" nosuchcommand
has "$err" "unknown command 'nosuchcommand'"

# old spellings name the new one (issue 16: one letter, one meaning)
run 2 "$RDMAKIT" bench "$IP" -t write
has "$err" "rdmakit bench: -t is perftest's --tx-depth; rdmakit: --tx-depth N; the timeout is --timeout SEC, the test -o/--op"
run 2 "$RDMAKIT" bench "$IP" --test write && has "$err" "rdmakit bench: --test is now -o/--op"
run 2 "$RDMAKIT" bench "$IP" --sizes 4k && has "$err" "rdmakit bench: --sizes is now -s/--size"
run 2 "$RDMAKIT" bench "$IP" --iters 10 && has "$err" "rdmakit bench: --iters is now -n/--count"
run 2 "$RDMAKIT" rc --server -m dm && has "$err" "rdmakit rc: -m is now --mem"
run 2 "$RDMAKIT" share shm -p 2 && has "$err" "rdmakit share: -p is now -P/--procs"
run 0 "$RDMAKIT" bench --version && has "$out" "rdmakit "
run 0 "$RDMAKIT" blk --version && has "$out" "rdmakit "

# perftest's spellings (issue 35): those that mean one of bench's options
# one to one are that option (a value out of its range is refused naming
# it), -F is taken with a note, -t (perftest's --tx-depth, once taken as a
# 128 s --timeout) and -e are refused naming bench's way.
run 0 "$R" bench "$IP" -x 1 -R -a -u 20 -l 4 -r 100 -Q 8 --report_gbits --help
run 0 "$R" bench "$IP" --all --rdma_cm --qp-timeout 20 --post_list 4 --cq-mod 8 \
	--inline_size 64 --use_hugepages --bidirectional --ib-dev rxe0 --help
run 2 "$R" bench "$IP" -x 300 && has "$err" "rdmakit bench: option --gid-index: 300 is outside the range -1..255"
run 2 "$R" bench "$IP" -u 32 && has "$err" "option --ack-timeout: 32 is outside the range -1..31"
run 2 "$R" bench "$IP" -r 70000 && has "$err" "option --rx-depth: 70000 is outside"
run 2 "$R" bench "$IP" -l 65 && has "$err" "option --post-list: 65 is outside"
run 2 "$R" bench "$IP" -Q 70000 && has "$err" "option --signal-every: 70000 is outside"
run 2 "$R" bench "$IP" --inline_size 70000 && has "$err" "option --inline: 70000 is outside"
# -a is --size 2..8M: an atomic test, on 8 bytes, says the sizes it got
run 2 "$R" bench "$IP" -a -o cmp-swap && has "$err" "option --size: atomics work on 8 bytes (got 2)"
run 2 "$R" bench "$IP" --use_hugepages --odp -T ud -o send && has "$err" "option --odp: for --transport rc only"
run 2 "$R" bench "$IP" -t 128 && has "$err" "-t is perftest's --tx-depth; rdmakit: --tx-depth N" &&
	has "$err" "the timeout is --timeout SEC"
run 2 "$R" bench "$IP" -e && has "$err" "-e/--events is perftest's: bench polls"
# -R is --cm: the same outcome, whatever it is on this host
run_out() { "$@" >/dev/null 2>&1; echo "rc=$?"; "$@" 2>&1 | sed 's/[0-9]\{1,\}/N/g'; }
if [ "$(run_out "$R" bench "$IP" -R -p 1 --timeout 1)" != "$(run_out "$R" bench "$IP" --cm -p 1 --timeout 1)" ]; then
	echo "FAIL: bench -R is not bench --cm"
	fails=$((fails + 1))
fi
run 0 "$R" bench "$IP" -F --help && has "$err" "-F (perftest's --CPU-freq) ignored"
run 0 "$R" bench --help && lacks "$out" "--rdma_cm" && lacks "$out" "-t, --timeout"
# ibv_rc_pingpong's -t (--ts) and -j (--dm) are not rdmakit's --timeout and --json there
run 2 "$R" ping --proto pingpong "$IP" -t 5 && has "$err" "-t/--ts (completion timestamps) is ibv_rc_pingpong's, not rdmakit's; the timeout is --timeout SEC"
run 2 "$R" ping --proto pingpong "$IP" -j && has "$err" "-j/--dm (device memory) is ibv_rc_pingpong's" &&
	has "$err" "JSON is --json"
run 2 "$R" ping --proto pingpong "$IP" -o && has "$err" "-o/--odp is ibv_rc_pingpong's"
run 2 "$R" ping --proto pingpong "$IP" -N && has "$err" "-N/--new_send is ibv_rc_pingpong's"
run 0 "$R" ping --proto pingpong --timeout 5 --json --help

# --help (issue 35 item 5): one default, the real one, shown once; no
# option speaks of one its command does not take; 80 columns when not a
# terminal (RDMAKIT_HELP_WIDTH=400: one line per option, to read them).
W=RDMAKIT_HELP_WIDTH=400
run 0 env $W "$R" bench --help && lacks "$out" "(default: 0)" &&
	has "$out" "receives the SRQ keeps posted (at most the device's max_srq_wr) (default: 512)" &&
	has "$out" "send queue depth per QP (default: 0: 512 for bw, 64 for lat)" &&
	has "$out" "--clients N" && has "$out" "(default: none: one client at a time)" &&
	lacks "$out" "not given:"
for t in "rc" "ud" "ping" "ping --proto rping" "ping --proto pingpong" "counters"; do
	# shellcheck disable=SC2086
	run 0 env $W "$R" $t --help && lacks "$out" "(default: 0)"
done
run 0 env $W "$R" ping --proto rping --help && has "$out" "each takes its own options) (default: native)" &&
	has "$out" "DSCP 26); the RDMA CM type of service (default: not set" && lacks "$out" "with --cm the"
run 0 env $W "$R" ping --proto pingpong --help && has "$out" "(default: native)" &&
	lacks "$out" "RDMA CM type of service"
run 0 env $W "$R" blk attach --help && lacks "$out" "with --cm"
run 0 env $W "$R" ud --help && lacks "$out" "--rnr-retry" && has "$out" "with --cm the RDMA CM type of service"
for t in "bench" "rc" "ping --proto rping" "memserver" "share" "blk attach" "qp-states"; do
	# shellcheck disable=SC2086
	run 0 "$R" $t --help
	if awk 'length > 80 { exit 1 }' "$out"; then :; else
		echo "FAIL: rdmakit $t --help has lines over 80 columns:"
		awk 'length > 80' "$out" | head -3
		fails=$((fails + 1))
	fi
done

# Small ones (issue 35 item 6)
# rdmakit mesh: a usage error exits 2, as every command's (it was 3); where
# rdmakit-mesh is built (its options are parsed before MPI starts)
if "$R" mesh --help >/dev/null 2>&1; then
	run 2 "$R" mesh --bogus && has "$err" "unknown option --bogus"
	run 2 "$R" mesh --schedule ring && has "$err" "'ring' is not one of pairs, shift, serial"
	run 2 "$R" mesh -t 500 && has "$err" "is now --wc-timeout MS"
	run 0 "$R" mesh --help && has "$out" "2 usage error"
fi
# counters --watch takes seconds with fractions (its examples were counts)
run 0 "$R" counters --watch 0.5 --help
run 0 "$R" counters --watch 0.5 -n 3 --help
run 2 "$R" counters --watch 0.05 && has "$err" "option --watch: 0.05 is outside the range 0.1..86400"
run 2 "$R" counters --watch 1k && has "$err" "not a number of seconds (examples: 2, 0.2)"
# rdmakit help CMD [WORDS] is CMD [WORDS] --help
run 0 "$R" help bench && has "$out" "usage: rdmakit bench --server" && lacks "$out" "commands:"
run 0 "$R" help ping --proto rping && has "$out" "-C, --count N"
run 0 "$R" help blk attach && has "$out" "the disk's size"
run 2 "$R" help nosuch && has "$err" "rdmakit: unknown command 'nosuch'"
run 0 "$R" help && has "$out" "commands:"
# ud: -C is udaddy's message count (--count), --clients has no letter (as rc's, bench's)
run 2 "$R" ud "$IP" -C 0 && has "$err" "rdmakit ud: option --count: 0 is outside the range 1..100000"
run 0 "$R" ud "$IP" -C 2 --help
run 0 env RDMAKIT_HELP_WIDTH=400 "$R" ud --help && has "$out" "      --clients N" && lacks "$out" "-C, --clients"
# memserver's and blk list's --json is -j, as everywhere
run 2 "$R" memserver -j --max-size 1x && has "$err" "option --max-size"
run 0 "$R" memserver -j --help
run 0 "$R" blk list -j --help
# a client takes one HOST: a second is named, not "give the server's address"
for cmd in bench rc ud; do
	run 2 "$R" $cmd "$IP" extra && has "$err" "rdmakit $cmd: one HOST only ('extra' is extra)" &&
		lacks "$err" "give the server's address"
done

# loopback
run 2 "$RDMAKIT" loopback -n 10x
has "$err" "--count"
has "$err" "'10x'"
run 2 "$RDMAKIT" loopback --size -1
has "$err" "--size"
run 2 "$RDMAKIT" loopback --size 0
has "$err" "--size"
run 2 "$RDMAKIT" loopback --size 2G
has "$err" "outside the range"
run 2 "$RDMAKIT" loopback --sge 65
run 2 "$RDMAKIT" loopback -s 2 --sge 4
has "$err" "do not fit"
run 2 "$RDMAKIT" loopback -n
has "$err" "needs a value"

# counters
run 2 "$RDMAKIT" counters -i 0
has "$err" "--ib-port"
run 2 "$RDMAKIT" counters --watch 0
has "$err" "option --watch: 0 is outside the range"
run 2 "$RDMAKIT" counters --watch junk
has "$err" "option --watch: 'junk' is not a number"
run 2 "$RDMAKIT" counters --watch
has "$err" "needs a value"
run 2 "$RDMAKIT" counters -n 3
has "$err" "give --watch"
run 2 "$RDMAKIT" counters extra
has "$err" "unexpected argument 'extra'"
run 2 "$RDMAKIT" counters --bogus
has "$err" "unknown option --bogus"

# qp-states
run 2 "$RDMAKIT" qp-states extra
has "$err" "unexpected argument 'extra'"
run 2 "$RDMAKIT" qp-states -g x
has "$err" "--gid-index"

# rc
run 2 "$RDMAKIT" rc "$IP" --mem dm && has "$err" "device memory is for the server's buffer"
# RDMA CM keeps its own RNR and transport retry counts: refused, not ignored.
run 2 "$R" rc "$IP" --cm --rnr-retry 1 && has "$err" "rdmakit rc: option --rnr-retry is for the TCP exchange's QP; over RDMA CM"
run 2 "$R" rc --server --cm --retry 3 && has "$err" "option --retry is for the TCP exchange's QP"
# --mem KIND and --odp (rc, bench, memserver): names checked before anything is opened
run 2 "$R" rc --server --mem huge && has "$err" "rdmakit rc: option --mem: 'huge' is not one of host, hugepage, memfd, memfd-huge, dm, auto"
run 2 "$R" rc --server --mem && has "$err" "needs a value"
run 2 "$R" bench "$IP" --mem dm && has "$err" "rdmakit bench: option --mem: 'dm' is not one of host, hugepage, memfd, memfd-huge, auto here"
run 2 "$R" bench "$IP" --mem HOST && has "$err" "'HOST' is not one of"
run 2 "$R" bench "$IP" --odp --transport ud --op send && has "$err" "option --odp: for --transport rc only"
run 2 "$R" bench "$IP" --odp=yes && has "$err" "--odp"
run 2 "$R" memserver --mem dm && has "$err" "rdmakit memserver: option --mem: 'dm' is not one of host, hugepage, memfd, memfd-huge, auto here"
run 2 "$R" memserver --mem hugepage --state-dir /nonexistent && has "$err" "with --state-dir the sessions live in its files"
run 2 "$RDMAKIT" rc
has "$err" "give the server's address"
# --persist: for a server, which waits until stopped
run 2 "$R" rc "$IP" --persist && has "$err" "rdmakit rc: option --persist is for the server (--server)"
run 2 "$R" rc --server --persist --wait 5 && has "$err" "--wait 5 is for a server of one client"
run 2 "$R" ping "$IP" --persist && has "$err" "rdmakit ping: option --persist is for the server"
run 2 "$R" ping --server --persist -w 3 && has "$err" "--wait 3 is for a server of one client"
run 2 "$R" bench "$IP" --persist && has "$err" "rdmakit bench: option --persist is for the server"
run 2 "$R" bench --server --persist --wait 9 && has "$err" "--wait 9 is for a server of one client"
# --clients N: the rc and bench servers' clients at once, 1..64, not with --persist
for cmd in rc bench; do
	run 2 "$R" $cmd --server --clients 0 && has "$err" "--clients" && has "$err" "1..64"
	run 2 "$R" $cmd --server --clients 65 && has "$err" "--clients" && has "$err" "1..64"
	run 2 "$R" $cmd --server --clients 4x && has "$err" "--clients"
	run 2 "$R" $cmd "$IP" --clients 4 &&
		has "$err" "rdmakit $cmd: option --clients is for the server (--server)"
	run 2 "$R" $cmd --server --clients 4 --persist &&
		has "$err" "rdmakit $cmd: options --clients and --persist exclude each other"
done
run 2 "$R" bench --server --clients 2 --csv && has "$err" "--clients reports in text or --json"
run 0 "$R" rc --help && has "$out" "--clients N"
run 0 "$R" bench --help && has "$out" "--clients N"
run 2 "$RDMAKIT" rc "$IP" --op bogus
has "$err" "--op"
run 2 "$RDMAKIT" rc "$IP" -p 70000
has "$err" "--port"
run 2 "$RDMAKIT" rc "$IP" -s 10x
run 2 "$RDMAKIT" rc --server extra
run 2 "$RDMAKIT" rc "$IP" --inject no-access
run 2 "$RDMAKIT" rc --server --auth-file ""
has "$err" "option --auth-file: an empty value"

# share
run 2 "$RDMAKIT" share shm -P 17
has "$err" "--procs"
run 2 "$RDMAKIT" share shm -s 1x
has "$err" "--size"
run 2 "$RDMAKIT" share
has "$err" "import, shm or fork"
run 2 "$RDMAKIT" share pipes
has "$err" "unknown way 'pipes'"

# bench
run 2 "$RDMAKIT" bench "$IP" --op foo && has "$err" "option --op: 'foo' is not one of"
run 2 "$RDMAKIT" bench "$IP" --mode fast && has "$err" "option --mode: 'fast'"
run 2 "$RDMAKIT" bench "$IP" --transport ud --op read && has "$err" "UD has no read"
run 2 "$RDMAKIT" bench "$IP" --transport uc --op fetch-add && has "$err" "UC has no fetch-add"
run 2 "$RDMAKIT" bench "$IP" --mode lat --qps 2 && has "$err" "latency runs on one QP"
run 2 "$RDMAKIT" bench "$IP" --mode lat --bidir && has "$err" "--bidir is for bandwidth"
run 2 "$RDMAKIT" bench "$IP" --threads 2 && has "$err" "each thread needs a QP of its own"
run 2 "$RDMAKIT" bench "$IP" --mode lat --threads 2 && has "$err" "threads are for bandwidth"
run 2 "$RDMAKIT" bench "$IP" --qps 2 --threads 17 && has "$err" "option --threads"
run 2 "$RDMAKIT" bench "$IP" --qps 1025 && has "$err" "option --qps: 1025 is outside the range 1..1024"
# a server takes the run options to check the client's against (perftest
# habit), each checked as the client's are
run 2 "$RDMAKIT" bench --server --threads 2 && has "$err" "each thread needs a QP of its own"
run 2 "$RDMAKIT" bench --server --op foo && has "$err" "option --op: 'foo' is not one of"
run 2 "$RDMAKIT" bench --server --mode fast && has "$err" "option --mode: 'fast'"
run 2 "$RDMAKIT" bench --server --transport ud --op read && has "$err" "UD has no read"
run 2 "$RDMAKIT" bench --server --mode lat --qps 2 && has "$err" "latency runs on one QP"
run 2 "$RDMAKIT" bench --server --size 3..8 && has "$err" "not a sweep of powers of two"
run 2 "$RDMAKIT" bench --server --op cmp-swap -s 64 && has "$err" "atomics work on 8 bytes"
run 2 "$RDMAKIT" bench --server -n 5 --duration 1 && has "$err" "not both"
run 2 "$RDMAKIT" bench --server --qps 0 && has "$err" "option --qps"
run 2 "$RDMAKIT" bench "$IP" --size 3..8 && has "$err" "not a sweep of powers of two"
run 2 "$RDMAKIT" bench "$IP" --size 64,,4k && has "$err" "not a list of sizes"
run 2 "$RDMAKIT" bench "$IP" --size 0 && has "$err" "option --size"
run 2 "$RDMAKIT" bench "$IP" -n 10x && has "$err" "option --count: '10x' is not a number"
run 2 "$RDMAKIT" bench "$IP" -n 5 --duration 1 && has "$err" "not both"
run 2 "$RDMAKIT" bench "$IP" --op cmp-swap -s 64 && has "$err" "atomics work on 8 bytes"
run 2 "$RDMAKIT" bench "$IP" --json --csv && has "$err" "exclude each other"
run 2 "$RDMAKIT" bench "$IP" --wr-api maybe && has "$err" "option --wr-api"
run 2 "$RDMAKIT" bench "$IP" --ack-timeout 32 && has "$err" "option --ack-timeout"
# bench soak: --duration 0 and --interval
run 2 "$RDMAKIT" bench "$IP" --duration 5 --interval 0 && has "$err" "option --interval: 0 is outside the range 1..3600"
run 2 "$RDMAKIT" bench "$IP" --duration 5 --interval -1 && has "$err" "option --interval: '-1' is not a non-negative number"
run 2 "$RDMAKIT" bench "$IP" --duration 5 --interval 1s && has "$err" "option --interval: '1s' is not a number"
run 2 "$RDMAKIT" bench "$IP" --duration 5 --interval abc && has "$err" "option --interval: 'abc' is not a number"
run 2 "$RDMAKIT" bench "$IP" --interval 1 && has "$err" "option --interval: needs --duration SEC (0: until stopped)"
run 2 "$RDMAKIT" bench "$IP" --interval 1 -n 1000 && has "$err" "a run of --count has no intervals"
run 2 "$RDMAKIT" bench "$IP" --duration 2 --interval 5 && has "$err" "option --interval: 5 s is longer than --duration 2 s"
run 2 "$RDMAKIT" bench "$IP" --duration 5 --interval 1 --csv && has "$err" "not CSV"
run 2 "$RDMAKIT" bench "$IP" --duration -1 && has "$err" "option --duration: -1 is outside the range 0..3600"
run 2 "$RDMAKIT" bench "$IP" --duration x && has "$err" "option --duration: 'x' is not a number"
run 2 "$RDMAKIT" bench "$IP" --duration 0 --size 64,4k && has "$err" "--duration 0 runs one size until stopped"
run 2 "$RDMAKIT" bench "$IP" --duration 0 --bidir && has "$err" "--duration 0 is not for --bidir"
run 2 "$RDMAKIT" bench "$IP" --duration 0 -n 10 && has "$err" "not both"
run 2 "$RDMAKIT" bench --server --interval 1 && has "$err" "give it to the client"
run 2 "$RDMAKIT" bench --server --duration 0 -n 10 && has "$err" "not both"
# bench: units and thresholds (RATE, N and US each named when bad)
run 2 "$R" bench "$IP" --units gb && has "$err" "option --units: 'gb' is not one of Gb (10^9 bits/s), GB (10^9 bytes/s), MiB"
run 2 "$R" bench "$IP" --units Mbit && has "$err" "option --units: 'Mbit' is not one of"
run 2 "$R" bench "$IP" --expect-bw fast && has "$err" "option --expect-bw: 'fast' is not a rate (a number in MiB, or with a unit: 90Gb"
run 2 "$R" bench "$IP" --units Gb --expect-bw 9x && has "$err" "option --expect-bw: '9x' is not a rate (a number in Gb,"
run 2 "$R" bench "$IP" --expect-bw -5Gb && has "$err" "option --expect-bw: '-5Gb' is not a rate"
run 2 "$R" bench "$IP" --expect-bw 100gb && has "$err" "option --expect-bw: '100gb' is not a rate"
run 2 "$R" bench "$IP" --expect-bw 1e9 && has "$err" "option --expect-bw: '1e9' is not a rate"
run 2 "$R" bench "$IP" --expect-bw 0Gb && has "$err" "option --expect-bw: '0Gb' is not above 0"
run 2 "$R" bench "$IP" --expect-bw 2000000Gb && has "$err" "option --expect-bw: '2000000Gb' is above the maximum 1000000 Gb/s"
run 2 "$R" bench "$IP" --expect-bw && has "$err" "needs a value"
run 2 "$R" bench "$IP" --min-link-pct 101 && has "$err" "option --min-link-pct: '101' is above the maximum 100"
run 2 "$R" bench "$IP" --min-link-pct -1 && has "$err" "option --min-link-pct: '-1' is not a number"
run 2 "$R" bench "$IP" --min-link-pct 90% && has "$err" "option --min-link-pct: '90%' is not a number"
run 2 "$R" bench "$IP" --mode lat --max-lat-p99 5us && has "$err" "option --max-lat-p99: '5us' is not a number"
run 2 "$R" bench "$IP" --mode lat --max-lat-p99 0 && has "$err" "option --max-lat-p99: '0' is not above 0"
run 2 "$R" bench "$IP" --max-lat-p99 10 && has "$err" "--max-lat-p99 grades latency (--mode lat)"
run 2 "$R" bench "$IP" --mode lat --expect-bw 1Gb && has "$err" "--expect-bw and --min-link-pct grade bandwidth (--mode bw)"
run 2 "$R" bench "$IP" --mode lat --min-link-pct 50 && has "$err" "grade bandwidth (--mode bw)"
run 2 "$R" bench --server --expect-bw 1Gb && has "$err" "give --expect-bw, --min-link-pct and --max-lat-p99 to the client"
run 0 "$R" bench --help && has "$out" "--expect-bw RATE" && has "$out" "3 (RK_EXIT_GATE)" &&
	has "$out" "Gb (10^9 bits/s, as perftest's"

# ping
run 2 "$R" ping
has "$err" "give the server's address"
run 2 "$R" ping "$IP" -n 10x
has "$err" "--count"
run 2 "$R" ping --proto bogus "$IP"
has "$err" "--proto: 'bogus' is not native, rping or pingpong"
run 2 "$R" ping --proto rping -a "$IP"
has "$err" "needs -s (server) or -c (client)"
run 2 "$R" ping --proto rping -c
has "$err" "needs the server's address (-a ADDR)"
run 2 "$R" ping --proto rping -c -a "$IP" -S 10
has "$err" "--size"
run 2 "$R" ping --proto pingpong --transport xx "$IP"
has "$err" "option --transport: 'xx' is not one of rc, uc, ud"
run 2 "$R" ping --proto pingpong -m 1000 "$IP"
has "$err" "--mtu: 1000 is not"
run 2 "$R" ping --proto pingpong -q 4 "$IP"
has "$err" "option --num-qp (-q) is ibv_srq_pingpong's: give --transport srq"
run 2 "$R" ping --proto pingpong --transport srq -q 257 "$IP"
has "$err" "option --num-qp: 257 is outside the range 1..256"
run 2 "$R" ping --proto pingpong --transport srq -n 10 "$IP"
has "$err" "option --iters: 10 exchanges are fewer than the 16 QPs (-q)"
run 2 "$R" ping --proto pingpong --transport srq -I 0.1 "$IP"
has "$err" "option --interval: no pause between rounds with --transport srq"
run 2 "$R" ping --server "$IP"
has "$err" "takes no HOST"
run 2 "$R" ping "$IP" --max-rtt-p99 abc && has "$err" "option --max-rtt-p99: 'abc' is not a number"
run 2 "$R" ping "$IP" --max-rtt-p99 -3 && has "$err" "option --max-rtt-p99: '-3' is not a number"
run 2 "$R" ping "$IP" --max-rtt-p99 2e9 && has "$err" "option --max-rtt-p99: '2e9' is not a number"
run 2 "$R" ping "$IP" --max-rtt-p99 2000000000 && has "$err" "'2000000000' is above the maximum 1000000000"
run 2 "$R" ping --server --max-rtt-p99 10 && has "$err" "give --max-rtt-p99 to the client"
run 2 "$R" ping --proto pingpong --max-rtt-p99 10 && has "$err" "give --max-rtt-p99 to the client"
run 2 "$R" ping --proto rping -s --max-rtt-p99 10 && has "$err" "give --max-rtt-p99 to the client"
run 2 "$R" ping "$IP" --max-lat-p99 10 && has "$err" "unknown option --max-lat-p99"
run 2 "$R" ping "$IP" --units Gb && has "$err" "unknown option --units"
run 0 "$R" ping --help && has "$out" "--max-rtt-p99 US" && has "$out" "3 (RK_EXIT_GATE)"

# ud
run 2 "$R" ud
has "$err" "give the server's address"
run 2 "$R" ud "$IP" --clients 2
has "$err" "--clients is the server's"
run 2 "$R" ud "$IP" -n 0
has "$err" "--count"
run 2 "$R" ud --server -s 5000
has "$err" "--size"

# the traffic group (--tclass/--dscp/--sl/--flow-label/--hop-limit): ranges,
# and --tclass and --dscp disagreeing, on every command that connects
for cmd in "rc $IP" "bench $IP" "ping $IP" "ping --proto rping -c -a $IP" "ping --proto pingpong $IP" "ud $IP"; do
	# shellcheck disable=SC2086 # cmd is a word list by design
	set -- $cmd
	run 2 "$R" "$@" --tclass 256 && has "$err" "option --tclass: 256 is outside the range 0..255"
	run 2 "$R" "$@" --dscp 64 && has "$err" "option --dscp: 64 is outside the range 0..63"
	run 2 "$R" "$@" --tclass 104 --dscp 27 &&
		has "$err" "--tclass 104 (DSCP 26) and --dscp 27 disagree"
	run 2 "$R" "$@" --sl 16 && has "$err" "option --sl: 16 is outside the range 0..15"
	run 2 "$R" "$@" --flow-label 0x100000 && has "$err" "option --flow-label: 0x100000 is outside the range 0..1048575"
	run 2 "$R" "$@" --hop-limit 0 && has "$err" "option --hop-limit: 0 is outside the range 1..255"
	run 2 "$R" "$@" --hop-limit 256 && has "$err" "option --hop-limit: 256 is outside the range 1..255"
	run 2 "$R" "$@" --tclass x && has "$err" "option --tclass: 'x' is not a number"
done
run 0 "$R" rc --help && has "$out" "--dscp N" && has "$out" "--flow-label N" && has "$out" "--hop-limit N"

# memserver
run 2 "$RDMAKIT" memserver --allow 10.0.0.1/8 && has "$err" "option --allow: '10.0.0.1/8': address bits are set beyond the prefix length"
run 2 "$RDMAKIT" memserver --allow 300.1.1.1 && has "$err" "not an IPv4 or IPv6 address"
run 2 "$RDMAKIT" memserver --allow fd00::/129 && has "$err" "prefix length 129 is above 128"
run 2 "$RDMAKIT" memserver --keep x && has "$err" "option --keep: 'x' is not a number"
run 2 "$RDMAKIT" memserver --max-size 10x && has "$err" "option --max-size"
run 2 "$RDMAKIT" memserver -p 0 && has "$err" "option --port"
run 2 "$RDMAKIT" memserver 198.18.0.1 && has "$err" "takes no HOST"

# blk
run 2 "$RDMAKIT" blk attach "$IP" -p "$PORT" --size 5000 && has "$err" "--size: 5000 is not a non-zero multiple of 4096"
run 2 "$RDMAKIT" blk attach host.example --size 16M && has "$err" "HOST: 'host.example' is not an IPv4 or IPv6 address"
run 2 "$RDMAKIT" blk detach sda && has "$err" "'sda' is not an rkblk disk name"
run 2 "$RDMAKIT" blk attach "$IP" --size 16M --tclass 256 && has "$err" "option --tclass: 256 is outside the range 0..255"
run 2 "$RDMAKIT" blk attach "$IP" --size 16M --tclass 104 --dscp 27 &&
	has "$err" "--tclass 104 (DSCP 26) and --dscp 27 disagree"
run 2 "$RDMAKIT" blk attach "$IP" --size 16M --sl 3 && has "$err" "--sl"
# --all: the disks from a file; other options, a HOST, --config alone, a bad
# line (FILE:LINE:, before the module is looked for), a missing file (exit 1)
run 2 "$RDMAKIT" blk attach --all --size 16M && has "$err" "--size is not taken with --all"
run 2 "$RDMAKIT" blk attach --all "$IP" && has "$err" "--all takes no HOST ('$IP')"
run 2 "$RDMAKIT" blk detach --all rkblk0 && has "$err" "--all takes no disk name ('rkblk0')"
run 2 "$RDMAKIT" blk attach "$IP" --size 16M --config /dev/null && has "$err" "--config goes with --all"
blkconf=$(mktemp)
printf '# c\n%s 7471 16M 1\n%s 7471 16M 1 depth=4\n' "$IP" "$IP" >"$blkconf"
run 2 "$RDMAKIT" blk attach --all --config "$blkconf" && has "$err" "$blkconf:3: unknown option 'depth'"
run 2 "$RDMAKIT" blk detach --all --config "$blkconf" && has "$err" "$blkconf:3: unknown option 'depth'"
rm -f "$blkconf"
run 1 "$RDMAKIT" blk attach --all --config "$blkconf" && has "$err" "$blkconf: No such file or directory"
finish
