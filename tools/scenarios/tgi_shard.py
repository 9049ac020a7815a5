#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The model shard of tgi_router.go (TGI's Python shard, one call at a time).

Connects to the router's unix socket, then answers each call, a line
"prefill N" or "decode N", with one line once its forward is done: a
prefill of N requests (--prefill-ms each) or a decode step of the batch
(--decode-ms), hashlib with the GIL released, as a GPU forward is.
"""
import argparse
import os
import socket
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vllm_server import calibrated_compute  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", required=True)
    ap.add_argument("--prefill-ms", type=float, default=10)
    ap.add_argument("--decode-ms", type=float, default=2)
    args = ap.parse_args()
    compute = calibrated_compute()
    conn = socket.socket(socket.AF_UNIX)
    conn.connect(args.socket)
    calls = conn.makefile("rb")
    for line in calls:
        kind, n = line.split()
        if kind == b"prefill":
            compute(args.prefill_ms * int(n))
        else:
            compute(args.decode_ms)
        conn.sendall(b"ok %s\n" % n)


if __name__ == "__main__":
    main()
