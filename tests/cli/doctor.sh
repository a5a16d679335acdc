#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit doctor on a host whose kernel has no RDMA (issue 37's "no RDMA
# module loaded", for real): the kernel-modules check fails naming ib_core,
# ib_uverbs and rdma_ucm and the modprobe, what follows from it is skipped
# with the reason, exit 1; --json is one document valid against both
# schemas. doctor HOST here: the path's checks skipped for the missing
# device, TCP to a port nothing listens on named with its fix; usage errors.
# Runs on the host (label unit). Where the kernel has RDMA (ib_core
# loaded) the case cannot be made here: exit 77, counted as skipped.
# Usage: doctor.sh RDMAKIT SCHEMA_DIR
RDMAKIT=$1
SCHEMAS=$2
. "$(dirname "$0")/../rdma/lib.sh"

if [ -e /sys/module/ib_core ] || grep -q '^ib_core ' /proc/modules 2>/dev/null; then
	echo "not run: this kernel has RDMA (ib_core is loaded); the no-RDMA case needs one without"
	exit 77
fi

run 1 "$RDMAKIT" doctor
has "$out" "FAIL kernel RDMA modules: not loaded: ib_core ib_uverbs rdma_ucm"
has "$out" "modprobe -a ib_core ib_uverbs rdma_ucm"
has "$out" "SKIP /dev/infiniband access: no /dev/infiniband/uverbs*: ib_uverbs is not loaded"
has "$out" "SKIP RDMA devices: no RDMA device can exist: ib_core is not loaded"
has "$out" "locked-memory limit: "
has "$out" "huge page pool: "
has "$out" "firewall"
has "$out" "1 failed"
has "$err" "rdmakit doctor: 1 check failed, the first: kernel RDMA modules"
# The first line is the modules' and the order holds.
first=$(head -1 "$out")
case $first in
"FAIL kernel RDMA modules: "*) echo "ok: the modules come first" ;;
*)
	echo "FAIL: the first line is not the modules' check: $first"
	fails=$((fails + 1))
	;;
esac

run 1 "$RDMAKIT" doctor --json
json "
import jsonschema
for name in ('rdmakit-result', 'rdmakit-doctor'):
    jsonschema.Draft202012Validator(json.load(open('$SCHEMAS/%s.schema.json' % name))).validate(d)
c = d['checks'][0]
assert c['id'] == 'kernel_modules' and c['status'] == 'FAIL', c
for m in ('ib_core', 'ib_uverbs', 'rdma_ucm'):
    assert m in c['seen'], c
assert 'modprobe -a ib_core ib_uverbs rdma_ucm' in c['fix'], c
assert c['errno'] == 'ENOSYS', c
assert d['result'] == 'failed' and d['verdict'] == 'FAIL', d
assert d['errno'] == 'ENOSYS' and 'kernel RDMA modules' in d['error'], d
assert d['summary']['fail'] == 1, d['summary']
assert [x['id'] for x in d['checks']][:3] == ['kernel_modules', 'dev_files', 'devices'], d
"
# -d names a device: the same here, one document.
run 1 "$RDMAKIT" doctor -d nosuchdev0 -j
json "assert d['device'] == 'nosuchdev0' and d['result'] == 'failed', d"

run 0 "$RDMAKIT" help doctor
has "$out" "rdmakit doctor [-d DEV] [--json] [HOST]"
has "$out" "rdmakit doctor --server [-d DEV] [-p PORT] [--wait SEC]"
run 2 "$RDMAKIT" doctor somehost otherhost
has "$err" "unexpected argument 'otherhost' (one HOST at most)"
run 2 "$RDMAKIT" doctor --server somehost
has "$err" "unexpected argument 'somehost' (the server takes no HOST)"
run 2 "$RDMAKIT" doctor -p 18515
has "$err" "-p/--port is for the path to a HOST (or --server)"
run 2 "$RDMAKIT" doctor --wait 3 somehost
has "$err" "--wait is the server's (with --server)"
run 2 "$RDMAKIT" doctor -i 1

# doctor HOST on this host without a device: the local checks fail as above;
# TCP to a port nothing listens on is named with the server to start there;
# the RDMA checks of the path are skipped for the missing device. Exit 1.
run 1 "$RDMAKIT" doctor 127.0.0.1 -p 9
has "$out" "FAIL TCP to 127.0.0.1 port 9: nothing listens on 127.0.0.1:9 (connection refused); fix: run \`rdmakit doctor --server\` there with -p the same port"
has "$out" "SKIP RDMA CM route: no RDMA device here (see the checks above)"
has "$out" "SKIP SEND: no RDMA device here"
has "$out" "SKIP bandwidth and latency: no RDMA device here"
has "$out" "verdict: FAIL: 2 checks failed, the first: kernel RDMA modules (its fix above)"
# A name that does not resolve: named, exit 1.
run 1 "$RDMAKIT" doctor nosuchhost.invalid -t 2
has "$out" "FAIL TCP to nosuchhost.invalid port 18515: the name nosuchhost.invalid does not resolve"
run 1 "$RDMAKIT" doctor 127.0.0.1 -p 9 --json
json "
import jsonschema
for name in ('rdmakit-result', 'rdmakit-doctor'):
    jsonschema.Draft202012Validator(json.load(open('$SCHEMAS/%s.schema.json' % name))).validate(d)
assert d['host'] == '127.0.0.1' and d['port'] == 9, d
peer = {c['id']: c for c in d['checks'] if c['id'].startswith('peer_')}
assert peer['peer_tcp']['status'] == 'FAIL' and peer['peer_tcp']['errno'] == 'ECONNREFUSED', peer
assert 'rdmakit doctor --server' in peer['peer_tcp']['fix'], peer
assert all(peer[i]['status'] == 'SKIP' for i in peer if i != 'peer_tcp'), peer
assert len(peer) == 9, sorted(peer)
assert d['verdict_line'].startswith('FAIL: '), d
"
# The server needs a device: it says so and exits 1, at once.
run 1 "$RDMAKIT" doctor --server --wait 1
has "$err" "cannot list RDMA devices"
finish
