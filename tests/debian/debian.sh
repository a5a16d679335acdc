#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# debian_packages: the Debian packages as a user builds and uses them.
# On the host: dpkg-buildpackage -us -uc -b in a copy of the source (the
# tracked and untracked files, no build trees), lintian on the .changes (no
# error), dpkg -x of each package into ROOT, the examples built against the
# unpacked librdmakit-dev (tests/examples/examples.sh build with
# RDMAKIT_EXAMPLES_ROOT), rkblk built by DKMS from the unpacked rdmakit-dkms
# against the guest kernel's headers (a DKMS tree of its own).
# In a Soft-RoCE guest (scripts/softroce run): the unpacked `rdmakit devices`
# (LD_LIBRARY_PATH at the unpacked librdmakit0) lists rxe0, the examples run
# against rxe (examples.sh run), the DKMS-built rkblk loads and unloads.
# Usage: debian.sh WORKDIR SOURCE_DIR            (host, then the guest)
#        debian.sh --guest WORKDIR SOURCE_DIR KO  (inside the guest)
GUEST=0
if [ "$1" = --guest ]; then
	GUEST=1
	shift
fi
W=$1
SRC=$2
# shellcheck source=tests/rdma/lib.sh
. "$SRC/tests/rdma/lib.sh"
ROOT=$W/root
now() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%d", b - a + 0.5 }'; }

# examples build|run: tests/examples/examples.sh against the unpacked tree.
examples() {
	RDMAKIT_EXAMPLES_ROOT=$ROOT sh "$SRC/tests/examples/examples.sh" "$1" "$W" "$SRC" \
		"$ROOT/usr/bin/rdmakit"
	rc=$?
	[ $rc -eq 0 ] || { echo "FAIL: examples.sh $1 exited $rc"; fails=$((fails + 1)); }
}

guest() {
	ko=$1
	run 0 "$ROOT/usr/bin/rdmakit" devices && has "$out" rxe0
	run 0 sh -c "ldd '$ROOT/usr/bin/rdmakit' | grep librdmakit.so.0" && has "$out" "$ROOT/usr/lib/"
	echo "== the examples against the unpacked library"
	examples run
	echo "== rkblk from rdmakit-dkms"
	run 0 insmod "$ko" && run 0 test -c /dev/rkblk-ctl && run 0 rmmod rkblk
	finish
}
if [ $GUEST = 1 ]; then
	guest "$3"
	exit 0
fi

t0=$(now)
rm -rf "$W"
mkdir -p "$W/src/rdmakit" "$ROOT" "$W/dkms"
echo "== the source, copied to $W/src/rdmakit"
if git -C "$SRC" rev-parse --show-toplevel >/dev/null 2>&1; then
	(cd "$SRC" && git ls-files -co --exclude-standard -z |
		xargs -0 tar -cf - --no-recursion --ignore-failed-read) |
		tar -xf - -C "$W/src/rdmakit"
else
	(cd "$SRC" && tar -cf - --exclude='./build*' .) | tar -xf - -C "$W/src/rdmakit"
fi
[ -f "$W/src/rdmakit/debian/control" ] || { echo "FAIL: no debian/control in the copy"; exit 1; }

