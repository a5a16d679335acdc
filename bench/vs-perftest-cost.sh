#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The CPU cost of a message, rdmakit bench against perftest: user-space
# instructions (valgrind's callgrind), system calls (strace -f -c) and
# completions per poll call (bench/pollcount.c, an LD_PRELOAD counter) of the
# CLIENT process (its server runs normally), per message. Counted by
# difference: each client runs with N1 and N2 iterations, the same size and
# QPs; setup and teardown are the same in both runs and cancel exactly:
# per message = (count(N2) - count(N1)) / (N2 - N1) (bench/cost.py). Each
# client runs with three iteration counts N1 < N2 < N3, and so each figure
# comes twice: from N1 to N2 and from N2 to N3 (shown as A/B, ! when they
# differ by more than 5%; they agree when the cost is the same for every
# message, which is what the method assumes). Counts do not
# depend on the bed's speed or load, so this works on a loaded TCG guest where
# times move by +-30%; except the empty polls of a busy-polling loop and the
# sched_yield() calls of one that yields, which depend on how fast the device
# answers (the repeats show how much).
#
# Usage: bench/vs-perftest-cost.sh [--cases REGEX] [--provider rxe|siw]
#                                  [--iters N1,N2,N3] [--lat-iters N1,N2,N3]
#                                  [--out DIR] [--build DIR] [--list]
#   --cases REGEX  the rows of bench/vs-perftest.sh --list to count (grep -E;
#                  default: the bandwidth and latency rows, msgrate_64_q2 and
#                  write_bw_64_q8); the other rows (setup, bidir, UCX,
#                  atomics, UD) are not counted
#   --provider P   rxe (default) or siw (every run through RDMA CM there:
#                  bench --cm, perftest -R)
#   --iters L      bandwidth iterations of the three runs (default 1000,5000,9000;
#                  a row over Q QPs: each / Q per QP, as in vs-perftest.sh)
#   --lat-iters L  latency iterations (default 200,1000,1800)
#   --out DIR      results (default bench/results/vs-perftest-cost-DATE-HHMM):
#                  raw.txt (CASE|TOOL|MESSAGES|METRIC|VALUE), table.txt, hot.txt
#                  (instructions and system calls per message by function and
#                  by name, from N1 and N3), cg/ (the callgrind.out files),
#                  st/ (the strace -c summaries)
#   --build DIR    rdmakit's build (default build-vs-perftest-cost: Release
#                  with -g, the same code as vs-perftest.sh's Release build,
#                  named functions for callgrind)
#   --list         the rows it would count, and exit
# Everything runs in ONE guest boot (scripts/softroce --cpus 1), or natively
# with --native.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/lib.sh"
PROG=vs-perftest-cost.sh
inner=0 native=0 list=0 provider=rxe cases="" out="" build=""
iters=1000,5000,9000 lat_iters=200,1000,1800
default_cases='^(send|write|read)_(bw|lat)_[0-9]+$|^msgrate_64_q2$|^write_bw_64_q8$'
while [ $# -gt 0 ]; do
	case $1 in
	--inner) inner=1 ;;
	--native) native=1 ;;
	--list) list=1 ;;
	--cases | --provider | --iters | --lat-iters | --out | --build)
		[ $# -ge 2 ] || { echo "$PROG: $1 needs a value" >&2; exit 2; }
		case $1 in
		--cases) cases=$2 ;; --provider) provider=$2 ;; --iters) iters=$2 ;;
		--lat-iters) lat_iters=$2 ;; --out) out=$2 ;; --build) build=$2 ;;
		esac
		shift ;;
	-h | --help) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "$PROG: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case $provider in
