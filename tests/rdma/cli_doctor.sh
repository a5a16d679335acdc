#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit doctor on a Soft-RoCE device (issue 37): healthy, every check
# passes (the software device too, with its note: no line rate to expect)
# but for the warnings this host really has (named: no huge pages; error
# counters that moved), exit 0 when there are none; then each fault made
# for real and named by the check it breaks, with its fix, in text and
# JSON: the device deleted (rdma link delete), its netdev down, the
# netdev's IP address removed, memlock 64 KiB for a user without
# CAP_IPC_LOCK (nobody), /dev/infiniband/uverbs0 not readable by that user.
# Each is undone after. Needs root (it changes the links) and an rxe device.
# Usage: cli_doctor.sh RDMAKIT
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"
SCHEMAS=$(cd "$(dirname "$0")/../../docs/json" && pwd)
DEV=$("$RDMAKIT" devices --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["name"])')
NETDEV=$(rdma link show "$DEV/1" | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
ADDR=$(ip -o -4 addr show dev "$NETDEV" | sed -n 's/.* inet \([^ ]*\) .*/\1/p' | head -1)
UVERBS=$(grep -l "^$DEV\$" /sys/class/infiniband_verbs/uverbs*/ibdev | head -1 | xargs dirname |
	xargs basename)
UVERBS_MODE=$(stat -c %a "/dev/infiniband/$UVERBS")
echo "# $DEV on $NETDEV ($ADDR), its verbs file $UVERBS (mode $UVERBS_MODE)"
case $DEV in
rxe*) ;;
*)
	echo "not run: $DEV is not an rxe device, and this test deletes and re-creates it as rxe"
	exit 77
	;;
esac

