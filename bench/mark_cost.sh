#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Cost of an application marker (record --mark, docs/design.md §4.9) per
# hit: bench/mark_loop calls one function CALLS times per round, ROUNDS
# rounds, and prints each round's ns per call, three ways:
#   plain      not marked
#   untraced   marked (the uprobe is on the file, every process hits it),
#              the loop not traced: the probe's trap and the tgid filter
#   traced     marked and traced: a MARK record per call, written
# The marker's cost per hit is each median less plain's.
# MARK=python: the loop is /usr/bin/python3 calling sys.audit(EVENT, i),
# marked as KIND=python:...:EVENT; EVENT=other marks another event, so
# each call is the cost any audit event of a Python process pays while a
# Python marker is recorded (the trap, the filters, no record).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

CALLS=${CALLS:-200000}
ROUNDS=${ROUNDS:-5}
LOOP=$OUTPUT/bench/mark_loop

bench_setup mark_cost
need_root
[ -x "$LOOP" ] || die "$LOOP missing: run make first"
SPEC="dispatch=$LOOP:marked_point,key=arg1"
if [ "${MARK:-}" = python ]; then
	PY=/usr/bin/python3
	cat >"$BENCH_TMP/mark_loop.py" <<'PY'
import sys, time
calls, rounds = int(sys.argv[1]), int(sys.argv[2])
audit = sys.audit
for _ in range(rounds):
    t = time.perf_counter_ns()
    for i in range(calls):
        audit("bench.mark", i)
    print((time.perf_counter_ns() - t) // calls)
PY
	LOOP="$PY $BENCH_TMP/mark_loop.py"
	SPEC="dispatch=python:$PY:bench.${EVENT:-mark},key=arg1"
fi

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# record ARGS...: ttftrace record in the background until "recording to"
record() {
	"$TTFTRACE" record -o "$BENCH_TMP/mark.ttft" --mark "$SPEC" "$@" \
		2>"$BENCH_TMP/record.log" &
	REC=$!
	BENCH_PIDS+=("$REC")
	wait_for "grep -q 'recording to' $BENCH_TMP/record.log" 30 ||
		die "record did not start: $(cat "$BENCH_TMP/record.log")"
}

$LOOP "$CALLS" "$ROUNDS" >"$BENCH_TMP/plain"

sleep 1000 &
IDLE=$!
BENCH_PIDS+=("$IDLE")
record -p "$IDLE"
$LOOP "$CALLS" "$ROUNDS" >"$BENCH_TMP/untraced"
kill -INT "$REC"
wait "$REC"

# -c: traced from its first instruction, the markers already on
"$TTFTRACE" record -o "$BENCH_TMP/mark.ttft" --mark "$SPEC" \
	-c "$LOOP $CALLS $ROUNDS >$BENCH_TMP/traced" 2>"$BENCH_TMP/record.log"
marks=$("$TTFTRACE" report --events "$BENCH_TMP/mark.ttft" | grep -c ' mark ')
lost=$(sed -n 's/.* \([0-9]*\) lost$/\1/p' "$BENCH_TMP/record.log")

plain=$(median <"$BENCH_TMP/plain")
printf '%-10s %10s %12s\n' "" "ns/call" "marker ns"
for k in plain untraced traced; do
	m=$(median <"$BENCH_TMP/$k")
	printf '%-10s %10s %12s\n' "$k" "$m" \
		"$(awk -v a="$m" -v b="$plain" 'BEGIN { printf "%.1f", a - b }')"
done
echo "traced: $marks MARK records of $((CALLS * ROUNDS)) calls, ${lost:-?} records lost"
