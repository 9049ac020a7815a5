#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Records each named scenario server under `ttftrace record -c`, drives it
# with build/tools/loadgen on loopback at a few concurrencies, and prints
# truth vs attributed (compare.py). A measurement tool, like bench/: it
# checks nothing. As root, from the repository root, after make:
#   tools/scenarios/run.sh [SCENARIO...]     (default: all)
# Scenarios: gil vllm vllm-uvloop sglang node go go-lock nagle odirect pool
# llama llama-delay lit lit-uvloop mpq mpq-mark vllm-mark gil-mark shm v0 v0-delay v0-mark hf hf-threaded
# llamacpp-py llamacpp-py-mark llamacpp-py-interrupt trtllm trtllm-mark mlc mlc-mark
# tgi tgi-rs tgi-rs-mark tgi-py ollama gateway node-gateway java localai
# localai-serial localai-hf nginx caddy (-tls, -h2, -h2-mux) caddy-h2-long
# node-long vllm-long sglang-long (README.md).
# RECORD_OPTS="--goroutines=off" adds record options; LOADGEN_OPTS="--prompt-bytes
# 200000" adds loadgen options (a long prompt: a request of many reads).
# CONC="1 4 8" concurrencies, N=40 requests per concurrency (each bounded
# to 20 s), OUTDIR=build/scenarios/runs/TIME keeps every file of the run.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUTPUT=${OUTPUT:-build}
TTFTRACE=$OUTPUT/ttftrace
LOADGEN=$OUTPUT/tools/loadgen
SCEN=tools/scenarios
CONC=${CONC:-1 4 8}
N=${N:-40}
OUTDIR=${OUTDIR:-$OUTPUT/scenarios/runs/$(date +%Y%m%d-%H%M%S)}
PY=/usr/bin/python3	# Debian's: uvicorn, starlette, aiohttp, zmq are its packages
# RECORD_OPTS: more `ttftrace record` options, e.g. --goroutines=off
read -ra record_opts <<<"${RECORD_OPTS:-}"
read -ra loadgen_opts <<<"${LOADGEN_OPTS:-}"
RECORD_PID=

