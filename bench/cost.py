#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Counting for bench/vs-perftest-cost.sh: CPU instructions, system calls and
completions per poll call of a client, per message, by difference.

Each client runs twice, with N1 and N2 iterations (the same size, QPs and
everything else); what setup and teardown cost is the same in both runs and
cancels exactly: per message = (count(N2) - count(N1)) / (N2 - N1).

    cost.py callgrind FILE     the total instructions (Ir) of a callgrind.out
    cost.py strace FILE        the total system calls of an `strace -c` summary
    cost.py pollcount FILE     "polls completions" of bench/pollcount.c's file
    cost.py syscalls FILE1 N1 FILE2 N2
        system calls per message by name (two strace -c summaries)
    cost.py permsg N1 C1 N2 C2 (C2 - C1) / (N2 - N1)
    cost.py hot FILE1 N1 FILE2 N2 [TOP]
        instructions per message by function (self cost, by difference of two
        callgrind.out files), the TOP (default 12) dearest
    cost.py table RAW
        the table from the raw file, one line per count:
            CASE|TOOL|MESSAGES|METRIC|VALUE
        METRIC: ir, syscalls, polls, completions; TOOL rdmakit or perftest;
        three message counts a case and tool: the figures from the first to
        the second (shown) and from the second to the third (the repeat: they
        agree within 5% when the cost is the same for every message)

Only the standard library: Debian's python3 runs it, in the guest too.
"""
import re
import sys

RK, PT = "rdmakit", "perftest"
AGREE = 0.05
# Callgrind's compressed names: cob= shares ob='s ids, cfn= fn='s, the file
# keys fl='s.
SPACE = {"cob": "ob", "cfn": "fn", "cfi": "fl", "cfl": "fl", "fi": "fl", "fe": "fl", "fl": "fl"}


def callgrind_total(text):
    """The Ir total of a callgrind.out (its totals: or summary: line)."""
    for key in ("totals:", "summary:"):
        for line in text.splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    raise ValueError("no totals: or summary: line (not a callgrind.out?)")


def strace_total(text):
    """The calls of the total line of an `strace -c` summary (its 4th column)."""
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 5 and f[-1] == "total" and f[3].isdigit():
            return int(f[3])
    raise ValueError("no total line (not an strace -c summary?)")


def strace_calls(text):
    """{syscall: calls} of an `strace -c` summary."""
    calls = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 5 and f[-1] != "total" and f[3].isdigit() and f[0][0].isdigit():
            calls[f[-1]] = int(f[3])
    return calls


def syscalls(text1, n1, text2, n2):
    """System calls per message by name, by difference, the most first."""
    a, b = strace_calls(text1), strace_calls(text2)
    rows = [(permsg(n1, a.get(k, 0), n2, b.get(k, 0)), k) for k in set(a) | set(b)]
    rows.sort(reverse=True)
    return [(v, k) for v, k in rows if abs(v) >= 0.0005]


def pollcount(text):
    d = dict(line.split() for line in text.splitlines() if line.strip())
    return int(d["polls"]), int(d["completions"])


def permsg(n1, c1, n2, c2):
    if n2 <= n1:
        raise ValueError("N2 must be larger than N1")
    return (c2 - c1) / (n2 - n1)


def _name(table, kind, rest):
    """Callgrind's name compression: "(id) name" defines, "(id)" reuses."""
    m = re.match(r"\((\d+)\)(?:\s+(.*))?$", rest)
    if not m:
        return rest
    if m.group(2) is not None:
        table[(kind, m.group(1))] = m.group(2)
    return table.get((kind, m.group(1)), rest)


def callgrind_self(text):
    """Self instructions per function ("object:function") of a callgrind.out."""
    names, cost = {}, {}
    ob = fn = "?"
    after_calls = False
    for line in text.splitlines():
        if not line:
            continue
        if line[0].isdigit() or line[0] in "+-*":
            if after_calls:  # the inclusive cost of a call: not self
                after_calls = False
                continue
            f = line.split()
            if len(f) >= 2:
                cost[(ob, fn)] = cost.get((ob, fn), 0) + int(f[1])
            continue
        after_calls = False
        key, _, rest = line.partition("=")
        if key == "ob":
            ob = _name(names, "ob", rest)
        elif key == "fn":
            fn = _name(names, "fn", rest)
        elif key in SPACE:  # names defined here are used later
            _name(names, SPACE[key], rest)
        elif key == "calls":
            after_calls = True
    return {f"{o.rsplit('/', 1)[-1]}:{f}": c for (o, f), c in cost.items()}


