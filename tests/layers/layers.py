#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""src/lib's folders are layers: base < verbs < conn < engines/* and memserver.
A file includes and calls only its own folder and lower layers; the engines
and memserver, all on the top layer, not each other (docs/architecture.md).

layers.py ROOT OBJLIST   checks ROOT's src/lib and include/rdmakit, and the
                         objects named in OBJLIST (one path a line, or ';'
                         between them: $<TARGET_OBJECTS:rdmakit_obj>)
layers.py --self-test ROOT OBJLIST CC
                         plants an upward include, one between engines and an
                         upward call (an object CC compiles) in a copy, and
                         checks that each, and the cycle, is named

NM in the environment names the nm to run (CMake's CMAKE_NM); else nm.

(a) includes: an internal header ("conn/clients_int.h") belongs to its folder, a
    public one (rdmakit/X.h) to the folder of X.c; the umbrella rdmakit.h to
    none below the programs. Public headers are held to the rule as well.
    base includes no libibverbs or librdmacm header.
(b) calls: nm on each object; a symbol it needs that another object of the
    library defines must be defined in its own folder or a lower layer.
(c) the folder graph of (a) and (b) is printed; a cycle between folders
    fails, and so does a cycle between files of base, verbs or conn (an
    engine's or memserver's files are one module and may call each other).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

RANK = {"base": 0, "verbs": 1, "conn": 2, "engines": 3, "memserver": 3}
# Folders whose files must not call each other in a cycle.
ACYCLIC_FILES = ("base", "verbs", "conn")
UMBRELLA = "rdmakit.h"
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
SYSTEM_VERBS = re.compile(r"^(infiniband|rdma)/")


def rank(folder):
    return RANK.get(folder.split("/")[0])


def allowed(src, dst):
    """May folder src use folder dst?"""
    return src == dst or rank(dst) < rank(src)


def use(edges, faults, src, dst, how, fault):
    """Folder src uses dst (how: an example for the graph); a fault if it may not."""
    edges.setdefault((src, dst), []).append(how)
    if not allowed(src, dst):
        faults.append(f"{fault}, above or beside {src} (rank {rank(dst)} vs {rank(src)})")


def lib_files(lib):
    out = []
    for d, _, names in os.walk(lib):
        for n in names:
            if n.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, n), lib))
    return sorted(out)


def folder_of(rel):
    return os.path.dirname(rel)


def header_owners(lib, inc, files):
    """include/rdmakit/X.h -> the folder of X.c."""
    by_name = {os.path.basename(f): folder_of(f) for f in files if f.endswith(".c")}
    owners, faults = {}, []
    for h in sorted(os.listdir(inc)):
        if not h.endswith(".h") or h == UMBRELLA:
            continue
        c = h[:-2] + ".c"
        if c in by_name:
            owners[h] = by_name[c]
        else:
            faults.append(f"include/rdmakit/{h}: no src/lib/*/{c} implements it, so it has no "
                          f"layer (name its layer in tests/layers/layers.py)")
    return owners, faults


def check_includes(root, edges):
    lib, inc = os.path.join(root, "src", "lib"), os.path.join(root, "include", "rdmakit")
    files = lib_files(lib)
    owners, faults = header_owners(lib, inc, files)
    units = [(f"src/lib/{f}", folder_of(f), os.path.join(lib, f)) for f in files]
    units += [(f"include/rdmakit/{h}", owners[h], os.path.join(inc, h)) for h in owners]
    for name, src, path in units:
        if rank(src) is None:
            faults.append(f"{name}: folder '{src}' is not a layer ({', '.join(RANK)})")
            continue
        with open(path, errors="replace") as fh:
            text = fh.read()
        for kind, what in INCLUDE.findall(text):
            if kind == '"':
                dst = folder_of(what)
                if not dst or not os.path.isfile(os.path.join(lib, what)):
                    faults.append(f'{name}: #include "{what}": internal headers go by their '
                                  f"path under src/lib (\"{src or 'folder'}/...\")")
                    continue
            elif what.startswith("rdmakit/"):
                h = what[len("rdmakit/"):]
                if h == UMBRELLA:
                    faults.append(f"{name}: includes <rdmakit/{UMBRELLA}>, every layer's "
                                  f"header; include what it uses")
                    continue
                dst = owners.get(h)
                if dst is None:
                    continue  # named above, or not a header of ours
            else:
                if src == "base" and SYSTEM_VERBS.match(what):
                    faults.append(f"{name}: base includes <{what}>; base is libc only")
                continue
            if dst == src:
                continue
            use(edges, faults, src, dst, f"{name} includes {what}",
                f"{name}: includes {what} of {dst}")
    return faults


def obj_rel(path):
    """build/.../rdmakit_obj.dir/conn/cm.c.o -> conn/cm.c"""
    m = re.search(r"rdmakit_obj\.dir/(.+)\.o(bj)?$", path.replace(os.sep, "/"))
    return m.group(1) if m else None


def read_objlist(objlist):
    with open(objlist) as fh:
        return [p for p in re.split(r"[;\n]", fh.read()) if p.strip()]


