#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Guest 2 of the kernel test "kernel_faults" (guest 1 runs server.sh):
#   resume: memserver killed (SIGKILL) during a fio verify job and started
#           again with the same --state-dir within the loss timeout: the disk
#           reconnects, fio finishes and verifies everything, zero errors
#   loss:   memserver killed for good during fio: I/O fails with EIO within
#           loss_timeout + reconnect_delay + slack, the disk is dead, later
#           I/O fails at once, the guest lives, no WARNING/BUG/Oops
#   mtu:    (RoCE only: iWARP has no path MTU) this guest's netdev at
#           MTU 9000 (RoCE 4096), the server's at 1500 (1024): the server refuses path MTU 4096 and 2048 by
#           -EMSGSIZE, the disk attaches at 1024, 8 MiB written and read
#           back the same; then both at 9000 (4096), and the server's MTU
#           dropped to 1500 under the disk: the reads stall, the disk
#           reconnects at 1024 and reads back what it wrote
#   link:   `rdma link delete DEV` (rxe0; siw0 on --provider siw) under a
#           disk with fio running: EIO, no oops, detach and rmmod clean
# Usage: client_faults.sh RDMAKIT KO W
RDMAKIT=$1 KO=$(echo "$2" | sed "s/@KVER@/$(uname -r)/") W=$3
. "$(dirname "$0")/lib.sh"
SRV=198.18.0.1
STATE="--state-dir /tmp/ms-state --keep 120 --max-size 1G"
LOSS=${RDMAKIT_KERNEL_LOSS_TIMEOUT:-15}
DELAY=2
SLACK=20
# The bed's RDMA device (scripts/softroce --provider): rxe0 or siw0.
DEV=${RDMAKIT_SOFTROCE_DEVICES:-rxe0}
DEV=${DEV%% *}
t00=$(now)

insmod "$KO"
check "insmod $KO exit status" 0 $?
remote 30 "mkdir -p /tmp/ms-state; ms_start ms $STATE" || { echo "FAIL: memserver did not start on guest 1"; remote 30 finish; exit 1; }

# fio_bg NAME DISK ARGS...: fio in the background (FIO_PID), JSON in W/NAME.json
fio_bg() {
	_n=$1 _d=$2
	shift 2
	timeout 400 fio --name="$_n" --filename="/dev/$_d" --direct=1 --ioengine=libaio --bs=4k \
		--output-format=json --output="$W/$_n.json" "$@" >"$W/$_n.out" 2>&1 &
	FIO_PID=$!
}
# wait_io DISK SEC: until the disk has completed some I/O (16 requests).
wait_io() {
	_i=0
	while [ "$(awk '{ print $1 + $5 }' "/sys/block/$1/stat")" -lt 16 ]; do
		_i=$((_i + 1))
		[ $_i -le $(($2 * 5)) ] || return 1
		sleep 0.2
	done
}
# fio_started NAME WHEN DISK ARGS...: fio_bg NAME DISK ARGS..., then check
# that it does I/O on DISK (within 60 s) before WHEN.
fio_started() {
	_w=$2 _fd=$3
	_fn=$1
	shift 3
	fio_bg "$_fn" "$_fd" "$@"
	wait_io "$_fd" 60
	check "fio is doing I/O on $_fd before $_w" 0 $?
}
# wait_pid PID SEC: until PID ends (status in WAIT_RC); 1 on timeout.
wait_pid() {
	_i=0
	while kill -0 "$1" 2>/dev/null && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -le $(($2 * 5)) ] || return 1
		sleep 0.2
	done
	wait "$1"
	WAIT_RC=$?
}

echo "== resume: memserver killed during fio and back within the loss timeout"
attach_disk "$SRV" --size 128M --reconnect-delay $DELAY --loss-timeout 60
check "attach (loss timeout 60 s)" 0 $?
d=$DISK
if [ -n "$d" ]; then
	fio_started resume "the kill" "$d" --rw=randwrite --bsrange=4k-64k --iodepth=16 --size=64M \
		--verify=crc32c --verify_fatal=1 --do_verify=1
	remote 30 "ms_kill ms KILL"
	wait_state "$d" reconnecting 30
	check "$d state after the server died" reconnecting "$(attr "$d" state)"
	sleep 4
	check "fio still running while reconnecting (I/O waits, does not fail)" yes \
		"$(kill -0 $FIO_PID 2>/dev/null && echo yes)"
	remote 30 "ms_start ms $STATE"
	wait_state "$d" live 60
	check "$d state after the server came back" live "$(attr "$d" state)"
	check_num "$d reconnects" -ge 1 "$(attr "$d" reconnects)"
	wait_pid $FIO_PID 300
	check "fio across the restart exit status" 0 "${WAIT_RC:-timeout}"
	check "fio across the restart error" 0 "$(fio_json "$W/resume.json" error)"
	check "fio across the restart: MiB written" 64 "$(fio_json "$W/resume.json" write_mib)"
	check "fio across the restart: MiB read back and verified" 64 "$(fio_json "$W/resume.json" read_mib)"
	check "$d errors attribute" 0 "$(attr "$d" errors)"
	[ "${WAIT_RC:-1}" = 0 ] || tail -n 5 "$W/resume.out"
	"$RDMAKIT" blk detach "$d"
	check "detach $d" 0 $?