echo "== dpkg-buildpackage -us -uc -b"
t=$(now)
if ! (cd "$W/src/rdmakit" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$W/build.log" 2>&1; then
	tail -40 "$W/build.log"
	echo "FAIL: dpkg-buildpackage (log: $W/build.log)"
	exit 1
fi
grep -E '^dpkg-deb: building' "$W/build.log"
echo "ok: dpkg-buildpackage exited 0 ($(since "$t") s)"

echo "== lintian"
t=$(now)
changes=$(ls "$W"/src/rdmakit_*.changes)
lintian --fail-on error --tag-display-limit 0 "$changes" >"$W/lintian.log" 2>&1
rc=$?
sed 's/^/  lintian: /' "$W/lintian.log"
if [ $rc -ne 0 ] || grep -q '^E: ' "$W/lintian.log"; then
	echo "FAIL: lintian exited $rc or reported errors"
	fails=$((fails + 1))
else
	echo "ok: lintian without errors ($(since "$t") s)"
fi

echo "== dpkg -x into $ROOT"
for p in rdmakit rdmakit-mesh librdmakit0 librdmakit-dev rdmakit-dkms; do
	deb=$(ls "$W"/src/"${p}"_*.deb 2>/dev/null)
	[ -n "$deb" ] || { echo "FAIL: no package $p"; fails=$((fails + 1)); continue; }
	run 0 dpkg -x "$deb" "$ROOT"
done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=$ROOT/usr/lib/$multiarch
for f in usr/bin/rdmakit usr/bin/rdmakit-mesh "usr/lib/$multiarch/librdmakit.so.0" \
	"usr/lib/$multiarch/librdmakit.so" "usr/lib/$multiarch/pkgconfig/rdmakit.pc" \
	usr/include/rdmakit/rdmakit.h; do
	run 0 test -e "$ROOT/$f"
done
# Attach at boot: the units (naming the packaged rdmakit), the udev rule, the
# config files as conffiles, the example swap unit as documentation.
for f in lib/systemd/system/rdmakit-memserver.service lib/systemd/system/rdmakit-blk.service \
	lib/udev/rules.d/60-rdmakit-rkblk.rules etc/rdmakit/blk.conf etc/rdmakit/memserver.conf \
	usr/share/doc/rdmakit/examples/rdmakit-swap-example.service; do
	run 0 test -e "$ROOT/$f"
done
has "$ROOT/lib/systemd/system/rdmakit-blk.service" "ExecStart=/usr/bin/rdmakit blk attach --all"
run 0 sh -c "dpkg-deb --ctrl-tarfile '$(ls "$W"/src/rdmakit_*.deb)' | tar -xO ./conffiles" &&
	has "$out" /etc/rdmakit/blk.conf && has "$out" /etc/rdmakit/memserver.conf
# Each package holds what it should: the tool no library, the library no tool.
run 0 dpkg-deb -c "$(ls "$W"/src/librdmakit0_*.deb)" && has "$out" librdmakit.so.0 &&
	if grep -q -e 'bin/' -e 'include/' -e 'librdmakit\.so$' "$out"; then
		echo "FAIL: librdmakit0 holds more than the library:"
		sed 's/^/  | /' "$out"
		fails=$((fails + 1))
	fi
run 0 dpkg-deb -f "$(ls "$W"/src/rdmakit_*.deb)" Depends && has "$out" librdmakit0
if grep -q -i mpi "$out"; then
	echo "FAIL: rdmakit depends on MPI: $(cat "$out")"
	fails=$((fails + 1))
fi
LD_LIBRARY_PATH=$lib
export LD_LIBRARY_PATH
run 0 "$ROOT/usr/bin/rdmakit" --help && has "$out" devices

echo "== the examples against the unpacked librdmakit-dev"
examples build

echo "== rkblk built by DKMS from the unpacked rdmakit-dkms for the guest's kernel"
"$SRC/scripts/softroce" setup >/dev/null || { echo "FAIL: scripts/softroce setup"; exit 1; }
CACHE=${RDMAKIT_SOFTROCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdmakit/softroce}
kver=$(cut -d' ' -f1 "$CACHE/current")
# The kernel tests' scripts/kmod.sh installs them too; a fresh machine may
# not have them yet (deps.sh is bash).
if [ ! -e "/usr/src/linux-headers-$kver/Makefile" ]; then
	bash -c '. "$1/scripts/deps.sh" && rk_install_packages "$2"' _ "$SRC" "linux-headers-$kver" ||
		{ echo "FAIL: cannot install linux-headers-$kver"; exit 1; }
fi
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$ROOT"/usr/src/rdmakit-*/dkms.conf)
t=$(now)
# A DKMS tree of its own; no module signing (sign_file: none), so nothing
# outside $W is written (the guest loads unsigned modules).
dk="--sourcetree $ROOT/usr/src --dkmstree $W/dkms -k $kver --kernelsourcedir /usr/src/linux-headers-$kver"
# shellcheck disable=SC2086
run 0 dkms add -m rdmakit -v "$ver" $dk &&
	run 0 env sign_file=/nonexistent dkms build -m rdmakit -v "$ver" $dk
ko=$(find "$W/dkms/rdmakit/$ver/$kver" -name rkblk.ko 2>/dev/null | head -1)
if [ -z "$ko" ]; then
	echo "FAIL: no rkblk.ko from DKMS"
	cat "$W"/dkms/rdmakit/*/build/make.log 2>/dev/null | tail -20
	fails=$((fails + 1))
else
	run 0 modinfo -F vermagic "$ko" && has "$out" "$kver "
	run 0 modinfo -F license "$ko" && has "$out" GPL
	echo "ok: $ko built by dkms ($(since "$t") s)"
fi
echo "host part: $(since "$t0") s"
[ "$fails" -eq 0 ] || finish

echo "== in a Soft-RoCE guest: the unpacked rdmakit devices, the examples, rkblk"
t=$(now)
"$SRC/scripts/softroce" run --cpus 1 -- env LD_LIBRARY_PATH="$lib" PATH="$PATH:/usr/sbin:/sbin" \
	sh "$SRC/tests/debian/debian.sh" --guest "$W" "$SRC" "$ko"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: the guest part exited $rc"; fails=$((fails + 1)); }
echo "guest part: $(since "$t") s; in all $(since "$t0") s"
finish
