#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Checks ttftrace's stage attribution (report --json) against the demo
server's ground truth, request by request.

Requests are matched by the client's port and time: a loadgen row (port P,
sent at S, first token at F), the server's log row of port P read inside
[S, F], and ttftrace's request from peer port P (of the traced front-end,
--tgid) that arrived inside [S - 1 ms, that read]. With --engine (a --proxy
scenario) the engine instance's row is the one from the front-end's
upstream_port read inside [its t_enqueue, its first token write].

Ground truth per stage, per request (ns), from the logs:
  network.in          t_read_done - t_first_byte_read - fe_read_wake_ns
                      (front-end): the upload, less the wakeup after it
  network.out         client's first token - server's first token write
  scheduler.backlog   t_first_byte_read - the client's transmit stamp of the
                      request (t_send_tx, else t_send) - fe_read_wake_ns:
                      the request whole in the kernel while no front-end
                      thread reads it (every worker serving another
                      connection; its connection not accepted yet), less
                      the reader's wakeup (runqueue)
  scheduler.queue     queue_ns - engine_wake_delay_ns: waiting in the queue,
                      less the engine's own wakeup, which is runqueue time
  scheduler.runqueue  engine_run_delay_ns (the kernel's schedstat count for
                      the engine thread over the admitting iteration) +
                      fe_run_delay_ns (the same for the front-end thread,
                      from the start of the request's last read to its
                      first token write), for both instances with --proxy;
                      the --split receiver thread's is not known (small).
                      The front-end's runqueue waits in earlier reads of an
                      upload are not on the critical path: the last bytes
                      come when they come
  storage.io          io_wait_ns + io_cpu_ns: the time blocked in the KV
                      preads and the CPU time inside them (copying, pinning,
                      submitting: storage, docs/design.md §4.3); their
                      runqueue waits stay scheduler.runqueue
  compute.gpu         0 (no GPU in these scenarios)
  compute.cpu         engine_cpu_ns (dispatch to first token) less the KV
                      preads' io_cpu_ns, + tokenize_cpu_ns; the front-end's parsing
                      and writing are not counted (tens of microseconds)
  other               engine_sleep_ns (blocked in the sleep-mode steps)

Checks (the issue's criteria):
  the scenario's dominant stage: attributed p50 within max(2 ms, 10% of the
    injected p50) of the injected p50 (both ways);
  every other stage: attributed p50 minus injected p50 at most
    max(2 ms, 10% of the TTFT p50): time the ground truth does not explain.
    Both upper bounds take each request's steal_ns off the stage first:
    time a VM's hypervisor took on the path lands in whichever stage its
    thread was in, and the server's CPU-time truths hold none of it.
    Every stage has some ground truth here, so there is no case without one;
    a stage the scenario does not touch has a ground truth near 0 and must
    itself stay under that bound.
  --tight STAGE[:PCT]: that stage's attributed p50 and p99 within max(1 ms,
    PCT%, 5 by default) of the injected ones;
  closure: for every complete request, the stages sum to ttft_ns exactly;
  every client request is matched to a complete, attributed ttftrace request.
Percentiles are nearest-rank over the matched requests; each stage's are its
own. The dominant stage must also dominate the ground truth, or the scenario
did not do what it claims (a FAIL of the scenario, not of ttftrace).

On a failed stage check, --ttftrace and --recording give a drill-down:
`ttftrace report -R ID` of the request nearest the attributed p50.
--summary appends one JSON line per scenario; --table prints those lines as
the closing table.
"""
import argparse
import csv
import json
import subprocess
import sys
from collections import Counter, defaultdict

STAGES = ["network.in", "network.out", "scheduler.backlog", "scheduler.queue",
          "scheduler.runqueue", "storage.io", "compute.gpu", "compute.cpu", "other"]
MS = 1e6
TOL_ABS = 2_000_000
TOL_REL = 0.10
# --tight STAGE: issue 8's bound, at p50 and p99
TIGHT_ABS = 1_000_000
TIGHT_REL = 0.05


def pct(values, p):
    """Nearest-rank percentile; 0 for no values."""
    if not values:
        return 0
    v = sorted(values)
    rank = max(1, min(len(v), int(p / 100.0 * len(v) + 0.999999)))
    return v[rank - 1]


def read_csv(path, status_ok=True):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if status_ok:
        rows = [r for r in rows if r.get("status") == "ok"]
    return rows


def num(row, key):
    v = row.get(key)
    return int(v) if v not in (None, "") else 0


def tool_stages(req):
    """The report's stages; "other" is also accepted as other.* parts."""
    st = req.get("stages") or {}
    out = {s: 0 for s in STAGES}
    for k, v in st.items():
        if k in out:
            out[k] += int(v)
        elif k.startswith("other."):
            out["other"] += int(v)
    return out


