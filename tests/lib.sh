# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Helpers for the shell tests: sourced, never run.
OUTPUT=${OUTPUT:-build}
# for the tests' Python parts (rel_check.py)
TT_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TT_TESTS_DIR
# free_port
. "$TT_TESTS_DIR/../tools/free_port.sh"
TTFTRACE=$OUTPUT/ttftrace
DEMO_SERVER=$OUTPUT/tools/demo-server
LOADGEN=$OUTPUT/tools/loadgen
TT_PIDS=()

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; TT_FAILED=1; }
check() { # check NAME CMD...: PASS or FAIL by the command's status
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name"; fi
}

# scen_gate TAG NAME:SHARES...: tests/scen_check.py on the scenario runs in
# $OUTDIR, the shares doubled under ASan (the recorder takes CPU the traced
# server lacks); its output also in $TT_TMP/check.txt, and a failed run's
# recordings kept under $OUTPUT/scenarios/failed/ for reading later
scen_gate() {
	local tag=$1 scale=1
	shift
	asan_build && scale=2
	/usr/bin/python3 tests/scen_check.py --scale=$scale "$tag" "$OUTDIR" "$@" |
		tee "$TT_TMP/check.txt"
	if grep -q "^FAIL" "$TT_TMP/check.txt"; then
		mkdir -p "$OUTPUT/scenarios/failed" &&
			cp -r "$OUTDIR" "$OUTPUT/scenarios/failed/$tag-$(date +%H%M%S)"
	fi
	return 0
}

# asan_build: the ttftrace under test is an ASan build (make SANITIZE=1)
asan_build() {
	ldd "$TTFTRACE" 2>/dev/null | grep -q libasan
}

# need_gen: the synthetic recordings' generator (bench/gen_recording), in
# GEN, or a failure
need_gen() {
	GEN=$OUTPUT/bench/gen_recording
	if [ ! -x "$GEN" ]; then
		fail "gen_recording built ($GEN missing: make unit-tests)"
		exit 1
	fi
}

# BPF tests need root; outside CI they skip, under CI the runner fails them.
require_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: $1: needs root to load BPF programs"
		exit 0
	fi
}

# need_command TAG CMD PKG: fails TAG and exits when CMD is not on PATH
need_command() {
	command -v "$2" >/dev/null && return 0
	fail "$1: no $2 on PATH (tools/deps.sh installs Debian's $3)"
	exit 1
}

# go_build NAME OUT SRC...: go build, offline, its caches under $OUTPUT
go_build() {
	local name=$1 out=$2
	shift 2
	need_command "$name" go golang-go || return 1
	mkdir -p "$OUTPUT/gocache" "$OUTPUT/gopath" "$(dirname "$out")"
	# go wants them absolute, whether OUTPUT is or not
	GOCACHE=$(realpath "$OUTPUT/gocache") GOPATH=$(realpath "$OUTPUT/gopath") GO111MODULE=off \
		GOFLAGS='' HOME=/nonexistent go build -o "$out" "$@" ||
		{ fail "$name: go build $*"; return 1; }
}

tt_cleanup() {
	local p
	for p in "${TT_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${TT_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	# after the processes: a recorder may still write there
	if [ -n "${SMALL:-}" ] && mountpoint -q "$SMALL"; then
		umount "$SMALL"
	fi
	# TT_KEEP=1 keeps the files of a run for a look
	if [ -n "${TT_KEEP:-}" ]; then
		echo "kept $TT_TMP" >&2
	elif [ -n "${TT_TMP:-}" ]; then
		rm -rf "$TT_TMP"
	fi
}

tt_setup() {
	TT_TMP=$(mktemp -d /tmp/ttftrace-test.XXXXXX)
	trap tt_cleanup EXIT
}

# small_disk: a 64 KiB tmpfs at $SMALL for the full-disk cases, unmounted
# by tt_cleanup; fails when it cannot be mounted
small_disk() {
	SMALL=$TT_TMP/small
	mkdir -p "$SMALL" && mount -t tmpfs -o size=64k tmpfs "$SMALL"
}

# wait_for COND_CMD [SECONDS]: polls every 50 ms
wait_for() {
	local cmd=$1 t=${2:-10} i=0
	while ! eval "$cmd"; do
		i=$((i + 1))
		[ $i -ge $((t * 20)) ] && return 1
		sleep 0.05
	done
}

