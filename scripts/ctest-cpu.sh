#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# ctest-cpu.sh OUT [CTEST-ARGS...]: ctest (one test at a time) with its output
# unchanged and its exit status, and in OUT one line per test: its name, the
# CPU seconds the machine was busy while it ran (/proc/stat: user, nice,
# system, irq, softirq, steal) and its wall seconds. scripts/test.sh runs its
# guests' ctest through it: in a one-CPU TCG guest the guest's busy time is
# about the host CPU its QEMU spends, so OUT says which tests cost the
# suite's CPU (a test long in wall but idle in CPU only needs placing).
out=${1:?usage: ctest-cpu.sh OUT [CTEST-ARGS...]}
shift
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
up() { cut -d' ' -f1 /proc/uptime; }
: >"$out"
rcf=$out.rc
{ ctest "$@"; echo $? >"$rcf"; } 2>&1 | {
	b0=$(busy) t0=$(up)
	while IFS= read -r l; do
		printf '%s\n' "$l"
		case $l in
		*" Start "*[0-9]": "*) b0=$(busy) t0=$(up) ;;
		*"Test "*"#"*": "*" sec"*)
			b1=$(busy) t1=$(up)
			name=${l#*#*: }
			name=${name%% *}
			awk -v n="$name" -v b="$((b1 - b0))" -v hz="$hz" -v w0="$t0" -v w1="$t1" \
				'BEGIN { printf "%-28s %6.0f s CPU %6.0f s wall\n", n, b / hz, w1 - w0 }' >>"$out"
			;;
		esac
	done
}
rc=$(cat "$rcf" 2>/dev/null || echo 1)
rm -f "$rcf"
exit "$rc"
