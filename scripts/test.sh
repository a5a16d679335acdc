#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The whole test suite, from a fresh machine: installs what it needs, builds
# with warnings as errors (and, in the background, with ASan and UBSan in
# build-asan), then, at the same time where the device is Soft-RoCE: the
# kernel tests (rkblk module against rdmakit memserver, two guests), the
# Soft-iWARP stage (below), the Debian packages (built, unpacked, run in a
# guest of their own), the device tests (CTest label "rdma") split over two
# guests, the unit tests on the host (also under valgrind, then under
# ASan/UBSan), the ASan/UBSan build's device tests in two more guests, the
# guests' own tests (the runner, the wire, rdmakit-mesh on three guests) and
# a bounded fuzz run (scripts/fuzz.sh, build-fuzz). On a native RDMA device
# the device tests run there, one build after the other. Ends with one line:
# N passed, N failed, N skipped.
#
# Labels, and the stage that runs a test of each (a new test joins its stage
# by its label alone):
#   unit, valgrind, style  the host (no device)
#   rdma        the Soft-RoCE device guests (plain and ASan/UBSan, one guest
#               each; RDMAKIT_DEVICE_SPLIT / RDMAKIT_ASAN_SPLIT move tests to a
#               second; ASan/UBSan: all but RDMAKIT_ASAN_SKIP), and the
#               Soft-iWARP guest (siw0), where each runs its iWARP cases or
#               skips (77) naming what iWARP lacks
#   siw         (beside rdma) the tests that run iWARP cases on siw0
#               (rdmakit_rdma_test(NAME SIW|IWARP_CASES ...))
#   kernel      rkblk against memserver, on rxe and (kernel_siw too) on siw
#   kernel_siw, wire_siw  the siw tests that boot guests of their own
#               (ctest -L to run them alone); wire_siw is not in the suite yet
#   debian      the Debian packages
#   softroce, wire  the runner's and the wire's own guests
#   mesh        rdmakit-mesh on three guests, last and alone
# CPU, not wall, is the budget (25 minutes on 2 cores, both providers): the
# guests' ctest runs through scripts/ctest-cpu.sh, and the summary lists the
# CPU each device test took in its guest.
set -euo pipefail
suite_t0=$(date +%s)
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RDMAKIT_BUILD_DIR:-$root/build}
# shellcheck source=scripts/deps.sh
. "$root/scripts/deps.sh"

rk_install_packages $RDMAKIT_BUILD_PACKAGES $RDMAKIT_CHECK_PACKAGES $RDMAKIT_MESH_PACKAGES \
	$RDMAKIT_DEB_PACKAGES $RDMAKIT_KERNEL_PACKAGES
rk_build "$root" "$build"

# The ASan/UBSan build compiles in the background while the unit tests run.
# Its output is shown if it fails.
asan=${RDMAKIT_ASAN_BUILD_DIR:-$root/build-asan}
mkdir -p "$asan"
(rk_build "$root" "$asan" -DRDMAKIT_SANITIZE=ON >"$asan/build.log" 2>&1) &
asan_build_pid=$!

# Guests that boot at once on a loaded 2-core host: the first fresh-clone run
# of the split stages (load average 20-23, seven guests starting within a
# minute beside the builds) lost both device guests and the siw guest to
# scripts/softroce's boot limit (180 s: "did not boot within 180 s"). A boot
# that hangs still ends, after 600 s.
export RDMAKIT_SOFTROCE_BOOT_TIMEOUT=${RDMAKIT_SOFTROCE_BOOT_TIMEOUT:-600}

summary=()
status=0
native=0
rk_has_rdma_device && native=1
[ $native = 1 ] || "$root/scripts/softroce" setup
cd "$build"

