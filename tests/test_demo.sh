#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Smoke test of the demo server and the load generator (no root needed):
# runs loadgen against demo-server in each framing and checks the client's
# measurements against the server's ground-truth log, request by request.
# Prints PASS:/FAIL:/SKIP: lines; exits non-zero if anything failed.

set -u

OUT=${OUTPUT:-build}
SERVER=$OUT/tools/demo-server
LOADGEN=$OUT/tools/loadgen
CPUHOG=$OUT/tools/cpuhog
BULK=$OUT/tools/bulk
TMP=$(mktemp -d "${TMPDIR:-/tmp}/test_demo.XXXXXX")
SERVER_PID=
LOADGEN_PID=
EXTRA_PIDS=()
KV_DIR=
PORT=
FAILED=0
INTERVAL_US=2000

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+: $2}"; FAILED=$((FAILED + 1)); }
skip() { echo "SKIP: $1${2:+: $2}"; }
check() { # check NAME WHY COMMAND...: PASS when COMMAND succeeds
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

cleanup() {
	local p
	[ -n "$LOADGEN_PID" ] && kill -KILL "$LOADGEN_PID" 2>/dev/null
	for p in "${EXTRA_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	[ -n "$KV_DIR" ] && rm -rf "$KV_DIR"
	if [ -n "$SERVER_PID" ]; then
		kill -KILL "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

# start_server NAME [ARGS...]: demo-server on a free port, log in $TMP/NAME.gt
start_server() {
	local name=$1
	shift
	rm -f "$TMP/port"
	"$SERVER" -p 0 --port-file "$TMP/port" --log "$TMP/$name.gt" -q \
		-i "$INTERVAL_US" "$@" >"$TMP/$name.server.out" 2>&1 &
	SERVER_PID=$!
	for _ in $(seq 250); do
		if [ -s "$TMP/port" ]; then
			PORT=$(cat "$TMP/port")
			return 0
		fi
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.02
	done
	kill -KILL "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
	return 1
}

# stop_server [SIGNAL]: stops it, waits at most 5 s; fails unless it exits 0
stop_server() {
	local sig=${1:-TERM} pid=$SERVER_PID rc
	SERVER_PID=
	[ -n "$pid" ] || return 1
	kill -"$sig" "$pid" 2>/dev/null
	for _ in $(seq 250); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		{ wait "$pid"; } 2>/dev/null
		return 1
	fi
	{ wait "$pid"; } 2>/dev/null
	rc=$?
	[ "$sig" = KILL ] || [ "$rc" -eq 0 ]
}

# bad_option BINARY ARGS...: one line on stderr, exit 2
bad_option() {
	local err rc
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]
}

rows() { # data rows of a CSV file
	[ -f "$1" ] && echo $(($(wc -l <"$1") - 1)) || echo -1
}

# match_rows CLIENT_CSV SERVER_LOG: every client request has its server row
# (same port, server read inside [send, first token]) with timestamps in
# causal order; prints what is wrong, if anything
match_rows() {
	awk -F, '
	FNR == 1 { next }
	NR == FNR {	# server log
		n = ++cnt[$2]
		rd[$2, n] = $3; enq[$2, n] = $4; dis[$2, n] = $5
		ps[$2, n] = $6; pe[$2, n] = $7; fw[$2, n] = $8; lw[$2, n] = $9
		tok[$2, n] = $10; pre[$2, n] = $11; st[$2, n] = $15
		next
	}
	{	# client row
		port = $3; send = $4; first = $5; last = $6; found = 0
		for (i = 1; i <= cnt[port]; i++) {
			if (rd[port, i] < send || rd[port, i] > first)
				continue
			found = 1
			if (!(rd[port, i] <= enq[port, i] &&
			      enq[port, i] <= dis[port, i] &&
			      dis[port, i] <= ps[port, i] &&
			      ps[port, i] <= pe[port, i] &&
			      pe[port, i] <= fw[port, i] &&
			      fw[port, i] <= lw[port, i] &&
			      fw[port, i] <= first && lw[port, i] <= last))
				printf "request %s: out of order\n", $1
			if ($8 < pre[port, i])
				printf "request %s: ttft %d < prefill %d\n",
					$1, $8, pre[port, i]
			if ($7 != tok[port, i])
				printf "request %s: %d tokens, server %d\n",
					$1, $7, tok[port, i]
			if (st[port, i] != "ok" || $10 != "ok")
				printf "request %s: status %s/%s\n", $1, $10,
					st[port, i]
		}
		if (!found)
			printf "request %s (port %s): no server row\n", $1, port
	}' "$2" "$1"
}

median_col() { # median_col FILE COLUMN: median of a numeric CSV column
	tail -n +2 "$1" | cut -d, -f"$2" | sort -n |
		awk '{ v[NR] = $1 }
		     END { print NR ? v[int((NR + 1) / 2)] : -1 }'
}

# scenario NAME LOADGEN_ARGS -- SERVER_ARGS: run, then check everything
scenario() {
	local name=$1 lg_args=() srv_args=() out problems n_client n_server
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do lg_args+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	srv_args=("$@")
	if ! start_server "$name" "${srv_args[@]}"; then
		fail "$name: server starts" "$(cat "$TMP/$name.server.out")"
		return
	fi
	out=$TMP/$name.client
	"$LOADGEN" -p "$PORT" -o "$out.csv" "${lg_args[@]}" >"$out.txt" 2>&1
	check "$name: loadgen succeeds" "$(tr '\n' ';' <"$out.txt")" \
		[ $? -eq 0 ]
	check "$name: server stops cleanly on SIGTERM" "" stop_server TERM
	n_client=$(rows "$out.csv")
	n_server=$(rows "$TMP/$name.gt")
	check "$name: request counts match" \
		"loadgen $n_client, server log $n_server" \
		[ "$n_client" -gt 0 -a "$n_client" -eq "$n_server" ]
	problems=$(match_rows "$out.csv" "$TMP/$name.gt")
	check "$name: client rows match server ground truth" \
		"$(echo "$problems" | head -3 | tr '\n' ';')" [ -z "$problems" ]
}

tpot_close() { # median TPOT within [0.9, 1.6] x interval + 0.3 ms
	local med=$1
	[ "$med" -ge $((INTERVAL_US * 900)) ] &&
		[ "$med" -le $((INTERVAL_US * 1600 + 300000)) ]
}

for bin in "$SERVER" "$LOADGEN" "$CPUHOG" "$BULK"; do
	if [ ! -x "$bin" ]; then
		fail "binaries built" "$bin missing (make tools)"
		exit 1
	fi
done

# --- the three framings, and both hand-offs
scenario sse -c 4 -n 40 --tokens 8 -- --prefill-us 1000
scenario chunked -c 4 -n 40 --tokens 8 -- --framing chunked --prefill-us 1000
scenario headers-with-body -c 3 -n 30 --tokens 8 -- --headers-with-body \
	--framing chunked --handoff pipe
scenario headers-with-body-sse -c 2 -n 20 --tokens 8 -- --headers-with-body
scenario writev -c 2 -n 20 --tokens 8 -- --framing chunked --send-call writev \
	--headers-with-body
scenario sendmsg -c 2 -n 20 --tokens 8 -- --send-call sendmsg
med=$(median_col "$TMP/sse.client.csv" 9)
check "TPOT close to the token interval" \
	"median TPOT $med ns, interval $INTERVAL_US us" tpot_close "$med"

# --- continuous batching: more requests than --batch must queue
scenario queueing -c 4 -n 16 --tokens 4 -- --batch 1 --prefill-us 1000
queued=$(tail -n +2 "$TMP/queueing.gt" |
	awk -F, '$12 > 2000000 { n++ } END { print n + 0 }')
check "queueing: requests beyond --batch wait in the queue" \
	"$queued requests queued > 2 ms" [ "$queued" -ge 4 ]
# a queued request's iteration boundary: the engine's hand-off before it
# (0 when the engine was idle: a slow wakeup can queue the first request)
bounded=$(tail -n +2 "$TMP/queueing.gt" | awk -F, '$34 > $5 { bad++ }
	$12 > 2000000 && $34 >= $4 && $34 <= $5 { n++ }
	END { print bad ? -1 : n + 0 }')
check "queueing: t_boundary_ns lies between enqueue and dispatch" \
	"$bounded of $queued queued requests (-1: one after its dispatch)" \
	[ "$bounded" -ge 4 ]

# --- random prefill, spin modes, tokenizer burn, 1 MB prompts, new conns
scenario uniform-prefill -c 1 -n 6 --tokens 2 -- \
	--prefill-us uniform:1000:3000 --seed 3
bad=$(tail -n +2 "$TMP/uniform-prefill.gt" |
	awk -F, '$11 < 1000000 || $11 > 50000000 { n++ } END { print n + 0 }')
check "uniform prefill stays in its range" "$bad rows outside" [ "$bad" -eq 0 ]
scenario spin -c 2 -n 6 --tokens 4 -- --prefill-mode spin \
	--decode-mode spin --prefill-us exp:1000
scenario tokenize -c 1 -n 3 --tokens 2 --prompt-bytes 20000 -- \
	--tokenize-ns-per-byte 100
slow=$(tail -n +2 "$TMP/tokenize.gt" |
	awk -F, '$13 >= 2000000 && $14 == 20000 { n++ } END { print n + 0 }')
check "tokenize burns prompt_bytes x ns-per-byte" "$slow of 3" \
	[ "$slow" -eq 3 ]
scenario large-prompt -c 2 -n 4 --tokens 2 --prompt-bytes 1048576 --
big=$(tail -n +2 "$TMP/large-prompt.gt" |
	awk -F, '$14 == 1048576 { n++ } END { print n + 0 }')
check "1 MB prompts are read whole" "$big of 4" [ "$big" -eq 4 ]
scenario new-conn -c 2 -n 8 --tokens 2 --new-conn --
ports=$(tail -n +2 "$TMP/new-conn.client.csv" | cut -d, -f3 | sort -u | wc -l)
check "--new-conn uses a connection per request" "$ports ports" \
	[ "$ports" -eq 8 ]

# the first bytes of a request are read before its end: 1 MB takes more
# than one read, at least on a connection's first request (later ones may
# find it all in the socket buffer, read in one go)
early=$(tail -n +2 "$TMP/large-prompt.gt" | awk -F, '$23 <= 0 || $23 > $3 {
	bad++ } $23 > 0 && $23 < $3 { n++ } END { print bad ? -1 : n + 0 }')
check "t_first_byte_read_ns precedes t_read_done_ns of 1 MB prompts" \
	"$early of 4 earlier (-1: one after, or missing)" [ "$early" -ge 2 ]

# --- the log keeps its old columns in their places; new ones at the end
cols="id,peer_port,t_read_done_ns,t_enqueue_ns,t_dispatch_ns,\
t_prefill_start_ns,t_prefill_end_ns,t_first_token_write_ns,\
t_last_token_write_ns,tokens,prefill_ns,queue_ns,tokenize_ns,prompt_bytes,\
status,io_ns,io_wait_ns,engine_cpu_ns,engine_runnable_ns,engine_sleep_ns,\
engine_run_delay_ns,engine_wake_delay_ns,t_first_byte_read_ns,t_token_ns,\
upstream_port,tokenize_cpu_ns,fe_run_delay_ns,fe_read_wake_ns,gpu_ns,kernel_ns,\
launch_cpu_ns,sync_wait_ns,sync_cpu_ns,t_boundary_ns,io_cpu_ns,\
t_submit_call_ns,t_admitted_ret_ns"
check "log header: old columns first, ground-truth columns after" \
	"$(head -1 "$TMP/sse.gt")" [ "$(head -1 "$TMP/sse.gt")" = "$cols" ]
# the brackets around the marked calls (tests/compare_marks.py)
bad=$(tail -n +2 "$TMP/sse.gt" | awk -F, '!($36 > 0 && $36 <= $4 &&
	$4 <= $5 && $5 <= $37) { n++ } END { print n + 0 }')
check "t_submit_call .. t_enqueue and t_dispatch .. t_admitted_ret in order" \
	"$bad rows not" [ "$bad" -eq 0 ]
# the columns --help does not name (a trailing _ns may go unsaid)
missing=$("$SERVER" --help | awk -v cols="$cols" '{ text = text $0 "\n" }
	END { n = split(cols, c, ","); for (i = 1; i <= n; i++) {
		k = c[i]; sub(/_ns$/, "", k); if (!index(text, k)) print c[i] } }')
check "demo-server --help describes every log column" "missing: $missing" \
	[ -z "$missing" ]
# the engine's truth is there for every request: dispatch, first token
bad=$(tail -n +2 "$TMP/sse.gt" | awk -F, '!($24 >= $5 && $24 <= $8 &&
	$5 > 0 && $18 >= 0 && $25 == 0) { n++ } END { print n + 0 }')
check "t_token_ns lies between dispatch and first write" "$bad rows not" \
	[ "$bad" -eq 0 ]
bad=$(tail -n +2 "$TMP/sse.gt" | awk -F, '$29 + $30 + $31 + $32 + $33 != 0 {
	n++ } END { print n + 0 }')
check "GPU columns are 0 without --gpu" "$bad rows not" [ "$bad" -eq 0 ]

# --- runqueue ground truth: a spinning engine pinned behind two hogs. The
# spin spans two scheduler ticks at least (HZ=250: 4 ms), so that a tick
# finds its slice spent and preempts it: a 4 ms spin ran whole between two
# ticks in one CI run (engine_runnable_ns 0, its wait all before it)
"$CPUHOG" -c 0 -n 2 -t 5 &
EXTRA_PIDS+=($!)
scenario runqueue -c 1 -n 6 --tokens 2 -- --engine-cpu 0 --prefill-mode spin \
	--decode-mode spin --prefill-us 9000 -i 1000
kill "${EXTRA_PIDS[-1]}" 2>/dev/null
wait "${EXTRA_PIDS[-1]}" 2>/dev/null
med_runnable=$(median_col "$TMP/runqueue.gt" 19)
med_delay=$(median_col "$TMP/runqueue.gt" 21)
med_cpu=$(median_col "$TMP/runqueue.gt" 18)
check "runqueue: the engine waits runnable behind cpuhog" \
	"median engine_runnable_ns $med_runnable, run_delay $med_delay, cpu $med_cpu" \
	[ "$med_runnable" -ge 1000000 -a "$med_delay" -ge 1000000 -a \
	  "$med_cpu" -ge 500000 ]
scenario sleep-truth -c 1 -n 4 --tokens 2 -- --prefill-us 3000 -i 1000
med_sleep=$(median_col "$TMP/sleep-truth.gt" 20)
check "sleep steps are engine_sleep_ns" "median $med_sleep" \
	[ "$med_sleep" -ge 3500000 -a "$med_sleep" -le 8000000 ]

# --- O_DIRECT KV reads from a file on a disk
for d in /var/tmp "$OUT"; do
	case $(stat -f -c %T "$d" 2>/dev/null) in
	""|tmpfs|ramfs) continue ;;
	esac
	KV_DIR=$(mktemp -d "$d/test_demo_kv.XXXXXX") && break
done
if [ -n "$KV_DIR" ] && dd if=/dev/urandom of="$KV_DIR/kv" bs=1M count=16 \
	oflag=direct status=none 2>/dev/null; then
	scenario kv -c 2 -n 8 --tokens 2 -- --kv-file "$KV_DIR/kv" \
		--kv-read-bytes 1048576 --prefill-us 500
	bad=$(tail -n +2 "$TMP/kv.gt" | awk -F, '!($16 > 0 && $17 <= $16 &&
		$11 >= $16 && $35 > 0 && $17 + $35 <= $16) { n++ }
		END { print n + 0 }')
	check "kv: every prefill reads, io_wait_ns + io_cpu_ns <= io_ns <= prefill_ns" \
		"$bad rows not" [ "$bad" -eq 0 ]
	check "kv: --kv-read-bytes larger than the file is refused" "" \
		bad_option "$SERVER" --kv-file "$KV_DIR/kv" \
		--kv-read-bytes 33554432
else
	skip "kv: O_DIRECT reads" "no block-device directory for a KV file"
fi
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	head -c 65536 /dev/zero >"/dev/shm/test_demo_kv.$$"
	err=$("$SERVER" --kv-file "/dev/shm/test_demo_kv.$$" \
		--kv-read-bytes 4096 2>&1 >/dev/null)
	rc=$?
	rm -f "/dev/shm/test_demo_kv.$$"
	check "kv: a file on tmpfs is refused, one line, exit 2" "rc $rc: $err" \
		[ "$rc" -eq 2 -a "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]
else
	skip "kv: tmpfs refusal" "/dev/shm is not tmpfs"
fi

# --- --split: the engine in a process of its own, over unix sockets
scenario split -c 4 -n 24 --tokens 4 -- --split --batch 2 --prefill-us 1000 \
	--prefill-mode spin
bad=$(tail -n +2 "$TMP/split.gt" | awk -F, '!($5 > 0 && $24 >= $5 &&
	$18 > 0) { n++ } END { print n + 0 }')
check "split: engine times reach the front-end's log" "$bad rows without" \
	[ "$bad" -eq 0 ]
if start_server split-proc --split; then
	child=$(pgrep -P "$SERVER_PID" | head -1)
	check "split: the engine is a child process" "children: $child" \
		[ -n "$child" ]
	pid=$SERVER_PID
	check "split: stops cleanly on SIGTERM" "" stop_server TERM
	check "split: the engine process is gone too" "" \
		eval "! kill -0 ${child:-0} 2>/dev/null"
else
	fail "split-proc: server starts" ""
fi
if start_server split-kill --split; then
	child=$(pgrep -P "$SERVER_PID" | head -1)
	stop_server KILL 2>/dev/null
	for _ in $(seq 250); do # ASan builds exit slowly (leak check)
		kill -0 "${child:-0}" 2>/dev/null || break
		sleep 0.02
	done
	check "split: the engine process dies with a killed front-end" "" \
		eval "! kill -0 ${child:-0} 2>/dev/null"
fi
if start_server split-abort --split --batch 2; then
	"$LOADGEN" -p "$PORT" -c 3 -n 3 --tokens 100000 -q --timeout 5 \
		2>/dev/null &
	LOADGEN_PID=$!
	sleep 0.3
	check "split: SIGTERM mid-stream stops it cleanly" "" stop_server TERM
	wait "$LOADGEN_PID"
	LOADGEN_PID=
	aborted=$(awk -F, '$15 == "aborted" { n++ } END { print n + 0 }' \
		"$TMP/split-abort.gt")
	check "split: in-flight and queued requests are logged as aborted" \
		"$aborted of 3" [ "$aborted" -eq 3 ]
fi

# --- --proxy: a front-end relaying to an engine instance over TCP
if start_server proxy-engine --batch 2 --prefill-us 1000; then
	engine_pid=$SERVER_PID
	engine_port=$PORT
	EXTRA_PIDS+=("$engine_pid")
	if start_server proxy --proxy "127.0.0.1:$engine_port"; then
		"$LOADGEN" -p "$PORT" -c 3 -n 18 --tokens 3 \
			-o "$TMP/proxy.client.csv" >"$TMP/proxy.txt" 2>&1
		check "proxy: loadgen succeeds" "$(tr '\n' ';' <"$TMP/proxy.txt")" \
			[ $? -eq 0 ]
		check "proxy: front-end stops cleanly" "" stop_server TERM
		# every front-end row has its engine row: same link, in time
		problems=$(awk -F, '
		FNR == 1 { next }
		NR == FNR { n = ++cnt[$2]; rd[$2, n] = $3; tok[$2, n] = $10
			    next }
		{ found = 0
		  for (i = 1; i <= cnt[$25]; i++)
			if (rd[$25, i] >= $4 && rd[$25, i] <= $8 &&
			    tok[$25, i] == $10 && $15 == "ok")
				found = 1
		  if (!found || $25 == 0) print "row " $1 " has no engine row" }
		' "$TMP/proxy-engine.gt" "$TMP/proxy.gt")
		n_fe=$(rows "$TMP/proxy.gt")
		check "proxy: each front-end row has its engine instance row" \
			"$n_fe rows; $(echo "$problems" | head -2 | tr '\n' ';')" \
			[ "$n_fe" -eq 18 -a -z "$problems" ]
		links=$(tail -n +2 "$TMP/proxy.gt" | cut -d, -f25 | sort -u | wc -l)
		check "proxy: one keep-alive link per front-end thread" \
			"$links links for 3 connections" [ "$links" -le 3 ]
	else
		fail "proxy: server starts" ""
	fi
	kill "$engine_pid" 2>/dev/null
	wait "$engine_pid" 2>/dev/null
	if start_server proxy-down --proxy "127.0.0.1:$engine_port"; then
		reply=$(timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$PORT"'
			printf "POST /v1/completions HTTP/1.1\r\nContent-Length: 15\r\nConnection: close\r\n\r\n{\"prompt\": \"x\"}" >&3
			cat <&3')
		check "proxy: an engine that is gone gets the client a 502" \
			"${reply:0:40}" [ "${reply:0:12}" = "HTTP/1.1 502" ]
		stop_server TERM
	fi
else
	fail "proxy-engine: server starts" ""
fi

# --- --gpu: prefill and decode as kernels on the stub GPU (tools/stubcuda)
# gpu_scenario NAME MODE LOADGEN-ARGS -- SERVER-ARGS: scenario() with the
# stub's device node and log of its own; 4 kernels a step, 100 us launches
gpu_scenario() {
	local name=$1 mode=$2
	shift 2
	export STUBCUDA_DEVICE=$TMP/$name.nvidia0 STUBCUDA_LOG=$TMP/$name.stub
	export STUBCUDA_LAUNCH_NS=100000
	scenario "$name" "$@" --gpu --gpu-sync "$mode" --kernels-per-step 4
	unset STUBCUDA_DEVICE STUBCUDA_LOG STUBCUDA_LAUNCH_NS
}
# gpu_truth NAME MODE: the GPU columns of NAME's log against the knobs
# (2 ms prefill a request, 2 ms decode): prints what is wrong
gpu_truth() {
	tail -n +2 "$TMP/$1.gt" | awk -F, -v mode="$2" '
	{ kern = $30; gpu = $29; launch = $31; wait = $32; scpu = $33
	  if (kern % 2000000 || kern < 4000000 || kern > 2000000 * 9)
		print "request " $1 ": kernel_ns " kern
	  if (!(gpu > 0 && gpu <= wait && wait <= $8 - $5))
		print "request " $1 ": gpu " gpu " sync wait " wait
	  if (launch < 360000)
		print "request " $1 ": launch_cpu_ns " launch
	  cpu += scpu; wall += wait }
	# a spinning sync is on CPU, but for its preemptions on a busy machine
	END { if (mode == "spin" && cpu < wall / 4 ||
		  mode == "block" && cpu > wall / 4)
		print mode " syncs: " cpu " ns of CPU in " wall " ns" }'
}
# stub_truth NAME MODE: the stub's log agrees: 4 kernels a sync, its mode
stub_truth() {
	awk -F, -v mode="$2" '$1 == "kernel" { k++ }
		$1 == "sync" { s++; if ($5 != mode) bad++ }
		END { if (!s || k != 4 * s || bad)
			print k + 0 " kernels, " s + 0 " syncs, " bad + 0 \
				" not " mode }' "$TMP/$1.stub"
}
if [ -e "$OUT/tools/libcuda.so.1" ]; then
	for mode in spin block; do
		gpu_scenario "gpu-$mode" "$mode" -c 2 -n 8 --tokens 3 -- \
			--prefill-us 2000
		problems=$(gpu_truth "gpu-$mode" "$mode")
		check "gpu-$mode: GPU ground truth columns add up" \
			"$(echo "$problems" | head -3 | tr '\n' ';')" [ -z "$problems" ]
		problems=$(stub_truth "gpu-$mode" "$mode")
		check "gpu-$mode: the stub ran 4 kernels per sync, $mode waits" \
			"$problems" [ -z "$problems" ]
	done
	gpu_scenario gpu-split spin -c 2 -n 6 --tokens 2 -- --split \
		--prefill-us 2000
	problems=$(gpu_truth gpu-split spin)
	check "gpu-split: GPU ground truth reaches the front-end's log" \
		"$(echo "$problems" | head -3 | tr '\n' ';')" [ -z "$problems" ]
	err=$("$SERVER" -p 0 --gpu --gpu-lib "$TMP/no-such-libcuda.so" 2>&1 \
		>/dev/null)
	rc=$?
	check "--gpu with a library that is not there: one line, exit 1" \
		"rc $rc: $err" [ "$rc" -eq 1 -a \
		"$(printf '%s\n' "$err" | wc -l)" -eq 1 ]
else
	skip "gpu: demo-server --gpu" "$OUT/tools/libcuda.so.1 not built"
fi

# --- cpuhog and bulk: bounded helpers
start=$(date +%s%N)
"$CPUHOG" -c 0 -n 2 -t 0.3
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "cpuhog stops by itself" "rc $rc after $ms ms" \
	[ "$rc" -eq 0 -a "$ms" -ge 250 -a "$ms" -lt 3000 ]
# --stall: bursts at SCHED_FIFO (FF in ps), sleeping between (8:30: about
# an eighth of the CPU; busy throughout, it would be all of it); root's,
# where real-time scheduling is allowed (chrt tells)
if [ "$(id -u)" = 0 ] && chrt -f 1 true 2>/dev/null; then
	(
		TIMEFORMAT=%U
		time "$CPUHOG" -c 0 -t 1 -s 8:30 >"$TMP/stall.out" 2>&1
	) 2>"$TMP/stall.cpu" &
	stall_pid=$!
	sleep 0.3
	cls=$(ps -L -o cls= -p "$(pgrep -P "$stall_pid" -x cpuhog)" 2>/dev/null |
		sort -u | xargs)
	wait "$stall_pid"
	check "cpuhog --stall bursts at SCHED_FIFO" \
		"classes '$cls' $(cat "$TMP/stall.out")" \
		grep -qw FF <<<"$cls"
	check "cpuhog --stall sleeps between its bursts" \
		"$(cat "$TMP/stall.cpu") s of CPU in 1 s" \
		awk -v u="$(cat "$TMP/stall.cpu")" 'BEGIN { exit !(u > 0.02 && u < 0.5) }'
else
	skip "cpuhog --stall" "SCHED_FIFO not allowed here (root, CAP_SYS_NICE)"
fi
bulk_port=$((20000 + $$ % 20000))
for proto in tcp udp; do
	flag=
	[ "$proto" = udp ] && flag=-u
	"$BULK" sink $flag -a 127.0.0.1 -p "$bulk_port" -t 0.6 \
		>"$TMP/sink.$proto" 2>&1 &
	sink_pid=$!
	"$BULK" send $flag -H 127.0.0.1 -p "$bulk_port" -t 0.2 \
		>"$TMP/send.$proto" 2>&1
	rc=$?
	wait "$sink_pid"
	sent=$(awk '{ print $3 }' "$TMP/send.$proto")
	got=$(awk '{ print $3 }' "$TMP/sink.$proto")
	check "bulk $proto: sender and sink move data, then stop" \
		"rc $rc, sent ${sent:-?}, received ${got:-?}" \
		[ "$rc" -eq 0 -a "${sent:-0}" -gt 0 -a "${got:-0}" -gt 0 ]
done

# --- IPv6 listen address
if start_server ipv6 -a ::1 2>/dev/null; then
	check "ipv6: loadgen over ::1" "" "$LOADGEN" -H ::1 -p "$PORT" -c 2 \
		-n 4 --tokens 2 -q
	check "ipv6: server stops cleanly" "" stop_server TERM
else
	skip "ipv6: loadgen over ::1" "cannot listen on ::1"
fi

# --- raw HTTP: errors are 4xx, Connection: close is honoured
# http_exchange REQUEST: sends it with bash's /dev/tcp, prints the reply
# shellcheck disable=SC2016 # $1 expands in the inner shell
http_exchange() {
	timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$PORT"'
		printf "%b" "$1" >&3; cat <&3' _ "$1"
}
post_close() { # post_close BODY: a completion request that closes after
	printf 'POST /v1/completions HTTP/1.1\\r\\nContent-Length: %d\\r\\n' \
		"${#1}"
	printf 'Connection: close\\r\\n\\r\\n%s' "$1"
}
check_status() { # check_status NAME CODE REQUEST
	local reply
	reply=$(http_exchange "$3")
	check "$1" "${reply:0:40}" [ "${reply:0:12}" = "HTTP/1.1 $2" ]
}
if start_server raw -t 3; then
	body='{"prompt": "hi", "max_tokens": 2, "stream": true}'
	req="POST /v1/completions HTTP/1.1\r\nContent-Length: ${#body}\r\n"
	reply=$(http_exchange "${req}Connection: close\r\n\r\n$body")
	rc=$?
	check "Connection: close ends the stream with [DONE] and a close" \
		"rc $rc: $(echo "$reply" | head -3 | tr '\r\n' '  ')" \
		[ "$rc" -eq 0 -a \
		  "$(printf '%s' "$reply" | grep -c '^data: ')" -eq 3 -a \
		  "$(printf '%s' "$reply" | tail -1)" = 'data: [DONE]' ]
	close="Connection: close\r\n"
	check_status "unknown path gets 404" 404 \
		"GET /nope HTTP/1.1\r\nHost: x\r\n$close\r\n"
	check_status "wrong method gets 405" 405 \
		"GET /v1/completions HTTP/1.1\r\n$close\r\n"
	check_status "bad JSON gets 400" 400 "$(post_close '{"prompt"')"
	check_status "prompt of the wrong type gets 400" 400 \
		"$(post_close '{"prompt": 1}')"
	check_status "garbage request line gets 400" 400 "garbage\r\n\r\n"
	reply=$(http_exchange "$(post_close '{"prompt": "x"}')")
	check "stream=false gets one JSON body" "${reply:0:60}" \
		[ "${reply:0:12}" = "HTTP/1.1 200" -a "$(printf '%s' "$reply" |
		  tail -1 | grep -c '"text":"tok0tok1tok2"')" -eq 1 ]
	# two requests on one keep-alive connection, then a close
	reply=$(http_exchange "$req\r\n$body$(post_close "$body")")
	check "keep-alive serves pipelined requests in order" \
		"$(printf '%s' "$reply" | grep -c 'DONE') [DONE] events" \
		[ "$(printf '%s' "$reply" | grep -c '^data: \[DONE\]')" -eq 2 ]
	check "server survives bad requests" "" kill -0 "$SERVER_PID"
	check "raw: server stops cleanly" "" stop_server INT
else
	fail "raw: server starts" "$(cat "$TMP/raw.server.out")"
fi

# --- a killed server still leaves its rows; loadgen is bounded
if start_server killed; then
	# HTTPS asked of a plain server: one line saying so, exit 1
	"$LOADGEN" -p "$PORT" --tls -c 1 -n 1 -q 2>"$TMP/tls.err"
	rc=$?
	check "loadgen --tls against plain HTTP: exit 1, the handshake's error" \
		"rc $rc: $(cat "$TMP/tls.err")" \
		eval "[ $rc = 1 ] && grep -q 'TLS handshake with 127.0.0.1 port $PORT failed' '$TMP/tls.err'"
	# HTTP/2 asked of an HTTP/1.1 server: its answer named, exit 1
	"$LOADGEN" -p "$PORT" --h2 -c 1 -n 1 >"$TMP/h2.out" 2>&1
	rc=$?
	check "loadgen --h2 against HTTP/1.1: exit 1, not_h2" \
		"rc $rc: $(tail -1 "$TMP/h2.out")" \
		eval "[ $rc = 1 ] && grep -q 'failed: 1 not_h2' '$TMP/h2.out'"
	"$LOADGEN" -p "$PORT" -c 2 -n 10 --tokens 2 -q
	stop_server KILL 2>/dev/null  # no "Killed" job notice
	n=$(rows "$TMP/killed.gt")
	check "SIGKILLed server leaves whole log rows" "$n rows" [ "$n" -eq 10 ]
else
	fail "killed: server starts" ""
fi
# HTTP/2 over TLS asked of a server that offers no h2 by ALPN: one line
if command -v openssl >/dev/null &&
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" \
		-days 2 -subj /CN=localhost >/dev/null 2>&1; then
	openssl s_server -accept 127.0.0.1:0 -cert "$TMP/cert.pem" -key "$TMP/key.pem" -www \
		>"$TMP/s_server.out" 2>&1 &
	EXTRA_PIDS+=($!)
	for _ in $(seq 250); do
		grep -q '^ACCEPT' "$TMP/s_server.out" && break
		sleep 0.02
	done
	tls_port=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' "$TMP/s_server.out")
	"$LOADGEN" -p "${tls_port:-1}" --tls --h2 -c 1 -n 1 -q 2>"$TMP/alpn.err"
	rc=$?
	check "loadgen --tls --h2 against a server without h2: exit 1, says so" \
		"rc $rc: $(cat "$TMP/alpn.err")" \
		eval "[ $rc = 1 ] && grep -q 'port ${tls_port:-1} did not choose HTTP/2 (ALPN h2)' '$TMP/alpn.err'"
	kill "${EXTRA_PIDS[-1]}" 2>/dev/null
else
	fail "loadgen --tls --h2: no openssl to make a certificate (tools/deps.sh installs it)"
fi
if start_server abort --batch 2; then
	"$LOADGEN" -p "$PORT" -c 3 -n 3 --tokens 100000 -q --timeout 5 \
		2>/dev/null &
	LOADGEN_PID=$!
	sleep 0.3
	check "SIGTERM mid-stream stops the server cleanly" "" stop_server TERM
	wait "$LOADGEN_PID"
	rc=$?
	LOADGEN_PID=
	aborted=$(awk -F, '$15 == "aborted" { n++ } END { print n + 0 }' \
		"$TMP/abort.gt")
	check "in-flight and queued requests are logged as aborted" \
		"$aborted of 3, loadgen rc $rc" \
		[ "$aborted" -eq 3 -a "$rc" -eq 1 ]
else
	fail "abort: server starts" ""
fi
if start_server duration; then
	start=$(date +%s%N)
	"$LOADGEN" -p "$PORT" -c 2 -d 0.3 --rate 40 --tokens 2 -q \
		-o "$TMP/d.csv"
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	n=$(rows "$TMP/d.csv")
	check "loadgen -d/--rate is bounded and paced" \
		"rc $rc, ${ms} ms, $n requests" \
		[ "$rc" -eq 0 -a "$ms" -lt 3000 -a "$n" -ge 6 -a "$n" -le 16 ]
	stop_server TERM
else
	fail "duration: server starts" ""
fi
"$LOADGEN" -p "$PORT" -n 2 -q --timeout 2 2>"$TMP/refused.err"
rc=$?
check "loadgen fails cleanly when nobody listens" \
	"rc $rc: $(cat "$TMP/refused.err")" \
	[ "$rc" -eq 1 -a "$(wc -l <"$TMP/refused.err")" -eq 1 ]

# --- bad options: one line on stderr, exit 2
check "demo-server rejects bad values" "" bad_option "$SERVER" --batch 0
check "demo-server rejects bad prefill spec" "" \
	bad_option "$SERVER" --prefill-us exp:x
check "demo-server rejects bad framing" "" bad_option "$SERVER" --framing h2
check "loadgen rejects bad values" "" bad_option "$LOADGEN" -c -1
check "demo-server rejects --split with --proxy" "" \
	bad_option "$SERVER" --split --proxy 127.0.0.1:1
check "demo-server rejects a bad --proxy" "" bad_option "$SERVER" --proxy x
check "demo-server rejects a bare IPv6 --proxy" "" \
	bad_option "$SERVER" --proxy ::1:80
check "demo-server rejects --kv-file without --kv-read-bytes" "" \
	bad_option "$SERVER" --kv-file /etc/hostname
check "demo-server rejects unaligned --kv-read-bytes" "" \
	bad_option "$SERVER" --kv-file /etc/hostname --kv-read-bytes 1000
check "demo-server rejects --handoff with --split" "" \
	bad_option "$SERVER" --split --handoff pipe
check "demo-server rejects a CPU it may not use" "" \
	bad_option "$SERVER" --engine-cpu 1023
check "demo-server rejects --gpu-sync without --gpu" "" \
	bad_option "$SERVER" --gpu-sync block
check "demo-server rejects a bad --gpu-sync" "" \
	bad_option "$SERVER" --gpu --gpu-sync yield
check "demo-server rejects --kernels-per-step 0" "" \
	bad_option "$SERVER" --gpu --kernels-per-step 0
check "demo-server rejects --gpu with --proxy" "" \
	bad_option "$SERVER" --gpu --proxy 127.0.0.1:1
check "demo-server rejects --gpu with --prefill-mode" "" \
	bad_option "$SERVER" --gpu --prefill-mode spin
check "cpuhog rejects missing options" "" bad_option "$CPUHOG" -c 0
check "cpuhog rejects a CPU it may not use" "" bad_option "$CPUHOG" -c 1023 -t 1
check "cpuhog rejects a bad --stall" "" bad_option "$CPUHOG" -c 0 -t 1 -s 8
check "bulk rejects a missing mode" "" bad_option "$BULK" -p 1
check "bulk rejects send without a host" "" bad_option "$BULK" send -p 1
check "loadgen rejects unknown options" "" bad_option "$LOADGEN" --bogus
help_ok() { "$1" --help | grep -q '^Examples:'; }
check "demo-server --help has examples" "" help_ok "$SERVER"
check "loadgen --help has examples" "" help_ok "$LOADGEN"
check "cpuhog --help has examples" "" help_ok "$CPUHOG"
check "bulk --help has examples" "" help_ok "$BULK"

[ "$FAILED" -eq 0 ]
