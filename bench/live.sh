#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What the live core costs the recorder (docs/design.md §10.1): the demo
# server under a paced load (RATE req/s over CONNS connections, TOKENS
# tokens at TOKEN_US each; RATE=0: closed loop) for DURATION s, recorded REPS times with and
# without --metrics, interleaved. Prints per run the recorder's CPU (all
# its threads, from its rusage: the live thread included), records lost,
# events per second and, with --metrics, the live analysis per refresh;
# then the medians.
. "$(dirname "$0")/lib.sh"
need_root
need_built
bench_setup live
REPS=${REPS:-3}
DURATION=${DURATION:-10}
RATE=${RATE:-100}
CONNS=${CONNS:-200}
TOKENS=${TOKENS:-64}
TOKEN_US=${TOKEN_US:-20000}

rm -f "$BENCH_TMP/port"
"$DEMO_SERVER" -p 0 --port-file "$BENCH_TMP/port" -q -i "$TOKEN_US" &
BENCH_PIDS+=("$!")
SERVER=$!
for _ in $(seq 100); do [ -s "$BENCH_TMP/port" ] && break; sleep 0.05; done
PORT=$(cat "$BENCH_TMP/port")

printf "%-8s %4s %9s %9s %6s %9s %s\n" mode rep cpu_ms cores lost events/s "live per refresh"
for rep in $(seq "$REPS"); do
	for mode in plain metrics; do
		extra=()
		[ $mode = metrics ] && extra=(--metrics 127.0.0.1:0 -v)
		/usr/bin/time -f "%U %S" -o "$BENCH_TMP/time" \
			"$TTFTRACE" record -p "$SERVER" -d "$((DURATION + 2))" \
			-o "$BENCH_TMP/$mode.ttft" "${extra[@]}" 2>"$BENCH_TMP/log" &
		rec=$!
		sleep 1.5
		rate=(--rate "$RATE")
		[ "$RATE" = 0 ] && rate=() # closed loop
		"$LOADGEN" -q -p "$PORT" -c "$CONNS" -d "$DURATION" "${rate[@]}" \
			--tokens "$TOKENS" --timeout 30 >/dev/null 2>&1
		wait $rec
		read -r u s <"$BENCH_TMP/time"
		line=$(grep 'events,' "$BENCH_TMP/log")
		events=$(echo "$line" | sed 's/.*; \([0-9]*\) events.*/\1/')
		lost=$(echo "$line" | sed 's/.*, \([0-9]*\) lost.*/\1/')
		live=$(grep -o 'live analysis: .*' "$BENCH_TMP/log" | sed 's/live analysis: //')
		cpu=$(echo "$u $s" | awk '{ printf "%.0f", ($1 + $2) * 1000 }')
		printf "%-8s %4s %9s %9.3f %6s %9.0f %s\n" $mode "$rep" "$cpu" \
			"$(echo "$cpu $DURATION" | awk '{ print $1 / 1000 / ($2 + 2) }')" "$lost" \
			"$(echo "$events $DURATION" | awk '{ print $1 / ($2 + 2) }')" "${live:--}"
		echo "$mode $cpu $lost" >>"$BENCH_TMP/all"
	done
done
echo "medians:"
for mode in plain metrics; do
	awk -v m=$mode '$1 == m { print $2 }' "$BENCH_TMP/all" | sort -n |
		awk -v m=$mode -v d="$DURATION" '{ v[NR] = $1 } END {
			med = v[int((NR + 1) / 2)]
			printf "  %-8s recorder CPU %d ms over %d s: %.3f cores\n", m, med, d + 2, med / 1000 / (d + 2) }'
done
