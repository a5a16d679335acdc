#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what it needs, builds
# with warnings as errors, runs the unit tests on the host and the device tests
# (CTest label "rdma") against a real RDMA device when the host has one, else
# inside the Soft-RoCE guest (scripts/softroce), all in one guest boot.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RDMAKIT_BUILD_DIR:-$root/build}
# shellcheck source=scripts/deps.sh
. "$root/scripts/deps.sh"

rk_install_packages $RDMAKIT_BUILD_PACKAGES
rk_build "$root" "$build"

summary=()
status=0
cd "$build"

echo "== unit tests (host)"
ctest -LE rdma --output-on-failure | tee "$build/unit.log" || status=1
summary+=("unit: $(grep -E 'tests passed' "$build/unit.log" | tail -1)")

if rk_has_rdma_device; then
	echo "== device tests (native: $(ls /sys/class/infiniband | tr '\n' ' '))"
	ctest -L rdma --output-on-failure | tee "$build/rdma.log" || status=1
else
	echo "== device tests (Soft-RoCE guest: rxe0 on 198.18.0.1)"
	"$root/scripts/softroce" setup
	"$root/scripts/softroce" run -- sh -c 'rdma link show; ctest -L rdma --output-on-failure' |
		tee "$build/rdma.log" || status=1
fi
summary+=("device: $(grep -E 'tests passed' "$build/rdma.log" | tail -1 || echo 'no result')")

echo "== summary"
printf '%s\n' "${summary[@]}"
# One closing line for both runs, in the plain form CI reads.
cat "$build/unit.log" "$build/rdma.log" | awk '
	/tests passed, [0-9]+ tests failed out of/ {
		for (i = 1; i <= NF; i++) if ($i == "failed") f += $(i - 2); t += $NF
	}
	/\*\*\*Skipped/ { s++ }
	END { printf "%d passed, %d failed, %d skipped\n", t - f - s, f, s; exit (f > 0 || t == 0) }
' || status=1
exit $status