fi
check_dmesg "resume"

echo "== loss: memserver killed for good during fio"
attach_disk "$SRV" --size 64M --reconnect-delay $DELAY --loss-timeout "$LOSS"
check "attach (loss timeout $LOSS s)" 0 $?
d=$DISK
if [ -n "$d" ]; then
	fio_started loss "the kill" "$d" --rw=randwrite --iodepth=16 --size=64M --time_based \
		--runtime=300
	remote 30 "ms_kill ms KILL"
	t0=$(now)
	wait_pid $FIO_PID $((LOSS + DELAY + SLACK + 30))
	took=$(elapsed "$t0")
	echo "  fio ended $took s after the kill (exit ${WAIT_RC:-still running})"
	check "fio ended with an error" yes "$([ "${WAIT_RC:-0}" != 0 ] && echo yes)"
	check "fio's error is EIO (5)" 5 "$(fio_json "$W/loss.json" error)"
	check_num "seconds from the kill to EIO (loss $LOSS + delay $DELAY + slack $SLACK)" -le $((LOSS + DELAY + SLACK)) "$took"
	# Not sooner than the loss timeout (less the time to notice the loss):
	# until then requests wait for a reconnect instead of failing.
	check_num "seconds from the kill to EIO (at least loss $LOSS - 5)" -ge $((LOSS - 5)) "$took"
	check "$d state" dead "$(attr "$d" state)"
	err=$(dd if="/dev/$d" of=/dev/null bs=4k count=1 iflag=direct 2>&1)
	check "a later read fails with EIO" yes "$(echo "$err" | grep -q 'Input/output error' && echo yes)"
	check_num "$d errors attribute" -ge 1 "$(attr "$d" errors)"
	"$RDMAKIT" blk detach "$d"
	check "detach dead $d" 0 $?
fi
busybox ping -c 1 -W 10 "$SRV" >/dev/null 2>&1
check "the guest is alive: it still pings guest 1 over the wire (exit status)" 0 $?
check_dmesg "loss"

