#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Loads the BPF programs for real: the demo server over loopback with a known
# prefill distribution, the load generator at several concurrencies and in
# each response framing and send call, and with CLOCK_REALTIME stepped;
# ttftrace's requests must match the client's.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_ttft
tt_setup

# run_scenario NAME SERVER-ARGS...: clients at concurrency 1, 2 and 4, or
# one with CLIENTS=OPTIONS; BESIDE=CMD runs CMD while the clients do, then
# stops it with SIGTERM; COMPARE=OPTIONS for compare_ttft.py; the loopback
# device's stalls are taken out of the client's reference (lo_stalls.bt)
run_scenario() {
	local name=$1 beside=
	shift
	start_server "$TT_TMP/$name.gt.csv" --prefill-us exp:3000 --seed 7 \
		-t 32 -i 2000 -w 8 --batch 8 "$@"
	start_record "$TT_TMP/$name.ttft" -p "$SERVER_PID"
	# the reference's own error: a vCPU stolen inside the loopback device
	start_lo_stalls "$TT_TMP/$name.stalls" || return
	if [ -n "${BESIDE:-}" ]; then
		$BESIDE &
		beside=$!
	fi
	# the client is the reference: SCHED_FIFO, and its token times are
	# the kernel's receive stamps, so that its own wakeup (late by ms
	# now and then on a busy 2-core machine) is not in them
	if [ -n "${CLIENTS:-}" ]; then
		# shellcheck disable=SC2086 # options, split
		chrt -f 10 "$LOADGEN" -q -p "$PORT" $CLIENTS \
			-o "$TT_TMP/$name.lg.csv" || fail "$name: loadgen $CLIENTS"
	else
		for c in 1 2 4; do
			chrt -f 10 "$LOADGEN" -q -p "$PORT" -c $c -n $((c * 32)) \
				--tokens 32 -o "$TT_TMP/$name.lg$c.csv" ||
				fail "$name: loadgen -c $c"
		done
	fi
	if [ -n "$beside" ]; then
		kill -TERM "$beside"
		wait "$beside"
	fi
	stop_lo_stalls
	stop_record
	check "$name: record exits 0" [ "$RECORD_STATUS" = 0 ]
	kill -TERM "$SERVER_PID"
	wait "$SERVER_PID"
	if ! "$TTFTRACE" report --json "$TT_TMP/$name.ttft" >"$TT_TMP/$name.json"; then
		fail "$name: report"
		return
	fi
	# shellcheck disable=SC2086 # options, split
	python3 "$(dirname "$0")/compare_ttft.py" "$TT_TMP/$name.json" \
		--server-log "$TT_TMP/$name.gt.csv" --stalls "$TT_TMP/$name.stalls" ${COMPARE:-} \
		"$TT_TMP"/$name.lg*.csv | sed "s/^\(PASS\|FAIL\|info\): /\1: $name: /"
	tail -n 1 "$TT_TMP/$name.ttft.log" | sed 's/^/  /'
}

# dev_readies RECORDING: its DATA_READY_DEV records (a request's arrival
# where the device handed its bytes on, before any backlog)
dev_readies() {
	"$TTFTRACE" report --events "$1" | grep -c ' data_ready_dev '
}

run_scenario sse
n=$(dev_readies "$TT_TMP/sse.ttft")
check "sse: every request's bytes carry the device's receive stamp ($n DATA_READY_DEV for 224 requests)" \
	[ "$n" -ge 224 ]
# without receive stamps the socket's own time stands: none is recorded
start_server "$TT_TMP/nostamp.gt.csv" -t 4
TTFTRACE_RX_STAMPS=0 start_record "$TT_TMP/nostamp.ttft" -p "$SERVER_PID"
"$LOADGEN" -q -p "$PORT" -c 1 -n 5 --tokens 4 -o "$TT_TMP/nostamp.csv" ||
	fail "nostamp: loadgen"
stop_record
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
n=$(dev_readies "$TT_TMP/nostamp.ttft")
check "TTFTRACE_RX_STAMPS=0: record exits 0" [ "$RECORD_STATUS" = 0 ]
check "TTFTRACE_RX_STAMPS=0: no DATA_READY_DEV ($n)" [ "$n" = 0 ]
run_scenario chunked --framing chunked
run_scenario together --headers-with-body
# token events as iovecs: the tokens are past the first one
run_scenario writev --framing chunked --send-call writev
run_scenario sendmsg --headers-with-body --send-call sendmsg
# CLOCK_REALTIME, the receive stamps' clock, stepped 4 ms back and forth
# every 300 ms while the clients run, as a VM's time sync or NTP steps it:
# the arrivals stay on CLOCK_MONOTONIC (a stamp's age is read on its own
# clock at sk_data_ready), and so does the client's reference (a stamp
# loadgen converts across a step is taken on the reading its bounds allow,
# or left out). Short requests 100 ms apart on each connection: a stamp
# moved 4 ms early is not saved by the connection's last send, tens of ms
# before. TTFT only: TPOT is the wire's, on CLOCK_MONOTONIC
BESIDE="python3 $(dirname "$0")/../tools/clockstep.py --step-us 4000 --every-ms 300 --log $TT_TMP/clockstep.steps" \
	CLIENTS="-c 2 -d 8 --rate 20 --tokens 8" COMPARE=--ttft-only \
	run_scenario clockstep -i 5000
[ -z "${TT_FAILED:-}" ]
