#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# The Ollama-shaped Go server (tools/scenarios/go_server.go, built here with
# Debian's golang-go; standard library only), without and with
# runtime.LockOSThread on its scheduler goroutine, and stripped as release
# builds are, recorded with goroutines followed (docs/design.md §4.10) and compared with the server's own log by
# tools/scenarios/compare.py. Before goroutines were followed, t_dispatch
# was more than 1 ms off for 35-40% of the requests without the lock and
# 60-70% with it (the runtime's futex wakes taken as hand-offs); with
# goroutines and channels followed, for 0-3 of 120 in most runs (up to 10
# in a busy period of this machine), and the queue (the
# hand-off to admission span) and the admission-to-token span are within
# issue 14's bound (max(1 ms, 5%) of the server's own) at p50. Their p99 is
# one or two requests of 120: it held in 8 runs of 8 last session, and
# missed once in a CI run since (queue p99 15.88 ms against 11.25), so it
# is measured (tools/scenarios/compare.py) but not gated. Also: every request complete, the TTFT exact against
# the client's kernel receive stamps, the goroutine probe attached and the
# path on goroutines, and --goroutines=off leaving the threads as they were.
# With it, a Go gateway proxying to the C runner (tools/scenarios'
# ollama): its calls to the runner counted apart as hops, and its requests
# walked through them (docs/design.md §4.11). And TGI's shape: a Go router
# that admits requests and calls a Python model shard over a unix socket
# (tools/scenarios' tgi), the shard's queue ending at the router's call;
# and the same shard called by a router on one asyncio loop (tgi-py). And
# LocalAI's shape (localai, localai-serial): a Go front calling the Python
# backend it started over gRPC on loopback TCP, a connection per call:
# each call one request of the backend's HTTP/2 connection (docs/design.md
# §3.1, "HTTP/2"), counted apart as a hop, every client request complete
# and walked through its hop; and its transformers backend (localai-hf).
set -u
. "$(dirname "$0")/lib.sh"
require_root scen_go
tt_setup
need_command scen_go go golang-go
export OUTDIR=$TT_TMP/runs
CONC="1 4 8" N=40 tools/scenarios/run.sh go go-lock go-stripped ollama tgi tgi-py localai \
	localai-serial localai-hf localai-shared go-tls >"$TT_TMP/run.log" 2>&1
check "scen_go: tools/scenarios/run.sh go go-lock go-stripped ollama tgi tgi-py localai localai-serial localai-hf localai-shared go-tls" \
	[ $? = 0 ]
# localai-shared: the calls' streams multiplexed on one kept connection,
# not told apart (docs/design.md §3.1, "HTTP/2"): its hops and the client
# requests served while they were in flight say so (84 hops and 80 of 120
# in a run here: the calls at 4 and 8 connections; 78 of the 79 whose
# t_dispatch was off by more than 1 ms); a connection per call (localai)
# never does
h2_mux() { # SCENARIO: "hops clients", those marked multiplexed
	/usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]; print(s["h2_multiplexed_hops"], s["h2_multiplexed"])' \
		"$OUTDIR/$1/report.json"
}
read -r mux_hops mux_reqs <<<"$(h2_mux localai-shared)"
check "scen_go: localai-shared: hops and requests marked multiplexed (${mux_hops:-?} hops, ${mux_reqs:-?} of 120)" \
	[ "$((${mux_hops:-0} >= 60 && ${mux_reqs:-0} >= 60))" = 1 ]
check "scen_go: localai: none marked multiplexed ($(h2_mux localai))" [ "$(h2_mux localai)" = "0 0" ]
# TGI's router calling its shard: the shard's requests dispatched by the
# router's calls (docs/design.md §4.4, "A caller and its callee")
for s in tgi tgi-py; do
	grep -q '"dispatch_rule": *"call"' "$OUTDIR/$s/report.json" ||
		fail "scen_go: $s: no request dispatched by the call rule"
done
# the premise: no symbol table to find the scheduler in
readelf -S "$OUTPUT/scenarios/go_server-stripped" | grep -q "\.symtab" &&
	fail "scen_go: go-stripped: $OUTPUT/scenarios/go_server-stripped has a symbol table"
