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
