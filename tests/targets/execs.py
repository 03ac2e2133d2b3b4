"""Target: runs itself again with exec, GENERATIONS times, then exits 0.

Each generation starts a thread that keeps recursing and returning, keeps
busy for a few tens of milliseconds and then execs the interpreter on this
file again: the pid stays, the memory (and with it the Python runtime, at
new addresses) is replaced.  A reader in the middle of a read finds what it
read gone.  "ready" is written by the first generation once its thread runs.
"""

import os
import sys
import threading
import time

from _fptarget import signal_ready

GENERATIONS = 8
BUSY_SECONDS = 0.03
RUNNING = threading.Event()


def churn(depth):
    if depth:
        return churn(depth - 1) + 1
    return 0


def worker():
    RUNNING.set()
    while True:
        churn(20)


def main():
    left = int(sys.argv[1]) if len(sys.argv) > 1 else GENERATIONS
    threading.Thread(target=worker, name="churn", daemon=True).start()
    RUNNING.wait()
    if left == GENERATIONS:
        signal_ready()
    deadline = time.monotonic() + BUSY_SECONDS
    while time.monotonic() < deadline:
        churn(20)
    if left > 0:
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), str(left - 1)])


if __name__ == "__main__":
    main()