def ground_truth(client, fe, eng):
    """Stage -> ns this request should get (see the module docstring)."""
    e = eng if eng is not None else fe
    run_delay = num(e, "engine_run_delay_ns")
    tok_cpu = num(fe, "tokenize_cpu_ns")
    fe_wait = num(fe, "fe_run_delay_ns") + (num(eng, "fe_run_delay_ns") if eng is not None else 0)
    gt = {
        "network.in": num(fe, "t_read_done_ns") - num(fe, "t_first_byte_read_ns") -
        num(fe, "fe_read_wake_ns"),
        "network.out": num(client, "t_first_token_ns") - num(fe, "t_first_token_write_ns"),
        "scheduler.backlog": num(fe, "t_first_byte_read_ns") -
        (num(client, "t_send_tx_ns") or num(client, "t_send_ns")) - num(fe, "fe_read_wake_ns"),
        "scheduler.queue": num(e, "queue_ns") - num(e, "engine_wake_delay_ns"),
        "scheduler.runqueue": (run_delay if run_delay else num(e, "engine_runnable_ns")) +
        fe_wait,
        "storage.io": num(e, "io_wait_ns") + num(e, "io_cpu_ns"),
        "compute.gpu": 0,
        "compute.cpu": num(e, "engine_cpu_ns") - num(e, "io_cpu_ns") + tok_cpu,
        "other": num(e, "engine_sleep_ns"),
    }
    return {k: max(0, v) for k, v in gt.items()}


def match(clients, fes, engs, report, tgids):
    """[(client, fe, eng, tool request)] and a list of problems."""
    fe_by_port = defaultdict(list)
    for r in fes:
        fe_by_port[num(r, "peer_port")].append(r)
    eng_by_port = defaultdict(list)
    for r in engs or []:
        eng_by_port[num(r, "peer_port")].append(r)
    tool_by_port = defaultdict(list)
    for r in report["requests"]:
        if tgids and r.get("tgid") not in tgids:
            continue
        try:
            port = int(str(r["peer"]).rsplit(":", 1)[1])
        except (KeyError, IndexError, ValueError):
            continue
        tool_by_port[port].append(r)
    used = set()
    out, problems = [], []
    for c in sorted(clients, key=lambda r: num(r, "t_send_ns")):
        port, send, first = (num(c, "local_port"), num(c, "t_send_ns"),
                             num(c, "t_first_token_ns"))
        fe = next((r for r in fe_by_port[port] if id(r) not in used and
                   send <= num(r, "t_read_done_ns") <= first), None)
        if fe is None:
            problems.append(f"client request {c['id']} (port {port}): no server row")
            continue
        used.add(id(fe))
        eng = None
        if engs is not None:
            up = num(fe, "upstream_port")
            eng = next((r for r in eng_by_port[up] if id(r) not in used and
                        num(fe, "t_enqueue_ns") <= num(r, "t_read_done_ns") <=
                        num(fe, "t_first_token_write_ns")), None)
            if eng is None:
                problems.append(f"client request {c['id']}: no engine row "
                                f"(upstream port {up})")
                continue
            used.add(id(eng))
        cands = [r for r in tool_by_port[port] if id(r) not in used and
                 r.get("t_arrive_ns") is not None and
                 send - 1_000_000 <= r["t_arrive_ns"] <= num(fe, "t_read_done_ns")]
        if not cands:
            problems.append(f"client request {c['id']} (port {port}): ttftrace has no request")
            continue
        t = min(cands, key=lambda r: abs(r["t_arrive_ns"] - num(fe, "t_first_byte_read_ns")))
        used.add(id(t))
        out.append((c, fe, eng, t))
    return out, problems


def drill_down(args, req_id):
    if not args.ttftrace or not args.recording:
        return
    try:
        res = subprocess.run([args.ttftrace, "report", "-R", str(req_id), args.recording],
                             capture_output=True, text=True, timeout=60)
        text = (res.stdout + res.stderr).rstrip().splitlines()
    except (OSError, subprocess.SubprocessError) as e:
        text = [f"(drill-down failed: {e})"]
    print(f"  drill-down: ttftrace report -R {req_id} {args.recording}")
    for line in text[:60]:
        print("    " + line)
    if len(text) > 60:
        print(f"    ... {len(text) - 60} more lines")


