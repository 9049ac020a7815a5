#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# The Python and Node servers of tools/scenarios (issue 8), each recorded at
# 1, 4 and 8 connections (120 requests) and compared with its own log by
# tools/scenarios/compare.py (tests/scen_check.py states the limits):
#   gil    CPython thread pool + engine thread (queue.Queue, Condition):
#          queue and admission-to-token within max(1 ms, 5%) at p50
#   nagle  the same with continuous batching and Nagle on keep-alive
#   vllm   vLLM V1-shaped: asyncio API (uvicorn, starlette) -> ZMQ ipc ->
#          EngineCore (input thread, busy loop, output thread)
#   vllm-uvloop  the same API on uvloop's loop and httptools' parser, as
#          vLLM runs uvicorn with its dependencies installed
#   node   Node http SSE, a worker_threads engine fed by a MessagePort
#   odirect  gil with 8 MiB of O_DIRECT preadv per request before prefill:
#          also the storage span (the read loop of the path's first
#          storage wait to its last one's end) within max(1 ms, 5%) of the
#          server's read loop
#   pool   aiohttp handing generate() to a ThreadPoolExecutor, one model
#          behind a threading.Lock (written after the rules, to judge
#          them): off by more than 1 ms for 2-9 of 120 in five runs, two of
#          them with a CPU hog (107-117 before the lock turn): 12% allowed
#   lit    LitServe-shaped: multiprocessing queues (pipes) between the
#          asyncio API and a worker that collates batches of 4 within 5 ms
#          (docs/design.md §4.4, "Batches that fill"): off by more than
#          1 ms for 0-10 of 120 in nine runs, 14-37 in six beside a CPU
#          hog (an engine's put that woke nobody: the step before taken),
#          and 94-118 before the batch rule; with the take rule (the
#          worker's read of its request pipe), 0-1 in five runs, two of
#          them hogged, and 22-42 beside a compile: 35% allowed, held by
#          its shares only (its admission-to-token has two modes, as
#          Node's)
#   mpq    aiohttp feeding a model process through multiprocessing
#          queues (a feeder thread and a pipe each way, continuous batches
#          of 4; written after the rules, to judge them, session 38):
#          t_dispatch off for 0-10 of 120 in ten runs (eight beside CPU
#          load), the queue for 4-33 (t_enqueue: the loop's hand-offs in
#          turn, a put whose feeder thread was busy woke nobody:
#          docs/design.md §4.4; 35 before a hand-off's answer was looked
#          for three threads deep): 35% allowed, as lit's
#   shm    handler threads and a model process over shared-memory rings
#          (POSIX semaphores: Triton's Python backend; written after the
#          rules, to judge them, session 42): t_dispatch at t_read for 35
#          of 120 before a futex shared between processes was one word
#          (docs/design.md §4.3); after, off for 0-8 of 120 in five runs
#          (four beside CPU load; a pause of 0.6 ms of the engine's CPU
#          between two posts of one step splits its burst): 12% allowed
#   mpq-mark  mpq marking itself (--audit: sys.audit at its put and at
#          its prefill's start, recorded with --mark KIND=python:...,
#          docs/design.md §4.9): every request dispatched by its marker,
#          t_enqueue off for 0 of 120 and t_dispatch for 0-1 in five runs
#          (four beside CPU load), the strict check passing in all five:
#          2% allowed, strict
#   gil-mark  gil marking itself (--audit: sys.audit at its put and in the
#          engine thread at its admission): gil beside a compile or two CPU
#          hogs had 12-24 of 120 off in seven runs (an emit to a handler not
#          waiting wakes nobody, the step before taken); marked, the same
#          gate as mpq-mark's (tools/scenarios/README.md, session 41)
#   v0-mark  vLLM V0's shape (the engine an asyncio task of the API's loop,
#          its forward in a worker thread) marking itself: its put and its
#          admission make no event (v0 unmarked, measured in tools/scenarios,
#          not gated: t_enqueue off for 51-67 of 120 in five runs, the put
#          of a request whose loop ran other handlers before its engine
#          step); marked, 0 off in two runs (one beside two CPU hogs), the
#          same gate as mpq-mark's (session 42)
#   vllm-mark  vllm marking itself by str ids ("cmpl-N", its enqueue with
#          the client's port), API and EngineCore (--audit): 0 off in five
#          runs, the same gate
#   gateway  an aiohttp gateway (one event loop) in front of llama_server.c
#          on loopback (written after the hop rules, to judge them:
#          docs/design.md §4.11): every runner call a hop counted apart,
#          every request walked through its own (120 of 120 in five runs,
#          two with a CPU hog), t_dispatch off for 1-10 of 120 (the
#          runner's own rules), 14-51 before hops
#   node-gateway  a Node gateway (libuv's loop, http.request with a
#          keep-alive Agent) in front of llama_server.c, written after the
#          gateway's reads were recorded, to judge them: every request
#          walked through its own hop in five runs (two hogged), t_dispatch
#          off for 0-6 of 120, all of them the runner's own (4-11 with a
#          100 us window for the hand-off rule's next run; gateway's CI
#          run had 20 that way, its rerun passed); its coalesced
#          writev sends (12 iovecs for three events) held tokens the
#          recorder did not gather before 32 iovecs (TPOT 17-40% high)
#   hf     a thread per request running generate() under one model lock,
#          tokens through transformers' TextIteratorStreamer read by
#          starlette in anyio's worker threads (written to judge the
#          rules, session 49): t_dispatch off for 73-79 of 120 before the
#          lock turn followed a relay (docs/design.md §4.3); after, 0-9 in
#          ten runs (eight beside CPU load, 9 beside two hogs): 12% allowed
#   llamacpp-py  llama-cpp-python's server (written to judge the rules,
#          session 50): the model's lock taken in one of anyio's workers,
#          released by the loop at a stream's end, the prefill run in
#          another worker after more of the loop's steps: t_dispatch off
#          for 39-61 of 120 before the loop's lock turn (docs/design.md
#          §4.3); after, 1-5 in five runs (four beside CPU load): 10%
#   trtllm  TensorRT-LLM's OpenAI server with its executor in-process
#          (written to judge the rules, session 51): the put on the busy
#          executor's queue wakes nobody, uvicorn runs a batch's handlers
#          back to back and sends their headers together, the executor
#          waits for the GIL the loop holds: t_enqueue off for 48-51 of
#          120 quiet before the loop's share (docs/design.md §4.4,
#          "Handlers back to back"), 0 after; t_dispatch and admission to
#          token 0-4 of 120 in ten runs, eight beside CPU load, but 19 in
#          one beside a hog on each CPU (the output path 20 ms behind the
#          engine); the queue 0-15, 31 there: 5%, 15%, 5%
#   mlc    MLC LLM's OpenAI server over its native threaded engine (written
#          to judge the rules, session 52): a put to a busy engine wakes
#          nobody, a put to an idle one wakes it, and the handlers await
#          the first token before any headers: t_enqueue off for 44-51 of
#          120 in five runs (four beside CPU load) before the loop's next
#          turn ended a batch's handlers (docs/design.md §4.4, "Handlers
#          back to back"); after, 0-7, the queue 1-8, t_dispatch and
#          admission to token 0-3: 5%, 10%, 5%
#   nginx  Debian's nginx (its master and two workers) as the reverse proxy
#          in front of vllm, as SSE guides set it (proxy_buffering off,
#          HTTP/1.1 keep-alive upstream); nginx-h10 with nginx's default
#          upstream (HTTP/1.0, a connection per request, the response
#          ending at its close). A real proxy, not one written here: the
#          rules were not changed for it (session 54). Five runs each, one
#          beside each load (nothing, a CPU hog, one on each CPU, stalling
#          hogs, a compile): every request complete, read and answered by
#          nginx and walked through its hop; queue span off for 0-2 of 120,
#          admission to token 0-11, t_enqueue 0-3, t_dispatch 0-4: vllm's
#          limits
#   caddy  the same with Caddy 2.6 (Debian's: a Go program, stripped) as
#          the proxy, its reverse_proxy flushing each write, followed on
#          its goroutines: five runs, queue span off for 0-1 of 120,
#          admission to token 0-13, t_enqueue and t_dispatch 0-2
#   nginx-tls, caddy-tls  the same proxies terminating HTTPS (nginx's
#          OpenSSL, Caddy's Go crypto/tls; loadgen --tls), and vllm-tls,
#          uvicorn serving HTTPS itself (asyncio's SSL), session 55: five
#          runs each, one beside each load, every request complete and read
#          as plaintext, TTFT within the bound for every request the client
#          timed alone; t_dispatch off for 0-3 (nginx-tls), 0-5 (vllm-tls,
#          caddy-tls) of 120, the queue span 0-2, 0-6, 1-6, admission to
#          token 0-3, 0-5, 0-5; before the handshakes' reads were left out
#          of the loops' orders, t_enqueue was off for 26 (nginx-tls) and
#          23 (vllm-tls) of 120 quiet
#   nginx-h2, caddy-h2  the same proxies speaking HTTP/2 to the client
#          (ALPN h2; loadgen --tls --h2), session 56: every request complete,
#          TTFT within the bound for every request timed alone, TPOT too.
#          nginx-h2, eleven runs (five quiet, six beside the loads above):
#          t_dispatch off for 0-12 of 120, the queue span 0-17, admission
#          to token 0-13 (the most beside two hogs or a compile), vllm's
#          limits. caddy-h2 (Go's HTTP/2 server: a goroutine reads the
#          frames, one per stream runs the handler, one per DATA frame
#          writes it), fifteen runs: t_dispatch 2-5 quiet, 6-20 loaded
#          (caddy-tls 1-12 beside the same), the queue 6-22 and 7-24,
#          admission to token 2-6 and 7-21; 107-115 of 120 walked through
#          their hop, the misses where Caddy is followed at the thread level
#          (docs/design.md §3.1, "HTTP/2 to the client"): its shares are
#          looser
#   caddy-h2-long  caddy-h2 with 200 KB prompts (loadgen --prompt-bytes):
#          Caddy streams each body on to vllm after its headers, so the hop
#          goes out before the last read (docs/design.md §4.11). Session
#          57, ten runs (two quiet, a CPU hog, one on each CPU, stalling
#          hogs; twice): t_dispatch off for 1-6 of 120 but beside two hogs
#          (7, 21), the queue span 2-16 (9, 20), admission to token 1-7
#          (7, 21); 115-120 walked through their hops. Before the hop
#          counted from the first read, on the first five: t_dispatch
#          19-38, the queue span 20-31, admission to token 20-38, 77-88
#          through the hop. Its shares are looser than caddy-h2's: the two
#          hogs' run came within a request of caddy-h2's 20%
#   vllm-long  vllm with 200 KB prompts, uvicorn's loop reading long bodies
#          between its handlers (docs/design.md §4.4, "Turns", long
#          prompts): its reads one batch until a ZMQ send comes between.
#          Session 58, five runs (quiet, beside a compile, a CPU hog, a hog
#          on each CPU, stalling hogs): t_enqueue off for 0-5 of 120
#          (before: 7-10, the share rule's split of the batch at 0.5 ms of
#          CPU), t_dispatch 0-8, the queue span 0-7; five more with
#          loadgen writing the body after the headers: t_enqueue 0-4,
#          t_dispatch 0-5
# (tools/scenarios' sglang, the SGLang-shaped server, is measured there, not
# gated here: a busy Detokenizer taken for the engine, and batches picked
# up after the Scheduler's own pre-admission work, put 1-16 of 120 requests
# off by more than 1 ms in its runs: docs/design.md §4.4)
# Node is held by its shares only: its admission-to-token has two modes
# (about 17-22 and 32 ms) whose gap its nearest-rank median can jump (22.28
# against 32.63 ms in a clean-clone CI run). odirect's admission-to-token
# share is 15%: 14 of 120 were off in one CI run, 0-7 in five local ones.
# The others are held to issue 8's bound at p50 (the queue from the hand-off
# to the admission, and admission to token, within max(1 ms, 5%) of the
# server's own). Their p99 is one or two requests of 120, which a loaded
# machine moves by a millisecond now and then (node's once in a sanitizer
# suite before CP_TURN_BEFORE): tools/scenarios/README.md has five runs,
# whose vllm and node p99s were all within the bound. The shares off by more
# than that are what holds in 5 runs on a shared 2-CPU machine, two of
# them with a CPU hog (docs/design.md §4.4 says what stays ambiguous: an
# event loop's hand-off that wakes nobody); before data wakes, turns and
# the hand-off rule's next run, vllm allowed 35% and node 25%.
# The shares are the most seen off in ten local runs (tools/scenarios/
# README.md's last two tables) and the clean-clone CI runs since, with a
# margin: gil 10 of 120 (CI; 0-7 locally), nagle 15 / 11 / 18 (a hogged
# run). odirect: 17 / 24 in a CI run (dispatch / admission to token), and
# 10 / 14, 7 / 6, 11 / 12 in three local runs right after it against 2-4 /
# 2-7 in the five interleaved after those, the build and its predecessor
# alike: how many a run has depends on how busy this shared machine is
# then. Their misses are a busy engine's emits to a handler that was not
# waiting: no wake shows the boundary, and t_dispatch is one decode step
# early (about 1.8 ms). What the gate is for, the rules failing (more than
# a third off before them), still fails it.
set -u
. "$(dirname "$0")/lib.sh"
require_root scen_py
tt_setup
for m in uvicorn starlette zmq aiohttp uvloop httptools; do
	/usr/bin/python3 -c "import $m" 2>/dev/null ||
		{ fail "scen_py: Debian's python3-$m is missing (tools/deps.sh)"; exit 1; }
