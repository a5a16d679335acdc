#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Shared receive queues (--srq) as a user runs them: bench with several QPs
# draining one SRQ while every message is checked; the SRQ limit armed and
# IBV_EVENT_SRQ_LIMIT_REACHED reported; an SRQ left empty on purpose
# (--srq-no-refill) making the sender's SENDs fail with
# IBV_WC_RNR_RETRY_EXC_ERR (--rnr-retry 1), with the counters that prove it;
# ud --srq; XRC refused by name (rxe has none).
# Usage: cli_srq.sh RDMAKIT
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"

IP=${RDMAKIT_TEST_IP:-198.18.0.1}
PORT=$((40000 + $$ % 10000))
srv_out=$(mktemp)
trap 'rm -f "$out" "$err" "$srv_out"' EXIT
cli_out=$out cli_err=$err

# srv_json PYTHON: checks on the server's --json document (srv_out, where
# the server's log lines on stderr are left out).
srv_json() {
	cp "$out" "$out.cli"
	grep -v '^rdmakit: ' "$srv_out" >"$out"
	json "$1"
	cp "$out.cli" "$out"
	rm -f "$out.cli"
}

# 1. bench: 4 QPs drain one SRQ of 128; 4 x 200 SENDs of 2 KiB, each checked
# as it arrives (the server's check says so); the client's peer check passed.
pair 0 0 "$RDMAKIT bench --server -p @PORT@ --wait 60 --timeout 60 --json --srq --srq-depth 128" \
	"$RDMAKIT bench $IP -p @PORT@ --timeout 60 --json --op send --qps 4 --count 200 --size 2048"
json "
r = d['results'][0]
assert d['ok'] is True and r['peer_check'] == 'passed', r
assert r['messages'] == 800, r['messages']"
srv_json "
assert d['ok'] is True, d
assert d['srq'] is True and d['srq_setup']['depth'] == 128, d.get('srq_setup')
r = d['results'][0]
assert 'received 800 of 800 SENDs through the SRQ' in r['check'], r['check']
assert 'every message' in r['check'], r['check']
s = r['srq']
assert s['taken'] >= 800 and s['posted'] >= s['taken'] and s['refill'] is True, s
assert s['posted'] - s['taken'] <= 128, s"

# 2. bench RC bidirectional: the client receives through an SRQ of its own
# too (3 QPs each way).
pair 0 0 "$RDMAKIT bench --server -p @PORT@ --wait 60 --timeout 60 --srq" \
	"$RDMAKIT bench $IP -p @PORT@ --timeout 60 --json --op send --qps 3 --bidir --count 200 --size 512 --srq"
json "
r = d['results'][0]
assert d['ok'] is True and d['srq'] is True, d
assert 'received 600 of 600 SENDs through the SRQ' in r['check'] and r['peer_check'] == 'passed', r
assert r['srq']['taken'] >= 600, r['srq']"
has "$srv_out" "received 600 of 600 SENDs through the SRQ"

# 2b. bench UD, one way: 3 QPs drain the server's SRQ (UD drops a datagram
# that finds no receive: 3 x 100 fit the SRQ's 512 without waiting for a
# refill).
pair 0 0 "$RDMAKIT bench --server -p @PORT@ --wait 60 --timeout 60 --srq" \
	"$RDMAKIT bench $IP -p @PORT@ --timeout 60 --json --op send --transport ud --qps 3 --count 100 --size 512"
json "
r = d['results'][0]
assert d['ok'] is True and r['peer_check'] == 'passed', r"
has "$srv_out" "SENDs through the SRQ, every message's 512 bytes match"

# 3. The limit: an SRQ of 64 with limit 16, never refilled; 2 QPs x 24 SENDs
# and their 2 end-of-round SENDs leave 14 posted: below the limit, so the
# device raises IBV_EVENT_SRQ_LIMIT_REACHED; the run still passes.
pair 0 0 "$RDMAKIT bench --server -p @PORT@ --wait 60 --timeout 60 --json --srq --srq-depth 64 --srq-limit 16 --srq-no-refill" \
	"$RDMAKIT bench $IP -p @PORT@ --timeout 60 --json --op send --qps 2 --count 24 --size 64"
srv_json "
r = d['results'][0]
assert 'received 48 of 48 SENDs through the SRQ' in r['check'], r['check']
s = r['srq']
assert s['limit'] == 16 and s['limit_events'] == 1, s
e = s['limit_event']
assert e['event'] == 'IBV_EVENT_SRQ_LIMIT_REACHED' and e['limit'] == 16, e
assert 48 < e['posted'] <= 64 and e['unpolled'] <= 64, e
assert s['fewest_posted'] == 14 and s['posted'] == 64, s"

# 4. RNR: an SRQ of 32, never refilled, and a client sending 2 x 100 with one
# RNR retry: its SENDs fail with IBV_WC_RNR_RETRY_EXC_ERR, explained, with
# the rxe counters of RNR cited by name (text) and in JSON; the server shows
# its SRQ ran empty and the limit event (limit 8 by default). The server
# learns of the failure only from its own timeout (--timeout 8).
pair 1 1 "$RDMAKIT bench --server -p @PORT@ --wait 60 --timeout 8 --srq --srq-depth 32 --srq-no-refill" \
	"$RDMAKIT bench $IP -p @PORT@ --timeout 60 --op send --qps 2 --count 100 --size 64 --rnr-retry 1"
