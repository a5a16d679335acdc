#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Guest 2 of the kernel test "kernel_io" (guest 1 runs server.sh):
#   load:     insmod rkblk.ko; /dev/rkblk-ctl appears
#   fio:      verify=crc32c random write then read, iodepth 32 (128 MiB)
#             and 1 (32 MiB), block sizes 4 KiB to 128 KiB at random (4 KiB ones alone
#             take too long under emulation: ~600 IOPS at iodepth 32 on a
#             loaded 2-core host), zero errors; the two at once, each on
#             its own disk (session)
#   swap:     meanwhile, on a third disk: mkswap/swapon; swapcheck in a
#             cgroup whose memory.max is a third of what it writes;
#             pswpout/pswpin grow
#   isolation: two clients (two sessions, one over IPv6) get separate
#             zeroed regions and never see each other's bytes; a client outside --allow is
#             refused with the reason; detach and rmmod clean
# Usage: client_io.sh RDMAKIT SWAPCHECK KO W
RDMAKIT=$1 SWAPCHECK=$2 KO=$(echo "$3" | sed "s/@KVER@/$(uname -r)/") W=$4
. "$(dirname "$0")/lib.sh"
SRV=198.18.0.1 ME=198.18.0.2 SRV6=2001:2::1 ME6=2001:2::2
FIO_MB=${RDMAKIT_KERNEL_FIO_MB:-128}
# iodepth 1: 32 MiB by default, about 500 I/Os each way; each waits
# out a round trip of the emulated wire (tens of ms, 84 ms a write in a
# loaded whole-suite run, where its 256 MiB took 714 s, the longest part of
# the suite's kernel stage): RDMAKIT_KERNEL_FIO_QD1_MB=256 runs that. It runs
# beside iodepth 32 and the swap workload, not after them.
FIO_QD1_MB=${RDMAKIT_KERNEL_FIO_QD1_MB:-32}
FIO_BS=${RDMAKIT_KERNEL_FIO_BS:-4k-128k}
SWAP_MB=${RDMAKIT_KERNEL_SWAP_MB:-96}
# The two clients' disks (each written and read back whole).
PAIR_MB=${RDMAKIT_KERNEL_PAIR_MB:-32}
t00=$(now)

echo "== load"
insmod "$KO"
check "insmod $KO exit status" 0 $?
check "/dev/rkblk-ctl exists" yes "$([ -c /dev/rkblk-ctl ] && echo yes)"
remote 30 "ms_start main --keep 5 --max-size 1G" ||
	{ echo "FAIL: memserver did not start on guest 1"; remote 30 finish; exit 1; }

# The two fio runs and the swap workload go at the same time, each on a
# disk (a session) of its own: iodepth 1 mostly waits on round trips of the
# emulated wire, and one after another they took over nine minutes.
echo "== fio verify=crc32c, random write then read, block sizes $FIO_BS: iodepth 1 ($FIO_QD1_MB MiB) and 32 ($FIO_MB MiB) at once"
t0=$(now)
fio_disk=""
for qd in 1 32; do
	mb=$FIO_MB
	[ $qd -ne 1 ] || mb=$FIO_QD1_MB
	attach_disk "$SRV" --size "${mb}M"
	check "attach $mb MiB for fio iodepth $qd" 0 $?
	[ -n "$DISK" ] || continue
	fio_disk="$fio_disk $qd:$DISK:$mb"
	check "$DISK size (bytes)" $((mb * 1048576)) "$(attr "$DISK" size)"
	check "$DISK state" live "$(attr "$DISK" state)"
	check "$DISK server" "$SRV:7471" "$(attr "$DISK" server)"
	timeout 1200 fio --name=verify-qd$qd --filename="/dev/$DISK" --direct=1 --ioengine=libaio \
		--rw=randwrite --bsrange="$FIO_BS" --iodepth=$qd --size=${mb}M --verify=crc32c \
		--verify_fatal=1 --do_verify=1 --output-format=json --output="$W/fio-qd$qd.json" \
		>"$W/fio-qd$qd.out" 2>&1 &
	echo $! >"$W/fio-qd$qd.pid"
done

