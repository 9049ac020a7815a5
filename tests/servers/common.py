# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""What every framing test server answers (tests/test_bpf_framing.sh).

POST /v1/completions {"max_tokens": N, "stream": true|false}: a stream of N
SSE events, each --pad bytes longer than a small one (so that the end of a
send can lie past ttftrace's captured prefix), then "data: [DONE]" unless
--no-done; or, not streamed, one JSON body with a Content-Length.
"""
import argparse
import json


def parse_args(desc):
    ap = argparse.ArgumentParser(description=desc)
    ap.add_argument("-p", "--port", type=int, required=True)
    ap.add_argument("--pad", type=int, default=0,
                    help="bytes of padding in each event")
    ap.add_argument("--no-done", action="store_true",
                    help="end the stream without data: [DONE]")
    ap.add_argument("--gap-ms", type=float, default=1.0,
                    help="time between tokens")
    ap.add_argument("--multiline", action="store_true",
                    help="each event's payload on two data: lines")
    ap.add_argument("--tls", metavar="CERT,KEY",
                    help="serve over TLS with this certificate and key")
    return ap.parse_args()


def tls_context(spec):
    """The server's SSLContext for --tls CERT,KEY, or None."""
    if not spec:
        return None
    import ssl
    cert, key = spec.split(",", 1)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx


def want(body):
    """(tokens, stream) asked for by a request body."""
    try:
        req = json.loads(body or b"{}")
    except ValueError:
        req = {}
    return int(req.get("max_tokens") or 8), bool(req.get("stream", True))


def event(i, pad, multiline=False):
    """One SSE event: a completion chunk carrying token i; multiline: its
    JSON on two data: lines, as a server splits a payload of two lines (the
    client joins them with a newline)."""
    chunk = {"id": "cmpl-1", "object": "text_completion",
             "choices": [{"index": 0, "text": " tok%d" % i}],
             "pad": "x" * pad}
    text = json.dumps(chunk).encode()
    if multiline:
        text = text.replace(b", ", b",\ndata: ", 1)
    return b"data: " + text + b"\n\n"


DONE = b"data: [DONE]\n\n"


def completion(n):
    """The whole answer of a request that did not ask for a stream."""
    return json.dumps({"id": "cmpl-1", "object": "text_completion",
                       "choices": [{"index": 0, "text": " tok" * n}]}).encode()
