#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A streaming completion server around a tiny transformer, for the real-GPU
check (tools/gpu-check.sh): OpenAI-style POST /v1/completions answered in SSE,
a front-end thread per connection and one engine thread that runs prefill and
greedy decode on the GPU. The model is a GPT-2 built from a config with random
weights: nothing is downloaded. --fake replaces the model by sleeps, to test
the HTTP side on a machine without PyTorch.

Ground truth (CLOCK_MONOTONIC ns, as bpf_ktime_get_ns) goes to --log, one CSV
row per request: id,peer_port,t_read_done_ns,t_dispatch_ns,t_first_token_ns,
t_first_token_write_ns,tokens,prefill_ns.
"""
import argparse
import json
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

now = time.monotonic_ns


class Engine(threading.Thread):
    """One engine thread, as real servers have: requests queue up for it."""

    def __init__(self, args):
        super().__init__(name="engine", daemon=True)
        self.args = args
        self.jobs = queue.Queue()
        self.model = None
        if not args.fake:
            import torch
            from transformers import GPT2Config, GPT2LMHeadModel

            torch.manual_seed(0)
            cfg = GPT2Config(vocab_size=4096, n_positions=2048, n_embd=args.hidden,
                             n_layer=args.layers, n_head=max(1, args.hidden // 64))
            self.torch = torch
            torch.set_default_dtype(torch.float16)
            with torch.device("cuda"):  # random init on the GPU: fast
                self.model = GPT2LMHeadModel(cfg).eval()
            with torch.no_grad():  # warm up kernels and the allocator
                ids = torch.randint(0, 4096, (1, 64), device="cuda")
                self.model(ids, use_cache=True)
            torch.cuda.synchronize()

    def run(self):
        while True:
            job = self.jobs.get()
            job["t_dispatch"] = now()
            try:
                self.generate(job)
            except Exception as e:  # the request fails, the server goes on
                job["out"].put(("error", str(e)))

    def generate(self, job):
        n = job["tokens"]
        if self.model is None:
            t0 = now()
            time.sleep(self.args.fake_prefill_ms / 1000)
            job["prefill_ns"] = now() - t0
            for k in range(n):
                if k:
                    time.sleep(self.args.fake_step_ms / 1000)
                job["out"].put(("token", "tok%d" % k))
            job["out"].put(("done", None))
            return
        torch = self.torch
        with torch.no_grad():
            prompt = job["prompt"].encode()[: self.args.max_prompt] or b"x"
            # --prefill-tokens repeats the prompt: a long prefill on the GPU
            reps = -(-self.args.prefill_tokens // len(prompt))
            prompt = (prompt * max(1, reps))[: max(len(prompt), self.args.prefill_tokens)]
            ids = torch.tensor([list(prompt)], device="cuda") % 4096
            t0 = now()
            out = self.model(ids, use_cache=True)
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
            tok = int(nxt.item())  # device-to-host copy: waits for the GPU
            job["prefill_ns"] = now() - t0
            past = out.past_key_values
            for k in range(n):
                job["out"].put(("token", "t%d" % tok))
                if k == n - 1:
                    break
                out = self.model(nxt, past_key_values=past, use_cache=True)
                past = out.past_key_values
                nxt = out.logits[:, -1].argmax(-1, keepdim=True)
                tok = int(nxt.item())
        job["out"].put(("done", None))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gpu-server/1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        if self.path != "/v1/completions":
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        t_read = now()
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            self.send_error(400)
            return
        srv = self.server
        with srv.lock:
            srv.next_id += 1
            rid = srv.next_id
        job = {"prompt": str(req.get("prompt", "")), "out": queue.Queue(),
               "tokens": int(req.get("max_tokens") or srv.args.tokens)}
        srv.engine.jobs.put(job)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()  # the status line and headers in a write of their own
        t_first_tok = t_first_write = 0
        sent = 0
        while True:
            kind, text = job["out"].get()
            if kind == "token":
                if not sent:
                    t_first_tok = now()
                ev = {"id": "cmpl-%d" % rid, "choices": [{"text": text, "index": 0}]}
                if not sent:
                    t_first_write = now()
                self.wfile.write(b"data: " + json.dumps(ev).encode() + b"\n\n")
                sent += 1
            else:
                self.wfile.write(b"data: [DONE]\n\n")
                break
        self.close_connection = True
        with srv.lock:
            srv.log.write("%d,%d,%d,%d,%d,%d,%d,%d\n" % (
                rid, self.client_address[1], t_read, job.get("t_dispatch", 0),
                t_first_tok, t_first_write, sent, job.get("prefill_ns", 0)))
            srv.log.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--log", default="/dev/null")
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--max-prompt", type=int, default=512)
    p.add_argument("--prefill-tokens", type=int, default=0)
    p.add_argument("--fake", action="store_true", help="no model: sleeps")
    p.add_argument("--fake-prefill-ms", type=float, default=5)
    p.add_argument("--fake-step-ms", type=float, default=2)
    args = p.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    srv.args = args
    srv.lock = threading.Lock()
    srv.next_id = 0
    srv.log = open(args.log, "w")
    srv.log.write("id,peer_port,t_read_done_ns,t_dispatch_ns,t_first_token_ns,"
                  "t_first_token_write_ns,tokens,prefill_ns\n")
    srv.engine = Engine(args)
    srv.engine.start()
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % srv.server_address[1])
        import os
        os.rename(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
