#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""http.server's ThreadingHTTPServer, a thread per connection, keep-alive:
SSE as chunks written one per event, then the terminator; JSON with a
Content-Length. With --tls its sockets are ssl's own (OpenSSL on the
socket: each SSL_write sends its records itself), as a blocking Python
server (Flask's, a WSGI server's) serves TLS."""
import os
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

args = common.parse_args(__doc__)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def chunk(self, b):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
        self.wfile.flush()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        n, stream = common.want(body)
        if not stream:
            out = common.completion(n)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        for i in range(n):
            if i:
                time.sleep(args.gap_ms / 1000)
            self.chunk(common.event(i, args.pad))
        if not args.no_done:
            self.chunk(common.DONE)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def log_message(self, *a):
        pass


server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
ctx = common.tls_context(args.tls)
if ctx:
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
