#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Compares ttftrace's per-request TTFT/TPOT (report --json) with the load
generator's client-side measurements (its CSV rows), matched by the client's
port and, on a keep-alive connection, by order. Prints PASS/FAIL lines and
the agreement figures."""
import csv
import json
import sys
from collections import defaultdict


def main():
    report = json.load(open(sys.argv[1]))
    rows = []
    for path in sys.argv[2:]:
        with open(path) as f:
            rows += [r for r in csv.DictReader(f) if r["status"] == "ok"]
    reqs = [r for r in report["requests"] if r["complete"]]
    ok = True

    def check(name, cond, detail=""):
        nonlocal ok
        print(("PASS: " if cond else "FAIL: ") + name + (": " + detail if detail else ""))
        ok &= bool(cond)

    check("request_count", len(reqs) == len(rows) and len(rows) > 0,
          f"ttftrace {len(reqs)} complete of {len(report['requests'])}, client {len(rows)}")
    by_port_tool = defaultdict(list)
    for r in reqs:
        by_port_tool[int(r["peer"].rsplit(":", 1)[1])].append(r)
    by_port_client = defaultdict(list)
    for r in rows:
        by_port_client[int(r["local_port"])].append(r)
    ttft_err, tpot_err, unmatched = [], [], 0
    n_ttft_ok = n_tpot_ok = n_tpot = 0
    for port, crs in by_port_client.items():
        trs = sorted(by_port_tool.get(port, []), key=lambda r: r["t_arrive_ns"])
        crs = sorted(crs, key=lambda r: int(r["t_send_ns"]))
        if len(trs) != len(crs):
            unmatched += abs(len(trs) - len(crs))
        for t, c in zip(trs, crs):
            cttft = int(c["ttft_ns"])
            err = abs(t["ttft_ns"] - cttft)
            ttft_err.append(err)
            n_ttft_ok += err <= 500_000 + 0.01 * cttft
            ctpot = int(c["tpot_ns"])
            if int(c["tokens"]) >= 2 and ctpot > 0:
                n_tpot += 1
                rel = abs(t["tpot_ns"] - ctpot) / ctpot
                tpot_err.append(rel)
                n_tpot_ok += rel <= 0.05
    n = len(ttft_err)
    check("requests_matched_by_port", unmatched == 0 and n == len(rows),
          f"{n} matched, {unmatched} unmatched")
    if n:
        ttft_err.sort()
        p99 = ttft_err[min(n - 1, int(0.99 * n))]
        check("ttft_agreement", n_ttft_ok >= 0.99 * n,
              f"{n_ttft_ok}/{n} within 0.5 ms + 1%; error p50 {ttft_err[n // 2] / 1e3:.1f} us, "
              f"p99 {p99 / 1e3:.1f} us, worst {ttft_err[-1] / 1e3:.1f} us")
    if n_tpot:
        tpot_err.sort()
        check("tpot_agreement", n_tpot_ok >= 0.99 * n_tpot,
              f"{n_tpot_ok}/{n_tpot} within 5%; error p50 {100 * tpot_err[n_tpot // 2]:.2f}%, "
              f"worst {100 * tpot_err[-1]:.2f}%")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
