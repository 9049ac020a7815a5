#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Truth vs attributed for one scenario run (tools/scenarios/run.sh).

  compare.py --name NAME --report REPORT.json --truth TRUTH.csv CLIENT.csv...
             [--hops RUNNER.csv] [--ttftrace BIN --recording FILE.ttft] [--markdown]
             [--summary FILE]
  compare.py --table FILE      (the --summary lines as one Markdown table)

Requests are matched by the client's port and, on a keep-alive connection,
by order: loadgen rows (by t_send), the server's truth rows (by t_read) and
ttftrace's complete and incomplete requests (by t_arrive). Per stage, the
server's truth (ns):
  scheduler.queue   t_admit - t_enqueue (hand-off to engine admission)
  compute           t_first_token_emit - t_admit - io_ns (compared with
                    compute.cpu + compute.gpu)
  storage.io        io_ns (the server's O_DIRECT read loop)
  storage span      io_ns, against the tool's storage_span_ns (the read loop
                    of its first storage wait to its last one's end, the
                    waits for a CPU or the GIL between the reads included,
                    as the server's clock has them; the stages call those
                    scheduler.runqueue and other.lock)
  before enqueue    t_enqueue - t_arrive (tool's arrival: upload, parsing,
                    tokenizing, event-loop wait; compared with network.in +
                    scheduler.runqueue + other stages the walk put there)
