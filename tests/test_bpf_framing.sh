#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# The end of a response wherever its framing puts it (issue 8, item 3), on
# real servers (tests/servers/): uvicorn with h11, aiohttp, Go's net/http,
# Node's http, hyper's framing written byte for byte (hyper itself is not
# installable here), and an HTTP/1.0 server whose body runs to the close.
# Each is recorded with `ttftrace record -c` while loadgen drives it: first
# SSE streams, then non-streamed JSON answers with a Content-Length. Every
# stream must be complete with the client's 8 tokens, ended by its bytes
# ("end":"done"; "close" for HTTP/1.0), its stages summing to its TTFT;
# a send of more events than its capture holds counts them all, an event
# of several data: lines once;
# every JSON answer must end at its last body byte ("end":"done"; no token,
# so "no-token" is its only reason). Node and hyper also run with events
# past the capture and no [DONE]: only the terminator at the end of the
# last send, read from the send's tail, ends those streams.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_framing
tt_setup
PY=/usr/bin/python3
NODE=$(command -v node || true)
GOBIN=$OUTPUT/tests/framing_go
go_build bpf_framing "$GOBIN" tests/servers/go_server.go || exit 1
for m in uvicorn starlette aiohttp; do
	"$PY" -c "import $m" 2>/dev/null ||
		{ fail "bpf_framing: $PY lacks $m (tools/deps.sh installs it)"; exit 1; }
done
[ -n "$NODE" ] || { fail "bpf_framing: no node on PATH"; exit 1; }

# run_case NAME END JSON SERVER...: END is the "end" every stream must
# have; JSON 1: also drive non-streamed requests
run_case() {
	local name=$1 end=$2 json=$3 port
	shift 3
	port=$(free_port)
	start_record "$TT_TMP/$name.ttft" -c "exec $* -p $port"
	wait_for "(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null" 20 ||
		{ fail "bpf_framing: $name: the server did not listen on $port"; stop_record; return; }
	# no [DONE], or a close ending the body: loadgen calls those failed
	"$LOADGEN" -q -p "$port" -c 2 -n 8 --tokens 8 --timeout 20 \
		-o "$TT_TMP/$name.stream.csv"
	: >"$TT_TMP/$name.json.csv"
	[ "$json" = 1 ] && "$LOADGEN" -q -p "$port" -c 2 -n 4 --tokens 8 \
		--no-stream --timeout 20 -o "$TT_TMP/$name.json.csv"
	stop_record
	"$TTFTRACE" report --json "$TT_TMP/$name.ttft" >"$TT_TMP/$name.json" ||
		{ fail "bpf_framing: $name: report --json"; return; }
	"$PY" - "$name" "$end" "$TT_TMP/$name.json" "$TT_TMP/$name.stream.csv" \
		"$TT_TMP/$name.json.csv" <<'PY' || TT_FAILED=1
import csv, json, os, sys
sys.path.insert(0, os.environ["TT_TESTS_DIR"])
from compare_ttft import by_port
from rel_check import Checks
name, end, rep_path, scsv, jcsv = sys.argv[1:]
reqs = json.load(open(rep_path))["requests"]
srows = list(csv.DictReader(open(scsv)))
jrows = list(csv.DictReader(open(jcsv))) if os.path.getsize(jcsv) else []
c = Checks("bpf_framing: " + name)
c.check("every request recorded", len(reqs) == len(srows) + len(jrows),
        f"{len(reqs)} for the client's {len(srows)} + {len(jrows)}")
streams = [r for r in reqs if r["tokens"]]
sized = [r for r in reqs if not r["tokens"]]
bad = [(r["id"], r["incomplete_reason"], r["end"]) for r in streams
       if not r["complete"] or r["end"] != end]
c.check(f"every stream complete, ended by '{end}'",
        len(streams) == len(srows) and not bad, f"{bad[:5]}")
toks = sorted({r["tokens"] for r in streams})
ctoks = sorted({int(row["tokens"]) for row in srows})
c.check("every stream has the client's tokens", toks == ctoks == [8],
        f"ttftrace {toks}, client {ctoks}")
c.closure("stages sum to the TTFT", streams)
bad = [(r["id"], r["incomplete_reason"], r["end"]) for r in sized
       if r["incomplete_reason"] != "no-token" or r["end"] != "done"]
c.check("every sized answer ends at its last byte ('done', only no-token)",
        len(sized) == len(jrows) and not bad, f"{bad[:5]}")
tool = by_port(streams, lambda r: int(r["peer"].rsplit(":", 1)[1]),
               lambda r: r["t_arrive_ns"] or 0)
client = by_port(srows, lambda row: int(row["local_port"]),
                 lambda row: int(row["t_send_ns"]))
late = [r["id"] for port, crs in client.items()
        for r, row in zip(tool.get(port, []), crs)
        if row["t_first_token_rx_ns"] not in ("", "0") and
        r["t_wire_ns"] > int(row["t_first_token_rx_ns"]) + 1000]
c.check("no first token on the wire after the client received it",
        not late, f"{late[:5]}")
sys.exit(0 if c.ok else 1)
PY
}

S=tests/servers
run_case uvicorn "done" 1 "$PY" $S/uvicorn_server.py
run_case aiohttp "done" 1 "$PY" $S/aiohttp_server.py
run_case go "done" 1 "$GOBIN"
run_case node "done" 1 "$NODE" $S/node_server.js
run_case hyper "done" 1 "$PY" $S/raw_server.py --framing hyper
# tokens past the eighth iovec of a writev (Node coalescing queued writes)
run_case node-writev "done" 1 "$PY" $S/raw_server.py --framing node-writev
# three events of 200 bytes a writev: past the capture, counted as they go
# out (tt_send_raw.data_lines); 4-5 tokens of 8 when not
run_case node-burst "done" 1 "$PY" $S/raw_server.py --framing node-writev --pad 150
# the same, each event's payload on two data: lines: one token an event,
# not two (16 of 8 when the count took lines for events)
run_case node-burst-multiline "done" 1 "$PY" $S/raw_server.py --framing node-writev \
	--pad 150 --multiline
# events past the capture, no [DONE]: the terminator is in the send's tail
run_case node-tail "done" 0 "$NODE" $S/node_server.js --pad 300 --no-done
run_case hyper-tail "done" 0 "$PY" $S/raw_server.py --framing hyper --pad 300 --no-done
# HTTP/1.0, no length: the stream ends when the server closes
run_case http10 close 0 "$PY" $S/raw_server.py --framing http10 --no-done
[ -z "${TT_FAILED:-}" ]
