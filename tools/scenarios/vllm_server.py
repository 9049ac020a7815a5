#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario (ii): a vLLM V1-shaped two-process server.

API process: starlette on uvicorn (one asyncio event loop). The handler
reads the body, tokenizes (~--tokenize-ms of pure Python, holding the GIL),
sends (id, tokens wanted) over a ZMQ PUSH socket (ipc://) to the EngineCore
child and streams SSE from the request's asyncio.Queue; one output task
receives the engine's outputs (ZMQ PULL) and routes them to each queue.

EngineCore child (this file, --engine): an input thread receives and
unpickles into a queue.Queue; the main thread's busy loop admits waiting
requests into a continuous batch (--batch) and runs steps: a prefill per
newly admitted request and one decode for the running ones, as hashlib
over a large buffer with the GIL released (as a GPU forward releases it);
each step's outputs go through a queue.Queue to an output thread that
sends them back over ZMQ.

Ground truth (--log, written by the API process; CLOCK_MONOTONIC ns from
time.monotonic_ns() in both processes): port, t_read (body read), t_enqueue
(before the ZMQ send), t_admit (engine: taken into the batch, from the
engine's output), t_first_token_emit / t_last_token_emit (API: the SSE
event handed to uvicorn), tokens, io_ns (0), status, t_engine_first (engine:
first token put on its output queue).

--audit: the server marks itself for `ttftrace record --mark
KIND=python:...` (docs/design.md §4.9), the request's id a str as vLLM's
are: sys.audit("vllm.enqueue", "cmpl-N", client_port) right after
stamping t_enqueue (the port says which connection: peer=arg2),
sys.audit("vllm.admit", "cmpl-N") in the engine right after stamping
t_admit (run.sh's vllm-mark).
"""
import argparse
import asyncio
import atexit
import glob
import hashlib
import itertools
import os
import pickle
import queue
import subprocess
import sys
import threading
import time

import zmq

now = time.monotonic_ns


def busy_python(ms):
    """Pure-Python CPU work, holding the GIL."""
    end = now() + int(ms * 1e6)
    x = 0
    while now() < end:
        x = hash((x, 1))
    return x


# ----------------------------------------------------------------- engine

def calibrated_compute():
    """compute(ms): hashlib over a 64 MiB buffer with the GIL released (as a
    GPU forward releases it), its rate measured over 100 ms first."""
    buf = bytes(64 << 20)
    t0, n = now(), 0
    while now() - t0 < 100_000_000:
        hashlib.sha256(memoryview(buf)[:1 << 20]).digest()
        n += 1 << 20
    rate = n * 1_000_000 // (now() - t0)

    def compute(ms):
        left = int(rate * ms)
        while left > 0:
            k = min(left, len(buf), rate * 10)
            hashlib.sha256(memoryview(buf)[:k]).digest()
            left -= k
    return compute


def engine_main(args):
    ctx = zmq.Context()
    inq, outq = queue.Queue(), queue.Queue()
    compute = calibrated_compute()
    audit = auditor(args)

    def input_thread():
        sock = ctx.socket(zmq.PULL)
        sock.connect(args.engine_in)
        while True:
            inq.put(pickle.loads(sock.recv()))

    def output_thread():
        sock = ctx.socket(zmq.PUSH)
        sock.connect(args.engine_out)
        while True:
            sock.send(pickle.dumps(outq.get()))

    threading.Thread(target=input_thread, name="enginecore_in", daemon=True).start()
    threading.Thread(target=output_thread, name="enginecore_out", daemon=True).start()
    # calibrated and connected: the API starts serving (vLLM's READY)
    outq.put("ready")
    running = []        # [rid, wanted, produced, t_admit]
    while True:
        new = []
        if not running:
            new.append(inq.get())
        while len(running) + len(new) < args.batch:
            try:
                new.append(inq.get_nowait())
            except queue.Empty:
                break
        t_admit = now()
        for rid, _ in new:
            audit("vllm.admit", f"cmpl-{rid}")
        new = [[rid, want, 0, t_admit] for rid, want in new]
        compute(args.prefill_ms * len(new) + (args.decode_ms if running else 0))
        outs = []
        for r in running + new:
            r[2] += 1
            outs.append((r[0], r[2], r[3], now(), r[2] >= r[1]))
        outq.put(outs)
        running = [r for r in running + new if r[2] < r[1]]


def locked_generate(lock, compute, args, want, emit, stamps):
    """One model behind lock: held, t_admit stamped, the prefill, then a
    decode step before each token after the first; emit(k) hands token k
    on (the thread-pool and thread-per-request servers)."""
    with lock:
        stamps["t_admit"] = now()
        compute(args.prefill_ms)
        for k in range(want):
            if k:
                compute(args.decode_ms)
            emit(k)


# -------------------------------------------------------------------- API

def tokenize(body, args):
    """t_read (the body is read), then ~--tokenize-ms of Python; and the
    tokens wanted."""
    t_read = now()
    busy_python(args.tokenize_ms)
    return t_read, int(body.get("max_tokens") or args.tokens)


def sse_event(text):
    """One token as the SSE event the scenario servers write."""
    return ('data: {"choices":[{"index":0,"text":"%s"}]}\n\n' % text).encode()


SSE_DONE = b"data: [DONE]\n\n"


async def engine_stream(q, done, log, head):
    """A response's SSE events from the engine's outputs on asyncio.Queue q
    ((idx, t_admit, t_emit, last) each), [DONE] after done(); then its truth
    row: head (port, t_read, t_enqueue), the engine's admission, the first
    and last token's emits, the tokens, and t_engine_first."""
    t_first = t_last = t_admit = t_eng = n = 0
    while True:
        idx, t_admit, t_emit, last = await q.get()
        t_eng = t_eng or t_emit
        t_last = now()
        t_first = t_first or t_last
        n += 1
        yield sse_event(f"tok{idx}")
        if last:
            break
    done()
    yield SSE_DONE
    log_row(log, f"{head},{t_admit},{t_first},{t_last},{n},0,ok,{t_eng}")


def client_port(request):
    """The client's port, the truth's key: a proxy in front names it in
    X-Client-Port (tools/scenarios/proxy_front.sh)."""
    return int(request.headers.get("x-client-port", request.client.port))


class Streams:
    """An API's per-request output queues (an asyncio.Queue each), by the
    request ids it hands out (the in-process engines': trtllm, mlc)."""

    def __init__(self):
        self.queues, self.ids = {}, itertools.count(1)

    def open(self, request, audit, event):
        """A new request's id and queue, its client's port and t_enqueue,
        stamped and marked (sys.audit event) just before the hand-off."""
        rid = next(self.ids)
        q = self.queues[rid] = asyncio.Queue()
        port = client_port(request)
        t_enqueue = now()
        audit(event, rid, port)
        return rid, q, port, t_enqueue

    def put(self, rid, out):
        """In the loop: an engine's output on its request's queue, while
        the request's response is open."""
        q = self.queues.get(rid)
        if q is not None:
            q.put_nowait(out)


def log_row(log, row):
    """One truth row, flushed: the log is read while the server runs on."""
    log.write(row + "\n")
    log.flush()


def ready_or_exit(said, who):
    """A child's first message must say it is ready (vLLM's READY)."""
    if said != "ready":
        sys.exit(f"{who}: the child process said {said!r}, not ready")


def aiohttp_serve(port, completions, on_startup):
    """Serves POST /v1/completions on 127.0.0.1:port with aiohttp, after
    on_startup(app) ran on its loop."""
    from aiohttp import web
    app = web.Application()
    app.on_startup.append(on_startup)
    app.router.add_post("/v1/completions", completions)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


async def aiohttp_done(resp, log, row):
    """Ends an aiohttp SSE answer with [DONE], then logs its truth row."""
    await resp.write(SSE_DONE)
    await resp.write_eof()
    log_row(log, row)
    return resp


def truth_log(path, extra):
    """The ground-truth log (README.md's columns, then extra), header written."""
    log = open(path, "w")
    log.write("port,t_read,t_enqueue,t_admit,t_first_token_emit,t_last_token_emit,"
              f"tokens,io_ns,status,{extra}\n")
    log.flush()
    return log


def ipc_base(name):
    """The ipc:// address prefix of this process's ZMQ sockets: their
    files in /tmp go when it exits (uvicorn and aiohttp end on SIGINT and
    SIGTERM)."""
    path = f"/tmp/ttft-{name}-{os.getpid()}"

    def remove():
        for f in glob.glob(path + "-*"):
            os.unlink(f)

    atexit.register(remove)
    return "ipc://" + path


def api_main(args):
    import zmq.asyncio
    from starlette.responses import StreamingResponse

    audit = auditor(args)
    base = ipc_base("vllm")
    ctx = zmq.asyncio.Context()
    to_engine = ctx.socket(zmq.PUSH)
    to_engine.bind(base + "-in")
    from_engine = ctx.socket(zmq.PULL)
    from_engine.bind(base + "-out")
    streams = {}
    log = truth_log(args.log, "t_engine_first")
    next_id = [0]

    async def output_handler():
        while True:
            for rid, idx, t_admit, t_emit, last in pickle.loads(await from_engine.recv()):
                q = streams.get(rid)
                if q is not None:
                    q.put_nowait((idx, t_admit, t_emit, last))

    async def completions(request):
        t_read, want = tokenize(await request.json(), args)
        rid = next_id[0] = next_id[0] + 1
        q = streams[rid] = asyncio.Queue()
        port = client_port(request)
        t_enqueue = now()
        audit("vllm.enqueue", f"cmpl-{rid}", port)
        await to_engine.send(pickle.dumps((rid, want)))

        return StreamingResponse(engine_stream(q, lambda: streams.pop(rid), log,
                                               f"{port},{t_read},{t_enqueue}"),
                                 media_type="text/event-stream")

    async def engine_ready():
        return pickle.loads(await from_engine.recv())

    engine = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--engine",
                               "--engine-in", base + "-in", "--engine-out", base + "-out",
                               "--batch", str(args.batch),
                               "--prefill-ms", str(args.prefill_ms),
                               "--decode-ms", str(args.decode_ms)]
                              + (["--audit"] if args.audit else []))
    serve_starlette(completions, engine_ready, output_handler, args, engine)


