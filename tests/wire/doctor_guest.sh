#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The guests of wire_doctor (doctor.sh), one script for both. Guest 1
# (198.18.0.1) runs `rdmakit doctor --server` until guest 2 is done, then
# stops it with SIGTERM. Guest 2 (198.18.0.2) runs `rdmakit doctor HOST`:
# healthy (text and --json), a dead peer address, an rdmakit rc server
# instead of a doctor server (guest 1 runs one on port 18600), and its
# netdev at MTU 9000 against guest 1's 1500; then an nftables rule in guest
# 2 that drops UDP 4791 coming in (nft is the host's, the modules doctor.sh
# took from the guest kernel's package): an rdmakit rc client to guest 1
# (it must fail), local doctor and doctor HOST, text and --json; last RoCE
# v2 dropped on its way into guest 1 by a tc ingress filter (not a firewall
# rule: doctor cannot read it), guest 1's local doctor then too. Each case
# writes WORKDIR/CASE.{out,err,rc,time}.
# Usage (inside `scripts/softroce run2`): doctor_guest.sh RDMAKIT WORKDIR
RDMAKIT=$1 W=$2
DEV=${RDMAKIT_SOFTROCE_NETDEV:-eth0}
PEER=${RDMAKIT_SOFTROCE_PEER:-198.18.0.1}
# Huge pages reserved, so that a healthy guest's local checks all PASS.
sysctl -q -w vm.nr_hugepages=16 >/dev/null 2>&1

if [ "${RDMAKIT_SOFTROCE_GUEST:-1}" = 1 ]; then
	"$RDMAKIT" doctor --server -t 20 >"$W/server.out" 2>"$W/server.err" &
	srv=$!
	# Another kind of rdmakit server, for doctor to name.
	"$RDMAKIT" rc --server -p 18600 --persist >"$W/rc-prop.out" 2>&1 &
	rcs=$!
	# Until guest 2 is done, or the server ended by itself (guest 2 then
	# stops waiting for it: server.rc).
	n=0
	while [ ! -e "$W/client.done" ] && kill -0 $srv 2>/dev/null && [ $n -lt 4000 ]; do
		if [ -e "$W/drop.want" ] && [ ! -e "$W/drop.ready" ]; then
			# RoCE v2 dropped on the way in, TCP not: tc's ingress
			# filter (no nft or iptables here), modules doctor.sh took
			# from the guest kernel's package.
			for m in sch_ingress cls_u32 act_gact; do
				insmod "$W/mods/$m.ko" 2>>"$W/drop.log"
			done
			{ tc qdisc add dev "$DEV" ingress &&
				tc filter add dev "$DEV" parent ffff: protocol ip prio 1 u32 \
					match ip protocol 17 0xff match ip dport 4791 0xffff action drop &&
				tc filter show dev "$DEV" parent ffff:; } >>"$W/drop.log" 2>&1
			rc=$?
			# What local doctor says here with the filter in place.
			"$RDMAKIT" doctor >"$W/drop-local.out" 2>"$W/drop-local.err"
			echo $? >"$W/drop-local.rc"
			echo $rc >"$W/drop.ready"
		fi
		sleep 0.1
		n=$((n + 1))
	done
	# The rc server (--persist, setting up again after its last client
	# maybe) stops on SIGTERM too: within 30 s, else killed.
	kill -TERM $rcs 2>/dev/null
	kill -TERM $srv 2>/dev/null
	n=0
	while kill -0 $rcs 2>/dev/null && [ $n -lt 300 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	kill -KILL $rcs 2>/dev/null
	wait $rcs
	echo $? >"$W/rc-prop.rc"
	wait $srv
	echo $? >"$W/server.rc"
	echo "doctor: server exited $(cat "$W/server.rc")"
	exit 0
fi

# run CASE ARGS...: one doctor run, its output, exit status and seconds.
run() {
	name=$1
	shift
	t0=$(date +%s)
	"$RDMAKIT" doctor "$@" >"$W/$name.out" 2>"$W/$name.err"
	echo $? >"$W/$name.rc"
	echo $(($(date +%s) - t0)) >"$W/$name.time"
	echo "doctor: $name exited $(cat "$W/$name.rc") in $(cat "$W/$name.time") s"
}

n=0
until grep -q "waiting for a doctor client" "$W/server.out" 2>/dev/null; do
	[ ! -e "$W/server.rc" ] && [ $n -lt 3000 ] || { echo "doctor: no server"; break; }
	sleep 0.1
	n=$((n + 1))
done
run healthy "$PEER" -t 20
run healthy-json "$PEER" -t 20 --json
run dead 198.18.0.9 -t 3
run rc-server "$PEER" -p 18600 -t 20
ip link set "$DEV" mtu 9000 || echo "doctor: cannot set $DEV's MTU to 9000"
sleep 1
run mtu "$PEER" -t 20
ip link set "$DEV" mtu 1500
sleep 1
# fw: this guest's nftables drops UDP 4791 coming in (RoCE v2's acks and
# responses from guest 1); TCP still gets through.
for m in crc32c_generic libcrc32c nfnetlink nf_tables; do
	insmod "$W/mods/$m.ko" 2>>"$W/fw.log"
done
{ nft add table inet rk_doctor &&
	nft add chain inet rk_doctor input '{ type filter hook input priority 0; policy accept; }' &&
	nft add rule inet rk_doctor input udp dport 4791 drop &&
	nft -a list ruleset; } >>"$W/fw.log" 2>&1
echo $? >"$W/fw.ready"
# Real traffic: an rdmakit rc client to guest 1's rc server.
t0=$(date +%s)
timeout 90 "$RDMAKIT" rc "$PEER" -p 18600 -o write >"$W/fw-rc.out" 2>&1
echo $? >"$W/fw-rc.rc"
echo "doctor: fw-rc exited $(cat "$W/fw-rc.rc") in $(($(date +%s) - t0)) s"
run fw-local
run fw-local-json --json
run fw "$PEER" -t 10
run fw-json "$PEER" -t 10 --json
nft delete table inet rk_doctor 2>>"$W/fw.log"
# Guest 1 drops UDP 4791 coming in; TCP still gets through.
touch "$W/drop.want"
n=0
until [ -e "$W/drop.ready" ] || [ $n -ge 600 ]; do
	sleep 0.1
	n=$((n + 1))
done
run drop "$PEER" -t 10
touch "$W/client.done"
