#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Host unit test of bench/stats.py on fixed synthetic inputs (no device):
medians, the bootstrap interval, verdicts, convergence and the filtering of
failed runs. Usage: test_stats.py PATH/TO/bench/stats.py"""
import importlib.util
import os
import random
import subprocess
import sys
import tempfile

spec = importlib.util.spec_from_file_location("stats", sys.argv[1])
stats = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stats)

failures = 0
checks = 0


def check(cond, what, got):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL: %s (got %r)" % (what, got))


# Figures: only finite positive numbers count.
for text in ("inf", "nan", "-inf", "0", "0.000", "", "   ", "abc", "-1.5", "Infinity"):
    check(stats.figure(text) is None, "figure(%r) is a failed run" % text, stats.figure(text))
check(stats.figure("0.0573") == 0.0573, "figure('0.0573')", stats.figure("0.0573"))
check(stats.figure(" 12 \n") == 12.0, "figure(' 12 ')", stats.figure(" 12 \n"))

# Known medians and ratio.
a = [1.0, 3.0, 2.0, 5.0, 4.0]
b = [2.0, 2.0, 2.0, 2.0, 2.0]
r, lo, hi = stats.ratio_ci(a, b)
check(abs(r - 1.5) < 1e-12, "ratio of medians 3/2", r)
check(lo <= r <= hi, "interval holds the ratio", (lo, r, hi))

# Identical samples: the interval must contain 1.0; verdict level.
rnd = random.Random(7)
same = [rnd.uniform(0.02, 0.06) for _ in range(20)]
r, lo, hi = stats.ratio_ci(same, list(same))
check(r == 1.0 and lo <= 1.0 <= hi, "identical samples: 1.0 in the interval", (r, lo, hi))
check(stats.verdict("rate", lo, hi) == "level", "identical: level", stats.verdict("rate", lo, hi))

# Same distribution, independent noise: still level.
x = [rnd.gauss(100, 10) for _ in range(30)]
y = [rnd.gauss(100, 10) for _ in range(30)]
r, lo, hi = stats.ratio_ci(x, y)
check(lo <= 1.0 <= hi, "same distribution: 1.0 in the interval", (r, lo, hi))

# Clearly faster (rate 1.5x with noise): interval above 1.0, ahead for a
# rate, behind for a time.
fast = [rnd.gauss(150, 8) for _ in range(20)]
slow = [rnd.gauss(100, 8) for _ in range(20)]
r, lo, hi = stats.ratio_ci(fast, slow)
check(lo > 1.0, "clearly faster: interval above 1.0", (r, lo, hi))
check(stats.verdict("rate", lo, hi) == "ahead", "rate above 1: ahead", stats.verdict("rate", lo, hi))
check(stats.verdict("time", lo, hi) == "behind", "time above 1: behind", stats.verdict("time", lo, hi))
r2, lo2, hi2 = stats.ratio_ci(slow, fast)
check(hi2 < 1.0, "clearly slower: interval below 1.0", (r2, lo2, hi2))
check(stats.verdict("time", lo2, hi2) == "ahead", "time below 1: ahead", stats.verdict("time", lo2, hi2))

# Reproducible: the same inputs give the same interval.
check(stats.ratio_ci(x, y) == stats.ratio_ci(x, y), "fixed seed: same interval", None)

# Convergence: +-5% of the ratio.
check(stats.converged(1.0, 0.96, 1.04), "half-width 0.04: converged", None)
check(not stats.converged(1.0, 0.90, 1.10), "half-width 0.10: not converged", None)

# The raw file: failed runs (inf, nan, 0, missing) leave their pair out.
raw = """c1|rate|Mpps|1|rdmakit|2.0
c1|rate|Mpps|1|perftest|1.0
c1|rate|Mpps|2|rdmakit|inf
c1|rate|Mpps|2|perftest|1.0
c1|rate|Mpps|3|rdmakit|2.0
c1|rate|Mpps|3|perftest|nan
c1|rate|Mpps|4|rdmakit|2.0
c1|rate|Mpps|4|perftest|0
c1|rate|Mpps|5|rdmakit|
c1|rate|Mpps|5|perftest|1.0
c1|rate|Mpps|6|rdmakit|2.2
c1|rate|Mpps|6|perftest|1.1
c1|rate|Mpps|7|perftest|1.0
"""
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "raw")
    with open(path, "w") as f:
        f.write(raw)
    cases = stats.load(path)
    ra, rb, anchor = stats.pairs_of(cases["c1"]["runs"])
    check(ra == [2.0, 2.2] and rb == [1.0, 1.1], "only the valid pairs (reps 1 and 6)", (ra, rb))
    check(anchor == "perftest", "anchor name", anchor)
    s = stats.summarize(cases["c1"])
    check(s["n"] == 2 and s["failed"] == 4, "2 pairs, 4 failed runs", (s["n"], s["failed"]))
    check(not s["done"], "2 pairs < min reps: not converged", s["done"])
    # 8 tight pairs: converged; the report says so.
    with open(path, "a") as f:
        for rep in range(10, 18):
            f.write("c2|time|us|%d|rdmakit|%.3f\nc2|time|us|%d|perftest|%.3f\n"
                    % (rep, 10 + 0.01 * rep, rep, 20 - 0.01 * rep))
    out = subprocess.run([sys.executable, sys.argv[1], "pending", path],
                         capture_output=True, text=True)
    check(out.stdout.split() == ["c1"], "pending: c1 only", out.stdout)
    out = subprocess.run([sys.executable, sys.argv[1], "report", path, "--budget-out"],
                         capture_output=True, text=True)
    lines = out.stdout.splitlines()
    check(out.returncode == 0 and len(lines) == 3, "report: header and two rows", out.stdout)
    c2 = [l for l in lines if l.startswith("c2")]
    check(c2 and "ahead" in c2[0] and "converged" in c2[0], "c2 ahead, converged", c2)
    c1 = [l for l in lines if l.startswith("c1")]
    check(c1 and "budget" in c1[0] and "4 failed" in c1[0], "c1 budget, 4 failed", c1)
    # Two pairs that agree exactly: a zero-width interval, still not
    # converged (fewer than 5 pairs), even with --min-reps 2.
    with open(path, "a") as f:
        f.write("c3|rate|Mpps|1|rdmakit|2.0\nc3|rate|Mpps|1|perftest|1.0\n"
                "c3|rate|Mpps|2|rdmakit|4.0\nc3|rate|Mpps|2|perftest|2.0\n")
    out = subprocess.run([sys.executable, sys.argv[1], "pending", path, "--min-reps", "2"],
                         capture_output=True, text=True)
    check(out.stdout.split() == ["c1", "c3"], "pending with --min-reps 2: c1 and c3", out.stdout)
    out = subprocess.run([sys.executable, sys.argv[1], "report", path, "--min-reps", "x"],
                         capture_output=True, text=True)
    check(out.returncode != 0 and "--min-reps" in out.stderr, "bad --min-reps refused", out.stderr)

print("%d passed, %d failed" % (checks - failures, failures))
sys.exit(1 if failures else 0)
