#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What the CUDA uprobes cost (issue 4): the demo server on the stub GPU
# (demo-server --gpu: KERNELS launches and one cuStreamSynchronize per
# iteration) under a closed-loop load, interleaved REPS times:
#   untraced
#   sync   ttftrace record --gpu-probes=sync (the default: waits, graphs)
#   all    ttftrace record --gpu-probes=all  (every kernel launch too)
# Prints, per mode, the medians of: throughput (req/s, tok/s) and client
# TTFT p50/p99 from loadgen; the tracer's CPU from /proc/PID/stat (utime +
# stime, in cores); its BPF programs' run time (fdinfo run_time_ns,
# kernel.bpf_stats_enabled=1 for the run, restored; BPF_STATS=0 leaves it
# off); the server's CPU per request (schedstat of its threads: a uprobe's
# trap and program run in the probed thread, so that is where their cost
# shows); the records written per second and the CUDA calls among them;
# records lost. Then each traced mode against the untraced trial of the
# same repetition.
# Then the cost per probed call, where the server's noise hides it:
# cudademo's loop of STEPS x (a launch of a 0 ns kernel + a spin sync), no
# launch overhead, timed by itself, interleaved the same way, with
# --gpu-probes=none as well: sync minus none is a sync's pair of uprobes
# (entry, return), all minus sync a launch's, none minus untraced the rest
# of the tracing (the stub's device thread wakes at every launch). Not a
# test: nothing passes or fails.
# TTFTRACE_B=/other/ttftrace: an A/B of two builds, interleaved: sync_b and
# all_b (and none_b in the per-call loop) are that build's sync and all.
# Knobs: REPS (3), DURATION (4 s), CONNS (8), TOKENS (16), KERNELS (16),
# PREFILL_US (2000), TOKEN_US (1000), LAUNCH_NS (stub launch overhead,
# 4000), SYNC (spin|block), MODES ("untraced sync all", with TTFTRACE_B
# "untraced sync all sync_b all_b"), STEPS (50000).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

REPS=${REPS:-3}
DURATION=${DURATION:-4}
CONNS=${CONNS:-8}
TOKENS=${TOKENS:-16}
KERNELS=${KERNELS:-16}
PREFILL_US=${PREFILL_US:-2000}
TOKEN_US=${TOKEN_US:-1000}
LAUNCH_NS=${LAUNCH_NS:-4000}
SYNC=${SYNC:-spin}
MICRO_MODES="untraced none sync all"
if [ -n "${TTFTRACE_B:-}" ]; then
	[ -x "$TTFTRACE_B" ] || die "TTFTRACE_B=$TTFTRACE_B is not executable"
	MODES=${MODES:-untraced sync all sync_b all_b}
	MICRO_MODES="$MICRO_MODES none_b sync_b all_b"
fi
MODES=${MODES:-untraced sync all}
STEPS=${STEPS:-50000}
CUDADEMO=$OUTPUT/tools/cudademo

bench_setup gpu_probes
need_root
need_built
if [ ! -e "$OUTPUT/tools/libcuda.so.1" ] || [ ! -x "$CUDADEMO" ]; then
	die "$OUTPUT/tools/libcuda.so.1 or cudademo missing: run make first"
fi
[ "${BPF_STATS:-1}" = 1 ] && bpf_stats_on
RESULTS=$BENCH_TMP/results
CLK_TCK=$(getconf CLK_TCK)

# stat_ns PID: utime + stime of PID from /proc/PID/stat, in ns
stat_ns() {
	sed 's/.*) //' /proc/"$1"/stat 2>/dev/null |
		awk -v hz="$CLK_TCK" '{ printf "%d\n", ($12 + $13) * 1e9 / hz }'
}

# tracer MODE: the build that records MODE (TTFTRACE_B for MODE_b)
tracer() {
	case $1 in
	*_b) echo "$TTFTRACE_B" ;;
	*) echo "$TTFTRACE" ;;
	esac
}

# cuda_calls FILE.ttft: CUDA calls recorded (the report's gpu tables)
cuda_calls() {
	"$TTFTRACE" report --json "$1" 2>/dev/null | python3 -c '
import json, sys
try:
    g = json.load(sys.stdin).get("gpu") or {}
except ValueError:
    g = {}
print(sum(r["count"] for r in g.get("cuda_calls", [])))'
}

