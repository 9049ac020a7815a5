#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Two threads handing data to each other over an eventfd, a unix socket
pair and a pipe, for tests/test_bpf_datawake.sh (docs/design.md §4.4).

  ipc_pair.py DIR N

Writes DIR/tids ("READER WRITER") and waits for DIR/go; then the writer
signals the eventfd, sends a byte on the pair and writes a message to the
pipe (as multiprocessing's Connection does: its length, then its bytes) N
times each, 2 ms apart; the reader reads all three each time. Then, while
the reader waits for it to be done, the writer writes BURST messages to the
pipe: only the first finds it empty (what the reader's next read takes).
The reader then reads them all. Last, the writer writes two messages (the
first a data wake), the reader reads one, the writer writes a third behind
the unread second, and the reader reads both: its first read of them is
recorded though no data wake announced the third. Writes DIR/done at the
end.
"""
import os
import socket
import sys
import threading
import time

BURST = 10


def read_message(fd):
    """One message as multiprocessing's Connection reads it."""
    size = int.from_bytes(os.read(fd, 4), "big")
    os.read(fd, size)


def main():
    d, n = sys.argv[1], int(sys.argv[2])
    efd = os.eventfd(0)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pipe_r, pipe_w = os.pipe()
    message = b"token" * 8
    frame = len(message).to_bytes(4, "big") + message  # Connection's framing
    ready = threading.Event()
    reader_waits = threading.Event()
    burst_written = threading.Event()
    burst_read = threading.Event()
    pair_written = threading.Event()
    one_read = threading.Event()
    late_written = threading.Event()
    tid = []

    def reader():
        tid.append(threading.get_native_id())
        ready.set()
        for _ in range(n):
            os.eventfd_read(efd)
            b.recv(1)
            read_message(pipe_r)
        reader_waits.set()
        burst_written.wait()
        for _ in range(BURST):
            read_message(pipe_r)
        burst_read.set()
        pair_written.wait()
        read_message(pipe_r)
        one_read.set()
        late_written.wait()
        read_message(pipe_r)
        read_message(pipe_r)

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
        os.write(pipe_w, frame)
        time.sleep(0.002)
    reader_waits.wait()
    for _ in range(BURST):
        os.write(pipe_w, frame)
    burst_written.set()
    burst_read.wait()
    os.write(pipe_w, frame)
    os.write(pipe_w, frame)
    pair_written.set()
    one_read.wait()
    os.write(pipe_w, frame)
    late_written.set()
    t.join()
    open(os.path.join(d, "done"), "w").close()


if __name__ == "__main__":
    main()