has "$err" "IBV_WC_RNR_RETRY_EXC_ERR"
has "$out" "IBV_WC_RNR_RETRY_EXC_ERR: the peer posted no receive in time"
has "$out" "counters: retry_rnr_exceeded_err +"
has "$out" "RNR       1 retries"
has "$srv_out" "the SRQ ran empty (refill held off)"
has "$srv_out" "fewest posted 0"
has "$srv_out" "IBV_EVENT_SRQ_LIMIT_REACHED (x1): the device had fewer than 8 receives left"

# 5. ud --srq: the server's UD QP receives from an SRQ of 64 (refilled as
# it empties); two clients of 30 datagrams each, every byte checked.
PORT=$((PORT + 1))
$RDMAKIT ud --server -p $PORT --clients 2 --count 30 --srq --srq-depth 64 --timeout 60 --json >"$srv_out" 2>/dev/null &
spid=$!
sleep 1
$RDMAKIT ud $IP -p $PORT --count 30 --timeout 60 >/dev/null 2>&1 &
c1=$!
run 0 $RDMAKIT ud $IP -p $PORT --count 30 --timeout 60
wait $c1 || { echo "FAIL: the first ud client failed"; fails=$((fails + 1)); }
wait $spid || { echo "FAIL: the ud --srq server failed:"; sed 's/^/  | /' "$srv_out"; fails=$((fails + 1)); }
srv_json "
assert d['result'] == 'ok' and d['validated'] is True, d
assert [c['echoed'] for c in d['clients']] == [30, 30], d['clients']
s = d['srq']
assert s['depth'] == 64 and s['taken'] == 60 and s['posted'] >= 64, s"

# 5b. rc --srq: the client's SEND lands in a slot of the server's SRQ, is
# checked there and copied into the buffer; TCP exchange and RDMA CM.
# (over RDMA CM the control messages use the QP's own receives: refused)
pair 0 0 "$RDMAKIT rc --server -p @PORT@ --wait 60 --timeout 60 --json --srq --srq-depth 8 -s 8192" \
	"$RDMAKIT rc $IP -p @PORT@ --timeout 60 --op send -s 8192"
srv_json "
assert d['result'] == 'ok' and [s['op'] for s in d['steps']] == ['SEND'], d['steps']
assert d['steps'][0]['checked'] is True, d['steps'][0]
s = d['srq']
assert s['depth'] == 8 and s['taken'] == 1 and s['posted'] == 8, s"
run 1 $RDMAKIT rc --server --cm --srq -p $((PORT + 3))
has "$err" "--srq with --cm: over RDMA CM the control messages travel on the QP's own receives"
# bench --cm: its data QPs are not the CM QP, so --srq works there
pair 0 0 "$RDMAKIT bench --server -p @PORT@ --cm --wait 60 --timeout 60 --srq" \
	"$RDMAKIT bench $IP -p @PORT@ --cm --timeout 60 --json --op send --qps 2 --count 100 --size 1024"
has "$srv_out" "received 200 of 200 SENDs through the SRQ"
# two clients at once, each with an SRQ of its own (one connection, one PD each)
PORT=$((PORT + 1))
$RDMAKIT rc --server -p $PORT --clients 2 --wait 60 --timeout 60 --srq --op send-imm >"$srv_out" 2>&1 &
spid=$!
sleep 1
$RDMAKIT rc $IP -p $PORT --timeout 60 --op send-imm >/dev/null 2>&1 &
c1=$!
run 0 $RDMAKIT rc $IP -p $PORT --timeout 60 --op send-imm
wait $c1 || { echo "FAIL: the first rc client failed"; fails=$((fails + 1)); }
wait $spid || { echo "FAIL: the rc --clients 2 --srq server failed:"; sed 's/^/  | /' "$srv_out"; fails=$((fails + 1)); }
has "$srv_out" "SRQ: depth 512"

# 6. XRC: refused by name, before listening or connecting.
run 1 $RDMAKIT bench --server -p $((PORT + 2)) --xrc
has "$err" "rxe0 has no XRC (IBV_DEVICE_XRC not in its capabilities)"
run 1 $RDMAKIT bench $IP -p $((PORT + 2)) --xrc --op send
has "$err" "rxe0 has no XRC (IBV_DEVICE_XRC not in its capabilities)"
run 1 $RDMAKIT ud --server -p $((PORT + 2)) --xrc
has "$err" "rxe0 has no XRC (IBV_DEVICE_XRC not in its capabilities)"
run 1 $RDMAKIT rc --server -p $((PORT + 2)) --xrc
has "$err" "rxe0 has no XRC (IBV_DEVICE_XRC not in its capabilities)"

# 7. Usage: the SRQ options need --srq; the limit below the depth.
run 2 $RDMAKIT bench --server --srq-depth 64
has "$err" "option --srq-depth needs --srq"
run 2 $RDMAKIT bench --server --srq --srq-depth 64 --srq-limit 64
has "$err" "option --srq-limit: 64 is not below --srq-depth 64"
run 2 $RDMAKIT ud $IP --srq
has "$err" "option --srq is the server's"

finish
