"""Target of the watch suite: a "driver" thread calls functions of every
kind (module function, raising function, method, staticmethod, classmethod,
coroutine, generator, a function that mutates its argument, one returning
a huge recursive value) every few milliseconds, forever; the main thread
parks in time.sleep.  ORIGINALS keeps the objects as they were at start so
that a test can check from inside that a watch left nothing behind
(hooks_left()).  Nothing is printed.  Runs on CPython 3.8 and later.
"""

import asyncio
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets"))
from _fptarget import Spot, announce_when_parked  # noqa: E402


def add(a, b):
    return a + b


def maybe_fail(n):
    if n % 2:
        raise ValueError("odd %d" % n)
    return n


def mutate(items):
    items.append("mutated")
    return len(items)


def huge():
    v = {"list": list(range(5000)), "text": "y" * 100000}
    v["self"] = v
    return v


class Calc(object):
    def mul(self, x, y=2):
        return x * y

    @staticmethod
    def neg(x):
        return -x

    @classmethod
    def named(cls, x):
        return "%s%d" % (cls.__name__, x)


async def acoro(x):
    await asyncio.sleep(0)
    return x * 10


def gen(n):
    for i in range(n):
        yield i
    return "gen-done"


CALC = Calc()
ORIGINALS = {"add": add, "maybe_fail": maybe_fail, "mutate": mutate, "huge": huge,
             "acoro": acoro, "gen": gen}
ORIGINAL_CLASS = dict(Calc.__dict__)


def hooks_left():
    """Names whose attribute is no longer the very object it was at start."""
    g = globals()
    left = [n for n, f in ORIGINALS.items() if g[n] is not f]
    left += ["Calc." + n for n, f in ORIGINAL_CLASS.items() if Calc.__dict__.get(n) is not f]
    left += ["Calc." + n for n in Calc.__dict__ if n not in ORIGINAL_CLASS]
    return left


def drive():
    loop = asyncio.new_event_loop()
    i = 0
    while True:
        i += 1
        add(i, 1)
        try:
            maybe_fail(i)
        except ValueError:
            pass
        mutate([i])
        CALC.mul(i, y=3)
        Calc.neg(i)
        Calc.named(i)
        loop.run_until_complete(acoro(i))
        for _ in gen(2):
            pass
        if i % 10 == 0:
            huge()
        time.sleep(0.005)


def main():
    threading.Thread(target=drive, name="driver", daemon=True).start()
    here = os.path.abspath(__file__)
    announce_when_parked([Spot(threading.main_thread(), here, "main")])
    while True:
        time.sleep(3600)  # @main


if __name__ == "__main__":
    main()
