#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario (vii): an SGLang-shaped three-process server.

TokenizerManager (API process): aiohttp's web server (one asyncio event
loop). The handler reads the body, tokenizes (~--tokenize-ms of pure
Python, holding the GIL), sends the tokenized request over a ZMQ PUSH
socket (ipc://) to the Scheduler and streams SSE from the request's state
(a list and an asyncio.Event, as SGLang's ReqState); one task receives
detokenized text from the Detokenizer (ZMQ PULL), appends it to each
request's state and sets its event.

Scheduler (this file, --role scheduler): one thread. Its event loop drains its
ZMQ PULL socket with recv(zmq.NOBLOCK) between steps (SGLang's
recv_requests), so a request that comes while a batch runs wakes nobody;
idle, it waits in a zmq.Poller (SGLang's --sleep-on-idle; --spin-idle
polls instead, SGLang's default). A step is either a prefill of the
waiting requests it admits (continuous batch of --batch; SGLang runs new
prefills before decodes, not mixed) or one decode of the running ones,
as hashlib over a large buffer with the GIL released (as a GPU forward
releases it); each step's token ids go straight to the Detokenizer over
ZMQ PUSH (no output thread).

Detokenizer (--role detokenizer): receives token ids (blocking recv),
"detokenizes" in pure Python (--detok-ms per token) and sends the text to
the TokenizerManager over ZMQ PUSH.

Ground truth (--log, written by the API process; CLOCK_MONOTONIC ns from
time.monotonic_ns() in all three processes): port, t_read (body read),
t_enqueue (before the ZMQ send to the Scheduler), t_admit (Scheduler: taken
into the batch, passed along with the outputs), t_first_token_emit /
t_last_token_emit (API: the SSE event handed to aiohttp's writer), tokens,
io_ns (0), status, t_engine_first (Scheduler: before the send of the first
token's ids), t_detok_first (Detokenizer: before the send of its text).
"""
import argparse
import asyncio
import os
import pickle
import subprocess
import sys
import time
from collections import deque

import zmq

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (aiohttp_done, busy_python, calibrated_compute,  # noqa: E402
                         ipc_base, ready_or_exit, server_args, sse_event, tokenize,
                         truth_log)

now = time.monotonic_ns


def pull_push(pull, bind, push):
    """A ZMQ PULL socket on pull (bound or connected) and a PUSH to push."""
    ctx = zmq.Context()
    recv = ctx.socket(zmq.PULL)
    (recv.bind if bind else recv.connect)(pull)
    send = ctx.socket(zmq.PUSH)
    send.connect(push)
    return recv, send


# -------------------------------------------------------------- scheduler

def scheduler_main(args):
    recv, to_detok = pull_push(args.sched_in, False, args.detok_in)
    forward = calibrated_compute()
    poller = zmq.Poller()
    poller.register(recv, zmq.POLLIN)
    # calibrated and connected: through the Detokenizer to the API
    to_detok.send(pickle.dumps("ready"))
    waiting = deque()   # (rid, wanted)
    running = []        # [rid, wanted, produced, t_admit]
    while True:
        # recv_requests: whatever came, without waiting
        while True:
            try:
                waiting.append(pickle.loads(recv.recv(zmq.NOBLOCK)))
            except zmq.Again:
                break
        # get_next_batch_to_run: a prefill batch of new requests first
        if waiting and len(running) < args.batch:
            t_admit = now()
            batch = []
            while waiting and len(running) + len(batch) < args.batch:
                rid, want = waiting.popleft()
                batch.append([rid, want, 0, t_admit])
            forward(args.prefill_ms * len(batch))
            running += batch
        elif running:
            batch = running
            forward(args.decode_ms)
        else:
            if not args.spin_idle:
                poller.poll(1000)
            continue
        # process_batch_result: token ids straight to the Detokenizer
        t_send = now()
        outs = []
        for r in batch:
            r[2] += 1
            outs.append((r[0], r[2], r[3], t_send, r[2] >= r[1]))
        to_detok.send(pickle.dumps(outs))
        running = [r for r in running if r[2] < r[1]]


# ------------------------------------------------------------ detokenizer

def detokenizer_main(args):
    recv, to_api = pull_push(args.detok_in, True, args.api_in)
    while True:
        obj = pickle.loads(recv.recv())
        if obj == "ready":
            to_api.send(pickle.dumps("ready"))
            continue
        outs = []
        for rid, idx, t_admit, t_sched, last in obj:
            busy_python(args.detok_ms)
            outs.append((rid, f"tok{idx}", idx, t_admit, t_sched, now(), last))
        to_api.send(pickle.dumps(outs))


# ------------------------------------------------------- tokenizer manager

class ReqState:
    def __init__(self):
        self.out = []
        self.event = asyncio.Event()


def api_main(args):
    import zmq.asyncio
    from aiohttp import web

    base = ipc_base("sglang")
    states = {}
    log = truth_log(args.log, "t_engine_first,t_detok_first")
    next_id = [0]
    socks = {}
    procs = []

    async def handle_loop(from_detok):
        while True:
            for rid, text, idx, t_admit, t_sched, t_detok, last in \
                    pickle.loads(await from_detok.recv()):
                st = states.get(rid)
                if st is not None:
                    st.out.append((text, idx, t_admit, t_sched, t_detok, last))
                    st.event.set()

    async def generate(request):
        t_read, want = tokenize(await request.json(), args)
        rid = next_id[0] = next_id[0] + 1
        st = states[rid] = ReqState()
        t_enqueue = now()
        await socks["to_sched"].send(pickle.dumps((rid, want)))
        port = request.transport.get_extra_info("peername")[1]
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        t_first = t_last = t_admit = t_sched = t_detok = 0
        n = 0
        done = False
        while not done:
            await st.event.wait()
            st.event.clear()
            out, st.out = st.out, []
            for text, idx, t_admit, ts, td, last in out:
                t_sched = t_sched or ts
                t_detok = t_detok or td
                t_last = now()
                t_first = t_first or t_last
                n += 1
                await resp.write(sse_event(text))
                done = done or last
        del states[rid]
        return await aiohttp_done(resp, log, f"{port},{t_read},{t_enqueue},{t_admit},"
                                  f"{t_first},{t_last},{n},0,ok,{t_sched},{t_detok}")

    async def startup(app):
        # aiohttp listens once this returns: not before the Scheduler and
        # the Detokenizer are up (SGLang waits for both to say ready)
        ctx = zmq.asyncio.Context()
        socks["to_sched"] = ctx.socket(zmq.PUSH)
        socks["to_sched"].bind(base + "-sched")
        from_detok = ctx.socket(zmq.PULL)
        from_detok.bind(base + "-api")
        me = [sys.executable, os.path.abspath(__file__)]
        common = ["--sched-in", base + "-sched", "--detok-in", base + "-detok",
                  "--api-in", base + "-api"]
        procs.append(subprocess.Popen(me + ["--role", "detokenizer",
                                            "--detok-ms", str(args.detok_ms)] + common))
        procs.append(subprocess.Popen(me + ["--role", "scheduler", "--batch", str(args.batch),
                                            "--prefill-ms", str(args.prefill_ms),
                                            "--decode-ms", str(args.decode_ms)] +
                                      (["--spin-idle"] if args.spin_idle else []) + common))
        ready_or_exit(pickle.loads(await from_detok.recv()), "sglang_server")
        asyncio.get_running_loop().create_task(handle_loop(from_detok))

    app = web.Application()
    app.router.add_post("/v1/completions", generate)
    app.on_startup.append(startup)
    try:
        web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)
    finally:
        for p in procs:
            p.terminate()


def main():
    ap = server_args(__doc__)
    ap.add_argument("--detok-ms", type=float, default=0.05,
                    help="Detokenizer's pure-Python work per token")
    ap.add_argument("--spin-idle", action="store_true",
                    help="the Scheduler polls when idle (SGLang's default) instead of "
                    "waiting in zmq.Poller (--sleep-on-idle)")
    ap.add_argument("--role", choices=("scheduler", "detokenizer"), help=argparse.SUPPRESS)
    ap.add_argument("--sched-in", help=argparse.SUPPRESS)
    ap.add_argument("--detok-in", help=argparse.SUPPRESS)
    ap.add_argument("--api-in", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.role and not args.log:
        ap.error("--log is needed")
    {"scheduler": scheduler_main, "detokenizer": detokenizer_main,
     None: api_main}[args.role](args)


if __name__ == "__main__":
    main()
