"""Target for the sampler: busy threads whose time is known by the work
they do, not by the clock.  FP_HOT chooses:

    split    one thread "busy" that loops: a() then b(), a() doing 7 units
             of the same work b() does 3 of — 70 % / 30 % of its samples
    deep     one thread "deep" recursing 200 levels (rec) and then working
             forever at the bottom
    threads  three busy threads "busy-0..2" and a "sleeper" in time.sleep
    gil      "py" works in pure Python (holds the GIL); "nogil" hashes a
             large buffer in a loop (hashlib lets go of the GIL meanwhile)
    renamed  one thread "renamed" that compiles a function anew for each
             round of the same work, named round_a, round_b and round_c
             by turns, and drops it: the new code object mostly takes a
             freed one's address (a cached code object replaced; 3.11
             takes two addresses by turns, hence three names)

The main thread waits on an Event in every mode.  Every function that can
be sampled is a closure too (outer.<locals>.inner), so qualified names
carry the characters < and > that XML and JSON writers must escape.
"""

import hashlib
import os
import sys
import threading
import time

from _fptarget import Spot, announce_when_parked, name_os_thread, signal_ready

NEVER = threading.Event()
UNIT = 2000


def work(units):
    x = 0
    for _ in range(units * UNIT):
        x += 1
    return x


def make_ab():
    def a():
        work(7)

    def b():
        work(3)
    return a, b


A, B = make_ab()


def busy():
    name_os_thread()
    while True:
        A()
        B()


def rec(depth):
    if depth == 0:
        while True:
            work(1)
    rec(depth - 1)


def deep():
    name_os_thread()
    rec(200)


def sleeper():
    name_os_thread()
    while True:
        time.sleep(3600)


def nogil():
    name_os_thread()
    data = b"x" * (8 << 20)
    while True:
        hashlib.sha256(data).digest()


ROUND_SRC = "def round_%s():\n    work(%d)\n"


def renamed():
    name_os_thread()
    n = 0
    while True:
        scope = {"work": work}
        name = "abc"[n % 3]
        exec(compile(ROUND_SRC % (name, 1000), "<round>", "exec"), scope)
        scope["round_" + name]()
        scope.clear()   # no cycle through its globals: freed at once, not by gc
        n += 1


def start(target, name):
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()


def main():
    mode = os.environ.get("FP_HOT", "split")
    sys.setrecursionlimit(2000)
    if mode == "split":
        start(busy, "busy")
    elif mode == "deep":
        start(deep, "deep")
    elif mode == "threads":
        for i in range(3):
            start(busy, "busy-%d" % i)
        start(sleeper, "sleeper")
    elif mode == "gil":
        start(busy, "py")
        start(nogil, "nogil")
        # Ready only once main is parked: after signal_ready() it waits
        # for the GIL behind "py" (for milliseconds on a loaded machine)
        # and holds it on its way into wait(), which a GIL-mode sample
        # taken at once then rightly shows.
        announce_when_parked([Spot(threading.main_thread(), __file__, "wait")])
        NEVER.wait()  # @wait
        return
    elif mode == "renamed":
        start(renamed, "renamed")
    else:
        raise SystemExit("FP_HOT: unknown mode %r" % mode)
    time.sleep(0.2)     # the threads get going (and the sleeper asleep)
    signal_ready()
    NEVER.wait()


if __name__ == "__main__":
    main()