done
command -v node >/dev/null || { fail "scen_py: no node (tools/deps.sh)"; exit 1; }
for p in nginx caddy; do
	command -v $p >/dev/null || { fail "scen_py: no $p (tools/deps.sh)"; exit 1; }
done
export OUTDIR=$TT_TMP/runs
CONC="1 4 8" N=40 tools/scenarios/run.sh gil nagle vllm vllm-uvloop node odirect pool \
	lit mpq shm mpq-mark vllm-mark gil-mark v0-mark v0 gateway node-gateway hf llamacpp-py \
	trtllm mlc nginx nginx-h10 caddy nginx-tls caddy-tls vllm-tls nginx-h2 caddy-h2 nginx-h2-mux caddy-h2-mux \
	caddy-h2-long vllm-long >"$TT_TMP/run.log" 2>&1
check "scen_py: tools/scenarios/run.sh gil nagle vllm vllm-uvloop node odirect pool lit mpq shm mpq-mark vllm-mark gil-mark v0-mark v0 gateway node-gateway hf llamacpp-py trtllm mlc nginx nginx-h10 caddy nginx-tls caddy-tls vllm-tls nginx-h2 caddy-h2 nginx-h2-mux caddy-h2-mux caddy-h2-long vllm-long" \
	[ $? = 0 ]
