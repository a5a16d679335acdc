#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Statistics for bench/vs-perftest.sh: paired repetitions, the ratio of the
medians with a bootstrap 95% confidence interval, and a verdict per case.

The raw file has one line per run, written by the script:
    CASE|KIND|UNIT|REP|TOOL|FIGURE
KIND is rate (higher is better) or time (latency, setup time: lower is
better); TOOL is rdmakit or the anchor (perftest, ucx_perftest); FIGURE is what
the run printed, as it printed it. A run whose figure is missing, not a
number, zero, negative, inf or nan failed: it is left out, and so is its
partner of the same repetition (the pairs are what is resampled).

    stats.py pending RAW [--min-reps N] [--target F]
        the cases whose interval is still wider than +-F (default 0.05) of
        the ratio, or that have fewer than N valid pairs (default 5, and 5 at
        least whatever N says), one a line;
        not a case that gave no valid pair in three repetitions
    stats.py plot RAW OUTDIR
        bandwidth and latency against message size, both tools (gnuplot):
        OUTDIR/bw.png and OUTDIR/lat.png, with their .dat and .gp files
    stats.py report RAW [--budget-out] [--min-reps N] [--target F] [--failed FILE]
        the table: case, rdmakit median, anchor median, ratio, 95% CI,
        verdict, reps, status (converged, or budget when --budget-out says
        the time budget ended the repetitions first)

