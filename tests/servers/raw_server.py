#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Framings written byte for byte on a plain socket, one thread per
connection (tests/test_bpf_framing.sh).

--framing hyper: hyper's HTTP/1 server (Rust; not installable here), as its
documented encoder writes: each response is vectored (sendmsg), the header
block and the first chunk in one send; a chunk is three iovecs (its size in
uppercase hex and CRLF, the payload, CRLF); the last event's chunk and the
terminator "0\\r\\n\\r\\n" in one send; a sized body is the headers and the
body as two iovecs of one send. Keep-alive.

--framing node-writev: Node's http server when its socket was busy: each
res.write's chunk is four buffers (the size in lowercase hex, CRLF, the
event, CRLF), and the writes queued meanwhile leave in one writev: here the
tokens after the first three at a time (12 iovecs a send).

--framing http10: an HTTP/1.0 server as Python's http.server answers: no
length, no chunking; the body, streamed or not, ends when the server closes
the connection.
"""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

ap_args = None


def read_request(f):
    """(body) of the next request on f, None at EOF."""
    line = f.readline()
    if not line:
        return None
    length = 0
    while True:
        h = f.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        k, _, v = h.decode("latin1").partition(":")
        if k.strip().lower() == "content-length":
            length = int(v.strip())
    return f.read(length)


def hyper_chunk(data):
    return [b"%X\r\n" % len(data), data, b"\r\n"]


def node_chunk(data):
    return [b"%x" % len(data), b"\r\n", data, b"\r\n"]


def serve_chunked(conn, f, chunk=hyper_chunk, group=1):
    """hyper's framing, or with chunk and group another's (node-writev)"""
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())
    while True:
        body = read_request(f)
        if body is None:
            return
        n, stream = common.want(body)
        if not stream:
            out = common.completion(n)
            conn.sendmsg([b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                          b"content-length: %d\r\ndate: %s\r\n\r\n"
                          % (len(out), date.encode()), out])
            continue
        head = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\ndate: %s\r\n\r\n" % date.encode())
        iov = [head]
        for i in range(n):
            iov += chunk(common.event(i, ap_args.pad, ap_args.multiline))
            if i == n - 1:
                if not ap_args.no_done:
                    iov += chunk(common.DONE)
                iov.append(b"0\r\n\r\n")
            elif i % group:
                continue
            conn.sendmsg(iov)
            iov = []
            time.sleep(ap_args.gap_ms / 1000)


def serve_http10(conn, f):
    body = read_request(f)
    if body is None:
        return
    n, stream = common.want(body)
    ctype = b"text/event-stream" if stream else b"application/json"
    conn.sendall(b"HTTP/1.0 200 OK\r\nServer: BaseHTTP/0.6 Python/3\r\n"
                 b"Content-Type: %s\r\n\r\n" % ctype)
    if not stream:
        conn.sendall(common.completion(n))
        return
    for i in range(n):
        if i:
            time.sleep(ap_args.gap_ms / 1000)
        conn.sendall(common.event(i, ap_args.pad, ap_args.multiline))
    if not ap_args.no_done:
        conn.sendall(common.DONE)


def handle(conn, framing):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with conn, conn.makefile("rb") as f:
        try:
            if framing == "hyper":
                serve_chunked(conn, f)
            elif framing == "node-writev":
                serve_chunked(conn, f, node_chunk, 3)
            else:
                serve_http10(conn, f)
        except OSError:
            pass


def main():
    global ap_args
    framing = "hyper"
    argv = sys.argv[1:]
    if "--framing" in argv:
        k = argv.index("--framing")
        framing = argv[k + 1]
        del argv[k:k + 2]
    if framing not in ("hyper", "node-writev", "http10"):
        sys.exit("raw_server.py: --framing hyper|node-writev|http10")
    sys.argv[1:] = argv
    ap_args = common.parse_args(__doc__)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", ap_args.port))
    ls.listen(64)
    while True:
        conn, _ = ls.accept()
        threading.Thread(target=handle, args=(conn, framing),
                         daemon=True).start()


main()
