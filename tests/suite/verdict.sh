#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# scripts/test-verdict.sh on made-up stage logs: a green set ends 0 with
# "0 failed" and lists the skip with its reason; a failed check ends 1 and
# is quoted; no logs at all ends 1. (A green suite once ended 1 at this
# step: a grep that found no failure, under set -e and pipefail.)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
verdict=$root/scripts/test-verdict.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # check WHAT CONDITION...
	local what=$1; shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

b=$tmp/build a=$tmp/build-asan
mkdir -p "$b" "$a"
for f in examples unit rdma beds fabric kernel debian; do
	echo "100% tests passed, 0 tests failed out of 3" >"$b/$f.log"
done
for f in examples unit rdma; do
	echo "100% tests passed, 0 tests failed out of 2" >"$a/$f.log"
done
echo "fuzz_wire: no crash" >"$b/fuzz.log"
echo " 5/41 Test #83: cli_rc_dm ........................***Skipped   3.57 sec" >>"$b/rdma.log"
cat >"$b/rdma.log.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="t" tests="2" failures="0" skipped="1">
<testcase name="cli_rc_dm" classname="cli_rc_dm" time="3.5" status="notrun">
<skipped message="SKIP_RETURN_CODE=77"/>
<system-out>device rxe0
SKIP: rxe0 has no device memory (max_dm_size 0)
</system-out>
</testcase>
<testcase name="ops" classname="ops" time="1" status="run"><system-out>ok</system-out></testcase>
</testsuite>
XML

# The siw stage's tests that boot guests of their own (siwhost): counted,
# and their skips listed as the device stages' are.
echo "100% tests passed, 0 tests failed out of 2" >"$b/siwhost.log"
echo " 2/2 Test #58: kernel_siw_faults ................***Skipped   9.10 sec" >>"$b/siwhost.log"
cat >"$b/siwhost.log.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="t" tests="2" failures="0" skipped="1">
<testcase name="kernel_siw_faults" classname="kernel_siw_faults" time="9.1" status="notrun">
<skipped message="SKIP_RETURN_CODE=77"/>
<system-out>SKIP: made-up reason for the siw stage
</system-out>
</testcase>
</testsuite>
XML

rc=0; out=$("$verdict" "$b" "$a") || rc=$?
echo "$out"
check "a green set of logs ends 0 (got $rc)" [ "$rc" = 0 ]
check "its closing line counts 28 passed, 0 failed, 2 skipped" grep -qx '28 passed, 0 failed, 2 skipped' <<<"$out"
check "the skipped test is named with its reason" \
	grep -q 'cli_rc_dm (device): SKIP: rxe0 has no device memory' <<<"$out"
check "the siw stage's skip is named with its reason" \
	grep -q 'kernel_siw_faults (siw, own guests): SKIP: made-up reason' <<<"$out"
check "no 'failed checks' on a green set" eval '! grep -q "failed checks" <<<"$out"'

echo "FAIL: wrong rkey: expected REM_ACCESS_ERR, got SUCCESS" >>"$a/rdma.log"
echo "96% tests passed, 1 tests failed out of 24" >>"$a/rdma.log"
rc=0; out=$("$verdict" "$b" "$a") || rc=$?
echo "$out"
check "a failed test ends 1 (got $rc)" [ "$rc" = 1 ]
check "the failed check is quoted with its log" \
	grep -q 'build-asan/rdma.log:FAIL: wrong rkey' <<<"$out"

rc=0; out=$("$verdict" "$tmp/none" "$tmp/none-asan") || rc=$?
check "no logs at all ends 1 (got $rc)" [ "$rc" = 1 ]

[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
