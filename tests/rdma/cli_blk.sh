#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit blk against the rkblk module and rdmakit memserver in one guest
# (root; rxe0 on 198.18.0.1): attach, list (text and JSON), a checksummed
# write and read through /dev/rkblkN, refusals (ours naming the option, the
# module's answer line with the server's reject text), detach; a faulty
# server (memserver --inject): each bad region message or rkey refused by
# name, a registration failing after the accept refused with the server's
# reason, a read-only region's WRITE failing with EIO after its retries.
# Attach at boot: blk.conf's two disks by attach --all, their
# /dev/disk/by-id names from the udev rule RULE, detach --all; a bad line.
# Usage: cli_blk.sh RDMAKIT RKBLK_KO RULE
RDMAKIT=$1 KO=$2 RULE=$3
PORT_BASE=20000
. "$(dirname "$0")/lib.sh"

dir=$(mktemp -d)
trap 'kill "$spid" 2>/dev/null; rm -rf "$out" "$err" "$dir"' EXIT
[ -f "$KO" ] || { echo "no module at '$KO' (scripts/kmod.sh builds it)"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root (insmod)"; exit 1; }

# Before the module: the user is told to load it.
run 1 "$RDMAKIT" blk attach "$IP" -p "$PORT" --size 16M && has "$err" "the rkblk module is not loaded (from this build tree: "
run 0 "$RDMAKIT" blk list && has "$out" "no rkblk disks"

# ms_start NAME ARGS...: rdmakit memserver ARGS in the background, output in
# $dir/NAME.out and .err; mspid its PID; back once it listens (30 s at most).
ms_start() {
	_n=$1
	shift
	"$RDMAKIT" memserver "$@" >"$dir/$_n.out" 2>"$dir/$_n.err" &
	mspid=$!
	i=0
	while ! grep -q "listening" "$dir/$_n.err"; do i=$((i + 1)); [ $i -gt 300 ] && break; sleep 0.1; done
}

insmod "$KO" || { echo "FAIL: insmod $KO"; exit 1; }
ms_start s -p "$PORT" --max-size 64M --keep 10
spid=$mspid

# Our own checks (exit 2) are in tests/cli/bad_options.sh, on the host.
# The server's refusal reaches the user through the module's answer line.
run 1 "$RDMAKIT" blk attach "$IP" -p "$PORT" --size 128M && has "$err" "--max-size"
run 1 "$RDMAKIT" blk detach rkblk99 && has "$err" "error:"
# With --json the refusal's document: the module's line as stderr showed it.
run 1 "$RDMAKIT" blk detach rkblk99 --json && json "
assert d['result'] == 'failed' and d['error'].startswith('error:') and d['errno'], d
"

# Attach, list, I/O, detach.
run 0 "$RDMAKIT" blk attach "$IP" -p "$PORT" --size 32M --queues 1 --queue-depth 16 --loss-timeout 5
disk=$(cat "$out")
echo "attached: $disk"
case "$disk" in rkblk[0-9]*) ;; *) echo "FAIL: attach printed '$disk'"; fails=$((fails + 1)) ;; esac
run 0 "$RDMAKIT" blk list && has "$out" "$disk  live  server $IP:$PORT"
run 0 "$RDMAKIT" blk list --json && json "
assert d['result'] == 'ok', d
disk = [x for x in d['disks'] if x['name'] == '$disk'][0]
assert disk['state'] == 'live', disk
assert disk['size'] == 32 << 20, disk
assert disk['queues'] == 1 and disk['queue_depth'] == 16, disk
assert disk['loss_timeout'] == 5, disk
assert disk['path_mtu'] == 1024, disk  # rdma0's 1500 bytes
assert len(disk['session']) == 16, disk
assert disk['errors'] == 0, disk
assert 'unreadable' not in disk, disk
"
# A new disk reads as zeroes; what is written reads back.
if [ "$(dd if="/dev/$disk" bs=1M count=32 iflag=direct 2>/dev/null | tr -d '\0' | wc -c)" -eq 0 ]; then
	echo "ok: a new disk reads as zeroes"
else
	echo "FAIL: a new disk is not zeroed"; fails=$((fails + 1))
fi
head -c 8M /dev/urandom >"$dir/data"
dd if="$dir/data" of="/dev/$disk" bs=1M seek=3 oflag=direct conv=fsync 2>/dev/null
dd if="/dev/$disk" of="$dir/back" bs=1M skip=3 count=8 iflag=direct 2>/dev/null
if cmp -s "$dir/data" "$dir/back"; then
	echo "ok: 8 MiB written at 3 MiB read back equal"
