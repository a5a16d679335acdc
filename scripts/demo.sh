#!/usr/bin/env bash
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
step() { printf "\n\$ rdmakit %s\n" "$*"; "$RDMAKIT_BIN" "$@"; }
step devices
step loopback --size 64k --count 10
step loopback --size 4097 --sge 3 --events'

if rk_has_rdma_device; then
	RDMAKIT_BIN=$rdmakit sh -c "$demo"
else
	echo "No RDMA device on this host: running on Soft-RoCE (rxe) inside a QEMU guest."
	"$root/scripts/softroce" setup
	RDMAKIT_BIN=$rdmakit "$root/scripts/softroce" run -- sh -c "$demo"
fi
