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

--threaded serves it as Flask's or Werkzeug's threaded server does (Gradio
and Flask demos): a thread per connection (http.server's
ThreadingHTTPServer) whose handler iterates the streamer itself and writes
chunked SSE, no event loop and no relay.

Ground truth (--log; CLOCK_MONOTONIC ns, time.monotonic_ns()), as
README.md's columns: port, t_read (body read), t_enqueue (before the
thread's start()), t_admit (the generate thread holds the model lock),
t_first_token_emit / t_last_token_emit (the loop, or the handler, has the
text, just before it is sent), tokens, io_ns (0), status; and t_thread (the
generate thread began to run).
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


class Generation:
    """One request's generate() thread, started at t_enqueue: its sender
    reads the streamer, calls emitted() just before each token's send, and
    row() logs the truth row at the end."""

    def __init__(self, run, log, port, t_read, want, detok_ms):
        self.streamer = TextIteratorStreamer(detok_ms)
        self.stamps, self.log, self.port, self.t_read = {}, log, port, t_read
        self.t_first = self.t_last = self.n = 0
        self.t_enqueue = now()
        threading.Thread(target=run, args=(self.streamer, want, self.stamps),
                         name="generate", daemon=True).start()

    def emitted(self):
        self.t_last = now()
        self.t_first = self.t_first or self.t_last
        self.n += 1

    def row(self):
        log_row(self.log, f"{self.port},{self.t_read},{self.t_enqueue},"
                f"{self.stamps.get('t_admit', 0)},{self.t_first},{self.t_last},"
                f"{self.n},0,ok,{self.stamps['t_thread']}")


def model_generate(args):
    """generate(streamer, want, stamps): model.generate(streamer=...) run
    in its own thread, the model (its compute calibrated here) behind one
    lock (text-generation-webui's generation_lock)."""
    compute = calibrated_compute()
    generation_lock = threading.Lock()

    def generate(streamer, want, stamps):
        stamps["t_thread"] = now()
        try:
            locked_generate(generation_lock, compute, args, want, streamer.put, stamps)
        finally:
            streamer.end()
    return generate


def serve_threaded(args, begin):
    """Flask's or Werkzeug's threaded server, as many demos run it: a thread
    per connection (http.server.ThreadingHTTPServer), whose handler reads
    the streamer itself (a stream_with_context generator), chunked SSE."""
    import http.server
    import json

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *a):
            pass

        def send_chunk(self, data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            gen = begin(self.client_address[1], *tokenize(json.loads(body), args))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for text in gen.streamer:
                gen.emitted()
                self.send_chunk(sse_event(text))
            self.send_chunk(SSE_DONE)
            self.wfile.write(b"0\r\n\r\n")
            gen.row()

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    srv.serve_forever()


def main():
    ap = server_args(__doc__)
    ap.add_argument("--detok-ms", type=float, default=0.05,
                    help="Python per token in the streamer's put")
    ap.add_argument("--threaded", action="store_true",
                    help="a thread per connection (Flask's threaded server), "
                    "not starlette")
    args = ap.parse_args()
    if not args.log:
        ap.error("--log is needed")

    generate = model_generate(args)
    log = LockedLog(truth_log(args.log, "t_thread"), threading.Lock())

    def begin(port, t_read, want):
        return Generation(generate, log, port, t_read, want, args.detok_ms)

    if args.threaded:
        serve_threaded(args, begin)
        return
    from starlette.concurrency import iterate_in_threadpool
    from starlette.responses import StreamingResponse

    async def completions(request):
        gen = begin(request.client.port, *tokenize(await request.json(), args))

        async def stream():
            # what StreamingResponse does with a plain iterator, stamped
            async for text in iterate_in_threadpool(gen.streamer):
                gen.emitted()
                yield sse_event(text)
            gen.row()
            yield SSE_DONE

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def ready():
        return "ready"

    async def idle():
        await asyncio.Event().wait()

    serve_starlette(completions, ready, idle, args, None)


class LockedLog:
    """The truth log written from many handler threads, a line at a time."""

    def __init__(self, log, lock):
        self.log, self.lock = log, lock

    def write(self, line):
        with self.lock:
            self.log.write(line)

    def flush(self):
        with self.lock:
            self.log.flush()


if __name__ == "__main__":
    main()