# start_server LOG ARGS...: sets SERVER_PID and PORT. A command in the
# array TT_SERVER_WRAP runs it (e.g. TT_SERVER_WRAP=(ip netns exec NS): it
# must exec the server, so that SERVER_PID is the server's).
TT_SERVER_WRAP=()
start_server() {
	local log=$1
	shift
	rm -f "$TT_TMP/port"
	"${TT_SERVER_WRAP[@]}" "$DEMO_SERVER" -p 0 --port-file "$TT_TMP/port" \
		--log "$log" -q "$@" &
	SERVER_PID=$!
	TT_PIDS+=("$SERVER_PID")
	wait_for "[ -s $TT_TMP/port ]" 10 || { fail "server did not start"; exit 1; }
	PORT=$(cat "$TT_TMP/port")
}

# start_record OUT.ttft ARGS...: sets RECORD_PID once BPF is attached
start_record() {
	local out=$1
	shift
	"$TTFTRACE" record -o "$out" "$@" 2>"$out.log" &
	RECORD_PID=$!
	TT_PIDS+=("$RECORD_PID")
	if ! wait_for "grep -q 'recording to' $out.log" 30; then
		cat "$out.log"
		fail "ttftrace record did not start"
		exit 1
	fi
}

stop_record() {
	kill -INT "$RECORD_PID"
	wait "$RECORD_PID"
	RECORD_STATUS=$?
}

# steal_ms: the vCPU time a VM's hypervisor took, all CPUs, since boot
# (/proc/stat, in clock ticks: 10 ms steps)
steal_ms() {
	awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { print int($9 * 1000 / hz) }' /proc/stat
}

# start_lo_stalls OUT: bpftrace logs the loopback device's stalls
# (tests/lo_stalls.bt) to OUT until stop_lo_stalls; fails when it cannot
# attach
start_lo_stalls() {
	LO_STALLS_OUT=$1
	bpftrace "$(dirname "${BASH_SOURCE[0]}")/lo_stalls.bt" \
		>"$LO_STALLS_OUT" 2>"$LO_STALLS_OUT.err" &
	LO_STALLS_PID=$!
	TT_PIDS+=("$LO_STALLS_PID")
	if ! wait_for "grep -qs '^Attaching' $LO_STALLS_OUT" 30; then
		fail "bpftrace lo_stalls.bt did not attach: $(grep -v RLIMIT "$LO_STALLS_OUT.err" | head -1)"
		return 1
	fi
}

stop_lo_stalls() {
	stop_pid "$LO_STALLS_PID" INT
}

# tt_forget PID: a process reaped already; tt_cleanup must not signal its
# pid, which may be another's by then
tt_forget() {
	local p keep=()
	for p in "${TT_PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	TT_PIDS=("${keep[@]}")
}

# stop_pid PID [SIGNAL]: signals it, waits up to 5 s, then SIGKILL; returns
# its exit status (137 when it had to be killed)
stop_pid() {
	local pid=$1 sig=${2:-TERM} rc=137
	kill -"$sig" "$pid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	else
		wait "$pid" 2>/dev/null
		rc=$?
	fi
	tt_forget "$pid"
	return $rc
}

# record_load OUT.ttft LOADGEN-ARGS...: records $SERVER_PID while loadgen
# runs against $PORT (its output in OUT.ttft.lg.out), then stops the
# recorder and the server; LOADGEN_STATUS and RECORD_STATUS say how they
# ended
record_load() {
	local out=$1
	shift
	start_record "$out" -p "$SERVER_PID"
	"$LOADGEN" -q -p "$PORT" --timeout 20 "$@" >"$out.lg.out" 2>&1
	LOADGEN_STATUS=$?
	stop_record
	tt_forget "$RECORD_PID"
	stop_pid "$SERVER_PID" TERM
}

# start_named_server NAME_HEX RENAME_HEX: tests/helper_named_server, its
# thread named NAME at start and RENAME at its first request; sets
# SERVER_PID and PORT
start_named_server() {
	rm -f "$TT_TMP/port"
	"$OUTPUT/tests/helper_named_server" --port-file "$TT_TMP/port" \
		--name "$1" --rename "$2" --tokens 4 &
	SERVER_PID=$!
	TT_PIDS+=("$SERVER_PID")
	wait_for "[ -s $TT_TMP/port ]" 10 || { fail "helper_named_server did not start"; exit 1; }
	PORT=$(cat "$TT_TMP/port")
}
