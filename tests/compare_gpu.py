#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Checks ttftrace's attribution of the demo server on the stub GPU
(demo-server --gpu) against the server's ground truth, request by request,
and the report's GPU tables against what the stub did.

Requests are matched as in compare_stages.py (client port and time). The
ground truth is compare_stages.py's, with the GPU columns of the log:
  compute.gpu  gpu_ns: the simulated GPU time the engine's sync waited for
               in the iteration that produced the request's first token
               (what its launches did not overlap; for a spinning sync,
               at most its CPU time: preempted, it is on the runqueue)
  compute.cpu  engine_cpu_ns - sync_cpu_ns + tokenize_cpu_ns: the engine
               thread's CPU time but for the sync (spinning there is GPU
               time, docs/design.md §4.5), launch overhead included
               (launch_cpu_ns)

Checks:
  every client request matched to a complete, attributed ttftrace request;
  closure: the stages of every complete request sum to ttft_ns exactly;
  compute.gpu and the --dominant stage: attributed p50 within max(2 ms, 10%
    of the injected p50) of the injected p50, both ways;
  --launch: the launches' CPU time lands in compute.cpu: attributed p50 at
    least 90% of launch_cpu_ns p50 (and not over-attributed, below);
  every other stage: attributed p50 minus injected p50 at most max(2 ms, 10%
    of the TTFT p50);
  --dispatch: t_dispatch at the iteration boundary the request waited
    for: between the engine's last token hand-off before it took the
    request up (t_boundary_ns; its enqueue when the engine was idle) and
    that admission (t_dispatch_ns), docs/design.md §4.4. The distance out of
    that window within max(0.5 ms, 10% of the injected queue p50) at p50,
    and within 2 ms for 90% of the requests that queued (ground-truth queue
    over 1 ms).
Percentiles are nearest-rank over the matched requests.

--gpu-only checks only the report's "gpu" tables (no requests needed):
  --expect-call NAME[=N|>=N]  a cuda_calls row NAME, with count N or >= N
  --no-calls                  cuda_calls empty
  --expect-ioctl NAME         an ioctls row NAME
  --stub-log FILE             N may be "log:KIND[:FN]": the number of rows of
                              the stub's STUBCUDA_LOG of that kind ("sync",
                              "kernel") and function (cuStreamSynchronize)
--summary appends one JSON line per scenario; --table prints those lines.
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_stages as cs  # noqa: E402

MS = 1e6
# stages shown in the closing table, per scenario
TABLE_STAGES = ["compute.gpu", "compute.cpu", "scheduler.queue"]


def ground_truth(client, fe):
    gt = cs.ground_truth(client, fe, None)
    gt["compute.gpu"] = cs.num(fe, "gpu_ns")
    gt["compute.cpu"] = max(0, cs.num(fe, "engine_cpu_ns") - cs.num(fe, "sync_cpu_ns")) + \
        cs.num(fe, "tokenize_cpu_ns")
    return gt


def stub_log_count(path, what):
    """Rows of the stub's log starting with KIND,FN, ("sync:cuInit")."""
    prefix = ",".join(what.split(":")) + ","
    with open(path) as f:
        return sum(1 for line in f if line.startswith(prefix))


def gpu_checks(args, check):
    report = json.load(open(args.report))
    gpu = report.get("gpu")
    if not check("report has a gpu object", isinstance(gpu, dict)):
        return
    calls = {r["name"]: r["count"] for r in gpu.get("cuda_calls", [])}
    ioctls = {r["name"]: r["count"] for r in gpu.get("ioctls", [])}
    shown = ", ".join(f"{k} {v}" for k, v in sorted(calls.items())) or "none"
    if args.no_calls:
        check("no cuda_calls recorded", not calls, f"cuda_calls: {shown}")
    for spec in args.expect_call:
        name, op, want = spec, None, None
        for sep in (">=", "="):
            if sep in spec:
                name, want = spec.split(sep, 1)
                op = sep
                break
        if want and want.startswith("log:"):
            want = stub_log_count(args.stub_log, want[4:])
        elif want:
            want = int(want)
        got = calls.get(name, 0)
        if op is None:
            ok = got > 0
            what = f"cuda_calls has {name}"
        elif op == "=":
            ok = got == want
            what = f"cuda_calls {name} count is {want}"
        else:
            ok = got >= want
            what = f"cuda_calls {name} count at least {want}"
        check(what, ok, f"{name} {got}; cuda_calls: {shown}")
    ishown = ", ".join(f"{k} {v}" for k, v in sorted(ioctls.items())) or "none"
    for name in args.expect_ioctl:
        check(f"ioctls has {name}", ioctls.get(name, 0) > 0, f"ioctls: {ishown}")


