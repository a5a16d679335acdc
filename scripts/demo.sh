#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The main job, from a fresh machine: installs what it needs, builds, and runs
# rdmakit on the built-in Soft-RoCE default (rxe0 on 198.18.0.1 inside a QEMU
# guest), or natively when this host has an RDMA device.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RDMAKIT_BUILD_DIR:-$root/build}
# shellcheck source=scripts/deps.sh
. "$root/scripts/deps.sh"

rk_install_packages $RDMAKIT_BUILD_PACKAGES
rk_build "$root" "$build" >/dev/null
rdmakit=$build/src/cli/rdmakit

# What runs on the device: each command echoed before it runs, stop at the
# first failure.
demo='set -e
ip=${RDMAKIT_DEMO_IP:-198.18.0.1}
step() { printf "\n\$ rdmakit %s\n" "$*"; "$RDMAKIT_BIN" "$@"; }
# A server in the background and a client against it, both printing.
pair() {
	printf "\n\$ rdmakit rc --server %s &\n\$ rdmakit rc %s %s\n" "$1" "$ip" "$2"
	"$RDMAKIT_BIN" rc --server --wait 30 $1 | sed "s/^/    [server] /" &
	"$RDMAKIT_BIN" rc "$ip" $2 | sed "s/^/    [client] /"
	wait
}
step devices
step loopback --size 64k --count 10
step loopback --size 4097 --sge 3 --events
pair "" "--op all"
pair "--cm" "--cm --op all"
pair "--cm --mem auto -s 1M" "--cm --op read -s 1M --sge 4 --events"
'

if rk_has_rdma_device; then
	RDMAKIT_BIN=$rdmakit sh -c "$demo"
else
	echo "No RDMA device on this host: running on Soft-RoCE (rxe) inside a QEMU guest."
	"$root/scripts/softroce" setup
	RDMAKIT_BIN=$rdmakit "$root/scripts/softroce" run -- sh -c "$demo"
fi

# Part two: remote memory as a block device. Guest 1 (198.18.0.1) serves
# memory with rdmakit memserver; guest 2 (198.18.0.2) loads the rkblk module,
# attaches 64 MiB of it as /dev/rkblkN, writes and reads it back with
# checksums, lists it and detaches. Two Soft-RoCE guests on a wire; the module
# is built for the guest kernel by scripts/kmod.sh.
if rk_has_rdma_device; then
	echo
	echo "Remote-memory block device: skipped on a native device (the module needs root and this"
	echo "kernel's headers: see the README, scripts/kmod.sh --host)."
	exit 0
fi
ko=$(RDMAKIT_KMOD_BUILD=$build "$root/scripts/kmod.sh")
dir=$(mktemp -d "$build/demo-blk.XXXXXX")
trap 'rm -rf "$dir"' EXIT
server='set -e
echo "\$ rdmakit memserver --max-size 64M --keep 5 &"
"$RDMAKIT_BIN" memserver --max-size 64M --keep 5 >"$1/memserver.log" 2>&1 &
pid=$!
i=0
until grep -q listening "$1/memserver.log"; do i=$((i + 1)); [ $i -lt 300 ] || break; sleep 0.1; done
: >"$1/ready"
i=0
until [ -e "$1/done" ]; do i=$((i + 1)); [ $i -lt 900 ] || break; sleep 0.2; done
kill -TERM $pid
wait $pid
sed "s/^/    [memserver] /" "$1/memserver.log"'
client='set -e
KO=$2
step() { printf "\n\$ %s\n" "$*"; "$@"; }
trap ": >$1/done" EXIT
step insmod "$KO"
i=0
until [ -e "$1/ready" ]; do i=$((i + 1)); [ $i -lt 600 ] || break; sleep 0.2; done
printf "\n\$ rdmakit blk attach 198.18.0.1 --size 64M\n"
disk=$("$RDMAKIT_BIN" blk attach 198.18.0.1 --size 64M)
echo "$disk"
printf "\n\$ head -c 64M /dev/urandom >/tmp/data\n"
head -c 64M /dev/urandom >/tmp/data
step sha256sum /tmp/data
step dd if=/tmp/data of=/dev/$disk bs=1M oflag=direct conv=fsync status=none
printf "\n\$ dd if=/dev/%s bs=1M iflag=direct status=none | sha256sum\n" "$disk"
dd if=/dev/$disk bs=1M iflag=direct status=none | sha256sum
[ "$(dd if=/dev/$disk bs=1M iflag=direct status=none | sha256sum | cut -d" " -f1)" = "$(sha256sum </tmp/data | cut -d" " -f1)" ] &&
	echo "    (the same: 64 MiB went to guest 1 and came back)"
step "$RDMAKIT_BIN" blk list
step "$RDMAKIT_BIN" blk detach "$disk"
step rmmod rkblk'
echo
echo "Remote memory as a block device: rdmakit memserver on guest 1, the rkblk module on guest 2."
RDMAKIT_BIN=$rdmakit "$root/scripts/softroce" run2 --timeout 600 -- \
	sh -c "$server" server "$dir" -- sh -c "$client" client "$dir" "$ko"
