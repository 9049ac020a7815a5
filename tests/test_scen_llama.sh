#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# The llama.cpp-shaped C server of tools/scenarios (llama_server.c, written
# after the rules to judge them on a shape they were not written for),
# recorded at 1, 4 and 8 connections (120 requests) and compared with its
# own log by tools/scenarios/compare.py (tests/scen_check.py states the
# limits). Its handlers all wait on one condition variable that the main
# loop notifies for every step, and they post to a busy loop, send their
# headers, then wait: taken for a lock's, the notifies left 58 and 72 of 120
# requests with t_dispatch off by more than 1 ms (4 and 6 HTTP threads),
# and a handler's wait for a CPU after its headers made 33 t_enqueue late
# (docs/design.md §4.3, §4.4). With both rules: 0-8 of 120 off in five
# runs, two of them with a CPU hog: 10% allowed, twice that under ASan (as
# test_scen_py.sh), and issue 8's bound at p50. At 8 connections on its 6
# HTTP threads two connections wait for a thread, their first requests
# whole in the kernel for hundreds of milliseconds: scheduler.backlog, not
# network.in (docs/design.md §4.7).
# llama-delay is the same server as a dynamic batcher (--batch-delay-ms 5:
# an idle main loop that found a task waits on the task queue's condition
# variable for a full batch, at most 5 ms, as Triton's max_queue_delay):
# its waits, timed, end the queue (docs/design.md §4.4, "Batches that
# fill"): 64-88 of 120 off by more than 1 ms before, 9-27 in five runs
# after, two of them beside a CPU hog (the batches a request filled after
# an untimed wait: a notify's wake, not told from a hand-off): 35% allowed,
# by its shares.
set -u
. "$(dirname "$0")/lib.sh"
require_root scen_llama
tt_setup
command -v "${CC:-cc}" >/dev/null || { fail "scen_llama: no C compiler"; exit 1; }
export OUTDIR=$TT_TMP/runs
CONC="1 4 8" N=40 tools/scenarios/run.sh llama llama-delay >"$TT_TMP/run.log" 2>&1
check "scen_llama: tools/scenarios/run.sh llama llama-delay" [ $? = 0 ]
# the step's notifies are the hand-offs that bound the queue
grep -q '"dispatch_rule": *"handoff"' "$OUTDIR/llama/report.json" ||
	fail "scen_llama: no request dispatched by the hand-off rule"
grep -qi "warning" "$OUTDIR/llama/record.log" &&
	fail "scen_llama: record warned: $(grep -i warning "$OUTDIR/llama/record.log" | head -1)"
scen_gate scen_llama llama:0.1:0.1:0.1:p50 llama-delay:0.35:0.35:0.35
grep -q '"dispatch_rule": *"batch"' "$OUTDIR/llama-delay/report.json" ||
	fail "scen_llama: llama-delay: no request dispatched by the batch rule"
# the waits for an HTTP thread: the server's read less ttftrace's arrival
/usr/bin/python3 - "$OUTDIR/llama/report.json" "$OUTDIR/llama/truth.csv" <<'PY' ||
import csv, json, sys
reqs = json.load(open(sys.argv[1]))["requests"]
by_port = {}
for r in reqs:
    if r.get("stages") and r.get("t_arrive_ns"):
        by_port.setdefault(int(r["peer"].rsplit(":", 1)[1]), []).append(r)
long, over = [], []
for row in csv.DictReader(open(sys.argv[2])):
    t_read = int(row["t_read"])
    cands = [r for r in by_port.get(int(row["port"]), []) if r["t_arrive_ns"] <= t_read]
    if not cands:
        continue
    r = max(cands, key=lambda r: r["t_arrive_ns"])
    wait, backlog = t_read - r["t_arrive_ns"], r["stages"].get("scheduler.backlog", 0)
    if wait > 50e6:
        long.append((r["id"], wait, backlog))
    if backlog > wait + 200e3:
        over.append((r["id"], wait, backlog))
fmt = lambda x: "request %d waited %.2f ms, backlog %.2f" % (x[0], x[1] / 1e6, x[2] / 1e6)
short = [x for x in long if x[2] < x[1] - max(1e6, 0.05 * x[1])]
print(("PASS" if long else "FAIL") + ": scen_llama: requests waited over 50 ms for an "
      "HTTP thread: %d" % len(long) + (" (%s)" % fmt(long[0]) if long else ""))
print(("FAIL" if short else "PASS") + ": scen_llama: their wait is scheduler.backlog "
      "within max(1 ms, 5%%): %d of %d" % (len(long) - len(short), len(long)) +
      (", %s" % fmt(short[0]) if short else ""))
print(("FAIL" if over else "PASS") + ": scen_llama: no request's backlog exceeds its "
      "wait for the server's read (+0.2 ms)" + (": %s" % fmt(over[0]) if over else ""))
sys.exit(1 if not long or short or over else 0)
PY
	TT_FAILED=1
[ -z "${TT_FAILED:-}" ]
