# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=sh disable=SC2154
# Sourced by bench/vs-perftest.sh (in the guest, or natively with --native):
# the runs of each tool, the paired repetitions under the time budget, the
# table and the plots. Uses the options vs-perftest.sh parsed.

# shellcheck source=bench/lib.sh
. "$here/lib.sh"
RDMAKIT=$build/src/cli/rdmakit
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
STATS="$PY $here/stats.py"
if [ -z "$dev" ]; then
	dev=$(ibv_devices 2>/dev/null | awk 'NR > 2 { print $1; exit }')
	[ -n "$dev" ] || { echo "vs-perftest.sh: no RDMA device" >&2; exit 1; }
fi
case $dev in
rxe*) gid=${gid:-1}; ip=${ip:-198.18.0.1} ;;
siw*) ip=${ip:-198.18.0.1} ;;
esac
# iWARP (vs-perftest.sh set iwarp from the device): every run through RDMA CM,
# no GID (an iWARP port has none to choose).
[ "$iwarp" = 1 ] && gid=""
# How long a server through RDMA CM gets to listen: perftest's -R client does
# not retry, and on a loaded bed siw's took more than 1 s.
cm_wait=1
[ "$iwarp" = 1 ] && cm_wait=2
ip=${ip:-127.0.0.1}
pt_gid="" rk_gid=""
[ -n "$gid" ] && pt_gid="-x $gid" && rk_gid="-g $gid"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vs-perftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
port=$((21000 + $$ % 5000))
mkdir -p "$out" || exit 1
raw=$out/raw.txt failed=$out/failed.txt
: >"$raw"
: >"$failed"

now_ns() { date +%s%N; }

# wait_listen PORT: until a TCP socket listens on PORT (30 s at most).
wait_listen() {
	_hex=$(printf ':%04X' "$1") _i=0
	while [ $_i -lt 600 ]; do
		awk -v h="$_hex" '$4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
			/proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}


# serve CM SERVER-CMD...: start a server on $port, in the background, and
# wait until it listens (CM=1: RDMA CM listens where /proc/net/tcp cannot
# see it; $cm_wait s then). Sets spid.
serve() {
	_cm=$1
	shift
	"$@" >"$tmp/srv" 2>&1 &
	spid=$!
	# (siw's listening socket is the kernel's: /proc/net/tcp does not show it)
	if [ "$_cm" = 1 ]; then sleep "$cm_wait"; else wait_listen "$port"; fi
}

# client CMD...: run the client (300 s at most) into $tmp/out; sets wall_ms.
client() {
	_t0=$(now_ns)
	timeout 300 "$@" >"$tmp/out" 2>&1
	echo $? >"$tmp/rc"
	_t1=$(now_ns)
	wall_ms=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.3f", (b - a) / 1e6 }')
	bench_reap "$spid" 10
}

# rdmakit CM METRIC ARGS...: one rdmakit bench run; prints the figure.
# METRIC: rate (msg_rate_Mpps), lat (lat_median_us), bidir (both directions'
# messages per second from --json), setup:N (wall ms less the round's seconds).
rdmakit() {
	_cm=$1 _metric=$2
	shift 2
	[ "$iwarp" = 1 ] && _cm=1
	_c=""
	[ "$_cm" = 1 ] && _c=--cm
	# shellcheck disable=SC2086
	serve "$_cm" "$RDMAKIT" bench --server -d "$dev" $rk_gid -p "$port" $_c --wait 60
	_fmt=--csv
	[ "$_metric" = bidir ] && _fmt=--json
	# shellcheck disable=SC2086
	client "$RDMAKIT" bench "$ip" -d "$dev" $rk_gid -p "$port" $_c $_fmt "$@"
	case $_metric in
	rate) awk -F, 'NR == 2 { print $11 }' "$tmp/out" ;;
	lat) awk -F, 'NR == 2 { print $13 }' "$tmp/out" ;;
	setup) awk -F, -v w="$wall_ms" 'NR == 2 && $8 > 0 { printf "%.3f\n", w - $8 * 1000 }' "$tmp/out" ;;
	bidir)
		# (own + peer MiB/s) x 2^20 / size / 10^6: both directions in Mpps.
		tr -d ' \n' <"$tmp/out" | awk -v s="$size" '{
			a = $0; b = $0
			if (!sub(/.*"bw_avg_MiBps":/, "", a) || !sub(/.*"peer_bw_avg_MiBps":/, "", b)) exit
			printf "%.6f\n", (a + 0 + b) * 1048576 / s / 1e6 }' ;;
	esac
}

