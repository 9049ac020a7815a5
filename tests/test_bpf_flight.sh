#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The flight recorder (record --ring): no file while recording, a dump
# when a request is over --trigger holding that request whole with its
# critical path, a dump on SIGUSR1, recording going on after each, dumps
# rate-limited by --dump-interval, and memory bounded by the window.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_flight
tt_setup

# one request is slow on purpose: its 60 000-byte prompt is tokenized at
# 10 us a byte (0.6 s of CPU), the others' 64 bytes in under 1 ms
start_server "$TT_TMP/gt.csv" --tokenize-ns-per-byte 10000 -t 8
OUT=$TT_TMP/fr.ttft
LOG=$OUT.log
start_record "$OUT" -p "$SERVER_PID" --ring 10 --trigger 'ttft>300ms' \
	--dump-interval 2s
load() { "$LOADGEN" -q -p "$PORT" --timeout 20 --tokens 8 "$@"; }
dumps() { grep -c 'flight dump [0-9]*:' "$LOG"; }

load -c 2 -n 20
load -c 1 -n 1 --prompt-bytes 60000
load -c 2 -n 10
check "no recording file is written while the ring records" [ ! -e "$OUT" ]
# shellcheck disable=SC2016 # wait_for evaluates it
wait_for '[ "$(dumps)" -ge 1 ]' 10 || cat "$LOG"
DUMP1=$(sed -n 's/.*flight dump 1: \([^ ]*\) (.*/\1/p' "$LOG")
check "a request over --trigger writes a dump beside -o (OUT-TIME.ttft)" \
	[ -n "$DUMP1" -a -f "$DUMP1" ]
check "the dump says which trigger fired" grep -q 'flight dump 1: .*ttft 0\.[0-9]* s > 0\.300 s' "$LOG"
check "the dump is created mode 0600" [ "$(stat -c %a "$DUMP1" 2>/dev/null)" = 600 ]
"$TTFTRACE" report --json "$DUMP1" >"$TT_TMP/d1.json" 2>"$TT_TMP/d1.err"
check "report reads the dump" [ $? -eq 0 ]
# the slow request: complete, its path walked, TTFT whole in its stages,
# its tokenizing (compute.cpu) dominant; the requests around it too
slow_ok() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
reqs = d["requests"]
slow = [r for r in reqs if (r.get("ttft_ns") or 0) > 300e6]
assert len(slow) == 1, f"{len(slow)} slow requests"
r = slow[0]
assert r["complete"] and r["attributed"], r
st = r["stages"]
assert sum(st.values()) == r["ttft_ns"], (st, r["ttft_ns"])
# the tokenizer's CPU, or waiting for one on a busy machine (it burns
# until its time is up: runnable all along when the CPUs are taken)
cpu = st["compute.cpu"] + st["scheduler.runqueue"]
assert cpu > 0.8 * r["ttft_ns"], st
fast = [q for q in reqs if q["complete"] and q is not r]
assert len(fast) >= 30, f"{len(fast)} other complete requests"
PY
}
check "the triggering request is in the dump complete, its critical path whole" \
	slow_ok "$TT_TMP/d1.json"

kill -USR1 "$RECORD_PID"
# shellcheck disable=SC2016
wait_for '[ "$(dumps)" -ge 2 ]' 10
check "SIGUSR1 writes a dump, recording goes on" \
	grep -q 'flight dump 2: .*(SIGUSR1;' "$LOG"
# a second slow request, past --dump-interval: a dump of its own
sleep 2
load -c 1 -n 1 --prompt-bytes 60000
load -c 1 -n 4
# shellcheck disable=SC2016
wait_for '[ "$(dumps)" -ge 3 ]' 10
check "a second trigger makes a second triggered dump" \
	grep -q 'flight dump 3: .*ttft 0\.[0-9]* s > 0\.300 s' "$LOG"