for s in go go-lock go-stripped; do
	"$TTFTRACE" report -R 120 "$OUTDIR/$s/rec.ttft" 2>&1 | grep -q "read by goroutine" ||
		fail "scen_go: $s: the drill-down reads no goroutine"
	# the engine's takes from the jobs channel's buffer (no wake)
	grep -q '"dispatch_rule": *"channel"' "$OUTDIR/$s/report.json" ||
		fail "scen_go: $s: no request dispatched by the channel rule"
	grep -qi "warning" "$OUTDIR/$s/record.log" &&
		fail "scen_go: $s: record warned: $(grep -i warning "$OUTDIR/$s/record.log" | head -1)"
done
# The shares: go had 10 of 120 off (at concurrency 1: the handler's
# tokenizing missing from the path, `read`) in one run of eight here in a
# busy period, 7 in its predecessor's run beside it, 0-3 in the others.
# go-lock: 0-4 in CI runs but one, which had 13 (its recordings lost:
# a failed run's are now kept, and its log lists the requests off), 0-3
# locally, 0 with one and two CPU hogs beside it; the rules broken read
# 35-70%.
# Under ASan the recorder takes two to three times its CPU (as in
# test_scen_py.sh): twice the shares (go: 10 of 120 off in one such CI run)
# ollama: a Go gateway in front of the C runner (docs/design.md §4.11),
# its shares from five runs, two beside a CPU hog: t_dispatch off for 1-3
# of 120 (70-116 before hops), the queue for 3-10, admission to token
# for 1-3
# Each runner request must be a hop, counted apart, with the gateway
# threads that sent it and read its first token, and 90% of the gateway's
# requests walked through theirs: 119-120 of 120 in five runs since the
# gateway's reads of the runner's answers are recorded (99-119 before, the
# misses where the goroutine probe was taken off at concurrency 8 and an M
# woken for something else polled the hop's token; 104-119 in the five
# runs before that).
# tgi: TGI's Go router and its Python shard; two runs under each of five
# loads (nothing, a CPU hog, two, stalls on both CPUs, a compile): 0-7 of
# 120 off (t_dispatch, queue, admission to token), the strict check
# passing in all ten (29 of 120 off beside two hogs before the call
# rule). Its p99 is measured, not gated: in a CI run one request whose
# handler goroutine was preempted for 8 ms between its append and its
# block (the append makes no event) moved the queue p99 by 1.4 ms.
# tgi-py: the router on one asyncio loop; fifteen runs (three under each
# load) reanalysed by this build: t_enqueue off for 0-3 of 120,
# t_dispatch and admission to token for 0, the strict check passing in
# all fifteen. Gated at p50 as tgi is: its queue has a gap at the median
# (concurrency 1 waits about 0.1 ms), where a few requests off move p50.
# localai: its grpc.aio backend's poller hands each call to the loop that
# runs vLLM V0's engine (docs/design.md §4.4, "A poller in front of the
# loop"). Five runs of session 53, one beside each load (nothing, a hog, a
# hog on each CPU, stalling hogs, a compile): t_dispatch off for 11, 17,
# 25, 14, 38 of 120 (105 before the poller and the callee rules),
# admission to token the same. Its queue is not gated: the loop runs
# every call's handler, and nothing shows where this one's ran among them
# (t_enqueue off for 60-67 of 120, early). Its front is followed at the
# thread level (the goroutine probe comes off at this rate): 105-120 of
# 120 walked through their hop, 112 in a CI run of session 54, and 100 in
# that run's sanitizer suite (80 ms of vCPU steal): 80% required. localai-serial (LocalAI's default, one
# call at a time; recorded with goroutines followed): 1-9 of 120 off each
# way in the same five, every request through its own hop. localai-hf
# (its transformers backend: a synchronous gRPC server's pool thread
# starts a generate() thread per call; written to judge the poller rule):
# t_dispatch off for 3-9 of 120, the queue span for 5-10, admission to
# token 3-9, under the same five loads.
# Its t_enqueue (the pool thread's start of generate()'s thread, the
# handler's tokenizing before: session 64's cp_writer_handed()) off for
# 4-8 of 120 in four loads, 24 beside stalling hogs (8-25 and 96 before):
# gated at 10% (a CI run's recording: 19 before, 5 after).
# go-stripped: go built as release builds are (-ldflags "-w -s", no symbol
# table; position-independent, linked by the system's linker, as Ollama's
# cgo binary): its scheduler's functions found in Go's function table
# (user/record/gofuncs.c). Before, the program was not recognized as Go:
# followed at the thread level, t_dispatch and admission to token off for
# 44 of 120; after, 0, as go.
# go-tls: go-stripped serving HTTPS (crypto/tls, read through the probe on
# its Write; net/http's background read goroutine reading each keep-alive
# request, session 55): five runs, one beside each load, t_dispatch off
# for 0 of 120, the queue span 0, admission to token 0-1, as go (before
# the background reader's rebase: t_enqueue 10-18 off quiet, t_dispatch
# and admission to token 16-25 beside a hog or a compile).
scen_gate scen_go go:0.12:0.08:0.12:p50 go-lock:0.12:0.1:0.12:p50 go-stripped:0.12:0.08:0.12:p50 \
	go-tls:0.12:0.08:0.12:p50 \
	ollama:0.1:0.2:0.1:hops=0.9 tgi:0.08:0.08:0.08:p50 \
	tgi-py:0.08:0.08:0.08:p50 localai:0.4:1:0.4:hops=0.8 \
	localai-serial:0.12:0.12:0.12:hops=0.9 localai-hf:0.1:0.15:0.1:hops=0.9+enq=0.1
