#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Overhead on the traced server (issue 5, benchmark 1). The demo server with
# no injected prefill under the load generator, interleaved in one run:
# untraced, traced by `ttftrace record`, traced by the equivalent bpftrace
# script (bench/ttftrace.bt), REPS times each, under two loads:
#   realistic:  RATE req/s paced, TOKENS tokens at TOKEN_US per token;
#   saturation: closed loop, SAT_CONNS connections, no decode delay.
# Prints medians per tracer and the ratios against untraced of the same rep.
# Tracer CPU = the tracer's threads (schedstat) + its BPF programs' run time
# (fdinfo run_time_ns, kernel.bpf_stats_enabled=1 for the run, restored).
# TTFTRACE_B=path/to/other/ttftrace adds it to the interleave as ttftrace_b:
# an A/B test of a change.
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

REPS=${REPS:-5}
DURATION=${DURATION:-5}
SAT_DURATION=${SAT_DURATION:-4}
RATE=${RATE:-100}
TOKENS=${TOKENS:-64}
TOKEN_US=${TOKEN_US:-20000}
# each connection paced at one request per CONNS/RATE s: longer than a
# request lasts (TOKENS x TOKEN_US), so the rate is met
CONNS=${CONNS:-$((RATE * 2))}
SAT_CONNS=${SAT_CONNS:-8}
# SERVER=python: the Python server (bench/lib.sh) instead of the demo
if [ "$SERVER" = python ]; then
	TOKENS=$PY_TOKENS
	LOADS=${LOADS:-saturation}
fi
LOADS=${LOADS:-realistic saturation}
MODES=${MODES:-untraced ttftrace bpftrace}
if [ -n "${TTFTRACE_B:-}" ]; then
	[ -x "$TTFTRACE_B" ] || die "TTFTRACE_B=$TTFTRACE_B is not executable"
	MODES="$MODES ttftrace_b"
fi

bench_setup overhead
need_root
need_built
if ! command -v bpftrace >/dev/null; then
	echo "overhead: bpftrace not installed (tools/deps.sh): its column is skipped" >&2
	MODES=${MODES//bpftrace/}
fi
# BPF_STATS=0 leaves the stats off (they cost every BPF program run a
# clock read or two): the traced runs are then cheaper and bpf reads 0
[ "${BPF_STATS:-1}" = 1 ] && bpf_stats_on
RESULTS=$BENCH_TMP/results

# trial LOAD MODE REP: appends one line to $RESULTS
trial() {
	local load=$1 mode=$2 rep=$3 lg=$BENCH_TMP/loadgen.out
	local c0=0 c1=0 b0=0 b1=0 t0 t1 counts="0 0" lgargs
	if [ "$SERVER" = python ]; then
		start_py_server --tokens "$TOKENS" --work-us "$PY_WORK_US"
		if [ "$load" = realistic ]; then
			lgargs=(-c "$CONNS" --rate "$RATE" -d "$DURATION")
		else
			lgargs=(-c "$SAT_CONNS" -d "$SAT_DURATION")
		fi
	elif [ "$load" = realistic ]; then
		start_server --prefill-us 0 -t "$TOKENS" -i "$TOKEN_US" \
			-w $((CONNS + 8)) --batch $((CONNS + 8))
		lgargs=(-c "$CONNS" --rate "$RATE" -d "$DURATION")
	else
		start_server --prefill-us 0 -t "$TOKENS" -i 0 \
			-w $((SAT_CONNS * 2)) --batch $((SAT_CONNS * 2))
		lgargs=(-c "$SAT_CONNS" -d "$SAT_DURATION")
	fi
	case $mode in
	ttftrace)
		start_ttftrace "$BENCH_TMP/t.ttft" -p "$SERVER_PID" ;;
	ttftrace_b)
		TTFTRACE=$TTFTRACE_B start_ttftrace "$BENCH_TMP/t.ttft" \
			-p "$SERVER_PID" ;;
	bpftrace)
		start_bpftrace "$BENCH_TMP/b.txt" "$SERVER_PID" "$PORT" ;;
	esac
	if [ "$mode" != untraced ]; then
		c0=$(cpu_ns "$TRACER_PID")
		b0=$(bpf_ns "$TRACER_PID")
	fi
	t0=$(now_ns)
	"$LOADGEN" -p "$PORT" "${lgargs[@]}" -n 1000000000 --tokens "$TOKENS" \
		>"$lg" 2>&1 || echo "overhead: loadgen failed ($load, $mode)" >&2
	t1=$(now_ns)
	if [ "$mode" != untraced ]; then
		c1=$(cpu_ns "$TRACER_PID")
		b1=$(bpf_ns "$TRACER_PID")
		bpf_stats_guard
		stop_tracer
	fi
	case $mode in
	ttftrace*) counts=$(ttftrace_counts "$BENCH_TMP/t.ttft.log") ;;
	bpftrace) counts=$(bpftrace_counts "$BENCH_TMP/b.txt") ;;
	esac
	stop_server
	rm -f "$BENCH_TMP/t.ttft" "$BENCH_TMP/b.txt"
	echo "$load $mode $rep $(loadgen_summary "$lg") $((c1 - c0))" \
		"$((b1 - b0)) $((t1 - t0)) ${counts:-0 0}" >>"$RESULTS"
	tail -n 1 "$RESULTS" | awk '{ printf "  %-10s rep %d %-8s %8.0f tok/s  p99 %7.2f ms  tracer %.3f cores\n", $1, $3, $2, $5, $7, ($10 + $11) / $12 }' >&2
}