DUMP3=$(sed -n 's/.*flight dump 3: \([^ ]*\) (.*/\1/p' "$LOG")
n3=$("$TTFTRACE" report --json "$DUMP3" 2>/dev/null | python3 -c '
import json, sys
print(sum(1 for r in json.load(sys.stdin)["requests"]
          if r["complete"] and r["ttft_ns"] > 300e6))')
# the first slow one too, unless a busy machine took over 10 s since
check "the second triggered dump holds its request complete" \
	[ "${n3:-0}" -ge 1 ]
stop_record
tt_forget "$RECORD_PID"
check "record exits 0" [ "$RECORD_STATUS" -eq 0 ]
check "the summary counts the dumps" \
	grep -q 'flight recorder: 3 dump(s), 2 trigger(s) fired' "$LOG" ||
	cat "$LOG"
check "still no recording file at the end" [ ! -e "$OUT" ]
stop_pid "$SERVER_PID" TERM

# --- --trigger slo: the slow request misses --slo's TTFT, the others
# meet it, and a tpot limit no request reaches fires nothing
start_server "$TT_TMP/gt3.csv" --tokenize-ns-per-byte 10000 -t 8
OUT3=$TT_TMP/slo.ttft
start_record "$OUT3" -p "$SERVER_PID" --ring 10 --trigger 'tpot>1s' \
	--trigger slo --slo ttft=300ms,tpot=1s
load -c 2 -n 10
load -c 1 -n 1 --prompt-bytes 60000
load -c 1 -n 4
# shellcheck disable=SC2016
wait_for '[ "$(grep -c "flight dump 1:" "$OUT3.log")" -ge 1 ]' 10
stop_record
tt_forget "$RECORD_PID"
check "--trigger slo: a request missing the SLO writes a dump" \
	grep -q 'flight dump 1: .*missed the SLO: ttft 0\.[0-9]* s' "$OUT3.log"
check "--trigger slo: only that request fired" \
	grep -q 'flight recorder: 1 dump(s), 1 trigger(s) fired' "$OUT3.log"
stop_pid "$SERVER_PID" TERM

# --- bounded memory: a 2 s ring under steady load for 14 s; what record
# holds past the window's first fill does not grow with the run
start_server "$TT_TMP/gt2.csv" -t 8 -i 500
OUT2=$TT_TMP/mem.ttft
start_record "$OUT2" -p "$SERVER_PID" --ring 2 --trigger 'ttft>10s'
"$LOADGEN" -q -p "$PORT" --timeout 20 -c 4 -d 14 --tokens 8 >/dev/null 2>&1 &
LG=$!
sleep 5
rss5=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$RECORD_PID/status")
wait "$LG"
rss14=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$RECORD_PID/status")
stop_record
tt_forget "$RECORD_PID"
held=$(sed -n 's/.*ring held \([0-9.]*\) s, \([0-9]*\) events.*/\1/p' "$OUT2.log")
events=$(grep -o 'ring held [0-9.]* s, [0-9]* events' "$OUT2.log" | awk '{ print $5 }')
echo "rss at 5 s ${rss5} kB, at 14 s ${rss14} kB; ring held ${held} s, ${events} events"
check "the ring holds about --ring of events, not the run" \
	awk -v h="${held:-99}" 'BEGIN { exit !(h >= 1.5 && h < 4) }'
check "record's RSS does not grow with the run (under 8 MiB from 5 s to 14 s)" \
	[ -n "$rss5" -a -n "$rss14" ] && [ $((rss14 - rss5)) -lt 8192 ]
stop_pid "$SERVER_PID" TERM

# --- bad options: exit 2, the reason on argp's first line
bad() { # bad WORD ARGS...: WORD in the first line
	local word=$1 err rc
	shift
	err=$("$TTFTRACE" record -p 1 "$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" -eq 2 ] && printf '%s\n' "$err" | head -1 | grep -q -- "$word"
}
check "--trigger of an unknown metric is refused" \
	bad "invalid --trigger" --ring 5 --trigger 'x>1s'
check "--trigger slo without --slo is refused" \
	bad "needs --slo" --ring 5 --trigger slo
check "--trigger without --ring is refused" bad "need --ring" \
	--trigger 'ttft>1s'
check "a bad --ring is refused" bad "invalid --ring" --ring abc
[ -z "${TT_FAILED:-}" ]