def symbols(objs):
    """Each object's undefined symbols, and which object defines each global."""
    defs, undef = {}, {}
    for o in objs:
        out = subprocess.run([os.environ.get("NM") or "nm", "-P", o], capture_output=True, text=True, check=True).stdout
        need = undef.setdefault(o, set())
        for line in out.splitlines():
            p = line.split()
            if len(p) < 2:
                continue
            if p[1] == "U":
                need.add(p[0])
            elif p[1].isupper():
                defs[p[0]] = o
    return defs, undef


def check_calls(objs, edges, file_edges):
    faults = []
    rel = {}
    for o in objs:
        r = obj_rel(o)
        if r is None:
            faults.append(f"{o}: not an object of rdmakit_obj (no rdmakit_obj.dir/ in its path)")
        else:
            rel[o] = r
    if faults:
        return faults
    defs, undef = symbols(objs)
    for o in objs:
        src = folder_of(rel[o])
        for sym in sorted(undef[o]):
            d = defs.get(sym)
            if d is None or d == o:
                continue
            dst = folder_of(rel[d])
            if dst == src:
                file_edges.setdefault(src, {}).setdefault(rel[o], set()).add(rel[d])
                continue
            use(edges, faults, src, dst, f"{rel[o]} calls {sym}",
                f"{rel[o]}: calls {sym}() of {rel[d]}")
    return faults


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    nodes = set(graph) | {w for v in graph for w in graph[v]}

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def check_graph(edges, file_edges):
    faults = []
    graph = {}
    print("folder graph (from -> to: includes and calls):")
    for (a, b), why in sorted(edges.items()):
        graph.setdefault(a, set()).add(b)
        print(f"  {a} -> {b}: {len(why)} ({why[0]}{', ...' if len(why) > 1 else ''})")
    for comp in cycles(graph):
        faults.append(f"cycle between folders: {' <-> '.join(comp)} (" +
                      "; ".join(edges[(a, b)][0] for a in comp for b in comp
                                if (a, b) in edges) + ")")
    for folder in sorted(file_edges):
        if folder.split("/")[0] not in ACYCLIC_FILES:
            continue
        for comp in cycles(file_edges[folder]):
            faults.append(f"cycle between files of {folder}: {' <-> '.join(comp)}")
    return faults


def check(root, objs):
    edges, file_edges = {}, {}
    faults = check_includes(root, edges)
    faults += check_calls(objs, edges, file_edges)
    faults += check_graph(edges, file_edges)
    return faults


def self_test(root, objs, cc):
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "tree")
        for d in ("src/lib", "include/rdmakit"):
            shutil.copytree(os.path.join(root, d), os.path.join(copy, d))
        # An upward include: verbs' qp.c takes the bench engine's header.
        qp = os.path.join(copy, "src/lib/verbs/qp.c")
        with open(qp) as fh:
            text = fh.read()
        with open(qp, "w") as fh:
            fh.write(text.replace("#include <rdmakit/qp.h>",
                                  "#include <rdmakit/qp.h>\n#include <rdmakit/bench.h>", 1))
        # An include beside: one engine takes another's header.
        sw = os.path.join(copy, "src/lib/engines/share/share_ways.c")
        with open(sw) as fh:
            text = fh.read()
        with open(sw, "w") as fh:
            fh.write(text.replace("#include <rdmakit/status.h>",
                                  "#include <rdmakit/status.h>\n#include <rdmakit/qp_states.h>",
                                  1))
        # An upward call: an object of verbs that calls the bench engine.
        odir = os.path.join(tmp, "CMakeFiles/rdmakit_obj.dir/verbs")
        os.makedirs(odir)
        planted = os.path.join(odir, "planted.c.o")
        code = "void rk_bench_close(void *b);\nvoid planted(void) { rk_bench_close(0); }\n"
        subprocess.run([cc, "-c", "-x", "c", "-", "-o", planted], input=code, text=True,
                       check=True)
        faults = check(copy, objs + [planted])
        want = ["src/lib/verbs/qp.c: includes rdmakit/bench.h of engines/bench",
                "src/lib/engines/share/share_ways.c: includes rdmakit/qp_states.h of "
                "engines/probe, above or beside engines/share",
                "verbs/planted.c: calls rk_bench_close() of engines/bench/bench.c",
                "cycle between folders: "]
        for f in faults:
            print("planted fault:", f)
        missing = [w for w in want if not any(f.startswith(w) for f in faults)]
        cyc = [f for f in faults if f.startswith(want[-1])]
        if missing or len(faults) != len(want) or "engines/bench" not in "".join(cyc):
            print(f"FAIL: self-test: expected {len(want)} faults starting {want}, "
                  f"got {len(faults)}; missing {missing}")
            return 1
        print(f"ok: the planted includes, call and cycle are named ({len(faults)})")
        return 0


def main():
    args = sys.argv[1:]
    if len(args) == 4 and args[0] == "--self-test":
        return self_test(args[1], read_objlist(args[2]), args[3])
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    objs = read_objlist(args[1])
    faults = check(args[0], objs)
    for f in faults:
        print("FAIL:", f)
    if faults:
        return 1
    print(f"ok: {len(objs)} objects; every include and call stays in its layer or below")
    return 0


if __name__ == "__main__":
    sys.exit(main())
