#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what it needs, builds
# with warnings as errors, runs the unit tests on the host and the device tests
# (CTest label "rdma") against a real RDMA device when the host has one, else
# inside the Soft-RoCE guest (scripts/softroce), all in one guest boot; then
# the wire tests and the kernel tests (rkblk module against rdmakit memserver),
# each booting two guests of its own.
# Then: the unit tests under valgrind (in the unit step), the whole suite again
# built with ASan and UBSan (build-asan), and a bounded fuzz run
# (scripts/fuzz.sh, build-fuzz). Ends with one line: N passed, N failed, N skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RDMAKIT_BUILD_DIR:-$root/build}
# shellcheck source=scripts/deps.sh
. "$root/scripts/deps.sh"

rk_install_packages $RDMAKIT_BUILD_PACKAGES $RDMAKIT_CHECK_PACKAGES
rk_build "$root" "$build"

# The ASan/UBSan build (used by the stage near the end) compiles in the
# background while the host and device tests run: the emulated guest leaves
# a CPU idle often enough. Its output is shown if it fails.
asan=${RDMAKIT_ASAN_BUILD_DIR:-$root/build-asan}
mkdir -p "$asan"
(rk_build "$root" "$asan" -DRDMAKIT_SANITIZE=ON >"$asan/build.log" 2>&1) &
asan_build_pid=$!

summary=()
status=0
cd "$build"

echo "== unit tests (host), each also under valgrind memcheck (label valgrind)"
ctest -LE 'rdma|wire|kernel' --output-on-failure | tee "$build/unit.log" || status=1
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

# The wire tests (label "wire", tests/wire): two Soft-RoCE guests on a virtual
# wire, tshark capturing RoCE v2 between them. They boot their own guests
# (scripts/softroce run2), so they run here on the host, native device or not.
echo "== wire tests (two Soft-RoCE guests on a virtual wire, tshark)"
"$root/scripts/softroce" setup
ctest -L wire --output-on-failure | tee "$build/wire.log" || status=1
summary+=("wire: $(grep -E 'tests passed' "$build/wire.log" | tail -1 || echo 'no result')")

# The kernel tests (label "kernel", tests/kernel): the rkblk module, built
# by scripts/kmod.sh against the guest kernel's headers, against rdmakit
# memserver in two Soft-RoCE guests (scripts/softroce run2): fio verify,
# swap under a cgroup memory limit, memserver killed and back, memserver
# lost, the rxe link deleted, isolation and --allow. Two guest boots.
# They wait on the emulated wire far more than they compute (an iodepth-1
# round trip is tens of ms of idle guests), so they run in the background
# while the ASan/UBSan stage below uses the CPUs; their log is shown after it.
echo "== kernel tests (rkblk module and rdmakit memserver, two Soft-RoCE guests), in the background"
kernel_t0=$(date +%s)
(ctest -L kernel --output-on-failure >"$build/kernel.log" 2>&1) &
kernel_pid=$!

# A bounded libFuzzer run (clang, build-fuzz): the exchange-message and option
# parsers, from the seed corpus in tests/fuzz/corpus; any crash fails. Also in
# the background (one CPU for a minute); its log is shown at the end.
echo "== fuzzing, in the background"
("$root/scripts/fuzz.sh" "${RDMAKIT_FUZZ_SECONDS:-60}" >"$build/fuzz.log" 2>&1) &
fuzz_pid=$!

# The same suite built with ASan and UBSan (build-asan): undefined behaviour,
# memory errors and leaks fail a test (exit 86; tests/lsan.supp holds the
# leak suppressions, for rdma-core's own allocations only). Every host test,
# and every device test in one more guest boot (RDMAKIT_SANITIZED=1 shrinks
# the rc matrix to one size past the MTU; every op, connection method,
# completion mode and SGE count still runs). RDMAKIT_ASAN_SKIP, a ctest -E
# regex, leaves tests out when asked; by default none.
asan_skip=${RDMAKIT_ASAN_SKIP:-}
# RDMAKIT_SANITIZED=1 tells a test with time bounds that it runs slower here.
san_env=(RDMAKIT_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:exitcode=86
	"LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0:exitcode=86"
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86)
echo "== ASan/UBSan build ($asan, started in the background after the first build)"
wait "$asan_build_pid" || { tail -40 "$asan/build.log"; echo "FAIL: the ASan/UBSan build"; exit 1; }
cd "$asan"
echo "== unit tests, ASan/UBSan (host)"
env "${san_env[@]}" ctest -L unit --output-on-failure | tee "$asan/unit.log" || status=1
summary+=("unit, ASan/UBSan: $(grep -E 'tests passed' "$asan/unit.log" | tail -1)")
echo "== device tests, ASan/UBSan${asan_skip:+ (all but: $asan_skip)}"
if rk_has_rdma_device; then
	env "${san_env[@]}" ctest -L rdma ${asan_skip:+-E "$asan_skip"} --output-on-failure |
		tee "$asan/rdma.log" || status=1
else
	"$root/scripts/softroce" run -- env "${san_env[@]}" \
		sh -c "ctest -L rdma ${asan_skip:+-E '$asan_skip'} --output-on-failure" |
		tee "$asan/rdma.log" || status=1
fi
summary+=("device, ASan/UBSan: $(grep -E 'tests passed' "$asan/rdma.log" | tail -1 || echo 'no result')")

echo "== fuzzing (started before the ASan/UBSan stage)"
wait "$fuzz_pid" || status=1
cat "$build/fuzz.log"
summary+=("fuzz: $(grep -c ': no crash$' "$build/fuzz.log" || true) target(s) without a crash")
cd "$build"

echo "== kernel tests (started before the ASan/UBSan stage)"
wait "$kernel_pid" || status=1
cat "$build/kernel.log"
summary+=("kernel: $(grep -E 'tests passed' "$build/kernel.log" | tail -1 || echo 'no result') ($(($(date +%s) - kernel_t0)) s, beside the ASan/UBSan stage)")

echo "== summary"
printf '%s\n' "${summary[@]}"
# One closing line for all runs, in the plain form CI reads.
cat "$build/unit.log" "$build/rdma.log" "$build/wire.log" "$build/kernel.log" "$asan/unit.log" "$asan/rdma.log" "$build/fuzz.log" | awk '
	/tests passed, [0-9]+ tests failed out of/ {
		for (i = 1; i <= NF; i++) if ($i == "failed") f += $(i - 2); t += $NF
	}
	/^fuzz_[a-z]+: no crash$/ { t++ }
	/^FAIL: fuzz/ { t++; f++ }
	/\*\*\*Skipped/ { s++ }
	END { printf "%d passed, %d failed, %d skipped\n", t - f - s, f, s; exit (f > 0 || t == 0) }
' || status=1
exit $status