else
	echo "FAIL: data read back differs"; fails=$((fails + 1))
fi
kill -USR1 "$spid"
sleep 1
has "$dir/s.out" "1 session, 1 connection, 33554432 bytes held"
# 16 MiB moved: the port's counters moved (bytes, or packets on rxe).
grep -Eq "(sent|packets sent) [1-9][0-9]*" "$dir/s.out" && echo "ok: the port counters moved" ||
	{ echo "FAIL: no port counter moved"; sed 's/^/  | /' "$dir/s.out"; fails=$((fails + 1)); }
run 0 "$RDMAKIT" blk detach "$disk"
run 0 "$RDMAKIT" blk list && has "$out" "no rkblk disks"
# Attach at boot (docs/boot.md): the disks of a blk.conf by attach --all
# (a rerun attaches none twice), named by the udev rule (systemd/), detached
# by detach --all; a bad line refused by file and line, nothing attached.
boot_t0=$(date +%s)
conf=$dir/blk.conf
printf '# two disks\n%s %s 16M 1\n\n  %s - 8M - queue-depth=8 loss-timeout=5 # the second\n' \
	"$IP" "$PORT" "$IP" >"$conf"
[ "$PORT" -eq 7471 ] || sed -i "s/ - 8M / $PORT 8M /" "$conf"
# udevd from the host's udev, the rule in /run/udev/rules.d (the guest's
# root is the host's, read-only); without it udevadm test shows the link.
udevd=$(command -v systemd-udevd || echo /lib/systemd/systemd-udevd)
mkdir -p /run/udev/rules.d && cp "$RULE" /run/udev/rules.d/ || { echo "FAIL: no rule $RULE"; fails=$((fails + 1)); }
if [ -x "$udevd" ] && "$udevd" --daemon 2>"$dir/udevd.err"; then udev=daemon; else udev=test; sed 's/^/  udevd: /' "$dir/udevd.err"; fi
echo "udev: $udev"
run 0 "$RDMAKIT" blk attach --all --config "$conf" && has "$out" "$conf:2: rkblk" &&
	has "$out" "$conf:4: rkblk"
sed 's/^/  | /' "$out"
run 0 "$RDMAKIT" blk attach --all --config "$conf" --json && json "
assert [x['outcome'] for x in d['lines']] == ['already attached'] * 2, d
"
run 0 "$RDMAKIT" blk list --json && json "
disks = sorted(d['disks'], key=lambda x: -x['size'])
assert [(x['size'], x['queues'], x['server']) for x in disks] == [(16 << 20, 1, '$IP:$PORT'), (8 << 20, $(nproc), '$IP:$PORT')], disks  # '-': one per CPU
assert disks[1]['queue_depth'] == 8 and disks[1]['loss_timeout'] == 5, disks
"
[ "$udev" = daemon ] && udevadm settle -t 60
n=$(ls /sys/block | grep -c '^rkblk')
[ "$n" -eq 2 ] && echo "ok: 2 disks attached" || { echo "FAIL: $n disks"; fails=$((fails + 1)); }
for disk in $(ls /sys/block | grep '^rkblk'); do
	link=/dev/disk/by-id/rkblk-$IP-$PORT-$(cat "/sys/block/$disk/rkblk/session")
	[ "$(cat "/sys/block/$disk/rkblk/addr"):$(cat "/sys/block/$disk/rkblk/port")" = "$IP:$PORT" ] ||
		{ echo "FAIL: $disk's addr and port: $(cat "/sys/block/$disk/rkblk/addr") $(cat "/sys/block/$disk/rkblk/port")"; fails=$((fails + 1)); }
	if [ "$udev" = daemon ]; then
		[ "$(readlink -f "$link")" = "/dev/$disk" ] && echo "ok: $link -> /dev/$disk" ||
			{ echo "FAIL: no $link for $disk"; ls -l /dev/disk/by-id 2>&1 | sed 's/^/  | /'; fails=$((fails + 1)); }
	else
		udevadm test "/sys/block/$disk" >"$dir/udevtest" 2>&1
		has "$dir/udevtest" "${link#/dev/}" && echo "ok: udevadm test: $disk gets $link"
	fi
done
run 0 "$RDMAKIT" blk detach --all --config "$conf" && has "$out" "$conf:2: rkblk" && has "$out" "detached"
run 0 "$RDMAKIT" blk list && has "$out" "no rkblk disks"
if [ "$udev" = daemon ]; then
	udevadm settle -t 60
	[ -z "$(ls /dev/disk/by-id 2>/dev/null | grep '^rkblk-')" ] && echo "ok: the by-id links went with the disks" ||
		{ echo "FAIL: by-id links left: $(ls /dev/disk/by-id | grep '^rkblk-')"; fails=$((fails + 1)); }
	udevadm control --exit
