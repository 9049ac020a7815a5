#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario (xxiv): TensorRT-LLM's in-process executor behind its OpenAI server.

A shape the attribution rules were not written for (session 51): trtllm-serve
with the LLM API's executor in the server's own process (its
GenerationExecutorWorker and PyTorch-backend PyExecutor), three Python
threads sharing one GIL. Starlette on uvicorn (one asyncio event loop)
validates and tokenizes each request (~--tokenize-ms of Python), then
enqueue_request() puts it on the executor's request queue.Queue. The
executor thread's loop (_executor_loop) fetches new requests: with none
active, a blocking get(); otherwise whatever the queue holds, get_nowait()
(a put then wakes nobody); it admits them into the continuous batch
(--batch), runs the step's forward (a prefill per new request and a decode
for the running ones: hashlib with the GIL released, as the CUDA graph's
launch and the wait for it release it), then samples and updates the
requests in Python (--step-py-ms, holding the GIL), and _enqueue_responses
appends each request's response to a dict and notify_all()s a
threading.Condition. The worker's await_response thread waits on that
Condition (wait_for, 100 ms timeout), takes every response and hands them
to the event loop in one loop.call_soon_threadsafe (its _SyncQueue's
notify_many: a byte on the loop's self-pipe), which puts each on its
request's asyncio.Queue; the response's async generator writes each SSE
event.
With --audit it calls sys.audit("trtllm.enqueue", rid, client port) in the
loop after stamping t_enqueue and sys.audit("trtllm.admit", rid) in the
executor after stamping t_admit: the markers of `ttftrace record --mark
KIND=python:...` (docs/design.md §4.9; run.sh's trtllm-mark).

Ground truth (--log; CLOCK_MONOTONIC ns, time.monotonic_ns()), as
README.md's columns: port, t_read (body read), t_enqueue (before the put
on the request queue), t_admit (the executor's step that fetched it
starts its forward), t_first_token_emit / t_last_token_emit (the response
generator has the token, just before its send), tokens, io_ns (0),
status; and t_engine_first (the executor appended its first response).
"""
import asyncio
import os
import queue
import sys
import threading
from collections import defaultdict

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (Streams, auditor, busy_python,  # noqa: E402
                         calibrated_compute, engine_stream, now,
                         serve_starlette, server_args, tokenize, truth_log)


class Executor:
    """PyExecutor's loop in a thread, its responses behind a Condition."""

    def __init__(self, args, compute, audit):
        self.args, self.compute, self.audit = args, compute, audit
        self.requests = queue.Queue()
        self.response_cv = threading.Condition()
        self.responses = defaultdict(list)

    def enqueue_request(self, rid, want):
        self.requests.put((rid, want))

    def fetch_new(self, active):
        """A blocking get() with nothing active, then what the queue holds."""
        new = [] if active else [self.requests.get()]
        while active + len(new) < self.args.batch:
            try:
                new.append(self.requests.get_nowait())
            except queue.Empty:
                break
        return new

    def loop(self):
        args = self.args
        running = []        # [rid, wanted, produced, t_admit]
        while True:
            new = self.fetch_new(len(running))
            t_admit = now()
            for rid, _ in new:
                self.audit("trtllm.admit", rid)
            new = [[rid, want, 0, t_admit] for rid, want in new]
            self.compute(args.prefill_ms * len(new) + (args.decode_ms if running else 0))
            # sampling, the requests' state, the responses: Python
            busy_python(args.step_py_ms)
            running += new
            with self.response_cv:
                for r in running:
                    r[2] += 1
                    self.responses[r[0]].append((r[2], r[3], now(), r[2] >= r[1]))
                self.response_cv.notify_all()
            running = [r for r in running if r[2] < r[1]]

    def await_responses(self, timeout):
        with self.response_cv:
            self.response_cv.wait_for(lambda: self.responses, timeout)
            got, self.responses = self.responses, defaultdict(list)
        return got


def main():
    ap = server_args(__doc__)
    ap.add_argument("--step-py-ms", type=float, default=0.3,
                    help="Python per executor step (sampling, request state)")
    args = ap.parse_args()
    if not args.log:
        ap.error("--log is needed")
    from starlette.responses import StreamingResponse

    audit = auditor(args)
    executor = Executor(args, calibrated_compute(), audit)
    streams = Streams()
    log = truth_log(args.log, "t_engine_first")
    the_loop = []

    def deliver(got):
        """In the loop: each response on its request's queue."""
        for rid, outs in got.items():
            for out in outs:
                streams.put(rid, out)

    def await_response_thread():
        while True:
            got = executor.await_responses(0.1)
            if got:
                the_loop[0].call_soon_threadsafe(deliver, got)

    async def completions(request):
        t_read, want = tokenize(await request.json(), args)
        rid, q, port, t_enqueue = streams.open(request, audit, "trtllm.enqueue")
        executor.enqueue_request(rid, want)

        return StreamingResponse(engine_stream(q, lambda: streams.queues.pop(rid), log,
                                               f"{port},{t_read},{t_enqueue}"),
                                 media_type="text/event-stream")

    async def ready():
        the_loop.append(asyncio.get_running_loop())
        threading.Thread(target=executor.loop, name="executor", daemon=True).start()
        threading.Thread(target=await_response_thread, name="await_response",
                         daemon=True).start()
        return "ready"

    serve_starlette(completions, ready, None, args, None)


if __name__ == "__main__":
    main()
