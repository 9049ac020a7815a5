#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Crash safety (issue 5): ttftrace record killed with SIGKILL mid-run
# leaves a recording that reads back whole: every request that ended more
# than a flush interval (1 s) before the kill is there, complete and exact;
# a copy cut inside its last block reads up to that block with a warning.
# A full disk stops record with one clear line, and what it wrote reads.
set -u
. "$(dirname "$0")/lib.sh"
require_root rel_crash
tt_setup

mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

# ---- kill -9 mid-run
start_server "$TT_TMP/gt.csv" --prefill-us exp:2000 --seed 3 -t 8 -i 1000
start_record "$TT_TMP/killed.ttft" -p "$SERVER_PID"
chrt -f 10 "$LOADGEN" -q -p "$PORT" -c 4 -n 1000 --rate 100 --tokens 8 \
	-o "$TT_TMP/lg.csv" &
lg_pid=$!
TT_PIDS+=("$lg_pid")
# mid-run: once the server has answered 350 requests (3.5 s at 100/s)
wait_for "[ \$(wc -l <$TT_TMP/gt.csv) -gt 350 ]" 30 ||
	fail "rel_crash: the server answered too few requests"
# the kill lies between these two (python may start slowly on a busy box)
t_before=$(mono_ns)
{
	kill -KILL "$RECORD_PID"
	t_after=$(mono_ns)
	wait "$RECORD_PID"
} 2>/dev/null # no "Killed" notice
wait "$lg_pid" || fail "rel_crash: loadgen"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
"$TTFTRACE" report --json "$TT_TMP/killed.ttft" >"$TT_TMP/killed.json" \
	2>"$TT_TMP/killed.err"
rc=$?
check "rel_crash: report of a recording cut by SIGKILL exits 0" [ $rc = 0 ]
sed 's/^/  report: /' "$TT_TMP/killed.err"
no_corrupt_block() { ! grep -q corrupt "$TT_TMP/killed.err"; }
check "rel_crash: no corrupt block in it" no_corrupt_block

python3 - "$TT_TMP/killed.json" "$TT_TMP/lg.csv" "$t_before" "$t_after" \
	<<'EOF' || TT_FAILED=1
import csv, json, os, sys
from collections import defaultdict

reqs = json.load(open(sys.argv[1]))["requests"]
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["status"] == "ok"]
t_before, t_after = int(sys.argv[3]), int(sys.argv[4])
sys.path.insert(0, os.environ["TT_TESTS_DIR"])
from rel_check import Checks  # noqa: E402

checks = Checks("rel_crash")
check, agree = checks.check, checks.agree






after = [c for c in rows if int(c["t_send_ns"]) > t_after]
check("the kill came mid-run", len(after) >= 10,
      f"{len(after)} client requests sent after it")
# flushed every second: what ended 1.5 s before the kill is on disk
early = [c for c in rows
         if int(c["t_last_token_ns"]) < t_before - 1_500_000_000]
by_port = defaultdict(list)
for r in reqs:
    by_port[int(r["peer"].rsplit(":", 1)[1])].append(r)


def match(c):  # the tool's requests for client row c
    return [r for r in by_port.get(int(c["local_port"]), [])
            if r["t_arrive_ns"] and int(c["t_send_ns"]) <= r["t_arrive_ns"]
            <= int(c["t_first_token_ns"])]


missing = [c["id"] for c in early
           if [r["complete"] for r in match(c)] != [True]]
check("every request that ended 1.5 s before the kill is there, complete",
      len(early) >= 50 and not missing,
      f"{len(early) - len(missing)} of {len(early)} (client ids missing: {missing[:5]})")
# the requests complete in the file, late ones included, are exact too
complete = [r for r in reqs if r["complete"]]
pairs, stray = [], []
for r in complete:
    m = [c for c in rows if int(c["local_port"]) == int(r["peer"].rsplit(":", 1)[1])
         and int(c["t_send_ns"]) <= r["t_arrive_ns"] <= int(c["t_first_token_ns"])]
    if len(m) != 1:
        stray.append(r["id"])
    else:
        pairs.append((r, m[0]))
