#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario (x): a LitServe-shaped server, multiprocessing queues between processes.

A shape the attribution rules were not written for. API process: starlette on
uvicorn (one asyncio event loop). The handler reads the body, tokenizes
(~--tokenize-ms of pure Python), puts (uid, tokens wanted) on a
multiprocessing.Queue (the put appends to a buffer and notifies the queue's
feeder thread, which pickles it into a pipe under a process-shared semaphore)
and streams SSE from the request's deque and asyncio.Event. One task takes the
responses: it runs the response queue's blocking get() in a thread pool
(loop.run_in_executor, as LitServe's response_queue_to_buffer does), appends
each to its request's deque and sets its event.

Inference worker (this file, spawned by multiprocessing as LitServe's
inference_worker): collates a batch as LitServe's collate_requests does (a
blocking get() for the first request, then get(timeout) until the batch has
--batch requests or --batch-timeout-ms has passed since the first), then runs
it to the end: a prefill of the batch, then decode steps, each token of each
request put on the response queue (its own feeder thread and pipe). Static
batching: a request that comes while a batch runs waits for its end. Compute
is hashlib over a large buffer with the GIL released, as a GPU forward
releases it.

Ground truth (--log, written by the API process; CLOCK_MONOTONIC ns from
time.monotonic_ns() in both processes): port, t_read (body read), t_enqueue
(before the put), t_admit (the worker starts its batch's prefill: collated,
the batch timeout waited out), t_first_token_emit / t_last_token_emit (the
SSE event handed to uvicorn), tokens, io_ns (0), status, t_collect (the
worker's get() returned it), t_engine_first (the worker's put of its first
token).
"""
import asyncio
import multiprocessing as mp
import os
import queue
import sys
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (SSE_DONE, calibrated_compute, log_row,  # noqa: E402
                         serve_starlette, server_args, sse_event, tokenize, truth_log)

now = time.monotonic_ns


def collate(requests, batch, timeout_ns):
    """LitServe's collate_requests: a blocking get() for the first, then
    get(timeout) until the batch is full or the timeout has passed."""
    first = requests.get()
    got = [first + (now(),)]
    deadline = now() + timeout_ns
    while len(got) < batch:
        left = deadline - now()
        if left <= 0:
            break
        try:
            got.append(requests.get(timeout=left / 1e9) + (now(),))
        except queue.Empty:
            break
    return got


def inference_worker(requests, responses, args):
    compute = calibrated_compute()
    responses.put("ready")
    timeout_ns = int(args.batch_timeout_ms * 1e6)
    while True:
        batch = collate(requests, args.batch, timeout_ns)
        t_admit = now()
        compute(args.prefill_ms * len(batch))
        want = max(w for _, w, _ in batch)
        for k in range(want):
            if k:
                compute(args.decode_ms)
            for uid, w, t_collect in batch:
                if k < w:
                    responses.put((uid, k + 1, k + 1 == w, t_admit, t_collect, now()))


def api_main(args):
    from starlette.responses import StreamingResponse

    ctx = mp.get_context("spawn")
    requests, responses = ctx.Queue(), ctx.Queue()
    worker = ctx.Process(target=inference_worker, args=(requests, responses, args),
                         name="inference_worker", daemon=True)
    worker.start()
    streams = {}        # uid: (deque, asyncio.Event)
    log = truth_log(args.log, "t_collect,t_engine_first")
    next_uid = [0]
    getter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="response_queue")

    async def response_queue_to_buffer():
        loop = asyncio.get_running_loop()
        while True:
            uid, *payload = await loop.run_in_executor(getter, responses.get)
            buf, event = streams[uid]
            buf.append(payload)
            event.set()

    async def completions(request):
        t_read, want = tokenize(await request.json(), args)
        uid = next_uid[0] = next_uid[0] + 1
        buf, event = streams[uid] = (deque(), asyncio.Event())
        t_enqueue = now()
        requests.put((uid, want))
        port = request.client.port

        async def gen():
            t_first = t_last = n = 0
            t_admit = t_collect = t_eng = 0
            last = False
            while not last:
                await event.wait()
                while buf and not last:
                    idx, last, t_admit, t_collect, t_emit = buf.popleft()
                    t_eng = t_eng or t_emit
                    t_last = now()
                    t_first = t_first or t_last
                    n += 1
                    yield sse_event(f"tok{idx}")
                event.clear()
            log_row(log, f"{port},{t_read},{t_enqueue},{t_admit},{t_first},{t_last},{n},0,ok,"
                    f"{t_collect},{t_eng}")
            del streams[uid]
            yield SSE_DONE

        return StreamingResponse(gen(), media_type="text/event-stream")

    async def worker_ready():
        return await asyncio.get_running_loop().run_in_executor(getter, responses.get)

    serve_starlette(completions, worker_ready, response_queue_to_buffer, args, worker)


def main():
    ap = server_args(__doc__)
    ap.set_defaults(batch=4)
    ap.add_argument("--batch-timeout-ms", type=float, default=5)
    args = ap.parse_args()
    if not args.log:
        ap.error("--log is needed")
    api_main(args)


if __name__ == "__main__":
    main()
