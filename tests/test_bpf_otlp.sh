#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# OTLP export: record --otlp and report --otlp send each request as spans
# to a receiver on loopback (tools/otlp-receiver: OpenTelemetry's generated
# protobuf code decodes and verifies every batch; tools/deps.sh installs
# it). The spans are checked against report --json of the same recording:
# one request span each, TTFT, TPOT, tokens and stages equal, child spans
# tiling TTFT; the ids are the same live and from the file; a receiver
# that answers 503 gets the batch again; a dead one costs record nothing.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_otlp
tt_setup

RECEIVER_DIR=$(dirname "$0")/../tools/otlp-receiver
if [ ! -d "$RECEIVER_DIR/node_modules/@opentelemetry/otlp-transformer" ] ||
	! command -v node >/dev/null; then
	echo "SKIP: otlp: no receiver (run tools/deps.sh: node, npm ci)"
	exit 0
fi
# start_receiver NAME [ARGS...]: spans into $TT_TMP/NAME.jsonl; sets RPORT
start_receiver() {
	local name=$1
	shift
	rm -f "$TT_TMP/rport"
	node "$RECEIVER_DIR/receiver.js" --port-file "$TT_TMP/rport" \
		--out "$TT_TMP/$name.jsonl" "$@" 2>"$TT_TMP/$name.err" &
	RECEIVER_PID=$!
	TT_PIDS+=("$RECEIVER_PID")
	wait_for "[ -s $TT_TMP/rport ]" 20 || { fail "receiver did not start"; cat "$TT_TMP/$name.err"; exit 1; }
	RPORT=$(cat "$TT_TMP/rport")
}

start_receiver live
start_server "$TT_TMP/gt.csv" -t 8
OUT=$TT_TMP/o.ttft
start_record "$OUT" -p "$SERVER_PID" --otlp "http://127.0.0.1:$RPORT"
"$LOADGEN" -q -p "$PORT" --timeout 20 -c 2 -n 24 --tokens 8
sleep 1
stop_record
tt_forget "$RECORD_PID"
check "record --otlp exits 0" [ "$RECORD_STATUS" -eq 0 ]
check "record says what it sent" grep -q 'OTLP: 24 request(s), [0-9]* span(s) sent in [0-9]* batch(es), 0 span(s) dropped' "$OUT.log"
"$TTFTRACE" report --json "$OUT" >"$TT_TMP/r.json"
stop_pid "$RECEIVER_PID" TERM

# compare SPANS REPORT: prints what differs
compare() {
	python3 - "$1" "$2" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
errors = [l for l in lines if "error" in l]
if errors:
    print("receiver refused:", errors[0]); sys.exit()
spans = [l for l in lines if "name" in l]
reqs = json.load(open(sys.argv[2]))["requests"]
top = {s["span_id"]: s for s in spans if s["name"] == "ttftrace.request"}
if len(top) != len(reqs):
    print(f"{len(top)} request spans, report has {len(reqs)} requests")
byid = {s["attrs"]["ttftrace.request.id"]: s for s in top.values()}
for r in reqs:
    s = byid.get(r["id"])
    if not s:
        print("no span for request", r["id"]); continue
    a = s["attrs"]
    want = {"ttftrace.ttft_ns": r["ttft_ns"], "ttftrace.tokens": r["tokens"],
            "client.port": int(r["peer"].rsplit(":", 1)[1]),
            "server.port": r["lport"], "http.response.status_code": r["status"],
            "ttftrace.complete": r["complete"]}
    for k, v in want.items():
        if a.get(k) != v:
            print(f"request {r['id']}: {k} {a.get(k)} != {v}")
    if abs(a["gen_ai.server.time_to_first_token"] * 1e9 - r["ttft_ns"]) > 1:
        print(f"request {r['id']}: gen_ai TTFT {a['gen_ai.server.time_to_first_token']}")
    if abs(a["gen_ai.server.time_per_output_token"] * 1e9 - r["tpot_ns"]) > 1:
        print(f"request {r['id']}: gen_ai TPOT")
    stages = {k[len("ttftrace.stage_ns."):]: v for k, v in a.items()
              if k.startswith("ttftrace.stage_ns.")}
    if sum(stages.values()) != r["ttft_ns"]:
        print(f"request {r['id']}: stages sum {sum(stages.values())} != ttft")
    other = sum(v for k, v in stages.items() if k.startswith("other."))
    for k, v in r["stages"].items():
        got = other if k == "other" else stages.get(k, 0)
        if got != v:
            print(f"request {r['id']}: stage {k} {got} != {v}")
    kids = [c for c in spans if c["parent"] == s["span_id"]]
    if not kids or any(c["trace_id"] != s["trace_id"] for c in kids):
        print(f"request {r['id']}: {len(kids)} children, or another trace")
        continue
    kids.sort(key=lambda c: int(c["start"]))
    if int(kids[0]["start"]) != int(s["start"]):
        print(f"request {r['id']}: first child does not start with it")
    for c, d in zip(kids, kids[1:]):
        if c["end"] != d["start"]:
            print(f"request {r['id']}: children leave a gap"); break
    span_ttft = int(kids[-1]["end"]) - int(kids[0]["start"])
    if span_ttft != r["ttft_ns"]:
        print(f"request {r['id']}: children span {span_ttft} != ttft")
    if s["kind"] != 2 or any(c["kind"] != 1 for c in kids):
        print(f"request {r['id']}: span kinds")
    if s["resource"].get("service.name") != "demo-server":
        print(f"request {r['id']}: service.name {s['resource']}")
PY
}
problems=$(compare "$TT_TMP/live.jsonl" "$TT_TMP/r.json")
check "record --otlp: one span per request, attributes and child spans as report --json says" \
	[ -z "$problems" ]