check("every complete request in the file is one the client made",
      not stray, f"{len(stray)} are not: {stray[:5]}")
agree("complete requests", pairs)
checks.closure("complete requests' stages sum to their TTFT", complete)
print(f"  {len(reqs)} requests in the recording, {len(complete)} complete; "
      f"client {len(rows)} ok, {len(early)} ended 1.5 s before the kill")
sys.exit(0 if checks.ok else 1)
EOF

# ---- the same file cut inside its last block
size=$(stat -c %s "$TT_TMP/killed.ttft")
head -c $((size - 10)) "$TT_TMP/killed.ttft" >"$TT_TMP/cut.ttft"
"$TTFTRACE" report --json "$TT_TMP/cut.ttft" >"$TT_TMP/cut.json" \
	2>"$TT_TMP/cut.err"
rc=$?
check "rel_crash: report of a file cut mid-block exits 0" [ $rc = 0 ]
check "rel_crash: it warns that the file is cut short ($(head -c 160 "$TT_TMP/cut.err"))" \
	grep -q 'cut short' "$TT_TMP/cut.err"
ncut=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["requests"]))' \
	"$TT_TMP/cut.json" 2>/dev/null)
nfull=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["requests"]))' \
	"$TT_TMP/killed.json" 2>/dev/null)
cut_ok() { [ "${ncut:-0}" -gt 0 ] && [ "${ncut:-0}" -le "${nfull:-0}" ]; }
check "rel_crash: the cut file still reports its whole blocks' requests (${ncut:-?} of ${nfull:-?})" \
	cut_ok

# ---- a full disk
if ! small_disk; then
	fail "rel_crash: cannot mount a 64 KiB tmpfs for the full-disk case"
	exit 1
fi
start_server "$TT_TMP/gt2.csv" --prefill-us 500 -t 12 -i 300 -w 8 --batch 8
# the log goes elsewhere: the small disk is for the recording
"$TTFTRACE" record -o "$SMALL/full.ttft" -p "$SERVER_PID" \
	2>"$TT_TMP/full.log" &
RECORD_PID=$!
TT_PIDS+=("$RECORD_PID")
wait_for "grep -q 'recording to' $TT_TMP/full.log" 30 ||
	{ fail "rel_crash: full disk: record did not start"; exit 1; }
for _ in $(seq 30); do
	kill -0 "$RECORD_PID" 2>/dev/null || break
	"$LOADGEN" -q -p "$PORT" -c 8 -n 200 --tokens 12
done
kill -INT "$RECORD_PID" 2>/dev/null # only if the disk never filled
wait "$RECORD_PID"
RECORD_STATUS=$?
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
err=$(grep -v '^ttftrace: recording to' "$TT_TMP/full.log")
echo "  record: $err"
check "rel_crash: full disk: record stops with a non-zero status ($RECORD_STATUS)" \
	[ "$RECORD_STATUS" != 0 ]
one_enospc_line() {
	[ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] &&
		grep -q 'No space left on device' <<<"$err"
}
check "rel_crash: full disk: one line naming the error" one_enospc_line
cp "$SMALL/full.ttft" "$TT_TMP/full.ttft"
"$TTFTRACE" report --json "$TT_TMP/full.ttft" >"$TT_TMP/full.json" \
	2>"$TT_TMP/full.err"
rc=$?
nev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["events"])' \
	"$TT_TMP/full.json" 2>/dev/null)
full_reads() { [ $rc = 0 ] && [ "${nev:-0}" -gt 0 ]; }
check "rel_crash: full disk: what was written reads back (exit $rc, ${nev:-no} events; $(head -c 120 "$TT_TMP/full.err"))" \
	full_reads
[ -z "${TT_FAILED:-}" ]
