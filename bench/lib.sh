# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Sourced by the bench/vs-*.sh comparisons: what they share.

# bench_positive PROG NOUN V...: exit 2 with "PROG: 'V' is not a positive NOUN"
# unless every V is a whole number above 0.
bench_positive() {
	_prog=$1 _noun=$2
	shift 2
	for _v in "$@"; do
		case $_v in
		'' | *[!0-9]* | 0) echo "$_prog: '$_v' is not a positive $_noun" >&2; exit 2 ;;
		esac
	done
}

# bench_want NAME: true when NAME is a case to run: no --cases given ($cases
# empty), or NAME matches its extended regular expression.
bench_want() {
	[ -z "$cases" ] || echo "$1" | grep -Eq -- "$cases"
}

# bench_reap PID SECONDS: wait for a server to end after its client (SECONDS
# at most), then end it.
bench_reap() {
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt $(($2 * 10)) ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
