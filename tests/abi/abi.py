#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""librdmakit's ABI checks (docs/library.md), as rdma-core's buildlib/check-build
does for its libraries.

abi.py headers INCLUDE_DIR MAP
    Every installed header (INCLUDE_DIR/rdmakit/*.h) compiles alone as C11
    (gcc -Wall -Wextra -Werror) and as C++ (g++), and has the extern "C"
    guards; a C++ file that includes <rdmakit/rdmakit.h> and takes the address
    of every function of MAP refers to each by its C name (none mangled, none
    undeclared), and rdmakit.h includes every header.
abi.py exports LIBRARY MAP SYMBOLS
    nm -D --defined-only LIBRARY exports exactly MAP's functions, each at its
    version node, and the nodes; MAP is one symbol a line, sorted in its node;
    the Debian symbols file SYMBOLS lists the same symbols and nodes.
abi.py --self-test INCLUDE_DIR LIBRARY MAP SYMBOLS
    Plants in temporary copies a header without extern "C" (stop.h as it was),
    a map without one exported symbol and with one the library lacks, a
    symbol moved to another node, and a symbols file missing a line; checks
    that each fault is named.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CC = os.environ.get("CC", "gcc")
CXX = os.environ.get("CXX", "g++")
GUARD_OPEN = re.compile(r'#ifdef __cplusplus\s*\nextern "C" \{\s*\n#endif')
GUARD_CLOSE = re.compile(r'#ifdef __cplusplus\s*\n\}\s*\n#endif')


def run(argv, stdin=None):
    p = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def indent(text, lines=8):
    return "\n".join("  | " + l for l in text.strip().splitlines()[:lines])


def read_map(path):
    """{symbol: node}, [nodes in order], faults of form."""
    faults = []
    with open(path) as fh:
        text = fh.read()
    body = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    syms, nodes = {}, []
    for m in re.finditer(r"(\w[\w.]*)\s*\{(.*?)\}\s*([\w.]*)\s*;", body, flags=re.S):
        node, inner, parent = m.group(1), m.group(2), m.group(3)
        if parent and parent not in nodes:
            faults.append(f"map: node {node} inherits {parent}, which comes nowhere before it")
        nodes.append(node)
        names = []
        section = None
        for line in inner.splitlines():
            line = line.strip()
            if not line:
                continue
            if line in ("global:", "local:"):
                section = line
                continue
            if line == "local: *;":
                continue
            if section != "global:" or not re.fullmatch(r"\w+;", line):
                faults.append(f"map: node {node}: '{line}' is not one symbol a line under global:")
                continue
            names.append(line[:-1])
        if names != sorted(names):
            first = next(a for a, b in zip(names, sorted(names)) if a != b)
            faults.append(f"map: node {node} is not sorted (first out of place: {first})")
        for n in names:
            if n in syms:
                faults.append(f"map: {n} in both {syms[n]} and {node}")
            syms[n] = node
    if not nodes:
        faults.append(f"map: no version node in {path}")
    return syms, nodes, faults


def header_faults(include_dir, map_path):
    faults = []
    hdrs = sorted(f for f in os.listdir(os.path.join(include_dir, "rdmakit")) if f.endswith(".h"))
    for h in hdrs:
        src = f"#include <rdmakit/{h}>\n"
        with open(os.path.join(include_dir, "rdmakit", h)) as fh:
            text = fh.read()
        # A header of #include lines only (rdmakit.h) declares nothing itself.
        code = [l for l in re.sub(r"/\*.*?\*/", "", text, flags=re.S).splitlines() if l.strip()]
        only_includes = all(l.startswith("#") for l in code)
        if not only_includes and (not GUARD_OPEN.search(text) or not GUARD_CLOSE.search(text)):
            faults.append(f'rdmakit/{h}: no extern "C" guards (#ifdef __cplusplus / '
                          f'extern "C" {{ / #endif ... #ifdef __cplusplus / }} / #endif)')
        for lang, cmd in (("C", [CC, "-std=c11"]), ("C++", [CXX, "-std=c++17"])):
            rc, _, err = run(cmd + ["-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                                    "-I", include_dir, "-x", "c" if lang == "C" else "c++", "-"],
                             src)
            if rc != 0:
                faults.append(f"rdmakit/{h}: does not compile alone as {lang}:\n{indent(err)}")
    # rdmakit.h brings in every header (directly or through another).
    rc, out, err = run([CC, "-std=c11", "-M", "-I", include_dir, "-x", "c", "-"],
                       "#include <rdmakit/rdmakit.h>\n")
    deps = set(os.path.basename(d) for d in out.replace("\\\n", " ").split()
               if os.path.dirname(d).endswith("rdmakit"))
    for h in hdrs:
        if h not in deps:
            faults.append(f"rdmakit/rdmakit.h: does not bring in rdmakit/{h}")
    # Linkage: every exported function, as C++ sees it through the headers.
    syms, _, map_faults = read_map(map_path)
    faults += map_faults
    with tempfile.TemporaryDirectory() as tmp:
        cc = os.path.join(tmp, "linkage.cc")
        with open(cc, "w") as fh:
            fh.write("#include <rdmakit/rdmakit.h>\nvoid (*const rk_abi_all[])(void) = {\n")
            fh.write("".join(f"\treinterpret_cast<void (*)(void)>(&{s}),\n" for s in sorted(syms)))
            fh.write("};\n")
        obj = os.path.join(tmp, "linkage.o")
        rc, _, err = run([CXX, "-std=c++17", "-c", "-I", include_dir, "-o", obj, cc])
        if rc != 0:
            undeclared = sorted(set(re.findall(r"'(rk_\w+)' was not declared", err)))
            for s in undeclared:
                faults.append(f"{s}: in the map, declared by no header rdmakit.h includes")
            if not undeclared:
                faults.append(f"the map's functions through <rdmakit/rdmakit.h> in C++:\n"
                              f"{indent(err)}")
        else:
            rc, out, err = run(["nm", "-u", "-C", obj])
            refs = [l.split(None, 1)[1] for l in out.splitlines() if l.split()]
            for s in sorted(syms):
                if s not in refs:
                    cxx = [r for r in refs if r.startswith(s + "(")]
                    faults.append(f"{s}: C++ refers to it as {cxx[0] if cxx else '?'} "
                                  f"(C++ linkage: its header lacks extern \"C\"), wanted {s}")
    return faults, len(hdrs), len(syms)


def exported(lib):
    rc, out, err = run(["nm", "-D", "--defined-only", lib])
    if rc != 0:
        return None, None, f"nm -D {lib}: {err.strip()}"
    syms, nodes = {}, set()
    for line in out.splitlines():
        f = line.split()
        if len(f) != 3:
            continue
        name, _, ver = f[2].partition("@")
        ver = ver.lstrip("@")
        if f[1] == "A":
            nodes.add(name)
        else:
            syms[name] = ver or "(no version)"
    return syms, nodes, None


def read_symbols(path):
    faults, syms, nodes = [], {}, set()
    with open(path) as fh:
        lines = fh.read().splitlines()
    lines = [l for l in lines if not l.startswith("#") or l.endswith("#MINVER#")]
    if not lines or not re.fullmatch(r"librdmakit\.so\.\d+ librdmakit\d+ #MINVER#", lines[0]):
        faults.append(f"symbols: first line {lines[0] if lines else ''!r}, wanted "
                      "'librdmakit.so.N librdmakitN #MINVER#'")
    for line in lines[1:]:
        if not line or line.startswith("#") or line.startswith("* "):
            continue
        m = re.fullmatch(r" (\w[\w.]*)@(RDMAKIT_[\d.]+) (\S+)", line)
        if not m:
            faults.append(f"symbols: '{line}' is not ' symbol@NODE version'")
            continue
        if m.group(1) == m.group(2):
            nodes.add(m.group(1))
        else:
            syms[m.group(1)] = m.group(2)
    return syms, nodes, faults


def compare(what_a, a, what_b, b):
    faults = []
    for s in sorted(set(a) - set(b)):
        faults.append(f"{s}: {what_a} ({a[s]}), not {what_b}")
    for s in sorted(set(b) - set(a)):
        faults.append(f"{s}: {what_b} ({b[s]}), not {what_a}")
    for s in sorted(set(a) & set(b)):
        if a[s] != b[s]:
            faults.append(f"{s}: {what_a} at {a[s]}, {what_b} at {b[s]}")
    return faults


def export_faults(lib, map_path, symbols_path):
    syms, nodes, faults = read_map(map_path)
    exp, exp_nodes, err = exported(lib)
    if err:
        return faults + [err], 0
    faults += compare("exported by the library", exp, "in the map", syms)
    if exp_nodes != set(nodes):
        faults.append(f"version nodes: the library has {sorted(exp_nodes)}, the map {nodes}")
    deb, deb_nodes, deb_faults = read_symbols(symbols_path)
    faults += deb_faults
    faults += compare("in debian symbols", deb, "in the map", syms)
    if deb_nodes != set(nodes):
        faults.append(f"version nodes: debian symbols has {sorted(deb_nodes)}, the map {nodes}")
    return faults, len(exp)


def report(faults, ok_text):
    for f in faults:
        print("FAIL:", f)
    if not faults:
        print("ok:", ok_text)
    return 1 if faults else 0


def expect(name, faults, want):
    """Each string of want starts some fault; prints both on a mismatch."""
    print(f"== planted: {name}")
    for f in faults:
        print("  named:", f.splitlines()[0])
    missing = [w for w in want if not any(f.startswith(w) for f in faults)]
    extra = [f.splitlines()[0] for f in faults if not any(f.startswith(w) for w in want)]
    if missing or extra:
        print(f"FAIL: {name}: expected faults starting {want}; missing {missing}, "
              f"unexpected {extra}")
        return 1
    return 0


def self_test(include_dir, lib, map_path, symbols_path):
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        # 1. stop.h as it was before it had extern "C".
        inc = os.path.join(tmp, "include")
        shutil.copytree(include_dir, inc)
        stop = os.path.join(inc, "rdmakit", "stop.h")
        with open(stop) as fh:
            text = fh.read()
        text = GUARD_OPEN.sub("", text, count=1)
        text = GUARD_CLOSE.sub("", text, count=1)
        with open(stop, "w") as fh:
            fh.write(text)
        faults, _, _ = header_faults(inc, map_path)
        fails += expect("stop.h without extern \"C\"", faults,
                        ['rdmakit/stop.h: no extern "C" guards', "rk_stop_requested: C++ refers",
                         "rk_stop_watch: C++ refers"])

        # 2. A map without rk_version, with rk_planted_gone, and rk_strerror
        # in a node of its own; a symbols file without rk_version either.
        syms, nodes, _ = read_map(map_path)
        assert "rk_version" in syms and "rk_strerror" in syms, "the self-test's symbols moved"
        first = nodes[0]
        kept = sorted(s for s in syms
                      if syms[s] == first and s not in ("rk_version", "rk_strerror"))
        kept = sorted(kept + ["rk_planted_gone"])
        planted_map = os.path.join(tmp, "planted.map")
        with open(planted_map, "w") as fh:
            fh.write(f"{first} {{\n\tglobal:\n")
            fh.write("".join(f"\t\t{s};\n" for s in kept))
            fh.write("\tlocal: *;\n};\n")
            # The later nodes as they are, each inheriting the one before.
            for prev, node in zip(nodes, nodes[1:]):
                fh.write(f"\n{node} {{\n\tglobal:\n")
                fh.write("".join(f"\t\t{s};\n" for s in sorted(syms) if syms[s] == node))
                fh.write(f"}} {prev};\n")
            fh.write(f"\nRDMAKIT_9.9 {{\n\tglobal:\n\t\trk_strerror;\n}} {nodes[-1]};\n")
        planted_sym = os.path.join(tmp, "planted.symbols")
        with open(symbols_path) as fh:
            lines = [l for l in fh.read().splitlines() if not l.startswith(" rk_version@")]
        with open(planted_sym, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        faults, _ = export_faults(lib, planted_map, planted_sym)
        fails += expect("a map and a symbols file out of step with the library", faults,
                        ["rk_version: exported by the library",
                         "rk_planted_gone: in the map (RDMAKIT_0.1), not exported",
                         "rk_strerror: exported by the library at " + first,
                         "version nodes: the library has",
                         "rk_planted_gone: in the map (RDMAKIT_0.1), not in debian symbols",
                         "rk_strerror: in debian symbols at " + first,
                         "version nodes: debian symbols has"])

        # 3. An unsorted map with two names on a line.
        bad_map = os.path.join(tmp, "unsorted.map")
        with open(bad_map, "w") as fh:
            fh.write(f"{first} {{\n\tglobal:\n\t\trk_b;\n\t\trk_a;\n\t\trk_c; rk_d;\n\tlocal: *;\n}};\n")
        _, _, faults = read_map(bad_map)
        fails += expect("an unsorted map, two names on a line", faults,
                        [f"map: node {first}: 'rk_c; rk_d;' is not one symbol a line",
                         f"map: node {first} is not sorted (first out of place: rk_b)"])
    if fails:
        return 1
    print("ok: every planted fault is named")
    return 0


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "headers":
        faults, nh, ns = header_faults(args[1], args[2])
        return report(faults, f"{nh} headers compile alone as C and C++ with extern \"C\"; "
                              f"the map's {ns} functions have C linkage through rdmakit.h")
    if len(args) == 4 and args[0] == "exports":
        faults, n = export_faults(args[1], args[2], args[3])
        return report(faults, f"{os.path.basename(args[1])} exports the map's {n} functions at "
                              "their nodes; the Debian symbols file lists the same")
    if len(args) == 5 and args[0] == "--self-test":
        return self_test(*args[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
