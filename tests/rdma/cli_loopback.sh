#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit loopback, as a user runs it: sizes, SGEs, events, --json, bad input.
RDMAKIT=$1
. "$(dirname "$0")/lib.sh"

run 0 "$RDMAKIT" loopback
cat "$out"
for op in SEND WRITE READ; do has "$out" "$op"; done
has "$out" "every byte matches"
has "$out" "checked byte for byte: OK"

# 1 byte, more than the MTU, 1 MiB; several SGEs; event-driven completions.
run 0 "$RDMAKIT" loopback -s 1 -n 3
run 0 "$RDMAKIT" loopback -s 4097 -n 2 --sge 3
run 0 "$RDMAKIT" loopback -s 1M -n 2 --sge 16 --events
has "$out" "event-driven"
run 0 "$RDMAKIT" loopback --size 64k --count 5 --json
json '
assert d["result"] == "ok", d["result"]
assert d["size"] == 65536 and d["count"] == 5, (d["size"], d["count"])
assert [s["op"] for s in d["steps"]] == ["SEND", "WRITE", "READ"], d["steps"]
for s in d["steps"]:
    assert s["ok"] and s["checked"] == 5, s
assert d["qp_a"] != d["qp_b"]
'

# Bad input: named, refused, exit 2 (usage) or 1 (the run cannot start).
run 1 "$RDMAKIT" loopback -g 200
has "$err" "no GID at index 200"
run 1 "$RDMAKIT" loopback -d nosuchdev0
has "$err" "no RDMA device named 'nosuchdev0'"
run 1 "$RDMAKIT" loopback -i 2
has "$err" "no port 2"
# A run that cannot start prints its failure's document with --json: what
# stderr said and the errno (docs/json.md).
run 1 "$RDMAKIT" loopback -d nosuchdev0 --json
has "$err" "no RDMA device named 'nosuchdev0'"
json "
assert d['result'] == 'failed' and d['errno'] == 'ENODEV', d
assert d['error'].startswith(\"no RDMA device named 'nosuchdev0'\"), d
"
run 0 "$RDMAKIT" loopback --help
has "$out" "(default: 4096)"
finish
