#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Checks tools/scenarios runs against per-scenario limits; prints PASS/FAIL.

  scen_check.py [--scale=F] TAG OUTDIR NAME:DISPATCH:QUEUE:A2T[:strict|:p50|:hops=S|:enq=S][+enq=S][+cut=K] ...

--scale multiplies the shares DISPATCH, QUEUE and A2T (the sanitizer
suite's: an ASan build of the recorder takes CPU the traced server lacks).

For each NAME (a scenario run in OUTDIR by tools/scenarios/run.sh, whose
compare.py summary is OUTDIR/summary.jsonl): every request matched and
complete (up to three `no-wire`, an XMIT the kernel did not report, and one
`no-path`, a Go request in flight while the goroutine probes were being
attached, are let through: docs/design.md §3.4, §4.10), the TTFT of
the requests the client timed exactly within 0.2 ms + 1% of its kernel
stamp but for 1% of the run's requests (issue 8's 99%), TPOT within 0.2
ms + 5% likewise, and at most DISPATCH, QUEUE and A2T (shares of the requests) with
t_dispatch off by more than 1 ms, the queue (from the hand-off to the
engine's admission: t_enqueue to t_dispatch, the server's own span, which
holds the relays' and the engine's waits for a CPU that the stages call
scheduler.runqueue) off by more than max(1 ms, 5%), and the
admission-to-token span off by as much; where the server read storage
(its O_DIRECT read loop), the storage span (the read loop of ttftrace's
first storage wait on the path to its last one's end, the waits for a CPU
or the GIL between included, as the server's clock counts them) off by as much for at most A2T too.
With "strict", the queue, the admission-to-token span and the storage span
are also within max(1 ms, 5%) of the server's own at p50 and p99 (issue
8's bound; the p50 also passes within that bound of the server's values 3
ranks of 120 either side of its median, where a gap at the median makes
one request off a jump: median_within()); with "p50", at p50 only (a
p99 of 120 requests is one or two requests: on a shared 2-CPU machine a
single one the kernel ran late moves it); with "hops=S" (a gateway in
front of a runner), every runner request a hop, 90% with the gateway
threads that sent it and read its first token, and at least S of the
requests walked through theirs (hop_checks()); with "enq=S" (the mode, or
"+enq=S" after another), at most S (scaled too) with t_enqueue off by more
than 1 ms.
"""
import json
import os
import sys


def within(truth, attr):
    return abs(truth - attr) <= max(1_000_000, 0.05 * truth)


def median_within(v):
    """ttftrace's p50 within issue 8's bound of the server's, or of the
    server's values 3 ranks of 120 either side of its median (v[5], v[6]:
    its 47.5th and 52.5th percentiles): a request off moves a nearest-rank
    median a rank, and where the distribution has a gap at its median (two
    modes: node, nagle, sglang) that rank is milliseconds away."""
    t, a = v[0], v[1]
    if within(t, a) or len(v) < 7:
        return within(t, a)
    lo, hi = v[5], v[6]
    gap = 0 if lo <= a <= hi else min(abs(a - lo), abs(a - hi))
    return gap <= max(1_000_000, 0.05 * t)


def hop_checks(rep, share):
    """A gateway's scenario (mode hops=SHARE): each of its calls to the
    runner a hop counted apart, with the threads that sent it and read
    its first token, and at least SHARE of its requests walked through
    their hop (docs/design.md §4.11)."""
    hops = [r for r in rep["requests"] if r.get("incomplete_reason") == "hop"]
    first = min((r["t_arrive_ns"] for r in hops if r.get("t_arrive_ns")), default=0)
    # a call the gateway made before it served anyone (LocalAI's health
    # check of the backend it started) is the runner's request, no hop
    outer = [r for r in rep["requests"] if r.get("incomplete_reason") != "hop" and
             not r.get("tls_apart") and
             not (r.get("t_end_ns") and r["t_end_ns"] < first)]
    taken = sum(1 for r in outer if r.get("hop_id"))
    sender = sum(1 for r in hops if r.get("hop_sender_tid"))
    read = sum(1 for r in hops if r.get("hop_read_tid"))
    return [
        (len(hops) == len(outer) == rep["summary"]["hops"],
         f"every runner request a hop: {len(hops)} for {len(outer)} requests, "
         f"{rep['summary']['hops']} in the summary"),
        (sender >= 0.9 * len(hops), f"hops that know their sender: {sender} of {len(hops)}"),
        (read >= 0.9 * len(hops),
         f"hops whose first token's read by the gateway was seen: {read} of {len(hops)}"),
        (taken >= share * len(outer),
         f"walked through their hop: {taken} of {len(outer)} (at least {share:.0%})"),
    ]


def evidence(outdir, name):
    """What a failed run's log needs to be read without its recording (a CI
    run keeps none): compare.py's list of the requests off and its
    drill-down of the worst one."""
    try:
        lines = open(os.path.join(outdir, name, "compare.txt")).read().splitlines()
    except OSError:
        return
    keep = [ln for ln in lines if ln.startswith(("t_dispatch off", "dispatch rules"))]
    worst = [i for i, ln in enumerate(lines) if ln.startswith("worst queue")]
    if worst:
        keep += lines[worst[0]:worst[0] + 40]
    print("\n".join(f"  {name}| {ln}" for ln in keep))


def main():
    args = sys.argv[1:]
    scale = 1.0
    if args and args[0].startswith("--scale="):
        scale = float(args.pop(0).split("=", 1)[1])
    tag, outdir = args[0], args[1]
    runs = {}
    for line in open(os.path.join(outdir, "summary.jsonl")):
        s = json.loads(line)
        runs[s["name"]] = s
    for spec in args[2:]:
        f = spec.split(":")
        name, disp, queue, a2t = (f[0], scale * float(f[1]), scale * float(f[2]),
                                  scale * float(f[3]))
        mode = f[4] if len(f) > 4 else ""
        # +cut=K: up to K responses the server itself cut short (Caddy
        # 2.6's reverse proxy ends a streamed HTTP/1 response early now and
        # then, caddyserver/caddy#5431): the client's row failed, and the
        # tool says so too, the request "no-token", its hop cut
        # +enq=S: at most S with t_enqueue off by more than 1 ms, beside
        # the mode's checks
        mode, *extras = mode.split("+")
        cut = next((int(x[4:]) for x in extras if x.startswith("cut=")), 0)
        enq = next((x for x in extras if x.startswith("enq=")), None)
        if mode.startswith("enq="):
            mode, enq = "", mode
        s = runs.get(name)
        if not s:
            print(f"FAIL: {tag}: {name}: no result")
            continue
        n = s["n"]
        rep = json.load(open(os.path.join(outdir, name, "report.json")))
        # a gateway's calls to its runner are counted apart: no client's;
        # so are a TLS handshake's exchanges
        why = [r["incomplete_reason"] for r in rep["requests"]
               if not r["complete"] and r["incomplete_reason"] != "hop" and
               not r.get("tls_apart")]
        ok_ttft, all_ttft = (int(x) for x in s["ttft_ok"].split("/"))
        ok_tpot, all_tpot = (int(x) for x in s.get("tpot_ok", "0/0").split("/"))
        # the queue as the issue and the server define it: hand-off to
        # admission (t_enqueue to t_dispatch), the relays' and the engine's
        # waits for a CPU in it (scheduler.runqueue in the stages)
        q, k = s.get("queue span", s["scheduler.queue"]), s["admit to token"]
        qs = s["scheduler.queue"]
        st = s.get("storage span") if s.get("storage span", [0])[0] > 0 else None
        cut_short = lambda w: w == "no-token" or "hop" in w.split(",")  # noqa: E731
        cuts = [w for w in why if cut_short(w)]
        if n == 120 or n < 120 - cut or len(cuts) > 2 * (120 - n):
            cuts = []
        if cuts:
            why = [w for w in why if not cut_short(w)]
        checks = [
            ((n == 120 or cuts) and s["complete"] + len(why) == n and
         why.count("no-wire") <= 3 and why.count("no-path") <= 1 and
         all(w in ("no-wire", "no-path") for w in why),
             f"{s['complete']} of {n} requests matched and complete (incomplete: {why}"
             f"{f'; cut by the server: {cuts}' if cuts else ''})"),
            # issue 8's bound, for at least 99% of the run's requests: of
            # those the client timed exactly (nagle: about 50 of 120), as
            # many may miss as 1% of all (one, a first request whose
            # stamp the client read 0.36 ms after its wire time once)
            (all_ttft > 0 and all_ttft - ok_ttft <= 0.01 * n,
             f"TTFT within 0.2 ms + 1% of the client's stamp: {s['ttft_ok']} "
             f"(at least 99% of {n})"),
            (s["dispatch_off"] <= disp * n,
             f"t_dispatch off by > 1 ms for {s['dispatch_off']} of {n} (at most {disp:.0%})"),
            (q[4] <= queue * n, f"queue off for {q[4]} of {n} (at most {queue:.0%})"),
            (k[4] <= a2t * n,
             f"admission to token off for {k[4]} of {n} (at most {a2t:.0%})"),
        ]
        if st:
            checks.append((st[4] <= a2t * n,
                           f"storage span off for {st[4]} of {n} (at most {a2t:.0%})"))
        # the last token's stamp is exact only when [DONE] came in a later
        # read (Node writes them back to back: none is, nothing to check)
        if mode.startswith("hops="):
            checks += hop_checks(rep, float(mode[5:]))
        if enq:
            enq = scale * float(enq[4:])
            checks.append((s["enqueue_off"] <= enq * n,
                           f"t_enqueue off by > 1 ms for {s['enqueue_off']} of {n} "
                           f"(at most {enq:.0%})"))
        if all_tpot:
            checks.append((all_tpot - ok_tpot <= 0.01 * n,
                           f"TPOT within 0.2 ms + 5% of the client's stamps: "
                           f"{ok_tpot}/{all_tpot} (at least 99% of {n})"))
        else:
            print(f"  {name}: no TPOT the client timed exactly (the last token's "
                  "read held [DONE])")
        if mode in ("strict", "p50"):
            for what, v in (("queue", q), ("admission to token", k),
                            ("storage span", st)):
                if not v:
                    continue
                near = (f", {v[5] / 1e6:.2f}-{v[6] / 1e6:.2f} within 3 ranks"
                        if len(v) >= 7 else "")
                checks.append((median_within(v), f"{what} p50: {v[1] / 1e6:.2f} ms "
                               f"for the server's {v[0] / 1e6:.2f}{near} (max(1 ms, 5%))"))
                if mode == "strict":
                    checks.append((within(v[2], v[3]), f"{what} p99: {v[3] / 1e6:.2f} ms "
                                   f"for the server's {v[2] / 1e6:.2f} (max(1 ms, 5%))"))
        for ok, what in checks:
            print(f"{'PASS' if ok else 'FAIL'}: {tag}: {name}: {what}")
        if not all(ok for ok, what in checks):
            evidence(outdir, name)
        # the figures, for the reader of the log
        print(f"  {name}: scheduler.queue stage p50 {qs[1] / 1e6:.2f}, p99 {qs[3] / 1e6:.2f}; "
              f"queue p50 {q[1] / 1e6:.2f}/{q[0] / 1e6:.2f} ms, p99 "
              f"{q[3] / 1e6:.2f}/{q[2] / 1e6:.2f}; admission to token p50 "
              f"{k[1] / 1e6:.2f}/{k[0] / 1e6:.2f}, p99 {k[3] / 1e6:.2f}/"
              f"{k[2] / 1e6:.2f} (ttftrace/server)" +
              (f"; storage span p50 {st[1] / 1e6:.2f}/{st[0] / 1e6:.2f}, p99 "
               f"{st[3] / 1e6:.2f}/{st[2] / 1e6:.2f}" if st else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
