#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rkblk (the rdmakit kernel module over `rdmakit memserver`) against the
# kernel's NVMe over Fabrics (nvme-rdma host, nvmet-rdma target over a brd RAM
# disk), on the same two Soft-RoCE guests and the same wire. A benchmark, not
# a test: it prints figures and ratios, it does not judge them.
#
# Usage: bench/vs-nvme-rdma.sh [--reps N] [--runtime SEC] [--size MiB]
#                              [--swap-mb MiB] [--stacks "rkblk nvme"]
#                              [--cases REGEX] [--out FILE] [--build DIR]
#   --reps N       repetitions of every case on each stack, interleaved
#                  (rkblk then nvme, nvme then rkblk, ...) (default 3)
#   --runtime SEC  fio run time of each run, after a 2 s ramp (default 10)
#   --size MiB     size of both disks: the brd RAM disk and the rkblk region
#                  (default 512); fio uses the first half
#   --swap-mb MiB  the swap workload (tests/kernel/swapcheck) writes this much
#                  in a cgroup with memory.max a third of it (default 96;
#                  swap-in is one synchronous read per fault, and a round trip
#                  between two TCG guests takes milliseconds)
#   --stacks LIST  which stacks to run (default "rkblk nvme"; "nvme" alone
#                  needs no module)
#   --cases REGEX  only the cases whose name matches (grep -E)
#   --out FILE     the table also goes there (default BUILD/vs-nvme-rdma.txt)
#
# Guest 1 (198.18.0.1) serves both: nvmet-rdma on port 4420 exporting
# /dev/ram0 (brd) and `rdmakit memserver` on 7471. Guest 2 attaches both with
# the same queue count (2, one per vCPU), queue depth (128), MTU (the wire's)
# and size. Cases: fio 4 KiB randread and randwrite at iodepth 1 and 32 (IOPS,
# completion latency p50 and p99 from --output-format=json), 128 KiB
# sequential read and write at iodepth 8 (MB/s), and the swap workload's run
# time with each disk as the only swap device. For each case: the median over
# the repetitions on each stack and the ratio rkblk/nvme of the medians with a
# 95% bootstrap confidence interval (both samples resampled, 2000 times).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
reps=3 runtime=10 size=512 swap_mb=96 stacks="rkblk nvme" cases="" out="" build="" inner=""
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift ;;
	--runtime) runtime=$2; shift ;;
	--size) size=$2; shift ;;
	--swap-mb) swap_mb=$2; shift ;;
	--stacks) stacks=$2; shift ;;
	--cases) cases=$2; shift ;;
	--out) out=$2; shift ;;
	--build) build=$2; shift ;;
	--inner) inner=$2; shift ;;
	-h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "vs-nvme-rdma.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_positive vs-nvme-rdma.sh number "$reps" "$runtime" "$size" "$swap_mb"
for s in $stacks; do
	case $s in
	rkblk | nvme) ;;
	*) echo "vs-nvme-rdma.sh: --stacks: unknown stack '$s' (rkblk, nvme)" >&2; exit 2 ;;
	esac
done
[ $((swap_mb + 64)) -le "$size" ] || { echo "vs-nvme-rdma.sh: --size must exceed --swap-mb by 64 MiB at least" >&2; exit 2; }

NQN=nqn.2026-01.org.rdmakit:ram0
SRV=198.18.0.1

