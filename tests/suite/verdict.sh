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
# stage_skip LOG NAME WHY...: LOG counts 2 tests, NAME skipped; LOG.xml
# (CTest JUnit) says so with the lines WHY in NAME's output.
stage_skip() {
	local log=$1 name=$2
	shift 2
	echo "100% tests passed, 0 tests failed out of 2" >>"$log"
	echo " 2/2 Test #58: $name ................***Skipped   9.10 sec" >>"$log"
	{
		echo '<?xml version="1.0" encoding="UTF-8"?>'
		echo '<testsuite name="t" tests="2" failures="0" skipped="1">'
		echo "<testcase name=\"$name\" classname=\"$name\" time=\"9.1\" status=\"notrun\">"
		echo '<skipped message="SKIP_RETURN_CODE=77"/>'
		printf '<system-out>'
		printf '%s\n' "$@"
		echo '</system-out></testcase>'
		echo '<testcase name="ops" classname="ops" time="1" status="run"><system-out>ok</system-out></testcase>'
		echo '</testsuite>'
	} >"$log.xml"
}
stage_skip "$b/rdma.log" cli_rc_dm "device rxe0" "SKIP: rxe0 has no device memory (max_dm_size 0)"
# The siw stage's tests that boot guests of their own (siwhost): counted,
# and their skips listed as the device stages' are.
stage_skip "$b/siwhost.log" kernel_siw_faults "SKIP: made-up reason for the siw stage"

rc=0; out=$("$verdict" "$b" "$a") || rc=$?
echo "$out"
check "a green set of logs ends 0 (got $rc)" [ "$rc" = 0 ]
check "its closing line counts 30 passed, 0 failed, 2 skipped" grep -qx '30 passed, 0 failed, 2 skipped' <<<"$out"
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