# trial MODE REP: appends one line to $RESULTS
trial() {
	local mode=$1 rep=$2 lg=$BENCH_TMP/loadgen.out dev
	local c0=0 c1=0 s0=0 s1=0 b0=0 b1=0 t0 t1 calls=0 counts="0 0"
	dev=$BENCH_TMP/nvidia0.$rep.$mode
	export STUBCUDA_DEVICE=$dev STUBCUDA_LAUNCH_NS=$LAUNCH_NS
	start_server --gpu --gpu-sync "$SYNC" --kernels-per-step "$KERNELS" \
		--prefill-us "$PREFILL_US" -i "$TOKEN_US" -t "$TOKENS" \
		-w $((CONNS * 2)) --batch "$CONNS"
	unset STUBCUDA_DEVICE STUBCUDA_LAUNCH_NS
	if [ "$mode" != untraced ]; then
		TTFTRACE=$(tracer "$mode") start_ttftrace "$BENCH_TMP/t.ttft" \
			-p "$SERVER_PID" --gpu-device "$dev" \
			--gpu-probes "${mode%_b}"
		c0=$(stat_ns "$TRACER_PID")
		b0=$(bpf_ns "$TRACER_PID")
	fi
	s0=$(cpu_ns "$SERVER_PID")
	t0=$(now_ns)
	"$LOADGEN" -p "$PORT" -c "$CONNS" -d "$DURATION" -n 1000000000 \
		--tokens "$TOKENS" >"$lg" 2>&1 ||
		echo "gpu_probes: loadgen failed ($mode)" >&2
	t1=$(now_ns)
	s1=$(cpu_ns "$SERVER_PID")
	if [ "$mode" != untraced ]; then
		c1=$(stat_ns "$TRACER_PID")
		b1=$(bpf_ns "$TRACER_PID")
		stop_tracer
		counts=$(ttftrace_counts "$BENCH_TMP/t.ttft.log")
		calls=$(cuda_calls "$BENCH_TMP/t.ttft")
	fi
	stop_server
	rm -f "$BENCH_TMP/t.ttft" "$dev"
	echo "$mode $rep $(loadgen_summary "$lg") $((c1 - c0)) $((b1 - b0))" \
		"$((s1 - s0)) $((t1 - t0)) ${counts:-0 0} ${calls:-0}" >>"$RESULTS"
	tail -n 1 "$RESULTS" | awk '{ printf "  rep %d %-8s %7.1f req/s  p99 %7.2f ms  tracer %.3f cores\n", $2, $1, $3, $6, $9 / $12 }' >&2
}

# micro MODE REP: appends "MODE REP NS_PER_STEP" to $MICRO, from
# cudademo's own timing of its loop (its "done" time)
micro() {
	local mode=$1 rep=$2 dev=$BENCH_TMP/micro.nvidia0 out=$BENCH_TMP/micro.out
	local cmd ms
	rm -f "$dev" "$out"
	mkfifo -m 0600 "$dev"
	# -w 300: the probes attach while it waits, before the loop
	cmd="env STUBCUDA_DEVICE=$dev STUBCUDA_LAUNCH_NS=0 $CUDADEMO -m spin"
	cmd="$cmd -n 1 -p 0 -d 0 -s $STEPS -w 300"
	if [ "$mode" = untraced ]; then
		$cmd >"$out" 2>&1
	else
		"$(tracer "$mode")" record -q -o "$BENCH_TMP/m.ttft" -G "$dev" \
			--gpu-probes "${mode%_b}" -c "exec $cmd >$out 2>&1" ||
			echo "gpu_probes: record of cudademo failed ($mode)" >&2
	fi
	ms=$(sed -n 's/.*, done \([0-9.]*\) ms$/\1/p' "$out")
	[ -n "$ms" ] || { echo "gpu_probes: cudademo: $(head -1 "$out")" >&2; ms=0; }
	echo "$mode $rep $(awk -v ms="$ms" -v n="$STEPS" \
		'BEGIN { printf "%.0f", ms * 1e6 / n }')" >>"$MICRO"
	rm -f "$BENCH_TMP/m.ttft" "$dev"
}

echo "ttftrace CUDA uprobe overhead: $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  demo-server --gpu --gpu-sync $SYNC: $KERNELS kernels + 1 sync per iteration, launch overhead $LAUNCH_NS ns,"
echo "  prefill $PREFILL_US us, decode $TOKEN_US us/token, $TOKENS tokens, batch $CONNS; loadgen closed loop, $CONNS connections, $DURATION s"
echo "  interleaved: $MODES; $REPS reps; medians; ratios against untraced of the same rep"
[ -n "${TTFTRACE_B:-}" ] && echo "  A: $TTFTRACE, B (*_b): $TTFTRACE_B"
for rep in $(seq "$REPS"); do
	for mode in $MODES; do
		trial "$mode" "$rep"
	done