# The mtu case, RoCE only (a function, to skip it on iWARP).
mtu_case() {
echo "== mtu: this side's netdev at 9000 (RoCE 4096), the server's at 1500 (1024)"
remote 30 "ms_start ms2 --keep 60 --max-size 1G"
dmesg_from=$(dmesg | wc -l)
# What the module logs as the server refuses 4096, then 2048.
refusals="$SRV:7471 refused path MTU 4096 (above its port's): asking for 2048|$SRV:7471 refused path MTU 2048 (above its port's): asking for 1024"
head -c 8388608 /dev/urandom >"$W/mtu.data"
ip link set eth0 mtu 9000
check "ip link set eth0 mtu 9000" 0 $?
mtu=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
	mtu=$("$RDMAKIT" devices --json | tr -d ' \n' | grep -o '"active_mtu":[0-9]*' | head -n 1 | cut -d: -f2)
	[ "$mtu" = 4096 ] && break
	sleep 1
done
check "rxe0's active MTU at netdev MTU 9000" 4096 "$mtu"
attach_disk "$SRV" --size 16M
check "attach at path MTU 4096 to a server at 1024 (it refuses 4096 and 2048)" 0 $?
d=$DISK
if [ -n "$d" ]; then
	log=$(dmesg | tail -n +$((dmesg_from + 1)))
	check "kernel log: the server refused 4096, then 2048" \
		"$refusals" \
		"$(echo "$log" | grep -o "$SRV:7471 refused path MTU.*" | tr '\n' '|' | sed 's/|$//')"
	check "kernel log: $d attached at path MTU 1024" yes \
		"$(echo "$log" | grep -q "$d: attached .*, path MTU 1024\$" && echo yes)"
	dd if="$W/mtu.data" of="/dev/$d" bs=1M oflag=direct 2>/dev/null
	check "write 8 MiB to $d (exit status)" 0 $?
	dd if="/dev/$d" of="$W/mtu.back" bs=1M count=8 iflag=direct 2>/dev/null
	check "read 8 MiB back from $d (exit status)" 0 $?
	check "the 8 MiB read back are those written" yes "$(cmp -s "$W/mtu.data" "$W/mtu.back" && echo yes)"
	check "$d errors attribute" 0 "$(attr "$d" errors)"
	check "$d path_mtu attribute" 1024 "$(attr "$d" path_mtu)"
	check "blk list shows path MTU 1024" yes \
		"$("$RDMAKIT" blk list | grep -q "^$d  live .*  path MTU 1024" && echo yes)"
	"$RDMAKIT" blk detach "$d"
	check "detach $d" 0 $?
fi
# The server's netdev at 9000 too: 4096 at once. Then its MTU drops under
# the disk: the server's READ responses no longer fit its link, the reads
# stall, the disk recovers and reconnects asking lower (not refused until
# loss_timeout), and the reads come back as written.
remote 30 "ip link set eth0 mtu 9000 && sleep 3"
check "guest 1: ip link set eth0 mtu 9000" 0 $?
dmesg_from=$(dmesg | wc -l)
attach_disk "$SRV" --size 16M --reconnect-delay 1 --loss-timeout 120
check "attach with both sides at 9000" 0 $?
d=$DISK
if [ -n "$d" ]; then
	check "$d path_mtu attribute, both at 9000" 4096 "$(attr "$d" path_mtu)"
	dd if="$W/mtu.data" of="/dev/$d" bs=1M oflag=direct 2>/dev/null
	check "write 8 MiB to $d at 4096 (exit status)" 0 $?
	remote 30 "ip link set eth0 mtu 1500"
	check "guest 1: ip link set eth0 mtu 1500 under the disk" 0 $?
	t0=$(now)
	timeout 180 dd if="/dev/$d" of="$W/mtu.back" bs=1M count=8 iflag=direct 2>/dev/null
	check "read 8 MiB back across the server's MTU change (exit status)" 0 $?
	echo "  the read took $(elapsed "$t0") s"
	check "the 8 MiB read back are those written" yes "$(cmp -s "$W/mtu.data" "$W/mtu.back" && echo yes)"
	check_num "$d reconnects" -ge 1 "$(attr "$d" reconnects)"
	check "$d state" live "$(attr "$d" state)"
	check "$d path_mtu attribute after the reconnect" 1024 "$(attr "$d" path_mtu)"
	check "$d errors attribute" 0 "$(attr "$d" errors)"
	check "kernel log: the reconnect asked for 2048, then 1024" \
		"$refusals" \
		"$(dmesg | tail -n +$((dmesg_from + 1)) | grep -o "$SRV:7471 refused path MTU.*" | tr '\n' '|' | sed 's/|$//')"
	"$RDMAKIT" blk detach "$d"
	check "detach $d" 0 $?
fi
rm -f "$W/mtu.data" "$W/mtu.back"
ip link set eth0 mtu 1500
check "ip link set eth0 mtu 1500" 0 $?
check_dmesg "mtu"
}
case $DEV in
siw*)
	echo "== mtu: skipped on $DEV (iWARP runs over TCP: no RoCE path MTU)"
	remote 30 "ms_start ms2 --keep 60 --max-size 1G" # the link case's server
	;;
*) mtu_case ;;
esac

echo "== link: rdma link delete $DEV under the disk"
attach_disk "$SRV" --size 64M --reconnect-delay $DELAY --loss-timeout 60
check "attach for the link case" 0 $?
d=$DISK
if [ -n "$d" ]; then
	fio_started link "the link goes" "$d" --rw=randrw --iodepth=16 --size=64M --time_based \
		--runtime=300
	rdma link delete "$DEV"
	check "rdma link delete $DEV" 0 $?
	t0=$(now)
	wait_pid $FIO_PID 60
	echo "  fio ended $(elapsed "$t0") s after the link was deleted (exit ${WAIT_RC:-still running})"
	check "fio's error is EIO (5)" 5 "$(fio_json "$W/link.json" error)"
	check "$d state" dead "$(attr "$d" state)"
	"$RDMAKIT" blk detach "$d"
	check "detach $d after the link went" 0 $?
fi
rmmod rkblk
check "rmmod rkblk" 0 $?
check "rkblk is gone from /proc/modules" "" "$(grep '^rkblk ' /proc/modules)"
check_dmesg "link"
remote 30 finish
echo "kernel_faults: guest 2 done in $(elapsed "$t00") s, $fails failure(s)"
exit $fails
