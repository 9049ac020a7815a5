#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What following goroutines costs (docs/design.md §4.9): the Ollama-shaped
# Go server (tools/scenarios/go_server.go) with no compute at all (prefill,
# decode and tokenizing 0 ms: net/http, channels and goroutine switches
# only, the worst case for a probe on every goroutine state change), under
# a closed-loop load, interleaved REPS times:
#   untraced
#   off   ttftrace record --goroutines=off
#   on    ttftrace record --goroutines=on (goroutines followed throughout)
#   auto  ttftrace record (the default: the probe comes off when its traps
#         would cost more than 5% of a CPU)
# Prints per mode the median throughput (req/s) and client TTFT p50, and
# the GO and GO_CHAN records per request; then on against off and
# untraced. Not a test.
# Knobs: REPS (5), DURATION (4 s), CONNS (8), TOKENS (8), LOCK (0|1).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

REPS=${REPS:-5}
DURATION=${DURATION:-4}
CONNS=${CONNS:-8}
TOKENS=${TOKENS:-8}
LOCK=${LOCK:-0}
GO_SERVER=$OUTPUT/scenarios/go_server

bench_setup go_probe
need_root
need_built
command -v go >/dev/null || die "no go on PATH (tools/deps.sh)"
mkdir -p "$OUTPUT/scenarios"
GOCACHE=$PWD/$OUTPUT/scenarios/gocache GOPATH=$PWD/$OUTPUT/scenarios/gopath \
	GO111MODULE=off GOFLAGS='' HOME=/nonexistent \
	go build -o "$GO_SERVER" tools/scenarios/go_server.go || die "go build failed"
lockflag=
[ "$LOCK" = 1 ] && lockflag=-lock

# trial MODE REP: one run; appends "mode rps ttft_p50_ms go_per_req"
trial() {
	local mode=$1 rep=$2 port=$((20000 + RANDOM % 20000)) rec= pid
	local cmd="exec $GO_SERVER -p $port -log /dev/null -prefill-ms 0 -decode-ms 0 -tokenize-ms 0 $lockflag"
	local out=$BENCH_TMP/$mode-$rep
	case $mode in
	untraced)
		bash -c "$cmd" & pid=$! ;;
	off | on | auto)
		rec=$out.ttft
		local opt=--goroutines=$mode
		"$TTFTRACE" record -q $opt -o "$rec" -c "$cmd" 2>"$out.log" & pid=$! ;;
	esac
	BENCH_PIDS+=("$pid")
	for _ in $(seq 100); do
		ss -Hltn "sport = :$port" | grep -q . && break
		sleep 0.05
	done
	sleep 0.3 # the runtime scan (20 ms) has attached the probe
	"$LOADGEN" -q -p "$port" -c "$CONNS" -n 100000000 -d "$DURATION" \
		--tokens "$TOKENS" -o "$out.csv" >/dev/null 2>&1
	# ttftrace stops on SIGINT; the server alone, on its SIGTERM
	if [ "$mode" = untraced ]; then kill -TERM "$pid"; else kill -INT "$pid"; fi 2>/dev/null
	wait "$pid" 2>/dev/null
	/usr/bin/python3 - "$mode" "$out.csv" "$DURATION" "${rec:-}" "$TTFTRACE" \
		>>"$BENCH_TMP/results" <<'EOF'
import csv, subprocess, sys
mode, path, dur, rec, tt = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
rows = [r for r in csv.DictReader(open(path)) if r["status"] in ("200", "ok")]
ttft = sorted(int(r["ttft_ns"]) for r in rows)
gos = 0
if rec:
    ev = subprocess.run([tt, "report", "--events", rec], capture_output=True, text=True).stdout
    gos = sum(1 for l in ev.splitlines() if " go " in l or " go_chan " in l)
print(mode, len(rows) / dur, ttft[len(ttft) // 2] / 1e6 if ttft else 0,
      gos / len(rows) if rows else 0)
EOF
}

for rep in $(seq "$REPS"); do
	for mode in untraced off on auto; do
		trial "$mode" "$rep"
	done
done
/usr/bin/python3 - "$BENCH_TMP/results" <<'EOF'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    m, rps, ttft, gos = line.split()
    by.setdefault(m, []).append((float(rps), float(ttft), float(gos)))
med = {m: [statistics.median(x[i] for x in v) for i in range(3)] for m, v in by.items()}
for m in ("untraced", "off", "on", "auto"):
    if m in med:
        rps, ttft, gos = med[m]
        print("%-9s %8.0f req/s  TTFT p50 %6.2f ms  GO records/request %5.1f  (median of %d)"
              % (m, rps, ttft, gos, len(by[m])))
if all(m in med for m in ("untraced", "off", "on")):
    print("on / off:      %.3f of the throughput" % (med["on"][0] / med["off"][0]))
    print("on / untraced: %.3f of the throughput" % (med["on"][0] / med["untraced"][0]))
    print("off / untraced: %.3f of the throughput" % (med["off"][0] / med["untraced"][0]))
if all(m in med for m in ("untraced", "auto")):
    print("auto / untraced: %.3f of the throughput" % (med["auto"][0] / med["untraced"][0]))
EOF
