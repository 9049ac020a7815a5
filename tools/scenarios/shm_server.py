#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario: handler threads and a model process over shared-memory rings.

Written after the rules, to judge them on a shape they were not written
for (session 42): Triton's Python backend. Its server (C++ HTTP worker
threads) hands each request to a stub process through a message queue in
shared memory (boost interprocess: a mutex and condition variables in a
shared segment, futexes no private flag marks), and a decoupled model
sends each response back through a second one, which a server thread
reads and passes to the request's HTTP thread.

Here: http.server.ThreadingHTTPServer's handler threads parse and
"tokenize" (~1 ms of Python), write (rid, tokens) into a request ring in
shared memory and post its semaphore; then each waits on its own
queue.SimpleQueue for tokens. The model process (multiprocessing's spawn:
the rings and semaphores are opened again there, at addresses of its own)
batches dynamically (--batch): idle, it blocks on the request semaphore;
between steps it takes what the ring holds; each step runs one forward
(hashlib with the GIL released) of a prefill per admitted request plus a
decode for the running ones, then writes one record per token into the
response ring, a post each. One reader thread of the front blocks on the
response semaphore and puts each token on its request's SimpleQueue.
Each ring: a process-shared lock, an item and a space semaphore
(multiprocessing's SemLock: POSIX semaphores, futexes in /dev/shm).

Ground truth (--log; CLOCK_MONOTONIC ns, the same clock in both
processes), README.md's columns: port, t_read, t_enqueue (before the
write into the ring), t_admit (the step that admitted the request
started), t_first_token_emit / t_last_token_emit (just before the
handler's write), tokens, io_ns (0), status, then batch (how many that
step admitted).
"""
import http.server
import json
import multiprocessing as mp
import os
import queue
import struct
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import (busy_python, calibrated_compute, log_row, now,  # noqa: E402
                         server_args, sse_event, truth_log)

RECORD = struct.Struct("<qqqq")     # rid, a number, a flag, a stamp


class Ring:
    """Fixed records in shared memory: a lock, a semaphore counting the
    records and one counting the free slots."""

    def __init__(self, ctx, slots):
        self.slots = slots
        self.buf = ctx.RawArray("b", slots * RECORD.size)
        self.ends = ctx.RawArray("q", 2)        # records written, read
        self.lock = ctx.Lock()
        self.items = ctx.Semaphore(0)
        self.space = ctx.Semaphore(slots)

    def put(self, *fields):
        self.space.acquire()
        with self.lock:
            RECORD.pack_into(self.buf, self.ends[0] % self.slots * RECORD.size, *fields)
            self.ends[0] += 1
        self.items.release()

    def get(self, block=True, timeout=None):
        """The oldest record, or None when there is none (block=False) or
        none came within timeout seconds."""
        if not self.items.acquire(block, timeout):
            return None
        with self.lock:
            fields = RECORD.unpack_from(self.buf, self.ends[1] % self.slots * RECORD.size)
            self.ends[1] += 1
        self.space.release()
        return fields


def model_main(args, requests, tokens):
    """The stub process: dynamic batching over the request ring."""
    compute = calibrated_compute()
    tokens.put(0, 0, 0, 0)      # ready
    running = []                # [rid, want, made, t_admit]
    while True:
        new = [] if running else [requests.get()]
        while len(running) + len(new) < args.batch:
            rec = requests.get(block=False)
            if rec is None:
                break
            new.append(rec)
        t_admit = now()
        new = [[rid, want, 0, t_admit, len(new)] for rid, want, _, _ in new]
        compute(args.prefill_ms * len(new) + (args.decode_ms if running else 0))
        for r in running + new:
            r[2] += 1
            tokens.put(r[0], r[2], (r[2] >= r[1]) | r[4] << 1, r[3])  # done, batch
        running = [r for r in running + new if r[2] < r[1]]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def do_POST(self):
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        t_read = now()
        busy_python(srv.args.tokenize_ms)
        want = int(body.get("max_tokens") or srv.args.tokens)
        with srv.log_lock:
            srv.next_id += 1
            rid = srv.next_id
        inbox = srv.streams[rid] = queue.SimpleQueue()
        t_enqueue = now()
        srv.requests.put(rid, want, 0, 0)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        t_first = t_last = n = 0
        done = False
        while not done:
            idx, flags, t_admit = inbox.get()
            done = flags & 1
            t_last = now()
            t_first = t_first or t_last
            n += 1
            ev = sse_event(f"tok{idx}")
            self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
        self.wfile.write(b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")
        del srv.streams[rid]
        with srv.log_lock:
            log_row(srv.log_file, f"{self.client_address[1]},{t_read},{t_enqueue},"
                    f"{t_admit},{t_first},{t_last},{n},0,ok,{flags >> 1}")


def main():
    ap = server_args(__doc__)
    args = ap.parse_args()
    if not args.log:
        ap.error("--log is needed")
    ctx = mp.get_context("spawn")
    requests, tokens = Ring(ctx, 256), Ring(ctx, 4096)
    model = ctx.Process(target=model_main, args=(args, requests, tokens), daemon=True)
    model.start()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    srv.args, srv.requests, srv.streams, srv.next_id = args, requests, {}, 0
    srv.log_lock = threading.Lock()
    srv.log_file = truth_log(args.log, "batch")
    if tokens.get(timeout=30) != (0, 0, 0, 0):
        sys.exit("shm_server: the model process did not say it was ready")

    def reader():
        """Tokens from the model process to their handler threads."""
        while True:
            rid, idx, flags, t_admit = tokens.get()
            inbox = srv.streams.get(rid)
            if inbox is not None:
                inbox.put((idx, flags, t_admit))

    threading.Thread(target=reader, name="token-reader", daemon=True).start()
    print(f"shm_server: listening on {args.port}", file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
