#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""bench/tls_cost.sh's loop: a TLS client and server in one process,
through memory BIOs (as asyncio's SSL), handshaken, then N SSL_writes of
one SSE event each by the server; prints the mean ns per write, the
records drained every 64 writes (no socket: the cost is the call's)."""
import ssl
import sys
import time

cert, key, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
sctx.load_cert_chain(cert, key)
cctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
cctx.check_hostname = False
cctx.verify_mode = ssl.CERT_NONE
sin, sout, cin, cout = (ssl.MemoryBIO() for _ in range(4))
srv = sctx.wrap_bio(sin, sout, server_side=True)
cli = cctx.wrap_bio(cin, cout)
done = [False, False]
while not all(done):
    for i, (obj, out, peer_in) in enumerate(((cli, cout, sin),
                                             (srv, sout, cin))):
        if not done[i]:
            try:
                obj.do_handshake()
                done[i] = True
            except ssl.SSLWantReadError:
                pass
        peer_in.write(out.read())
event = b'data: {"choices": [{"text": " tok"}]}\n\n'
t0 = time.perf_counter_ns()
for i in range(n):
    srv.write(event)
    if i % 64 == 63:
        sout.read()
print((time.perf_counter_ns() - t0) // n)
