#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario: a Python gateway in front of a runner, one asyncio event loop.

A shape written after the hop rules (docs/design.md §4.11), to judge them on
a gateway unlike the Go one they were found on: LiteLLM's proxy, a FastAPI
router or an OpenAI-compatible front in front of llama.cpp's server. It
spawns llama_server.c (--runner) on a free loopback port; aiohttp's web
server reads each request, renders the prompt (--prep-ms of Python), and
streams it through aiohttp's client (one keep-alive connection pool) to the
runner, writing each SSE event it reads back to the client. One event loop
thread serves every request and every upstream connection: its epoll wakes
for the runner's tokens of any request.

Ground truth (--log; CLOCK_MONOTONIC ns), as ollama_proxy.go's: port,
t_read, upstream_port (the local port of the connection to the runner),
t_forward (before the POST), t_first_token_emit / t_last_token_emit (just
before the write to the client), tokens, status. The runner logs its own
rows (--runner-log); compare.py --hops joins them.
"""
import argparse
import os
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import SSE_DONE, busy_python, log_row, now, sse_event  # noqa: E402


def free_port():
    """A loopback port the runner can listen on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_runner(args):
    """The runner, listening on a free port: (process, its URL)."""
    port = free_port()
    cmd = [args.runner, "-p", str(port), "--http-threads", str(args.runner_threads)]
    if args.runner_log:
        cmd += ["--log", args.runner_log]
    proc = subprocess.Popen(cmd)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}/completion"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit(f"gateway_server: the runner did not listen on {port}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-p", "--port", type=int, default=8000)
    ap.add_argument("--log", required=True)
    ap.add_argument("--runner", required=True, help="the runner's binary (llama_server)")
    ap.add_argument("--runner-log")
    ap.add_argument("--runner-threads", type=int, default=8,
                    help="the runner's HTTP threads: one per connection the client opens")
    ap.add_argument("--prep-ms", type=float, default=0.5)
    args = ap.parse_args()
    from aiohttp import ClientSession, TCPConnector, web

    runner, url = start_runner(args)
    log = open(args.log, "w")
    log_row(log, "port,t_read,upstream_port,t_forward,t_first_token_emit,"
            "t_last_token_emit,tokens,status")

    async def completions(request):
        body = await request.read()
        t_read = now()
        busy_python(args.prep_ms)
        port = request.transport.get_extra_info("peername")[1]
        t_forward = now()
        t_first = t_last = n = 0
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        async with request.app["upstream"].post(
                url, data=body, headers={"Content-Type": "application/json"}) as up:
            up_port = up.connection.transport.get_extra_info("sockname")[1]
            await resp.prepare(request)
            async for line in up.content:
                if not line.startswith(b"data: ") or line.strip() == b"data: [DONE]":
                    continue
                t_last = now()
                t_first = t_first or t_last
                n += 1
                await resp.write(sse_event(f"tok{n}"))
        await resp.write(SSE_DONE)
        await resp.write_eof()
        log_row(log, f"{port},{t_read},{up_port},{t_forward},{t_first},{t_last},{n},ok")
        return resp

    async def open_upstream(app):
        app["upstream"] = ClientSession(connector=TCPConnector(limit=64))

    async def close_upstream(app):
        await app["upstream"].close()

    app = web.Application()
    app.router.add_post("/v1/completions", completions)
    app.on_startup.append(open_upstream)
    app.on_cleanup.append(close_upstream)
    try:
        web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)
    finally:
        runner.terminate()
        runner.wait()


if __name__ == "__main__":
    main()
