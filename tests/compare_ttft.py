#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Compares ttftrace's per-request TTFT/TPOT (report --json) with the load
generator's client-side measurements (its CSV rows), matched by the client's
port and, on a keep-alive connection, by order. Prints PASS/FAIL lines and
the agreement figures.

The reference is the client's send time and the kernel's receive stamp of
the first token at the client (SO_TIMESTAMPNS): the client's own wakeup,
late by milliseconds now and then on 2 busy CPUs, is not in it. Where the
read that brought the first token also brought a later one, that stamp is
the later token's; those rows are only bounded by the client's user-space
reading (the tool cannot see the token after the client read it) and must
stay few. The user-space figures are printed for comparison."""
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
    ttft_err, tpot_err, user_err, unmatched = [], [], [], 0
    n_ttft_ok = n_tpot_ok = n_tpot = n_inexact = n_bound_ok = 0
    n_tpot_bound = n_tpot_bound_ok = 0
    for port, crs in by_port_client.items():
        trs = sorted(by_port_tool.get(port, []), key=lambda r: r["t_arrive_ns"])
        crs = sorted(crs, key=lambda r: int(r["t_send_ns"]))
        if len(trs) != len(crs):
            unmatched += abs(len(trs) - len(crs))
        for t, c in zip(trs, crs):
            cttft = int(c["ttft_ns"])
            tol = 500_000 + 0.01 * cttft
            user_err.append(abs(t["ttft_ns"] - cttft))
            rx_ttft = int(c["ttft_rx_ns"])
            if not rx_ttft:
                # the client read late; its reading is an upper bound
                n_inexact += 1
                n_bound_ok += t["ttft_ns"] <= cttft + tol
                continue
            err = abs(t["ttft_ns"] - rx_ttft)
            ttft_err.append(err)
            n_ttft_ok += err <= tol
            ctpot = int(c["tpot_rx_ns"])
            if int(c["tokens"]) >= 2 and ctpot > 0:
                rel = abs(t["tpot_ns"] - ctpot) / ctpot
                if c["last_rx_exact"] == "1":
                    tpot_err.append(rel)
                    n_tpot += 1
                    n_tpot_ok += rel <= 0.01
                else:
                    # a [DONE] read with the last token lends it its
                    # stamp, later by the server's gap between the two
                    # writes: the client's TPOT is only an upper bound
                    n_tpot_bound += 1
                    n_tpot_bound_ok += t["tpot_ns"] <= 1.01 * ctpot
    n = len(ttft_err)
    check("requests_matched_by_port", unmatched == 0 and n + n_inexact == len(rows),
          f"{n + n_inexact} matched, {unmatched} unmatched")
    check("reference_exact", n_inexact <= 0.05 * len(rows),
          f"{n} of {n + n_inexact} first tokens read alone (kernel stamp is theirs)")
    check("ttft_bounded_by_late_reads", n_bound_ok == n_inexact,
          f"{n_bound_ok}/{n_inexact} of the others at most the client's reading")

    def pct(v, q):
        return v[min(len(v) - 1, int(q * len(v)))]

    if n:
        ttft_err.sort()
        check("ttft_agreement", n_ttft_ok >= 0.99 * n,
              f"{n_ttft_ok}/{n} within 0.5 ms + 1% of the client's kernel stamps; error "
              f"p50 {pct(ttft_err, 0.5) / 1e3:.1f} us, p99 {pct(ttft_err, 0.99) / 1e3:.1f} us, "
              f"worst {ttft_err[-1] / 1e3:.1f} us")
    else:
        check("ttft_agreement", False, "no request to compare")
    if n_tpot:
        tpot_err.sort()
        check("tpot_agreement", n_tpot_ok >= 0.99 * n_tpot and n_tpot >= 0.25 * n,
              f"{n_tpot_ok}/{n_tpot} within 1%; error p50 {100 * pct(tpot_err, 0.5):.3f}%, "
              f"worst {100 * tpot_err[-1]:.3f}%")
    else:
        check("tpot_agreement", False, "no request with exact stamps")
    check("tpot_bounded_where_done_came_along", n_tpot_bound_ok >= 0.99 * n_tpot_bound,
          f"{n_tpot_bound_ok}/{n_tpot_bound} at most 1% over the client's")
    if user_err:
        user_err.sort()
        print(f"info: against the client's user-space reads: error p50 "
              f"{pct(user_err, 0.5) / 1e3:.1f} us, p99 {pct(user_err, 0.99) / 1e3:.1f} us, "
              f"worst {user_err[-1] / 1e3:.1f} us")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
