#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Event-rate ceiling (issue 5, benchmark 4): `ttftrace record` on a paced
# synthetic event source (bench/storm.c: thread pairs doing request/response
# round trips over traced loopback TCP connections, or over pipes with
# MODE=pipe), at rising rates and then flat out with more and more pairs,
# with the default ring buffer and then smaller ones (-b); and the demo's
# saturation load. Prints per row the rate recorded, the records lost (from
# ttftrace's last line) and what `report` makes of them.
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

DURATION=${DURATION:-4}
MODE=${MODE:-tcp}
RATES=${RATES:-10000 20000 40000}
PAIRS=${PAIRS:-2 8 32}
RINGBUFS=${RINGBUFS:-4M 1M 256K 64K}
SAT_CONNS=${SAT_CONNS:-8}

bench_setup ceiling
need_root
need_built
bpf_stats_on
STORM=$(bench_prog storm) || exit 1

# row LABEL RINGBUF: traces the storm or the demo (STORM_ARGS / DEMO=1)
# and prints one line of the table
row() {
	local label=$1 rb=$2 out=$BENCH_TMP/c.ttft c0 c1 b0 b1 t0 t1 secs
	local events lost trips rep rbargs=()
	[ "$rb" != default ] && rbargs=(-b "$rb")
	if [ -n "${DEMO:-}" ]; then
		start_server --prefill-us 0 -t 64 -i 0 -w $((SAT_CONNS * 2)) \
			--batch $((SAT_CONNS * 2))
		start_ttftrace "$out" -p "$SERVER_PID" "${rbargs[@]}"
	else
		"$STORM" "${STORM_ARGS[@]}" -d "$DURATION" >"$BENCH_TMP/storm.out" &
		SERVER_PID=$!
		BENCH_PIDS+=("$SERVER_PID")
		wait_for "grep -q ready $BENCH_TMP/storm.out" 10 ||
			die "storm did not start"
		start_ttftrace "$out" -p "$SERVER_PID" "${rbargs[@]}"
	fi
	c0=$(cpu_ns "$TRACER_PID")
	b0=$(bpf_ns "$TRACER_PID")
	t0=$(now_ns)
	if [ -n "${DEMO:-}" ]; then
		"$LOADGEN" -p "$PORT" -c "$SAT_CONNS" -d "$DURATION" \
			-n 1000000000 --tokens 64 >"$BENCH_TMP/storm.out" 2>&1
		trips=$(loadgen_summary "$BENCH_TMP/storm.out" |
			awk '{ printf "%.0f tok/s", $2 }')
	else
		kill -USR1 "$SERVER_PID"
		# the storm says what it did, then waits to be let go: the
		# tracer's CPU is read while the tracer still runs
		sleep "$DURATION"
		wait_for "grep -q 'round trips' $BENCH_TMP/storm.out" 10
		trips=$(sed -n 's/.*(\([0-9]*\)\/s,.*/\1 rt\/s/p' \
			"$BENCH_TMP/storm.out")
	fi
	t1=$(now_ns)
	c1=$(cpu_ns "$TRACER_PID")
	b1=$(bpf_ns "$TRACER_PID")
	bpf_stats_guard
	stop_tracer
	if [ -n "${DEMO:-}" ]; then
		stop_server
	else
		kill -USR1 "$SERVER_PID"
		wait "$SERVER_PID" 2>/dev/null
	fi
	read -r events lost <<<"$(ttftrace_counts "$out.log")"
	events=${events:-0}
	lost=${lost:-0}
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')
	rep=$("$TTFTRACE" report "$out" 2>/dev/null |
		awk '/^requests:/ { r = $2; c = $4; sub(/,/, "", c) }
		     END { printf "%s/%s", c, r }')
	awk -v l="$label" -v rb="$rb" -v t="$trips" -v e="$events" \
		-v lo="$lost" -v s="$secs" -v cpu=$(((c1 - c0) + (b1 - b0))) \
		-v rq="$rep" 'BEGIN {
		printf "  %-24s %7s %13s %10.0f %9d %6.1f%% %6.2f %15s\n",
		       l, rb, t, e / s, lo, e + lo ? 100 * lo / (e + lo) : 0,
		       cpu / 1e9 / s, rq
	}' | tee -a "$BENCH_TMP/table"
	rm -f "$out" "$out.old"
}

echo "ttftrace event-rate ceiling: $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  storm: $MODE round trips (request + response + their switches), ${DURATION} s per row"
printf "  %-24s %7s %13s %10s %9s %7s %6s %15s\n" load ringbuf achieved \
	events/s lost lost% cores complete/reqs
for r in $RATES; do
	STORM_ARGS=(-m "$MODE" -p 2 -r "$r")
	row "paced $r rt/s, 2 pairs" default
done
for p in $PAIRS; do
	STORM_ARGS=(-m "$MODE" -p "$p" -r 0)
	row "flat out, $p pairs" default
done
for rb in $RINGBUFS; do
	STORM_ARGS=(-m "$MODE" -p 8 -r 0)
	row "flat out, 8 pairs" "$rb"
done
for rb in default 64K; do
	DEMO=1 row "demo saturation, -c $SAT_CONNS" "$rb"
done
echo
echo "  cores: ttftrace's CPU (threads + BPF programs); complete/reqs: what report makes of the recording"
awk '/ default / && $(NF - 3) == 0 && $(NF - 4) > best {
	best = $(NF - 4)
	what = $0
}
END {
	sub(/^ +/, "", what)
	printf "  highest rate recorded with zero drops (default 16M ring buffer): %.0f events/s\n    (%s)\n", best, what
}' "$BENCH_TMP/table"
echo "  past it, records are dropped, counted in the recording (report: \"drops: N lost records\")"
echo "  and every request overlapping a loss is marked incomplete."
bpf_stats_report
