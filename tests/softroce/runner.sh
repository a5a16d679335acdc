#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The Soft-RoCE runner itself: the command's output comes back, its exit
# status becomes the runner's, arguments keep their boundaries, and the guest
# really has rxe0 on 198.18.0.1 (the default provider). Then run2's two
# guests on a wire, and one guest with Soft-iWARP's siw0 (--provider siw).
SOFTROCE=$1
# The default provider is checked: a suite run on siw must not choose it here.
unset RDMAKIT_SOFTROCE_PROVIDER
fails=0
check() { # check WHAT WANT GOT
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: want [$2], got [$3]"; fails=$((fails + 1)); fi
}
# One boot: output, status, rxe0, and arguments with spaces, quotes and $.
out=$("$SOFTROCE" run -- sh -c 'echo to-stdout; echo to-stderr >&2; cat /sys/class/infiniband/rxe0/ports/1/state; echo "devices=$RDMAKIT_SOFTROCE_DEVICES"; printf "[%s]" "$@"; echo; exit 3' sh 'a b' "c'd" '$HOME' 2>&1 </dev/null)
check "a failing command's status (3) is the runner's" 3 $?
check "stdout comes back" yes "$(echo "$out" | grep -qx to-stdout && echo yes)"
check "stderr comes back" yes "$(echo "$out" | grep -qx to-stderr && echo yes)"
check "rxe0 port 1 is ACTIVE in the guest" yes "$(echo "$out" | grep -q ACTIVE && echo yes)"
check "arguments keep their boundaries" yes "$(echo "$out" | grep -qxF "[a b][c'd][\$HOME]" && echo yes)"
check "the default provider's devices are rxe0 alone" devices=rxe0 "$(echo "$out" | grep '^devices=')"

# run2: two guests on a wire. Each sees its own address and its peer's, and
# reaches the peer over the wire; both exit statuses are printed, guest 1's
# non-zero status is the runner's, else guest 2's.
guest='echo "guest=$RDMAKIT_SOFTROCE_GUEST addr=$RDMAKIT_SOFTROCE_ADDR peer=$RDMAKIT_SOFTROCE_PEER"
ip -4 -o addr show dev eth0 | grep -o "inet [0-9./]*"
rdma link show rxe0/1 | grep -o "state [A-Z]* .* netdev eth0"
i=0
until busybox ping -c1 -W1 "$RDMAKIT_SOFTROCE_PEER" >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 60 ] || { echo "peer unreachable"; exit 9; }
done
echo "reached $RDMAKIT_SOFTROCE_PEER"
# Stay up until the peer has reached us too (a barrier on the shared cwd).
: >"$2/reached$RDMAKIT_SOFTROCE_GUEST"
i=0
until [ -e "$2/reached$((3 - RDMAKIT_SOFTROCE_GUEST))" ]; do
	i=$((i + 1)); [ $i -lt 600 ] || { echo "peer never reached us"; exit 9; }
	sleep 0.2
done
exit $1'
# The barrier dir: the cwd is shared writable with both guests.
bar=$(mktemp -d "$PWD/.run2-check.XXXXXX")
out=$("$SOFTROCE" run2 --timeout 400 -- sh -c "$guest" g 3 "$bar" -- sh -c "$guest" g 5 "$bar" 2>&1 </dev/null)
check "run2: guest 1's non-zero status (3) is the runner's" 3 $?
check "run2: both statuses are printed" yes \
	"$(echo "$out" | grep -qx 'softroce: guest1 (198.18.0.1) exit 3, guest2 (198.18.0.2) exit 5' && echo yes)"
for g in 1 2; do
	p=$((3 - g))
	check "run2: guest $g knows its index, address and peer" "guest$g| guest=$g addr=198.18.0.$g peer=198.18.0.$p" \
		"$(echo "$out" | grep "^guest$g| guest=")"
	check "run2: guest $g has 198.18.0.$g/24 on eth0" "guest$g| inet 198.18.0.$g/24" "$(echo "$out" | grep "^guest$g| inet")"
	check "run2: guest $g has rxe0 ACTIVE on eth0" "guest$g| state ACTIVE physical_state LINK_UP netdev eth0" \
		"$(echo "$out" | grep "^guest$g| state")"
	check "run2: guest $g reaches its peer over the wire" "guest$g| reached 198.18.0.$p" \
		"$(echo "$out" | grep "^guest$g| reached")"
done
rm -rf "$bar"
out=$("$SOFTROCE" run2 --timeout 400 -- true -- sh -c 'exit 4' 2>&1 </dev/null)
check "run2: guest 2's status (4) is the runner's when guest 1 succeeds" 4 $?
check "run2: both statuses are printed" yes \
	"$(echo "$out" | grep -qx 'softroce: guest1 (198.18.0.1) exit 0, guest2 (198.18.0.2) exit 4' && echo yes)"
out=$("$SOFTROCE" run2 -- true 2>&1 </dev/null)
check "run2 without a second command is refused (125)" 125 $?
check "run2's refusal says what is missing" yes "$(echo "$out" | grep -q 'CMD1 ARGS -- CMD2' && echo yes)"
# --provider siw: siw0 alone on rdma0 (siw.ko built from the kernel's
# source), iWARP, and rdma-core's rping over it (the client retries until
# the server listens: a loaded host may take more than a second).
siw='echo "devices=$RDMAKIT_SOFTROCE_DEVICES"
rdma link show
ibv_devinfo -d siw0 | grep -o "transport:.*"
rping -s -a 198.18.0.1 -C 3 -v & s=$!
i=0
until rping -c -a 198.18.0.1 -C 3 -v; do
	i=$((i + 1)); [ $i -lt 10 ] || { kill $s; exit 7; }
	sleep 1
done
wait $s'
out=$("$SOFTROCE" --provider siw run --cpus 1 --timeout 400 -- sh -c "$siw" 2>&1 </dev/null)
check "siw: rping client and server succeed over siw0" 0 $?
check "siw: the guest's devices are siw0 alone" devices=siw0 "$(echo "$out" | grep '^devices=')"
check "siw: siw0 is ACTIVE on rdma0, and no other link" "link siw0/1 state ACTIVE physical_state LINK_UP netdev rdma0" \
	"$(echo "$out" | grep '^link ' | sed 's/ *$//')"
check "siw: siw0's transport is iWARP" 1 "$(echo "$out" | grep -c '^transport:[[:space:]]*iWARP (1)$')"
check "siw: rping's 3 pings arrive" "3 3" \
	"$(echo "$out" | grep -c '^ping data: rdma-ping-') $(echo "$out" | grep -c '^server ping data: rdma-ping-')"
[ $fails -eq 0 ] && echo "all checks passed"
exit $fails
