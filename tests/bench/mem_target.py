"""Target of tests/bench/mem.sh: 1,000,000 tracked objects, a baseline
pure-Python pass (gc.get_objects() + sys.getsizeof) timed in this process,
and a ticker thread whose ticks show whether it keeps running."""

import gc
import sys
import threading
import time


class Small:
    __slots__ = ("v",)


HELD = [Small() for _ in range(1000000)]
TICKS = 0
MAX_GAP_MS = 0.0


def baseline():
    t = time.perf_counter()
    sizes = {}
    for o in gc.get_objects():
        name = type(o).__name__
        n, s = sizes.get(name, (0, 0))
        sizes[name] = (n + 1, s + sys.getsizeof(o))
    return (time.perf_counter() - t) * 1000


def ticker():
    global TICKS, MAX_GAP_MS
    last = time.perf_counter()
    while True:
        time.sleep(0.001)
        now = time.perf_counter()
        MAX_GAP_MS = max(MAX_GAP_MS, (now - last) * 1000)
        last = now
        TICKS += 1


BASELINE_MS = min(baseline() for _ in range(3))
threading.Thread(target=ticker, daemon=True).start()
sys.stdout.write("ready %.1f\n" % BASELINE_MS)
sys.stdout.flush()
while True:
    time.sleep(3600)
