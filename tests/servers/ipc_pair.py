#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Two threads handing data to each other over an eventfd and a unix socket
pair, for tests/test_bpf_datawake.sh (docs/design.md §4.4).

  ipc_pair.py DIR N

Writes DIR/tids ("READER WRITER") and waits for DIR/go; then the writer
signals the eventfd and sends a byte on the pair N times each, 2 ms apart;
the reader reads both each time. Writes DIR/done at the end.
"""
import os
import socket
import sys
import threading
import time


def main():
    d, n = sys.argv[1], int(sys.argv[2])
    efd = os.eventfd(0)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ready = threading.Event()
    tid = []

    def reader():
        tid.append(threading.get_native_id())
        ready.set()
        for _ in range(n):
            os.eventfd_read(efd)
            b.recv(1)

    t = threading.Thread(target=reader)
    t.start()
    ready.wait()
    with open(os.path.join(d, "tids"), "w") as f:
        f.write(f"{tid[0]} {threading.get_native_id()}\n")
    while not os.path.exists(os.path.join(d, "go")):
        time.sleep(0.01)
    for _ in range(n):
        os.eventfd_write(efd, 1)
        time.sleep(0.002)
        a.send(b"x")
        time.sleep(0.002)
    t.join()
    open(os.path.join(d, "done"), "w").close()


if __name__ == "__main__":
    main()
