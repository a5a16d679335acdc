#!/bin/sh
# The Soft-RoCE runner itself: the command's output comes back, its exit
# status becomes the runner's, arguments keep their boundaries, and the guest
# really has rxe0 on 198.18.0.1.
SOFTROCE=$1
fails=0
check() { # check WHAT WANT GOT
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: want [$2], got [$3]"; fails=$((fails + 1)); fi
}
out=$("$SOFTROCE" run -- sh -c 'echo to-stdout; echo to-stderr >&2; cat /sys/class/infiniband/rxe0/ports/1/state; exit 3' 2>&1 </dev/null)
check "a failing command's status (3) is the runner's" 3 $?
check "stdout comes back" yes "$(echo "$out" | grep -qx to-stdout && echo yes)"
check "stderr comes back" yes "$(echo "$out" | grep -qx to-stderr && echo yes)"
check "rxe0 port 1 is ACTIVE in the guest" yes "$(echo "$out" | grep -q ACTIVE && echo yes)"
out=$("$SOFTROCE" run -- printf '[%s]' 'a b' "c'd" '$HOME' </dev/null)
check "exit 0 passes through" 0 $?
check "arguments keep their boundaries" "[a b][c'd][\$HOME]" "$out"
[ $fails -eq 0 ] && echo "all checks passed"
exit $fails
