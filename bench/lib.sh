# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash disable=SC2034
# Helpers for the benchmarks: sourced, never run. The scripts run from the
# repository root and use what `make` built in $OUTPUT.
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# paths given on the command line are the caller's
BENCH_CALLER_PWD=$PWD
cd "$BENCH_DIR/.." || exit 1
OUTPUT=${OUTPUT:-build}
# TTFTRACE_BIN: another ttftrace build to measure (an A/B of two builds)
TTFTRACE=${TTFTRACE_BIN:-$OUTPUT/ttftrace}
DEMO_SERVER=$OUTPUT/tools/demo-server
LOADGEN=$OUTPUT/tools/loadgen
BENCH_PIDS=()
BENCH_FILES=()
BENCH_OLD_STATS=

die() {
	echo "$BENCH_NAME: $*" >&2
	exit 1
}

need_root() {
	[ "$(id -u)" = 0 ] || die "loads BPF programs: run as root"
}

need_built() {
	local f
	for f in "$TTFTRACE" "$DEMO_SERVER" "$LOADGEN"; do
		[ -x "$f" ] || die "$f missing: run make first"
	done
}

bench_cleanup() {
	local p
	for p in "${BENCH_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${BENCH_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	if [ -n "$BENCH_OLD_STATS" ]; then
		sysctl -qw kernel.bpf_stats_enabled="$BENCH_OLD_STATS"
	fi
	# files a benchmark made outside BENCH_TMP (on a block device)
	for p in "${BENCH_FILES[@]}"; do
		rm -f "$p"
	done
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "kept $BENCH_TMP" >&2
	elif [ -n "${BENCH_TMP:-}" ]; then
		rm -rf "$BENCH_TMP"
	fi
}

# bench_setup NAME: a scratch directory, cleaned up on exit (BENCH_KEEP=1
# keeps it)
bench_setup() {
	BENCH_NAME=$1
	BENCH_TMP=$(mktemp -d "/tmp/ttftrace-$1.XXXXXX")
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}

# BPF run time is only counted with kernel.bpf_stats_enabled=1: on for the
# run, the old value restored at exit.
bpf_stats_on() {
	BENCH_OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1 ||
		die "cannot set kernel.bpf_stats_enabled"
}

# The sysctl is global: another user's run ending may set it back to 0 under
# ours. Checked after each measurement: the BPF times of one that found it
# off are low, counted in $BENCH_TMP/stats_off and said at the end.
bpf_stats_guard() {
	[ -n "$BENCH_OLD_STATS" ] || return 0
	[ "$(sysctl -n kernel.bpf_stats_enabled)" = 1 ] && return 0
	sysctl -qw kernel.bpf_stats_enabled=1
	echo x >>"$BENCH_TMP/stats_off"
	echo "$BENCH_NAME: kernel.bpf_stats_enabled was found off (set back): BPF times of this run are low" >&2
	return 1
}

# bpf_stats_report: the line saying how many measurements found it off
bpf_stats_report() {
	[ -s "$BENCH_TMP/stats_off" ] || return 0
	echo "  WARNING: kernel.bpf_stats_enabled was turned off by someone else during $(wc -l <"$BENCH_TMP/stats_off") measurement(s): their BPF times are too low"
}

# bench_prog NAME: make's build of bench/NAME (make all builds every one),
# with the project's flags
bench_prog() {
	local f=$OUTPUT/bench/$1
	[ -e "$f" ] || die "$f missing: run make first"
	echo "$f"
}

# median: the median of the numbers on stdin, one a line
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# interleave REPS "CASES" "KINDS" FUNC: FUNC CASE KIND for every case and
# kind, REPS times over: the machine's drift falls on all alike
interleave() {
	local case kind
	for _ in $(seq "$1"); do
		for case in $2; do
			for kind in $3; do
				"$4" "$case" "$kind"
			done
		done
	done
}

# wait_for COND_CMD [SECONDS]: polls every 20 ms
wait_for() {
	local cmd=$1 t=${2:-10} i=0
	while ! eval "$cmd"; do
		i=$((i + 1))
		[ $i -ge $((t * 50)) ] && return 1
		sleep 0.02
	done
}

now_ns() {
	date +%s%N
}

# CPU time of every thread of PID, user and system, in ns (schedstat is
# exact where /proc/PID/stat counts ticks)
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null |
		awk '{ s += $1 } END { printf "%d\n", s }'
}

