#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Drops (issue 5): a 4 KiB ring buffer under heavy load overflows. The
# records lost must be counted per CPU and in total, alike in record's last
# line, the recording's LOST records and report; every request overlapping
# a window of lost records must be incomplete ("lost"); every complete
# request must still be exact: its stages sum to its TTFT, and its TTFT and
# tokens agree with the client's.
set -u
. "$(dirname "$0")/lib.sh"
require_root rel_drops
tt_setup

start_server "$TT_TMP/gt.csv" --prefill-us exp:1000 --seed 5 -t 12 -i 500 \
	-w 8 --batch 8
start_record "$TT_TMP/drops.ttft" -b 4096 -p "$SERVER_PID"
# heavy: 8 connections back to back overflow 4 KiB many times a second;
# light: one paced connection, so that some requests see no loss at all
chrt -f 10 "$LOADGEN" -q -p "$PORT" -c 8 -n 400 --tokens 12 \
	-o "$TT_TMP/heavy.csv" || fail "rel_drops: heavy loadgen"
chrt -f 10 "$LOADGEN" -q -p "$PORT" -c 1 -n 30 --rate 40 --tokens 12 \
	-o "$TT_TMP/light.csv" || fail "rel_drops: light loadgen"
stop_record
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
check "rel_drops: record exits 0" [ "$RECORD_STATUS" = 0 ]
last=$(tail -n 1 "$TT_TMP/drops.ttft.log")
echo "  $last"
lost=$(sed -n 's/.*, \([0-9]*\) lost$/\1/p' <<<"$last")
check "rel_drops: record's last line reports lost records (${lost:-none})" \
	[ "${lost:-0}" -gt 0 ]

if ! "$TTFTRACE" report --json "$TT_TMP/drops.ttft" >"$TT_TMP/drops.json" \
	2>"$TT_TMP/report.err"; then
	cat "$TT_TMP/report.err"
	fail "rel_drops: report --json"
	exit 1
fi
"$TTFTRACE" report "$TT_TMP/drops.ttft" >"$TT_TMP/drops.txt" 2>&1 ||
	fail "rel_drops: report (text)"
"$TTFTRACE" report --events "$TT_TMP/drops.ttft" >"$TT_TMP/drops.events" \
	2>&1 || fail "rel_drops: report --events"
grep '^drops:' "$TT_TMP/drops.txt" | sed 's/^/  /'
check "rel_drops: text report has a drops line with the count" \
	grep -q "^drops: ${lost:-x} lost records" "$TT_TMP/drops.txt"

python3 - "$TT_TMP/drops.json" "$TT_TMP/drops.events" "${lost:-0}" \
	"$TT_TMP/heavy.csv" "$TT_TMP/light.csv" <<'EOF' || TT_FAILED=1
import csv, json, os, sys
from collections import defaultdict

report = json.load(open(sys.argv[1]))
events_path, lost_total = sys.argv[2], int(sys.argv[3])
client = []
for path in sys.argv[4:]:
    with open(path) as f:
        client += [r for r in csv.DictReader(f) if r["status"] == "ok"]
reqs, summary = report["requests"], report["summary"]
sys.path.insert(0, os.environ["TT_TESTS_DIR"])
from rel_check import Checks  # noqa: E402

checks = Checks("rel_drops")
check, agree = checks.check, checks.agree