# ---- guest 2: the runs ----
if [ "$inner" = client ]; then
	W=$build/vs-nvme-rdma.run
	RDMAKIT=$build/src/cli/rdmakit
	. "$root/tests/kernel/lib.sh"
	REMOTE_N=1 # command 1 (guest 1's setup) came from the host
	res=$W/results.txt
	: >"$res"
	# fio_run DEV NAME RW BS QD: one fio run; appends "NAME|STACK|iops|p50_us|p99_us|MBps".
	fio_run() {
		_f=$W/fio.json
		timeout $((runtime + 120)) fio --name="$2" --filename="$DEV" --direct=1 --ioengine=libaio \
			--rw="$3" --bs="$4" --iodepth="$5" --size=$((size / 2))M --time_based \
			--runtime="$runtime" --ramp_time=2 --output-format=json --output="$_f" >/dev/null 2>&1
		_rc=$?
		python3 - "$_f" "$2" "$STACK" "$_rc" >>"$res" <<'PY'
import json, sys
f, name, stack, rc = sys.argv[1:]
try:
    t = open(f).read()
    job = json.loads(t[t.index('{'):])["jobs"][0]
    d = job["read"] if job["read"]["io_bytes"] > 0 else job["write"]
    pct = d["clat_ns"].get("percentile", {})
    ok = rc == "0" and job["error"] == 0
    print("%s|%s|%.1f|%.1f|%.1f|%.2f|%s" % (name, stack, d["iops"],
          pct.get("50.000000", 0) / 1000, pct.get("99.000000", 0) / 1000,
          d["bw_bytes"] / 1e6, "ok" if ok else "failed(rc %s, error %s)" % (rc, job["error"])))
except Exception as e:
    print("%s|%s|0|0|0|0|failed(%s)" % (name, stack, e))
PY
		tail -n 1 "$res" | sed 's/^/  /'
	}
	# swap_run: the swap workload with DEV as the only swap device.
	swap_run() {
		# The same readahead for both: 32 pages per swap-in fault.
		echo 5 >/proc/sys/vm/page-cluster
		swapon "$DEV" 2>/dev/null || { echo "swap|$STACK|0|0|0|0|failed(swapon)" >>"$res"; return; }
		cg=/sys/fs/cgroup/bench
		mkdir -p $cg
		echo "$((swap_mb / 3))M" >$cg/memory.max
		t0=$(now)
		timeout 900 sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" "$3"' sh "$cg" \
			"$build/tests/kernel/swapcheck" "$swap_mb" >"$W/swap.out" 2>&1
		_rc=$?
		t=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
		oom=$(awk '$1 == "oom_kill" { print $2 }' $cg/memory.events)
		swapped=$(($(cat $cg/memory.swap.peak 2>/dev/null || cat $cg/memory.swap.current) / 1048576))
		rmdir $cg
		swapoff "$DEV"
		st=ok
		[ $_rc -eq 0 ] || st="failed(swapcheck exit $_rc after $t s: $(tail -n 1 "$W/swap.out"); oom_kill $oom, $swapped MiB in swap then)"
		# The "IOPS" column of the swap row is 1/time (higher is better).
		echo "swap-${swap_mb}M|$STACK|$(awk -v t="$t" 'BEGIN { printf "%.5f", 1 / t }')|$t|0|0|$st" >>"$res"
		tail -n 1 "$res" | sed 's/^/  /'
		[ "$st" = ok ] || sed 's/^/    /' /proc/swaps
	}
	DEV_rkblk="" DEV_nvme=""
	echo "== guest 2: attaching"
	case " $stacks " in *" nvme "*)
		modprobe nvme_rdma || exit 1
		echo "transport=rdma,traddr=$SRV,trsvcid=4420,nqn=$NQN,nr_io_queues=2,queue_size=128,hostnqn=nqn.2014-08.org.nvmexpress:uuid:$(cat /proc/sys/kernel/random/uuid)" >/dev/nvme-fabrics ||
			{ echo "vs-nvme-rdma.sh: nvme-rdma connect failed"; exit 1; }
		i=0
		while [ -z "$DEV_nvme" ] && [ $i -lt 100 ]; do
			# The namespace's disk (nvmeXnY), not its hidden per-path
			# device (nvmeXcZnY) under native multipath.
			b=$(ls /sys/block | grep -E '^nvme[0-9]+n[0-9]+$' | head -n 1)
			[ -n "$b" ] && DEV_nvme=/dev/$b
			i=$((i + 1))
			sleep 0.2
		done
		[ -n "$DEV_nvme" ] || { echo "vs-nvme-rdma.sh: no nvme-rdma disk appeared"; exit 1; }
		# queue_count: the I/O queues and the admin queue; sqsize: depth - 1.
		ctl=$(ls -d /sys/class/nvme/nvme* | head -n 1)
		echo "  nvme-rdma: $DEV_nvme, $(($(cat /sys/block/${DEV_nvme#/dev/}/size) / 2048)) MiB, queues $(($(cat "$ctl/queue_count") - 1)), queue_depth $(($(cat "$ctl/sqsize") + 1))"
		;;
	esac
	case " $stacks " in *" rkblk "*)
		insmod "$build/kernel-$(uname -r)/rkblk.ko" || exit 1
		attach_disk "$SRV" --size "${size}M" --queues 2 --queue-depth 128 || exit 1
		DEV_rkblk=/dev/$DISK
		echo "  rkblk: $DEV_rkblk, $(($(attr "$DISK" size) / 1048576)) MiB, queues $(attr "$DISK" queues), queue_depth $(attr "$DISK" queue_depth)"
		;;
	esac
	echo "  wire: eth0 mtu $(cat /sys/class/net/eth0/mtu), rxe0 active_mtu $(rdma link show rxe0/1 >/dev/null 2>&1 && ibv_devinfo -d rxe0 | awk '/active_mtu/ { print $2 }')"
	rep=1
	while [ $rep -le "$reps" ]; do
		# Interleaved: odd repetitions rkblk first, even ones nvme first.
		order=$stacks
		[ $((rep % 2)) -eq 0 ] && order=$(echo "$stacks" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
		echo "== repetition $rep of $reps (order: $order)"
		for c in randread-4k-qd1:randread:4k:1 randread-4k-qd32:randread:4k:32 \
			randwrite-4k-qd1:randwrite:4k:1 randwrite-4k-qd32:randwrite:4k:32 \
			read-128k-qd8:read:128k:8 write-128k-qd8:write:128k:8 "swap-${swap_mb}M:swap"; do
			name=${c%%:*}
			bench_want "$name" || continue
			for STACK in $order; do
				DEV=$(eval echo "\$DEV_$STACK")
				if [ "$name" = "swap-${swap_mb}M" ]; then
					# mkswap again: fio wrote over the signature.
					mkswap "$DEV" >/dev/null 2>&1
					swap_run
				else
					IFS=: read -r _ rw bs qd <<-EOF
					$c
					EOF
					fio_run "$DEV" "$name" "$rw" "$bs" "$qd"
				fi
			done
		done
		rep=$((rep + 1))
	done
	[ -n "$DEV_rkblk" ] && "$RDMAKIT" blk detach "${DEV_rkblk#/dev/}"
	[ -n "$DEV_nvme" ] && for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = rdma ] && echo 1 >"$c/delete_controller"
	done
	remote 60 finish
	exit 0
