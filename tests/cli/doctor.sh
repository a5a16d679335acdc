#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit doctor on a host whose kernel has no RDMA (issue 37's "no RDMA
# module loaded", for real): the kernel-modules check fails naming ib_core,
# ib_uverbs and rdma_ucm and the modprobe, what follows from it is skipped
# with the reason, exit 1; --json is one document valid against both
# schemas. Runs on the host (label unit). Where the kernel has RDMA (ib_core
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
has "$out" "rdmakit doctor [-d DEV] [--json]"
run 2 "$RDMAKIT" doctor somehost
has "$err" "unexpected argument 'somehost'"
run 2 "$RDMAKIT" doctor -i 1
finish
