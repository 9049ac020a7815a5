#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario: vLLM V0's AsyncLLMEngine: the engine loop in the API's event loop.

Written after the rules, to judge them on a shape they were not written
for (session 42). Before V1 split the engine into its own process, vLLM
ran it as an asyncio task of the API server's one event loop
(AsyncLLMEngine's run_engine_loop): a handler tokenizes, adds the request
to the engine's queue of new requests (an asyncio.Queue: no thread is
woken) and sets the loop's has-work event; the engine task, between steps,
takes new requests into the running batch (up to --batch), hands the
model's forward to a worker thread (make_async: run_in_executor, the GIL
released as a GPU forward releases it), and when it returns, puts each
running request's token on that request's stream (an asyncio.Queue) and
yields to the loop before the next step. Starlette on uvicorn (asyncio's
loop and h11, or uvloop and httptools with --uvloop).

Ground truth (--log; CLOCK_MONOTONIC ns), README.md's columns: port,
t_read, t_enqueue (the put on the new-request queue), t_admit (the step
that took the request started: just before its forward was handed to the
worker), t_first_token_emit / t_last_token_emit (just before the SSE
event is yielded), tokens, io_ns (0), status, then batch (how many that
step took).

--batch-wait-ms MS: a dynamic batcher's delay in the event loop, as Ray
Serve's @serve.batch (batch_wait_timeout_s) or a Triton-like
max_queue_delay: an engine with nothing running that finds new requests
waits on the loop's timer (asyncio.wait_for on the has-work event) until
--batch are queued or MS have passed since it found the first, then
admits them (run.sh's v0-delay). t_admit is after that wait.

--audit: the server marks itself for `ttftrace record --mark
KIND=python:...` (docs/design.md §4.9): sys.audit("v0.put", rid) right
after stamping t_enqueue, sys.audit("v0.admit", rid) right after stamping
t_admit, both in the loop's thread (run.sh's v0-mark).
"""
import asyncio
import os
import sys
import types
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (SSE_DONE, auditor, calibrated_compute, log_row,  # noqa: E402
                         now, serve_starlette, server_args, sse_event, tokenize,
                         truth_log)


class AsyncEngine:
    """AsyncLLMEngine's loop as a task of the loop it runs on: new requests
    on an asyncio.Queue (nobody is woken), the has-work event set; each
    step's forward in a one-thread executor. Each request's stream gets
    ("admit", t_admit, batch), then ("token", idx, last) per token."""

    def __init__(self, args, compute, audit, admit_event):
        self.args, self.compute, self.audit = args, compute, audit
        self.admit_event = admit_event  # audit's event at each admission
        self.worker = ThreadPoolExecutor(1, thread_name_prefix="model")
        self.new = asyncio.Queue()      # AsyncLLMEngine's _new_requests
        self.has_work = asyncio.Event()

    def add(self, rid, want):
        """In the loop: a request put (its t_enqueue just stamped); its stream."""
        stream = asyncio.Queue()
        self.new.put_nowait([stream, want, 0, rid])
        self.has_work.set()
        return stream

    async def fill_batch(self, loop):
        # idle, the batcher waits for a full batch on the loop's timer
        args, new, has_work = self.args, self.new, self.has_work
        deadline = loop.time() + args.batch_wait_ms / 1000
        while new.qsize() < args.batch and loop.time() < deadline:
            has_work.clear()
            try:
                await asyncio.wait_for(has_work.wait(), deadline - loop.time())
            except asyncio.TimeoutError:
                break

    async def run(self):
        args, new, has_work = self.args, self.new, self.has_work
        loop = asyncio.get_running_loop()
        running = []            # [stream, want, made, rid]
        while True:
            if not running and new.empty():
                await has_work.wait()
                has_work.clear()
            if not running and args.batch_wait_ms:
                await self.fill_batch(loop)
            took = []
            while len(running) + len(took) < args.batch and not new.empty():
                took.append(new.get_nowait())
            t_admit = now()
            for r in took:
                self.audit(self.admit_event, r[3])
                r[0].put_nowait(("admit", t_admit, len(took)))
            await loop.run_in_executor(self.worker, self.compute,
                                       args.prefill_ms * len(took) +
                                       (args.decode_ms if running else 0))
            for r in running + took:
                r[2] += 1
                r[0].put_nowait(("token", r[2], r[2] >= r[1]))
            running = [r for r in running + took if r[2] < r[1]]
            await asyncio.sleep(0)


def main():
    ap = server_args(__doc__)
    ap.add_argument("--batch-wait-ms", type=float, default=0)
    args = ap.parse_args()
    if not args.log:
        sys.exit("v0_server: --log is needed")
    from starlette.responses import StreamingResponse

    audit = auditor(args)
    engine = AsyncEngine(args, calibrated_compute(), audit, "v0.admit")
    rids = iter(range(1, 1 << 62))
    log = truth_log(args.log, "batch")

    async def completions(request):
        t_read, want = tokenize(await request.json(), args)
        port = request.client.port
        rid = next(rids)
        t_enqueue = now()
        audit("v0.put", rid)
        stream = engine.add(rid, want)

        async def gen():
            _, t_admit, batch = await stream.get()
            t_first = t_last = n = 0
            done = False
            while not done:
                _, idx, done = await stream.get()
                t_last = now()
                t_first = t_first or t_last
                n += 1
                yield sse_event(f"tok{idx}")
            yield SSE_DONE
            log_row(log, f"{port},{t_read},{t_enqueue},{t_admit},{t_first},{t_last},{n},0,ok,"
                    f"{batch}")

        return StreamingResponse(gen(), media_type="text/event-stream")

    async def ready():
        return "ready"

    serve_starlette(completions, ready, engine.run, args,
                    types.SimpleNamespace(terminate=lambda: engine.worker.shutdown(wait=False)))


if __name__ == "__main__":
    main()
