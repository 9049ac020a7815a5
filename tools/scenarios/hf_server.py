#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario (xxii): a thread per request, Hugging Face's TextIteratorStreamer.

A shape the attribution rules were not written for (session 49), the one of
most model demos and of text-generation-webui's OpenAI API: starlette on
uvicorn (one asyncio event loop) reads and "tokenizes" each request (pure
Python), makes a TextIteratorStreamer (a queue.Queue) and starts a new
threading.Thread running model.generate(streamer=...). The model is behind
one threading.Lock (text-generation-webui's generation_lock): the generate
threads queue on it. Holding it, a thread runs the prefill and the decode
steps (hashlib over a large buffer with the GIL released, as a GPU forward
releases it) and puts each token's text on the streamer (a little Python
with the GIL: the tokenizer's decode). The response is a StreamingResponse
of the streamer, a plain iterator, so starlette runs each next() in anyio's
worker threads (iterate_in_threadpool): a worker blocks in the queue's
get(), and hands the text back to the loop, which writes it as an SSE event.

Ground truth (--log; CLOCK_MONOTONIC ns, time.monotonic_ns()), as
README.md's columns: port, t_read (body read), t_enqueue (before the
thread's start()), t_admit (the generate thread holds the model lock),
t_first_token_emit / t_last_token_emit (the loop has the text, just before
starlette sends it), tokens, io_ns (0), status; and t_thread (the generate
thread began to run).
"""
import asyncio
import os
import queue
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (SSE_DONE, busy_python, calibrated_compute,  # noqa: E402
                         locked_generate, log_row, now, serve_starlette,
                         server_args, sse_event, tokenize, truth_log)


class TextIteratorStreamer:
    """transformers' TextIteratorStreamer: generate() puts each token's text
    on a queue.Queue; iterating blocks in its get() until the stop signal."""

    def __init__(self, detok_ms):
        self.text_queue = queue.Queue()
        self.detok_ms = detok_ms

    def put(self, k):
        busy_python(self.detok_ms)     # the tokenizer's decode, with the GIL
        self.text_queue.put(f"tok{k}")

    def end(self):
        self.text_queue.put(None)

    def __iter__(self):
        return self

    def __next__(self):
        value = self.text_queue.get()
        if value is None:
            raise StopIteration()
        return value


def main():
    ap = server_args(__doc__)
    ap.add_argument("--detok-ms", type=float, default=0.05,
                    help="Python per token in the streamer's put")
    args = ap.parse_args()
    if not args.log:
        ap.error("--log is needed")
    from starlette.concurrency import iterate_in_threadpool
    from starlette.responses import StreamingResponse

    compute = calibrated_compute()
    generation_lock = threading.Lock()
    log = truth_log(args.log, "t_thread")

    def generate(streamer, want, stamps):
        """model.generate(streamer=...) in its own thread, under the lock."""
        stamps["t_thread"] = now()
        try:
            locked_generate(generation_lock, compute, args, want, streamer.put, stamps)
        finally:
            streamer.end()

    async def completions(request):
        t_read, want = tokenize(await request.json(), args)
        port = request.client.port
        streamer = TextIteratorStreamer(args.detok_ms)
        stamps = {}
        t_enqueue = now()
        threading.Thread(target=generate, args=(streamer, want, stamps),
                         name="generate", daemon=True).start()

        async def stream():
            # what StreamingResponse does with a plain iterator, stamped
            t_first = t_last = n = 0
            async for text in iterate_in_threadpool(streamer):
                t_last = now()
                t_first = t_first or t_last
                n += 1
                yield sse_event(text)
            log_row(log, f"{port},{t_read},{t_enqueue},{stamps.get('t_admit', 0)},"
                    f"{t_first},{t_last},{n},0,ok,{stamps['t_thread']}")
            yield SSE_DONE

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def ready():
        return "ready"

    async def idle():
        await asyncio.Event().wait()

    serve_starlette(completions, ready, idle, args, None)


if __name__ == "__main__":
    main()