# Under ASan (make SANITIZE=1 test) the recorder takes two to three times
# its CPU from the two the server has: twice the shares off (odirect 16 and
# 20 of 120 in one such run, 0-5 in five runs of the normal build). The
# normal suite holds the figures; this one, memory safety on real servers.
scen_gate scen_py gil:0.12:0.10:0.12:p50 nagle:0.15:0.12:0.18:p50 \
	vllm:0.15:0.20:0.15:p50 vllm-uvloop:0.15:0.20:0.15:p50 node:0.10:0.15:0.10 \
	odirect:0.20:0.08:0.25:p50 pool:0.12:0.10:0.12:p50 lit:0.35:0.35:0.35 \
	mpq:0.15:0.35:0.15:p50 shm:0.12:0.10:0.12:p50 mpq-mark:0.02:0.02:0.05:strict \
	vllm-mark:0.02:0.02:0.05:strict gil-mark:0.02:0.02:0.05:strict \
	v0-mark:0.02:0.02:0.05:strict v0:0.15:0.20:0.15:enq=0.15 \
	gateway:0.15:0.25:0.15:hops=0.9 node-gateway:0.15:0.25:0.15:hops=0.9 \
	hf:0.12:0.15:0.12:p50 llamacpp-py:0.10:0.15:0.10:p50 \
	trtllm:0.05:0.15:0.05:p50 mlc:0.05:0.10:0.05:p50 \
	nginx:0.15:0.20:0.15:p50 nginx-h10:0.15:0.20:0.15:p50 caddy:0.15:0.20:0.15:p50+cut=1 \
	nginx-tls:0.15:0.20:0.15:p50 caddy-tls:0.15:0.20:0.15:p50+cut=3 \
	vllm-tls:0.15:0.20:0.15:p50 nginx-h2:0.15:0.20:0.15:p50 caddy-h2:0.20:0.25:0.20:p50 \
	caddy-h2-long:0.25:0.30:0.25:p50 vllm-long:0.15:0.20:0.15:p50+enq=0.05
