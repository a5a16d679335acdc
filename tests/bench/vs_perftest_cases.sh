#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# bench/vs-perftest.sh's cases by provider, without a device (--list): on
# iWARP (--provider siw) the rows iWARP lacks are left out (atomics, UD, the
# TCP-exchange setup rows, UCX) and the rest are rxe's; a provider it does not
# know is refused with exit 2, naming it.
VSP=$1
fails=0
check() { # check WHAT WANT GOT
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: want [$2], got [$3]"; fails=$((fails + 1)); fi
}
rxe=$(sh "$VSP" --list | awk '{ print $1 }')
siw=$(sh "$VSP" --provider siw --list | awk '{ print $1 }')
check "rxe has the atomics, UD, TCP setup and UCX rows" 9 \
	"$(echo "$rxe" | grep -cE '^(fetch_add_|ud_send_|setup_q|ucx_)')"
check "siw has none of them" 0 "$(echo "$siw" | grep -cE '^(fetch_add_|ud_send_|setup_q|ucx_)')"
check "siw keeps every other row of rxe" \
	"$(echo "$rxe" | grep -vE '^(fetch_add_|ud_send_|setup_q|ucx_)' | tr '\n' ' ')" "$(echo "$siw" | tr '\n' ' ')"
check "siw has the RDMA CM setup row" 1 "$(echo "$siw" | grep -cx cm_setup_q1)"
out=$(sh "$VSP" --provider ib --list 2>&1)
check "an unknown provider exits 2" 2 $?
check "and is named" 1 "$(echo "$out" | grep -c "'ib' is not rxe or siw")"
[ $fails -eq 0 ] && echo "all checks passed"
exit $fails