Only the standard library: Debian's python3 runs it, in the guest too.
"""
import math
import random
import statistics
import sys

RESAMPLES = 2000
SEED = 13
RK = "rdmakit"
# Fewer pairs than this never count as converged, whatever --min-reps says:
# two or three pairs can give a bootstrap interval of zero width.
MIN_PAIRS = 5


def figure(text):
    """The figure a run printed as a float, or None when the run failed:
    nothing printed, not a number, zero or negative, inf, nan."""
    try:
        v = float(str(text).strip())
    except ValueError:
        return None
    if not math.isfinite(v) or v <= 0:
        return None
    return v


def median(xs):
    return statistics.median(xs)


def pairs_of(runs):
    """runs: {rep: {tool: figure text}} -> (rdmakit list, anchor list, anchor
    name), only the repetitions where both tools gave a valid figure."""
    a, b, anchor = [], [], None
    for rep in sorted(runs):
        tools = runs[rep]
        other = [t for t in tools if t != RK]
        if other:
            anchor = anchor or other[0]
        if RK not in tools or not other:
            continue
        x, y = figure(tools[RK]), figure(tools[other[0]])
        if x is not None and y is not None:
            a.append(x)
            b.append(y)
    return a, b, anchor


def ratio_ci(a, b, resamples=RESAMPLES, seed=SEED):
    """Ratio of the medians median(a)/median(b) of paired samples and its
    95% percentile bootstrap interval (the pairs resampled together)."""
    if not a or len(a) != len(b):
        raise ValueError("need paired samples of the same, non-zero length")
    ratio = median(a) / median(b)
    rnd = random.Random(seed)
    n = len(a)
    rs = []
    for _ in range(resamples):
        idx = [rnd.randrange(n) for _ in range(n)]
        rs.append(median([a[i] for i in idx]) / median([b[i] for i in idx]))
    rs.sort()
    lo = rs[int(math.floor(0.025 * (resamples - 1)))]
    hi = rs[int(math.ceil(0.975 * (resamples - 1)))]
    return ratio, lo, hi


def verdict(kind, lo, hi):
    """ahead, level or behind for rdmakit: rates ahead when the interval is
    entirely above 1.0, times (latency, setup) when entirely below."""
    if lo <= 1.0 <= hi:
        return "level"
    above = lo > 1.0
    if kind == "time":
        return "behind" if above else "ahead"
    return "ahead" if above else "behind"


def converged(ratio, lo, hi, target=0.05):
    return (hi - lo) / 2 / ratio <= target


def load(path):
    """The raw file -> ordered {case: {"kind", "unit", "runs": {rep: {tool: text}}}}."""
    cases = {}
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("|")
            if len(p) < 5:
                continue
            name, kind, unit, rep, tool = p[:5]
            text = p[5] if len(p) > 5 else ""
            c = cases.setdefault(name, {"kind": kind, "unit": unit, "runs": {}})
            c["runs"].setdefault(int(rep), {})[tool] = text
    return cases


def summarize(case, min_reps=5, target=0.05, quick=False):
    """One case -> dict with medians, ratio, interval, verdict, reps, failed
    counts and whether it converged."""
    a, b, anchor = pairs_of(case["runs"])
    failed = sum(1 for r in case["runs"].values() for t in r.values() if figure(t) is None)
    s = {"n": len(a), "failed": failed, "anchor": anchor or "-", "kind": case["kind"],
         "unit": case["unit"], "done": False}
    if not a:
        return s
    s["a"], s["b"] = median(a), median(b)
    if len(a) < 2 or (quick and len(a) < max(min_reps, MIN_PAIRS)):
        return s
    s["ratio"], s["lo"], s["hi"] = ratio_ci(a, b)
    s["verdict"] = verdict(case["kind"], s["lo"], s["hi"])
    s["done"] = len(a) >= max(min_reps, MIN_PAIRS) and converged(s["ratio"], s["lo"], s["hi"], target)
    return s


def fmt(v):
    if v >= 100:
        return "%.1f" % v
    if v >= 1:
        return "%.3f" % v
    return "%.4g" % v


def table(cases, budget_out, min_reps=5, target=0.05):
    rows = [("case", "rdmakit", "perftest", "ratio", "95% CI", "verdict", "reps", "status")]
    for name, c in cases.items():
        s = summarize(c, min_reps, target)
        unit = " " + s["unit"]
        ra = fmt(s["a"]) + unit if "a" in s else "-"
        rb = fmt(s["b"]) + unit if "b" in s else "-"
        if s["anchor"] not in ("perftest", "-"):
            rb += " (" + s["anchor"] + ")"
        if "ratio" in s:
            ratio, ci, verd = "%.3f" % s["ratio"], "[%.3f, %.3f]" % (s["lo"], s["hi"]), s["verdict"]
        else:
            ratio, ci, verd = "-", "-", "n/a"
        if s["done"]:
            status = "converged"
        elif s["n"] < 2:
            status = "no data" if s["n"] == 0 else "too few"
        else:
            status = "budget" if budget_out else "open"
        reps = str(s["n"]) + ("" if not s["failed"] else " (%d failed)" % s["failed"])
        rows.append((name, ra, rb, ratio, ci, verd, reps, status))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(r[i].ljust(w[i]) for i in range(len(r))).rstrip() for r in rows)


def plot(cases, outdir):
    """Bandwidth (MB/s = 10^6 bytes/s, from the message rate x size) and
    latency against message size, both tools, from the cases named
    TEST_bw_SIZE and TEST_lat_SIZE: data files and a gnuplot script in
    OUTDIR, then gnuplot. Returns the images written."""
    import os
    import re
    import subprocess
    series = {}
    for name, c in cases.items():
        m = re.fullmatch(r"(send|write|read)_(bw|lat)_(\d+)", name)
        if not m:
            continue
        a, b, _ = pairs_of(c["runs"])
        if not a:
            continue
        size = int(m.group(3))
        k = 1.0 if m.group(2) == "lat" else size  # Mpps x bytes = MB/s
        series.setdefault((m.group(2), m.group(1)), []).append((size, median(a) * k, median(b) * k))
    images = []
    for mode, ylabel in (("bw", "bandwidth, MB/s (10^6 bytes/s)"), ("lat", "latency, us (median)")):
        tests = sorted(t for (m, t) in series if m == mode)
        if not tests:
            continue
        plots = []
        for t in tests:
            dat = os.path.join(outdir, "%s-%s.dat" % (mode, t))
            with open(dat, "w") as f:
                f.write("# size rdmakit perftest\n")
                for row in sorted(series[(mode, t)]):
                    f.write("%d %.6g %.6g\n" % row)
            plots.append("'%s' using 1:2 with linespoints title 'rdmakit %s'" % (dat, t))
            plots.append("'%s' using 1:3 with linespoints dashtype 2 title 'perftest %s'" % (dat, t))
        png = os.path.join(outdir, "%s.png" % mode)
        gp = os.path.join(outdir, "%s.gp" % mode)
        with open(gp, "w") as f:
            f.write("set terminal pngcairo size 900,560\nset output '%s'\n" % png)
            f.write("set logscale x 2\nset logscale y 10\nset grid\nset key left top\n")
            f.write("set xlabel 'message size, bytes'\nset ylabel '%s'\n" % ylabel)
            f.write("set title 'rdmakit bench and perftest: %s against message size'\n"
                    % ("bandwidth" if mode == "bw" else "latency"))
            f.write("plot " + ", \\\n     ".join(plots) + "\n")
        r = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
        if r.returncode != 0:
            print("stats.py: gnuplot %s: %s" % (gp, r.stderr.strip()), file=sys.stderr)
            continue
        images.append(png)
    return images


def parse_opts(argv):
    o = {"min_reps": 5, "target": 0.05, "budget_out": False}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--budget-out":
            o["budget_out"] = True
        elif a in ("--min-reps", "--target") and i + 1 < len(argv):
            try:
                o[a[2:].replace("-", "_")] = int(argv[i + 1]) if a == "--min-reps" else float(argv[i + 1])
            except ValueError:
                sys.exit("stats.py: %s: '%s' is not a number" % (a, argv[i + 1]))
            i += 1
        else:
            sys.exit("stats.py: unknown option %s" % a)
        i += 1
    return o


def main(argv):
    if len(argv) < 3 or argv[1] not in ("pending", "report", "plot"):
        sys.exit("usage: stats.py pending|report RAW [--min-reps N] [--target F] [--budget-out]\n"
                 "       stats.py plot RAW OUTDIR")
    cases = load(argv[2])
    if argv[1] == "plot":
        if len(argv) != 4:
            sys.exit("usage: stats.py plot RAW OUTDIR")
        for img in plot(cases, argv[3]):
            print(img)
        return 0
    o = parse_opts(argv[3:])
    if argv[1] == "pending":
        for name, c in cases.items():
            s = summarize(c, o["min_reps"], o["target"], quick=True)
            # Three repetitions without a single valid pair: no more tries.
            if not s["done"] and not (s["n"] == 0 and len(c["runs"]) >= 3):
                print(name)
    else:
        print(table(cases, o["budget_out"], o["min_reps"], o["target"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
