#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Hints that work where the user is (issue 35): an installed rdmakit names the
# installed command, package or manual page, never the source tree; one run
# from a build tree adds that tree's form (scripts/softroce, scripts/kmod.sh).
# "Installed" is a copy of RDMAKIT outside any build tree (it still finds
# the build's librdmakit by its RUNPATH); a build tree is told by the
# CMakeCache.txt above the program, so a copy under a made-up cache shows
# that the source directory is read from it. Host only (label unit).
# Usage: hints.sh RDMAKIT SOURCE_DIR
RDMAKIT=$1 SRC=$2
. "$(dirname "$0")/../rdma/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$dir"' EXIT

mkdir -p "$dir/bin" "$dir/tree/build/src/cli"
cp "$RDMAKIT" "$dir/bin/rdmakit"
cp "$RDMAKIT" "$dir/tree/build/src/cli/rdmakit"
printf '%s\n' "# a made-up cache" "CMAKE_PROJECT_NAME:STATIC=rdmakit" \
	"rdmakit_SOURCE_DIR:STATIC=/made/up/src" >"$dir/tree/build/CMakeCache.txt"
INST=$dir/bin/rdmakit FAKE=$dir/tree/build/src/cli/rdmakit

# No device: only where the host has none (else the commands would run).
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	SOFTROCE="Soft-RoCE makes a device: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev IFACE (rdmakit-devices(1))"
	# Each fails before it listens or connects (tests/cli/no_device.sh).
	for cmd in "rc --server" "ping 127.0.0.1" "bench --server" "loopback" "devices"; do
		# shellcheck disable=SC2086 # the words of the command
		run 1 "$INST" $cmd </dev/null
		has "$err" "$SOFTROCE"
		lacks "$err" "scripts/softroce"
		lacks "$err" "build tree"
		# shellcheck disable=SC2086
		run 1 "$RDMAKIT" $cmd </dev/null
		has "$err" "$SOFTROCE; from this build tree: $SRC/scripts/softroce run -- COMMAND"
	done
	run 1 "$FAKE" rc --server </dev/null
	has "$err" "from this build tree: /made/up/src/scripts/softroce run -- COMMAND"
else
	echo "note: this host has RDMA devices: the no-device hints are left out"
fi

# rkblk not loaded: modprobe and the rdmakit-dkms package installed, the
# tree's kmod.sh in a build tree.
if [ ! -e /dev/rkblk-ctl ]; then
	run 1 "$INST" blk detach rkblk0
	has "$err" "the rkblk module is not loaded (modprobe rkblk; the rdmakit-dkms package builds it for each kernel; see rdmakit-blk(1))"
	lacks "$err" "insmod"
	lacks "$err" "README"
	run 1 "$RDMAKIT" blk detach rkblk0
	has "$err" "the rkblk module is not loaded (from this build tree: $SRC/scripts/kmod.sh --host builds it; insmod the rkblk.ko it prints)"
	run 1 "$FAKE" blk detach rkblk0
	has "$err" "from this build tree: /made/up/src/scripts/kmod.sh"
fi

# rdmakit-mesh not found (PATH without it): its package installed; MPI and a
# rebuild in a build tree that has none.
run 1 env PATH=/nonexistent "$INST" mesh
has "$err" "it is in the rdmakit-mesh package: apt-get install rdmakit-mesh"
lacks "$err" "rebuild"
lacks "$err" "libopenmpi-dev"
run 1 env PATH=/nonexistent "$FAKE" mesh
has "$err" "this build tree has none: it is built only where CMake finds MPI: apt-get install openmpi-bin libopenmpi-dev, then rebuild"

finish
