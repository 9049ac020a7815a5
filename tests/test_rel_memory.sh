#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Bounded memory (issue 5): a traced server holding 10 000 concurrent
# connections, each carrying streaming requests, while it starts and joins
# short-lived threads all the time. ttftrace record's peak RSS (VmHWM) must
# stay under a fixed bound, and ttftrace report must analyse the recording
# within a bound too (it is killed when it goes over, so that a runaway
# analyzer cannot take the machine down).
#   TT_REL_CONNS=N  fewer connections, for a quick look (default 10000)
set -u
. "$(dirname "$0")/lib.sh"
require_root rel_memory
tt_setup

NCONNS=${TT_REL_CONNS:-10000}
ROUNDS=2
# Measured on Linux 6.18, 2 CPUs: record peaks at 36 MiB, flat from start
# to end (the default 16 MiB ring buffer, mmapped and touched, is much of
# it); under ASan, with its quarantine of freed memory cut to 16 MiB (the
# default 256 MiB would fill with what record frees), at 75 MiB.
RECORD_RSS_MAX_KB=$((64 << 10))
SAN_RECORD_RSS_MAX_KB=$((128 << 10))
# report keeps every finished request (a few hundred bytes each) and the
# threads' timelines: 20 000 requests and ~500 000 events need tens of MiB.
REPORT_RSS_MAX_KB=$((512 << 10))
SAN_REPORT_RSS_MAX_KB=$((1024 << 10))
REPORT_TIME_MAX_S=90

sanitized=
if asan_build; then
	sanitized=1
	RECORD_RSS_MAX_KB=$SAN_RECORD_RSS_MAX_KB
	REPORT_RSS_MAX_KB=$SAN_REPORT_RSS_MAX_KB
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16
fi

# the load: make unit-tests builds both helpers
MANYCONN_SERVER=$OUTPUT/tests/helper_manyconn_server
CONNS=$OUTPUT/tests/helper_conns
for h in "$MANYCONN_SERVER" "$CONNS"; do
	if [ ! -x "$h" ]; then
		fail "$h missing: run make unit-tests"
		exit 1
	fi
done

# each side holds NCONNS descriptors
need=$((NCONNS + 256))
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt $need ]; then
	ulimit -Hn $need 2>/dev/null
fi
if ! ulimit -n $need 2>/dev/null && ! ulimit -n "$(ulimit -Hn)"; then
	fail "rel_memory: cannot raise the open-file limit to $need"
	exit 1
fi
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $need ]; then
	fail "rel_memory: open-file limit $(ulimit -n) < $need (hard $(ulimit -Hn))"
	exit 1
fi

