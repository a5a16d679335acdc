#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The end of scripts/test.sh, from its logs in BUILD and ASAN: the failed
# checks themselves, the skipped device tests and why, and one closing line
# in the plain form CI reads: N passed, N failed, N skipped. Exits 1 when a
# test failed or none ran. Kept apart so a host test (suite_verdict) runs it
# on a green and a red set of logs: a green run must end 0.
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 BUILD_DIR ASAN_BUILD_DIR" >&2; exit 2; }
build=$1
asan=$2
root=$(cd "$(dirname "$0")/.." && pwd)

# A CI page may show only the head of a failing test's output (the check
# that failed is often further down). grep finds none on a green run: without
# '|| true' pipefail and set -e would end the script here with status 1.
failed_checks=$(grep -H -E '^(FAIL|not ok)\b' \
	"$build"/{kbuild,unit,rdma,rdma2,siw,siwhost,beds,fabric,kernel,debian}.log \
	"$asan"/{unit,rdma,rdma2}.log 2>/dev/null | sed "s|^$root/||" | cut -c1-240 | head -40 || true)
[ -z "$failed_checks" ] || printf 'failed checks:\n%s\n' "$failed_checks"

# The device tests that skipped (exit 77: the device lacks the feature) and
# why, from the first line of each one's output that says SKIP (CTest JUnit).
skips=$(python3 - "device=$build/rdma.log.xml" "device, second guest=$build/rdma2.log.xml" \
	"iWARP device=$build/siw.log.xml" "siw, own guests=$build/siwhost.log.xml" \
	"device, ASan/UBSan=$asan/rdma.log.xml" \
	"device, ASan/UBSan, second guest=$asan/rdma2.log.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
for arg in sys.argv[1:]:
    stage, path = arg.split("=", 1)
    try:
        cases = ET.parse(path).getroot().iter("testcase")
    except (OSError, ET.ParseError):
        continue
    for tc in cases:
        if tc.find("skipped") is None:
            continue
        out = (tc.findtext("system-out") or "").splitlines()
        why = next((l.strip() for l in out if "SKIP" in l), "(it printed no SKIP line)")
        print(f"  {tc.get('name')} ({stage}): {why[:200]}")
PY
) || skips="  (could not list them: python3 failed on the JUnit files)"
[ -z "$skips" ] || printf 'skipped (exit 77), and why:\n%s\n' "$skips"

# A stage that did not run has no log: it counts nothing, and a suite that
# counted nothing fails.
logs=()
for f in "$build"/{examples,kbuild,unit,rdma,rdma2,siw,siwhost,beds,fabric,kernel,debian,fuzz}.log \
	"$asan"/{examples,unit,rdma,rdma2}.log; do
	[ -f "$f" ] && logs+=("$f")
done
[ ${#logs[@]} -gt 0 ] || { echo "0 passed, 0 failed, 0 skipped (no logs in $build)"; exit 1; }
cat "${logs[@]}" | awk '
	/tests passed, [0-9]+ tests failed out of/ {
		for (i = 1; i <= NF; i++) if ($i == "failed") f += $(i - 2); t += $NF
	}
	/^fuzz_[a-z]+: no crash$/ { t++ }
	/^FAIL: fuzz/ { t++; f++ }
	/\*\*\*Skipped/ { s++ }
	END { printf "%d passed, %d failed, %d skipped\n", t - f - s, f, s; exit (f > 0 || t == 0) }
'
