#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# record --metrics (docs/design.md §10.3) scraped by Debian's Prometheus:
# the demo server under a known load, the load stopped, two scrapes
# waited for, then PromQL through Prometheus' HTTP API must count exactly
# the requests the load generator completed; promtool finds the page
# clean; the endpoint listens on the given address only; bad addresses
# are refused in one line.
set -u
. "$(dirname "$0")/lib.sh"
require_root "record --metrics"
tt_setup

for tool in prometheus promtool; do
	if ! command -v $tool >/dev/null; then
		echo "SKIP: record --metrics: $tool not installed (tools/deps.sh installs prometheus)"
		exit 0
	fi
done

# get URL: the body, or nothing
get() {
	python3 -c 'import sys, urllib.request
try:
    sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())
except Exception as e:
    sys.exit(1)' "$1"
}
# free_port: one the kernel has free now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# promql QUERY: the value of the query's first sample, or nothing
promql() {
	get "http://127.0.0.1:$PROM_PORT/api/v1/query?query=$1" |
		python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'
}
metric() { # metric NAME: its value on the page, or nothing
	get "$URL" | awk -v n="$1" '$1 == n { print $2 }'
}

# bad addresses: one line, before anything is traced
for bad in nonsense 1.2.3:80 127.0.0.1:70000 '[::1' ':'; do
	out=$("$TTFTRACE" record -p $$ -o "$TT_TMP/bad.ttft" --metrics "$bad" 2>&1)
	rc=$?
	# argp's own "Try --help" lines follow the one that says why
	check "--metrics '$bad' refused before tracing, saying why" [ $rc = 2 ] &&
		echo "$out" | head -1 | grep -q "^ttftrace record: --metrics '.*': not an address"
done

start_server "$TT_TMP/server.log" -i 1000
start_record "$TT_TMP/m.ttft" -p "$SERVER_PID" --metrics 127.0.0.1:0
URL=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$TT_TMP/m.ttft.log")
MPORT=$(echo "$URL" | sed 's|.*:\([0-9]*\)/metrics|\1|')
check "record says where it serves metrics ($URL)" [ -n "$URL" ]
check "the endpoint listens on 127.0.0.1 only" \
	bash -c "ss -Hltn 'sport = :$MPORT' | awk '{ print \$4 }' | grep -qx '127.0.0.1:$MPORT'"
check "a path other than /metrics is not found" bash -c "! python3 -c 'import urllib.request; urllib.request.urlopen(\"${URL%/metrics}/other\")' 2>/dev/null"

PROM_PORT=$(free_port)
cat >"$TT_TMP/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ttftrace
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
YML
promtool check config "$TT_TMP/prometheus.yml" >/dev/null 2>&1 || fail "promtool accepts the test's configuration"
prometheus --config.file="$TT_TMP/prometheus.yml" --storage.tsdb.path="$TT_TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$TT_TMP/prometheus.log" 2>&1 &
TT_PIDS+=("$!")
if ! wait_for "get http://127.0.0.1:$PROM_PORT/-/ready >/dev/null" 30; then
	tail -5 "$TT_TMP/prometheus.log"
	fail "prometheus started"
	exit 1
fi

N=200
"$LOADGEN" -q -p "$PORT" -c 4 -n $N --timeout 20 -o "$TT_TMP/lg.csv" >/dev/null 2>&1
check "loadgen completes its $N requests" [ $? = 0 ]
done_rows=$(awk -F, 'NR > 1 && $10 == "ok"' "$TT_TMP/lg.csv" | wc -l)
# the load stopped: each request is counted once it settled (about 1.2 s
# after its end), then two scrapes
wait_for "[ \"\$(metric ttftrace_requests_total)\" = $done_rows ]" 15
check "/metrics counts the $done_rows requests the load completed" [ "$(metric ttftrace_requests_total)" = "$done_rows" ]
sleep 2.5
check "PromQL ttftrace_requests_total is $done_rows" [ "$(promql ttftrace_requests_total)" = "$done_rows" ]
check "PromQL ttftrace_ttft_seconds_count is $done_rows (every request complete)" \
	[ "$(promql ttftrace_ttft_seconds_count)" = "$done_rows" ]
check "PromQL no dropped records" [ "$(promql ttftrace_dropped_records_total)" = 0 ]
q=$(promql 'histogram_quantile(0.5,ttftrace_ttft_seconds_bucket)')
check "PromQL histogram_quantile of TTFT is a number of seconds ($q)" \
	python3 -c "import sys; v = float('$q'); sys.exit(not 0 < v < 10)"
n=$(promql 'count(ttftrace_stage_seconds_count)')
check "a stage series per stage row: 8 stages and other ($n)" [ "$n" = 9 ]
get "$URL" >"$TT_TMP/page.txt"
out=$(promtool check metrics <"$TT_TMP/page.txt" 2>&1)
check "promtool check metrics: clean${out:+ ($out)}" [ $? = 0 ] && [ -z "$out" ]
stop_record
check "record exits 0" [ "$RECORD_STATUS" = 0 ]
tt_forget "$RECORD_PID"
n=$("$TTFTRACE" report --json "$TT_TMP/m.ttft" | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["requests"])')
check "the recording made beside the metrics has the same $done_rows requests ($n)" [ "$n" = "$done_rows" ]
v=$("$TTFTRACE" --version | sed 's/^ttftrace //')
check "the recording's header says which ttftrace wrote it ($v)" \
	bash -c "'$TTFTRACE' report '$TT_TMP/m.ttft' | grep -qxF 'recorder: ttftrace $v'"
exit ${TT_FAILED:-0}