def hot(text1, n1, text2, n2, top=12):
    a, b = callgrind_self(text1), callgrind_self(text2)
    rows = [(permsg(n1, a.get(k, 0), n2, b.get(k, 0)), k) for k in set(a) | set(b)]
    rows.sort(reverse=True)
    return [(v, k) for v, k in rows[:top] if v > 0.05]


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def spread(a, b):
    """Relative difference of two repeats (to their mean); 0 when both 0."""
    m = (a + b) / 2
    return abs(a - b) / m if m else 0.0


def figures(raw_text):
    """{(case, tool, rep): {metric: per message}} from the raw lines, and the
    cases in their order. Rep 1 is the difference from the smallest count of
    messages to the next, rep 2 from that to the largest."""
    runs, order = {}, []
    for line in raw_text.splitlines():
        f = line.split("|")
        if len(f) != 5 or not f[4].strip():
            continue
        case, tool, n, metric, value = f
        if case not in order:
            order.append(case)
        runs.setdefault((case, tool, metric), {})[int(n)] = float(value)
    out = {}
    for (case, tool, metric), byn in runs.items():
        pts = sorted(byn.items())
        for rep in (1, 2):
            if len(pts) > rep:
                (n1, c1), (n2, c2) = pts[rep - 1], pts[rep]
                out.setdefault((case, tool, str(rep)), {})[metric] = permsg(n1, c1, n2, c2)
    for d in out.values():
        if "polls" in d and "completions" in d:
            d["cpp"] = d["completions"] / d["polls"] if d["polls"] > 0 else float("nan")
    return out, order


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def pair(r1, r2, m, digits):
    """A figure from N1 to N2 and its repeat from N2 to N3, "a/b", with "!"
    when they differ by more than 5%."""
    a, b = r1.get(m), r2.get(m)
    if a is None:
        return "-"
    if b is None:
        return fmt(a, digits) + "/-"
    return "%s/%s%s" % (fmt(a, digits), fmt(b, digits), "" if spread(a, b) <= AGREE else "!")


def table(raw_text):
    fig, order = figures(raw_text)
    head = "%-16s %-15s %-15s %6s %-13s %-13s %6s %7s %7s"
    lines = [head % ("case", "rk Ir/msg", "pt Ir/msg", "ratio", "rk sc/msg", "pt sc/msg",
                     "ratio", "rk c/p", "pt c/p")]
    for case in order:
        rk1, rk2 = fig.get((case, RK, "1"), {}), fig.get((case, RK, "2"), {})
        pt1, pt2 = fig.get((case, PT, "1"), {}), fig.get((case, PT, "2"), {})

        def ratio(m):
            a, b = rk1.get(m), pt1.get(m)
            return a / b if a is not None and b else None

        lines.append(head % (
            case, pair(rk1, rk2, "ir", 1), pair(pt1, pt2, "ir", 1), fmt(ratio("ir"), 2),
            pair(rk1, rk2, "syscalls", 3), pair(pt1, pt2, "syscalls", 3),
            fmt(ratio("syscalls"), 2), fmt(rk1.get("cpp"), 3), fmt(pt1.get("cpp"), 3)))
    return "\n".join(lines)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    try:
        if cmd == "callgrind" and len(args) == 1:
            print(callgrind_total(read(args[0])))
        elif cmd == "strace" and len(args) == 1:
            print(strace_total(read(args[0])))
        elif cmd == "pollcount" and len(args) == 1:
            print("%d %d" % pollcount(read(args[0])))
        elif cmd == "permsg" and len(args) == 4:
            print("%.3f" % permsg(int(args[0]), float(args[1]), int(args[2]), float(args[3])))
        elif cmd == "hot" and len(args) in (4, 5):
            top = int(args[4]) if len(args) == 5 else 12
            for v, k in hot(read(args[0]), int(args[1]), read(args[2]), int(args[3]), top):
                print("%10.1f  %s" % (v, k))
        elif cmd == "syscalls" and len(args) == 4:
            for v, k in syscalls(read(args[0]), int(args[1]), read(args[2]), int(args[3])):
                print("%10.4f  %s" % (v, k))
        elif cmd == "table" and len(args) == 1:
            print(table(read(args[0])))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except (OSError, ValueError, KeyError) as e:
        print(f"cost.py {cmd}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