# BPF run time (ns) and run count summed over the programs PID holds open
bpf_ns() {
	grep -h '^run_time_ns:' /proc/"$1"/fdinfo/* 2>/dev/null |
		awk '{ s += $2 } END { printf "%d\n", s }'
}

# bpf_progs PID: "prog_id run_time_ns run_cnt" per program PID holds open
bpf_progs() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^prog_id:/ { id = $2 } /^run_time_ns:/ { t = $2 }
		     /^run_cnt:/ { n = $2 }
		     END { if (t != "") print id, t, n }' "$f" 2>/dev/null
	done
}

# start_server ARGS...: sets SERVER_PID and PORT
start_server() {
	rm -f "$BENCH_TMP/port"
	"$DEMO_SERVER" -q -p 0 --port-file "$BENCH_TMP/port" "$@" &
	SERVER_PID=$!
	BENCH_PIDS+=("$SERVER_PID")
	wait_for "[ -s $BENCH_TMP/port ]" 10 || die "demo server did not start"
	PORT=$(cat "$BENCH_TMP/port")
}

# SERVER=python (overhead.sh, prog_cost.sh): bench/py_sse_server.py, under
# uvicorn, PY_TOKENS tokens of PY_WORK_US of pure Python each
SERVER=${SERVER:-demo}
PY_WORK_US=${PY_WORK_US:-20}
PY_TOKENS=${PY_TOKENS:-16}

# start_py_server ARGS...: bench/py_sse_server.py (SERVER=python) with ARGS;
# sets SERVER_PID and PORT as start_server does
start_py_server() {
	rm -f "$BENCH_TMP/port"
	/usr/bin/python3 "$BENCH_DIR/py_sse_server.py" \
		--port-file "$BENCH_TMP/port" "$@" &
	SERVER_PID=$!
	BENCH_PIDS+=("$SERVER_PID")
	wait_for "[ -s $BENCH_TMP/port ]" 20 ||
		die "py_sse_server.py did not start (python3-uvicorn installed?)"
	PORT=$(cat "$BENCH_TMP/port")
}

stop_server() {
	kill -TERM "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID" 2>/dev/null
}

# start_ttftrace OUT.ttft ARGS...: sets TRACER_PID once BPF is attached
start_ttftrace() {
	local out=$1
	shift
	"$TTFTRACE" record -o "$out" "$@" 2>"$out.log" &
	TRACER_PID=$!
	BENCH_PIDS+=("$TRACER_PID")
	if ! wait_for "grep -qs 'recording to' $out.log" 30; then
		cat "$out.log" >&2
		die "ttftrace record did not start"
	fi
}

# start_bpftrace OUT.txt PID PORT: the equivalent bpftrace script
start_bpftrace() {
	local out=$1
	# its maps are printed on stdout at exit: not wanted
	bpftrace -o "$out" "$BENCH_DIR/ttftrace.bt" "$2" "$3" \
		>/dev/null 2>"$out.err" &
	TRACER_PID=$!
	BENCH_PIDS+=("$TRACER_PID")
	if ! wait_for "grep -q '^Attaching' $out 2>/dev/null" 60; then
		cat "$out.err" >&2
		die "bpftrace did not start"
	fi
}

# SIGINT, as Ctrl-C; bpftrace 0.17 now and then misses its first one: asked
# again every 5 s, then terminated
stop_tracer() {
	local i
	kill -INT "$TRACER_PID" 2>/dev/null
	for i in $(seq 300); do
		kill -0 "$TRACER_PID" 2>/dev/null || break
		sleep 0.1
		case $i in
		50 | 100 | 150) kill -INT "$TRACER_PID" 2>/dev/null ;;
		200) kill -TERM "$TRACER_PID" 2>/dev/null ;;
		250) kill -KILL "$TRACER_PID" 2>/dev/null ;;
		esac
	done
	wait "$TRACER_PID" 2>/dev/null
}

# ttftrace's last line: "...; N events, ... , M lost" -> "N M"
ttftrace_counts() {
	sed -n 's/.*; \([0-9]*\) events, .*, \([0-9]*\) lost$/\1 \2/p' "$1" |
		tail -n 1
}

# bpftrace's records and the ones it reports lost -> "N M"
bpftrace_counts() {
	local n lost
	n=$(grep -cE '^(sw|wk|rdy|rcv|snd|xmit) ' "$1")
	lost=$(cat "$1" "$1.err" | sed -n 's/^Lost \([0-9]*\) events.*/\1/p' |
		awk '{ s += $1 } END { printf "%d\n", s }')
	echo "$n $lost"
}

# loadgen's summary -> "req/s tok/s p50_ms p99_ms ok failed"
loadgen_summary() {
	awk '/^requests:/ { ok = $2; failed = $4; rs = substr($9, 2); ts = $11 }
	     /^TTFT ms:/ { p50 = $4; p99 = $8 }
	     END { print rs, ts, p50, p99, ok, failed }' "$1"
}