# perftest CM METRIC TOOL ARGS...: one perftest run, the same arguments on
# both sides; prints the figure: MsgRate[Mpps] or t_typical[usec] (column 5
# of the row of the size), or setup:N (wall ms less the N x iterations
# messages at the printed message rate).
perftest() {
	_cm=$1 _metric=$2 _tool=$3
	shift 3
	if [ "$iwarp" = 1 ] && [ "$_cm" = 0 ]; then
		_cm=1
		set -- "$@" -R
	fi
	# shellcheck disable=SC2086
	serve "$_cm" "$_tool" -d "$dev" $pt_gid -F -p "$port" "$@"
	# shellcheck disable=SC2086
	client "$_tool" -d "$dev" $pt_gid -F -p "$port" "$@" "$ip"
	case $_metric in
	rate | lat | bidir) awk -v s="$size" '$1 == s && NF >= 5 { print $5; exit }' "$tmp/out" ;;
	setup) awk -v s="$size" -v w="$wall_ms" -v m="$msgs" '$1 == s && NF >= 5 && $5 > 0 {
		printf "%.3f\n", w - m / ($5 * 1e6) * 1000; exit }' "$tmp/out" ;;
	esac
}

# ucx METRIC TEST: one ucx_perftest run over the verbs RC transport on $dev;
# prints the message rate (Mpps) or the 50th percentile latency (us) of its
# "Final:" line.
ucx() {
	# RC for the puts, UD for UCP's wireup (its auxiliary transport).
	export UCX_NET_DEVICES="$dev:1" UCX_TLS=rc_verbs,ud_verbs UCX_WARN_UNUSED_ENV_VARS=n
	[ -n "$ucx_gid" ] && export UCX_IB_GID_INDEX="$ucx_gid"
	serve 0 ucx_perftest -p "$port"
	client ucx_perftest "$ip" -p "$port" -t "$2" -s "$size" -n "$n" -w $((n / 10 + 1))
	case $1 in
	rate) awk '$1 == "Final:" && NF >= 9 { printf "%.6f\n", $9 / 1e6; exit }' "$tmp/out" ;;
	lat) awk '$1 == "Final:" && NF >= 9 { print $3; exit }' "$tmp/out" ;;
	esac
}

iters_text() {
	if [ "$iters" != auto ]; then echo "$iters"
	elif [ "$iwarp" = 1 ]; then echo "2000 up to 64 B, 500 up to 4 KiB, 200 above"
	else echo "20000 up to 64 B, 5000 up to 4 KiB, 2000 above"
	fi
}

# bw_iters SIZE: the bandwidth iterations of a row of SIZE bytes (--iters, or
# by size, about a second a run on rxe; on the TCG bed ten times longer runs
# narrowed a pair's spread only from 0.29 to 0.26: the noise is the bed's).
bw_iters() {
	_t=1
	[ "$iwarp" = 1 ] && _t=10 # siw over TCP in the guest: ~1,500 small messages/s
	if [ "$iters" != auto ]; then echo "$iters"
	elif [ "$1" -le 64 ]; then echo $((20000 / _t))
	elif [ "$1" -le 4096 ]; then echo $((5000 / _t))
	else echo $((2000 / _t))
	fi
}

