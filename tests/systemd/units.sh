#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The systemd units of attach at boot (systemd/, as CMake configured them in
# BUILD/systemd) pass `systemd-analyze verify` without a word: its exit
# status, and no warning (an unknown key is only a warning, exit 0). The
# installed path of rdmakit (BINDIR) is pointed at the build's RDMAKIT, as
# verify checks that the command is there. Then broken copies (a misspelled
# key, a missing command, a Type=oneshot with Restart=always) must fail the
# same check: the check can fail.
# Usage: units.sh BUILD RDMAKIT BINDIR
BUILD=$1 RDMAKIT=$2 BINDIR=$3
fails=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
command -v systemd-analyze >/dev/null ||
	{ echo "FAIL: no systemd-analyze (the systemd package: RDMAKIT_CHECK_PACKAGES in scripts/deps.sh)"; exit 1; }
systemd-analyze --version | head -1

# verify DIR: 0 when systemd-analyze verify takes every unit in DIR silently.
verify() {
	systemd-analyze verify --man=no "$1"/*.service >"$dir/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] && [ ! -s "$dir/out" ] && return 0
	sed 's/^/  | /' "$dir/out"
	return 1
}

# fresh NAME: the configured units in $dir/NAME, rdmakit the build's.
fresh() {
	mkdir -p "$dir/$1"
	cp "$BUILD"/systemd/*.service "$dir/$1/"
	sed -i "s|$BINDIR/rdmakit|$RDMAKIT|g" "$dir/$1"/*.service
}

n=$(ls "$BUILD"/systemd/*.service 2>/dev/null | wc -l)
[ "$n" -eq 3 ] && echo "ok: 3 units configured" || { echo "FAIL: $n units in $BUILD/systemd"; fails=$((fails + 1)); }
for u in rdmakit-memserver rdmakit-blk rdmakit-swap-example; do
	grep -q "^ExecStart=$BINDIR/rdmakit \|^ExecStart=/bin/sh" "$BUILD/systemd/$u.service" ||
		{ echo "FAIL: $u.service does not start $BINDIR/rdmakit"; fails=$((fails + 1)); }
done
fresh good
if verify "$dir/good"; then
	echo "ok: systemd-analyze verify takes the units without a warning"
else
	echo "FAIL: systemd-analyze verify refuses or warns about the units"; fails=$((fails + 1))
fi

# broken NAME UNIT SED: a copy with UNIT changed by SED must fail.
broken() {
	fresh "$1"
	sed -i "$3" "$dir/$1/$2.service"
	if verify "$dir/$1" >"$dir/$1.why"; then
		echo "FAIL: a broken unit ($1) passed"; fails=$((fails + 1))
	else
		echo "ok: a broken unit ($1) fails: $(head -1 "$dir/$1.why" | sed 's/^  | //')"
	fi
}
broken misspelled rdmakit-blk 's/^ExecStop=/ExecStpo=/'
broken no-command rdmakit-memserver "s|^ExecStart=[^ ]*|ExecStart=$dir/no-such-rdmakit|"
broken oneshot-restart rdmakit-blk 's/^RemainAfterExit=yes/Restart=always/'
# A swap ordered before swap.target is a cycle: swap.target comes before
# sysinit.target, the network long after (the example once had it).
broken swap-cycle rdmakit-swap-example 's/^After=rdmakit-blk.service/&\nBefore=swap.target/'

[ $fails -eq 0 ] && echo "PASS" || echo "FAIL: $fails"
[ $fails -eq 0 ]
