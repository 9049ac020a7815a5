#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario (xxvi)'s backend: a LocalAI Python backend, a gRPC server.

LocalAI starts one backend process per model (--addr 127.0.0.1:PORT) and
calls it over gRPC. Its vLLM backend (backend/python/vllm/backend.py) is a
grpc.aio server (gRPC's C core polling the sockets, the servicer's
coroutines on one asyncio loop) whose PredictStream renders and tokenizes
the prompt (--tokenize-ms of Python) and iterates vLLM V0's
AsyncLLMEngine.generate(): the engine a task of the same loop
(v0_server.AsyncEngine: new requests on an asyncio.Queue, each step's
forward in a one-thread executor, the GIL released). Each token goes back
as one Reply message.

--sync serves it as LocalAI's transformers backend does
(backend/python/transformers/backend.py): a synchronous grpc.server whose
thread pool (--workers, PYTHON_GRPC_MAX_WORKERS) runs each PredictStream,
which tokenizes, starts model.generate() in a thread of its own with a
TextIteratorStreamer, the model behind one lock (hf_server.Generation),
and yields each text the streamer gives. t_enqueue is the thread's start,
t_admit the lock held.

No protobuf here: the messages are raw bytes (the generic handler has no
serializers). The request is JSON ({"tokens": N}); the first reply carries
the backend's stamps for the front's truth log, "t_enqueue,t_admit,t_yield
tok1" (CLOCK_MONOTONIC ns), the others "tokN".
"""
import asyncio
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from v0_server import AsyncEngine  # noqa: E402
from vllm_server import (busy_python, calibrated_compute, engine_args,  # noqa: E402
                         no_audit, now)

SERVICE = "backend.Backend"


async def serve(args):
    import grpc

    engine = AsyncEngine(args, calibrated_compute(), no_audit, "localai.admit")
    rids = iter(range(1, 1 << 62))

    async def predict_stream(request, _context):
        want = int(json.loads(request).get("tokens") or args.tokens)
        busy_python(args.tokenize_ms)
        rid = next(rids)
        t_enqueue = now()
        stream = engine.add(rid, want)
        _, t_admit, _ = await stream.get()
        done = False
        while not done:
            _, idx, done = await stream.get()
            if idx == 1:
                yield f"{t_enqueue},{t_admit},{now()} tok1".encode()
            else:
                yield f"tok{idx}".encode()

    # LocalAI's backends: a thread pool of PYTHON_GRPC_MAX_WORKERS (1)
    server = grpc.aio.server(migration_thread_pool=ThreadPoolExecutor(max_workers=1))
    server.add_generic_rpc_handlers((handlers(grpc, predict_stream),))
    if not server.add_insecure_port(args.addr):
        sys.exit(f"localai_backend: cannot listen on {args.addr}")
    await server.start()
    asyncio.get_running_loop().create_task(engine.run())
    await server.wait_for_termination()


def handlers(grpc, predict_stream):
    """The Backend service's Health and PredictStream, raw bytes each way."""
    def health(_request, _context):
        return b"OK"

    return grpc.method_handlers_generic_handler(SERVICE, {
        "Health": grpc.unary_unary_rpc_method_handler(health),
        "PredictStream": grpc.unary_stream_rpc_method_handler(predict_stream),
    })


def serve_sync(args):
    import grpc
    from hf_server import Generation, model_generate

    generate = model_generate(args)

    def predict_stream(request, _context):
        want = int(json.loads(request).get("tokens") or args.tokens)
        busy_python(args.tokenize_ms)
        gen = Generation(generate, None, 0, 0, want, args.detok_ms)
        for k, text in enumerate(gen.streamer):
            if not k:
                text = f"{gen.t_enqueue},{gen.stamps['t_admit']},{now()} {text}"
            yield text.encode()

    server = grpc.server(ThreadPoolExecutor(max_workers=args.workers))
    server.add_generic_rpc_handlers((handlers(grpc, predict_stream),))
    if not server.add_insecure_port(args.addr):
        sys.exit(f"localai_backend: cannot listen on {args.addr}")
    server.start()
    server.wait_for_termination()


def main():
    ap = engine_args(__doc__)
    ap.add_argument("--addr", required=True, help="host:port to listen on")
    ap.add_argument("--batch-wait-ms", type=float, default=0)
    ap.add_argument("--sync", action="store_true",
                    help="the transformers backend's synchronous server")
    ap.add_argument("--workers", type=int, default=8,
                    help="--sync: the server's threads (PYTHON_GRPC_MAX_WORKERS)")
    ap.add_argument("--detok-ms", type=float, default=0.05,
                    help="--sync: Python per token in the streamer's put")
    args = ap.parse_args()
    try:
        if args.sync:
            serve_sync(args)
        else:
            asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