# run_tool NAME TOOL: one run of one case by one tool; prints the figure
# (empty when it printed none). Sets size, n, msgs from the name.
run_tool() {
	_name=$1 _tool=$2 q=1
	case $_name in *_q[0-9]*) q=${_name##*_q} ;; esac
	size=${_name#*_bw_}
	case $_name in
	*_lat_*) size=${_name##*_lat_} ;;
	*setup* | msgrate_*) size=64 ;;
	write_bibw_*) size=${_name#write_bibw_} ;;
	esac
	size=${size%%_*}
	n=$(bw_iters "$size")
	n=$((n / q))
	[ $n -ge 100 ] || n=100
	case $_name in
	*_lat_*) n=$lat_iters ;;
	*setup*) n=$setup_iters ;;
	esac
	msgs=$((n * q))
	if [ "$_tool" = rdmakit ]; then
		case $_name in
		msgrate_64_q2) rdmakit 0 rate -m bw -o write -s 64 -n "$n" --qps 2 --threads 2 ;;
		write_bw_*_q*) rdmakit 0 rate -m bw -o write -s "$size" -n "$n" --qps "$q" ;;
		write_bibw_*) rdmakit 0 bidir -m bw -o write -s "$size" -n "$n" --bidir ;;
		fetch_add_bw_8) rdmakit 0 rate -m bw -o fetch-add -s 8 -n "$n" ;;
		fetch_add_lat_8) rdmakit 0 lat -m lat -o fetch-add -s 8 -n "$n" ;;
		ud_send_bw_64) rdmakit 0 rate -m bw -o send -T ud -s 64 -n "$n" ;;
		setup_q*) rdmakit 0 setup -m bw -o write -s 64 -n "$n" --qps "$q" ;;
		cm_setup_q1) rdmakit 1 setup -m bw -o write -s 64 -n "$n" ;;
		ucx_write_bw_*) rdmakit 0 rate -m bw -o write -s "$size" -n "$n" ;;
		ucx_write_lat_*) rdmakit 0 lat -m lat -o write -s "$size" -n "$n" ;;
		*_bw_*) rdmakit 0 rate -m bw -o "${_name%%_*}" -s "$size" -n "$n" ;;
		*_lat_*) rdmakit 0 lat -m lat -o "${_name%%_*}" -s "$size" -n "$n" ;;
		esac
		return
	fi
	case $_name in
	msgrate_64_q2) perftest 0 rate ib_write_bw -s 64 -n "$n" -q 2 ;;
	write_bw_*_q*) perftest 0 rate ib_write_bw -s "$size" -n "$n" -q "$q" ;;
	write_bibw_*) perftest 0 bidir ib_write_bw -s "$size" -n "$n" -b ;;
	fetch_add_bw_8) perftest 0 rate ib_atomic_bw -A FETCH_AND_ADD -n "$n" ;;
	fetch_add_lat_8) perftest 0 lat ib_atomic_lat -A FETCH_AND_ADD -n "$n" ;;
	ud_send_bw_64) perftest 0 rate ib_send_bw -c UD -s 64 -n "$n" ;;
	setup_q*) perftest 0 setup ib_write_bw -s 64 -n "$n" -q "$q" ;;
	cm_setup_q1) perftest 1 setup ib_write_bw -s 64 -n "$n" -R ;;
	ucx_write_bw_*) ucx rate ucp_put_bw ;;
	ucx_write_lat_*) ucx lat ucp_put_lat ;;
	*_bw_*) perftest 0 rate "ib_${_name%%_*}_bw" -s "$size" -n "$n" ;;
	*_lat_*) perftest 0 lat "ib_${_name%%_*}_lat" -s "$size" -n "$n" ;;
	esac
}

anchor_of() { case $1 in ucx_*) echo ucx_perftest ;; *) echo perftest ;; esac; }