echo "ttftrace overhead benchmark: $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$SERVER" = python ] &&
	echo "  server: bench/py_sse_server.py (uvicorn), $TOKENS tokens of ${PY_WORK_US} us of Python each"
echo "  realistic:  $RATE req/s paced over $CONNS connections, $TOKENS tokens at $((TOKEN_US / 1000)) ms/token, no prefill, ${DURATION} s"
echo "  saturation: closed loop, $SAT_CONNS connections, $TOKENS tokens, no prefill or decode delay, ${SAT_DURATION} s"
echo "  interleaved: $MODES; $REPS reps; medians; ratios against untraced of the same rep"
for rep in $(seq "$REPS"); do
	for load in $LOADS; do
		for mode in $MODES; do
			trial "$load" "$mode" "$rep"
		done
	done
done

python3 - "$RESULTS" <<'EOF'
import statistics as st
import sys

F = ("load mode rep reqs toks p50 p99 ok failed cpu_ns bpf_ns wall_ns "
     "events lost").split()
rows = [dict(zip(F, l.split())) for l in open(sys.argv[1])]
for r in rows:
    for k in F[2:]:
        r[k] = float(r[k])


def med(xs):
    return st.median(xs) if xs else float("nan")


def verdict(ok):
    return "MET" if ok else "MISSED"


