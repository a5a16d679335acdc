# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Shared by the kernel tests' guest scripts (sourced, busybox or bash sh).
# W: the run's directory in the project tree, which both guests see
# (coordination files go there). Every wait is bounded.
fails=0

# check WHAT EXPECTED GOT
check() {
	if [ "$2" = "$3" ]; then
		echo "ok: $1 (expected [$2], got [$3])"
	else
		echo "FAIL: $1: expected [$2], got [$3]"
		fails=$((fails + 1))
	fi
}

# check_num WHAT OP BOUND GOT: numeric comparison (OP: -le -ge -lt -gt -eq).
check_num() {
	case $4 in
	'' | *[!0-9]*) echo "FAIL: $1: expected a number $2 $3, got [$4]"; fails=$((fails + 1)); return ;;
	esac
	if [ "$4" "$2" "$3" ]; then
		echo "ok: $1 (expected $2 $3, got $4)"
	else
		echo "FAIL: $1: expected $2 $3, got $4"
		fails=$((fails + 1))
	fi
}

# wait_file FILE SEC: until FILE exists; 1 after SEC seconds.
wait_file() {
	_i=0
	while [ ! -e "$1" ]; do
		_i=$((_i + 1))
		[ $_i -le $(($2 * 5)) ] || return 1
		sleep 0.2
	done
}

# now: seconds since boot with two decimals.
now() { cut -d' ' -f1 /proc/uptime; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%d", b - a + 0.5 }'; }

# The kernel log is free of warnings, bugs and oopses.
check_dmesg() {
	bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|RIP:' | head -n 5)
	check "$1: kernel log free of WARNING/BUG/Oops" "" "$bad"
}

# ---- guest 2 side: talk to guest 1's agent (server.sh) ----
REMOTE_N=0
# remote SEC 'SHELL CODE': run the code in guest 1's agent; print its output
# (prefixed "  [guest1] "), return its status (124 when no answer in SEC s).
remote() {
	REMOTE_N=$((REMOTE_N + 1))
	printf '%s\n' "$2" >"$W/cmd.$REMOTE_N.tmp"
	mv "$W/cmd.$REMOTE_N.tmp" "$W/cmd.$REMOTE_N"
	if ! wait_file "$W/ack.$REMOTE_N" "$1"; then
		echo "  [guest1] no answer to [$2] in $1 s"
		return 124
	fi
	sed 's/^/  [guest1] /' "$W/out.$REMOTE_N" 2>/dev/null
	return "$(cat "$W/ack.$REMOTE_N")"
}

# ---- the disk ----
# attach_disk ARGS...: rdmakit blk attach ARGS, retried (bounded) while guest
# 1's memserver is not listening yet; sets DISK (rkblkN) and ATTACH_OUT.
attach_disk() {
	DISK=
	_i=0
	while :; do
		ATTACH_OUT=$("$RDMAKIT" blk attach "$@" 2>&1)
		_rc=$?
		if [ $_rc -eq 0 ]; then
			DISK=$(printf '%s\n' "$ATTACH_OUT" | grep -o 'rkblk[0-9][0-9]*' | head -n 1)
			[ -n "$DISK" ] && [ -b "/dev/$DISK" ] && return 0
			echo "  attach printed no disk: $ATTACH_OUT"
			return 1
		fi
		_i=$((_i + 1))
		case $ATTACH_OUT in
		*efused* | *ECONNREFUSED* | *nreachable* | *imed\ out*) [ $_i -lt 15 ] && { sleep 1; continue; } ;;
		esac
		echo "  rdmakit blk attach $*: exit $_rc: $ATTACH_OUT"
		# What both kernels said about it (guest 1: the server's).
		dmesg | grep -E 'rkblk|siw|iw_|rdma' | tail -n 8 | sed 's/^/  | /'
		remote 30 "dmesg | grep -E 'siw|iw_|rdma' | tail -n 8"
		return 1
	done
}

# attr DISK NAME: /sys/block/DISK/rkblk/NAME
attr() { cat "/sys/block/$1/rkblk/$2" 2>/dev/null; }

# wait_state DISK STATE SEC
wait_state() {
	_i=0
	while [ "$(attr "$1" state)" != "$2" ]; do
		_i=$((_i + 1))
		[ $_i -le $(($3 * 5)) ] || return 1
		sleep 0.2
	done
}

# fio_json FILE KEY: a figure from fio's JSON output (first job):
# error, read_ios, write_ios, read_mib, write_mib (bytes moved / 2^20,
# rounded), total_err.
fio_json() {
	python3 - "$1" "$2" <<'PY'
import json, sys
try:
    text = open(sys.argv[1]).read()
    j = json.loads(text[text.index('{'):])
    job = j["jobs"][0]
    v = {"error": job["error"], "read_ios": job["read"]["total_ios"],
         "write_ios": job["write"]["total_ios"],
         "read_mib": round(job["read"]["io_bytes"] / 1048576),
         "write_mib": round(job["write"]["io_bytes"] / 1048576),
         "total_err": job.get("total_err", 0)}[sys.argv[2]]
    print(v)
except Exception as e:
    print("unparsable(%s)" % e)
PY
}
