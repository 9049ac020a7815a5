#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# XMITs carried inside their send's record (issue 9, docs/design.md §2.4):
# the demo server under loadgen is recorded with the hold on (the default)
# and off (TTFTRACE_XMIT_HOLD=0, every XMIT a record of its own). In both,
# every request must be complete and every token send's first byte must be
# covered by an XMIT of its socket; with the hold on, most transmits must
# have come inside their sends, and each one made in process context must
# be the sender's own, stamped between the send's syscall entry and its
# end (or later, when it carries later sends' bytes too: TCP held them
# back and a later syscall pushed them out). A held XMIT lost, mis-stamped or given to the
# wrong thread fails one of these.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_xmit_hold
tt_setup
REQS=60

# run_case NAME HOLD: records the demo under loadgen with
# TTFTRACE_XMIT_HOLD=HOLD; the events in NAME.ev, the report in NAME.json
run_case() {
	local name=$1 hold=$2
	start_server "$TT_TMP/$name.log" --prefill-us 0 -t 24 -i 0 -w 8 \
		--batch 8
	TTFTRACE_XMIT_HOLD=$hold start_record "$TT_TMP/$name.ttft" -v \
		-p "$SERVER_PID"
	"$LOADGEN" -q -p "$PORT" -c 4 -n $REQS --timeout 20 \
		>"$TT_TMP/$name.lg.out" 2>&1 ||
		fail "bpf_xmit_hold: $name: loadgen failed"
	stop_record
	tt_forget "$RECORD_PID"
	stop_pid "$SERVER_PID" TERM
	"$TTFTRACE" report -e "$TT_TMP/$name.ttft" >"$TT_TMP/$name.ev" ||
		fail "bpf_xmit_hold: $name: report -e"
	"$TTFTRACE" report --json "$TT_TMP/$name.ttft" >"$TT_TMP/$name.json" ||
		fail "bpf_xmit_hold: $name: report --json"
}

run_case held 1
run_case apart 0

/usr/bin/python3 - "$TT_TMP" "$REQS" <<'PY' || TT_FAILED=1
import json, re, sys

tmp, reqs = sys.argv[1], int(sys.argv[2])
ok = True

def check(name, cond, why=""):
    global ok
    print(("PASS: " if cond else "FAIL: ") + "bpf_xmit_hold: " + name +
          ("" if cond else ": " + why))
    ok = ok and cond

KV = re.compile(r"(\w+)=(\S+)")

def events(path):
    out = []
    for line in open(path):
        f = line.split()
        if len(f) < 4 or f[3] not in ("send", "xmit"):
            continue
        tgid, tid = f[2].split("/")
        e = dict(KV.findall(line))
        e.update(kind=f[3], ts=round(float(f[0]) * 1e6), cpu=f[1],
                 tid=tid, irq="[softirq]" in line or "[hardirq]" in line)
        out.append(e)
    return out

for name in ("held", "apart"):
    log = open(f"{tmp}/{name}.ttft.log").read()
    m = re.search(r"(\d+) transmits came inside", log)
    held = int(m.group(1)) if m else -1
    evs = events(f"{tmp}/{name}.ev")
    sends = [e for e in evs if e["kind"] == "send" and e["cls"] == "2" and
             int(e["len"]) > 0]
    xmits = {}
    for e in evs:
        if e["kind"] == "xmit":
            xmits.setdefault(e["sk"], []).append(e)
    rep = json.load(open(f"{tmp}/{name}.json"))
    reqs_seen = [r for r in rep.get("requests", [])]
    complete = sum(1 for r in reqs_seen if r.get("complete"))
    check(f"{name}: {complete} of {len(reqs_seen)} requests complete "
          f"(loadgen sent {reqs})",
          len(reqs_seen) == reqs and complete == reqs)
    uncovered, wrong = 0, []
    for sd in sends:
        seq = int(sd["seq"])
        cover = [x for x in xmits.get(sd["sk"], [])
                 if int(x["seq"]) <= seq < int(x["end_seq"])]
        if not cover:
            uncovered += 1
            continue
        x = cover[0]
        if x["irq"]:
            continue
        enter = sd["ts"] + int(sd["enter"].rstrip("ns"))
        # one that carries later sends' bytes too went out after this
        # send returned (TCP queued them: a later syscall of the thread
        # pushed them out): never before it, though, nor another thread's
        late_ok = int(x["end_seq"]) - int(x["seq"]) > int(sd["len"])
        if not (x["tid"] == sd["tid"] and enter <= x["ts"] and
                (x["ts"] <= sd["ts"] or late_ok)):
            wrong.append((sd, x))
    check(f"{name}: every token send's first byte has an XMIT "
          f"({len(sends)} sends, {uncovered} without)",
          sends and not uncovered)
    check(f"{name}: each XMIT in process context is its sender's, within "
          f"the send ({len(wrong)} not)", not wrong,
          str(wrong[:2]))
    if name == "held":
        check(f"held: {held} transmits came inside their sends "
              f"({len(sends)} token sends)", held >= len(sends) // 2)
    else:
        check(f"apart: TTFTRACE_XMIT_HOLD=0 held none ({held})", held == 0)
sys.exit(0 if ok else 1)
PY
[ -z "${TT_FAILED:-}" ]