fi

# ---- guest 1: serves both, through the kernel tests' agent ----
if [ "$inner" = server ]; then
	W=$build/vs-nvme-rdma.run
	exec sh "$root/tests/kernel/server.sh" "$build/src/cli/rdmakit" "$W" 1800
fi

# ---- on the host: build, boot the two guests, then the statistics ----
build=${build:-$root/build}
out=${out:-$build/vs-nvme-rdma.txt}
bash -c '. "$1/scripts/deps.sh" && rk_install_packages $RDMAKIT_BUILD_PACKAGES $RDMAKIT_KERNEL_PACKAGES' sh "$root" ||
	{ echo "vs-nvme-rdma.sh: installing the packages it needs failed" >&2; exit 1; }
bash -c '. "$1/scripts/deps.sh" && rk_build "$1" "$2" >/dev/null' sh "$root" "$build" || { echo "vs-nvme-rdma.sh: build failed" >&2; exit 1; }
"$root/scripts/softroce" setup || exit 1
case " $stacks " in *" rkblk "*)
	RDMAKIT_KMOD_BUILD=$build "$root/scripts/kmod.sh" >/dev/null || { echo "vs-nvme-rdma.sh: module build failed" >&2; exit 1; } ;;
esac
W=$build/vs-nvme-rdma.run
rm -rf "$W" && mkdir -p "$W" || exit 1
# Guest 1's part is sent through the agent as guest 2's first command: the
# nvmet target over brd and the memserver.
cat >"$W/cmd.1" <<EOF
modprobe nvmet_rdma && modprobe brd rd_nr=1 rd_size=$((size * 1024)) || return 1
mount -t configfs none /sys/kernel/config 2>/dev/null
N=$NQN C=/sys/kernel/config/nvmet
mkdir \$C/subsystems/\$N && echo 1 >\$C/subsystems/\$N/attr_allow_any_host &&
mkdir \$C/subsystems/\$N/namespaces/1 &&
echo -n /dev/ram0 >\$C/subsystems/\$N/namespaces/1/device_path &&
echo 1 >\$C/subsystems/\$N/namespaces/1/enable &&
mkdir \$C/ports/1 && echo rdma >\$C/ports/1/addr_trtype && echo ipv4 >\$C/ports/1/addr_adrfam &&
echo $SRV >\$C/ports/1/addr_traddr && echo 4420 >\$C/ports/1/addr_trsvcid &&
ln -s \$C/subsystems/\$N \$C/ports/1/subsystems/\$N || return 1
echo "nvmet-rdma: \$N on $SRV:4420 over /dev/ram0 ($size MiB)"
case " $stacks " in *" rkblk "*) ms_start bench --max-size $((size * 2))M --keep 5 ;; esac
EOF
start=$(date -u '+%Y-%m-%d %H:%M UTC')
t0=$(date +%s)
args="--build $build --reps $reps --runtime $runtime --size $size --swap-mb $swap_mb"
# The client first waits for guest 1's setup (command 1) through remote().
"$root/scripts/softroce" run2 --timeout $((reps * 1200 + 600)) -- \
	sh "$here/vs-nvme-rdma.sh" --inner server $args -- \
	sh -c 'W=$1/vs-nvme-rdma.run; . "$2/tests/kernel/lib.sh"; REMOTE_N=1
		wait_file "$W/ack.1" 120 && sed "s/^/  [guest1] /" "$W/out.1" && [ "$(cat "$W/ack.1")" = 0 ] ||
			{ echo "guest 1 setup failed"; cat "$W/out.1" 2>/dev/null; REMOTE_N=1; remote 30 finish; exit 1; }
		shift 2; exec "$@"' sh "$build" "$root" "$here/vs-nvme-rdma.sh" --inner client $args --stacks "$stacks" ${cases:+--cases "$cases"}
