#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario (xxiii): llama-cpp-python's server, a model behind two locks.

A shape the attribution rules were not written for (session 50): the
OpenAI-compatible server of llama-cpp-python, as it is built. Starlette on
uvicorn (one asyncio event loop) validates each request (pure Python; in
llama-cpp-python, pydantic), then takes the model as get_llama_proxy()
does: the outer threading.Lock, then the inner one, each acquire() run in
one of anyio's worker threads (run_in_threadpool), and releases the outer
one in the loop once it holds the inner one. Waiting requests thus block a
worker each, the first on the inner lock, the others on the outer one. The
handler calls the model in a worker (Llama.__call__ returns a generator at
once) and runs its first next() in a worker: the prompt's evaluation (the
prefill, hashlib with the GIL released, as llama.cpp's C calls through
ctypes release it) and the first token's detokenization (Python). It
returns an EventSourceResponse (sse-starlette): a publisher task iterates
the generator in anyio's workers (iterate_in_threadpool: every decode step
runs in whichever worker takes that next()), puts each chunk on an anyio
memory stream (10 deep), checks request.is_disconnected(), and at the end
sends [DONE] and closes the exit stack, which releases the inner lock in
the loop; the response task reads the stream and writes each SSE event.
--interrupt is interrupt_requests=True (the server's default): a stream
ends early (its [DONE] after fewer tokens) when another request waits for
the outer lock; off here, as a server that queues its requests is
configured.
--audit: the server marks itself for `ttftrace record --mark
KIND=python:...` (docs/design.md §4.9): sys.audit("llamacpp.enqueue", rid,
client port) in the loop right after stamping t_enqueue,
sys.audit("llamacpp.admit", rid) in the worker right after stamping t_admit.

Ground truth (--log; CLOCK_MONOTONIC ns, time.monotonic_ns()), as
README.md's columns: port, t_read (body read), t_enqueue (before the outer
lock's acquire is handed to a worker), t_admit (a worker holds the inner
lock), t_first_token_emit / t_last_token_emit (the response task has the
chunk, just before its send), tokens, io_ns (0), status; and t_outer (a
worker holds the outer lock).
"""
import itertools
import os
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (SSE_DONE, auditor, busy_python,  # noqa: E402
                         calibrated_compute, log_row, now, serve_starlette,
                         server_args, sse_event, tokenize, truth_log)


def main():
    ap = server_args(__doc__)
    ap.add_argument("--detok-ms", type=float, default=0.05,
                    help="Python per token in the generator (detokenize, the chunk's dict)")
    ap.add_argument("--interrupt", action="store_true",
                    help="interrupt_requests=True: end a stream when another request waits")
    args = ap.parse_args()
    if not args.log:
        ap.error("--log is needed")

    import anyio
    from starlette.concurrency import iterate_in_threadpool, run_in_threadpool
    from starlette.responses import StreamingResponse

    compute = calibrated_compute()
    outer_lock, inner_lock = threading.Lock(), threading.Lock()
    log = truth_log(args.log, "t_outer")
    audit, request_ids = auditor(args), itertools.count(1)

    def create_completion(want):
        """Llama.create_completion(stream=True): the prompt's evaluation, then
        a decode step before each token after the first."""
        compute(args.prefill_ms)
        for k in range(want):
            if k:
                compute(args.decode_ms)
            busy_python(args.detok_ms)
            yield f"tok{k}"

    def take(lock, stamps, key, mark=None):
        lock.acquire()
        stamps[key] = now()
        if mark:
            audit(mark, stamps["rid"])

    class EventSourceResponse(StreamingResponse):
        """sse-starlette's: the publisher runs beside the response's tasks."""

        def __init__(self, content, publisher):
            super().__init__(content, media_type="text/event-stream")
            self.publisher = publisher

        async def __call__(self, scope, receive, send):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self.publisher)
                await super().__call__(scope, receive, send)

    async def completions(request):
        t_read, want = tokenize(await request.json(), args)
        stamps = {"t_enqueue": now(), "rid": next(request_ids)}
        audit("llamacpp.enqueue", stamps["rid"], request.client.port)
        # get_llama_proxy(): the double lock lets a stream see a waiter
        await run_in_threadpool(take, outer_lock, stamps, "t_outer")
        try:
            await run_in_threadpool(take, inner_lock, stamps, "t_admit",
                                    "llamacpp.admit")
        finally:
            outer_lock.release()
        chunks = await run_in_threadpool(create_completion, want)
        first = await run_in_threadpool(next, chunks)
        send_chan, recv_chan = anyio.create_memory_object_stream(10)

        def iterator():
            yield first
            yield from chunks

        async def publish():
            status = "ok"
            try:
                async with send_chan:
                    async for chunk in iterate_in_threadpool(iterator()):
                        await send_chan.send(chunk)
                        if await request.is_disconnected():
                            status = "disconnected"
                            break
                        # a whole response, fewer tokens: "ok"
                        if args.interrupt and outer_lock.locked():
                            break
                    await send_chan.send(status)
            finally:
                inner_lock.release()

        async def body():
            t_first = t_last = n = 0
            async with recv_chan:
                async for chunk in recv_chan:
                    if not chunk.startswith("tok"):
                        log_row(log, f"{request.client.port},{t_read},"
                                f"{stamps['t_enqueue']},{stamps['t_admit']},"
                                f"{t_first},{t_last},{n},0,{chunk},{stamps['t_outer']}")
                        yield SSE_DONE
                        continue
                    t_last = now()
                    t_first = t_first or t_last
                    n += 1
                    yield sse_event(chunk)

        return EventSourceResponse(body(), publish)

    async def ready():
        return "ready"

    async def idle():
        await anyio.sleep_forever()

    serve_starlette(completions, ready, idle, args, None)


if __name__ == "__main__":
    main()