# pair NAME KIND UNIT REP: both tools once, alternating who goes first; each
# figure into raw.txt, each failed run (no figure, 0, inf, nan) into
# failed.txt with the last lines of its output.
pair() {
	_tools="rdmakit $(anchor_of "$1")"
	[ $(($4 % 2)) -eq 0 ] && _tools="$(anchor_of "$1") rdmakit"
	for _t in $_tools; do
		# A port of its own for every run (run_tool runs in a subshell).
		port=$((port + 1))
		_v=$(run_tool "$1" "$_t")
		# rdmakit's exit status 2: it refused the options (a QP count beyond
		# its limit, say): the case cannot run for both, and is dropped.
		if [ "$_t" = rdmakit ] && [ "$(cat "$tmp/rc")" = 2 ]; then
			echo "$1: rdmakit refused it (exit 2): $(head -n 2 "$tmp/out" | tr '\n' ' ')" >>"$tmp/refused"
			echo "  $1: rdmakit refused it, left out: $(head -n 1 "$tmp/out")"
			return
		fi
		echo "$1|$2|$3|$4|$_t|$_v" >>"$raw"
		if ! awk -v v="$_v" 'BEGIN { exit !(v ~ /^[0-9.eE+-]+$/ && v + 0 > 0) }'; then
			{
				echo "$1 repetition $4, $_t: figure '$_v'; the last lines of its output:"
				tail -n 6 "$tmp/out" | sed 's/^/    /'
				grep -q . "$tmp/srv" && tail -n 3 "$tmp/srv" | sed 's/^/    server: /'
			} >>"$failed"
			echo "  $1 repetition $4: $_t failed (figure '$_v'), see failed.txt"
		fi
	done
}

start=$(date +%s)
deadline=$((start + budget * 60))
budget_out=0
echo "rdmakit bench vs perftest on $dev (GID index ${gid:-default}, server $ip); $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "budget $budget min; at least $reps repetitions; converged at +-$target; bandwidth iterations $(iters_text) (per QP: / QPs, 100 at least), latency $lat_iters, setup $setup_iters"
selected >"$tmp/cases"
# ucx_perftest: one probe first; where it gives no figure, the ucx_ rows are
# left out and UCX's own words say why, once.
ucx_note="" ucx_gid=$gid ucx_failed=""
: >"$tmp/refused"
# ucx_said: UCX's own error lines of the last run, on one line.
ucx_said() {
	grep -E "Fatal:|error '|ERROR" "$tmp/out" | sed 's/^\[[^]]*\] *//; s/^\[[^]]*\] *//; s/  */ /g' |
		head -n 3 | tr '\n' ';' | sed 's/;$//; s/;/; /g'
}
if grep -q '^ucx_' "$tmp/cases"; then
	if ! command -v ucx_perftest >/dev/null 2>&1; then
		ucx_note="ucx_perftest is not installed (Debian's ucx-utils): the ucx_ rows are left out"
	else
		# The GID index the other tools use first, then index 0 (on rxe
		# the fe80:: RoCE v2 GID: UCX 1.13's UD wireup timed out with the
		# IPv4-mapped index 1 and ran with 0).
		for g in "$gid" 0; do
			[ "$g" = 0 ] && [ "$gid" = 0 ] && [ -n "$ucx_failed" ] && break
			ucx_gid=$g
			port=$((port + 1))
			[ -n "$(size=64 n=200 ucx rate ucp_put_bw)" ] && break
			ucx_failed="${ucx_failed:+$ucx_failed; }with UCX_IB_GID_INDEX=${g:-unset} UCX said: $(ucx_said)"
			ucx_gid=none
		done
		if [ "$ucx_gid" = none ]; then
			ucx_note="ucx_perftest cannot run on $dev here (UCX_TLS=rc_verbs,ud_verbs, UCX_NET_DEVICES=$dev:1), the ucx_ rows are left out: $ucx_failed"
		elif [ -n "$ucx_failed" ]; then
			ucx_note="ucx_perftest runs with UCX_IB_GID_INDEX=$ucx_gid (UCX_TLS=rc_verbs,ud_verbs); $ucx_failed"
		fi
	fi
	echo "${ucx_note:-ucx_perftest runs on $dev (UCX_TLS=rc_verbs,ud_verbs${ucx_gid:+, UCX_IB_GID_INDEX=$ucx_gid})}"
	if [ "$ucx_gid" = none ] || ! command -v ucx_perftest >/dev/null 2>&1; then
		grep -v '^ucx_' "$tmp/cases" >"$tmp/cases.1"
		mv "$tmp/cases.1" "$tmp/cases"
	fi