def conn_events(args, peer_port, limit=200):
    """The recording's events of the connection from the client's port: what
    a request marked incomplete saw, for the next one to look at it."""
    if not args.ttftrace or not args.recording:
        return
    try:
        res = subprocess.run([args.ttftrace, "report", "--events", args.recording],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"    (events failed: {e})")
        return
    lines = res.stdout.splitlines()
    sks = {ln.split("sk=")[1].split()[0] for ln in lines
           if " conn_open " in ln and f"rport={peer_port}" in ln and "sk=" in ln}
    mine = [ln for ln in lines if any(f"sk={sk}" in ln for sk in sks)]
    print(f"  events of the connection from port {peer_port} (sk {', '.join(sorted(sks)) or '?'}):")
    for ln in mine[:limit]:
        print("    " + ln)
    if len(mine) > limit:
        print(f"    ... {len(mine) - limit} more")


def checker(name, failed):
    """check(what, cond, detail): prints PASS/FAIL for the scenario and
    notes the failures in failed; returns cond."""
    def check(what, cond, detail=""):
        print(("PASS: " if cond else "FAIL: ") + f"{name}: {what}" +
              (f": {detail}" if detail else ""))
        if not cond:
            failed.append(what)
        return cond
    return check


def request_checks(args, check, report, allow_no_wire=False):
    """Matches the client's requests with the server's log (and the engine's,
    --engine) and the report; checks they all match, are complete and
    attributed, and that every complete request of the traced processes
    has stages summing to its TTFT. Returns the matched pairs and the
    complete ones. allow_no_wire: see below."""
    clients = []
    for path in args.client:
        clients += read_csv(path)
    fes = read_csv(args.server)
    engine = getattr(args, "engine", None)
    engs = read_csv(engine) if engine else None
    pairs, problems = match(clients, fes, engs, report, set(args.tgid))
    complete = [p for p in pairs if p[3].get("complete") and p[3].get("stages")]
    incomplete = [p for p in pairs if p not in complete]
    reasons = sorted({str(p[3].get("incomplete_reason") or
                          ("no stages" if not p[3].get("stages") else "?"))
                      for p in incomplete})
    check("requests matched", not problems and len(pairs) == len(clients),
          f"{len(pairs)} of {len(clients)} client requests" +
          (f"; {problems[0]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
           if problems else ""))
    # Seen once in a dozen CI suites, not reproduced since: one net-out
    # request whose first token's XMIT was never matched (no-wire). Where
    # allowed, one such request is let through, its events printed for a
    # look; any other incompleteness fails.
    rare = allow_no_wire and len(incomplete) == 1 and reasons == ["no-wire"]
    check("matched requests complete and attributed",
          (len(complete) == len(pairs) or rare) and len(complete) >= args.min_requests,
          f"{len(complete)} of {len(pairs)}" +
          (f"; incomplete: {'; '.join(reasons)}" if reasons else "") +
          ("; one no-wire let through, see its events below" if rare else ""))
    for p in incomplete[:2]:
        r = p[3]
        print(f"  incomplete request {r.get('id')}: {r.get('incomplete_reason')}, peer "
              f"{r.get('peer')}, t_arrive {r.get('t_arrive_ns')}, t_first_write "
              f"{r.get('t_first_write_ns')}, t_wire {r.get('t_wire_ns')}, tokens "
              f"{r.get('tokens')}; client TTFT {num(p[0], 'ttft_ns') / MS:.3f} ms")
        if r.get("peer"):
            conn_events(args, r["peer"].rsplit(":", 1)[1])

    # closure over every complete request of the traced processes
    tgids = set(args.tgid)
    bad = []
    n_closed = 0
    for r in report["requests"]:
        if not r.get("complete") or not r.get("stages"):
            continue
        if tgids and r.get("tgid") not in tgids:
            continue
        n_closed += 1
        total = sum(tool_stages(r).values())
        if total != r.get("ttft_ns"):
            bad.append(f"request {r['id']}: stages sum {total} != ttft {r.get('ttft_ns')}")
    check("closure: stages sum to ttft_ns exactly", not bad and n_closed > 0,
          f"{n_closed - len(bad)} of {n_closed} requests" + (f"; {bad[0]}" if bad else ""))
    return pairs, complete


