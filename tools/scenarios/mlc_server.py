#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario (xxv): MLC LLM's OpenAI server over its native threaded engine.

A shape the attribution rules were not written for (session 52): mlc_llm
serve, whose AsyncMLCEngine drives a C++ ThreadedEngine (mlc_engine.c,
loaded with ctypes as TVM's FFI loads the engine). Starlette on uvicorn
(FastAPI's place) validates each request in Python (--validate-ms,
pydantic's place) and tokenizes it natively (--tokenize-ms, the GIL
released as TVM's FFI releases it), then add_request() hands it to the
engine: an instruction under a mutex, its condition variable notified only
when the engine waits. Two Python threads run the engine's background loop
and its stream-back loop inside ctypes calls, without the GIL; the engine's
steps prefill waiting requests or decode the running ones; the stream-back
loop calls back into Python (ctypes takes the GIL) with each batch of
outputs, and the callback hands them to the event loop in one
call_soon_threadsafe, which puts each on its request's asyncio.Queue. As
MLC's request_completion does, the handler takes the first output before it
returns its StreamingResponse (`first_response = await
anext(stream_generator)`): the headers leave with the first token.
With --audit it calls sys.audit("mlc.enqueue", rid, client port) before
add_request() and the engine calls mlc_mark_admit(rid) as it admits one:
the markers of run.sh's mlc-mark (`ttftrace record --mark`, docs/design.md
§4.9).

Ground truth (--log; CLOCK_MONOTONIC ns), as README.md's columns: port,
t_read (body read), t_enqueue (before add_request()), t_admit (the start of
the engine's step that prefilled it), t_first_token_emit /
t_last_token_emit (the response's stream has the token, before its send:
the first one after the handler took it and returned), tokens,
io_ns (0), status; and t_engine_first (the step that made the first token
ended).
"""
import asyncio
import ctypes
import os
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (Streams, auditor, busy_python,  # noqa: E402
                         engine_stream, now, serve_starlette, server_args,
                         truth_log)


class Output(ctypes.Structure):
    """mlc_engine.c's struct mlc_output."""
    _fields_ = [("id", ctypes.c_int64), ("index", ctypes.c_int32),
                ("last", ctypes.c_int32), ("t_admit", ctypes.c_uint64),
                ("t_emit", ctypes.c_uint64)]


StreamCallback = ctypes.CFUNCTYPE(None, ctypes.POINTER(Output), ctypes.c_int32)


class Prefetched:
    """An output queue whose first output the handler took already: the
    response's stream (and its truth, stamped before each send) starts
    with it."""

    def __init__(self, q, first):
        self.q, self.first = q, [first]

    async def get(self):
        return self.first.pop() if self.first else await self.q.get()


def load_engine(args, on_outputs):
    """The engine library, initialised; on_outputs(list) gets each batch of
    outputs as (rid, (index, t_admit, t_emit, last)) in the stream-back
    thread."""
    lib = ctypes.CDLL(args.engine_lib)
    lib.mlc_engine_init.argtypes = [ctypes.c_int32, ctypes.c_double, ctypes.c_double,
                                    ctypes.c_int32, StreamCallback]
    lib.mlc_tokenize.argtypes = [ctypes.c_double]
    lib.mlc_add_request.argtypes = [ctypes.c_int64, ctypes.c_int32]
    for f in (lib.mlc_tokenize, lib.mlc_add_request, lib.mlc_run_background_loop,
              lib.mlc_run_stream_back_loop):
        f.restype = None

    def callback(outputs, count):
        on_outputs([(o.id, (o.index, o.t_admit, o.t_emit, bool(o.last)))
                    for o in outputs[:count]])

    lib.callback = StreamCallback(callback)    # kept alive with the library
    if lib.mlc_engine_init(args.batch, args.prefill_ms, args.decode_ms,
                           int(args.audit), lib.callback):
        sys.exit("mlc_server.py: bad engine settings")
    return lib


def main():
    ap = server_args(__doc__)
    ap.add_argument("--validate-ms", type=float, default=0.3,
                    help="Python per request before tokenizing (pydantic's)")
    ap.add_argument("--engine-lib", required=True,
                    help="mlc_engine.c built as a shared library")
    args = ap.parse_args()
    if not args.log:
        ap.error("--log is needed")
    from starlette.responses import StreamingResponse

    audit = auditor(args)
    streams = Streams()
    log = truth_log(args.log, "t_engine_first")
    the_loop = []

    def deliver(outputs):
        """In the loop: each output on its request's queue."""
        for rid, out in outputs:
            streams.put(rid, out)

    def on_outputs(outputs):
        """The stream-back thread, holding the GIL: one hand-off to the loop."""
        the_loop[0].call_soon_threadsafe(deliver, outputs)

    engine = load_engine(args, on_outputs)

    async def completions(request):
        body = await request.json()
        t_read = now()
        busy_python(args.validate_ms)
        engine.mlc_tokenize(args.tokenize_ms)
        want = int(body.get("max_tokens") or args.tokens)
        rid, q, port, t_enqueue = streams.open(request, audit, "mlc.enqueue")
        engine.mlc_add_request(rid, want)
        first = await q.get()
        return StreamingResponse(engine_stream(Prefetched(q, first),
                                               lambda: streams.queues.pop(rid),
                                               log, f"{port},{t_read},{t_enqueue}"),
                                 media_type="text/event-stream")

    async def ready():
        the_loop.append(asyncio.get_running_loop())
        for name in ("run_background_loop", "run_stream_back_loop"):
            threading.Thread(target=getattr(engine, "mlc_" + name), name=name,
                             daemon=True).start()
        return "ready"

    serve_starlette(completions, ready, None, args, None)


if __name__ == "__main__":
    main()
