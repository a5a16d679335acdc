#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# kernel_build: scripts/kmod.sh builds the rkblk module against the
# Soft-RoCE guest kernel's headers (warnings are errors there), here with W=1
# and sparse (RDMAKIT_KMOD_CHECK=1); this checks
# its result: a .ko for that exact kernel, a build log free of warnings, the
# RDMA modules it needs as dependencies. Loading it is the first step of
# kernel_io (in the guest).
# Usage: build.sh ROOT BUILD
ROOT=$1 BUILD=$2
fails=0
check() {
	if [ "$2" = "$3" ]; then echo "ok: $1 (expected [$2], got [$3])"; else echo "FAIL: $1: expected [$2], got [$3]"; fails=$((fails + 1)); fi
}
"$ROOT/scripts/softroce" setup || { echo "FAIL: scripts/softroce setup"; exit 1; }
CACHE=${RDMAKIT_SOFTROCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdmakit/softroce}
kver=$(cut -d' ' -f1 "$CACHE/current")
ko=$(RDMAKIT_KMOD_BUILD=$BUILD RDMAKIT_KMOD_CHECK=1 "$ROOT/scripts/kmod.sh")
rc=$?
check "scripts/kmod.sh exit status" 0 $rc
check "the module's path" "$BUILD/kernel-$kver/rkblk.ko" "$ko"
[ -f "$ko" ] || { echo "FAIL: no module file"; exit 1; }
warn=$(grep -E -i '(^|[^-])warning:' "$BUILD/kernel-$kver/build.log" | head -n 3)
check "warnings in $BUILD/kernel-$kver/build.log" "" "$warn"
check "the build ran sparse (C=1) on every file" "$(ls "$ROOT"/kernel/*.c | wc -l)" "$(grep -c '^ *CHECK ' "$BUILD/kernel-$kver/build.log")"
check "vermagic is the guest kernel's" "$kver" "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)"
deps=$(modinfo -F depends "$ko")
for m in ib_core rdma_cm; do
	check "the module depends on $m" yes "$(echo ",$deps," | grep -q ",$m," && echo yes)"
done
check "module name" rkblk "$(modinfo -F name "$ko")"
exit $fails
