#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A thread handing messages to ZMQ, for tests/test_bpf_msgsend.sh
(docs/design.md §4.4): pyzmq (Debian's python3-zmq, the system's libzmq).

  zmq_pair.py DIR N

Writes DIR/tid (the sending thread) and waits for DIR/go; then sends N
one-part messages and N three-part ones (send_multipart: the first two parts
carry ZMQ_SNDMORE) on a PUSH socket, 1 ms apart, to a PULL socket of the
same process that receives them all. Writes DIR/done at the end.
"""
import os
import sys
import threading
import time

import zmq


def main():
    d, n = sys.argv[1], int(sys.argv[2])
    ctx = zmq.Context()
    push = ctx.socket(zmq.PUSH)
    push.bind(f"ipc://{d}/zmq.ipc")
    pull = ctx.socket(zmq.PULL)
    pull.connect(f"ipc://{d}/zmq.ipc")

    def drain():
        for _ in range(2 * n):
            pull.recv_multipart()

    with open(f"{d}/tid.tmp", "w") as f:
        f.write(f"{threading.get_native_id()}\n")
    os.rename(f"{d}/tid.tmp", f"{d}/tid")
    while not os.path.exists(f"{d}/go"):
        time.sleep(0.01)
    rx = threading.Thread(target=drain)
    rx.start()
    for i in range(n):
        push.send(b"one part %d" % i)
        push.send_multipart([b"head", b"body", b"tail %d" % i])
        time.sleep(0.001)
    rx.join()
    open(f"{d}/done", "w").close()
    push.close(linger=0)
    pull.close(linger=0)
    ctx.term()


if __name__ == "__main__":
    main()
