#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A CPU-bound Python SSE server for bench/overhead.sh (SERVER=python).

An ASGI app under uvicorn (h11, one process, one event loop), as a small
Python inference front-end would be written: POST /v1/completions with
stream=true answers an OpenAI-style SSE stream of max_tokens tokens
(--tokens when the request says none), each token costing --work-us of
pure-Python work on the event loop, then "data: [DONE]". Nothing else of
the project is in it: the throughput it keeps under a tracer is what a
user's own CPU-bound server would keep.

  py_sse_server.py --port-file FILE [--port N] [--tokens N] [--work-us N]
"""
import argparse
import json
import os
import socket
import time

import uvicorn


def burn(us):
    """Pure-Python work for about us microseconds (the GIL held)."""
    end = time.perf_counter() + us / 1e6
    x = 0
    while time.perf_counter() < end:
        for i in range(50):
            x += i * i
    return x


def make_app(args):
    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        body = b""
        while True:
            m = await receive()
            body += m.get("body", b"")
            if not m.get("more_body"):
                break
        if scope["path"] != "/v1/completions":
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            req = {}
        n = int(req.get("max_tokens") or args.tokens)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"),
                                (b"cache-control", b"no-cache")]})
        for i in range(n):
            burn(args.work_us)
            ev = {"choices": [{"index": 0, "text": f" tok{i}"}]}
            await send({"type": "http.response.body",
                        "body": b"data: " + json.dumps(ev).encode() +
                        b"\n\n", "more_body": True})
        await send({"type": "http.response.body",
                    "body": b"data: [DONE]\n\n", "more_body": False})
    return app


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--work-us", type=int, default=20)
    args = ap.parse_args()
    # bound here, so that the port is known before serving (port 0)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted sockets inherit it: each token leaves when sent, as
    # streaming servers set it (uvicorn 0.17 does not)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(2048)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(f"{sock.getsockname()[1]}\n")
        os.rename(args.port_file + ".tmp", args.port_file)
    config = uvicorn.Config(make_app(args), log_level="warning",
                            access_log=False, http="h11", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])

if __name__ == "__main__":
    main()