def serve_starlette(completions, ready, task, args, child):
    """POST /v1/completions on starlette and uvicorn; it listens once ready()
    said the child process is up (vLLM's READY), and task() runs beside
    (None for none); the child (None for none) ends with it. With --uvloop, uvicorn runs as vLLM's does with
    its dependencies installed: uvloop's loop (libuv) and httptools' parser;
    otherwise asyncio's own loop and h11."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Route

    async def startup():
        ready_or_exit(await ready(), sys.argv[0])
        if task:
            asyncio.get_running_loop().create_task(task())

    app = Starlette(routes=[Route("/v1/completions", completions, methods=["POST"])],
                    on_startup=[startup])
    cert, key = args.tls.split(",", 1) if getattr(args, "tls", None) else (None, None)
    try:
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning",
                    loop="uvloop" if args.uvloop else "asyncio",
                    http="httptools" if args.uvloop else "h11",
                    ssl_certfile=cert, ssl_keyfile=key)
    finally:
        if child:
            child.terminate()


def engine_args(doc):
    """The engine's options (the scenario servers', a gRPC backend's)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=8)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--prefill-ms", type=float, default=10)
    ap.add_argument("--decode-ms", type=float, default=2)
    ap.add_argument("--tokenize-ms", type=float, default=1)
    return ap


def server_args(doc):
    """The options of the ZMQ-split servers (this one, sglang_server.py)."""
    ap = engine_args(doc)
    ap.add_argument("-p", "--port", type=int, default=8000)
    ap.add_argument("--log")
    ap.add_argument("--uvloop", action="store_true",
                    help="uvicorn on uvloop and httptools (starlette servers)")
    ap.add_argument("--audit", action="store_true",
                    help="mark the hand-off and the admission with sys.audit")
    ap.add_argument("--tls", metavar="CERT,KEY",
                    help="HTTPS, as vLLM's --ssl-certfile and --ssl-keyfile")
    return ap


def no_audit(*_):
    pass


def auditor(args):
    """sys.audit with --audit (ttftrace's Python markers), else nothing."""
    return sys.audit if args.audit else no_audit


def main():
    ap = server_args(__doc__)
    ap.add_argument("--engine", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--engine-in", help=argparse.SUPPRESS)
    ap.add_argument("--engine-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.engine:
        engine_main(args)
    elif not args.log:
        ap.error("--log is needed")
    else:
        api_main(args)


if __name__ == "__main__":
    main()
