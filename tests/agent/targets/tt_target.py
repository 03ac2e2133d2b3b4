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
from _fptarget import Spot, announce_when_parked, hooks_snapshot  # noqa: E402
from _fptarget import hooks_left as _hooks_left  # noqa: E402

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


ORIGINALS = hooks_snapshot(globals(), ["func", "boom", "acoro", "big", "keep"], ["A"])


def hooks_left():
    """Names whose attribute is no longer the very object it was at start,
    or whose code is observed (_fptarget.hooks_left)."""
    return _hooks_left(globals(), ORIGINALS)


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
