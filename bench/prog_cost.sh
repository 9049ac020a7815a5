#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Per-event cost of the BPF programs (issue 5, benchmark 2): run_time_ns /
# run_cnt of every program `ttftrace record` loads, over the saturation load
# of bench/overhead.sh (closed loop, no prefill or decode delay), with
# kernel.bpf_stats_enabled=1 (restored at exit). Counts are deltas over the
# load only; the programs run for every event of the machine, traced or not.
# First a calibration (bench/prog_floor.bpf.c): an empty program and the
# building blocks alone, measured the same way, so that the figures can be
# read against the floor of the measurement on this machine.
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

DURATION=${DURATION:-10}
TOKENS=${TOKENS:-64}
SAT_CONNS=${SAT_CONNS:-8}
# LOAD=realistic: overhead.sh's paced load instead (RATE, TOKEN_US)
LOAD=${LOAD:-saturation}
RATE=${RATE:-100}
TOKEN_US=${TOKEN_US:-20000}
# SERVER=python: the Python server (bench/lib.sh) under the saturation load
[ "$SERVER" = python ] && TOKENS=$PY_TOKENS
# KV_IO=pread|uring: the demo server reads KV_BYTES of O_DIRECT KV blocks per
# request (1 MiB reads, through an io_uring with uring) from a file in
# KV_DIR (a block-device file system): the file-read programs under load
KV_IO=${KV_IO:-}
KV_BYTES=${KV_BYTES:-4194304}
KV_DIR=${KV_DIR:-/var/tmp}

bench_setup prog_cost
need_root
need_built
command -v bpftool >/dev/null || die "bpftool missing (tools/deps.sh)"
bpf_stats_on

# calibration
FLOOR=$(bench_prog prog_floor) || exit 1
FLOOR_OBJ=$(bench_prog prog_floor.bpf.o) || exit 1
"$FLOOR" "$FLOOR_OBJ" >"$BENCH_TMP/floor" ||
	die "calibration failed"
floor=$(awk '$1 == "empty" { printf "%.0f", $2 / $3 }' "$BENCH_TMP/floor")
# the least a program writing a timestamped record can cost: the empty
# program, a bpf_ktime_get_ns() and a ring buffer reservation
rec_floor=$(awk '{ n[$1] = $2 / $3 }
	END { printf "%.0f", n["ktime_get_ns"] + n["ringbuf_64"] - n["empty"] }' \
	"$BENCH_TMP/floor")

[ -n "$KV_IO" ] && { [ "$SERVER" = python ] || [ "$LOAD" = realistic ]; } &&
	die "KV_IO goes with the demo server's saturation load only"
if [ "$SERVER" = python ]; then
	start_py_server --tokens "$TOKENS" --work-us "$PY_WORK_US"
	lgargs=(-c "$SAT_CONNS")
	what="bench/py_sse_server.py, closed loop, $SAT_CONNS connections, $TOKENS tokens of ${PY_WORK_US} us"
elif [ "$LOAD" = realistic ]; then
	start_server --prefill-us 0 -t "$TOKENS" -i "$TOKEN_US" \
		-w $((RATE * 2 + 8)) --batch $((RATE * 2 + 8))
	lgargs=(-c $((RATE * 2)) --rate "$RATE")
	what="$RATE req/s paced, $TOKENS tokens at $((TOKEN_US / 1000)) ms"
else
	kv=()
	if [ -n "$KV_IO" ]; then
		case $KV_IO in pread | uring) ;; *) die "KV_IO: pread or uring" ;; esac
		case $(stat -f -c %T "$KV_DIR") in
		tmpfs | ramfs) die "KV_DIR $KV_DIR: O_DIRECT needs a block device" ;;
		esac
		kvf=$(mktemp "$KV_DIR/ttftrace-kv.XXXXXX") || die "no KV file in $KV_DIR"
		BENCH_FILES+=("$kvf")
		dd if=/dev/urandom of="$kvf" bs=1M count=64 oflag=direct \
			status=none || die "cannot write the KV file $kvf"
		kv=(--kv-file "$kvf" --kv-read-bytes "$KV_BYTES")
		[ "$KV_IO" = uring ] && kv+=(--kv-uring)
	fi
	start_server --prefill-us 0 -t "$TOKENS" -i 0 -w $((SAT_CONNS * 2)) \
		--batch $((SAT_CONNS * 2)) "${kv[@]}"
	lgargs=(-c "$SAT_CONNS")
	what="closed loop, $SAT_CONNS connections, $TOKENS tokens, no delays${KV_IO:+, $((KV_BYTES >> 20)) MiB of KV reads per request ($KV_IO)}"
