#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The examples as a user of the installed library builds them: `cmake
# --install` of the build into a prefix, every installed header compiled on
# its own, examples/ built with pkg-config alone (PKG_CONFIG_PATH at the
# prefix), then run on the device: rping_client against rdma-core's
# `rping -s`, ud_sender against `rdmakit ud --server`.
# Two halves: "build" needs no device and runs on the host (test
# examples_build, label unit: compiling in the emulated guest took minutes);
# "run" (test examples, label rdma) runs what it built, building first when
# it finds nothing built.
# With RDMAKIT_EXAMPLES_ROOT=DIR (tests/debian) nothing is installed: the
# library is the one unpacked from the Debian packages into DIR (dpkg -x), its
# rdmakit.pc saying prefix=/usr, found there by PKG_CONFIG_SYSROOT_DIR=DIR
# (pkgconf's --define-prefix would take /usr/lib, two levels above the .pc
# file, as the prefix under a multiarch libdir).
# Usage: examples.sh build|run BUILD_DIR SOURCE_DIR RDMAKIT
MODE=$1
BUILD=$2
SRC=$3
RDMAKIT=$4
# shellcheck source=tests/rdma/lib.sh
. "$SRC/tests/rdma/lib.sh"

N=7
# The prefix and the examples' binaries, kept between the two halves.
tmp=$BUILD/examples-check
prefix=$tmp/prefix
if [ -n "${RDMAKIT_EXAMPLES_ROOT:-}" ]; then
	prefix=$RDMAKIT_EXAMPLES_ROOT/usr
	PKG_CONFIG_SYSROOT_DIR=$RDMAKIT_EXAMPLES_ROOT
	export PKG_CONFIG_SYSROOT_DIR
fi

