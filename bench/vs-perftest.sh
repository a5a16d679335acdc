#!/bin/sh
# rdmakit bench against perftest on the same device, in one run: for each
# case, rdmakit and perftest alternate REPS times with the same sizes and the
# same iteration counts; the median of each and their ratio are printed, and a
# table at the end has one row per case whose last column is rdmakit/perftest.
#
# Usage: bench/vs-perftest.sh [--native] [--reps N] [--iters N] [--lat-iters N]
#                             [--device DEV] [--gid IDX] [--ip ADDR] [--build DIR]
#                             [--cases REGEX]
#   default   everything inside ONE Soft-RoCE guest boot (scripts/softroce),
#             rxe0, GID index 1 (RoCE v2, 198.18.0.1)
#   --native  on this host's RDMA device (first of ibv_devices unless --device)
#   --cases   only the cases whose name matches REGEX (grep -E), e.g. 'lat'
#
# perftest runs with its default options plus what the comparison needs:
# -d DEV, -x GID index, -F (no CPU-frequency warning), -s SIZE, -n ITERS.
# rdmakit runs with its defaults (which pick inline, post lists, selective
# signaling, batched polling and the ibv_wr_* API from the device) and the
# same -s and -n; for the message-rate case it adds --qps 2 --threads 2 (two
# QPs, each driven by a thread of its own, -n per QP), against perftest's
# defaults as the target is stated. Bandwidth and message rate: messages x size over the time
# from the first post to the last completion in both tools; the ratio is taken
# from the message rates (the same quantity, free of MB units). Latency: the
# median (perftest's t_typical), half the round trip for send and write, the
# full round trip for read.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
native=0 inner=0 reps=3 iters=2000 lat_iters=1000 dev="" gid="" ip="" build="" cases=""
while [ $# -gt 0 ]; do
	case $1 in
	--native) native=1 ;;
	--inner) inner=1 ;;
	--reps) reps=$2; shift ;;
	--iters) iters=$2; shift ;;
	--lat-iters) lat_iters=$2; shift ;;
	--device) dev=$2; shift ;;
	--gid) gid=$2; shift ;;
	--ip) ip=$2; shift ;;
	--build) build=$2; shift ;;
	--cases) cases=$2; shift ;;
	-h|--help) sed -n '2,25p' "$0"; exit 0 ;;
	*) echo "vs-perftest.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_positive vs-perftest.sh count "$reps" "$iters" "$lat_iters"

# ---- outside the guest: build, then run this script inside one guest boot ----
if [ "$inner" = 0 ]; then
	build=${build:-$root/build-vs-perftest}
	if ! command -v ib_write_bw >/dev/null 2>&1; then
		echo "vs-perftest.sh: perftest is not installed (apt-get install perftest)" >&2
		exit 1
	fi
	if [ ! -x "$build/src/cli/rdmakit" ] || [ -n "$(find "$root/src" "$root/include" -newer "$build/src/cli/rdmakit" -name '*.[ch]' 2>/dev/null | head -1)" ]; then
		cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
			cmake --build "$build" -j"$(nproc)" --target rdmakit_cli >/dev/null ||
			{ echo "vs-perftest.sh: build failed" >&2; exit 1; }
	fi
	args="--inner --reps $reps --iters $iters --lat-iters $lat_iters --build $build"
	[ -n "$dev" ] && args="$args --device $dev"
	[ -n "$gid" ] && args="$args --gid $gid"
	[ -n "$ip" ] && args="$args --ip $ip"
	[ -n "$cases" ] && args="$args --cases $cases"
	if [ "$native" = 1 ]; then
		# shellcheck disable=SC2086
		exec sh "$0" $args
	fi
	# shellcheck disable=SC2086
	exec "$root/scripts/softroce" run -- sh "$0" $args
fi

# ---- the comparison (in the guest, or natively) ----
RDMAKIT=$build/src/cli/rdmakit
if [ -z "$dev" ]; then
	dev=$(ibv_devices 2>/dev/null | awk 'NR > 2 { print $1; exit }')
	[ -n "$dev" ] || { echo "vs-perftest.sh: no RDMA device" >&2; exit 1; }
fi
case $dev in rxe*) gid=${gid:-1}; ip=${ip:-198.18.0.1} ;; esac
ip=${ip:-127.0.0.1}
pt_gid=""
[ -n "$gid" ] && pt_gid="-x $gid"
rk_gid=""
[ -n "$gid" ] && rk_gid="-g $gid"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vs-perftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
port=$((21000 + $$ % 5000))
results=$tmp/results

