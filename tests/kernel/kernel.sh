#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Kernel tests (label "kernel"): the rkblk module against `rdmakit memserver`
# in two Soft-RoCE guests on a virtual wire. Boots its own guests with
# `scripts/softroce run2` (so it runs on the host): guest 1 runs server.sh
# (memservers on request), guest 2 runs client_CASE.sh, which loads the
# module, does the case's steps and checks, and prints "ok:"/"FAIL:" lines
# with what was expected and what was got.
# Usage: kernel.sh CASE SOFTROCE RDMAKIT SWAPCHECK BUILD WORKDIR
#   CASE: io (load, fio verify, swap, isolation, --allow) or faults (server
#   killed and back, server lost, rdma link deleted). BUILD holds
#   kernel-KVER/rkblk.ko (scripts/kmod.sh); WORKDIR must be inside the
#   project tree (both guests share it).
# RDMAKIT_SOFTROCE_PROVIDER=siw runs it on Soft-iWARP (the kernel_siw_* tests;
# the guest scripts take the device from RDMAKIT_SOFTROCE_DEVICES).
CASE=$1 SOFTROCE=$2 RDMAKIT=$3 SWAPCHECK=$4 BUILD=$5 W=$6
HERE=$(cd "$(dirname "$0")" && pwd)
KO="$BUILD/kernel-@KVER@/rkblk.ko"
if ! ls "$BUILD"/kernel-*/rkblk.ko >/dev/null 2>&1; then
	echo "FAIL: no $BUILD/kernel-*/rkblk.ko (the kernel_build test, scripts/kmod.sh, builds it)"
	exit 1
fi
# The guests run the host's binaries: fio must be installed here.
command -v fio >/dev/null ||
	{ echo "FAIL: fio is not installed (RDMAKIT_KERNEL_PACKAGES in scripts/deps.sh)"; exit 1; }
rm -rf "$W" && mkdir -p "$W" || exit 1
W=$(cd "$W" && pwd -P)
case $CASE in
io) client="sh $HERE/client_io.sh $RDMAKIT $SWAPCHECK $KO $W" ;;
faults) client="sh $HERE/client_faults.sh $RDMAKIT $KO $W" ;;
*) echo "kernel.sh: unknown case $CASE" >&2; exit 2 ;;
esac
t0=$(date +%s)
# shellcheck disable=SC2086
"$SOFTROCE" run2 --timeout "${RDMAKIT_KERNEL_TIMEOUT:-2400}" -- sh "$HERE/server.sh" "$RDMAKIT" "$W" "${RDMAKIT_KERNEL_TIMEOUT:-2400}" -- $client
rc=$?
echo "kernel_$CASE: both guests done in $(($(date +%s) - t0)) s (run2 exit $rc, expected 0)"
exit $rc