# a proxy in front of vllm: each client request answered by the proxy and
# walked through its hop to vllm, whose requests are hops, counted apart;
# Caddy, a Go program Debian ships stripped, followed on its goroutines
# (its scheduler found in its function table, docs/design.md §4.10; the
# probe may come off at a high rate: then its threads, named caddy). Caddy
# 2.6 cut one response short in one CI run of nine (caddyserver/caddy#5431:
# its reverse proxy closed the upstream connection mid-stream, "use of
# closed network connection" in its log): its client got no token, and the
# tool says so (the request no-token, its hop closed mid-stream): one such
# is allowed there (+cut=1 above; caddy-tls cut 3 in one of five runs,
# beside a CPU hog: +cut=3). Behind HTTPS (-tls) each request was
# read as the plaintext its TLS library encrypted (OpenSSL's in nginx, Go's
# crypto/tls in Caddy), each handshake's exchanges counted apart.
for s in nginx nginx-h10 caddy nginx-tls caddy-tls nginx-h2 caddy-h2 caddy-h2-long; do
	check "scen_py: $s: its requests answered by the proxy, each through its hop" \
		/usr/bin/python3 - "$OUTDIR/$s/report.json" "$s" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
proxy = "caddy" if sys.argv[2].startswith("caddy") else "nginx"
tls = "-tls" in sys.argv[2] or "-h2" in sys.argv[2]
# the responses Caddy may cut, as its gate above allows
cut = {"caddy": 1, "caddy-tls": 3}.get(sys.argv[2], 0)
# over HTTP/2 some walks miss their hop: 0-3 of 120 (nginx-h2), 5-13
# (caddy-h2) in their runs above; with long prompts (caddy-h2-long) Caddy
# sends the hop before its last read: 4-5 of 120 missed it, 32-43 before
# the hop counted from the first read (docs/design.md §4.11)
least = {"nginx-h2": 115, "caddy-h2": 100,
         "caddy-h2-long": 100}.get(sys.argv[2], 120 - cut)
