#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario: an asyncio server whose handlers run the model in a thread pool.

A shape the attribution rules were not written for: aiohttp's web server
(one asyncio event loop) reads and "tokenizes" each request (pure Python,
holding the GIL), then hands a generate() call to a
concurrent.futures.ThreadPoolExecutor of --workers threads, as
loop.run_in_executor() and a FastAPI sync endpoint do. One model, one
device: a worker first takes the model's threading.Lock, so requests queue
in the executor's work queue and then on that lock. Holding it, the worker
runs the prefill and the decode steps (hashlib over a large buffer with the
GIL released, as a GPU forward releases it) and hands each token to the
event loop with loop.call_soon_threadsafe() (a byte on the loop's
self-pipe); the handler awaits it on an asyncio.Queue and writes it as an
SSE event.

Ground truth (--log; CLOCK_MONOTONIC ns, time.monotonic_ns()), as
README.md's columns: port, t_read (body read), t_enqueue (before
run_in_executor), t_admit (the worker holds the model lock), t_first_token_emit
/ t_last_token_emit (just before the handler's write of that token),
tokens, io_ns (0), status.
"""
import asyncio
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (aiohttp_done, calibrated_compute,  # noqa: E402
                         locked_generate, now, server_args, sse_event, tokenize,
                         truth_log)


def main():
    ap = server_args(__doc__)
    ap.add_argument("--workers", type=int, default=4)
    args = ap.parse_args()
    if not args.log:
        ap.error("--log is needed")
    from aiohttp import web

    compute = calibrated_compute()
    model_lock = threading.Lock()
    pool = ThreadPoolExecutor(max_workers=args.workers, thread_name_prefix="worker")
    log = truth_log(args.log, "t_worker")

    def generate(loop, out, want, stamps):
        """A worker: the model's lock, then prefill and decode steps; each
        token handed to the event loop as it comes."""
        stamps["t_worker"] = now()
        locked_generate(model_lock, compute, args, want, lambda k: loop.call_soon_threadsafe(
            out.put_nowait, (f"tok{k}", k + 1 == want)), stamps)

    async def completions(request):
        t_read, want = tokenize(await request.json(), args)
        loop = asyncio.get_running_loop()
        out = asyncio.Queue()
        stamps = {}
        port = request.transport.get_extra_info("peername")[1]
        t_enqueue = now()
        fut = loop.run_in_executor(pool, generate, loop, out, want, stamps)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        t_first = t_last = n = 0
        done = False
        while not done:
            text, done = await out.get()
            t_last = now()
            t_first = t_first or t_last
            n += 1
            await resp.write(sse_event(text))
        await fut
        return await aiohttp_done(resp, log, f"{port},{t_read},{t_enqueue},"
                                  f"{stamps['t_admit']},{t_first},{t_last},{n},0,ok,"
                                  f"{stamps['t_worker']}")

    app = web.Application()
    app.router.add_post("/v1/completions", completions)
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
