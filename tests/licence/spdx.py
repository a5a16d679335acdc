#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Every source file names its licence on an SPDX line in its first lines:
the kernel module (kernel/) GPL-2.0-only, everything else the dual licence
of rdma-core's libraries; every licence named has its text in LICENSES/.

spdx.py ROOT      checks the tree (the files git tracks, else a walk)
spdx.py --self-test  plants the faults and checks that each is named
"""
import os
import re
import subprocess
import sys
import tempfile

USER = "GPL-2.0-only OR BSD-2-Clause"
KERNEL = "GPL-2.0-only"
SOURCE = re.compile(r"(\.(c|h|sh|py|cmake|in)$|(^|/)(CMakeLists\.txt|Makefile|Kbuild)$"
                    r"|^scripts/|^\.ci/|^debian/(rules|present)$|(^|/)\.clang-format$)")
# Data, not source: fuzz seeds, benchmark results, figures.
DATA = ("bench/results/", "tests/fuzz/corpus/", "docs/mesh/")
KERNEL_FILE = re.compile(r"^kernel/([^/]+\.[ch]|Kbuild|Makefile)$")
HEAD_LINES = 3


def tree_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                             check=True).stdout
        # Files git tracks, minus those removed from the work tree.
        files = [f for f in out.splitlines() if os.path.isfile(os.path.join(root, f))]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if not x.startswith((".git", ".cache", "build", "obj-"))
                   and not (rel == "debian" and x not in ("source",))]
        files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return files


def expected(path):
    return KERNEL if KERNEL_FILE.match(path) else USER


def check(root):
    faults = []
    used = set()
    for f in sorted(tree_files(root)):
        if f.startswith(DATA) or not SOURCE.search(f):
            continue
        with open(os.path.join(root, f), errors="replace") as fh:
            head = [fh.readline() for _ in range(HEAD_LINES)]
        m = None
        for line in head:
            m = re.search(r"SPDX-License-Identifier: (.*?)\s*(\*/)?\s*$", line)
            if m:
                break
        if not m:
            faults.append(f"{f}: no SPDX-License-Identifier line in its first {HEAD_LINES} lines "
                          f"(expected: {expected(f)})")
            continue
        used.update(x for x in re.split(r" (?:OR|AND|WITH) ", m.group(1)))
        if m.group(1) != expected(f):
            faults.append(f"{f}: says '{m.group(1)}', expected '{expected(f)}'")
    for lic in sorted(used):
        if not os.path.isfile(os.path.join(root, "LICENSES", lic + ".txt")):
            faults.append(f"LICENSES/{lic}.txt: missing (a file names {lic})")
    return faults


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def put(path, text):
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as fh:
                fh.write(text)
        put("src/lib/good.c", f"/* SPDX-License-Identifier: {USER} */\nint x;\n")
        put("kernel/good.c", f"// SPDX-License-Identifier: {KERNEL}\n")
        put("scripts/tool", f"#!/bin/sh\n# SPDX-License-Identifier: {USER}\n")
        put("src/lib/planted.c", "/* no licence line */\nint y;\n")
        put("kernel/wrong.c", f"// SPDX-License-Identifier: {USER}\n")
        put("tests/fuzz/corpus/seed", "data\n")
        put("LICENSES/GPL-2.0-only.txt", "")
        faults = check(root)
        want = ["src/lib/planted.c: no SPDX", "kernel/wrong.c: says",
                "LICENSES/BSD-2-Clause.txt: missing"]
        ok = len(faults) == len(want) and all(any(f.startswith(w) for f in faults) for w in want)
        print("\n".join(faults))
        if not ok:
            print(f"FAIL: self-test: expected {len(want)} faults starting {want}, got {len(faults)}")
            return 1
        print(f"ok: the planted faults are named ({len(faults)})")
        return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    faults = check(sys.argv[1])
    for f in faults:
        print("FAIL:", f)
    if faults:
        return 1
    print("ok: every source file has its SPDX line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