out = [q for q in r["requests"] if not q["tls_apart"] and
       "hop" not in (q.get("incomplete_reason") or "").split(",")]
gor = [q for q in out if q["writer_tid"] >= 1 << 31]
ok = [q for q in out if q["complete"] and q.get("hop_id") and
      q["tls"] == tls and
      (q["writer_comm"] == proxy or (proxy == "caddy" and q in gor))]
hops = r["summary"]["hops"]
print(f"{len(ok)} of {len(out)}, {len(gor)} by goroutines; hops {hops}")
sys.exit(not (len(out) == 120 and least <= len(ok) and
              120 - cut <= hops <= 120 and (proxy == "nginx" or gor)))
PY
done
# nginx-h2-mux, caddy-h2-mux: four streams in flight on each client
# connection (loadgen --streams 4), as a browser's requests share one: not
# told apart (docs/design.md §3.1, "HTTP/2"), but every request of the
# proxy's is marked, and the report says so (60 and 150 requests for the
# 120 streams in a run here, every one marked)
for s in nginx-h2-mux caddy-h2-mux; do
	read -r reqs marked < <(/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["requests"]
q = [q for q in r if not q["tls_apart"] and q.get("incomplete_reason") != "hop"]
print(len(q), sum(q["h2_multiplexed"] for q in q))' "$OUTDIR/$s/report.json" 2>/dev/null)
	check "scen_py: $s: every request marked multiplexed (${marked:-?} of ${reqs:-?})" \
		eval "[ ${reqs:-0} -gt 0 ] && [ ${reqs:-0} = ${marked:-x} ]"
	"$TTFTRACE" report "$OUTDIR/$s/rec.ttft" 2>/dev/null |
		grep -q "^http/2: $reqs requests on connections whose streams were multiplexed" ||
		fail "scen_py: $s: the report has no http/2 line for its $reqs multiplexed requests"
done
# v0 unmarked (docs/design.md §4.4, "An engine loop in the reader's
# thread"): seventeen runs, three to seven under each of four loads
# (nothing, a CPU hog, one on each CPU, stalling hogs on both), analysed
# by session 63's build: t_enqueue off by more than 1 ms for 1-12 of 120,
# t_dispatch 0-13, the queue span 1-18, admission to token 0-13; beside
# two hogs, in a recording by session 61's recorder, 31-36. Before the
# worker's earlier results counted, the same seventeen: t_enqueue 1-37
# (over the enq share in three of the seven quiet runs), the queue span
# 1-51
# v0-delay: v0 whose idle engine waits on the loop's timer, up to 5 ms, for
# a full batch (docs/design.md §4.4, "A batcher in the loop"), at one
# connection, where the timer ends each wait: t_enqueue off by more than
# 1 ms for 120 of 120 before the timer counted; after, 1-4 of 120 in
# eight runs (two each beside nothing, a CPU hog, stalling hogs and a
# compile), 10 and 18 beside two CPU hogs (the loop preempted between its
# put and its headers, or while its timer ran out): 10% allowed. At more
# connections (v0-delay in tools/scenarios) a batch fills before the timer
# runs out: t_enqueue off for 14-17 of 120 quiet or beside stalling hogs,
# 33-36 beside one or two hogs (34-46 before a later read counted)
OUTDIR=$TT_TMP/runs-c1 CONC=1 N=120 tools/scenarios/run.sh v0-delay \
	>"$TT_TMP/run-c1.log" 2>&1
check "scen_py: tools/scenarios/run.sh v0-delay at one connection" [ $? = 0 ]
OUTDIR=$TT_TMP/runs-c1 scen_gate scen_py v0-delay:0.05:0.10:0.05:enq=0.10
grep -q '"dispatch_rule": *"batch"' "$OUTDIR/lit/report.json" ||
	fail "scen_py: lit: no request dispatched by the batch rule"
for s in mpq-mark vllm-mark gil-mark v0-mark; do
	marked=$(grep -o '"dispatch_rule": *"marker"' "$OUTDIR/$s/report.json" | wc -l)
	check "scen_py: $s: every request dispatched by its Python marker ($marked of 120)" \
		[ "$marked" -ge 120 ]
done
# a request left no-wire has not been seen here, only in CI runs: the
# drill-downs of two such go to the log, which is all a CI run leaves
no_wire() { # DIR: up to two no-wire requests of a scenario's run
	/usr/bin/python3 - "$1/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = [q for q in r["requests"] if "no-wire" in (q.get("incomplete_reason") or "")]
for q in bad[:2]:
    print(q["id"], q["peer"])
PY
}
# The other views count the gateway's hops apart as the report does (docs/
# design.md §4.11): top's totals (Prometheus' too), the page, the SLO's
# judged requests; a hop counted as an incomplete request there was a bug.
gw=$OUTDIR/gateway
read -r reqs inc hops < <(/usr/bin/python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print(s["requests"], s["incomplete"], s["hops"])' "$gw/report.json" 2>/dev/null)
"$TTFTRACE" top -b --fast --replay "$gw/rec.ttft" >"$TT_TMP/gw-top" 2>&1
check "scen_py: gateway: top counts its ${reqs:-?} requests" \
	grep -q "^requests ${reqs:-x} ([0-9]* complete)" "$TT_TMP/gw-top"
check "scen_py: gateway: top counts its ${hops:-?} hops apart" \
	grep -q "^hops ${hops:-x} apart; incomplete " "$TT_TMP/gw-top"
"$TTFTRACE" report --slo ttft=10s --html "$TT_TMP/gw.html" "$gw/rec.ttft" \
	>"$TT_TMP/gw-slo" 2>&1
check "scen_py: gateway: the SLO judges no hop" \
	grep -q "not judged; ${hops:-x} hops counted apart" \
	"$TT_TMP/gw-slo"
check "scen_py: gateway: the page counts its hops apart" \
	grep -q "${reqs:-x} (complete [0-9]*, incomplete ${inc:-x}), ${hops:-x} hops apart" \
	"$TT_TMP/gw.html"
if grep -q "^FAIL.*no-wire" "$TT_TMP/check.txt"; then
	for d in "$OUTDIR"/*/; do
		no_wire "$d" | while read -r id peer; do
			echo "  $(basename "$d") request $id ($peer), no-wire:"
			"$TTFTRACE" report -R "$id" "$d/rec.ttft" 2>&1 |
				sed -n '1,12p' | sed 's/^/    /'
		done
	done
fi
true
