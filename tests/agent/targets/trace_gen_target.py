"""Target of the trace suite's generator and coroutine tests: the main
thread consumes gen() with a for loop, doing its own calls and a 100 ms
sleep between items; an "aio" thread runs an event loop where coro(), which
awaits asyncio.sleep(0) three times, runs beside other(), another task
whose calls run between coro's awaits.  A trace of gen or coro must hold
the calls made inside them across every yield and await, and none of the
consumer's.  A "starter" thread takes the first two items of handed(4)
and hands it to a "finisher" thread that takes the rest.  Every thread notes when it finds a profile hook set outside
a traced call (seen_hooks).  Nothing is printed.  Runs on CPython 3.8 and
later.
"""

import asyncio
import os
import queue
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets"))
from _fptarget import Spot, announce_when_parked, hooks_snapshot  # noqa: E402
from _fptarget import hooks_left as _hooks_left  # noqa: E402
from trace_target import note, seen_hooks  # noqa: E402,F401  (the same checks)

STATE = {"gen_loops": 0, "gen_wrong": 0, "aio_loops": 0, "aio_wrong": 0, "hooked_between": 0,
         "handed_loops": 0, "handed_wrong": 0}
# From 3.12 a traced generator's thread is unhooked while it is suspended.
UNHOOKED_BETWEEN = sys.version_info >= (3, 12)
PAUSE = 0.1   # the consumer's time between two items of gen()


def inner(i):
    return i + 1


def consumer_work(x):
    return x * 3


def gen(n):
    for i in range(n):
        yield inner(i)  # @gen_inner
    inner(-1)  # @gen_tail


async def coro(n):
    for i in range(n):
        inner(i)  # @coro_inner
        await asyncio.sleep(0)  # @coro_await
    inner(-1)  # @coro_tail
    return n


def handed(n):
    for i in range(n):
        yield inner(i)  # @handed_inner


async def other():
    for _ in range(6):
        consumer_work(1)
        await asyncio.sleep(0)


ORIGINALS = hooks_snapshot(globals(), ["gen", "coro", "handed"])


def hooks_left():
    return _hooks_left(globals(), ORIGINALS)


def consume():
    while True:
        got = []
        for x in gen(3):
            got.append(consumer_work(x))
            if UNHOOKED_BETWEEN and sys.getprofile() is not None:
                STATE["hooked_between"] += 1
            time.sleep(PAUSE)  # @pause
        if got != [3, 6, 9]:
            STATE["gen_wrong"] += 1
        note("consume")
        STATE["gen_loops"] += 1


async def aio_main():
    while True:
        r = await asyncio.gather(coro(3), other())
        if r != [3, None]:
            STATE["aio_wrong"] += 1
        note("aio")
        STATE["aio_loops"] += 1
        await asyncio.sleep(0.005)


def aio():
    asyncio.run(aio_main())


HANDOFF, DONE = queue.Queue(), queue.Queue()


def starter():
    while True:
        g = handed(4)
        got = [next(g), next(g)]
        HANDOFF.put((g, got))
        DONE.get()
        note("starter")
        time.sleep(0.02)


def finisher():
    while True:
        g, got = HANDOFF.get()
        got += list(g)
        if got != [1, 2, 3, 4]:
            STATE["handed_wrong"] += 1
        note("finisher")
        STATE["handed_loops"] += 1
        DONE.put(None)


def main():
    for fn in (aio, starter, finisher):
        threading.Thread(target=fn, name=fn.__name__, daemon=True).start()
    here = os.path.abspath(__file__)
    announce_when_parked([Spot(threading.main_thread(), here, "pause")])
    consume()


if __name__ == "__main__":
    main()