echo "== swap: ${SWAP_MB} MiB of checksummed pages in a cgroup with memory.max $((SWAP_MB / 3))M (beside fio)"
attach_disk "$SRV" --size "$((SWAP_MB + 128))M"
check "attach $((SWAP_MB + 128)) MiB for swap" 0 $?
if [ -n "$DISK" ]; then
	mkswap "/dev/$DISK" >/dev/null
	check "mkswap /dev/$DISK" 0 $?
	swapon "/dev/$DISK"
	check "swapon /dev/$DISK" 0 $?
	check "/proc/swaps lists /dev/$DISK" yes "$(grep -q "^/dev/$DISK " /proc/swaps && echo yes)"
	out0=$(awk '$1 == "pswpout" { print $2 }' /proc/vmstat)
	in0=$(awk '$1 == "pswpin" { print $2 }' /proc/vmstat)
	# Swap-in is one synchronous read per fault: let each bring 32 pages
	# (the most swap readahead does) rather than 8, the test bed's round
	# trips being milliseconds long.
	echo 5 >/proc/sys/vm/page-cluster
	cg=/sys/fs/cgroup/swapcheck
	mkdir -p $cg
	echo "$((SWAP_MB / 3))M" >$cg/memory.max
	check "memory.max of the workload's cgroup" $((SWAP_MB / 3 * 1048576)) "$(cat $cg/memory.max)"
	ts=$(now)
	timeout 900 sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" "$3"' sh "$cg" "$SWAPCHECK" "$SWAP_MB"
	rc=$?
	echo "  swap workload: $(elapsed "$ts") s"
	check "swapcheck $SWAP_MB MiB exit status (0: every page read back intact)" 0 $rc
	out=$(($(awk '$1 == "pswpout" { print $2 }' /proc/vmstat) - out0))
	in=$(($(awk '$1 == "pswpin" { print $2 }' /proc/vmstat) - in0))
	# At the peak SWAP_MB - memory.max of anonymous memory cannot be in RAM.
	need=$(((SWAP_MB - SWAP_MB / 3) * 256))
	check_num "pages swapped out (pswpout delta)" -ge $need "$out"
	check_num "pages swapped in (pswpin delta, at least half of those)" -ge $((need / 2)) "$in"
	check_num "the cgroup's memory.events oom_kill" -eq 0 "$(awk '$1 == "oom_kill" { print $2 }' $cg/memory.events)"
	rmdir $cg
	"$RDMAKIT" blk detach "$DISK" >"$W/detach-busy.out" 2>&1
	check "detach refused while swapped on (exit status non-zero)" yes "$([ $? -ne 0 ] && echo yes)"
	swapoff "/dev/$DISK"
	check "swapoff /dev/$DISK" 0 $?
	check "$DISK errors attribute" 0 "$(attr "$DISK" errors)"
	"$RDMAKIT" blk detach "$DISK"
	check "detach $DISK" 0 $?
fi

