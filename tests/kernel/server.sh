#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Guest 1 of the kernel tests and of bench/vs-nvme-rdma.sh: an agent that runs
# what guest 2 asks. Guest 2 writes W/cmd.N (shell code, in order N = 1, 2,
# ...); this runs it with the functions below, writes its output to W/out.N
# and its status to W/ack.N. Ends on `finish`, or with status 1 when no
# command comes for IDLE seconds.
# Usage: server.sh RDMAKIT W [IDLE]
RDMAKIT=$1 W=$2 IDLE=${3:-300}
. "$(dirname "$0")/lib.sh"

# ms_start NAME ARGS...: rdmakit memserver ARGS in the background, output in
# W/NAME.log; fails if it exits within a second.
ms_start() {
	_name=$1
	shift
	_from=$(($(cat "$W/$_name.log" 2>/dev/null | wc -l) + 1))
	"$RDMAKIT" memserver "$@" >>"$W/$_name.log" 2>&1 &
	echo $! >"/tmp/$_name.pid"
	# Up when it says it listens (30 s at most).
	_i=0
	until tail -n +$_from "$W/$_name.log" | grep -q listening; do
		if ! alive "$(cat "/tmp/$_name.pid")" || [ $_i -ge 150 ]; then
			echo "memserver $_name ($*) is not listening:"
			tail -n +$_from "$W/$_name.log" | tail -n 5
			return 1
		fi
		_i=$((_i + 1))
		sleep 0.2
	done
	echo "memserver $_name started: $*"
}

# alive PID: running (not gone, not a zombie).
alive() {
	[ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null
}

# ms_kill NAME SIGNAL: signal it and wait (10 s at most) for it to end.
ms_kill() {
	_pid=$(cat "/tmp/$1.pid" 2>/dev/null) || { echo "no memserver $1"; return 1; }
	kill "-$2" "$_pid" 2>/dev/null
	_i=0
	while alive "$_pid"; do
		_i=$((_i + 1))
		[ $_i -le 50 ] || { echo "memserver $1 still running 10 s after SIG$2"; return 1; }
		sleep 0.2
	done
	wait "$_pid"
	_rc=$?
	rm -f "/tmp/$1.pid"
	echo "memserver $1 ended (SIG$2, exit $_rc); last lines of its output:"
	tail -n 3 "$W/$1.log" | sed 's/^/  /'
	return 0
}

DONE=0
finish() {
	for f in /tmp/*.pid; do
		[ -e "$f" ] || continue
		_n=$(basename "$f" .pid)
		ms_kill "$_n" TERM
	done
	DONE=1
}

n=1
while [ $DONE = 0 ]; do
	if ! wait_file "$W/cmd.$n" "$IDLE"; then
		echo "server: no command $n from guest 2 in $IDLE s; giving up"
		finish >/dev/null 2>&1
		exit 1
	fi
	# In this shell: the memservers stay its children (wait, no zombies).
	. "$W/cmd.$n" >"$W/out.$n" 2>&1
	rc=$?
	echo $rc >"$W/ack.$n.tmp"
	mv "$W/ack.$n.tmp" "$W/ack.$n"
	n=$((n + 1))
done
exit 0
