#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""An asyncio loop (Debian's python3: an epoll selector) that answers each
line of a keep-alive connection with one, with a task that sleeps 1 ms at a
time (its loop's polls time out and return nothing, many in a row between
two lines), and beside it a thread that waits in its own epoll for a pipe it
writes to: a poller that reads no connection (tests/test_bpf_poll.sh).
Writes DIR/port, DIR/loop.tid, DIR/side.tid, after each of the side thread's
polls that returned ready DIR/side.n, and every 50 sleeps DIR/ticks.n."""
import asyncio
import os
import select
import sys
import threading
import time

out = sys.argv[1]


def write(name, value):
    with open(os.path.join(out, name + ".tmp"), "w") as f:
        f.write(f"{value}\n")
    os.rename(os.path.join(out, name + ".tmp"), os.path.join(out, name))


def side():
    r, w = os.pipe()
    ep = select.epoll()
    ep.register(r, select.EPOLLIN)
    write("side.tid", threading.get_native_id())
    n = 0
    while True:
        os.write(w, b"x")
        if ep.poll(1):
            os.read(r, 1)
            n += 1
            write("side.n", n)
        time.sleep(0.002)


async def answer(reader, writer):
    while await reader.readline():
        writer.write(b"ok\n")
        await writer.drain()
    writer.close()


async def tick():
    n = 0
    while True:
        await asyncio.sleep(0.001)
        n += 1
        if n % 50 == 0:
            write("ticks.n", n)


async def main():
    asyncio.get_running_loop().create_task(tick())
    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    write("loop.tid", threading.get_native_id())
    write("port", server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


threading.Thread(target=side, daemon=True).start()
asyncio.run(main())
