#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What data wakes cost (docs/design.md §4.4): bench/ipc_loop passes a token
# between two threads ROUNDTRIPS times per round, ROUNDS rounds, over an
# eventfd pair, a unix socket pair or a pipe pair: every hop a write to an
# object the other thread reads, which `ttftrace record` turns into a
# DATA_WAKE. Interleaved REPS times per MODE (eventfd unix pipe): untraced, traced
# (record -c), and traced by TTFTRACE_B (an A/B of two builds: one without
# data wakes gives their cost alone). Prints the median ns per round trip
# and the tracer's cost per hop (half a round trip's difference).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

ROUNDTRIPS=${ROUNDTRIPS:-50000}
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-5}
MODES=${MODES:-eventfd unix pipe}
# both threads on one CPU (CPU=all: wherever the scheduler puts them; a
# wakeup across CPUs of this VM costs tens of us, far more than a record)
CPU=${CPU:-0}
LOOP=$OUTPUT/bench/ipc_loop
PIN=(taskset -c "$CPU")
[ "$CPU" = all ] && PIN=()

bench_setup ipc_cost
need_root
[ -x "$LOOP" ] || die "$LOOP missing: run make first"
if [ -n "${TTFTRACE_B:-}" ]; then
	[ -x "$TTFTRACE_B" ] || die "TTFTRACE_B=$TTFTRACE_B is not executable"
fi

# run MODE KIND: one round set, its per-round ns appended to KIND-MODE
run() {
	local mode=$1 kind=$2 bin out=$BENCH_TMP/$2-$1
	case $kind in
	untraced) "${PIN[@]}" "$LOOP" "$mode" "$ROUNDTRIPS" "$ROUNDS" >>"$out" ;;
	*)
		bin=$TTFTRACE
		[ "$kind" = traced_b ] && bin=$TTFTRACE_B
		"$bin" record -o "$BENCH_TMP/$kind.ttft" \
			-c "${PIN[*]} $LOOP $mode $ROUNDTRIPS $ROUNDS >>$out" \
			2>"$BENCH_TMP/$kind.log" ||
			die "$kind record failed: $(tail -1 "$BENCH_TMP/$kind.log")"
		"$bin" report --events "$BENCH_TMP/$kind.ttft" 2>/dev/null |
			grep -c ' data_wake ' >>"$BENCH_TMP/$kind-$mode.wakes"
		;;
	esac
}

kinds="untraced traced"
[ -n "${TTFTRACE_B:-}" ] && kinds="$kinds traced_b"
echo "ipc_cost: $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  $ROUNDTRIPS round trips x $ROUNDS rounds, $REPS reps, CPU $CPU, interleaved: $kinds"
interleave "$REPS" "$MODES" "$kinds" run
printf '%-8s %-9s %14s %14s %14s\n' mode run "ns/roundtrip" "ns/hop added" "data wakes/rt"
for mode in $MODES; do
	base=$(median <"$BENCH_TMP/untraced-$mode")
	for kind in $kinds; do
		m=$(median <"$BENCH_TMP/$kind-$mode")
		w=-
		[ -s "$BENCH_TMP/$kind-$mode.wakes" ] &&
			w=$(median <"$BENCH_TMP/$kind-$mode.wakes" |
				awk -v n="$((ROUNDTRIPS * ROUNDS))" '{ printf "%.2f", $1 / n }')
		printf '%-8s %-9s %14s %14s %14s\n' "$mode" "$kind" "$m" \
			"$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.1f", (a - b) / 2 }')" "$w"
	done
done
echo "medians of each round's ns per round trip; ns/hop added: (run - untraced) / 2"