rxe | siw) ;;
*) echo "$PROG: --provider: '$provider' is not rxe or siw" >&2; exit 2 ;;
esac
# three_counts OPTION LIST: LIST is three rising positive counts.
three_counts() {
	echo "$2" | awk -F, '{ exit !(NF == 3 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ &&
		$3 ~ /^[0-9]+$/ && $1 > 0 && $2 > $1 && $3 > $2) }' ||
		{ echo "$PROG: $1: '$2' is not three rising iteration counts (1000,5000,9000)" >&2; exit 2; }
}
three_counts --iters "$iters"
three_counts --lat-iters "$lat_iters"
if [ -n "$cases" ]; then
	echo | grep -Eq -- "$cases" 2>/dev/null
	[ $? -le 1 ] || { echo "$PROG: --cases: '$cases' is not a regular expression" >&2; exit 2; }
fi

# The rows: vs-perftest.sh's (by provider), those of a bandwidth or latency
# loop that perftest has, --cases among them.
rows() {
	sh "$here/vs-perftest.sh" --provider "$provider" --no-ucx --list | awk '{ print $1 }' |
		grep -E '_(bw|lat)_|^msgrate_' | grep -Ev '^(ucx_|fetch_|ud_|write_bibw)' |
		grep -E -- "${cases:-$default_cases}"
}
[ -n "$(rows)" ] || { echo "$PROG: --cases '$cases' matches no row (see --list)" >&2; exit 2; }
if [ "$list" = 1 ]; then
	rows
	exit 0
fi

# ---- outside the guest: packages, build, then this script in one guest ----
if [ "$inner" = 0 ]; then
	build=${build:-$root/build-vs-perftest-cost}
	bash -c '. "$1/scripts/deps.sh" && rk_install_packages $RDMAKIT_BENCH_PACKAGES $RDMAKIT_COST_PACKAGES' sh "$root" ||
		{ echo "$PROG: installing the bench packages failed" >&2; exit 1; }
	if [ ! -x "$build/src/cli/rdmakit" ] || [ -n "$(find "$root/src" "$root/include" -newer "$build/src/cli/rdmakit" -name '*.[ch]' 2>/dev/null | head -1)" ]; then
		cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-g >/dev/null &&
			cmake --build "$build" -j"$(nproc)" --target rdmakit_cli >/dev/null ||
			{ echo "$PROG: build failed" >&2; exit 1; }
	fi
	printf 'IBVERBS_1.1 { global: ibv_open_device; local: *; };\n' >"$build/pollcount.map"
	cc -O2 -shared -fPIC -o "$build/pollcount.so" "$here/pollcount.c" \
		-Wl,--version-script="$build/pollcount.map" -ldl ||
		{ echo "$PROG: building bench/pollcount.c failed" >&2; exit 1; }
	out=${out:-$root/bench/results/vs-perftest-cost-$(date -u +%Y-%m-%d-%H%M)}
	mkdir -p "$out" || exit 1
	out=$(cd "$out" && pwd)
	set -- --inner --provider "$provider" --iters "$iters" --lat-iters "$lat_iters" \
		--build "$build" --out "$out"
	[ -n "$cases" ] && set -- "$@" --cases "$cases"
	[ "$native" = 1 ] && exec sh "$0" "$@"
	exec "$root/scripts/softroce" --provider "$provider" run --cpus 1 \
		--timeout $(($(rows | wc -l) * 1800 + 300)) -- sh "$0" "$@"
fi

# ---- the counting (in the guest, or natively) ----
RDMAKIT=$build/src/cli/rdmakit
COST="python3 $here/cost.py"
[ -x /usr/bin/python3 ] && COST="/usr/bin/python3 $here/cost.py"
dev=$(ibv_devices 2>/dev/null | awk 'NR > 2 { print $1; exit }')
[ -n "$dev" ] || { echo "$PROG: no RDMA device" >&2; exit 1; }
ip=198.18.0.1 gid=1 cm=0
if ibv_devinfo -d "$dev" 2>/dev/null | grep -q 'transport:.*iWARP'; then
	cm=1 gid=""