done
MICRO=$BENCH_TMP/micro
: >"$MICRO"
for rep in $(seq "$REPS"); do
	for mode in $MICRO_MODES; do
		micro "$mode" "$rep"
	done
done

python3 - "$RESULTS" "$MICRO" "$STEPS" <<'EOF'
import statistics as st
import sys

F = ("mode rep reqs toks p50 p99 ok failed tracer_ns bpf_ns server_ns wall_ns "
     "events lost calls").split()
rows = [dict(zip(F, l.split())) for l in open(sys.argv[1])]
for r in rows:
    for k in F[1:]:
        r[k] = float(r[k])


def med(xs):
    return st.median(xs) if xs else float("nan")


modes = [m for m in ("untraced", "sync", "all", "sync_b", "all_b")
         if any(r["mode"] == m for r in rows)]
print(f"\n  {'':9} {'req/s':>7} {'tok/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
      f"{'tracer':>7} {'bpf':>7} {'srv us/req':>10} {'events/s':>9} "
      f"{'calls/s':>8} {'lost':>5} {'failed':>6}")
for m in modes:
    M = [r for r in rows if r["mode"] == m]
    srv = [r["server_ns"] / r["ok"] / 1e3 for r in M if r["ok"]]
    traced = m != "untraced"
    print(f"  {m:9} {med([r['reqs'] for r in M]):7.1f} "
          f"{med([r['toks'] for r in M]):8.0f} {med([r['p50'] for r in M]):7.2f} "
          f"{med([r['p99'] for r in M]):7.2f} " +
          (f"{med([r['tracer_ns'] / r['wall_ns'] for r in M]):7.3f} "
           f"{med([r['bpf_ns'] / r['wall_ns'] for r in M]):7.3f} " if traced
           else f"{'-':>7} {'-':>7} ") +
          f"{med(srv):10.0f} " +
          (f"{med([r['events'] / r['wall_ns'] * 1e9 for r in M]):9.0f} "
           f"{med([r['calls'] / r['wall_ns'] * 1e9 for r in M]):8.0f} " if traced
           else f"{'-':>9} {'-':>8} ") +
          f"{sum(r['lost'] for r in M):5.0f} {sum(r['failed'] for r in M):6.0f}")
base = {r["rep"]: r for r in rows if r["mode"] == "untraced"}
for m in modes[1:]:
    pairs = [(r, base[r["rep"]]) for r in rows if r["mode"] == m and r["rep"] in base]
    if not pairs:
        continue
    thr = [r["reqs"] / b["reqs"] - 1 for r, b in pairs]
    p99 = [r["p99"] / b["p99"] - 1 for r, b in pairs]
    srv = [(r["server_ns"] / r["ok"]) / (b["server_ns"] / b["ok"]) - 1
           for r, b in pairs if r["ok"] and b["ok"]]
    print(f"  {m} vs untraced, per rep: throughput {med(thr):+.1%} "
          f"(reps {min(thr):+.1%} .. {max(thr):+.1%}), p99 TTFT {med(p99):+.1%} "
          f"(reps {min(p99):+.1%} .. {max(p99):+.1%}), server CPU/request {med(srv):+.1%}")
M = {}
for line in open(sys.argv[2]):
    m, rep, ns = line.split()
    M.setdefault(m, []).append(float(ns))
if M:
    print(f"\n  per call: cudademo, {sys.argv[3]} x (launch + sync), ns per step, "
          "median (reps)")
    for m in ("untraced", "none", "sync", "all", "none_b", "sync_b", "all_b"):
        if m in M:
            print(f"  {m:9} {med(M[m]):7.0f}  ({' '.join(f'{v:.0f}' for v in M[m])})")
    for b in ("", "_b"):
        for what, x, y in (("the rest of the tracing", "none", "untraced"),
                           ("a sync's uprobe pair", "sync", "none"),
                           ("a launch's uprobes", "all", "sync")):
            x, y = x + b, y if y == "untraced" else y + b
            if x in M and y in M:
                # and the median of the differences within each rep
                d = [u - v for u, v in zip(M[x], M[y])]
                print(f"  {what}{' (B)' if b else ''}: "
                      f"{med(M[x]) - med(M[y]):.0f} ns a step; per rep "
                      f"{med(d):.0f} ({min(d):.0f} .. {max(d):.0f})")
print("\ntracer, bpf: cores (CPU time / wall time) of ttftrace's threads "
      "(/proc/PID/stat, tick granularity)\nand of its BPF programs; srv us/req: "
      "the demo server's CPU per request, uprobe traps included;\ncalls/s: CUDA "
      "calls recorded. Noisy on a shared 2-core machine: read the per-rep spread.")
EOF
