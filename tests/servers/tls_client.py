#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A TLS client for tests/test_bpf_tls.sh, timed as loadgen times: -c
connections, each sending -n streamed requests in turn (keep-alive) for
--tokens SSE events. One CSV row per request: local_port, t_send_ns (the
clock read before the request's records were sent), t_send_tx_ns (the
kernel's transmit stamp of them, SO_TIMESTAMPING; 0: none came),
t_first_token_rx_ns (the
kernel's receive stamp, SO_TIMESTAMPNS, of the bytes that completed its
first event), first_exact (0 when that read brought a later event too:
TCP stamps a read with its last bytes' arrival, so the stamp is that
one's), tokens, status; CLOCK_MONOTONIC. Neither stamp holds the
client's own wait to run. The certificate is not checked (the tests'
own)."""
import argparse
import socket
import ssl
import struct
import sys
import threading
import time

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("-p", "--port", type=int, required=True)
ap.add_argument("-c", type=int, default=2)
ap.add_argument("-n", type=int, default=4)
ap.add_argument("--tokens", type=int, default=8)
ap.add_argument("-o", required=True)
args = ap.parse_args()


# Linux's (asm-generic, 64-bit), which Python 3.11 does not name
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SO_TIMESTAMPING = getattr(socket, "SO_TIMESTAMPING", 37)
# the software stamp of each send, to the error queue, without its data;
# receive stamps stay SO_TIMESTAMPNS's (loadgen asks the same)
TX_STAMPS = (1 << 1) | (1 << 4) | (1 << 11) | (1 << 17)


def mono_of(realtime_ns):
    return realtime_ns - (time.clock_gettime_ns(time.CLOCK_REALTIME) -
                          time.monotonic_ns())


class Conn:
    def __init__(self):
        self.sock = socket.create_connection(("127.0.0.1", args.port), 10)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, TX_STAMPS)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        self.inc, self.out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.inc, self.out)
        self.plain = b""
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                self.fill()
        self.flush()

    def flush(self):
        data = self.out.read()
        if data:
            self.sock.sendall(data)

    def tx_stamp(self, lo):
        """The earliest transmit stamp queued (monotonic) not before lo;
        0 when none."""
        best = 0
        self.sock.settimeout(0.0)  # a timeout would wait for data
        while True:
            try:
                _, anc, _, _ = self.sock.recvmsg(1, 1024, socket.MSG_ERRQUEUE)
            except (BlockingIOError, InterruptedError):
                self.sock.settimeout(10)
                return best
            for level, kind, d in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING:
                    sec, nsec = struct.unpack("qq", d[:16])
                    t = mono_of(sec * 10**9 + nsec)
                    if t >= lo and (not best or t < best):
                        best = t

    def fill(self):
        """Reads what came; returns its receive stamp (monotonic)."""
        data, anc, _, _ = self.sock.recvmsg(1 << 16, 1024)
        if not data:
            raise EOFError("the server closed the connection")
        stamp = 0
        for level, kind, d in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", d[:16])
                stamp = mono_of(sec * 10**9 + nsec)
        self.inc.write(data)
        while True:
            try:
                got = self.tls.read(1 << 16)
            except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                break
            if not got:
                break
            self.plain += got
        self.flush()
        return stamp

    def request(self):
        body = b'{"max_tokens": %d, "stream": true}' % args.tokens
        self.tls.write(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                       b"Content-Type: application/json\r\n"
                       b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.tx_stamp(0)  # none of the handshake's or an earlier request's
        t_send = time.monotonic_ns()
        self.flush()
        t_send_tx = self.tx_stamp(t_send)
        first, exact = 0, 1
        while True:
            stamp = self.fill()
            head, sep, rest = self.plain.partition(b"\r\n\r\n")
            if not sep:
                continue
            tokens = rest.count(b"data: ") - rest.count(b"data: [DONE]")
            if tokens and not first:
                first, exact = stamp, int(tokens == 1)
            end = rest.find(b"\r\n0\r\n\r\n")
            if end >= 0:
                self.plain = rest[end + 7:]
                status = head.split(b" ", 2)[1].decode()
                return (self.sock.getsockname()[1], t_send, t_send_tx,
                        first, exact, tokens, status)


rows, lock, errors = [], threading.Lock(), []


def client():
    try:
        conn = Conn()
        for _ in range(args.n):
            row = conn.request()
            with lock:
                rows.append(row)
        conn.sock.close()
    except Exception as e:  # reported, and the exit status says it
        errors.append(repr(e))


threads = [threading.Thread(target=client) for _ in range(args.c)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(args.o, "w") as f:
    f.write("local_port,t_send_ns,t_send_tx_ns,t_first_token_rx_ns,"
            "first_exact,tokens,status\n")
    for r in sorted(rows, key=lambda r: r[1]):
        f.write("%d,%d,%d,%d,%d,%d,%s\n" % r)
if errors:
    print("tls_client: " + "; ".join(errors), file=sys.stderr)
    sys.exit(1)