fi
for t in valgrind strace; do
	command -v $t >/dev/null 2>&1 || { echo "$PROG: $t is not installed" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vs-perftest-cost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out/cg" "$out/st" || exit 1
raw=$out/raw.txt
: >"$raw"
port=$((23000 + $$ % 4000))

# server CMD...: start the server in the background until it listens (TCP:
# its port in /proc/net/tcp; RDMA CM: 2 s).
server() {
	"$@" >"$tmp/srv" 2>&1 &
	spid=$!
	if [ "$cm" = 1 ]; then sleep 2; return; fi
	_hex=$(printf ':%04X' "$port") _i=0
	while [ $_i -lt 600 ]; do
		awk -v h="$_hex" '$4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
			/proc/net/tcp /proc/net/tcp6 2>/dev/null && return
		sleep 0.05
		_i=$((_i + 1))
	done
}

# run TOOL CASE N PASS: one client run under PASS (callgrind: $tmp/cg; strace:
# $tmp/st and the poll counter's $tmp/pc), its server running normally.
# Returns the client's exit status.
run() {
	_tool=$1 _case=$2 _iters=$3 _pass=$4 q=1
	port=$((port + 1))
	op=${_case%%_*} kind=bw size=${_case#*_bw_}
	case $_case in
	*_lat_*) kind=lat size=${_case##*_lat_} ;;
	msgrate_*) op=write size=64 q=2 ;;
	*_q[0-9]*) q=${_case##*_q} ;;
	esac
	size=${size%%_*}
	case $_pass in
	callgrind) set -- valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" -q ;;
	# (the counter in the client only, by strace -E: in strace itself, its
	# zeros would overwrite the client's file at strace's exit)
	strace) rm -f "$tmp/pc"; set -- strace -f -c -o "$tmp/st" -E RK_POLLCOUNT_OUT="$tmp/pc" \
		-E LD_PRELOAD="$build/pollcount.so" ;;
	esac
	if [ "$_tool" = rdmakit ]; then
		_g="" _c=""
		[ -n "$gid" ] && _g="-g $gid"
		[ "$cm" = 1 ] && _c=--cm
		_x=""
		[ "$_case" = msgrate_64_q2 ] && _x="--qps 2 --threads 2"
		[ "$q" -gt 1 ] && [ -z "$_x" ] && _x="--qps $q"
		# shellcheck disable=SC2086
		server "$RDMAKIT" bench --server -d "$dev" $_g -p "$port" $_c --wait 600
		# shellcheck disable=SC2086
		timeout 1500 "$@" "$RDMAKIT" bench "$ip" -d "$dev" $_g -p "$port" $_c --csv \
			-m "$kind" -o "$op" -s "$size" -n "$_iters" $_x >"$tmp/out" 2>&1
	else
		_g="" _rcm=""
		[ -n "$gid" ] && _g="-x $gid"
		[ "$cm" = 1 ] && _rcm=-R
		_x=""
		[ "$q" -gt 1 ] && _x="-q $q"
		# shellcheck disable=SC2086
		server "ib_${op}_$kind" -d "$dev" $_g -F -p "$port" $_rcm -s "$size" -n "$_iters" $_x
		# shellcheck disable=SC2086
		timeout 1500 "$@" "ib_${op}_$kind" -d "$dev" $_g -F -p "$port" $_rcm -s "$size" \
			-n "$_iters" $_x "$ip" >"$tmp/out" 2>&1
	fi
	_rc=$?
	bench_reap "$spid" 60
	return $_rc
}