def write_summary(args, summary):
    """One JSON line per scenario for --table (--summary FILE)."""
    if args.summary:
        with open(args.summary, "a") as f:
            f.write(json.dumps(summary) + "\n")


def read_summary(path):
    try:
        return [json.loads(line) for line in open(path) if line.strip()]
    except OSError:
        return []


def table(path):
    rows = read_summary(path)
    print("stage attribution: injected (ground truth) vs attributed by ttftrace, ms")
    print(f"{'scenario':<12} {'dominant stage':<19} {'inj p50':>8} {'attr p50':>8} "
          f"{'inj p99':>8} {'attr p99':>8} {'TTFT p50':>8} {'n':>4}  result")
    for r in rows:
        print(f"{r['name']:<12} {r['dominant']:<19} {r['inj_p50'] / MS:8.2f} "
              f"{r['attr_p50'] / MS:8.2f} {r['inj_p99'] / MS:8.2f} "
              f"{r['attr_p99'] / MS:8.2f} {r['ttft_p50'] / MS:8.2f} {r['n']:>4}  "
              f"{'PASS' if r['ok'] else 'FAIL: ' + ', '.join(r['failed'])}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", default="scenario")
    ap.add_argument("--report")
    ap.add_argument("--server", help="the front-end's ground-truth log")
    ap.add_argument("--engine", help="--proxy: the engine instance's log")
    ap.add_argument("--client", action="append", default=[])
    ap.add_argument("--dominant", choices=STAGES)
    ap.add_argument("--tgid", type=int, action="append", default=[],
                    help="only ttftrace requests of this process")
    ap.add_argument("--min-requests", type=int, default=4)
    ap.add_argument("--ttftrace")
    ap.add_argument("--recording")
    ap.add_argument("--tight", action="append", default=[],
                    help="STAGE[:PCT]: p50 and p99 within max(1 ms, PCT%%, "
                         "default 5) of the truth")
    ap.add_argument("--summary")
    ap.add_argument("--table")
    args = ap.parse_args()
    if args.table:
        return table(args.table)
    if not (args.report and args.server and args.client and args.dominant):
        ap.error("--report, --server, --client and --dominant are needed")

    name, dom = args.name, args.dominant
    failed = []
    check = checker(name, failed)
    report = json.load(open(args.report))
    pairs, complete = request_checks(args, check, report, allow_no_wire=True)

    if not complete:
        summary = {"name": name, "dominant": dom, "inj_p50": 0, "attr_p50": 0,
                   "inj_p99": 0, "attr_p99": 0, "ttft_p50": 0, "n": 0,
                   "ok": False, "failed": failed}
        write_summary(args, summary)
        return 1

    attr = {s: [tool_stages(p[3])[s] for p in complete] for s in STAGES}
    # the time a VM's hypervisor took on each path lies inside the stages,
    # in whichever the stopped thread was in, where the server's CPU-time
    # truths have none of it (docs/design.md §4.7): a stage may read over
    # its truth by that much. less_steal[s]: each request's stage s as if
    # all of its path's steal had fallen in it
    steal = [int(p[3].get("steal_ns") or 0) for p in complete]
    less_steal = {s: [max(0, a - t) for a, t in zip(attr[s], steal)] for s in STAGES}
    steal_note = (f"; the paths' steal p50 {pct(steal, 50) / MS:.3f} ms, "
                  f"max {max(steal) / MS:.3f}, taken off for the upper bound"
                  if any(steal) else "")
    inj = {s: [ground_truth(p[0], p[1], p[2])[s] for p in complete] for s in STAGES}
    ttft = [p[3]["ttft_ns"] for p in complete]
    ttft_p50 = pct(ttft, 50)
    client_ttft_p50 = pct([num(p[0], "ttft_ns") for p in complete], 50)
    print(f"  {name}: {len(complete)} requests; TTFT p50 {ttft_p50 / MS:.3f} ms "
          f"(client {client_ttft_p50 / MS:.3f} ms)")
    print(f"  {'stage':<19} {'injected p50':>12} {'p99':>9} {'attributed p50':>15} {'p99':>9}  (ms)")
    for s in STAGES:
        print(f"  {s:<19} {pct(inj[s], 50) / MS:12.3f} {pct(inj[s], 99) / MS:9.3f} "
              f"{pct(attr[s], 50) / MS:15.3f} {pct(attr[s], 99) / MS:9.3f}" +
              ("   <- dominant" if s == dom else ""))
    disp = [p[3]["t_dispatch_ns"] - num(p[2] if p[2] is not None else p[1], "t_dispatch_ns")
            for p in complete if p[3].get("t_dispatch_ns") and
            num(p[2] if p[2] is not None else p[1], "t_dispatch_ns")]
    if disp:
        rules = Counter(str(p[3].get("dispatch_rule")) for p in complete)
        print(f"  t_dispatch, ttftrace minus ground truth: p50 {pct(disp, 50) / MS:+.3f} ms, "
              f"min {min(disp) / MS:+.3f}, max {max(disp) / MS:+.3f}; rules: " +
              ", ".join(f"{k} {v}" for k, v in sorted(rules.items())))

    enq = [p[3]["t_enqueue_ns"] - num(p[2] if p[2] is not None else p[1], "t_enqueue_ns")
           for p in complete if p[3].get("t_enqueue_ns") and
           num(p[2] if p[2] is not None else p[1], "t_enqueue_ns")]
    # where the queue starts: after the reader's own work (tokenizing)
    check("t_enqueue at the server's hand-off (p50)",
          enq and abs(pct(enq, 50)) <= TOL_ABS,
          f"ttftrace minus ground truth: p50 {pct(enq, 50) / MS:+.3f} ms, "
          f"min {min(enq) / MS:+.3f}, max {max(enq) / MS:+.3f}, tolerance {TOL_ABS / MS:.3f} ms"
          if enq else "no request with both")

    def nearest(stage, value):
        return min(complete, key=lambda p: abs(tool_stages(p[3])[stage] - value))[3]["id"]

    inj_ranked = sorted(STAGES, key=lambda s: pct(inj[s], 50), reverse=True)
    check(f"scenario: {dom} dominates the ground truth", inj_ranked[0] == dom,
          f"injected p50 {dom} {pct(inj[dom], 50) / MS:.3f} ms, largest is "
          f"{inj_ranked[0]} {pct(inj[inj_ranked[0]], 50) / MS:.3f} ms")
    i50, a50 = pct(inj[dom], 50), pct(attr[dom], 50)
    tol = max(TOL_ABS, TOL_REL * i50)
    ok = check(f"{dom} attributed",
               a50 >= i50 - tol and pct(less_steal[dom], 50) <= i50 + tol,
               f"injected p50 {i50 / MS:.3f} ms (p99 {pct(inj[dom], 99) / MS:.3f}), "
               f"attributed p50 {a50 / MS:.3f} ms (p99 {pct(attr[dom], 99) / MS:.3f}), "
               f"tolerance {tol / MS:.3f} ms" + steal_note)
    if not ok:
        drill_down(args, nearest(dom, a50))
    tol_other = max(TOL_ABS, TOL_REL * ttft_p50)
    for s in STAGES:
        if s == dom:
            continue
        excess = pct(attr[s], 50) - pct(inj[s], 50)
        ok = check(f"{s} not over-attributed",
                   pct(less_steal[s], 50) - pct(inj[s], 50) <= tol_other,
                   f"attributed p50 {pct(attr[s], 50) / MS:.3f} ms, injected p50 "
                   f"{pct(inj[s], 50) / MS:.3f} ms, excess {excess / MS:.3f} ms, "
                   f"bound {tol_other / MS:.3f} ms" + steal_note)
        if not ok:
            drill_down(args, nearest(s, pct(attr[s], 50)))

    for spec in args.tight:
        s, _, rel = spec.partition(":")
        rel = float(rel) / 100 if rel else TIGHT_REL
        for q in (50, 99):
            i, a = pct(inj[s], q), pct(attr[s], q)
            tol = max(TIGHT_ABS, rel * i)
            ok = check(f"{s} p{q} within max(1 ms, {rel:.1%})", abs(a - i) <= tol,
                       f"injected {i / MS:.3f} ms, attributed {a / MS:.3f} ms, "
                       f"tolerance {tol / MS:.3f} ms")
            if not ok:
                drill_down(args, nearest(s, a))

    summary = {"name": name, "dominant": dom, "inj_p50": i50, "attr_p50": a50,
               "inj_p99": pct(inj[dom], 99), "attr_p99": pct(attr[dom], 99),
               "ttft_p50": ttft_p50, "n": len(complete), "ok": not failed,
               "failed": failed}
    write_summary(args, summary)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
