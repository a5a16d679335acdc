#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdmakit bench against perftest (and ucx_perftest as a second anchor) on the
# same device, in one run. For each case rdmakit and the anchor run in pairs,
# alternating which goes first (odd repetitions rdmakit first, even ones the
# anchor first); per case: the medians, the ratio rdmakit/anchor of the
# medians with a 95% bootstrap interval (the pairs resampled, 2000 times,
# fixed seed: bench/stats.py) and a verdict: ahead (interval entirely above
# 1.0 for rates, below 1.0 for times), level (1.0 inside) or behind.
# Repetitions go on, for the cases not yet decided, until every interval is
# within +-5% of its ratio or the time budget is spent; the status column
# says which (converged or budget).
#
# Usage: bench/vs-perftest.sh [--native] [--budget MIN] [--reps N] [--iters N]
#                             [--lat-iters N] [--setup-iters N] [--bw-sizes LIST]
#                             [--lat-sizes LIST] [--target F] [--cases REGEX]
#                             [--list] [--out DIR] [--no-ucx] [--device DEV]
#                             [--gid IDX] [--ip ADDR] [--build DIR] [--provider rxe|siw]
#   default        everything inside ONE Soft-RoCE guest boot (scripts/softroce),
#                  rxe0, GID index 1 (RoCE v2, 198.18.0.1)
#   --provider P   the guest's provider: rxe (default) or siw (Soft-iWARP's siw0 on
#                  198.18.0.1). On an iWARP device (siw, or --native on one) every
#                  run connects through RDMA CM (bench --cm | perftest -R), and the
#                  rows iWARP does not have are left out, by name: atomics, UD, the
#                  TCP-exchange setup rows, UCX (its verbs transports need IB or RoCE)
#   --native       on this host's RDMA device (first of ibv_devices unless --device)
#   --budget MIN   time budget of the repetitions (default 60); the first two
#                  repetitions of every case always run
#   --reps N       repetitions before a case may count as converged (default 5;
#                  5 at least count: fewer pairs can give an interval of zero width)
#   --target F     converged: interval half-width / ratio <= F (default 0.05)
#   --iters N      bandwidth iterations, every size (default by size: 20000 up to
#                  64 B, 5000 up to 4 KiB, 2000 above, so that a run lasts about a
#                  second on rxe; per QP: N / QPs, 100 at least; on iWARP a tenth:
#                  siw over TCP in the guest moves about 1,500 small messages a second)
#   --lat-iters N  latency iterations (default 5000; on iWARP 500: a round trip
#                  of siw in the guest takes about 4 ms)
#   --setup-iters N  iterations per QP of the setup rows' one round (default 20)
#   --bw-sizes L   sizes of the send/write/read bandwidth rows (default 64,4096,65536)
#   --lat-sizes L  sizes of the send/write/read latency rows (default 2,64,4096)
#   --cases REGEX  only the cases whose name matches (grep -E), e.g. 'lat|setup'
#   --list         print the names of the cases (with kind and unit) and exit
#   --out DIR      results directory (default bench/results/vs-perftest-DATE-HHMM)
#   --no-ucx       leave out the ucx_perftest rows
#
# Cases (rdmakit | anchor; the same size, iterations and QP count for both):
#   TEST_bw_SIZE        bench --op TEST -s SIZE | ib_TEST_bw -s SIZE (message rate, Mpps)
#   TEST_lat_SIZE       bench --mode lat | ib_TEST_lat (median; perftest's t_typical, us)
#   msgrate_64_q2       --qps 2 --threads 2 | ib_write_bw -q 2 (write_bw_64 is the 1-QP row)
#   write_bw_SIZE_qN    --qps N | ib_write_bw -q N, SIZE 64 and 65536, N 8 and 64
#   write_bibw_65536    --bidir | ib_write_bw -b (both directions summed)
#   fetch_add_bw_8      --op fetch-add | ib_atomic_bw -A FETCH_AND_ADD
#   fetch_add_lat_8     --op fetch-add --mode lat | ib_atomic_lat -A FETCH_AND_ADD
#   ud_send_bw_64       --transport ud --op send | ib_send_bw -c UD
#   setup_qN            N = 1, 16, 128: connection setup time (ms), TCP exchange
#   cm_setup_q1         the same with RDMA CM: --cm | -R
#   ucx_write_bw_SIZE   bench --op write | ucx_perftest -t ucp_put_bw (UCX_TLS=rc_verbs,ud_verbs
#                       on DEV; the GID index of the others, else 0: on rxe UCX 1.13 runs
#                       only with index 0, the fe80:: RoCE v2 GID; the report says so)
#   ucx_write_lat_2     bench --mode lat --op write | ucx_perftest -t ucp_put_lat
# Setup time: neither tool prints one, so it is the client process's wall
# time (started once the server listens: its TCP port open, or 1 s after it
# started for RDMA CM) less the transfer time the tool itself reports for
# its one small round (-s 64, --setup-iters per QP): process start, device
# open, connection, N QPs created and connected, teardown.
# Runs that print no figure, zero, inf or nan are listed as failed with the
# last lines of their output and left out (with their pair).
# Output: the table (case, rdmakit median, perftest median, ratio, 95% CI,
# verdict, reps, status) on stdout and in DIR/table.txt; DIR/raw.txt every
# run's figure; DIR/failed.txt the failed runs; DIR/bw.png and DIR/lat.png
# against message size (gnuplot).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
native=0 inner=0 reps=5 budget=60 target=0.05 iters=auto lat_iters=auto setup_iters=20
bw_sizes=64,4096,65536 lat_sizes=2,64,4096 dev="" gid="" ip="" build="" cases="" out=""
ucx=1 list=0 provider=rxe iwarp=0
while [ $# -gt 0 ]; do
	case $1 in
	--native) native=1 ;;
	--inner) inner=1 ;;
	--list) list=1 ;;
	--no-ucx) ucx=0 ;;
	--budget | --reps | --iters | --lat-iters | --setup-iters | --bw-sizes | --lat-sizes | \
		--target | --device | --gid | --ip | --build | --cases | --out | --provider)
		[ $# -ge 2 ] || { echo "vs-perftest.sh: $1 needs a value" >&2; exit 2; }
		v=$2
		case $1 in
		--budget) budget=$v ;; --reps) reps=$v ;; --iters) iters=$v ;;
		--lat-iters) lat_iters=$v ;; --setup-iters) setup_iters=$v ;;
		--bw-sizes) bw_sizes=$v ;; --lat-sizes) lat_sizes=$v ;; --target) target=$v ;;
		--device) dev=$v ;; --gid) gid=$v ;; --ip) ip=$v ;; --build) build=$v ;;
		--cases) cases=$v ;; --out) out=$v ;; --provider) provider=$v ;;
		esac
		shift ;;
	-h | --help) sed -n '2,71p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "vs-perftest.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case $provider in
