# Helpers for the CLI tests: run a command, check its exit code and output.
# Every check prints what it expected and what it got.

fails=0
# Debian's python3 directly: a version manager's shim in PATH costs seconds a
# start in the emulated guest.
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# run EXPECTED_RC CMD...: run CMD, keep stdout/stderr in $out/$err.
run() {
	want=$1
	shift
	"$@" >"$out" 2>"$err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: '$*' exited $got, expected $want"
		sed 's/^/  stdout: /' "$out" | head -20
		sed 's/^/  stderr: /' "$err" | head -20
		fails=$((fails + 1))
		return 1
	fi
	echo "ok: '$*' exited $got"
}

# has FILE TEXT: FILE contains TEXT.
has() {
	if ! grep -qF -- "$2" "$1"; then
		echo "FAIL: expected '$2' in $(basename "$1" | sed 's/.*/output/'), got:"
		sed 's/^/  | /' "$1" | head -20
		fails=$((fails + 1))
		return 1
	fi
}

# json PYTHON-ASSERTIONS: check $out as JSON; 'd' is the document.
json() {
	if ! "$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
$1
" "$out"; then
		echo "FAIL: JSON check failed: $1"
		sed 's/^/  | /' "$out" | head -40
		fails=$((fails + 1))
		return 1
	fi
}

finish() {
	if [ "$fails" -ne 0 ]; then
		echo "$fails check(s) failed"
		exit 1
	fi
	echo "all checks passed"
}
