"""Target of tests/agent/test_watch_calls.py: the shapes of call that the
observation's fast path (3.12+: agent C callbacks, inject/agent/monfast.c;
before: the __code__ trampoline) must capture exactly as they were made:
every kind of parameter, a parameter closed over by an inner function,
a raising function, recursion, a generator and a coroutine whose bodies
take a known least time, and two threads calling one function in lock
step.  Threads call them forever; the main thread parks in time.sleep.
hold()/unhold() keep a call of held() running while a watch ends.
burst() calls flood() faster than any watch can show.
nap() and rest() sleep 100 ms, naps() calls rest() twice; napper() times
nap() and naps() with the program's own clock (NAPS, nap_span()).
park()/release() leave a generator started (its call in flight) and drop
it, to check that an observation keeps nothing of a call after it ends.
Nothing is printed.  Runs on CPython 3.8 and later."""

import asyncio
import gc
import os
import sys
import threading
import time
import weakref

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets"))
from _fptarget import Spot, announce_when_parked, hooks_snapshot  # noqa: E402
from _fptarget import hooks_left as _hooks_left  # noqa: E402


def sig(a, b=2, *rest, k, kk=5, **extra):
    return a + b + len(rest) + k + kk + len(extra)


def posonly(x, /, y=10):
    return x + y


def cell(x):
    return (lambda: x)()    # x is a cell: the callback must see its value


def boom(n):
    raise KeyError(n)


def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


def slow_gen():
    time.sleep(0.02)
    yield 1
    time.sleep(0.02)
    yield 2


async def slow_coro():
    await asyncio.sleep(0.03)
    return "coro-done"


def tagged(who):
    return who


def parked(token):
    yield token


def held(x):
    _held["in"].set()
    _held["go"].wait()
    return x


def hold():
    """A call of held() in flight on a thread of its own, until unhold()."""
    _held.update({"in": threading.Event(), "go": threading.Event(), "out": []})
    t = threading.Thread(target=lambda: _held["out"].append(held(7)), name="holder")
    _held["thread"] = t
    t.start()
    _held["in"].wait()
    return "held"


def unhold():
    _held["go"].set()
    _held["thread"].join()
    return _held["out"]


def flood(i):
    return i


def burst(n):
    """n calls of flood() without letting another thread run: a watch's
    worker cannot empty the queue meanwhile, so most are dropped."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        return sum(flood(i) for i in range(n))
    finally:
        sys.setswitchinterval(old)


class Token(object):
    pass


ORIGINALS = hooks_snapshot(globals(), ["sig", "posonly", "cell", "boom", "fact", "slow_gen",
                                       "slow_coro", "tagged", "parked", "flood", "held"], [])
_parked = {}
_held = {}


def hooks_left():
    return _hooks_left(globals(), ORIGINALS)


def park():
    """A call of parked() in flight: started, never finished."""
    tok = Token()
    g = parked(tok)
    next(g)
    _parked["g"], _parked["ref"] = g, weakref.ref(tok)


def release():
    """Drop the parked call: "freed" when nothing else kept its argument."""
    ref = _parked.pop("ref")
    del _parked["g"]
    gc.collect()
    return "freed" if ref() is None else "kept"


NAPS = []      # (name, ns) of the last calls of nap() and naps(), timed by napper()


def nap():
    time.sleep(0.1)


def rest():
    time.sleep(0.1)


def naps():
    rest()
    rest()


def nap_span(name):
    """The longest of the last calls of name, in ms, on time.monotonic_ns()."""
    return max(ns for n, ns in NAPS if n == name) / 1e6


def napper():
    while True:
        for fn in (nap, naps):
            t0 = time.monotonic_ns()
            fn()
            NAPS.append((fn.__name__, time.monotonic_ns() - t0))
        del NAPS[:-40]


def calls():
    i = 0
    while True:
        i += 1
        sig(i, 2, 3, 4, k=6, z=7)
        posonly(i)
        cell(i)
        try:
            boom(i)
        except KeyError:
            pass
        fact(4)
        for _ in parked(Token()):
            pass
        time.sleep(0.005)


def slow():
    loop = asyncio.new_event_loop()
    while True:
        for _ in slow_gen():
            pass
        loop.run_until_complete(slow_coro())


def lockstep(who, mine, theirs):
    while True:
        mine.wait()
        mine.clear()
        time.sleep(0.002)
        tagged(who)
        theirs.set()


def main():
    a, b = threading.Event(), threading.Event()
    for fn, args in ((calls, ()), (slow, ()), (lockstep, ("a", a, b)), (lockstep, ("b", b, a)),
                     (napper, ())):
        threading.Thread(target=fn, args=args, daemon=True).start()
    a.set()
    here = os.path.abspath(__file__)
    announce_when_parked([Spot(threading.main_thread(), here, "main")])
    while True:
        time.sleep(3600)  # @main


if __name__ == "__main__":
    main()
