"""Target of the watch suite: a "driver" thread calls functions of every
kind (module function, raising function, method, staticmethod, classmethod,
coroutine, generator, a function that mutates its argument, one returning
a huge recursive value, a nested function, a decorated one, and through
references stored before any watch: a callback, a bound method, a
functools.partial) every few milliseconds, forever; the main thread
parks in time.sleep.  ORIGINALS keeps the objects as they were at start so
that a test can check from inside that a watch left nothing behind
(hooks_left()).  Nothing is printed.  Runs on CPython 3.8 and later.
"""

import asyncio
import functools
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets"))
from _fptarget import Spot, announce_when_parked, hooks_snapshot  # noqa: E402
from _fptarget import hooks_left as _hooks_left  # noqa: E402


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

    def tick(self, via):
        return via

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


def hit(x, via):
    return via


def outer(n):
    def inner(k):
        return k + n
    return inner(1) * 2


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@logged
def decorated(x):
    return x + 100


def on_demand(x):
    """Called by nobody here: a test calls it (from the console) when it
    wants a call, so an observation of it waits until then."""
    return add(x, 1)


CALC = Calc()
# Tool ids this program holds itself (FP_TAKE_TOOLS="0,1,..."): a watch must
# take another one and leave these alone.
TAKEN = [int(t) for t in os.environ.get("FP_TAKE_TOOLS", "").split(",") if t]
for _t in TAKEN:
    sys.monitoring.use_tool_id(_t, "program-%d" % _t)
ORIGINALS = hooks_snapshot(globals(), ["add", "maybe_fail", "mutate", "huge", "acoro", "gen",
                                       "outer", "decorated", "hit", "on_demand"], ["Calc"])
# References taken before any watch: a stored callback, a bound method, a
# partial.  Observation must see calls made through them too.
# Nothing calls hit or Calc.tick by its name.
CALLBACKS = {"hit": hit, "bound": CALC.tick, "partial": functools.partial(hit, via="partial")}


def hooks_left():
    """What a watch may have left (_fptarget.hooks_left): attributes or code
    objects that are not the very objects they were at start, sys.monitoring
    tool ids held by anyone but this program."""
    return _hooks_left(globals(), ORIGINALS)


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
        outer(i)
        decorated(i)
        CALLBACKS["hit"](i, "callback")
        CALLBACKS["bound"]("bound")
        CALLBACKS["partial"](i)
        time.sleep(0.005)


def main():
    threading.Thread(target=drive, name="driver", daemon=True).start()
    here = os.path.abspath(__file__)
    announce_when_parked([Spot(threading.main_thread(), here, "main")])
    while True:
        time.sleep(3600)  # @main


if __name__ == "__main__":
    main()
