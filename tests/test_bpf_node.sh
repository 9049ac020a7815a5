#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# A Node http SSE server (tools/scenarios/node_server.js, on Debian's
# nodejs): Node ends each response with one writev of seven iovecs (the last
# token's chunk-size line, event and CRLF, the [DONE] chunk's three, and the
# chunked terminator). The end of the response lies past the first four
# iovecs, so it used to go unseen: the last request of every connection was
# "closed-mid-stream" (issue 8, item 3). Every request must be complete,
# with the client's token count, and the TTFT no later than the client's.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_node
tt_setup
NODE=$(command -v node || true)
if [ -z "$NODE" ]; then
	fail "bpf_node: no node on PATH (tools/deps.sh installs Debian's nodejs)"
	exit 1
fi
PORT=$(free_port)
start_record "$TT_TMP/node.ttft" -c "exec $NODE tools/scenarios/node_server.js -p $PORT --log $TT_TMP/truth.csv --tokens 8"
wait_for "nc -z 127.0.0.1 $PORT 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null" 20 ||
	{ fail "bpf_node: the Node server did not listen on $PORT"; exit 1; }
"$LOADGEN" -q -p "$PORT" -c 4 -n 32 --tokens 8 --timeout 20 -o "$TT_TMP/client.csv"
check "bpf_node: loadgen succeeds" [ $? = 0 ]
stop_record
"$TTFTRACE" report --json "$TT_TMP/node.ttft" >"$TT_TMP/report.json" ||
	fail "bpf_node: report --json"
/usr/bin/python3 - "$TT_TMP/report.json" "$TT_TMP/client.csv" <<'EOF'
import csv, json, os, sys
sys.path.insert(0, os.environ["TT_TESTS_DIR"])
from compare_ttft import by_port
rep = json.load(open(sys.argv[1]))
reqs = rep["requests"]
rows = list(csv.DictReader(open(sys.argv[2])))
# the probe connection of wait_for, if any, carried no request
bad = [(r["id"], r["incomplete_reason"]) for r in reqs if not r["complete"]]
print(("PASS" if len(reqs) == len(rows) and not bad else "FAIL") +
      ": bpf_node: %d requests recorded for the client's %d, incomplete: %s"
      % (len(reqs), len(rows), bad[:6]))
toks = sorted({r["tokens"] for r in reqs})
print(("PASS" if toks == [8] else "FAIL") +
      ": bpf_node: every request has the 8 tokens the client read: %s" % toks)
# the n-th request of a connection is the client's n-th on that port
tool = by_port(reqs, lambda r: int(r["peer"].rsplit(":", 1)[1]),
               lambda r: r["t_arrive_ns"] or 0)
client = by_port(rows, lambda row: int(row["local_port"]),
                 lambda row: int(row["t_send_ns"]))
late = []
for port, crs in client.items():
    for r, row in zip(tool.get(port, []), crs):
        # the wire time can never be after the client's receive stamp
        if r["complete"] and row["t_first_token_rx_ns"] and \
                r["t_wire_ns"] > int(row["t_first_token_rx_ns"]) + 1000:
            late.append(r["id"])
print(("PASS" if not late else "FAIL") +
      ": bpf_node: no first token on the wire after the client received it: %s"
      % late[:6])
EOF
