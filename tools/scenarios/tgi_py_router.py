#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario: TGI's router on one asyncio loop, calling its model shard.

tgi_router.go's shape with the router in Python (written after the call
rule, to judge it on a router it was not measured on: session 43): an
aiohttp API whose handlers read and "tokenize" each request (~1 ms of
Python) and append it to the router's queue (a deque and an asyncio.Event:
nobody is woken, the loop is the router's one thread); one batching task
on the same loop takes up to --batch, sends the shard process
(tgi_shard.py, spawned here) a prefill call for the new ones and, when
others run, a decode call, one line each way over a unix socket (asyncio
streams), and puts each call's tokens on the requests' asyncio queues,
whose handlers write them as SSE events. The router, the reader of every
request and the caller of the shard are one thread.

Ground truth (--log; CLOCK_MONOTONIC ns), README.md's columns: port,
t_read, t_enqueue (the append), t_admit (the prefill call that took it was
sent), t_first_token_emit / t_last_token_emit (before the write), tokens,
io_ns (0), status, batch (how many that prefill call took).
"""
import asyncio
import collections
import os
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (aiohttp_done, aiohttp_serve, now, server_args, sse_event,  # noqa: E402
                         tokenize, truth_log)

SHARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tgi_shard.py")


class Job:
    """A request in the router: its stream, tokens wanted and made."""

    def __init__(self, want):
        self.want, self.made = want, 0
        self.stream = asyncio.Queue()
        self.t_admit = self.batch = 0


class Router:
    """TGI's queue and batching task, with the shard's connection."""

    def __init__(self, args):
        self.args = args
        self.waiting = collections.deque()
        self.notify = asyncio.Event()
        self.reader = self.writer = None

    def append(self, job):
        self.waiting.append(job)
        self.notify.set()

    async def call(self, kind, n):
        self.writer.write(b"%s %d\n" % (kind, n))
        await self.writer.drain()
        if not await self.reader.readline():
            sys.exit("tgi_py_router: the shard closed its socket")

    @staticmethod
    def emit(jobs):
        """One token to each job; those still running."""
        for j in jobs:
            j.made += 1
            j.stream.put_nowait(j.made >= j.want)
        return [j for j in jobs if j.made < j.want]

    async def batching(self):
        running = []
        while True:
            if not running and not self.waiting:
                self.notify.clear()
                await self.notify.wait()
            fresh = []
            while self.waiting and len(running) + len(fresh) < self.args.batch:
                fresh.append(self.waiting.popleft())
            if fresh:
                t = now()
                for j in fresh:
                    j.t_admit, j.batch = t, len(fresh)
                await self.call(b"prefill", len(fresh))
                fresh = self.emit(fresh)
            if running:
                await self.call(b"decode", len(running))
                running = self.emit(running)
            running += fresh

    async def start(self):
        """Spawns the shard and waits for it to connect back."""
        path = os.path.join(tempfile.gettempdir(), f"ttft-tgi-py-{os.getpid()}.sock")
        if os.path.exists(path):
            os.unlink(path)
        connected = asyncio.get_running_loop().create_future()

        def on_connect(reader, writer):
            if not connected.done():
                connected.set_result((reader, writer))

        server = await asyncio.start_unix_server(on_connect, path)
        await asyncio.create_subprocess_exec(
            "/usr/bin/python3", SHARD, "--socket", path,
            "--prefill-ms", str(self.args.prefill_ms),
            "--decode-ms", str(self.args.decode_ms))
        try:
            self.reader, self.writer = await asyncio.wait_for(connected, 15)
        except asyncio.TimeoutError:
            sys.exit("tgi_py_router: the shard did not connect")
        finally:
            server.close()
            os.unlink(path)
        asyncio.get_running_loop().create_task(self.batching())


def main():
    ap = server_args(__doc__)
    args = ap.parse_args()
    if not args.log:
        ap.error("--log is needed")
    from aiohttp import web

    log = truth_log(args.log, "batch")
    router = Router(args)

    async def completions(request):
        t_read, want = tokenize(await request.json(), args)
        port = request.transport.get_extra_info("peername")[1]
        job = Job(want)
        t_enqueue = now()
        router.append(job)
        t_first = t_last = n = 0
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        done = False
        while not done:
            done = await job.stream.get()
            t_last = now()
            t_first = t_first or t_last
            n += 1
            await resp.write(sse_event(f"tok{n}"))
        return await aiohttp_done(resp, log, f"{port},{t_read},{t_enqueue},{job.t_admit},"
                                  f"{t_first},{t_last},{n},0,ok,{job.batch}")

    async def start_router(app):
        await router.start()

    aiohttp_serve(args.port, completions, start_router)


if __name__ == "__main__":
    main()