for load in ("realistic", "saturation"):
    R = [r for r in rows if r["load"] == load]
    if not R:
        continue
    modes = [m for m in ("untraced", "ttftrace", "bpftrace", "ttftrace_b")
             if any(r["mode"] == m for r in R)]
    print(f"\n({'a' if load == 'realistic' else 'b'}) {load} load")
    print(f"  {'':10} {'tok/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'cores':>7} {'user':>7} {'bpf':>7} {'events/s':>9} "
          f"{'ns/event':>9} {'lost':>6} {'failed':>6}")
    m_cores, m_nsev = {}, {}
    for m in modes:
        M = [r for r in R if r["mode"] == m]
        cores = [(r["cpu_ns"] + r["bpf_ns"]) / r["wall_ns"] for r in M]
        user = [r["cpu_ns"] / r["wall_ns"] for r in M]
        bpf = [r["bpf_ns"] / r["wall_ns"] for r in M]
        evs = [r["events"] / r["wall_ns"] * 1e9 for r in M]
        nsev = [(r["cpu_ns"] + r["bpf_ns"]) / r["events"]
                for r in M if r["events"]]
        m_cores[m], m_nsev[m] = med(cores), med(nsev)
        print(f"  {m:10} {med([r['toks'] for r in M]):9.0f} "
              f"{med([r['p50'] for r in M]):8.2f} "
              f"{med([r['p99'] for r in M]):8.2f} "
              + (f"{med(cores):7.3f} {med(user):7.3f} {med(bpf):7.3f} "
                 f"{med(evs):9.0f} {med(nsev):9.0f} "
                 if m != "untraced" else f"{'-':>7} {'-':>7} {'-':>7} "
                 f"{'-':>9} {'-':>9} ")
              + f"{sum(r['lost'] for r in M):6.0f} "
              f"{sum(r['failed'] for r in M):6.0f}")
    base = {r["rep"]: r for r in R if r["mode"] == "untraced"}
    infl, loss = {}, {}
    for m in modes[1:]:
        pairs = [(r, base[r["rep"]]) for r in R
                 if r["mode"] == m and r["rep"] in base]
        i = [r["p99"] / b["p99"] - 1 for r, b in pairs]
        l = [1 - r["toks"] / b["toks"] for r, b in pairs]
        infl[m], loss[m] = med(i), med(l)
        print(f"  {m} vs untraced, per rep: p99 TTFT {med(i):+.1%} "
              f"(reps {min(i):+.1%} .. {max(i):+.1%}), throughput "
              f"{-med(l):+.1%} (reps {-max(l):+.1%} .. {-min(l):+.1%})")
    # TTFTRACE_B: the two builds against each other, rep by rep (the
    # untraced runs of a shared machine move more than they differ)
    if "ttftrace" in modes and "ttftrace_b" in modes:
        A = {r["rep"]: r for r in R if r["mode"] == "ttftrace"}
        pairs = [(A[r["rep"]], r) for r in R
                 if r["mode"] == "ttftrace_b" and r["rep"] in A]
        t = [a["toks"] / b["toks"] for a, b in pairs]
        c = [(a["cpu_ns"] + a["bpf_ns"]) / a["wall_ns"] /
             ((b["cpu_ns"] + b["bpf_ns"]) / b["wall_ns"])
             for a, b in pairs if b["cpu_ns"] + b["bpf_ns"]]
        if t and c:
            print(f"  ttftrace / ttftrace_b, per rep: throughput "
                  f"x{med(t):.3f} ({min(t):.3f} .. {max(t):.3f}), "
                  f"tracer cores x{med(c):.3f} ({min(c):.3f} .. "
                  f"{max(c):.3f})")
    if "ttftrace" not in modes:
        continue
    lost = sum(r["lost"] for r in R if r["mode"] == "ttftrace")
    print("  targets:")
    if load == "realistic":
        print(f"    tracer CPU {m_cores['ttftrace']:.3f} cores <= 0.03: "
              f"{verdict(m_cores['ttftrace'] <= 0.03)}")
        print(f"    tracer CPU {m_nsev['ttftrace']:.0f} ns/event <= 500: "
              f"{verdict(m_nsev['ttftrace'] <= 500)}")
        print(f"    p99 TTFT inflation {infl['ttftrace']:+.1%} <= 2%: "
              f"{verdict(infl['ttftrace'] <= 0.02)}")
    else:
        print(f"    throughput loss {loss['ttftrace']:.1%} <= 5%: "
              f"{verdict(loss['ttftrace'] <= 0.05)}")
        if "bpftrace" in loss:
            print(f"    less than bpftrace's {loss['bpftrace']:.1%}: "
                  f"{verdict(loss['ttftrace'] < loss['bpftrace'])}")
        print(f"    p99 TTFT inflation {infl['ttftrace']:+.1%} (no target)")
    print(f"    records lost by ttftrace: {lost:.0f} "
          f"({verdict(lost == 0)} zero drops)")
print("\ncores: tracer CPU / wall time (user: its threads, bpf: its programs' "
      "run time);\nns/event: that CPU / records it wrote. Noisy on a shared "
      "2-core machine: read the per-rep spread.")
EOF
bpf_stats_report
