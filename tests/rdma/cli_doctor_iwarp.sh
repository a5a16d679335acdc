#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit doctor on an iWARP device (siw): the local checks pass (the port
# named iWARP, its netdev from rdma link, the software device with its
# note; no RoCE GID or MTU check), and the path's checks, which connect over
# rdmakit's TCP exchange, are refused by name with the iWARP reason and what
# checks the path instead, not tried: `doctor --server` exits 1 at once,
# `doctor HOST` against a TCP listener on the device's address WARNs on the
# server check and skips the SEND, WRITE, READ and probe (exit 3), text and
# JSON. Skipped (77) where no device is iWARP. Usage: cli_doctor_iwarp.sh RDMAKIT
RDMAKIT=$1
PORT_BASE=22000
. "$(dirname "$0")/lib.sh"

iwarp_devices
if [ -z "$DEV" ]; then
	echo "SKIP: needs an iWARP device (scripts/softroce --provider siw); this guest has ${OTHER:-no RDMA device}"
	exit 77
fi
lpid=
trap 'rm -f "$out" "$err"; [ -z "$lpid" ] || kill "$lpid" 2>/dev/null' EXIT
echo "# iWARP device $DEV, address $IP"
sysctl -q -w vm.nr_hugepages=16 >/dev/null 2>&1

# The server: refused at once, by name.
t0=$(date +%s)
run 1 timeout 20 "$RDMAKIT" doctor --server -d "$DEV" -p "$PORT" &&
	has "$err" "$DEV is an iWARP device: its QPs connect only through RDMA CM; doctor --server serves over rdmakit's TCP exchange, not through RDMA CM"
[ $(($(date +%s) - t0)) -le 15 ] || { echo "FAIL: the refusal took over 15 s"; fails=$((fails + 1)); }

# HOST: a plain TCP listener on the port stands for a server (TCP reach).
"$PY" -c "
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('$IP', $PORT)); s.listen(8); print('listening', flush=True)
while True:
    c, _ = s.accept(); c.close()
" >/dev/null 2>&1 &
lpid=$!
sleep 2
run 3 timeout 120 "$RDMAKIT" doctor "$IP" -p "$PORT" -t 10
sed 's/^/  # /' "$out"
# The local checks: the port named iWARP, its netdev (rdma link shows it:
# siw has no GID table) and addresses; no RoCE v2 GID or RoCE MTU check.
has "$out" "PASS $DEV port 1 state: ACTIVE, physical state LinkUp (iWARP)"
has "$out" "PASS $DEV port 1 netdev: "
has "$out" "PASS $DEV port 1 addresses: $IP"
lacks "$out" "RoCE v2 GIDs"
lacks "$out" "$DEV port 1 MTU"
has "$out" "PASS $DEV software device: $DEV is Soft-iWARP (siw)"
has "$out" "PASS TCP to $IP port $PORT"
has "$out" "PASS RDMA CM route to $IP: $IP resolves to $DEV port 1"
has "$out" "WARN the server on $IP port $PORT: $DEV is an iWARP device: its QPs connect only through RDMA CM, and doctor HOST connects over rdmakit's TCP exchange"
has "$out" "fix: check the path through RDMA CM with every byte checked: \`rdmakit rc --server --cm -p $PORT\` on $IP, then \`rdmakit rc $IP --cm -p $PORT -o all\` here"
has "$out" "SKIP SEND: $DEV is an iWARP device: doctor does not connect through RDMA CM yet"
has "$out" "verdict: WARN: the path to $IP was not checked through: $DEV is an iWARP device"
lacks "$out" "FAIL "
run 3 timeout 120 "$RDMAKIT" doctor "$IP" -p "$PORT" -t 10 --json &&
	json "
c = {c['id']: c for c in d['checks']}
assert c['peer_server']['status'] == 'WARN' and c['peer_server']['errno'] == 'EPROTONOSUPPORT', c['peer_server']
assert 'iWARP' in c['peer_server']['seen'] and '--cm' in c['peer_server']['fix'], c['peer_server']
assert all(c[i]['status'] == 'SKIP' for i in ('peer_send', 'peer_write', 'peer_read', 'peer_probe')), c
assert c['software_device']['status'] == 'PASS' and 'Soft-iWARP' in c['software_device']['seen'], c
assert d['verdict'] == 'WARN' and d['summary']['fail'] == 0, d"
finish
