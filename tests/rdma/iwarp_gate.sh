#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# iwarp_gate.sh WHAT CMD [ARGS...]: on an iWARP device (lib.sh's iwarp_dev,
# e.g. siw0) exit 77 at once, printing "SKIP: iWARP (DEV): WHAT", WHAT being
# what the test needs that iWARP lacks; elsewhere run CMD. CMake puts it
# before every rdma test declared IWARP_SKIP (cmake/RdmakitHelpers.cmake).
. "$(dirname "$0")/lib.sh"
if [ -n "$IWARP" ]; then
	echo "SKIP: iWARP ($IWARP): $1"
	exit 77
fi
shift
# exec runs no EXIT trap: lib.sh's temporary files go first.
rm -f "$out" "$err"
trap - EXIT
exec "$@"
