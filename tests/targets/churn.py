"""Target: one thread, "churn", that never stops changing its stack.

What it does depends on the environment variable CHURN:

    genexpr    sum(x * x for x in xs), three calls deep (level1 -> level2 ->
               level3), again and again: the <genexpr> frame is resumed and
               suspended by sum() hundreds of thousands of times a second
    coroutine  an asyncio loop runs the coroutines level1 -> level2 -> level3;
               level3 computes a little, then awaits asyncio.sleep(0), so the
               task is suspended and resumed on every round of the loop
    recursion  level1 -> level2 -> level3 calls recurse(), which goes 30
               calls deep and returns, again and again
    threads    level1 -> level2 -> level3 starts short-lived threads, one
               after another, each recursing 10 calls deep and ending: a
               reader meets threads that end while it reads them

The stack of "churn" is therefore always its thread bootstrap, then (while
the workload runs) level1, level2, level3 in that order, then frames of the
workload only.  A reader that sees level3 without level2 and level1 below
it, or frames that belong to none of these, has read a torn stack.

The main thread parks in join(); "ready" is written once the churn thread
is inside level3.  With CHURN_IN=main the main thread itself is "churn"
(its stack then ends in churn main <module>): CPython 3.11.7 keeps its
main thread's state in static data across a page boundary, and a
sampler reads that state differently.  CPython 3.8+.
"""

import asyncio
import os
import threading

from _fptarget import Spot, announce_when_parked, name_os_thread

MODE = os.environ.get("CHURN", "genexpr")
DEPTH = 30
STARTED = threading.Event()
XS = list(range(200))


# ---- genexpr -------------------------------------------------------------------

def genexpr_level1():
    genexpr_level2()


def genexpr_level2():
    genexpr_level3()


def genexpr_level3():
    STARTED.set()
    while True:
        sum(x * x for x in XS)  # @genexpr


# ---- coroutine -----------------------------------------------------------------

async def coroutine_level1():
    await coroutine_level2()


async def coroutine_level2():
    await coroutine_level3()


async def coroutine_level3():
    STARTED.set()
    while True:
        total = 0
        for x in XS:
            total += x * x  # @coroutine
        await asyncio.sleep(0)


def coroutine_run():
    asyncio.run(coroutine_level1())


# ---- recursion -----------------------------------------------------------------

def recurse(depth):
    if depth > 0:
        return recurse(depth - 1)
    return sum(XS)  # @recurse


def recursion_level1():
    recursion_level2()


def recursion_level2():
    recursion_level3()


def recursion_level3():
    STARTED.set()
    while True:
        recurse(DEPTH)


# ---- threads --------------------------------------------------------------------

def short_lived():
    recurse(10)


def threads_level1():
    threads_level2()


def threads_level2():
    threads_level3()


def threads_level3():
    STARTED.set()
    while True:
        thread = threading.Thread(target=short_lived, name="short")
        thread.start()
        thread.join()


WORKLOADS = {
    "genexpr": genexpr_level1,
    "coroutine": coroutine_run,
    "recursion": recursion_level1,
    "threads": threads_level1,
}


def churn():
    name_os_thread()
    WORKLOADS[MODE]()


def main():
    if os.environ.get("CHURN_IN") == "main":
        threading.current_thread().name = "churn"
        announce_when_parked([], lambda: None if STARTED.is_set() else "churn not started")
        churn()
        return
    thread = threading.Thread(target=churn, name="churn", daemon=True)
    joined = Spot(threading.main_thread(), __file__, "join")
    announce_when_parked([joined], lambda: None if STARTED.is_set() else "churn not started")
    thread.start()
    thread.join()  # @join


if __name__ == "__main__":
    main()