for qd_disk in $fio_disk; do
	qd=${qd_disk%%:*} mb=${qd_disk##*:} disk=${qd_disk#*:}
	disk=${disk%:*}
	wait "$(cat "$W/fio-qd$qd.pid")"
	rc=$?
	echo "  fio iodepth $qd: done $(elapsed "$t0") s after both started"
	check "fio iodepth $qd exit status" 0 $rc
	check "fio iodepth $qd error" 0 "$(fio_json "$W/fio-qd$qd.json" error)"
	check "fio iodepth $qd MiB written" "$mb" "$(fio_json "$W/fio-qd$qd.json" write_mib)"
	check "fio iodepth $qd MiB read back and verified" "$mb" "$(fio_json "$W/fio-qd$qd.json" read_mib)"
	[ $rc -eq 0 ] || tail -n 5 "$W/fio-qd$qd.out"
	check "$disk errors attribute" 0 "$(attr "$disk" errors)"
	"$RDMAKIT" blk detach "$disk"
	check "detach $disk" 0 $?
done

echo "== two clients: separate zeroed regions (the second over IPv6, marked DSCP 26)"
attach_disk "$SRV" --size "${PAIR_MB}M"
a=$DISK
# IPv6 (RFC 5180's benchmarking range): the memserver on the wildcard
# address takes both families.
remote 30 "ip -6 addr add $SRV6/64 dev eth0 nodad"
check "guest 1: IPv6 address $SRV6" 0 $?
ip -6 addr add "$ME6/64" dev eth0 nodad
check "guest 2: IPv6 address $ME6" 0 $?
attach_disk "$SRV6" --size "${PAIR_MB}M" --dscp 26
b=$DISK
check "two disks attached" yes "$([ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] && echo yes)"
if [ -n "$a" ] && [ -n "$b" ]; then
	sa=$(attr "$a" session) sb=$(attr "$b" session)
	check "the two sessions differ ($sa, $sb)" yes "$([ -n "$sa" ] && [ "$sa" != "$sb" ] && echo yes)"
	zero=$(head -c $((PAIR_MB * 1048576)) /dev/zero | sha256sum | cut -d' ' -f1)
	check "$a reads zeroes when new" "$zero" "$(dd if=/dev/$a bs=1M iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
	head -c $((PAIR_MB * 1048576)) /dev/urandom >/tmp/pat-a
	pa=$(sha256sum </tmp/pat-a | cut -d' ' -f1)
	dd if=/tmp/pat-a of=/dev/$a bs=1M oflag=direct conv=fsync 2>/dev/null
	check "write $PAIR_MB MiB to $a" 0 $?
	check "$b still reads zeroes after $a was written" "$zero" \
		"$(dd if=/dev/$b bs=1M iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
	head -c $((PAIR_MB * 1048576)) /dev/urandom >/tmp/pat-b
	pb=$(sha256sum </tmp/pat-b | cut -d' ' -f1)
	dd if=/tmp/pat-b of=/dev/$b bs=1M oflag=direct conv=fsync 2>/dev/null
	check "$b reads back its own bytes" "$pb" "$(dd if=/dev/$b bs=1M iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
	check "$a reads back its own bytes, not $b's" "$pa" "$(dd if=/dev/$a bs=1M iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
	"$RDMAKIT" blk list >"$W/list.out" 2>&1
	check "rdmakit blk list exit status" 0 $?
	check "rdmakit blk list shows $a and $b" yes "$(grep -q "$a" "$W/list.out" && grep -q "$b" "$W/list.out" && echo yes)"
	check "$a has no type of service" -1 "$(attr "$a" tos)"
	check "$b's type of service (--dscp 26)" 104 "$(attr "$b" tos)"
	check "rdmakit blk list shows $b's class" yes "$(grep "$b" "$W/list.out" | grep -q 'tclass 104 (DSCP 26)' && echo yes)"
	check "$b's server is the IPv6 address" yes "$(attr "$b" server | grep -q "$SRV6" && echo yes)"
	# The kernel's own record of the CM ids (iproute2 prints tos where the
	# kernel reports it).
	rdma resource show cm_id >"$W/cm_id.out" 2>&1
	if grep -q ' tos ' "$W/cm_id.out"; then
		check "rdma resource show cm_id: a CM id of tos 104" yes "$(grep -q ' tos 104' "$W/cm_id.out" && echo yes)"
	else
		echo "  (rdma resource show cm_id reports no tos here: $(head -c 200 "$W/cm_id.out"))"
	fi
	"$RDMAKIT" blk detach "$a"
	check "detach $a" 0 $?
	"$RDMAKIT" blk detach "$b"
	check "detach $b" 0 $?
fi

echo "== a client outside --allow is refused with the reason"
remote 30 "ms_start allow --port 7472 --allow $SRV/32"
out=$("$RDMAKIT" blk attach "$SRV" -p 7472 --size 4M 2>&1)
rc=$?
i=0
while [ $rc -ne 0 ] && [ $i -lt 10 ] && echo "$out" | grep -qi 'refused'; do
	sleep 1
	i=$((i + 1))
	out=$("$RDMAKIT" blk attach "$SRV" -p 7472 --size 4M 2>&1)
	rc=$?
done
echo "  rdmakit blk attach $SRV -p 7472: exit $rc: $out"
check "attach from $ME to a server with --allow $SRV/32 fails" yes "$([ $rc -ne 0 ] && echo yes)"
check "the refusal names the client's address $ME" yes "$(echo "$out" | grep -q "$ME" && echo yes)"
check "no disk left behind by the refused attach" "" "$(ls /sys/block | grep rkblk)"

echo "== unload"
rmmod rkblk
check "rmmod rkblk" 0 $?
check_dmesg "kernel_io"
# What the module said besides attach and detach (timeouts, reconnects), to read.
dmesg | grep 'rkblk' | grep -vE 'attached|detached' | tail -n 12 | sed 's/^/  | /'
remote 30 finish
echo "kernel_io: guest 2 done in $(elapsed "$t00") s, $fails failure(s)"
exit $fails