# the same server with goroutines left alone: thread-level, no goroutine
PORT=$(free_port)
start_record "$TT_TMP/off.ttft" --goroutines=off -c "exec build/scenarios/go_server -p $PORT -log $TT_TMP/off.csv"
wait_for "ss -Hltn 'sport = :$PORT' | grep -q ." 20 ||
	{ fail "scen_go: the Go server did not listen on $PORT: $(tail -2 "$TT_TMP/off.ttft.log")"; exit 1; }
"$LOADGEN" -q -p "$PORT" -c 2 -n 8 --tokens 8 --timeout 20 -o "$TT_TMP/off-client.csv"
stop_record
"$TTFTRACE" report -R 1 "$TT_TMP/off.ttft" >"$TT_TMP/off.txt" 2>&1
check "scen_go: --goroutines=off: a report" grep -q "critical path" "$TT_TMP/off.txt"
check "scen_go: --goroutines=off: threads, no goroutine" \
	bash -c "! grep -q goroutine '$TT_TMP/off.txt'"
"$TTFTRACE" record --goroutines=maybe -c true >"$TT_TMP/bad.txt" 2>&1
check "scen_go: a bad --goroutines value is refused" [ $? != 0 ]
check "scen_go: ... with a one-line reason" grep -q "invalid --goroutines" "$TT_TMP/bad.txt"
# a kernel without tcp_sendmsg_locked (TTFTRACE_HOPS=0 stands for one): the
# gateway is recorded all the same, a warning says its calls to the runner
# count as requests, and no hop is told
PORT=$(free_port)
export TTFTRACE_HOPS=0
start_record "$TT_TMP/nohops.ttft" -c "exec build/scenarios/ollama_proxy -p $PORT -log $TT_TMP/nohops.csv -runner build/scenarios/llama_server"
unset TTFTRACE_HOPS
wait_for "ss -Hltn 'sport = :$PORT' | grep -q ." 20 ||
	{ fail "scen_go: the gateway did not listen on $PORT: $(tail -2 "$TT_TMP/nohops.ttft.log")"; exit 1; }
"$LOADGEN" -q -p "$PORT" -c 2 -n 8 --tokens 4 --timeout 20
stop_record
check "scen_go: no hop probe: a one-line warning" \
	grep -q "no tcp_sendmsg_locked tracepoint" "$TT_TMP/nohops.ttft.log"
"$TTFTRACE" report --json "$TT_TMP/nohops.ttft" >"$TT_TMP/nohops.json" 2>&1
check "scen_go: no hop probe: 16 requests, no hop" \
	/usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]; sys.exit(not (s["requests"] == 16 and s["hops"] == 0))' "$TT_TMP/nohops.json"