build() {
	rm -rf "$tmp"
	mkdir -p "$tmp"
	# 1. Install into the prefix (unless unpacked there); the .pc found there
	# must name that prefix.
	[ -n "${RDMAKIT_EXAMPLES_ROOT:-}" ] || run 0 cmake --install "$BUILD" --prefix "$prefix" || finish
	pc=$(find "$prefix" -name rdmakit.pc)
	[ -n "$pc" ] || { echo "FAIL: no rdmakit.pc installed under $prefix"; exit 1; }
	PKG_CONFIG_PATH=$(dirname "$pc")
	export PKG_CONFIG_PATH
	run 0 pkg-config --cflags --libs rdmakit && has "$out" "-I$prefix/include" &&
		has "$out" "-L$prefix/" && has "$out" "-lrdmakit"
	if grep -qF -e "$SRC/include" -e "$BUILD/src" "$out"; then
		echo "FAIL: pkg-config points into the source or build tree: $(cat "$out")"
		fails=$((fails + 1))
	fi

	# 2. Every installed header compiles alone.
	nh=0
	for h in "$prefix"/include/rdmakit/*.h; do
		name=rdmakit/$(basename "$h")
		# shellcheck disable=SC2046
		if ! printf '#include <%s>\n' "$name" |
			cc -std=c11 -Wall -Wextra -Werror -fsyntax-only $(pkg-config --cflags rdmakit) \
				-x c - >"$err" 2>&1; then
			echo "FAIL: <$name> does not compile on its own:"
			sed 's/^/  | /' "$err" | head -10
			fails=$((fails + 1))
		fi
		nh=$((nh + 1))
	done
	[ "$nh" -ge 20 ] || { echo "FAIL: only $nh headers installed"; fails=$((fails + 1)); }
	echo "ok: $nh installed headers checked one by one"

	# 3. The examples, by pkg-config alone, outside the source tree.
	# An ASan/UBSan build installs an instrumented library: its users must link
	# the sanitizer runtime too (RDMAKIT_EXAMPLES_SANITIZE, set by CMake there).
	san=${RDMAKIT_EXAMPLES_SANITIZE:-}
	run 0 make -C "$SRC/examples" O="$tmp" CFLAGS="-O2 -Wall -Wextra -Werror $san" LDFLAGS="$san" ||
		finish
	for p in rping_client ud_sender; do
		run 0 sh -c "ldd '$tmp/$p' | grep librdmakit" && has "$out" "$prefix/"
	done

	# Bad arguments: a named error, exit 2, nothing run.
	run 2 "$tmp/rping_client" && has "$err" "usage: rping_client HOST"
	run 2 "$tmp/rping_client" "$IP" 5 22 && has "$err" "SIZE: 22 is outside the range 23..65535"
	run 2 "$tmp/rping_client" "$IP" 0 && has "$err" "COUNT: 0 is outside the range 1..1000000"
	run 2 "$tmp/ud_sender" "$IP" 3x && has "$err" "COUNT: '3x' is not a number"
	run 2 "$tmp/ud_sender" "$IP" 3 5000 && has "$err" "SIZE: 5000 is outside the range 1..4096"
	run 2 "$tmp/ud_sender" --bogus && has "$err" "usage: ud_sender"
	[ "$fails" -ne 0 ] || touch "$tmp/built"
}

# True when the examples were built against the library as it is now.
built() {
	[ -f "$tmp/built" ] &&
		[ -z "$(find "$BUILD/src/lib" -name 'librdmakit.so*' -newer "$tmp/built" 2>/dev/null)" ]
}

case $MODE in
build)
	build
	finish
	exit 0
	;;
run)
	built || build
	[ "$fails" -eq 0 ] || finish
	;;
*)
	echo "usage: examples.sh build|run BUILD_DIR SOURCE_DIR RDMAKIT" >&2
	exit 2
	;;
esac
command -v rping >/dev/null || { echo "FAIL: rping (rdma-core) is not installed"; exit 1; }
run 0 sh -c "ldd '$tmp/rping_client' | grep librdmakit" && has "$out" "$prefix/"

# 4. rping_client against rdma-core's rping server: both exit 0, the
# server saw every ping (-v prints each), the client checked every pong.
# The server's -S must be the client's size: rping reads the ping into a
# buffer of its own -S (default 64; larger pings fail its RDMA READ).
timeout 120 rping -s -a "$IP" -S 100 -C $N -v >"$tmp/srv" 2>&1 &
spid=$!
sleep 1
run 0 timeout 120 "$tmp/rping_client" "$IP" $N 100 &&
	has "$out" "$N rounds of 100 bytes, every pong checked" && has "$out" "round $N: 100 bytes"
wait $spid
gs=$?
seen=$(grep -c "server ping data: rdma-ping-" "$tmp/srv")
if [ "$gs" -ne 0 ] || [ "$seen" -ne $N ]; then
	echo "FAIL: rping -s -S 100 -C $N exited $gs (want 0), printed $seen pings (want $N):"
	sed 's/^/  server: /' "$tmp/srv" | tail -15
	fails=$((fails + 1))
else
	echo "ok: rping -s -a $IP -S 100 -C $N -v exited 0 after $seen pings from rping_client"
fi

# On iWARP (siw0) step 5 cannot run: iWARP has only RC QPs.
if [ -n "$IWARP" ]; then
	iwarp_left_out "5, ud_sender: UD QPs (iWARP has only RC)"
	finish
	exit 0
fi

# 5. ud_sender against rdmakit's UD server: both exit 0, the server counts
# N datagrams received and echoed from one rdmakit client.
timeout 120 "$RDMAKIT" ud --server -n $N -s 200 -w 60 --json >"$tmp/srv" 2>"$tmp/srv.err" &
spid=$!
run 0 timeout 120 "$tmp/ud_sender" "$IP" $N 200 &&
	has "$out" "$N datagrams of 200 bytes sent, $N echoed back, every byte checked"
wait $spid
gs=$?
if [ "$gs" -ne 0 ]; then
	echo "FAIL: rdmakit ud --server exited $gs (want 0):"
	sed 's/^/  server: /' "$tmp/srv" "$tmp/srv.err" | tail -15
	fails=$((fails + 1))
else
	cp "$tmp/srv" "$out"
	json "
assert d['result'] == 'ok' and d['validated'] is True, d
assert d['received'] == $N and len(d['clients']) == 1, d
c = d['clients'][0]
assert c['rdmakit'] is True and c['received'] == $N and c['echoed'] == $N, c
" && echo "ok: rdmakit ud --server counted $N datagrams received and echoed from ud_sender"
fi
finish