fi
run 0 "$RDMAKIT" blk detach --all --config "$conf" --json && json "
assert [x['outcome'] for x in d['lines']] == ['not attached'] * 2, d
"
printf '%s %s 16M 1\n%s %s 5000 1\n' "$IP" "$PORT" "$IP" "$PORT" >"$dir/bad.conf"
run 2 "$RDMAKIT" blk attach --all --config "$dir/bad.conf" &&
	has "$err" "rdmakit blk attach: $dir/bad.conf:2: SIZE: 5000 is not a multiple of 4096"
run 0 "$RDMAKIT" blk list && has "$out" "no rkblk disks"
echo "attach at boot's case: $(($(date +%s) - boot_t0)) s"
kill -TERM "$spid"
wait "$spid" && echo "ok: memserver exited 0" || { echo "FAIL: memserver exit"; fails=$((fails + 1)); }
has "$dir/s.err" "accepted queue 0/1 of new session"

# A server that gets its side wrong (memserver --inject, for tests): the
# attach is refused naming what was wrong; never a hang, an oops, or data
# returned as good.
# faulty FAULT: memserver --inject FAULT on a port of its own (fpid).
faulty() {
	PORT=$((PORT + 1))
	ms_start f -p "$PORT" --inject "$1"
	fpid=$mspid
}
for f in "region-magic:region message: bad magic 0x524b4dac" \
	"region-length:region message: length 16781312, expected 16777216" \
	"region-short:region message: 20 bytes, expected 40" \
	"region-wrap:region message: address 0xffffffffffffefff + length wraps" \
	"wrong-rkey:fails an RDMA READ of its first or last bytes: remote access error" \
	"register-fail:after accepting: the server cannot register 16777216 bytes (--inject register-fail) (-28)"; do
	faulty "${f%%:*}"
	run 1 "$RDMAKIT" blk attach "$IP" -p "$PORT" --size 16M --queues 1 && has "$err" "${f#*:}"
	kill -TERM "$fpid"
	wait "$fpid"
done
# A region registered read-only: the probe's READs pass, every WRITE fails
# (remote access error). The write is re-issued on new connections a few
# times, then fails with EIO; the disk still reads zeroes.
faulty read-only
run 0 "$RDMAKIT" blk attach "$IP" -p "$PORT" --size 16M --queues 1 --reconnect-delay 1 --json
disk=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["disk"])' "$out")
json "assert d == {'disk': '$disk', 'result': 'ok'}, d"
start=$(date +%s)
head -c 4096 /dev/urandom >"$dir/data"
timeout 120 dd if="$dir/data" of="/dev/$disk" bs=4k count=1 oflag=direct 2>"$dir/dd.err"
exit_is "a WRITE to a read-only region" $? 1 "$dir/dd.err" "$dir/dd.err" && has "$dir/dd.err" "Input/output error"
took=$(($(date +%s) - start))
[ "$took" -le 60 ] && echo "ok: EIO within 60 s ($took s)" || { echo "FAIL: EIO after $took s"; fails=$((fails + 1)); }
[ "$(cat "/sys/block/$disk/rkblk/errors")" -ge 1 ] && echo "ok: $disk counts the error" ||
	{ echo "FAIL: $disk errors $(cat "/sys/block/$disk/rkblk/errors")"; fails=$((fails + 1)); }
if [ "$(dd if="/dev/$disk" bs=4k count=1 iflag=direct 2>/dev/null | tr -d '\0' | wc -c)" -eq 0 ]; then
	echo "ok: the disk still reads zeroes"
else
	echo "FAIL: the failed write's data reads back"; fails=$((fails + 1))
fi
dmesg >"$dir/dmesg"
has "$dir/dmesg" "failed 6 times: I/O error"
run 0 "$RDMAKIT" blk detach "$disk" --json && json "assert d == {'disk': '$disk', 'result': 'ok'}, d"
kill -TERM "$fpid"
wait "$fpid"
if dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace' >/dev/null; then
	echo "FAIL: the kernel log has a WARNING/BUG/Oops:"; dmesg | tail -30 | sed 's/^/  | /'
	fails=$((fails + 1))
else
	echo "ok: kernel log free of WARNING/BUG/Oops"
fi
rmmod rkblk || { echo "FAIL: rmmod"; fails=$((fails + 1)); }
finish