def dispatch_checks(args, complete, inj, check):
    rows = []  # (distance out of the window, ttftrace id, queued)
    for (c, fe, _, t), q in zip(complete, inj["scheduler.queue"]):
        hi = cs.num(fe, "t_dispatch_ns")
        lo = cs.num(fe, "t_boundary_ns") or cs.num(fe, "t_enqueue_ns")
        if not t.get("t_dispatch_ns") or not hi:
            continue
        d = t["t_dispatch_ns"]
        d = lo - d if d < lo else d - hi if d > hi else 0
        rows.append((d, t["id"], q > 1_000_000))
    check("t_dispatch known for every request", len(rows) == len(complete),
          f"{len(rows)} of {len(complete)}")
    if not rows:
        return
    diffs = [r[0] for r in rows]
    queued = [r for r in rows if r[2]]
    tol = max(500_000, cs.TOL_REL * cs.pct(inj["scheduler.queue"], 50))
    check("t_dispatch at the iteration boundary (p50)", cs.pct(diffs, 50) <= tol,
          f"distance out of [boundary, admission] p50 {cs.pct(diffs, 50) / MS:.3f} ms, "
          f"max {max(diffs) / MS:.3f} ms, tolerance {tol / MS:.3f} ms")
    far = sorted((r for r in queued if r[0] > cs.TOL_ABS), reverse=True)
    if not check("t_dispatch of queued requests within 2 ms of the boundary",
                 queued and len(far) <= 0.1 * len(queued),
                 f"{len(queued) - len(far)} of {len(queued)} queued requests" +
                 ("; off: " + ", ".join(f"request {r[1]} by {r[0] / MS:.3f} ms"
                                        for r in far) if far else "")):
        if far:
            cs.drill_down(args, far[0][1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", default="scenario")
    ap.add_argument("--report")
    ap.add_argument("--server", help="the demo server's ground-truth log")
    ap.add_argument("--client", action="append", default=[])
    ap.add_argument("--dominant", choices=cs.STAGES, default="compute.gpu")
    ap.add_argument("--tgid", type=int, action="append", default=[])
    ap.add_argument("--min-requests", type=int, default=4)
    ap.add_argument("--launch", action="store_true",
                    help="check that launch overhead lands in compute.cpu")
    ap.add_argument("--dispatch", action="store_true",
                    help="check t_dispatch against the engine's admission")
    ap.add_argument("--gpu-only", action="store_true")
    ap.add_argument("--expect-call", action="append", default=[])
    ap.add_argument("--expect-ioctl", action="append", default=[])
    ap.add_argument("--no-calls", action="store_true")
    ap.add_argument("--stub-log")
    ap.add_argument("--ttftrace")
    ap.add_argument("--recording")
    ap.add_argument("--summary")
    ap.add_argument("--table")
    args = ap.parse_args()
    if args.table:
        return table(args.table)
    if not args.report:
        ap.error("--report is needed")

    name, dom = args.name, args.dominant
    failed = []
    check = cs.checker(name, failed)

    if args.gpu_only or args.expect_call or args.expect_ioctl or args.no_calls:
        gpu_checks(args, check)
        if args.gpu_only:
            return 0 if not failed else 1
    if not (args.server and args.client):
        ap.error("--server and --client are needed")

    report = json.load(open(args.report))
    pairs, complete = cs.request_checks(args, check, report)
    if not complete:
        cs.write_summary(args, {"name": name, "n": 0, "ok": False, "failed": failed,
                             "stages": {}})
        return 1

    attr = {s: [cs.tool_stages(p[3])[s] for p in complete] for s in cs.STAGES}
    inj = {s: [ground_truth(p[0], p[1])[s] for p in complete] for s in cs.STAGES}
    launch = [cs.num(p[1], "launch_cpu_ns") for p in complete]
    kernel = [cs.num(p[1], "kernel_ns") for p in complete]
    sync_wait = [cs.num(p[1], "sync_wait_ns") for p in complete]
    ttft_p50 = cs.pct([p[3]["ttft_ns"] for p in complete], 50)
    print(f"  {name}: {len(complete)} requests; TTFT p50 {ttft_p50 / MS:.3f} ms "
          f"(client {cs.pct([cs.num(p[0], 'ttft_ns') for p in complete], 50) / MS:.3f} ms); "
          f"kernels p50 {cs.pct(kernel, 50) / MS:.3f} ms, launch CPU p50 "
          f"{cs.pct(launch, 50) / MS:.3f} ms, sync wait p50 {cs.pct(sync_wait, 50) / MS:.3f} ms")
    print(f"  {'stage':<19} {'injected p50':>12} {'p99':>9} {'attributed p50':>15} {'p99':>9}  (ms)")
    for s in cs.STAGES:
        print(f"  {s:<19} {cs.pct(inj[s], 50) / MS:12.3f} {cs.pct(inj[s], 99) / MS:9.3f} "
              f"{cs.pct(attr[s], 50) / MS:15.3f} {cs.pct(attr[s], 99) / MS:9.3f}" +
              ("   <- dominant" if s == dom else ""))

    def nearest(stage, value):
        return min(complete, key=lambda p: abs(cs.tool_stages(p[3])[stage] - value))[3]["id"]

    ranked = sorted(cs.STAGES, key=lambda s: cs.pct(inj[s], 50), reverse=True)
    check(f"scenario: {dom} dominates the ground truth", ranked[0] == dom,
          f"injected p50 {dom} {cs.pct(inj[dom], 50) / MS:.3f} ms, largest is "
          f"{ranked[0]} {cs.pct(inj[ranked[0]], 50) / MS:.3f} ms")
    exact = [dom] + (["compute.gpu"] if dom != "compute.gpu" else [])
    for s in exact:
        i50, a50 = cs.pct(inj[s], 50), cs.pct(attr[s], 50)
        tol = max(cs.TOL_ABS, cs.TOL_REL * i50)
        if not check(f"{s} attributed", abs(a50 - i50) <= tol,
                     f"injected p50 {i50 / MS:.3f} ms (p99 {cs.pct(inj[s], 99) / MS:.3f}), "
                     f"attributed p50 {a50 / MS:.3f} ms (p99 {cs.pct(attr[s], 99) / MS:.3f}), "
                     f"tolerance {tol / MS:.3f} ms"):
            cs.drill_down(args, nearest(s, a50))
    if args.launch:
        l50, c50 = cs.pct(launch, 50), cs.pct(attr["compute.cpu"], 50)
        if not check("launch overhead lands in compute.cpu", c50 >= 0.9 * l50 and l50 > 0,
                     f"launch CPU p50 {l50 / MS:.3f} ms, compute.cpu attributed p50 "
                     f"{c50 / MS:.3f} ms (injected {cs.pct(inj['compute.cpu'], 50) / MS:.3f})"):
            cs.drill_down(args, nearest("compute.cpu", c50))
    tol_other = max(cs.TOL_ABS, cs.TOL_REL * ttft_p50)
    for s in cs.STAGES:
        if s in exact:
            continue
        excess = cs.pct(attr[s], 50) - cs.pct(inj[s], 50)
        if not check(f"{s} not over-attributed", excess <= tol_other,
                     f"attributed p50 {cs.pct(attr[s], 50) / MS:.3f} ms, injected p50 "
                     f"{cs.pct(inj[s], 50) / MS:.3f} ms, excess {excess / MS:.3f} ms, "
                     f"bound {tol_other / MS:.3f} ms"):
            cs.drill_down(args, nearest(s, cs.pct(attr[s], 50)))
    if args.dispatch:
        dispatch_checks(args, complete, inj, check)
    rules = {}
    for p in complete:
        k = str(p[3].get("dispatch_rule"))
        rules[k] = rules.get(k, 0) + 1
    print("  dispatch rules: " + ", ".join(f"{k} {v}" for k, v in sorted(rules.items())))

    cs.write_summary(args, {
        "name": name, "n": len(complete), "ok": not failed, "failed": failed,
        "ttft_p50": ttft_p50,
        "stages": {s: [cs.pct(inj[s], 50), cs.pct(attr[s], 50), cs.pct(inj[s], 99),
                       cs.pct(attr[s], 99)] for s in TABLE_STAGES},
    })
    return 0 if not failed else 1


def table(path):
    rows = cs.read_summary(path)
    print("GPU attribution: injected (ground truth) vs attributed by ttftrace, ms")
    print(f"{'scenario':<12} {'stage':<16} {'inj p50':>8} {'attr p50':>8} {'inj p99':>8} "
          f"{'attr p99':>8} {'n':>4}  result")
    for r in rows:
        result = "PASS" if r["ok"] else "FAIL: " + ", ".join(r["failed"])
        if not r["stages"]:
            print(f"{r['name']:<12} {'-':<16} {'':>8} {'':>8} {'':>8} {'':>8} {r['n']:>4}  {result}")
        for i, (s, v) in enumerate(r["stages"].items()):
            print(f"{r['name'] if i == 0 else '':<12} {s:<16} {v[0] / MS:8.2f} {v[1] / MS:8.2f} "
                  f"{v[2] / MS:8.2f} {v[3] / MS:8.2f} {r['n'] if i == 0 else '':>4}  "
                  f"{result if i == 0 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