die() { echo "run.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (BPF)"
{ [ -x "$TTFTRACE" ] && [ -x "$LOADGEN" ]; } || die "make first ($TTFTRACE, $LOADGEN)"
mkdir -p "$OUTDIR"

cleanup() {
	[ -n "$RECORD_PID" ] && kill -INT "$RECORD_PID" 2>/dev/null && wait "$RECORD_PID"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# newer OUT SRC...: OUT was built after every SRC changed
newer() {
	local f
	for f in "${@:2}"; do
		[ "$1" -nt "$f" ] || return 1
	done
}

# build_go [--stripped] NAME [PART...]: tools/scenarios/NAME.go, a Go
# program, with goclock.go and tools/scenarios/PART.go (goengine: the
# engine servers'); Debian's Go packages (golang-google-grpc-dev) are in
# /usr/share/gocode. --stripped: built as Ollama's releases are (-ldflags
# "-w -s": no symbol table, no DWARF; position-independent, linked by the
# system's linker as a cgo program is), into NAME-stripped
build_go() {
	local f out flags=() srcs
	if [ "$1" = --stripped ]; then
		shift
		out=$OUTPUT/scenarios/$1-stripped
		flags=(-buildmode=pie -ldflags "-w -s -linkmode=external")
	else
		out=$OUTPUT/scenarios/$1
	fi
	srcs=("$SCEN/$1.go" "$SCEN/goclock.go")
	for f in "${@:2}"; do srcs+=("$SCEN/$f.go"); done
	newer "$out" "${srcs[@]}" && return 0
	# go wants them absolute, whether OUTPUT is or not
	GOCACHE=$(realpath -m "$OUTPUT/scenarios/gocache") \
		GOPATH=$(realpath -m "$OUTPUT/scenarios/gopath"):/usr/share/gocode \
		GO111MODULE=off GOFLAGS='' HOME=/nonexistent \
		go build "${flags[@]}" -o "$out" "${srcs[@]}"
}

build_java() { # NAME: tools/scenarios/NAME.java, a Java server, into $OUTPUT/scenarios/NAME/
	[ "$OUTPUT/scenarios/$1/.built" -nt "$SCEN/$1.java" ] && return 0
	command -v javac >/dev/null || die "$1 needs javac (apt-get install openjdk-17-jdk-headless)"
	mkdir -p "$OUTPUT/scenarios/$1" && javac -d "$OUTPUT/scenarios/$1" "$SCEN/$1.java" &&
		touch "$OUTPUT/scenarios/$1/.built"
}

# build_rust NAME: tools/scenarios/NAME/, a cargo package, built offline
# against Debian's crates (librust-*-dev) from a copy in $OUTPUT/scenarios/
# (cargo writes Cargo.lock beside Cargo.toml); the binary is
# $OUTPUT/scenarios/NAME
build_rust() {
	local src=$SCEN/$1 copy=$OUTPUT/scenarios/$1-src
	newer "$OUTPUT/scenarios/$1" "$src/Cargo.toml" "$src"/src/*.rs && return 0
	command -v cargo >/dev/null || die "$1 needs cargo (tools/deps.sh installs it)"
	compgen -G "/usr/share/cargo/registry/tokio-1.*" >/dev/null ||
		die "$1 needs Debian's crates (apt-get install librust-tokio-dev)"
	rm -rf "$copy" && mkdir -p "$copy" && cp -r "$src/Cargo.toml" "$src/src" "$copy/" &&
		cargo build -q --release --offline --manifest-path "$copy/Cargo.toml" \
			--target-dir "$OUTPUT/scenarios/rust-target" \
			--config 'source.crates-io.replace-with="debian"' \
			--config 'source.debian.directory="/usr/share/cargo/registry"' &&
		cp "$OUTPUT/scenarios/rust-target/release/$1" "$OUTPUT/scenarios/$1"
}

build_c() { # NAME: tools/scenarios/NAME.c, a C server
	newer "$OUTPUT/scenarios/$1" "$SCEN/$1.c" "$SCEN/clock.h" && return 0
	mkdir -p "$OUTPUT/scenarios" &&
		${CC:-cc} -O2 -g -Wall -pthread -o "$OUTPUT/scenarios/$1" "$SCEN/$1.c"
}

build_so() { # NAME: tools/scenarios/NAME.c, a library a server loads, as libNAME.so
	newer "$OUTPUT/scenarios/lib$1.so" "$SCEN/$1.c" "$SCEN/clock.h" && return 0
	mkdir -p "$OUTPUT/scenarios" &&
		${CC:-cc} -O2 -g -Wall -pthread -shared -fPIC -o "$OUTPUT/scenarios/lib$1.so" "$SCEN/$1.c"
}

weights() { # a file on the disk for the O_DIRECT reads
	local f=$OUTPUT/scenarios/weights.bin
	mkdir -p "$OUTPUT/scenarios" || return 1
	[ -s "$f" ] || dd if=/dev/urandom of="$f" bs=1M count=64 status=none
	echo "$f"
}

# tls_cert DIR: a self-signed certificate and its key made in DIR, as
# CERT,KEY (the HTTPS scenarios')
tls_cert() {
	mkdir -p "$1" &&
		openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/key.pem" -out "$1/cert.pem" \
			-days 2 -subj /CN=localhost >/dev/null 2>&1 ||
		{ echo "run.sh: openssl req made no certificate in $1 (tools/deps.sh installs openssl)" >&2 && return 1; }
	echo "$1/cert.pem,$1/key.pem"
}

# proxy_opts NAME DIR: proxy_front.sh's options for a proxy scenario run in DIR
proxy_opts() {
	case $1 in
	nginx-h10) echo --h10 ;;
	nginx-buffered) echo --buffered ;;
	caddy) echo --caddy ;;
	nginx-tls) echo "--tls $(tls_cert "$2")" ;;
	caddy-tls) echo "--caddy --tls $(tls_cert "$2")" ;;
	nginx-h2 | nginx-h2-mux) echo "--h2 --tls $(tls_cert "$2")" ;;
	caddy-h2 | caddy-h2-mux | caddy-h2-long) echo "--caddy --h2 --tls $(tls_cert "$2")" ;;
	esac
}

# client_opts NAME: loadgen's options beyond the run's own
client_opts() {
	case $1 in
	nginx-tls | caddy-tls | vllm-tls | go-tls) echo --tls ;;
	nginx-h2 | caddy-h2) echo --tls --h2 ;;
	# four streams in flight on each connection, as a browser's
	nginx-h2-mux | caddy-h2-mux) echo --tls --h2 --streams 4 ;;
	# a long prompt (RAG's, a long chat's): each request many reads,
	# streamed on by Caddy before its last, parsed by Node in 5 ms, by
	# an event loop's reads between its handlers
	caddy-h2-long) echo --tls --h2 --prompt-bytes 200000 ;;
	node-long | vllm-long | sglang-long) echo --prompt-bytes 200000 ;;
	esac
}

# server_cmd NAME PORT LOG: the scenario's command line
server_cmd() {
	local port=$2 log=$3
	case $1 in
	gil) echo "$PY $SCEN/gil_server.py -p $port --log $log --batch 1" ;;
	# the same, marking its put and its admission (scenario_opts)
	gil-mark) echo "$PY $SCEN/gil_server.py -p $port --log $log --batch 1 --audit" ;;
	nagle) echo "$PY $SCEN/gil_server.py -p $port --log $log --batch 4 --nagle" ;;
	odirect) echo "$PY $SCEN/gil_server.py -p $port --log $log --batch 1 \
--odirect $(weights) --odirect-mb 8" ;;
	vllm | vllm-long) echo "$PY $SCEN/vllm_server.py -p $port --log $log" ;;
	# marking itself by str ids, API and engine (scenario_opts)
	vllm-mark) echo "$PY $SCEN/vllm_server.py -p $port --log $log --audit" ;;
	# vLLM's own defaults with its dependencies installed: uvloop, httptools
	vllm-uvloop) echo "$PY $SCEN/vllm_server.py -p $port --log $log --uvloop" ;;
	# HTTPS served by uvicorn itself (vLLM's --ssl-certfile): asyncio's SSL
	vllm-tls) echo "$PY $SCEN/vllm_server.py -p $port --log $log --tls $(tls_cert "${log%/*}")" ;;
	lit-uvloop) echo "$PY $SCEN/lit_server.py -p $port --log $log --uvloop" ;;
	# listens once its Scheduler and Detokenizer said ready, as vllm does
	# once its EngineCore did: the listen wait below is the readiness wait
	sglang | sglang-long) echo "$PY $SCEN/sglang_server.py -p $port --log $log" ;;
	node | node-long) echo "/usr/bin/node $SCEN/node_server.js -p $port --log $log" ;;
	pool) echo "$PY $SCEN/pool_server.py -p $port --log $log" ;;
	hf) echo "$PY $SCEN/hf_server.py -p $port --log $log" ;;
	hf-threaded) echo "$PY $SCEN/hf_server.py -p $port --log $log --threaded" ;;
	llamacpp-py) echo "$PY $SCEN/llamacpp_py_server.py -p $port --log $log" ;;
	llamacpp-py-mark) echo "$PY $SCEN/llamacpp_py_server.py -p $port --log $log --audit" ;;
	llamacpp-py-interrupt) echo "$PY $SCEN/llamacpp_py_server.py -p $port --log $log --interrupt" ;;
	trtllm) echo "$PY $SCEN/trtllm_server.py -p $port --log $log" ;;
	trtllm-mark) echo "$PY $SCEN/trtllm_server.py -p $port --log $log --audit" ;;
	mlc) build_so mlc_engine && echo "$PY $SCEN/mlc_server.py -p $port --log $log \
--engine-lib $OUTPUT/scenarios/libmlc_engine.so" ;;
	mlc-mark) build_so mlc_engine && echo "$PY $SCEN/mlc_server.py -p $port --log $log \
--engine-lib $OUTPUT/scenarios/libmlc_engine.so --audit" ;;
	mpq) echo "$PY $SCEN/mpq_server.py -p $port --log $log --batch 4" ;;
	shm) echo "$PY $SCEN/shm_server.py -p $port --log $log --batch 4" ;;
	v0) echo "$PY $SCEN/v0_server.py -p $port --log $log" ;;
	v0-delay) echo "$PY $SCEN/v0_server.py -p $port --log $log --batch-wait-ms 5" ;;
	# the same, marking its put and its admission (scenario_opts)
	v0-mark) echo "$PY $SCEN/v0_server.py -p $port --log $log --audit" ;;
	# the same, marking its put and its prefill (scenario_opts)
	mpq-mark) echo "$PY $SCEN/mpq_server.py -p $port --log $log --batch 4 --audit" ;;
	lit) echo "$PY $SCEN/lit_server.py -p $port --log $log" ;;
	go) build_go go_server goengine && echo "$OUTPUT/scenarios/go_server -p $port -log $log" ;;
	tgi) build_go tgi_router goengine && echo "$OUTPUT/scenarios/tgi_router -p $port -log $log \
-shard $SCEN/tgi_shard.py" ;;
	# tgi-rs-mark: the same, its append and prefill call marked
	# (scenario_opts)
	tgi-rs | tgi-rs-mark) build_rust tgi_rs && echo "$OUTPUT/scenarios/tgi_rs -p $port \
--log $log --shard $SCEN/tgi_shard.py" ;;
	tgi-py) echo "$PY $SCEN/tgi_py_router.py -p $port --log $log" ;;
	# go built as a release is: stripped (docs/design.md §4.10)
	go-stripped) build_go --stripped go_server goengine &&
		echo "$OUTPUT/scenarios/go_server-stripped -p $port -log $log" ;;
	go-lock) build_go go_server goengine && echo "$OUTPUT/scenarios/go_server -p $port -log $log -lock" ;;
	# HTTPS by Go's crypto/tls (stripped, as release builds are)
	go-tls) build_go --stripped go_server goengine &&
		echo "$OUTPUT/scenarios/go_server-stripped -p $port -log $log -tls $(tls_cert "${log%/*}")" ;;
	# a 64 MB heap, so that G1 collects under load; TCP_NODELAY as Netty sets it
	java) build_java java_server && echo "java -Xmx64m -Dsun.net.httpserver.nodelay=true \
-cp $OUTPUT/scenarios/java_server JavaServer -p $port --log $log" ;;
	llama) build_c llama_server && echo "$OUTPUT/scenarios/llama_server -p $port --log $log" ;;
	llama-delay) build_c llama_server &&
		echo "$OUTPUT/scenarios/llama_server -p $port --log $log --batch-delay-ms 5" ;;
	# the runner's own rows go beside the proxy's: compare.py --hops joins them
	ollama) build_go ollama_proxy && build_c llama_server &&
		echo "$OUTPUT/scenarios/ollama_proxy -p $port -log $log \
-runner $OUTPUT/scenarios/llama_server -runner-log ${log%.csv}-runner.csv" ;;
	# LocalAI's Go API calling its Python backend over gRPC (a child it
	# spawns on a free port); -serial: its default, one call at a time
	localai) build_go localai_front && echo "$OUTPUT/scenarios/localai_front -p $port \
-log $log -backend '$PY $SCEN/localai_backend.py'" ;;
	localai-serial) build_go localai_front && echo "$OUTPUT/scenarios/localai_front -p $port \
-log $log -parallel=false -backend '$PY $SCEN/localai_backend.py'" ;;
	# every call on one connection, streams multiplexed (a kept ClientConn)
	localai-shared) build_go localai_front && echo "$OUTPUT/scenarios/localai_front -p $port \
-log $log -shared-conn -backend '$PY $SCEN/localai_backend.py'" ;;
	# its transformers backend: a synchronous gRPC server, a thread per
	# generate() behind the model's lock
	localai-hf) build_go localai_front && echo "$OUTPUT/scenarios/localai_front -p $port \
-log $log -backend '$PY $SCEN/localai_backend.py --sync'" ;;
	# a real reverse proxy in front of vllm: Debian's nginx (as SSE guides
	# set it; -h10: its default upstream protocol, a connection per request;
	# -buffered: proxy_buffering left on) or Caddy
	nginx | nginx-h10 | nginx-buffered | nginx-tls | nginx-h2 | nginx-h2-mux | caddy | caddy-tls | caddy-h2 | caddy-h2-mux | caddy-h2-long) echo "bash $SCEN/proxy_front.sh -p $port \
-d ${log%/*}/proxy $(proxy_opts "$1" "${log%/*}/proxy") -- $PY $SCEN/vllm_server.py --log $log" ;;
	gateway) build_c llama_server && echo "$PY $SCEN/gateway_server.py -p $port --log $log \
--runner $OUTPUT/scenarios/llama_server --runner-log ${log%.csv}-runner.csv" ;;
	node-gateway) build_c llama_server && echo "/usr/bin/node $SCEN/node_gateway.js -p $port \
--log $log --runner $OUTPUT/scenarios/llama_server --runner-log ${log%.csv}-runner.csv" ;;
	*) return 1 ;;
	esac
}

# scenario_opts NAME: more record options: the --mark options of a server
# that marks itself, --goroutines=on where the probe must stay
scenario_opts() {
	case $1 in
	# auto takes the probe off at this rate (a goroutine per dial); at the
	# thread level a request queued on the front's mutex takes the call
	# before its own (docs/design.md §4.11)
	localai-serial) echo "--goroutines=on" ;;
	gil-mark) echo "--mark enqueue=python:$PY:gil.put,key=arg1 \
--mark dispatch=python:$PY:gil.admit,key=arg1" ;;
	mpq-mark) echo "--mark enqueue=python:$PY:mpq.put,key=arg1 \
--mark dispatch=python:$PY:mpq.prefill,key=arg1" ;;
	v0-mark) echo "--mark enqueue=python:$PY:v0.put,key=arg1 \
--mark dispatch=python:$PY:v0.admit,key=arg1" ;;
	vllm-mark) echo "--mark enqueue=python:$PY:vllm.enqueue,key=arg1,peer=arg2 \
--mark dispatch=python:$PY:vllm.admit,key=arg1" ;;
	llamacpp-py-mark) echo "--mark enqueue=python:$PY:llamacpp.enqueue,key=arg1,peer=arg2 \
--mark dispatch=python:$PY:llamacpp.admit,key=arg1" ;;
	trtllm-mark) echo "--mark enqueue=python:$PY:trtllm.enqueue,key=arg1,peer=arg2 \
--mark dispatch=python:$PY:trtllm.admit,key=arg1" ;;
	mlc-mark) echo "--mark enqueue=python:$PY:mlc.enqueue,key=arg1,peer=arg2 \
--mark dispatch=$OUTPUT/scenarios/libmlc_engine.so:mlc_mark_admit,key=arg1" ;;
	# a task may resume on any worker: the client's port binds the append
	tgi-rs-mark) echo "--mark enqueue=$OUTPUT/scenarios/tgi_rs:ttft_mark_enqueue,key=arg1,peer=arg2 \
--mark dispatch=$OUTPUT/scenarios/tgi_rs:ttft_mark_dispatch,key=arg1" ;;
	esac
}

run_one() {
	local name=$1 port=$2 d=$OUTDIR/$1 cmd c clients=() truth_opts=() want marks lgopts
	mkdir -p "$d"
	cmd=$(server_cmd "$name" "$port" "$d/truth.csv") || die "unknown scenario $name"
	read -ra marks <<<"$(scenario_opts "$name")"
	read -ra lgopts <<<"$(client_opts "$name")"
	echo "=== $name: $cmd ${marks[*]}"
	"$TTFTRACE" record "${record_opts[@]}" "${marks[@]}" -o "$d/rec.ttft" -c "$cmd" \
		2>"$d/record.log" &
	RECORD_PID=$!
	for _ in $(seq 200); do
		ss -Hltn "sport = :$port" | grep -q . && break
		kill -0 "$RECORD_PID" 2>/dev/null || break
		sleep 0.1
	done
	ss -Hltn "sport = :$port" | grep -q . || { cat "$d/record.log"; die "$name did not listen"; }
	for c in $CONC; do
		"$LOADGEN" -p "$port" "${lgopts[@]}" "${loadgen_opts[@]}" -c "$c" -n "$N" -d 20 --tokens 8 -q \
			-o "$d/client-c$c.csv" ||
			echo "run.sh: $name: loadgen -c $c failed" >&2
		clients+=("$d/client-c$c.csv")
	done
	# a server logs a request after its last send, which its client may
	# have read first: on a loaded machine, wait (5 s at most) for the
	# rows of the requests the clients finished before stopping it
	want=$(cat "${clients[@]}" | grep -c ',ok,')
	for _ in $(seq 50); do
		[ "$(($(cat "$d/truth.csv" 2>/dev/null | wc -l) - 1))" -ge "$want" ] &&
			break
		sleep 0.1
	done
	kill -INT "$RECORD_PID"
	wait "$RECORD_PID"
	RECORD_PID=
	tail -n 3 "$d/record.log"
	"$TTFTRACE" report --json "$d/rec.ttft" >"$d/report.json" 2>"$d/report.err"
	[ -f "$d/truth-runner.csv" ] && truth_opts=(--hops "$d/truth-runner.csv")
	# behind a real proxy the truth is the server's: its own first send
	case $name in nginx | nginx-* | caddy | caddy-*) truth_opts=(--token-at-hop) ;; esac
	"$PY" "$SCEN/compare.py" --name "$name" --report "$d/report.json" --truth "$d/truth.csv" \
		"${truth_opts[@]}" --ttftrace "$TTFTRACE" --recording "$d/rec.ttft" --summary "$OUTDIR/summary.jsonl" \
		"${clients[@]}" |
		tee "$d/compare.txt"
}

[ $# -gt 0 ] || set -- gil vllm vllm-uvloop sglang node go go-lock nagle odirect pool llama \
	llama-delay lit lit-uvloop mpq ollama gateway node-gateway java tgi-rs hf llamacpp-py
# free_port: other runs may be going on
. tools/free_port.sh
for s in "$@"; do
	run_one "$s" "$(free_port)"
done
"$PY" "$SCEN/compare.py" --table "$OUTDIR/summary.jsonl"
echo "files in $OUTDIR"
