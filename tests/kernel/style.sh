#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# kernel_style: the module's code (kernel/*.c, kernel/*.h) is checkpatch-clean:
# no error and no warning from the kernel's own scripts/checkpatch.pl, taken
# from Debian's linux-source tarball in /usr/src (or $RDMAKIT_CHECKPATCH), run
# with --no-tree as on files outside a kernel tree. No guest needed.
# Usage: style.sh ROOT BUILD
ROOT=$1 BUILD=$2
cp=${RDMAKIT_CHECKPATCH:-}
if [ -z "$cp" ]; then
	dir=$BUILD/checkpatch
	cp=$dir/checkpatch.pl
	if [ ! -f "$cp" ]; then
		tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
		if [ -z "$tarball" ]; then
			echo "FAIL: no /usr/src/linux-source-*.tar.xz: install Debian's linux-source" \
				"(scripts/deps.sh, RDMAKIT_KERNEL_PACKAGES) or set RDMAKIT_CHECKPATCH"
			exit 1
		fi
		# checkpatch.pl reads its word lists from its own directory.
		mkdir -p "$dir.tmp" &&
			tar -xJf "$tarball" -C "$dir.tmp" --strip-components=2 --wildcards \
				'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
				'*/scripts/const_structs.checkpatch' &&
			rm -rf "$dir" && mv "$dir.tmp" "$dir" ||
			{ echo "FAIL: cannot take checkpatch.pl out of $tarball"; exit 1; }
	fi
fi
echo "checkpatch: $cp"
# One file at a time: its verdict line names it.
fails=0
for f in "$ROOT"/kernel/*.c "$ROOT"/kernel/*.h; do
	out=$(perl "$cp" --no-tree --terse --show-types -f "$f" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && ! echo "$out" | grep -q -E ': (ERROR|WARNING):'; then
		echo "ok: ${f#"$ROOT"/} is checkpatch-clean"
	else
		echo "FAIL: ${f#"$ROOT"/} (checkpatch exit $rc):"
		echo "$out"
		fails=$((fails + 1))
	fi
done
exit $fails
