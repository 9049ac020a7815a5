#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Scenario (i): a CPython thread-pool server with an engine thread.

http.server.ThreadingHTTPServer (HTTP/1.1 keep-alive, chunked SSE); each
handler thread parses and "tokenizes" (pure Python, holding the GIL), puts a
job on a queue.Queue and waits on the job's threading.Condition for each
token. One engine thread batches continuously (--batch): it admits waiting
jobs, runs a prefill per admitted job and then decode steps that emit one
token for every running job.

Compute releases the GIL as native kernels do: hashlib.sha256 over a buffer
longer than 2 KiB drops the GIL for the whole hash (CPython's
HASHLIB_GIL_MINSIZE), so the engine is on CPU without the GIL. The bytes
per millisecond are calibrated at start.

--nagle leaves Nagle on (http.server's default; scenario v). --odirect FILE
reads --odirect-mb MiB of FILE with O_DIRECT before each prefill
(scenario vi; its time is the log's io_ns).

--audit: the server marks itself for `ttftrace record --mark
KIND=python:...` (docs/design.md §4.9): sys.audit("gil.put", rid) in the
handler right after stamping t_enqueue, sys.audit("gil.admit", rid) in the
engine thread right after stamping t_admit (run.sh's gil-mark). Without it
nothing is called.

Ground truth, one CSV row per request (--log; CLOCK_MONOTONIC ns through
time.monotonic_ns()): port, t_read (request read), t_enqueue (queue.put),
t_admit (the engine took it), t_first_token_emit / t_last_token_emit (just
before the handler's send of that token), tokens, io_ns, status.
"""
import argparse
import hashlib
import http.server
import json
import mmap
import os
import queue
import sys
import threading
import time

now = time.monotonic_ns


class Job:
    def __init__(self, port, tokens, rid):
        self.port, self.want, self.rid = port, tokens, rid
        self.cond = threading.Condition()
        self.out = []           # token texts produced by the engine
        self.done = False
        self.t_admit = self.io_ns = 0


class Engine:
    def __init__(self, args):
        self.args = args
        self.audit = sys.audit if args.audit else (lambda *_: None)
        self.rids = iter(range(1, 1 << 62))     # next() is atomic under the GIL
        self.q = queue.Queue()
        self.buf = bytes(64 << 20)
        self.rate = self.calibrate()    # bytes hashed per ms
        self.fd = None
        if args.odirect:
            self.fd = os.open(args.odirect, os.O_RDONLY | os.O_DIRECT)
            self.size = os.fstat(self.fd).st_size
            self.dbuf = mmap.mmap(-1, 1 << 20)      # page-aligned
            self.off = 0
        threading.Thread(target=self.loop, name="engine", daemon=True).start()

    def calibrate(self):
        t0, n = now(), 0
        while now() - t0 < 100_000_000:
            hashlib.sha256(memoryview(self.buf)[:1 << 20]).digest()
            n += 1 << 20
        return n * 1_000_000 // (now() - t0)

    def compute(self, ms):
        """ms of CPU work with the GIL released (one hashlib call per 10 ms)."""
        left = int(self.rate * ms)
        while left > 0:
            n = min(left, len(self.buf), self.rate * 10)
            hashlib.sha256(memoryview(self.buf)[:n]).digest()
            left -= n

    def read_weights(self):
        t0 = now()
        for _ in range(self.args.odirect_mb):
            if self.off + (1 << 20) > self.size:
                self.off = 0
            os.preadv(self.fd, [self.dbuf], self.off)
            self.off += 1 << 20
        return now() - t0

    def emit(self, job, last):
        with job.cond:
            job.out.append(f"tok{len(job.out)}")
            job.done = last
            job.cond.notify()

    def loop(self):
        running = []
        while True:
            new = []
            if not running:
                new.append(self.q.get())
            while len(running) + len(new) < self.args.batch:
                try:
                    new.append(self.q.get_nowait())
                except queue.Empty:
                    break
            for job in new:
                job.t_admit = now()
                self.audit("gil.admit", job.rid)
                if self.fd is not None:
                    job.io_ns = self.read_weights()
                self.compute(self.args.prefill_ms)
                self.emit(job, job.want <= 1)
                if job.want > 1:
                    running.append(job)
            if running:
                self.compute(self.args.decode_ms)
                for job in running:
                    self.emit(job, len(job.out) + 1 >= job.want)
                running = [j for j in running if not j.done]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def do_POST(self):
        srv = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        t_read = now()
        req = json.loads(body)
        # "tokenize": pure Python, holding the GIL
        toks = [hash(w) for w in (req.get("prompt", "") * srv.args.tokenize_rep).split()]
        want = int(req.get("max_tokens") or srv.args.tokens)
        job = Job(self.client_address[1], want, next(srv.engine.rids))
        job.ntok = len(toks)
        t_enqueue = now()
        srv.engine.audit("gil.put", job.rid)
        srv.engine.q.put(job)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sent = t_first = t_last = 0
        while True:
            with job.cond:
                while len(job.out) == sent:
                    job.cond.wait()
                fresh = job.out[sent:]
            for text in fresh:
                t_last = now()
                t_first = t_first or t_last
                ev = json.dumps({"choices": [{"index": 0, "text": text}]})
                self.chunk(b"data: %s\n\n" % ev.encode())
                sent += 1
            if job.done and sent == len(job.out):
                break
        self.wfile.write(b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")
        srv.log(f"{job.port},{t_read},{t_enqueue},{job.t_admit},{t_first},{t_last},"
                f"{sent},{job.io_ns},ok")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def log(self, line):
        with self.log_lock:
            self.log_file.write(line + "\n")
            self.log_file.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-p", "--port", type=int, default=8000)
    ap.add_argument("--log", required=True)
    ap.add_argument("--tokens", type=int, default=8)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--prefill-ms", type=float, default=10)
    ap.add_argument("--decode-ms", type=float, default=2)
    ap.add_argument("--tokenize-rep", type=int, default=20,
                    help="prompt copies split and hashed in Python (~0.1 ms each)")
    ap.add_argument("--nagle", action="store_true", help="leave Nagle on")
    ap.add_argument("--odirect", help="file read with O_DIRECT before each prefill")
    ap.add_argument("--odirect-mb", type=int, default=4)
    ap.add_argument("--audit", action="store_true",
                    help="mark the hand-off and the admission with sys.audit")
    args = ap.parse_args()
    Handler.disable_nagle_algorithm = not args.nagle
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.args = args
    srv.log_lock = threading.Lock()
    srv.log_file = open(args.log, "w")
    srv.log("port,t_read,t_enqueue,t_admit,t_first_token_emit,t_last_token_emit,"
            "tokens,io_ns,status")
    srv.engine = Engine(args)
    print(f"gil_server: listening on {args.port}", file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