# The same suite built with ASan and UBSan (build-asan): undefined behaviour,
# memory errors and leaks fail a test (exit 86; tests/lsan.supp holds the
# leak suppressions, for rdma-core's own allocations only). Every host test,
# and the device tests but those RDMAKIT_ASAN_SKIP (a ctest -E regex) names.
# RDMAKIT_SANITIZED=1 tells a test it runs slower here, and some run fewer
# cases (the rc matrix pairwise, rping 6 times, bench's cases that share a
# code path once). By default the CLI tests that drive one engine through its
# options are left out there, as the suite's CPU needs it (25 minutes on 2
# cores; each device test costs about twice under the sanitizers in the
# emulated guest): every library engine runs under the sanitizers in its own
# test (rcflow_engine, ping_engines, counters_engine, ud_engine,
# loopback_engine, bench_engine, srq_engine, share_engine, qp_states, cm,
# api, memserver, examples), the error paths and peer behaviour through the
# CLI in cli_rc_faults, faults, cli_clients, cli_persist, cli_auth and
# cli_memserver; the plain stage runs them all. mesh_smoke: Open MPI's own
# allocations would need a suppression list of their own, and its three
# ranks' start-up costs minutes under ASan.
asan_skip=${RDMAKIT_ASAN_SKIP-^(mesh_smoke|cli_rc_matrix|cli_ping|cli_counters|cli_ud|cli_devices|cli_loopback|cli_bench|cli_bench_soak|cli_mem|cli_srq|cli_traffic|cli_qp_states|cli_share_.*)\$}
san_env=(RDMAKIT_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:exitcode=86
	"LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0:exitcode=86"
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86)

# timed NAME CMD...: CMD, its wall and CPU seconds added to times.log for
# the summary. Each use runs in a subshell of its own (background, pipeline
# or parentheses), so `times` there counts CMD's children alone, guests'
# QEMU included: the suite's budget is 25 minutes on a 2-core machine, and
# the stages share its CPU.
: >"$build/times.log"
timed() {
	local name=$1 t0 rc=0 cpu f
	shift
	t0=$(date +%s)
	"$@" || rc=$?
	# (times in this shell: in a command substitution it would count none)
	f=$build/times.$BASHPID
	times >"$f"
	cpu=$(awk 'NR == 2 {
		for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] }
		printf "%.0f", s }' "$f")
	rm -f "$f"
	echo "  $name: $(($(date +%s) - t0)) s wall, $cpu s CPU" >>"$build/times.log"
	return $rc
}

# tally NAME LOG: the summary line of a stage, from its CTest log.
tally() {
	summary+=("$1: $(grep -E 'tests passed' "$2" | tail -1 || echo 'no result')")
}

# collect TITLE PID NAME LOG: wait for a stage run in the background, show its
# log and the seconds since the device tests began, tally it.
collect() {
	echo "== $1"
	wait "$2" || status=1
	cat "$4"
	echo "  ($(($(date +%s) - t0)) s)"
	tally "$3" "$4"
}

# device_tests DIR LOG ONLY SKIP [ENV...]: the device tests (label rdma) of
# the build in DIR that ONLY (a ctest -R regex, or empty: all) names but
# those SKIP (a ctest -E regex, or empty) names, natively or in a Soft-RoCE
# guest of its own, output into LOG, the CPU each took into LOG.cpu. Guests
# with one CPU, except the kernel tests' (their disks have a queue per CPU):
# each emulated CPU costs host CPU, and this 2-core machine runs several guests
# at once (measured: a third less CPU for the same device tests).
device_tests() {
	local dir=$1 log=$2 only=$3 skip=$4
	shift 4
	if [ $native = 1 ]; then
		(cd "$dir" && env "$@" ctest -L rdma ${only:+-R "$only"} ${skip:+-E "$skip"} \
			--output-on-failure --output-junit "$log.xml") >"$log" 2>&1
	else
		(cd "$dir" && "$root/scripts/softroce" run --cpus 1 --timeout 3600 -- env "$@" \
			sh -c "rdma link show; sh '$root/scripts/ctest-cpu.sh' '$log.cpu' -L rdma \
				${only:+-R '$only'} ${skip:+-E '$skip'} --output-on-failure \
				--output-junit '$log.xml'") >"$log" 2>&1
	fi
}

