#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Checks a marker recording (report --json) against the demo server's
ground-truth log: every request's t_enqueue and t_dispatch within --tol-us
of the server's bracket around the marked call (t_submit_call_ns ..
t_enqueue_ns, t_dispatch_ns .. t_admitted_ret_ns: the server's clock reads
and the probe's trap are distinct instants, and a preemption between them
on this VM, or a process's first trap, which sets up the uprobe's slot,
puts tens to hundreds of microseconds between them; the trap lies inside
the bracket whatever happens), their rules "marker", and nothing left
unbound. The distance to the server's own stamp is printed.
Requests are matched by the client's port and, on a keep-alive connection,
by order (compare_ttft.by_port).

  compare_marks.py REPORT.json GT.csv [--tol-us 50] [--expect N]
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_stages as cs  # noqa: E402
import compare_ttft as ct  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("server")
    ap.add_argument("--tol-us", type=float, default=50)
    ap.add_argument("--expect", type=int, default=0)
    ap.add_argument("--name", default="marker")
    a = ap.parse_args()
    rep = json.load(open(a.report))
    reqs = [r for r in rep["requests"] if r["complete"]]
    tool = ct.by_port(reqs, lambda r: int(r["peer"].rsplit(":", 1)[1]),
                      lambda r: r["t_arrive_ns"])
    gt = ct.by_port(cs.read_csv(a.server), lambda r: int(r["peer_port"]),
                    lambda r: int(r["t_read_done_ns"]))
    ok = True

    def check(name, cond, detail=""):
        nonlocal ok
        print(("PASS: " if cond else "FAIL: ") + f"{a.name}: {name}" +
              (": " + detail if detail else ""))
        ok &= bool(cond)

    def outside(t, lo, hi):  # ns from the bracket [lo, hi], 0 inside it
        return max(lo - t, t - hi, 0)

    n = worst_d = worst_e = worst_out = 0
    bad, rules = [], set()
    for port, trs in tool.items():
        gts = gt.get(port, [])
        if len(gts) != len(trs):
            bad.append(f"port {port}: {len(trs)} traced, {len(gts)} logged")
            continue
        for t, g in zip(trs, gts):
            n += 1
            dd = abs(t["t_dispatch_ns"] - int(g["t_dispatch_ns"]))
            de = abs(t["t_enqueue_ns"] - int(g["t_enqueue_ns"]))
            worst_d, worst_e = max(worst_d, dd), max(worst_e, de)
            rules.add((t["dispatch_rule"], t["enqueue_rule"]))
            od = outside(t["t_dispatch_ns"], int(g["t_dispatch_ns"]),
                         int(g["t_admitted_ret_ns"]))
            oe = outside(t["t_enqueue_ns"], int(g["t_submit_call_ns"]),
                         int(g["t_enqueue_ns"]))
            worst_out = max(worst_out, od, oe)
            if od > a.tol_us * 1000 or oe > a.tol_us * 1000:
                bad.append(f"request {t['id']}: dispatch {od / 1e3:.1f} us, "
                           f"enqueue {oe / 1e3:.1f} us outside the server's "
                           "bracket")
    logged = sum(len(v) for v in gt.values())
    check("requests matched", n > 0 and n == logged and
          (not a.expect or n == a.expect),
          f"{n} complete requests matched of {logged} logged")
    check(f"t_dispatch and t_enqueue within {a.tol_us:g} us of the server's "
          "brackets around the marked calls, for every request",
          n > 0 and not bad,
          f"{n - len(bad)} of {n}; worst {worst_out / 1e3:.1f} us outside; "
          f"worst distance to the server's stamps "
          f"{worst_d / 1e3:.1f} us and {worst_e / 1e3:.1f} us" +
          ("; " + "; ".join(bad[:5]) if bad else ""))
    check("rules say marker", rules == {("marker", "marker")},
          f"{sorted(rules)}")
    m = rep["summary"]["markers"]
    check("every marker bound", m["hit"] >= 2 * n and m["unbound"] == 0 and
          m["outside"] == 0, f"{m}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