[ -n "$problems" ] && echo "$problems" | head -5

# report --otlp of the same file, through a receiver that refuses the first
# POST (503): the batch is sent again, the spans are the same, ids included
start_receiver file --fail 1
"$TTFTRACE" report --otlp "http://127.0.0.1:$RPORT" "$OUT" >/dev/null \
	2>"$TT_TMP/rep.err"
rc=$?
stop_pid "$RECEIVER_PID" TERM
check "report --otlp exits 0 after a 503 and a retry" [ "$rc" -eq 0 ]
check "the receiver refused once, then took the batch" \
	grep -q '"refused":503' "$TT_TMP/file.jsonl"
problems=$(compare "$TT_TMP/file.jsonl" "$TT_TMP/r.json")
check "report --otlp: the same spans" [ -z "$problems" ]
[ -n "$problems" ] && echo "$problems" | head -5
ids() { python3 -c '
import json, sys
print("\n".join(sorted(l["trace_id"] + l["span_id"] for l in map(json.loads, open(sys.argv[1]))
      if l.get("name") == "ttftrace.request")))' "$1"; }
check "a request has the same trace and span ids live and from the file" \
	[ "$(ids "$TT_TMP/live.jsonl")" = "$(ids "$TT_TMP/file.jsonl")" -a \
	  -n "$(ids "$TT_TMP/file.jsonl")" ]

# nobody listening: report says so and fails; record is not held up
"$TTFTRACE" report --otlp "http://127.0.0.1:1" "$OUT" >/dev/null \
	2>"$TT_TMP/dead.err"
rc=$?
check "report --otlp to a dead port: exit 1, the drop said" \
	[ "$rc" -eq 1 ] && grep -q 'dropped: connect to 127.0.0.1:1' "$TT_TMP/dead.err"
start_server "$TT_TMP/gt2.csv" -t 4
start_record "$TT_TMP/dead.ttft" -p "$SERVER_PID" --otlp http://127.0.0.1:1
"$LOADGEN" -q -p "$PORT" --timeout 20 -c 2 -n 10 --tokens 4
t0=$(date +%s%N)
stop_record
tt_forget "$RECORD_PID"
ms=$((($(date +%s%N) - t0) / 1000000))
check "record with a dead receiver: exits 0 within the 5 s drain ($ms ms)" \
	[ "$RECORD_STATUS" -eq 0 -a "$ms" -lt 9000 ]
check "record counts the dropped spans" \
	grep -q 'OTLP: 10 request(s), 0 span(s) sent .* [1-9][0-9]* span(s) dropped' "$TT_TMP/dead.ttft.log"
"$TTFTRACE" report "$TT_TMP/dead.ttft" >/dev/null 2>&1
check "the recording is whole all the same" [ $? -eq 0 ]
stop_pid "$SERVER_PID" TERM

err=$("$TTFTRACE" report --otlp https://127.0.0.1:4318 "$OUT" 2>&1 >/dev/null)
rc=$?
check "https:// is refused in one line" \
	[ "$rc" -eq 1 -a "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
	printf '%s' "$err" | grep -q 'https:// is not supported'
[ -z "${TT_FAILED:-}" ]
