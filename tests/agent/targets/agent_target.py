"""Target of the agent suite: globals of every awkward kind, classes with
instances, named threads with locals, an asyncio loop with named tasks.

Every thread parks in a call the injector can interrupt safely (sleep,
epoll_wait): the main thread in time.sleep.  Nothing is printed, unless
AGENT_TARGET_TICKS=1 asks a "ticker" thread to print "tick N" lines (for
the test that the agent's output capture leaves other threads' prints
alone).  Runs on CPython 3.8 and later.
"""

import asyncio
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets"))
from _fptarget import Spot, announce_when_parked  # noqa: E402

G_LIST = list(range(25))
G_NESTED = {"a": [1, 2, {"deep": [3, 4]}], "b": (5,), "c": "text"}
G_RECURSIVE = [1, 2]
G_RECURSIVE.append(G_RECURSIVE)
G_RECURSIVE_DICT = {"name": "loop"}
G_RECURSIVE_DICT["self"] = G_RECURSIVE_DICT
G_HUGE = list(range(1000000))
G_BIGSTR = "x" * (8 * 1024 * 1024)
G_SURROGATE = b"caf\xe9 \xff".decode("utf-8", "surrogateescape")
G_UNICODE = "h\u00e9llo w\u00f6rld \u2713"
INTERRUPTED = False


class BadRepr(object):
    def __repr__(self):
        raise ValueError("repr is broken")


G_BAD = BadRepr()
G_BAD_LIST = [BadRepr(), 1]


class Config(object):
    settings = {"debug": True, "level": 3}
    name = "cfg"

    class Inner(object):
        value = "inner-value"


class Base(object):
    def __init__(self, v):
        self.v = v
        self.tag = "t%d" % v


class Child(Base):
    pass


class Slotted(object):
    __slots__ = ("x", "__y")

    def __init__(self):
        self.x = 1
        self.__y = 2


INSTANCES = [Base(1), Base(2), Child(3)]
G_SLOTTED = Slotted()


def worker():
    secret = "locals-visible"
    count = 42
    while True:
        time.sleep(3600)  # @worker
    return secret, count


async def sleeper():
    await asyncio.sleep(3600)  # @task-a


async def waiter(event):
    await event.wait()  # @task-b


def run_loop():
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    event = asyncio.Event()
    loop.create_task(sleeper(), name="fp-task-a")
    loop.create_task(waiter(event), name="fp-task-b")
    loop.run_forever()  # @loop


def ticker():
    n = 0
    while True:
        n += 1
        print("tick %d" % n, flush=True)
        time.sleep(0.02)


def tasks_started():
    return None if TASKS_READY.is_set() else "asyncio tasks not started"


TASKS_READY = threading.Event()


def main():
    w = threading.Thread(target=worker, name="py-worker", daemon=True)
    w.start()
    lt = threading.Thread(target=run_loop, name="loop-thread", daemon=True)
    lt.start()
    if os.environ.get("AGENT_TARGET_TICKS") == "1":
        threading.Thread(target=ticker, name="ticker", daemon=True).start()
    TASKS_READY.set()
    here = os.path.abspath(__file__)
    announce_when_parked([Spot(threading.main_thread(), here, "main"),
                          Spot(w, here, "worker"), Spot(lt, here, "loop")], tasks_started)
    while True:
        time.sleep(3600)  # @main


if __name__ == "__main__":
    main()
