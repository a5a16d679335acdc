#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Every command's failures with --json that need no device (issue 35): each
prints exactly one JSON document on stdout, valid against
docs/json/rdmakit-result.schema.json, with "result": "failed", "error" the
text of an error line stderr showed, and "errno" a real errno's name; the exit
status is the failure's. A device named nosuchdev0 fails the same way on a
host with RDMA devices and on one without. Runs on the host (label unit).

Usage: json_failures.py RDMAKIT SCHEMA"""
import errno
import json
import os
import re
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("FAIL: python3 has no jsonschema module (Debian: python3-jsonschema, in "
             "scripts/deps.sh's RDMAKIT_BUILD_PACKAGES)")

RDMAKIT, SCHEMA = sys.argv[1], sys.argv[2]
NODEV = ["-d", "nosuchdev0"]
# An address nothing listens on and this host does not have (TEST-NET-1).
FAR = "192.0.2.1"

# (arguments, exit statuses allowed, errno required or None). Exit 2: a
# usage error (errno EINVAL); mesh's usage errors exit 2 too, its setup errors
# 3, or 1 when rdmakit-mesh is not built here (rdmakit mesh cannot run it).
# (bench and pingpong take -t as perftest and ibv_rc_pingpong do: refused.)
CASES = [
    (["devices", "--json"] + NODEV, {1}, None),
    (["devices", "-j"] + NODEV, {1}, None),
    (["counters", "--json"] + NODEV, {1}, None),
    (["counters", "--watch", "1", "-n", "2", "--json"] + NODEV, {1}, None),
    (["loopback", "--json"] + NODEV, {1}, None),
    (["qp-states", "--json"] + NODEV, {1}, None),
    (["doctor", "--json"] + NODEV, {1}, None),
    (["bench", "127.0.0.1", "--timeout", "1", "--json"] + NODEV, {1}, None),
    (["bench", "127.0.0.1", "--timeout", "1", "--json", "--duration", "2", "--interval", "1"]
     + NODEV,
     {1}, None),
    (["bench", "--server", "-w", "1", "--json"] + NODEV, {1}, None),
    (["bench", "--server", "--persist", "--json"] + NODEV, {1}, None),
    (["rc", "127.0.0.1", "-t", "1", "--json"] + NODEV, {1}, None),
    (["rc", "--server", "-w", "1", "--json"] + NODEV, {1}, None),
    (["rc", "127.0.0.1", "--cm", "-t", "1", "--json"] + NODEV, {1}, None),
    (["ping", "127.0.0.1", "-t", "1", "--json"] + NODEV, {1}, None),
    (["ping", "--proto", "pingpong", "127.0.0.1", "--timeout", "1", "--json"] + NODEV, {1},
     None),
    (["ping", "--proto", "rping", "-c", "-a", "127.0.0.1", "-C", "1", "--json"], {1}, None),
    (["ud", "127.0.0.1", "-t", "1", "--json"] + NODEV, {1}, None),
    (["share", "fork", "--json"] + NODEV, {1}, None),
    (["share", "shm", "--json"] + NODEV, {1}, None),
    (["share", "import", "--json"] + NODEV, {1}, None),
    (["memserver", "--bind", FAR, "--json"], {1}, None),
    (["blk", "attach", FAR, "-s", "1M", "--json"], {1}, None),
    (["blk", "detach", "rkblk999999", "--json"], {1}, None),
    (["mesh", "--json", "--bogus"], {1, 2}, None),
    # usage errors: --json before the bad option, after it, or a check after the parse
    (["rc", "--json", "--bogus"], {2}, "EINVAL"),
    (["loopback", "--size", "0", "--json"], {2}, "EINVAL"),
    (["loopback", "--size", "0", "-j"], {2}, "EINVAL"),
    (["rc", "--server", "1.2.3.4", "--json"], {2}, "EINVAL"),
    (["bench", "--json", "--csv", "127.0.0.1"], {2}, "EINVAL"),
    (["counters", "-n", "3", "--json"], {2}, "EINVAL"),
    (["doctor", "--json", "somehost", "otherhost"], {2}, "EINVAL"),
    (["doctor", "--json", "--server", "somehost"], {2}, "EINVAL"),
    (["share", "--json"], {2}, "EINVAL"),
    (["memserver", "--json", "extra"], {2}, "EINVAL"),
    (["blk", "list", "--json", "extra"], {2}, "EINVAL"),
    (["blk", "detach", "--json"], {2}, "EINVAL"),
    (["ud", "--server", "--clients", "0", "--json"], {2}, "EINVAL"),
]

# rdmakit-mesh alone: MPI_Init, then "needs at least 2 ranks". Not under ASan
# (scripts/test.sh's RDMAKIT_SANITIZED): Open MPI's own allocations would be
# reported as leaks, as for mesh_smoke, which that stage leaves out.
if os.environ.get("RDMAKIT_SANITIZED") == "1":
    print("not run under ASan: rdmakit mesh --json (MPI_Init's allocations)")
else:
    CASES.append((["mesh", "--json"], {1, 3}, None))

# Documents of a run that worked, on any host: the same schema.
OK_CASES = [
    (["blk", "list", "--json"], None),
]

with open(SCHEMA) as f:
    validator = jsonschema.Draft202012Validator(json.load(f))
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
env.pop("RDMAKIT_LOG", None)
fails = 0


def fail(cmd, why, p=None):
    global fails
    fails += 1
    print("FAIL: rdmakit %s: %s" % (" ".join(cmd), why))
    if p is not None:
        for name, text in (("stdout", p.stdout), ("stderr", p.stderr)):
            for line in text.splitlines()[-12:]:
                print("  %s| %s" % (name, line))


def run(cmd):
    try:
        return subprocess.run([RDMAKIT] + cmd, capture_output=True, text=True, timeout=60,
                              env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None


def outcome(cmd, p):
    """The one document on stdout (the last line's after a stream's records), or None."""
    text = p.stdout.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    lines = text.splitlines()
    try:
        docs = [json.loads(line) for line in lines]
    except ValueError:
        fail(cmd, "stdout is not one JSON document", p)
        return None
    if not docs:
        fail(cmd, "nothing on stdout", p)
        return None
    if any(d.get("result") for d in docs[:-1]):
        fail(cmd, "a record before the last line has a result: more than one outcome", p)
    return docs[-1]


def said_on_stderr(error, stderr):
    """error is the text of an error line: "rdmakit: error: TEXT", "rdmakit CMD: TEXT"."""
    for line in stderr.splitlines():
        m = re.match(r"^rdmakit(?:: error| [a-z-]+(?: [a-z]+)?|-mesh): (.*)$", line)
        if m and m.group(1) == error:
            return True
    return False


for cmd, codes, want_errno in CASES:
    before = fails
    p = run(cmd)
    if p is None:
        fail(cmd, "did not end within 60 s")
        continue
    if p.returncode not in codes:
        fail(cmd, "exit %d, expected %s" % (p.returncode, " or ".join(map(str, sorted(codes)))),
             p)
    d = outcome(cmd, p)
    if d is None:
        continue
    problems = [e.message for e in validator.iter_errors(d)]
    if problems:
        fail(cmd, "not valid against the schema: %s" % "; ".join(problems), p)
        continue
    if d["result"] != "failed":
        fail(cmd, "result %r, expected 'failed'" % d["result"], p)
        continue
    if not said_on_stderr(d["error"], p.stderr):
        fail(cmd, "error %r is no error line of stderr" % d["error"], p)
    if not hasattr(errno, d["errno"]):
        fail(cmd, "errno %r is no errno name" % d["errno"], p)
    if want_errno and d["errno"] != want_errno:
        fail(cmd, "errno %r, expected %r" % (d["errno"], want_errno), p)
    if fails == before:
        print("ok: rdmakit %s: exit %d, %s: %s" % (" ".join(cmd), p.returncode, d["errno"],
                                                     d["error"][:70]))

for cmd, _ in OK_CASES:
    p = run(cmd)
    if p is None or p.returncode != 0:
        fail(cmd, "did not work", p)
        continue
    d = outcome(cmd, p)
    if d is None:
        continue
    problems = [e.message for e in validator.iter_errors(d)]
    if problems or d["result"] != "ok":
        fail(cmd, "not an 'ok' document valid against the schema: %s" % "; ".join(problems), p)
    else:
        print("ok: rdmakit %s: result ok" % " ".join(cmd))

print("%d failure%s" % (fails, "" if fails == 1 else "s"))
sys.exit(1 if fails else 0)
