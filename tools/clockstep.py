#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Steps CLOCK_REALTIME back and forth by --step-us about every --every-ms
(0.5 to 1.5 times it, at random: no phase with a paced client) until
killed (SIGTERM, SIGINT), as a VM's time sync or NTP steps it, and leaves
it where it found it: every step back is followed by the same step forward.
A test tool for receive stamps (tests/test_bpf_ttft.sh); root only.

  clockstep.py [--step-us 4000] [--every-ms 150] [--log FILE]

--log writes a line per step: its CLOCK_MONOTONIC bounds and the move it
made (ns), which differs from --step-us by the time between its reading and
its setting of the clock.
"""
import argparse
import random
import signal
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--step-us", type=int, default=4000)
    ap.add_argument("--every-ms", type=int, default=150)
    ap.add_argument("--log", help="write each step's CLOCK_MONOTONIC bounds and size (ns) here")
    a = ap.parse_args()
    if a.step_us <= 0 or a.every_ms <= 0:
        sys.exit("clockstep.py: --step-us and --every-ms must be positive")
    step = a.step_us * 1000
    behind = [False]
    steps = [0]

    log = open(a.log, "w") if a.log else None

    def move(ns):
        lo = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        off = time.clock_gettime_ns(time.CLOCK_REALTIME) - lo
        now = time.clock_gettime_ns(time.CLOCK_REALTIME)
        time.clock_settime_ns(time.CLOCK_REALTIME, now + ns)
        hi = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if log:
            moved = time.clock_gettime_ns(time.CLOCK_REALTIME) - hi - off
            print(lo, hi, moved, file=log, flush=True)

    def stop(*_):
        if behind[0]:
            move(step)
        print(f"clockstep.py: {steps[0]} steps of {a.step_us} us", file=sys.stderr)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        while True:
            time.sleep(a.every_ms * random.uniform(0.5, 1.5) / 1000)
            # no signal between the step and its note: the clock is put back
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
            move(step if behind[0] else -step)
            behind[0] = not behind[0]
            steps[0] += 1
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    except PermissionError:
        sys.exit("clockstep.py: setting CLOCK_REALTIME needs root")


if __name__ == "__main__":
    main()