# The plain device tests in two Soft-RoCE guests at once: those device_split
# names (a ctest -R regex) in the second, the rest (and any new test) in the
# first, about half of the stage's guest CPU each (scripts/ctest-cpu.sh's
# figures, the summary's "guest CPU by test"). One guest ran them in 2160 s
# of a whole-suite run, the longest part of the suite, while a core idled.
# Not by default: with the second guest (and the siw guest beside them) the
# fresh-clone run of 9c87ccf had eight guests up at once on 2 cores (load
# 10-12) and timing cases failed (faults' link down, the runner's rping on
# siw, examples); the run before with one guest here passed. Set
# RDMAKIT_DEVICE_SPLIT (e.g. '^(cli_rc_matrix|cli_counters|cli_ping|faults|
# cli_clients|cli_persist|cli_loopback|cli_ud)$') where cores allow.
device_split=${RDMAKIT_DEVICE_SPLIT-}

# The kernel tests (label "kernel", tests/kernel): the rkblk module, built
# by scripts/kmod.sh against the guest kernel's headers, against rdmakit
# memserver in two Soft-RoCE guests (scripts/softroce run2): fio verify,
# swap under a cgroup memory limit, memserver killed and back, memserver
# lost, mixed MTU, the rxe link deleted, isolation and --allow; and rdmakit
# blk in one guest; kernel_siw_io and kernel_siw_faults do the same on
# Soft-iWARP (label kernel too). Five guest boots, in the background from
# the start: much of their time is waiting on the wire.
# kernel_build (the fixture rkblk_ko the kernel tests need) first, on its
# own (in the background: the kernel stage waits for it, the rest does not).
echo "== the rkblk module for the guests' kernel (host), in the background"
rm -f "$build/kbuild.rc"
(ctest -R '^kernel_build$' --output-on-failure >"$build/kbuild.log" 2>&1
	echo $? >"$build/kbuild.rc") &
kbuild_pid=$!
kbuild_wait() { while [ ! -s "$build/kbuild.rc" ]; do sleep 1; done; }
echo "== kernel tests (rkblk module and rdmakit memserver, two Soft-RoCE or Soft-iWARP guests), in the background"
(kbuild_wait; timed kernel ctest -L '^kernel$' -E '^kernel_build$' -FS rkblk_ko --output-on-failure \
	>"$build/kernel.log" 2>&1) &
kernel_pid=$!

# The Soft-iWARP tests that boot siw guests of their own: kernel_siw (rkblk
# against memserver on siw0) has the label kernel too and runs in the kernel
# stage above, after the rxe ones (one chain, not beside the rest: every
# guest more at once on 2 cores stretches them all; at load 20 guests did not
# boot within 180 s). wire_iwarp (label wire_siw) is not run here yet: siw
# can leave a QP's first incoming SEND unread in its socket (docs/testing.md).
if [ $native = 0 ]; then
	"$root/scripts/softroce" --provider siw setup >/dev/null
fi

# The Debian packages (label "debian", tests/debian): dpkg-buildpackage in a
# copy of the source, lintian, dpkg -x into a temporary root, the examples
# and DKMS's rkblk built against the unpacked packages, then the unpacked
# rdmakit, the examples and the module in a Soft-RoCE guest of its own.
echo "== Debian packages (built, unpacked, run in a guest of their own), in the background"
(timed "Debian packages" ctest -L debian --output-on-failure >"$build/debian.log" 2>&1) &
debian_pid=$!

# In Soft-RoCE the plain and the ASan/UBSan device tests run at the same time,
# each in a guest of its own (its own rxe0: counters and link faults of one
# never reach the other), the plain one from here, beside the unit tests; on a
# native device one after the other, after the unit tests.
# examples_build (label unit) first: the device test `examples` runs what it
# installs and builds, and would race its rebuild.
echo "== the examples against the installed library (host)"
ctest -R '^examples_build$' --output-on-failure | tee "$build/examples.log" || status=1
tally "examples build" "$build/examples.log"
t0=$(date +%s)
if [ $native = 0 ]; then
	echo "== device tests (two Soft-RoCE guests: rxe0 on 198.18.0.1 in each), in the background"
	(timed "device, first guest" device_tests "$build" "$build/rdma.log" "" "$device_split") &
	device_pid=$!
	device2_pid=
	if [ -n "$device_split" ]; then
		echo "   second guest: $device_split; first guest: the others"
		(timed "device, second guest" device_tests "$build" "$build/rdma2.log" "$device_split" "") &
		device2_pid=$!
	fi
