"""Target: becomes ready, keeps busy for about a second, then exits by itself.

Used to read a process that goes away in the middle of a read.  Some
daemon threads keep calling, recursing and allocating until the very end,
so the interpreter is finalized while they still run and the stacks being
read change all the time.
"""

import threading
import time

from _fptarget import name_os_thread, signal_ready

BUSY_SECONDS = 1.0


def churn(depth):
    if depth:
        return churn(depth - 1) + [depth]
    return [str(i) for i in range(50)]


def worker():
    name_os_thread()
    while True:
        churn(30)


def main():
    for i in range(3):
        threading.Thread(target=worker, name="churn-%d" % i, daemon=True).start()
    signal_ready()
    deadline = time.monotonic() + BUSY_SECONDS
    while time.monotonic() < deadline:
        churn(60)


if __name__ == "__main__":
    main()