fi
# RECORD_ARGS: more options of ttftrace record (e.g. -b 1M)
# shellcheck disable=SC2086
start_ttftrace "$BENCH_TMP/t.ttft" -p "$SERVER_PID" ${RECORD_ARGS:-}
bpf_progs "$TRACER_PID" | LC_ALL=C sort -k1,1 >"$BENCH_TMP/before"
t0=$(now_ns)
"$LOADGEN" -p "$PORT" "${lgargs[@]}" -d "$DURATION" -n 1000000000 \
	--tokens "$TOKENS" >"$BENCH_TMP/loadgen.out" 2>&1 ||
	echo "prog_cost: loadgen failed" >&2
t1=$(now_ns)
bpf_progs "$TRACER_PID" | LC_ALL=C sort -k1,1 >"$BENCH_TMP/after"
bpf_stats_guard
while read -r id _; do
	echo "$id $(bpftool prog show id "$id" --json |
		sed -n 's/.*"name":"\([^"]*\)".*/\1/p')"
done <"$BENCH_TMP/after" >"$BENCH_TMP/names"
stop_tracer
stop_server
read -r events lost <<<"$(ttftrace_counts "$BENCH_TMP/t.ttft.log")"

echo "ttftrace BPF programs under the $LOAD load: $(nproc) CPUs, $(uname -r), $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo ?) clock"
echo "  calibration, each alone on a syscall tracepoint (ns/run; net of the empty program):"
awk -v f="$floor" '{ n = $2 / $3; printf "    %-14s %5.0f  %+5.0f\n", $1, n, n - f }' \
	"$BENCH_TMP/floor"
echo "  $what, ${DURATION} s;" \
	"$(loadgen_summary "$BENCH_TMP/loadgen.out" | awk '{ printf "%.0f tok/s", $2 }');" \
	"ttftrace wrote ${events:-?} records, ${lost:-?} lost"
LC_ALL=C join "$BENCH_TMP/names" "$BENCH_TMP/before" |
	LC_ALL=C join - "$BENCH_TMP/after" |
	awk -v wall=$((t1 - t0)) -v events="${events:-0}" -v floor="$floor" \
	-v rec_floor="$rec_floor" '
	{
		name[NR] = $2; dt[NR] = $5 - $3; dn[NR] = $6 - $4
		T += dt[NR]; N += dn[NR]
		if (dn[NR]) { used += dt[NR]; nused++ }
	}
	END {
		printf "\n  %-18s %12s %12s %9s %7s\n", "program", "run_cnt",
		       "run_time_ms", "ns/run", "share"
		for (i = 1; i <= NR; i++) {
			if (!dn[i])
				continue
			printf "  %-18s %12d %12.1f %9.0f %6.1f%%\n", name[i],
			       dn[i], dt[i] / 1e6, dt[i] / dn[i],
			       T ? 100 * dt[i] / T : 0
		}
		printf "  %-18s %12d %12.1f %9.0f\n", "all programs", N, T / 1e6,
		       N ? T / N : 0
		printf "\n  programs that ran: %d; not run: %d\n", nused,
		       NR - nused
		printf "  mean cost per program run: %.0f ns (target <= 150): %s\n",
		       N ? T / N : 0, (N && T / N <= 150) ? "MET" : "MISSED"
		printf "  (an empty program measures %.0f ns here: %.0f ns net of it)\n",
		       floor, N ? T / N - floor : 0
		printf "  BPF time: %.3f cores; %.0f ns per record written\n",
		       T / wall, events ? T / events : 0
		# issue 9: each hot program (>= 1% of the BPF time) within
		# twice the empty program of the same run
		printf "\n  hot programs against 2 x the empty program (%.0f ns; a timestamped record costs at least %.0f here):\n",
		       2 * floor, rec_floor
		for (i = 1; i <= NR; i++) {
			if (!dn[i] || !T || dt[i] < T / 100)
				continue
			n = dt[i] / dn[i]
			printf "    %-18s %5.0f ns = %4.1f x floor: %s\n", name[i],
			       n, n / floor, n <= 2 * floor ? "MET" : "MISSED"
		}
	}'
bpf_stats_report