# as_nobody MEMLOCK CMD...: CMD as nobody under a memlock limit; no
# capabilities after the switch (CAP_IPC_LOCK included).
as_nobody() {
	lim=$1
	shift
	prlimit --memlock="$lim:$lim" setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

restore() {
	ip link set "$NETDEV" up 2>/dev/null
	[ -z "$ADDR" ] || ip addr add "$ADDR" dev "$NETDEV" 2>/dev/null
	[ -e "/sys/class/infiniband/$DEV" ] || rdma link add "$DEV" type rxe netdev "$NETDEV"
	[ -z "$UVERBS" ] || chmod "$UVERBS_MODE" "/dev/infiniband/$UVERBS" 2>/dev/null
}
trap 'restore; rm -f "$out" "$err"' EXIT

# line STATUS TITLE [TEXT]: the line of check TITLE says STATUS (and TEXT).
line() {
	l=$(grep -F -- "$1 $2: " "$out" | head -1)
	if [ -z "$l" ] || { [ -n "${3:-}" ] && ! printf '%s\n' "$l" | grep -qF -- "$3"; }; then
		echo "FAIL: expected '$1 $2: ...${3:+$3...}', got:"
		grep -F -- " $2: " "$out" | sed 's/^/  | /'
		grep -qF -- " $2: " "$out" || sed 's/^/  | /' "$out"
		fails=$((fails + 1))
		return 1
	fi
	echo "ok: $1 $2${3:+ ($3)}"
}

# check_json ID STATUS FIX: $out's document has check ID with STATUS and a
# fix holding FIX; valid against both schemas.
check_json() {
	json "
import jsonschema
for name in ('rdmakit-result', 'rdmakit-doctor'):
    jsonschema.Draft202012Validator(json.load(open('$SCHEMAS/%s.schema.json' % name))).validate(d)
c = [c for c in d['checks'] if c['id'] == '$1']
assert c, 'no check $1'
c = c[0]
assert c['status'] == '$2', c
assert '$3' in c.get('fix', ''), c
assert d['result'] == ('failed' if d['summary']['fail'] else 'ok'), d
"
}

# settle TITLE: wait (up to 20 s) until check TITLE passes again.
settle() {
	i=0
	while [ $i -lt 40 ]; do
		"$RDMAKIT" doctor -d "$DEV" 2>/dev/null | grep -qF "PASS $1: " && return 0
		sleep 0.5
		i=$((i + 1))
	done
	echo "FAIL: '$1' did not pass again within 20 s"
	fails=$((fails + 1))
}

# ---- healthy ----
"$RDMAKIT" doctor >"$out" 2>"$err"
rc=$?
sed 's/^/  # /' "$out"
lacks "$out" "FAIL "
for t in "kernel RDMA modules" "/dev/infiniband access" "RDMA devices" \
	"$DEV user-space provider" "$DEV port 1 state" "$DEV port 1 netdev" \
	"$DEV port 1 addresses" "$DEV port 1 RoCE v2 GIDs" "$DEV port 1 MTU" \
	"locked-memory limit"; do
	line PASS "$t"
done
line PASS "kernel RDMA modules" "rdma_rxe"
line PASS "$DEV port 1 addresses" "${ADDR%/*}"
# The software device: a PASS that keeps its note.
line PASS "$DEV software device" "Soft-RoCE (rdma_rxe)"
line PASS "$DEV software device" "no line rate to expect"
# The warnings this guest really has, and no others.
want_warn=NONE
if grep -qE '^HugePages_(Total|Free): +0$' /proc/meminfo; then
	want_warn="$want_warn|huge page pool"
	line WARN "huge page pool" "sysctl vm.nr_hugepages="
else
	line PASS "huge page pool"
fi
moved=
for c in link_downed retry_exceeded_err retry_rnr_exceeded_err completer_retry_err send_err \
	rcvd_seq_err out_of_seq_request duplicate_request rcvd_rnr_err send_rnr_err; do
	f=/sys/class/infiniband/$DEV/ports/1/hw_counters/$c
	[ -r "$f" ] && [ "$(cat "$f")" != 0 ] && moved="$moved $c"
done
if [ -n "$moved" ]; then
	want_warn="$want_warn|$DEV port 1 error counters"
	# Each by name (doctor orders and explains them its own way): after
	# other tests in the same guest, as in the suite, several have moved.
	for c in $moved; do
		line WARN "$DEV port 1 error counters" "$c "
	done
else
	line PASS "$DEV port 1 error counters"
fi
others=$(grep '^WARN ' "$out" | grep -vE "^WARN ($want_warn): ")
if [ -n "$others" ]; then
	echo "FAIL: warnings this guest should not have:"
	printf '%s\n' "$others" | sed 's/^/  | /'
	fails=$((fails + 1))
fi
# 0 when all PASS, 3 for the warnings above.
want_rc=0
[ "$want_warn" = NONE ] || want_rc=3
exit_is "healthy doctor" "$rc" $want_rc "$out" "$err"
run $want_rc "$RDMAKIT" doctor -d "$DEV" --json
check_json software_device PASS ""
json "
c = [c for c in d['checks'] if c['id'] == 'software_device'][0]
assert 'no line rate to expect' in c['seen'] and 'fix' not in c, c
assert d['verdict'] == ('PASS' if $want_rc == 0 else 'WARN'), d
assert d['result'] == 'ok' and d['summary']['fail'] == 0, d
assert all(c['status'] != 'FAIL' for c in d['checks']), d
assert {c['device'] for c in d['checks'] if 'device' in c} == {'$DEV'}, d
"

# ---- the device deleted ----
rdma link delete "$DEV"
run 1 "$RDMAKIT" doctor
line FAIL "RDMA devices" "fix: load the RNIC's driver"
line FAIL "RDMA devices" "rdma link add rxe0 type rxe netdev IFACE"
line PASS "kernel RDMA modules"
run 1 "$RDMAKIT" doctor --json
check_json devices FAIL "rdma link add"
rdma link add "$DEV" type rxe netdev "$NETDEV"
settle "$DEV port 1 state"

# ---- the netdev down ----
ip link set "$NETDEV" down
run 1 "$RDMAKIT" doctor
line FAIL "$DEV port 1 state" "fix: ip link set $NETDEV up"
line FAIL "$DEV port 1 netdev" "$NETDEV is down"
line FAIL "$DEV port 1 netdev" "fix: ip link set $NETDEV up"
run 1 "$RDMAKIT" doctor -d "$DEV" --json
check_json netdev FAIL "ip link set $NETDEV up"
ip link set "$NETDEV" up
settle "$DEV port 1 state"

# ---- the address removed ----
ip addr del "$ADDR" dev "$NETDEV"
run 1 "$RDMAKIT" doctor
line FAIL "$DEV port 1 addresses" "$NETDEV has no"
line FAIL "$DEV port 1 addresses" "fix: ip addr add ADDRESS/PREFIX dev $NETDEV"
lacks "$out" "${ADDR%/*}"
run 1 "$RDMAKIT" doctor -d "$DEV" --json
check_json addresses FAIL "ip addr add ADDRESS/PREFIX dev $NETDEV"
ip addr add "$ADDR" dev "$NETDEV"
settle "$DEV port 1 RoCE v2 GIDs"

# ---- memlock 64 KiB for nobody ----
run 1 as_nobody 65536 "$RDMAKIT" doctor
line FAIL "locked-memory limit" "ulimit -l is 64 KiB"
line FAIL "locked-memory limit" "fix: ulimit -l unlimited"
line PASS "/dev/infiniband access" "nobody"
run 1 as_nobody 65536 "$RDMAKIT" doctor --json
check_json memlock FAIL "memlock unlimited"
# The same user without the limit: the check passes (it was the limit).
as_nobody unlimited "$RDMAKIT" doctor >"$out" 2>"$err"
line PASS "locked-memory limit" "unlimited"
# Root: CAP_IPC_LOCK lifts the limit.
prlimit --memlock=65536:65536 "$RDMAKIT" doctor >"$out" 2>"$err"
line PASS "locked-memory limit" "CAP_IPC_LOCK"

# ---- the verbs file not readable by nobody ----
chmod 0600 "/dev/infiniband/$UVERBS"
run 1 as_nobody unlimited "$RDMAKIT" doctor
line FAIL "/dev/infiniband access" "/dev/infiniband/$UVERBS ($DEV) is mode 0600"
line FAIL "/dev/infiniband access" "not readable and writable by nobody (uid 65534)"
line FAIL "/dev/infiniband access" "fix: chmod 0666 /dev/infiniband/uverbs*"
run 1 as_nobody unlimited "$RDMAKIT" doctor --json
check_json dev_files FAIL "chmod 0666"
chmod "$UVERBS_MODE" "/dev/infiniband/$UVERBS"
as_nobody unlimited "$RDMAKIT" doctor >"$out" 2>"$err"
line PASS "/dev/infiniband access" "nobody"
finish
