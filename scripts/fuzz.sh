#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A bounded libFuzzer run over the exchange-message parser, the option
# parser and the blk.conf parser: builds with clang (ASan + UBSan +
# libFuzzer) in build-fuzz, runs each target for its share of SECONDS
# (default 60 in all) from the seed corpus in tests/fuzz/corpus, and fails
# on any crash, sanitizer report, failed property check or timeout.
# Usage: scripts/fuzz.sh [SECONDS]
# A crash leaves its input in build-fuzz/artifacts/; replay it with
#   build-fuzz/tests/fuzz/fuzz_wire build-fuzz/artifacts/crash-...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RDMAKIT_FUZZ_BUILD_DIR:-$root/build-fuzz}
total=${1:-60}
targets=(wire opts blkconf)
# shellcheck source=scripts/deps.sh
. "$root/scripts/deps.sh"

case $total in '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a number, not '$total'" >&2; exit 2 ;; esac
rk_install_packages $RDMAKIT_BUILD_PACKAGES $RDMAKIT_FUZZ_PACKAGES
mkdir -p "$build"
if ! { cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DRDMAKIT_FUZZ=ON && cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"; } \
	>"$build/build.log" 2>&1; then
	tail -30 "$build/build.log"
	echo "FAIL: fuzz targets did not build (clang with libFuzzer: $RDMAKIT_FUZZ_PACKAGES)"
	exit 1
fi

each=$((total / ${#targets[@]}))
[ "$each" -ge 1 ] || each=1
mkdir -p "$build/artifacts"
status=0
for t in "${targets[@]}"; do
	# New inputs go to the scratch corpus (first directory), never into the repo's seeds.
	work="$build/corpus/$t"
	mkdir -p "$work"
	echo "== fuzz_$t: ${each}s from $(find "$root/tests/fuzz/corpus/$t" -type f | wc -l) seeds"
	if "$build/tests/fuzz/fuzz_$t" -max_total_time="$each" -timeout=5 -rss_limit_mb=2048 \
		-max_len=512 -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" \
		"$work" "$root/tests/fuzz/corpus/$t" >"$build/fuzz_$t.log" 2>&1; then
		grep -E '^stat::number_of_executed_runs|^Done [0-9]+ runs' "$build/fuzz_$t.log" |
			sed "s/^/fuzz_$t: /" || true
		echo "fuzz_$t: no crash"
	else
		status=1
		echo "FAIL: fuzz_$t crashed; the end of its log ($build/fuzz_$t.log):"
		grep -vE '^#[0-9]+' "$build/fuzz_$t.log" | tail -40
		ls "$build/artifacts/" | sed 's/^/  artifact: /'
	fi
done
exit $status