TTFT and TPOT are compared with the client's kernel receive stamps where the
read held the token alone (as tests/compare_ttft.py does). Prints what it
measured; it checks nothing: this is a measurement tool.
"""
import argparse
import json
import os
import subprocess
import sys
from collections import Counter

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests"))
import compare_stages as cs  # noqa: E402
from compare_ttft import by_port  # noqa: E402

MS = 1e6


def port_of(r):
    return int(str(r["peer"]).rsplit(":", 1)[1])


def matched(report, truth, clients):
    """[(client, truth, tool)] by port and order on the connection (the
    server's row: the one it read between this send and the next). A hop
    (the runner's side of a gateway's call) is no client's: its port is the
    gateway's, which a later client connection may be given again. A TLS
    handshake's exchanges are no request either: the report counts them
    apart ("tls_apart")."""
    tool = by_port([r for r in report["requests"]
                    if r.get("t_arrive_ns") and r.get("incomplete_reason") != "hop"
                    and not r.get("tls_apart")],
                   port_of, lambda r: r["t_arrive_ns"])
    gt = by_port(truth, lambda r: int(r["port"]), lambda r: int(r["t_read"]))
    cl = by_port(clients, lambda r: int(r["local_port"]), lambda r: int(r["t_send_ns"]))
    out = []
    for port, crs in cl.items():
        gs = gt.get(port, [])
        for i, (c, t) in enumerate(zip(crs, tool.get(port, []))):
            # the server's row read between this send and the next: a
            # request its proxy cut may have none
            lo = int(c["t_send_ns"])
            hi = int(crs[i + 1]["t_send_ns"]) if i + 1 < len(crs) else 1 << 64
            g = next((g for g in gs if lo <= int(g["t_read"]) < hi), None)
            if g:
                out.append((c, g, t))
    return out


def join_hops(front, runner):
    """A proxy's rows joined to its runner's by the upstream connection's
    port and order on it: the front's t_read, first and last token, the
    runner's t_enqueue and t_admit (the engine's queue)"""
    up = by_port(runner, lambda r: int(r["port"]), lambda r: int(r["t_read"]))
    fr = by_port(front, lambda r: int(r["upstream_port"]), lambda r: int(r["t_forward"]))
    out = []
    for port, rows in fr.items():
        for f, r in zip(rows, up.get(port, [])):
            out.append(dict(f, t_enqueue=r["t_enqueue"], t_admit=r["t_admit"], io_ns="0"))
    return out


def truth_stages(g, t):
    n = lambda k: cs.num(g, k)  # noqa: E731
    return {
        "scheduler.queue": n("t_admit") - n("t_enqueue"),
        "queue span": n("t_admit") - n("t_enqueue"),
        "compute": n("t_first_token_emit") - n("t_admit") - n("io_ns"),
        "admit to token": n("t_first_token_emit") - n("t_admit") - n("io_ns"),
        "storage.io": n("io_ns"),
        "storage span": n("io_ns"),
        "before enqueue": n("t_enqueue") - t["t_arrive_ns"],
    }


def tool_stages(t):
    s = cs.tool_stages(t)
    return {
        "scheduler.queue": s["scheduler.queue"],
        # the server's own span: hand-off to admission, whatever waited
        # in it (the relays' and the engine's waits for a CPU, which the
        # stages call scheduler.runqueue)
        "queue span": max(0, (t.get("t_dispatch_ns") or t["t_read_ns"]) -
                          (t.get("t_enqueue_ns") or t["t_read_ns"])),
        "compute": s["compute.cpu"] + s["compute.gpu"],
        # the truth's own span: the server's clock cannot tell compute from
        # the engine's and the writer's runqueue waits after admission;
        # its read loop, waits for a CPU in it included, is the storage span
        # (behind a proxy whose truth is the runner's: the hop's write,
        # --token-at-hop)
        "admit to token": max(0, (t.get("t_runner_write_ns") or
                                  t.get("t_first_write_ns") or 0) -
                              (t.get("t_dispatch_ns") or t["t_read_ns"]) -
                              (t.get("storage_span_ns") or 0)),
        "storage.io": s["storage.io"],
        "storage span": t.get("storage_span_ns") or 0,
        "before enqueue": (t.get("t_enqueue_ns") or t["t_arrive_ns"]) - t["t_arrive_ns"],
    }


def fmt(v):
    return f"{v / MS:.2f}"


def table(path):
    """The runs' summary lines as one Markdown table (ms)."""
    print("| scenario | req (complete) | queue truth p50/p99 | queue attr p50/p99 | queue off | "
          "compute truth p50/p99 | compute attr p50/p99 | compute off | admit-to-token attr "
          "p50/p99 | admit-to-token off | storage truth/attr p50 "
          "| t_enqueue / t_dispatch off | TTFT ok | dispatch rules |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in cs.read_summary(path):
        q, c, st = r["scheduler.queue"], r["compute"], r["storage.io"]
        k = r.get("admit to token", [0, 0, 0, 0, 0])
        print(f"| {r['name']} | {r['n']} ({r['complete']}) | {fmt(q[0])} / {fmt(q[2])} | "
              f"{fmt(q[1])} / {fmt(q[3])} | {q[4]} | {fmt(c[0])} / {fmt(c[2])} | "
              f"{fmt(c[1])} / {fmt(c[3])} | {c[4]} | {fmt(k[1])} / {fmt(k[3])} | {k[4]} | "
              f"{fmt(st[0])} / {fmt(st[1])} | "
              f"{r['enqueue_off']} / {r['dispatch_off']} | {r['ttft_ok']} | " +
              ", ".join(f"{k} {v}" for k, v in r["rules"].items()) + " |")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", default="scenario")
    ap.add_argument("--report", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("client", nargs="+")
    ap.add_argument("--hops", metavar="RUNNER.csv",
                    help="--truth is a proxy's log; join it to its runner's")
    ap.add_argument("--token-at-hop", action="store_true",
                    help="the truth is the runner's behind a proxy (its first token its own "
                    "send): a proxied request's span to the first token ends at its hop's")
    ap.add_argument("--ttftrace")
    ap.add_argument("--recording")
    ap.add_argument("--markdown", action="store_true", help="tables as Markdown")
    ap.add_argument("--summary", help="append one JSON line for --table")
    ap.add_argument("--table", help=argparse.SUPPRESS)
    if "--table" in sys.argv:
        return table(sys.argv[sys.argv.index("--table") + 1])
    args = ap.parse_args()
    report = json.load(open(args.report))
    if args.token_at_hop:
        by_id = {r["id"]: r for r in report["requests"]}
        for r in report["requests"]:
            if r.get("hop_id") in by_id:
                r["t_runner_write_ns"] = by_id[r["hop_id"]].get("t_first_write_ns")
    truth = cs.read_csv(args.truth)
    if args.hops:
        truth = join_hops(truth, cs.read_csv(args.hops))
    clients = []
    for path in args.client:
        clients += cs.read_csv(path, status_ok=False)
    # a connection's order holds its failed requests too (a response its
    # proxy cut): matched, then left out
    pairs = [p for p in matched(report, truth, clients) if p[0]["status"] == "ok"]
    done = [p for p in pairs if p[2].get("complete") and p[2].get("stages")]
    reasons = Counter(str(p[2].get("incomplete_reason")) for p in pairs if p not in done)
    print(f"## {args.name}")
    print(f"requests: client {len(clients)}, truth {len(truth)}, ttftrace "
          f"{len(report['requests'])} ({sum(1 for r in report['requests'] if r.get('complete'))}"
          f" complete); matched {len(pairs)}, complete {len(done)}" +
          ("; incomplete: " + ", ".join(f"{k} {v}" for k, v in reasons.items())
           if reasons else ""))
    if not done:
        return 1
    # TTFT / TPOT against the client's kernel stamps
    terr = [abs(t["ttft_ns"] - int(c["ttft_rx_ns"])) for c, g, t in done if int(c["ttft_rx_ns"])]
    tpot = [(t["tpot_ns"], int(c["tpot_rx_ns"])) for c, g, t in done
            if int(c["tpot_rx_ns"]) and c["last_rx_exact"] == "1" and t.get("tpot_ns")]
    ttft_ok = sum(1 for c, g, t in done if int(c["ttft_rx_ns"]) and
                  abs(t["ttft_ns"] - int(c["ttft_rx_ns"])) <= 200_000 + 0.01 * int(c["ttft_rx_ns"]))
    print(f"TTFT: tool p50 {fmt(cs.pct([t['ttft_ns'] for c, g, t in done], 50))} ms, client "
          f"p50 {fmt(cs.pct([int(c['ttft_ns']) for c, g, t in done], 50))} ms; vs the client's "
          f"kernel stamp ({len(terr)} requests): error p50 {cs.pct(terr, 50) / 1e3:.1f} us, "
          f"p99 {cs.pct(terr, 99) / 1e3:.1f} us; {ttft_ok}/{len(terr)} within 0.2 ms + 1%")
    tpot_ok = sum(1 for a, b in tpot if abs(a - b) <= 200_000 + 0.05 * b)
    if tpot:
        rel = [abs(a - b) / b for a, b in tpot]
        print(f"TPOT: tool p50 {fmt(cs.pct([a for a, b in tpot], 50))} ms, client (kernel "
              f"stamps) p50 {fmt(cs.pct([b for a, b in tpot], 50))} ms; error p50 "
              f"{100 * cs.pct(rel, 50):.1f}%, p99 {100 * cs.pct(rel, 99):.1f}%; "
              f"{tpot_ok}/{len(tpot)} within 0.2 ms + 5%")
    else:
        print("TPOT: no request with exact client stamps (tokens bunched into one read?)")
    # Nagle and delayed ACKs: the client got the first token with later ones
    bunched = [(t, c) for c, g, t in done if not int(c["ttft_rx_ns"]) and int(c["tokens"]) > 1]
    if bunched:
        print(f"bunched at the wire: {len(bunched)}/{len(done)} first tokens read together "
              f"with later data; their TPOT: tool p50 "
              f"{fmt(cs.pct([t.get('tpot_ns') or 0 for t, c in bunched], 50))} ms, client "
              f"(user-space reads) p50 "
              f"{fmt(cs.pct([int(c['tpot_ns']) for t, c in bunched], 50))} ms")
    stages = ["scheduler.queue", "queue span", "compute", "admit to token", "storage.io",
              "storage span", "before enqueue"]
    tr = {s: [truth_stages(g, t)[s] for c, g, t in done] for s in stages}
    at = {s: [tool_stages(t)[s] for c, g, t in done] for s in stages}
    sep = "|" if args.markdown else " "
    if args.markdown:
        print("\n| stage | truth p50 | attr p50 | truth p99 | attr p99 | off > max(1 ms, 5%) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
    else:
        print(f"{'stage (ms)':<16} {'truth p50':>9} {'attr p50':>9} {'truth p99':>9} "
              f"{'attr p99':>9} {'off':>5}")
    for s in stages:
        off = sum(1 for a, b in zip(tr[s], at[s]) if abs(a - b) > max(1_000_000, 0.05 * a))
        cells = [s, fmt(cs.pct(tr[s], 50)), fmt(cs.pct(at[s], 50)), fmt(cs.pct(tr[s], 99)),
                 fmt(cs.pct(at[s], 99)), f"{off}/{len(done)}"]
        if args.markdown:
            print(f"{sep} " + f" {sep} ".join(cells) + f" {sep}")
        else:
            print(f"{cells[0]:<16} " + " ".join(f"{c:>9}" for c in cells[1:5]) + f" {cells[5]:>5}")
    rest = Counter()
    for c, g, t in done:
        for k, v in cs.tool_stages(t).items():
            if k not in ("scheduler.queue", "compute.cpu", "compute.gpu", "storage.io"):
                rest[k] += v
    print("other stages, attributed mean ms: " +
          ", ".join(f"{k} {v / len(done) / MS:.2f}" for k, v in sorted(rest.items()) if v))
    enq = [t["t_enqueue_ns"] - cs.num(g, "t_enqueue") for c, g, t in done if t.get("t_enqueue_ns")]
    disp_of = [(t["t_dispatch_ns"] - cs.num(g, "t_admit"), t) for c, g, t in done
               if t.get("t_dispatch_ns")]
    disp = [d for d, t in disp_of]
    for what, v in (("t_enqueue", enq), ("t_dispatch", disp)):
        if v:
            print(f"{what}, tool - truth ms: p50 {cs.pct(v, 50) / MS:+.2f}, min "
                  f"{min(v) / MS:+.2f}, max {max(v) / MS:+.2f}, "
                  f"{sum(1 for x in v if abs(x) > 1_000_000)}/{len(v)} off by > 1 ms")
    # the requests off, most off first: which rule fired, for a failed CI run's log
    off = sorted(((d, t) for d, t in disp_of if abs(d) > 1_000_000), key=lambda e: -abs(e[0]))
    if off:
        print(f"t_dispatch off by > 1 ms ({len(off)}), tool - truth: " +
              ", ".join(f"request {t['id']} {d / MS:+.2f} ms ({t.get('dispatch_rule')})"
                        for d, t in off[:12]) + (", ..." if len(off) > 12 else ""))
    rules = Counter(str(t.get("dispatch_rule")) for c, g, t in done)
    print("dispatch rules: " + ", ".join(f"{k} {v}" for k, v in rules.most_common()))
    summary = {"name": args.name, "n": len(pairs), "complete": len(done),
               "rules": dict(rules.most_common()),
               "ttft_ok": f"{ttft_ok}/{len(terr)}",
               "tpot_ok": f"{tpot_ok}/{len(tpot)}",
               "enqueue_off": sum(1 for x in enq if abs(x) > 1_000_000),
               "dispatch_off": sum(1 for x in disp if abs(x) > 1_000_000)}
    for s in ("scheduler.queue", "queue span", "compute", "admit to token", "storage.io",
              "storage span"):
        # then the truth's 47.5th and 52.5th percentiles: the ranks a
        # median moves by when 2.5% of the requests are off
        summary[s] = [cs.pct(tr[s], 50), cs.pct(at[s], 50), cs.pct(tr[s], 99),
                      cs.pct(at[s], 99),
                      sum(1 for a, b in zip(tr[s], at[s]) if abs(a - b) > max(1_000_000, 0.05 * a)),
                      cs.pct(tr[s], 47.5), cs.pct(tr[s], 52.5)]
    cs.write_summary(args, summary)
    # the request whose queue is most wrong, for a drill-down
    worst = max(done, key=lambda p: abs(truth_stages(p[1], p[2])["scheduler.queue"] -
                                        tool_stages(p[2])["scheduler.queue"]))
    w_t, w_a = truth_stages(worst[1], worst[2]), tool_stages(worst[2])
    print(f"worst queue: request {worst[2]['id']} (port {port_of(worst[2])}): queue truth "
          f"{fmt(w_t['scheduler.queue'])} attr {fmt(w_a['scheduler.queue'])}, compute truth "
          f"{fmt(w_t['compute'])} attr {fmt(w_a['compute'])}, rule "
          f"{worst[2].get('dispatch_rule')}")
    if args.ttftrace and args.recording:
        res = subprocess.run([args.ttftrace, "report", "-R", str(worst[2]["id"]),
                              args.recording], capture_output=True, text=True)
        print("\n".join("    " + ln for ln in (res.stdout + res.stderr).splitlines()[:80]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
