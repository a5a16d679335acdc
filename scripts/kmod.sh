#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# kmod.sh: build the rkblk kernel module (kernel/) against the exact headers
# of a kernel and print the path of the .ko.
#
#   scripts/kmod.sh               the Soft-RoCE guest's kernel: the first word
#                                 of ~/.cache/rdmakit/softroce/current
#   scripts/kmod.sh --host        this machine's running kernel (uname -r),
#                                 for a host with real RDMA hardware
#   scripts/kmod.sh --kver VER    the kernel VER
#
# Installs linux-headers-VER with apt-get when /usr/src/linux-headers-VER is
# missing. Builds out of the source tree (a copy in BUILD/kernel-VER/src) with
# warnings as errors, and caches BUILD/kernel-VER/rkblk.ko: rebuilt only when
# the sources change. BUILD is build/ in the checkout, or $RDMAKIT_KMOD_BUILD.
# RDMAKIT_KMOD_CHECK=1 (the kernel_build test) also builds with W=1 and runs
# sparse (C=1: endianness and address-space annotations); their warnings fail.
set -euo pipefail

PROG=kmod.sh
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath -m "${RDMAKIT_KMOD_BUILD:-$ROOT/build}")
CACHE=${RDMAKIT_SOFTROCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdmakit/softroce}

die() { echo "$PROG: $*" >&2; exit 1; }

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }

kver=
case "${1:-}" in
'') [ -r "$CACHE/current" ] ||
	die "no Soft-RoCE kernel in $CACHE (run scripts/softroce setup, or use --host / --kver VER)"
	read -r kver _ <"$CACHE/current" ;;
--host) kver=$(uname -r) ;;
--kver) [ -n "${2:-}" ] || die "--kver: missing version"; kver=$2 ;;
-h|--help) usage; exit 0 ;;
*) die "unknown argument '$1' (see --help)" ;;
esac
[[ $kver =~ ^[A-Za-z0-9._+~-]+$ ]] || die "bad kernel version '$kver'"

kdir=/usr/src/linux-headers-$kver
if [ ! -e "$kdir/Makefile" ]; then
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "$PROG: installing linux-headers-$kver" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
		"linux-headers-$kver" >/dev/null || die "cannot install linux-headers-$kver"
fi
[ -e "$kdir/Makefile" ] || die "$kdir: no kernel headers"

checks=()
if [ "${RDMAKIT_KMOD_CHECK:-0}" = 1 ]; then
	command -v sparse >/dev/null ||
		die "RDMAKIT_KMOD_CHECK=1 needs sparse (apt-get install sparse)"
	checks=(W=1 C=1)
fi

out=$BUILD/kernel-$kver
sources=("$ROOT"/kernel/Kbuild "$ROOT"/kernel/*.c "$ROOT"/kernel/*.h
	"$ROOT"/include/rdmakit/memproto.h)
hash=$( (cat "${sources[@]}"; echo "$kver ${checks[*]}") | sha256sum | cut -d' ' -f1)
if [ -f "$out/rkblk.ko" ] && [ "$(cat "$out/srchash" 2>/dev/null)" = "$hash" ]; then
	echo "$out/rkblk.ko"
	exit 0
fi

rm -rf "$out"
mkdir -p "$out/src" "$out/include/rdmakit"
cp "$ROOT"/kernel/Kbuild "$ROOT"/kernel/*.c "$ROOT"/kernel/*.h "$out/src/"
cp "$ROOT/include/rdmakit/memproto.h" "$out/include/rdmakit/"
if ! make -C "$kdir" M="$out/src" "${checks[@]}" modules >"$out/build.log" 2>&1; then
	cat "$out/build.log" >&2
	die "build failed (log: $out/build.log)"
fi
# -Werror makes warnings fail the build; a warning kbuild itself prints
# (modpost, objtool) or sparse prints does not, so refuse those too.
if grep -E -i '(^|[^-])warning:' "$out/build.log" >&2; then
	die "the build printed warnings (log: $out/build.log)"
fi
cp "$out/src/rkblk.ko" "$out/rkblk.ko"
echo "$hash" >"$out/srchash"
echo "$out/rkblk.ko"