# The LOST records, per CPU: ms from the first event, count, cpu, since.
# The first event's absolute time (t0) is found from the data_ready
# records: each complete request's t_arrive is one of them (a
# data_ready_dev's receive stamp).
per_cpu = defaultdict(int)
lost_rel = []  # (until ms from t0, since ns absolute)
ready = defaultdict(list)  # client port -> data_ready ms from t0
port_of_sk = {}
for line in open(events_path):
    f = line.split()
    if len(f) < 5:
        continue
    kv = dict(x.split("=", 1) for x in f[4:] if "=" in x)
    if f[3] == "lost":
        per_cpu[int(kv["cpu"])] += int(kv["count"])
        lost_rel.append((float(f[0]), int(kv["since"])))
    elif f[3] == "conn_open":
        port_of_sk[kv["sk"]] = int(kv["rport"])
    elif f[3] == "data_ready" and kv.get("sk") in port_of_sk:
        ready[port_of_sk[kv["sk"]]].append(float(f[0]))
    elif f[3] == "data_ready_dev" and kv.get("sk") in port_of_sk:
        # the arrival is the device's receive stamp, dev= before it
        lead_ns = -int(kv["dev"].rstrip("ns"))
        ready[port_of_sk[kv["sk"]]].append(float(f[0]) - lead_ns / 1e6)
cpus = ", ".join(f"cpu{c} {n}" for c, n in sorted(per_cpu.items()))
check("LOST records, per CPU, add up to the total",
      sum(per_cpu.values()) == lost_total and lost_total > 0,
      f"{cpus}; total {lost_total}")
check("report summary drops equals record's count",
      summary["drops"] == lost_total,
      f"drops {summary['drops']}, record {lost_total}")

complete = [r for r in reqs if r["complete"]]
lost_reqs = [r for r in reqs if "lost" in (r["incomplete_reason"] or "")]
check("some requests are incomplete for lost records", len(lost_reqs) > 0,
      f"{len(lost_reqs)} of {len(reqs)}")
check("some requests are complete", len(complete) >= 5,
      f"{len(complete)} of {len(reqs)}")
check("no complete request is flagged lost",
      all(not r["lost"] and r["incomplete_reason"] is None
          for r in complete))

# t0: the offset shared by every complete request's t_arrive and one of
# its connection's data_ready records (rounded to the microsecond)
votes = defaultdict(int)
for r in complete:
    port = int(r["peer"].rsplit(":", 1)[1])
    for ms in set(ready.get(port, [])):
        votes[round((r["t_arrive_ns"] - ms * 1e6) / 1e3)] += 1
t0_us, n_votes = max(votes.items(), key=lambda kv: kv[1], default=(0, 0))
t0 = t0_us * 1000
check("recording's time origin found", n_votes == len(complete),
      f"{n_votes} of {len(complete)} complete requests agree")
windows = [(since, t0 + int(until_ms * 1e6)) for until_ms, since in lost_rel]
overlap = []
for r in complete:
    start = r["t_arrive_ns"]
    end = max(r.get(k) or 0 for k in ("t_end_ns", "t_wire_ns",
                                      "t_last_write_ns"))
    # 1 us of slack for the origin's rounding
    if any(start <= until + 1000 and end + 1000 > since
           for since, until in windows):
        overlap.append(r["id"])
check("no complete request overlaps a window of lost records",
      not overlap, f"{len(overlap)} do: {overlap[:5]}")

checks.closure("every complete request's stages sum to its TTFT exactly",
               complete)

# each complete request is one the client made: same port, arrived
# between the client's send and its first token
by_port = defaultdict(list)
for c in client:
    by_port[int(c["local_port"])].append(c)
unmatched, pairs = [], []
for r in complete:
    port = int(r["peer"].rsplit(":", 1)[1])
    m = [c for c in by_port.get(port, [])
         if int(c["t_send_ns"]) <= r["t_arrive_ns"] <= int(c["t_first_token_ns"])]
    if len(m) != 1:
        unmatched.append(r["id"])
        continue
    pairs.append((r, m[0]))
check("every complete request matches one client request", not unmatched,
      f"{len(unmatched)} do not: {unmatched[:5]}")
agree("complete requests", pairs)
print(f"  {len(reqs)} requests, {len(complete)} complete, "
      f"{len(lost_reqs)} lost; client {len(client)} ok")
sys.exit(0 if checks.ok else 1)
EOF
[ -z "${TT_FAILED:-}" ]
