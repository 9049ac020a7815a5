#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario: an aiohttp API feeding a model process through multiprocessing queues.

A shape the attribution rules were not written for (session 38, judged as
a new user would): the API process (aiohttp, one asyncio event loop) reads
and "tokenizes" each request and puts it on a multiprocessing.Queue (the
caller appends to a buffer; the queue's feeder thread pickles it and
writes it to a pipe). The model process, started by multiprocessing,
batches continuously (--batch): it admits what the queue holds (get()
takes the queue's cross-process lock, a futex in shared memory, and reads
the pipe), runs a prefill per admitted request (hashlib with the GIL
released, as a GPU forward releases it) and decode steps, and puts each
token on a second queue. A reader thread of the API blocks in that
queue's get() and hands each token to the event loop with
loop.call_soon_threadsafe(); the handler awaits it on an asyncio.Queue
and writes it as an SSE event.

Ground truth (--log; CLOCK_MONOTONIC ns, the same clock in both
processes), README.md's columns: port, t_read, t_enqueue (before the
put), t_admit (the model process starts its prefill: those it took
together are prefilled one after the other), t_first_token_emit /
t_last_token_emit (just before the handler's write), tokens, io_ns (0),
status, t_put (after the put returned: the feeder thread writes later).

--audit: the server marks itself for `ttftrace record --mark
KIND=python:...` (docs/design.md §4.9): sys.audit("mpq.put", rid) right
after stamping t_enqueue, sys.audit("mpq.prefill", rid) right after
stamping t_admit (run.sh's mpq-mark). Without it nothing is called.
"""
import asyncio
import multiprocessing as mp
import os
import queue
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (aiohttp_done, aiohttp_serve, auditor, calibrated_compute,  # noqa: E402
                         now, server_args, sse_event, tokenize, truth_log)


def model_main(args, inq, outq):
    """The model process: continuous batching over what inq holds."""
    compute = calibrated_compute()
    audit = auditor(args)
    outq.put(None)      # ready
    running = []        # [rid, want, made, t_admit]
    while True:
        new = []
        if not running:
            new.append(inq.get())
        while len(running) + len(new) < args.batch and not inq.empty():
            new.append(inq.get())
        for rid, want in new:
            t_admit = now()
            audit("mpq.prefill", rid)
            compute(args.prefill_ms)
            outq.put((rid, 0, want <= 1, t_admit))
            if want > 1:
                running.append([rid, want, 1, t_admit])
        if running:
            compute(args.decode_ms)
            for r in running:
                outq.put((r[0], r[2], r[2] + 1 >= r[1], r[3]))
                r[2] += 1
            running = [r for r in running if r[2] < r[1]]


def main():
    ap = server_args(__doc__)
    args = ap.parse_args()
    audit = auditor(args)
    if not args.log:
        ap.error("--log is needed")
    from aiohttp import web

    inq, outq = mp.Queue(), mp.Queue()
    model = mp.Process(target=model_main, args=(args, inq, outq), daemon=True)
    model.start()
    try:
        ready = outq.get(timeout=15)
    except queue.Empty:
        ready = "nothing"
    if ready is not None:
        sys.exit(f"mpq_server: the model process did not start (it said {ready!r})")
    log = truth_log(args.log, "t_put")
    streams = {}
    next_id = [0]

    async def completions(request):
        t_read, want = tokenize(await request.json(), args)
        rid = next_id[0] = next_id[0] + 1
        q = streams[rid] = asyncio.Queue()
        port = request.transport.get_extra_info("peername")[1]
        t_enqueue = now()
        audit("mpq.put", rid)
        inq.put((rid, want))
        t_put = now()
        t_first = t_last = t_admit = n = 0
        done = False
        try:
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await resp.prepare(request)
            while not done:
                idx, done, t_admit = await q.get()
                t_last = now()
                t_first = t_first or t_last
                n += 1
                await resp.write(sse_event(f"tok{idx}"))
        finally:
            # a client gone mid-stream: its tokens go nowhere
            streams.pop(rid, None)
        return await aiohttp_done(resp, log, f"{port},{t_read},{t_enqueue},{t_admit},"
                                  f"{t_first},{t_last},{n},0,ok,{t_put}")

    async def start_reader(app):
        loop = asyncio.get_running_loop()

        def reader():
            """Tokens from the model process to their streams."""
            while True:
                rid, idx, done, t_admit = outq.get()
                q = streams.get(rid)
                if q is not None:
                    loop.call_soon_threadsafe(q.put_nowait, (idx, done, t_admit))

        threading.Thread(target=reader, name="outq-reader", daemon=True).start()

    aiohttp_serve(args.port, completions, start_reader)


if __name__ == "__main__":
    main()
