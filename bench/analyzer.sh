#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Analyzer speed and file size (issue 5, benchmark 3). bench/gen_recording.c
# writes EVENTS synthetic events (the demo server under a paced load: about
# half switches, a fifth wakeups, the rest sends and transmits forming
# complete requests) through the recording writer; `ttftrace report` then
# reads it REPS times. Prints events per second, peak RSS and bytes per event
# on disk against issue 9's targets (>= 3 M events/s, <= 100 MB at 10 M
# events); below 2 M events/s it profiles one report with perf (when
# installed; PROFILE=0 skips, PROFILE=1 forces). TTFTRACE_B=/other/ttftrace
# runs another build interleaved with this one and prints its CPU ratio.
#   bench/analyzer.sh [FILE.ttft]    (FILE is kept; default: a scratch file)
# Needs no BPF and no root.
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

EVENTS=${EVENTS:-10000000}
REPS=${REPS:-3}
PROFILE=${PROFILE:-auto}
PROFILE_EVENTS=${PROFILE_EVENTS:-2000000}

bench_setup analyzer
[ -x "$TTFTRACE" ] || die "$TTFTRACE missing: run make first"
FILE=${1:-$BENCH_TMP/big.ttft}
[ "${FILE#/}" = "$FILE" ] && FILE=$BENCH_CALLER_PWD/$FILE
GEN=$OUTPUT/bench/gen_recording
[ -x "$GEN" ] || die "$GEN missing: run make first"

# measure CMD...: "wall_s user_s sys_s maxrss_kb" of CMD, output discarded
measure() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%e %U %S %M' -o "$BENCH_TMP/time" "$@" \
			>/dev/null 2>"$BENCH_TMP/err" || return 1
		cat "$BENCH_TMP/time"
	else
		python3 -c '
import resource, subprocess, sys, time
t = time.monotonic()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
w = time.monotonic() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{w:.2f} {u.ru_utime:.2f} {u.ru_stime:.2f} {u.ru_maxrss}")
sys.exit(r.returncode)' "$@" 2>"$BENCH_TMP/err" || return 1
	fi
}

echo "ttftrace report speed: $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
gen_line=$("$GEN" -n "$EVENTS" "$FILE") || die "gen_recording failed"
echo "  $gen_line"
events=$(echo "$gen_line" | awk '{ print $2 }')
requests=$(echo "$gen_line" | awk '{ print $4 }')
bytes=$(stat -c %s "$FILE")
"$TTFTRACE" report "$FILE" >"$BENCH_TMP/report.txt" 2>&1 ||
	die "report failed: $(tail -n 1 "$BENCH_TMP/report.txt")"
complete=$(awk '/^requests:/ { c = $4; sub(/,/, "", c); print c }' \
	"$BENCH_TMP/report.txt")
# figures from a report of broken requests would time the wrong work
[ "$complete" = "$requests" ] ||
	die "report found ${complete:-no} complete requests of $requests generated"
printf "  %-4s %-5s %7s %7s %7s %12s %12s %8s\n" rep build wall_s user_s \
	sys_s ev/s_wall ev/s_cpu RSS_MB
builds="a"
[ -n "${TTFTRACE_B:-}" ] && builds="a b"
for rep in $(seq "$REPS"); do
	for b in $builds; do
		bin=$TTFTRACE
		[ "$b" = b ] && bin=$TTFTRACE_B
		m=$(measure "$bin" report "$FILE") ||
			die "report failed: $(tail -n 1 "$BENCH_TMP/err")"
		echo "$m" >>"$BENCH_TMP/runs.$b"
		echo "$rep $m" >>"$BENCH_TMP/reps.$b"
		echo "$m" | awk -v r="$rep" -v e="$events" -v b="$b" '{
			printf "  %-4s %-5s %7.2f %7.2f %7.2f %12.0f %12.0f %8.0f\n",
			       r, b, $1, $2, $3, e / $1, e / ($2 + $3), $4 / 1024 }'
	done
done
awk '{ print $2 + $3, $0 }' "$BENCH_TMP/runs.a" | sort -n |
	awk -v e="$events" -v b="$bytes" -v q="$requests" \
	-v verdict="$BENCH_TMP/verdict" '
	{ c[NR] = $1; w[NR] = $2; u[NR] = $3; s[NR] = $4; m[NR] = $5 }
	END {
		k = int((NR + 1) / 2)
		rate = e / c[k]
		printf "\n  median of %d: %.2f s CPU (%.2f user, %.2f sys; %.2f s wall) for %d events, %d requests\n",
		       NR, c[k], u[k], s[k], w[k], e, q
		printf "  report speed: %.2f M events/s of CPU time, %.2f M/s wall (target >= 3): %s\n",
		       rate / 1e6, e / w[k] / 1e6, (rate >= 3e6) ? "MET" : "MISSED"
		mb = m[k] / 1024
		printf "  peak RSS: %.0f MB (%.1f bytes per event; target <= 100 MB at 10 M events): %s\n",
		       mb, m[k] * 1024 / e, (mb * 1e7 / e <= 100) ? "MET" : "MISSED"
		printf "  on disk: %d bytes, %.2f bytes per event (target <= 12): %s\n",
		       b, b / e, (b / e <= 12) ? "MET" : "MISSED"
		print (rate < 2e6) ? "slow" : "fast" > verdict
	}'
# TTFTRACE_B: the other build's CPU time over this one's, per rep
if [ -n "${TTFTRACE_B:-}" ]; then
	join "$BENCH_TMP/reps.a" "$BENCH_TMP/reps.b" |
		awk '{ print ($7 + $8) / ($3 + $4), $9 / $5 }' | sort -n |
		awk -v b="$TTFTRACE_B" '{ r[NR] = $1; m[NR] = $2 }
		END {
			printf "  %s: CPU time x %.3f of this build'"'"'s (median of %d reps, %.3f .. %.3f), peak RSS x %.3f\n",
			       b, r[int((NR + 1) / 2)], NR, r[1], r[NR], m[int((NR + 1) / 2)]
		}'
fi

if [ "$PROFILE" = 1 ] ||
	{ [ "$PROFILE" = auto ] && [ "$(cat "$BENCH_TMP/verdict")" = slow ]; }; then
	if ! command -v perf >/dev/null; then
		echo "  (perf not installed: no profile; apt-get install linux-perf)"
		exit 0
	fi
	"$GEN" -n "$PROFILE_EVENTS" "$BENCH_TMP/small.ttft" >/dev/null
	perf record -q -e cpu-clock --call-graph dwarf,16384 -F 499 \
		-o "$BENCH_TMP/perf.data" "$TTFTRACE" report \
		"$BENCH_TMP/small.ttft" >/dev/null 2>"$BENCH_TMP/perf.err" || {
		echo "  perf record failed: $(tail -n 1 "$BENCH_TMP/perf.err")"
		exit 0
	}
	echo
	echo "  where report's time goes ($PROFILE_EVENTS events, perf cpu-clock, inclusive %):"
	perf report -i "$BENCH_TMP/perf.data" --children --stdio --sort sym \
		-g none --percent-limit 4 2>/dev/null |
		grep -E '^ +[0-9.]+%' |
		grep -vE '_start|__libc_start|main$|entry_SYSCALL|do_syscall_64|\[k\] 0x|\[\.\] 0x|tt_cmd_report' |
		head -n 30 | awk '{ printf "    %7s  %s %s\n", $1, $3, $4 }'
fi