rxe) ;;
siw) iwarp=1 ;;
*) echo "vs-perftest.sh: --provider: '$provider' is not rxe or siw" >&2; exit 2 ;;
esac
# Natively (and in the guest, where the outer script passes --provider) the
# device itself says whether it is iWARP.
if [ "$native" = 1 ] || [ "$inner" = 1 ]; then
	_d=$dev
	[ -n "$_d" ] || _d=$(ibv_devices 2>/dev/null | awk 'NR > 2 { print $1; exit }')
	[ -n "$_d" ] && ibv_devinfo -d "$_d" 2>/dev/null | grep -q 'transport:.*iWARP' && iwarp=1
fi
[ "$iters" = auto ] || case $iters in
	'' | *[!0-9]* | 0) echo "vs-perftest.sh: --iters: '$iters' is not a positive count" >&2; exit 2 ;;
	esac
if [ "$lat_iters" = auto ]; then
	lat_iters=5000
	[ "$iwarp" = 1 ] && lat_iters=500
fi
for o in "reps $reps" "lat-iters $lat_iters" "setup-iters $setup_iters" "budget $budget"; do
	case ${o#* } in
	'' | *[!0-9]* | 0) echo "vs-perftest.sh: --${o%% *}: '${o#* }' is not a positive count" >&2; exit 2 ;;
	esac
done
[ "$reps" -ge 2 ] || { echo "vs-perftest.sh: --reps: at least 2 (an interval needs two pairs)" >&2; exit 2; }
for o in "bw-sizes $bw_sizes" "lat-sizes $lat_sizes"; do
	case ${o#* } in
	'' | ,* | *, | *,,* | *[!0-9,]*) echo "vs-perftest.sh: --${o%% *}: '${o#* }' is not a list of sizes (64,4096)" >&2; exit 2 ;;
	esac