positive() { awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# perftest NAME SIZE ITERS KIND: one perftest run; prints the metric.
# KIND bw: MsgRate[Mpps] (column 5); lat: t_typical[usec] (column 5 as well).
run_perftest() {
	tool=$1 size=$2 n=$3
	port=$((port + 1))
	# shellcheck disable=SC2086
	$tool -d "$dev" $pt_gid -F -p "$port" -s "$size" -n "$n" >"$tmp/pt_srv" 2>&1 &
	spid=$!
	# perftest's client does not wait for its server: try again while it
	# is not listening yet.
	try=0
	while :; do
		sleep 1
		# shellcheck disable=SC2086
		timeout 300 $tool -d "$dev" $pt_gid -F -p "$port" -s "$size" -n "$n" "$ip" >"$tmp/pt_cli" 2>&1 && break
		try=$((try + 1))
		grep -q "Couldn't connect" "$tmp/pt_cli" && [ "$try" -lt 5 ] || break
	done
	wait "$spid"
	awk -v s="$size" '$1 == s && NF >= 5 { print $5; exit }' "$tmp/pt_cli"
}

# run_rdmakit TEST MODE SIZE ITERS: one rdmakit run; prints the metric
# (msg_rate_Mpps for bw, lat_median_us for lat) from its CSV.
run_rdmakit() {
	test=$1 mode=$2 size=$3 n=$4
	shift 4
	port=$((port + 1))
	# shellcheck disable=SC2086
	"$RDMAKIT" bench --server -d "$dev" $rk_gid -p "$port" --wait 60 >"$tmp/rk_srv" 2>&1 &
	spid=$!
	# shellcheck disable=SC2086
	timeout 300 "$RDMAKIT" bench "$ip" -d "$dev" $rk_gid -p "$port" --csv --test "$test" \
		--mode "$mode" -s "$size" -n "$n" "$@" >"$tmp/rk_cli" 2>&1
	wait "$spid"
	if [ "$mode" = bw ]; then col=11; else col=13; fi
	awk -F, -v c="$col" 'NR == 2 { print $c }' "$tmp/rk_cli"
}

# case NAME KIND TOOL TEST MODE SIZE ITERS [RDMAKIT ARGS...]
run_case() {
	name=$1 kind=$2 tool=$3 test=$4 mode=$5 size=$6 n=$7
	shift 7
	bench_want "$name" || return 0
	: >"$tmp/rk" ; : >"$tmp/pt"
	i=0
	while [ "$i" -lt "$reps" ]; do
		# A run that printed no figure, or zero, failed: it is shown and
		# left out of the median, for either tool.
		v=$(run_rdmakit "$test" "$mode" "$size" "$n" "$@")
		positive "$v" && echo "$v" >>"$tmp/rk" || { echo "  rdmakit run failed (figure '$v'):"; sed 's/^/    /' "$tmp/rk_cli" | tail -5; }
		v=$(run_perftest "$tool" "$size" "$n")
		positive "$v" && echo "$v" >>"$tmp/pt" || { echo "  $tool run failed (figure '$v'):"; sed 's/^/    /' "$tmp/pt_cli" | tail -5; }
		i=$((i + 1))
	done
	rk=$(median <"$tmp/rk") pt=$(median <"$tmp/pt")
	ratio=$(awk -v a="$rk" -v b="$pt" 'BEGIN { if (b + 0 > 0 && a + 0 > 0) printf "%.2f", a / b; else print "n/a" }')
	unit=$([ "$kind" = lat ] && echo "us (median)" || echo "Mpps")
	printf '%-16s rdmakit %s, %s %s %s (medians of the runs that gave a figure: rdmakit [%s], perftest [%s]); ratio %s\n' \
		"$name" "$rk" "$tool" "$pt" "$unit" "$(tr '\n' ' ' <"$tmp/rk" | sed 's/ $//')" \
		"$(tr '\n' ' ' <"$tmp/pt" | sed 's/ $//')" "$ratio"
	echo "$name|$kind|$size|$n|$rk|$pt|$ratio" >>"$results"
}

echo "rdmakit bench vs perftest on $dev (GID index ${gid:-default}, server $ip), $reps repetitions each, alternating"
echo "$(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'); bandwidth iterations $iters, latency iterations $lat_iters"
: >"$results"
for t in send write read; do
	for s in 64 4096 65536; do
		run_case "${t}_bw_$s" bw "ib_${t}_bw" "$t" bw "$s" "$iters"
	done
done
run_case send_lat_2 lat ib_send_lat send lat 2 "$lat_iters"
run_case write_lat_2 lat ib_write_lat write lat 2 "$lat_iters"
run_case read_lat_2 lat ib_read_lat read lat 2 "$lat_iters"
run_case msgrate_64 rate ib_write_bw write bw 64 "$iters" --qps 2 --threads 2

echo
echo "Summary (bandwidth and message rate: higher is better, target ratio >= 1.0, message"
echo "rate >= 1.5 x perftest's defaults; latency: lower is better, target ratio <= 1.0)"
printf '%-14s %-6s %-8s %-7s %-14s %-14s %-9s %s\n' case kind bytes iters rdmakit perftest target rdmakit/perftest
while IFS='|' read -r name kind size n rk pt ratio; do
	case $kind in
	bw) target=">= 1.0"; unit=Mpps ;;
	rate) target=">= 1.5"; unit=Mpps ;;
	lat) target="<= 1.0"; unit=us ;;
	esac
	printf '%-14s %-6s %-8s %-7s %-14s %-14s %-9s %s\n' "$name" "$kind" "$size" "$n" "$rk $unit" "$pt $unit" "$target" "$ratio"
done <"$results"