rc=$?
echo "vs-nvme-rdma.sh: guests done in $(($(date +%s) - t0)) s (run2 exit $rc)"
[ -s "$W/results.txt" ] || { echo "vs-nvme-rdma.sh: no results" >&2; exit 1; }
python3 - "$W/results.txt" "$out" "$start" "$reps" "$runtime" "$size" <<'PY'
import os, random, statistics, sys
path, out, start, reps, runtime, size = sys.argv[1:]
rows = {}
order = []
failed = []
for line in open(path):
    f = line.rstrip("\n").split("|")
    if len(f) < 7:
        continue
    name, stack = f[0], f[1]
    if f[6] != "ok":
        failed.append("%s on %s: %s" % (name, stack, f[6]))
        continue
    if name not in rows:
        rows[name] = {}
        order.append(name)
    rows[name].setdefault(stack, []).append([float(x) for x in f[2:6]])

def ratio_ci(a, b, n=2000):
    rnd = random.Random(1)
    rs = []
    for _ in range(n):
        ma = statistics.median(rnd.choice(a) for _ in a)
        mb = statistics.median(rnd.choice(b) for _ in b)
        if mb > 0:
            rs.append(ma / mb)
    rs.sort()
    if not rs:
        return None
    return rs[int(0.025 * (len(rs) - 1))], rs[int(0.975 * (len(rs) - 1))]

def fmt_ratio(a, b):
    if not a or not b or statistics.median(b) == 0:
        return "n/a"
    r = statistics.median(a) / statistics.median(b)
    ci = ratio_ci(a, b)
    return "%.2f [%.2f, %.2f]" % (r, ci[0], ci[1]) if ci else "%.2f" % r

lines = []
lines.append("rkblk vs nvme-rdma, two Soft-RoCE guests (rxe over virtio-net on a QEMU " + os.environ.get("SOFTROCE_WIRE", "unix") + " wire, QEMU TCG, 2 vCPUs each), %s" % start)
lines.append("%s repetitions interleaved, fio %s s runs (libaio, direct, 2 s ramp), disks %s MiB, 2 queues, depth 128" % (reps, runtime, size))
lines.append("medians; ratio = rkblk/nvme-rdma of the medians [95% bootstrap CI]; latency = fio completion latency")
lines.append("")
hdr = "%-18s %-22s %-22s %-20s %-24s" % ("case", "rkblk", "nvme-rdma", "ratio (throughput)", "p50 ratio (latency)")
lines.append(hdr)
for name in order:
    r = rows[name]
    a = r.get("rkblk", [])
    b = r.get("nvme", [])
    def desc(s):
        if not s:
            return "-"
        med = [statistics.median(x[i] for x in s) for i in range(4)]
        if name.startswith("swap"):
            return "%.1f s" % med[1]
        if "128k" in name:
            return "%.1f MB/s" % med[3]
        return "%.0f IOPS %.0f/%.0f us" % (med[0], med[1], med[2])
    thr = fmt_ratio([x[0] for x in a], [x[0] for x in b])
    lat = "-" if name.startswith("swap") or "128k" in name else fmt_ratio([x[1] for x in a], [x[1] for x in b])
    lines.append("%-18s %-22s %-22s %-20s %-24s" % (name, desc(a), desc(b), thr, lat))
lines.append("")
lines.append("4 KiB rows: IOPS and p50/p99 completion latency; 128 KiB rows: MB/s; swap row: the workload's")
lines.append("run time (its throughput ratio is the inverse time ratio: above 1.0 means rkblk was faster).")
lines.append("Runs per case and stack: " + ", ".join("%s %s/%s" % (n, len(rows[n].get("rkblk", [])), len(rows[n].get("nvme", []))) for n in order))
for f in failed:
    lines.append("FAILED run (left out): " + f)
text = "\n".join(lines) + "\n"
sys.stdout.write("\n" + text)
open(out, "w").write(text)
print("table written to %s" % out)
PY
exit $rc