fi
todo=$(awk '{ print $1 }' "$tmp/cases")
rep=1
while [ -n "$todo" ]; do
	echo "repetition $rep: $(echo "$todo" | wc -w) cases ($(($(date +%s) - start)) s spent)"
	for c in $todo; do
		# The first two repetitions always run (every case gets an interval).
		if [ $rep -gt 2 ] && [ "$(date +%s)" -ge $deadline ]; then
			budget_out=1
			break 2
		fi
		# shellcheck disable=SC2046
		pair $(grep "^$c " "$tmp/cases") "$rep"
	done
	# Refused cases: out of the cases, raw.txt and so of the repetitions.
	if [ -s "$tmp/refused" ]; then
		# shellcheck disable=SC2013 # case names: one word each
		for c in $(sed 's/:.*//' "$tmp/refused"); do
			grep -v "^$c " "$tmp/cases" >"$tmp/cases.1"
			mv "$tmp/cases.1" "$tmp/cases"
			grep -v "^$c|" "$raw" >"$tmp/raw.1"
			cat "$tmp/raw.1" >"$raw"
		done
		todo=$(for c in $todo; do grep -q "^$c:" "$tmp/refused" || echo "$c"; done)
	fi
	rep=$((rep + 1))
	[ $rep -le "$reps" ] && continue
	todo=$($STATS pending "$raw" --min-reps "$reps" --target "$target")
	[ -n "$todo" ] && [ "$(date +%s)" -ge $deadline ] && { budget_out=1; break; }
done
elapsed=$(($(date +%s) - start))

bo=""
[ "$budget_out" = 1 ] && bo=--budget-out
{
	echo "rdmakit bench vs perftest$(grep -q '^ucx_' "$tmp/cases" && echo " (and ucx_perftest in the ucx_ rows)") on $dev, GID index ${gid:-default}, server $ip"
	echo "$(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs; $elapsed s of a $budget min budget ($( [ "$budget_out" = 1 ] && echo "spent before every case converged" || echo "every case converged or gave no figure"))"
	echo "iterations: bandwidth $(iters_text) (per QP: / QPs, 100 at least), latency $lat_iters, setup $setup_iters per QP"
	echo "medians of the paired runs; ratio = rdmakit / anchor of the medians, 95% bootstrap CI (pairs resampled 2000 times, seed 13)"
	echo
	$STATS report "$raw" --min-reps "$reps" --target "$target" $bo
	echo
	if [ "$iwarp" = 1 ]; then
		echo "$dev is iWARP: every run connected through RDMA CM (bench --cm, perftest -R). Left out, as"
		echo "iWARP has none of them: atomics (fetch_add_*), UD (ud_send_bw_64), the TCP-exchange setup rows"
		echo "(setup_qN: an iWARP QP connects only through RDMA CM; cm_setup_q1 is the setup row) and UCX"
		echo "(its verbs transports rc_verbs/ud_verbs need InfiniBand or RoCE)."
		echo
	fi
	echo "Mpps: message rate, higher is better (ahead: CI above 1.0); us and ms: latency and setup time,"
	echo "lower is better (ahead: CI below 1.0). write_bw_64 is the 1-QP message-rate row; write_bibw"
	echo "counts both directions; setup_qN: wall time of the client less its reported transfer time."
	echo "status: converged (CI within +-$target of the ratio after $([ "$reps" -gt 5 ] && echo "$reps" || echo 5) pairs at least), budget (the"
	echo "budget ended first), too few / no data (fewer than two valid pairs)."
	[ -n "$ucx_note" ] && { echo; echo "$ucx_note"; }
	if [ -s "$tmp/refused" ]; then
		echo
		echo "Cases left out because rdmakit bench cannot run them:"
		sort -u "$tmp/refused" | sed 's/^/  /'
	fi
	if [ -s "$failed" ]; then
		echo
		echo "Failed runs (left out with their pair):"
		sed 's/^/  /' "$failed"
	fi
} >"$out/table.txt"
$STATS plot "$raw" "$out" >"$tmp/plots" 2>&1
cat "$tmp/plots" >>"$out/table.txt"
echo
cat "$out/table.txt"
echo "results in $out"