kb_of() { # kb_of PID FIELD: a /proc/PID/status figure in kB
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

"$MANYCONN_SERVER" --port-file "$TT_TMP/port" --tokens 4 \
	--churn 4 >"$TT_TMP/server.out" 2>&1 &
SERVER_PID=$!
TT_PIDS+=("$SERVER_PID")
wait_for "[ -s $TT_TMP/port ]" 10 || { fail "helper server did not start"; exit 1; }
PORT=$(cat "$TT_TMP/port")
start_record "$TT_TMP/many.ttft" -p "$SERVER_PID"
rss_start=$(kb_of "$RECORD_PID" VmRSS)

# the maps are sized, per-connection state lives with the socket and
# per-thread state in LRU maps: "name type max_entries memlock" of every
# map record holds
for f in /proc/"$RECORD_PID"/fdinfo/*; do
	awk '$1 == "map_type:" { t = $2 } $1 == "max_entries:" { m = $2 }
	     $1 == "memlock:" { l = $2 } $1 == "map_id:" { id = $2 }
	     END { if (id) print id, t, m, l }' "$f" 2>/dev/null
done | LC_ALL=C sort >"$TT_TMP/maps"
bpftool map list 2>/dev/null |
	awk -F'[: ]+' '/^[0-9]+:/ { for (i = 2; i < NF; i++)
		if ($i == "name") print $1, $(i + 1) }' | LC_ALL=C sort |
	LC_ALL=C join - "$TT_TMP/maps" >"$TT_TMP/maps.named"
memlock_kb=$(awk '{ s += $5 } END { print int(s / 1024) }' "$TT_TMP/maps.named")
echo "  maps (name type max_entries memlock):" \
	"$(awk '{ printf "%s %s %s %s; ", $2, $3, $4, $5 }' "$TT_TMP/maps.named")"
# BPF_MAP_TYPE_LRU_HASH is 9, PERCPU_ARRAY 6, SK_STORAGE 24: a connection's
# mark is freed with its socket; a send's entry time lives in a per-CPU
# slot, and in an LRU by tid only while its thread is switched out inside
# the send: nothing grows with the connections and threads that come and go
maps_sized() {
	[ "$(wc -l <"$TT_TMP/maps.named")" -ge 5 ] &&
		[ "$(awk '$2 == "conns" { print $3 }' "$TT_TMP/maps.named")" = 24 ] &&
		[ "$(awk '$2 == "send_enter" { print $3 }' "$TT_TMP/maps.named")" = 6 ] &&
		[ "$(awk '$2 == "send_enter_move" { print $3 }' "$TT_TMP/maps.named")" = 9 ] &&
		[ "$memlock_kb" -lt $((64 << 10)) ]
}
check "rel_memory: maps sized (${memlock_kb} kB locked in all), conns socket storage, send entry per CPU and LRU" \
	maps_sized

start=$(date +%s%N)
"$CONNS" -p "$PORT" -n "$NCONNS" --rounds $ROUNDS \
	--hold-ms 500 >"$TT_TMP/client.out" 2>&1
client_rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "rel_memory: $NCONNS connections, $ROUNDS requests each, all answered ($(tr '\n' ' ' <"$TT_TMP/client.out")in $ms ms)" \
	[ "$client_rc" = 0 ]
hwm=$(kb_of "$RECORD_PID" VmHWM)
rss_end=$(kb_of "$RECORD_PID" VmRSS)
stop_record
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
echo "  server: $(cat "$TT_TMP/server.out")"
echo "  $(tail -n 1 "$TT_TMP/many.ttft.log")"
check "rel_memory: record exits 0" [ "$RECORD_STATUS" = 0 ]
threads=$(sed -n 's/.*threads=\([0-9]*\).*/\1/p' "$TT_TMP/server.out")
check "rel_memory: thread churn ran (${threads:-0} short-lived threads)" \
	[ "${threads:-0}" -ge 1000 ]
check "rel_memory: record peak RSS ${hwm:-?} kB (start $rss_start kB, end $rss_end kB) < $RECORD_RSS_MAX_KB kB${sanitized:+ (ASan bound)}" \
	[ "${hwm:-999999999}" -lt $RECORD_RSS_MAX_KB ]

# report, watched: killed past its bound of memory or time
"$TTFTRACE" report --json "$TT_TMP/many.ttft" >"$TT_TMP/many.json" \
	2>"$TT_TMP/report.err" &
report_pid=$!
TT_PIDS+=("$report_pid")
peak=0 over='' t0=$(date +%s)
while kill -0 "$report_pid" 2>/dev/null; do
	rss=$(kb_of "$report_pid" VmHWM)
	[ -n "$rss" ] && [ "$rss" -gt "$peak" ] && peak=$rss
	if [ "$peak" -ge $REPORT_RSS_MAX_KB ]; then
		over="killed at $peak kB after $(($(date +%s) - t0)) s"
		kill -KILL "$report_pid"
	elif [ $(($(date +%s) - t0)) -ge $REPORT_TIME_MAX_S ]; then
		over="killed after $REPORT_TIME_MAX_S s at $peak kB"
		kill -KILL "$report_pid"
	fi
	sleep 0.1
done 2>/dev/null # no "Killed" notice
wait "$report_pid" 2>/dev/null
report_rc=$?
secs=$(($(date +%s) - t0))
if [ -n "$over" ]; then
	fail "rel_memory: report of $((NCONNS * ROUNDS)) requests within $REPORT_RSS_MAX_KB kB and $REPORT_TIME_MAX_S s: $over"
else
	check "rel_memory: report exits 0 (peak RSS >= $peak kB, $secs s)" \
		[ "$report_rc" = 0 ]
	check "rel_memory: report peak RSS $peak kB < $REPORT_RSS_MAX_KB kB" \
		[ "$peak" -lt $REPORT_RSS_MAX_KB ]
	counts=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print(s["requests"], s["complete"], s["drops"])' "$TT_TMP/many.json")
	read -r nreq ncomplete drops <<<"$counts"
	# with no drops every request is whole; with drops, those are the
	# only ones allowed to be incomplete (test_rel_drops checks which)
	all_found() {
		[ "${nreq:-0}" = $((NCONNS * ROUNDS)) ] &&
			{ [ "${drops:-1}" != 0 ] || [ "$ncomplete" = "$nreq" ]; }
	}
	check "rel_memory: report finds every request (requests complete drops: $counts)" \
		all_found
fi
[ -s "$TT_TMP/report.err" ] && sed 's/^/  report: /' "$TT_TMP/report.err" | head -5
[ -z "${TT_FAILED:-}" ]
