"""Target of the tt suite: a "driver" thread calls, every few
milliseconds, the kinds of function tt records: the guide's func(query)
taking a dict, a method A.func, a function that raises on odd numbers, a
coroutine, a function returning a big value (for the store's byte bound)
and keep(items), whose list the driver changes AFTER the call (so that a
replay sees arguments mutated since recording).  `counts` says how often
each function ran, replays included: a test checks a replay from inside.
The main thread parks in time.sleep.  Nothing is printed.  CPython 3.8+.
"""

import asyncio
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets"))
from _fptarget import Spot, announce_when_parked  # noqa: E402

counts = {}
KEPT = []


def _count(name):
    counts[name] = counts.get(name, 0) + 1


def func(query):
    _count("func")
    return {"success": query["n"] % 2 == 0, "echo": query["query"]}


class A(object):
    def __init__(self):
        self.calls = 0

    def func(self, x, scale=2):
        self.calls += 1
        _count("A.func")
        return x * scale


def boom(n):
    _count("boom")
    if n % 2:
        raise ValueError("odd %d" % n)
    return n


async def acoro(x):
    _count("acoro")
    await asyncio.sleep(0)
    return x * 10


def big(n):
    _count("big")
    return b"x" * 200000


def keep(items):
    _count("keep")
    return len(items)


ORIGINALS = {"func": func, "boom": boom, "acoro": acoro, "big": big, "keep": keep}
ORIGINAL_A = dict(A.__dict__)


ORIGINAL_CODES = dict([(n, f.__code__) for n, f in ORIGINALS.items()] +
                      [("A.func", A.func.__code__)])


def _observed(name, fn):
    """fn observed at its code: its __code__ swapped (3.8-3.11), or local
    sys.monitoring events on it under some tool (3.12+)."""
    code = fn.__code__
    if code is not ORIGINAL_CODES[name]:
        return True
    mon = getattr(sys, "monitoring", None)
    return mon is not None and any(mon.get_tool(t) is not None and mon.get_local_events(t, code)
                                   for t in range(6))


def hooks_left():
    """Names whose attribute is no longer the very object it was at start,
    or whose code is observed."""
    g = globals()
    left = [n for n, f in ORIGINALS.items() if g[n] is not f or _observed(n, f)]
    left += ["A." + n for n, f in ORIGINAL_A.items() if A.__dict__.get(n) is not f]
    if "A.func" not in left and _observed("A.func", A.func):
        left.append("A.func")
    return left


def drive():
    loop = asyncio.new_event_loop()
    a = A()
    i = 0
    while True:
        i += 1
        func({"query": "hello" if i % 3 == 0 else "other", "n": i})
        a.func(i, scale=3)
        try:
            boom(i)
        except ValueError:
            pass
        loop.run_until_complete(acoro(i))
        if i % 5 == 0:
            big(i)
        items = [i]
        keep(items)
        items.append("changed after the call")
        time.sleep(0.004)


def main():
    threading.Thread(target=drive, name="driver", daemon=True).start()
    here = os.path.abspath(__file__)
    announce_when_parked([Spot(threading.main_thread(), here, "main")])
    while True:
        time.sleep(3600)  # @main


if __name__ == "__main__":
    main()