done
awk -v t="$target" 'BEGIN { exit !(t ~ /^[0-9]*\.?[0-9]+$/ && t > 0 && t < 1) }' ||
	{ echo "vs-perftest.sh: --target: '$target' is not a fraction between 0 and 1 (0.05)" >&2; exit 2; }
if [ -n "$cases" ]; then
	echo | grep -Eq -- "$cases" 2>/dev/null
	[ $? -le 1 ] || { echo "vs-perftest.sh: --cases: '$cases' is not a regular expression" >&2; exit 2; }
fi

# case_list: every case as "NAME KIND UNIT", in the order of the table.
case_list() {
	for t in send write read; do
		for s in $(echo "$bw_sizes" | tr , ' '); do echo "${t}_bw_$s rate Mpps"; done
	done
	for t in send write read; do
		for s in $(echo "$lat_sizes" | tr , ' '); do echo "${t}_lat_$s time us"; done
	done
	echo "msgrate_64_q2 rate Mpps"
	for s in 64 65536; do for q in 8 64; do echo "write_bw_${s}_q$q rate Mpps"; done; done
	echo "write_bibw_65536 rate Mpps"
	if [ "$iwarp" = 0 ]; then
		echo "fetch_add_bw_8 rate Mpps"
		echo "fetch_add_lat_8 time us"
		echo "ud_send_bw_64 rate Mpps"
		for q in 1 16 128; do echo "setup_q$q time ms"; done
	fi
	echo "cm_setup_q1 time ms"
	if [ "$ucx" = 1 ] && [ "$iwarp" = 0 ]; then
		echo "ucx_write_bw_64 rate Mpps"
		echo "ucx_write_bw_65536 rate Mpps"
		echo "ucx_write_lat_2 time us"
	fi
}
selected() {
	case_list | while read -r name kind unit; do
		if [ -z "$cases" ] || echo "$name" | grep -Eq -- "$cases"; then
			echo "$name $kind $unit"
		fi
	done
}
if [ "$list" = 1 ]; then
	selected
	exit 0
fi
[ -n "$(selected)" ] || { echo "vs-perftest.sh: --cases '$cases' matches no case (see --list)" >&2; exit 2; }

# ---- outside the guest: packages, build, then this script in one guest boot ----
if [ "$inner" = 0 ]; then
	build=${build:-$root/build-vs-perftest}
	bash -c '. "$1/scripts/deps.sh" && rk_install_packages $RDMAKIT_BENCH_PACKAGES' sh "$root" ||
		{ echo "vs-perftest.sh: installing $(bash -c '. "$1/scripts/deps.sh"; echo $RDMAKIT_BENCH_PACKAGES' sh "$root") failed" >&2; exit 1; }
	if [ ! -x "$build/src/cli/rdmakit" ] || [ -n "$(find "$root/src" "$root/include" -newer "$build/src/cli/rdmakit" -name '*.[ch]' 2>/dev/null | head -1)" ]; then
		cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
			cmake --build "$build" -j"$(nproc)" --target rdmakit_cli >/dev/null ||
			{ echo "vs-perftest.sh: build failed" >&2; exit 1; }
	fi
	out=${out:-$root/bench/results/vs-perftest-$(date -u +%Y-%m-%d-%H%M)}
	mkdir -p "$out" || exit 1
	out=$(cd "$out" && pwd)
	set -- --inner --budget "$budget" --reps "$reps" --target "$target" --iters "$iters" \
		--lat-iters "$lat_iters" --setup-iters "$setup_iters" --bw-sizes "$bw_sizes" \
		--lat-sizes "$lat_sizes" --build "$build" --out "$out" --provider "$provider"
	[ "$ucx" = 0 ] && set -- "$@" --no-ucx
	[ -n "$dev" ] && set -- "$@" --device "$dev"
	[ -n "$gid" ] && set -- "$@" --gid "$gid"
	[ -n "$ip" ] && set -- "$@" --ip "$ip"
	[ -n "$cases" ] && set -- "$@" --cases "$cases"
	[ "$native" = 1 ] && exec sh "$0" "$@"
	# The guest is killed after the budget, the first two repetitions (which
	# always run: 4 minutes a case allowed) and 10 minutes more.
	exec "$root/scripts/softroce" --provider "$provider" run --timeout $((budget * 60 + $(selected | wc -l) * 240 + 600)) -- sh "$0" "$@"
fi

# ---- the comparison (in the guest, or natively) ----
. "$here/vs-perftest-runs.sh"
