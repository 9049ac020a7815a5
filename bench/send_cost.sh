#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What the send program (tt_send) costs per traced send, by the shape of
# what is sent (docs/design.md §3.1): `json`, the demo server's non-streamed
# answers of TOKENS_JSON tokens (about 3 KiB of JSON each, past the 256
# bytes captured: the event count must give up on them early), and
# `sse-burst`, Node's coalesced writev of three 200-byte SSE events
# (tests/servers/raw_server.py --framing node-writev --pad 150: the count
# reads them all). Each rep, each build (TTFTRACE, then TTFTRACE_B when
# set: an A/B of two builds) records the server with `record -p` under
# loadgen; tt_send's run time over the load (bpf_stats) divided by the
# sends it recorded. Prints the median over REPS. The program also runs,
# and returns at once, for every untraced send of the machine (loadgen's):
# their cost is in the figure, a few ns per send.
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tools/free_port.sh
. tools/free_port.sh

REPS=${REPS:-3}
REQUESTS=${REQUESTS:-400}
TOKENS_JSON=${TOKENS_JSON:-512}
TOKENS_SSE=${TOKENS_SSE:-32}
SHAPES=${SHAPES:-json sse-burst}

bench_setup send_cost
need_root
need_built
command -v bpftool >/dev/null || die "bpftool missing (tools/deps.sh)"
if [ -n "${TTFTRACE_B:-}" ]; then
	[ -x "$TTFTRACE_B" ] || die "TTFTRACE_B=$TTFTRACE_B is not executable"
fi
bpf_stats_on

# start_shape SHAPE: the server, SERVER_PID and PORT set; LOAD its loadgen
# options
start_shape() {
	case $1 in
	json)
		start_server -i 0 --prefill-us 0
		LOAD=(--no-stream --tokens "$TOKENS_JSON")
		;;
	sse-burst)
		PORT=$(free_port)
		/usr/bin/python3 tests/servers/raw_server.py --framing node-writev \
			--pad 150 --gap-ms 0 -p "$PORT" &
		SERVER_PID=$!
		BENCH_PIDS+=("$SERVER_PID")
		wait_for "ss -Hltn 'sport = :$PORT' | grep -q ." 10 ||
			die "raw_server.py did not start"
		LOAD=(--tokens "$TOKENS_SSE")
		;;
	*) die "unknown shape $1 (json sse-burst)" ;;
	esac
}

# tt_send_ns PID: "run_time_ns run_cnt" of the tt_send PID holds
tt_send_ns() {
	local id t n
	while read -r id t n; do
		bpftool prog show id "$id" 2>/dev/null | grep -q ' name tt_send ' &&
			echo "$t $n" && return
	done < <(bpf_progs "$1")
}

# run SHAPE KIND: one measurement, "ns/send sends" appended to KIND-SHAPE
run() {
	local shape=$1 kind=$2 out=$BENCH_TMP/$2-$1.ttft stats sends bin=$TTFTRACE

	[ "$kind" = ttftrace_b ] && bin=$TTFTRACE_B
	start_shape "$shape"
	TTFTRACE=$bin start_ttftrace "$out" -p "$SERVER_PID"
	"$LOADGEN" -p "$PORT" -c 4 -n "$REQUESTS" "${LOAD[@]}" -q >/dev/null ||
		die "loadgen failed on $shape"
	stats=$(tt_send_ns "$TRACER_PID")
	bpf_stats_guard
	stop_tracer
	stop_server
	[ -n "$stats" ] || die "no tt_send among $kind's programs"
	sends=$("$bin" report --events "$out" 2>/dev/null | grep -c ' send ')
	[ "$sends" -gt 0 ] || die "$kind recorded no send on $shape"
	echo "$stats $sends" | awk '{ printf "%.0f %d\n", $1 / $3, $3 }' \
		>>"$BENCH_TMP/$kind-$shape"
}

kinds="ttftrace"
[ -n "${TTFTRACE_B:-}" ] && kinds="$kinds ttftrace_b"
echo "send_cost: $(nproc) CPUs, $(uname -r), $REPS reps of $REQUESTS requests, interleaved: $kinds"
interleave "$REPS" "$SHAPES" "$kinds" run
printf '%-10s %-11s %12s %14s\n' shape build "ns/send" "sends/rep"
for shape in $SHAPES; do
	for kind in $kinds; do
		printf '%-10s %-11s %12s %14s\n' "$shape" "$kind" \
			"$(cut -d' ' -f1 "$BENCH_TMP/$kind-$shape" | median)" \
			"$(cut -d' ' -f2 "$BENCH_TMP/$kind-$shape" | median)"
	done
done
bpf_stats_report
echo "medians over reps of tt_send's run time (bpf_stats) per send it recorded"