# count TOOL CASE N: both passes; their counts into raw.txt.
count() {
	_t=$1 _k=$2 _n=$3
	_q=1
	case $_k in *_q[0-9]*) _q=${_k##*_q} ;; esac
	[ "$_k" = msgrate_64_q2 ] && _q=2
	# Iterations per QP (both tools' -n is per QP): messages = N x QPs.
	_msgs=$((_n * _q))
	if run "$_t" "$_k" "$_n" callgrind && [ -s "$tmp/cg" ]; then
		echo "$_k|$_t|$_msgs|ir|$($COST callgrind "$tmp/cg")" >>"$raw"
		cp "$tmp/cg" "$out/cg/$_k-$_t-$_msgs.out"
	else
		echo "  $_k $_t n $_n: the callgrind run failed: $(tail -n 2 "$tmp/out" | tr '\n' ' ')"
	fi
	if run "$_t" "$_k" "$_n" strace && [ -s "$tmp/st" ] && [ -s "$tmp/pc" ]; then
		echo "$_k|$_t|$_msgs|syscalls|$($COST strace "$tmp/st")" >>"$raw"
		cp "$tmp/st" "$out/st/$_k-$_t-$_msgs.txt"
		# shellcheck disable=SC2046
		set -- $($COST pollcount "$tmp/pc")
		echo "$_k|$_t|$_msgs|polls|$1" >>"$raw"
		echo "$_k|$_t|$_msgs|completions|$2" >>"$raw"
	else
		echo "  $_k $_t n $_n: the strace run failed: $(tail -n 2 "$tmp/out" | tr '\n' ' ')"
	fi
}

start=$(date +%s)
echo "instructions, system calls and completions per poll of the client, per message, on $dev ($(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'))"
echo "iterations: bandwidth $iters, latency $lat_iters; $(valgrind --version), $(strace -V | head -n 1)"
for c in $(rows); do
	l=$iters q=1
	case $c in
	*_lat_*) l=$lat_iters ;;
	msgrate_*) q=2 ;;
	*_q[0-9]*) q=${c##*_q} ;;
	esac
	for t in rdmakit perftest; do
		# (the messages of a row spread over its QPs, as in vs-perftest.sh)
		for n in $(echo "$l" | tr , ' '); do
			count "$t" "$c" $((n / q))
		done
	done
	echo "  $c done ($(($(date +%s) - start)) s)"
done
{
	echo "The client's cost per message on $dev: (count(N2) - count(N1)) / (N2 - N1); $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "iterations N1,N2,N3: bandwidth $iters, latency $lat_iters (a row over Q QPs: / Q per QP)"
	echo
	$COST table "$raw"
	echo
	echo "Ir/msg: user-space instructions (callgrind, every object: the tool, libibverbs, the provider,"
	echo "libc); sc/msg: system calls (strace -f -c); each as A/B: A from N1 to N2, B (the repeat) from"
	echo "N2 to N3, ! when they differ by more than 5%; ratio: rdmakit/perftest of the A figures; c/p:"
	echo "completions per poll call from N1 to N2 (a pass of its own with bench/pollcount.c)."
} >"$out/table.txt"
{
	for f in "$out"/cg/*.out; do
		k=$(basename "$f" .out)
		set -- $(echo "$k" | sed 's/-\([a-z]*\)-\([0-9]*\)$/ \1 \2/')
		echo "$1 $2 $3"
	done | sort -k1,1 -k2,2 -k3,3n | awk '
		{ key = $1 " " $2; if (key in lo) hi[key] = $3; else { lo[key] = $3; keys[++n] = key } }
		END { for (i = 1; i <= n; i++) if (keys[i] in hi) print keys[i], lo[keys[i]], hi[keys[i]] }' |
		while read -r k t a b; do
			echo "$k $t: instructions per message by function (self), from N $a and $b"
			$COST hot "$out/cg/$k-$t-$a.out" "$a" "$out/cg/$k-$t-$b.out" "$b" 15
			if [ -s "$out/st/$k-$t-$a.txt" ] && [ -s "$out/st/$k-$t-$b.txt" ]; then
				echo "  system calls per message by name, from N $a and $b (strace pass):"
				$COST syscalls "$out/st/$k-$t-$a.txt" "$a" "$out/st/$k-$t-$b.txt" "$b"
			fi
			echo
		done
} >"$out/hot.txt"
cat "$out/table.txt"
echo "results in $out ($(($(date +%s) - start)) s)"
