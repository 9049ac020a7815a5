#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Compares ttftrace's per-request TTFT/TPOT (report --json) with the load
generator's client-side measurements (its CSV rows), matched by the client's
port and, on a keep-alive connection, by order. Prints PASS/FAIL lines and
the agreement figures.

  compare_ttft.py REPORT.json [--server-log GT.csv] [--ttft-only]
                  [--stalls LO_STALLS.txt] CLIENT.csv...

--ttft-only leaves TPOT out: where CLOCK_REALTIME is stepped under the
client, a token's stamp it reads across a step is left out or taken on
the server's log, which a 1% bound on a short stream does not forgive.

The reference for a request is the kernel's transmit stamp of the request
at the client (SO_TIMESTAMPING; without one, the client's clock read just
before its send) and the kernel's receive stamp of the first token at the
client (SO_TIMESTAMPNS): on loopback both are where a device handed the
bytes on, as ttftrace's t_arrive and t_wire are. Neither the client's own
wakeup, late by milliseconds now and then on 2 busy CPUs, nor a stall of
the client (or of the VM under it) between its clock and its send is in
it. Where the read that brought the first token also brought a later
one, that stamp is the later token's; for those requests the first token's
time is the server's own (its ground-truth log: the clock read before the
write), or without the log the client's user-space reading. TPOT likewise:
from the client's stamps where both ends are exact, else from the server's
log. --stalls gives the loopback device's stalls (tests/lo_stalls.bt: a
vCPU stolen between an skb's transmit, the sender's stamp, and its receive,
the other side's): a request's reference loses the stall of its request
skb from the client's transmit stamp on (ttftrace's t_arrive is the
receive) and that of its first token's skb before the client's receive
stamp (ttftrace's t_wire is the transmit). Every request counts: >= 99%
must agree. The tool can never be later than the client's own reading;
that is checked too."""
import json
import os
import sys
from collections import defaultdict

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_stages as cs  # noqa: E402

TTFT_ABS_NS = 500_000
TTFT_REL = 0.01
TPOT_REL = 0.01
# a stall's transmit or receive is this near the client's stamp of it
# (the stamp is read a few instructions from the tracepoint)
STALL_MATCH_NS = 50_000


def by_port(rows, port_of, key):
    out = defaultdict(list)
    for r in rows:
        out[port_of(r)].append(r)
    for v in out.values():
        v.sort(key=key)
    return out


def read_stalls(path):
    """[(xmit_ns, rx_ns)] of the loopback device's stalls"""
    out = []
    for line in open(path):
        f = line.split()
        if len(f) == 4 and f[0] == "stall":
            out.append((int(f[1]), int(f[2])))
    return out


def stall_at_send(stalls, tx):
    """how long after the client's transmit stamp tx its skb reached the
    receive side, where a stall's window holds tx, else 0"""
    return max((rx - tx for x, rx in stalls
                if x - STALL_MATCH_NS <= tx <= rx), default=0)


def stall_at_receive(stalls, rx_stamp):
    """the stall whose receive is the client's receive stamp: how long
    before it the server's skb left (ttftrace's t_wire), else 0"""
    return max((rx - x for x, rx in stalls
                if abs(rx - rx_stamp) <= STALL_MATCH_NS), default=0)


def main():
    args = sys.argv[1:]
    gt_path = None
    stalls = []
    if "--stalls" in args:
        i = args.index("--stalls")
        stalls = read_stalls(args[i + 1])
        del args[i:i + 2]
    if "--server-log" in args:
        i = args.index("--server-log")
        gt_path = args[i + 1]
        del args[i:i + 2]
    ttft_only = "--ttft-only" in args
    if ttft_only:
        args.remove("--ttft-only")
    report = json.load(open(args[0]))
    rows = []
    for path in args[1:]:
        rows += cs.read_csv(path)
    gt = by_port(cs.read_csv(gt_path) if gt_path else [],
                 lambda r: int(r["peer_port"]), lambda r: int(r["t_read_done_ns"]))
    reqs = [r for r in report["requests"] if r["complete"]]
    ok = True

    def check(name, cond, detail=""):
        nonlocal ok
        print(("PASS: " if cond else "FAIL: ") + name + (": " + detail if detail else ""))
        ok &= bool(cond)

    check("request_count", len(reqs) == len(rows) and len(rows) > 0,
          f"ttftrace {len(reqs)} complete of {len(report['requests'])}, client {len(rows)}")
    tool = by_port(reqs, lambda r: int(r["peer"].rsplit(":", 1)[1]),
                   lambda r: r["t_arrive_ns"])
    client = by_port(rows, lambda r: int(r["local_port"]), lambda r: int(r["t_send_ns"]))
    ttft_err, tpot_err, user_err = [], [], []
    unmatched = n_ttft_ok = n_tpot_ok = n_late = n_late_ok = 0
    stalled = []
    refs = defaultdict(int)
    for port, crs in client.items():
        trs, gts = tool.get(port, []), gt.get(port, [])
        if len(trs) != len(crs) or (gt_path and len(gts) != len(crs)):
            unmatched += abs(len(trs) - len(crs)) + (abs(len(gts) - len(crs)) if gt_path else 0)
        for k, (t, c) in enumerate(zip(trs, crs)):
            g = gts[k] if k < len(gts) else None
            send = int(c.get("t_send_tx_ns") or 0) or int(c["t_send_ns"])
            user_ttft = int(c["ttft_ns"])
            user_err.append(abs(t["ttft_ns"] - user_ttft))
            if int(c["ttft_rx_ns"]):
                ref, src = int(c["ttft_rx_ns"]), "client kernel stamp"
                stall = stall_at_receive(stalls, int(c["t_first_token_rx_ns"]))
                if int(c.get("t_send_tx_ns") or 0):
                    stall += stall_at_send(stalls, send)
                if stall:
                    stalled.append(stall)
                    ref -= stall
            elif g:
                ref, src = int(g["t_first_token_write_ns"]) - send, "server log"
            else:
                ref, src = user_ttft, "client read"
            refs[src] += 1
            err = abs(t["ttft_ns"] - ref)
            ttft_err.append(err)
            n_ttft_ok += err <= TTFT_ABS_NS + TTFT_REL * ref
            if not int(c["ttft_rx_ns"]):
                # a late read: the tool saw the token before the client did
                n_late += 1
                n_late_ok += t["ttft_ns"] <= user_ttft + TTFT_ABS_NS + TTFT_REL * user_ttft
            if int(c["tokens"]) < 2:
                continue
            if int(c["tpot_rx_ns"]) and c["last_rx_exact"] == "1":
                ref = int(c["tpot_rx_ns"])
            elif g and int(g["tokens"]) == int(c["tokens"]):
                ref = (int(g["t_last_token_write_ns"]) -
                       int(g["t_first_token_write_ns"])) // (int(c["tokens"]) - 1)
            else:
                ref = int(c["tpot_ns"])
            if ref > 0:
                rel = abs(t["tpot_ns"] - ref) / ref
                tpot_err.append(rel)
                n_tpot_ok += rel <= TPOT_REL
    n = len(ttft_err)
    check("requests_matched_by_port", unmatched == 0 and n == len(rows),
          f"{n} matched, {unmatched} unmatched" + (" (client, tool and server log)"
                                                   if gt_path else ""))
    if not n:
        check("ttft_agreement", False, "no request to compare")
        return 1
    ttft_err.sort()
    # the stamps themselves must work: late reads are the exception
    check("client_kernel_stamps", refs["client kernel stamp"] >= 0.9 * n,
          f"{refs['client kernel stamp']} of {n} first tokens read alone, with their stamp")
    used = ", ".join(f"{v} {k}" for k, v in sorted(refs.items()))
    if stalls:
        print(f"info: {len(stalls)} loopback stalls; {len(stalled)} references less one"
              + (f", the longest {max(stalled) / 1e3:.1f} us" if stalled else ""))
    check("ttft_agreement", n_ttft_ok >= 0.99 * n,
          f"{n_ttft_ok}/{n} within 0.5 ms + 1% (reference: {used}); error "
          f"p50 {cs.pct(ttft_err, 50) / 1e3:.1f} us, p99 {cs.pct(ttft_err, 99) / 1e3:.1f} us, "
          f"worst {ttft_err[-1] / 1e3:.1f} us")
    check("ttft_not_after_late_reads", n_late_ok == n_late,
          f"{n_late_ok}/{n_late} requests whose client read late: the tool's TTFT "
          "at most the client's reading")
    if tpot_err and not ttft_only:
        tpot_err.sort()
        check("tpot_agreement", n_tpot_ok >= 0.99 * len(tpot_err),
              f"{n_tpot_ok}/{len(tpot_err)} within 1%; error p50 "
              f"{100 * cs.pct(tpot_err, 50):.3f}%, worst {100 * tpot_err[-1]:.3f}%")
    user_err.sort()
    print(f"info: against the client's user-space reads: error p50 "
          f"{cs.pct(user_err, 50) / 1e3:.1f} us, p99 {cs.pct(user_err, 99) / 1e3:.1f} us, "
          f"worst {user_err[-1] / 1e3:.1f} us")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