fi

echo "== unit tests (host), each also under valgrind memcheck (label valgrind)"
timed unit ctest -LE 'rdma|siw|wire|kernel|softroce|mesh|debian' -E '^examples_build$' --output-on-failure | tee "$build/unit.log" || status=1
tally unit "$build/unit.log"

if [ $native = 1 ]; then
	echo "== device tests (native: $(ls /sys/class/infiniband | tr '\n' ' '))"
	device_tests "$build" "$build/rdma.log" "" "" || status=1
	cat "$build/rdma.log"
fi

# A bounded libFuzzer run (clang, build-fuzz): the exchange-message and option
# parsers, from the seed corpus in tests/fuzz/corpus; any crash fails. In the
# background (one CPU for a minute); its log is shown at the end.
(timed fuzz "$root/scripts/fuzz.sh" "${RDMAKIT_FUZZ_SECONDS:-30}" >"$build/fuzz.log" 2>&1) &
fuzz_pid=$!

echo "== ASan/UBSan build ($asan, started in the background after the first build)"
wait "$asan_build_pid" || { tail -40 "$asan/build.log"; echo "FAIL: the ASan/UBSan build"; exit 1; }
# The ASan/UBSan device stage is the longest: it starts first, its unit
# tests beside it; its examples_build before it, as for the plain build (the
# device test `examples` would otherwise reinstall the prefix under it).
echo "== the examples against the installed library, ASan/UBSan (host)"
(cd "$asan" && env "${san_env[@]}" ctest -R '^examples_build$' --output-on-failure) |
	tee "$asan/examples.log" || status=1
tally "examples build, ASan/UBSan" "$asan/examples.log"
if [ $native = 0 ]; then
	# One guest (it is not the longest stage once the plain one is split);
	# RDMAKIT_ASAN_SPLIT (a ctest -R regex) moves those tests to a second.
	asan_split=${RDMAKIT_ASAN_SPLIT-}
	echo "== device tests, ASan/UBSan${asan_skip:+ (all but: $asan_skip)}, beside the others"
	(timed "device, ASan/UBSan, first guest" device_tests "$asan" "$asan/rdma.log" "" \
		"${asan_skip}${asan_split:+${asan_skip:+|}$asan_split}" "${san_env[@]}") &
	asan_device_pid=$!
	asan_device2_pid=
	if [ -n "$asan_split" ]; then
		echo "   second guest: $asan_split"
		(timed "device, ASan/UBSan, second guest" device_tests "$asan" "$asan/rdma2.log" \
			"$asan_split" "$asan_skip" "${san_env[@]}") &
		asan_device2_pid=$!
	fi
fi
echo "== unit tests, ASan/UBSan (host)"
(cd "$asan" && timed "unit, ASan/UBSan" env "${san_env[@]}" ctest -L unit -E '^examples_build$' --output-on-failure) |
	tee "$asan/unit.log" || status=1
tally "unit, ASan/UBSan" "$asan/unit.log"
if [ $native = 1 ]; then
	echo "== device tests, ASan/UBSan${asan_skip:+ (all but: $asan_skip)}"
	device_tests "$asan" "$asan/rdma.log" "" "$asan_skip" "${san_env[@]}" || status=1
	cat "$asan/rdma.log"
fi

# The tests that boot guests of their own, on the host, native device or not:
# the runner itself (label "softroce": run, run2, and mesh's three guests with
# MPI across them) and the wire tests (label "wire", tests/wire: two guests,
# tshark capturing RoCE v2 between them). rdmakit-mesh with faults injected
# (label "mesh") runs last, alone: see there.
echo "== test bed and wire tests (guests of their own: runner, two on a wire)"
RDMAKIT_SOFTROCE_CPUS=1 timed "test bed, wire" ctest -L '^(softroce|wire)$' --output-on-failure | tee "$build/beds.log" || status=1
tally "test bed, wire" "$build/beds.log"

# The device tests on Soft-iWARP's siw0, in a guest of their own
# (scripts/softroce --provider siw), after the test bed (fewer guests at
# once): every rdma test, those labelled siw running their iWARP cases (rc
# over RDMA CM with every byte checked, each refusal iWARP calls for, by
# name), the rest skipping (77) at once naming what iWARP lacks. Where the
# device is native this stage has no guest to run in: the device stage runs
# them on that device.
if [ $native = 0 ]; then
	echo "== iWARP device tests (Soft-iWARP guest: siw0 on 198.18.0.1)"
	echo "   every rdma test: those labelled siw run their iWARP cases, the rest skip (77) at once naming why"
	timed "iWARP device" "$root/scripts/softroce" --provider siw run --cpus 1 --timeout 3600 -- \
		sh -c "rdma link show; sh '$root/scripts/ctest-cpu.sh' '$build/siw.log.cpu' -L rdma \
			--output-on-failure --output-junit '$build/siw.log.xml'" >"$build/siw.log" 2>&1 || status=1
	cat "$build/siw.log"
	tally "iWARP device (siw0)" "$build/siw.log"
fi

if [ $native = 0 ]; then
	collect "device tests, first guest (started $(($(date +%s) - t0)) s ago)" "$device_pid" \
		"device, first guest" "$build/rdma.log"
	[ -z "$device2_pid" ] || collect "device tests, second guest (started beside the first)" \
		"$device2_pid" "device, second guest" "$build/rdma2.log"
else
	tally device "$build/rdma.log"
fi

echo "== the rkblk module for the guests' kernel (host)"
wait "$kbuild_pid" || status=1
[ "$(cat "$build/kbuild.rc")" = 0 ] || status=1
cat "$build/kbuild.log"
tally "kernel module build" "$build/kbuild.log"
collect "kernel tests (started before the unit tests)" "$kernel_pid" kernel "$build/kernel.log"
collect "Debian packages (started before the unit tests)" "$debian_pid" "Debian packages" "$build/debian.log"

if [ $native = 0 ]; then
	collect "device tests, ASan/UBSan, first guest (started $(($(date +%s) - t0)) s ago, beside the others)" \
		"$asan_device_pid" "device, ASan/UBSan, first guest" "$asan/rdma.log"
	[ -z "$asan_device2_pid" ] || collect "device tests, ASan/UBSan, second guest" \
		"$asan_device2_pid" "device, ASan/UBSan, second guest" "$asan/rdma2.log"
else
	tally "device, ASan/UBSan" "$asan/rdma.log"
fi

# rdmakit-mesh on three guests with faults injected (tests/mesh/fabric.sh)
# grades latency against the fabric's best pair: beside the device and kernel
# guests on a 2-core machine a guest the fault does not touch ran 3x slower
# or stalled 100 ms, and was flagged. So it runs when every other guest is
# down.
echo "== fabric tests (rdmakit-mesh on three guests on a hub, faults injected), alone"
RDMAKIT_SOFTROCE_CPUS=1 timed fabric ctest -L mesh --output-on-failure | tee "$build/fabric.log" || status=1
tally "fabric" "$build/fabric.log"

echo "== fuzzing (in the background since the device tests began)"
wait "$fuzz_pid" || status=1
cat "$build/fuzz.log"
summary+=("fuzz: $(grep -c ': no crash$' "$build/fuzz.log" || true) target(s) without a crash")

echo "== summary"
printf '%s\n' "${summary[@]}"
echo "time by stage (they overlap; CPU includes their guests):"
cat "$build/times.log"
echo "guest CPU by test (the one-CPU guest's busy seconds while it ran: scripts/ctest-cpu.sh):"
for f in "$build"/{rdma,rdma2,siw}.log.cpu "$asan"/{rdma,rdma2}.log.cpu; do
	[ -s "$f" ] && sed "s|^|  ${f#"$root"/}: |" "$f"
done | sort -k3,3nr || true
echo "  whole suite: $(($(date +%s) - suite_t0)) s wall"
# The failed checks, the skips and why, and the closing line CI reads.
"$root/scripts/test-verdict.sh" "$build" "$asan" || status=1
exit $status
