"""Target of the trace suite: a "driver" thread calls func() (a call tree
with known repeats: leaf five times at one site inside work, three times at
one site in func) and uses json.dumps, checking every result; a "looper"
thread calls long_call(), which runs for seconds; a "napper" thread calls
nap(), 3 s in one time.sleep; a "bystander" thread
only loops; an "own" thread calls func() under a profiler of its own
(sys.setprofile), which a trace must leave alone.  Every thread notes when it finds a profile hook
or trace's frame evaluator set outside a traced call (seen_hooks), so a test can check from inside that a trace
left nothing behind.  Nothing is printed.  Runs on CPython 3.8 and later.
"""

import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets"))
from _fptarget import Spot, announce_when_parked, default_frame_evaluator, hooks_snapshot  # noqa: E402
from _fptarget import hooks_left as _hooks_left  # noqa: E402

PAYLOAD = {"a": [1, 2, 3], "b": {"c": "d"}}
EXPECTED = json.dumps(PAYLOAD)
STATE = {"loops": 0, "json_calls": 0, "json_wrong": 0, "in_long": False, "long_started": 0,
         "long_profile": False, "long_eval": False, "naps": 0}
SEEN = set()


def leaf(i):
    return i * 2


def work(n):
    s = 0
    for i in range(n):
        s += leaf(i)  # @leaf5
    return s


def func():
    work(5)  # @work
    time.sleep(0.002)  # @sleep
    for _ in range(3):
        leaf(1)  # @leaf3
    return 1


def outer(n):
    def inner(k):
        work(k)  # @nestedwork
        return k
    return inner(n)  # @inner


def slowish(n):
    if n % 4 == 0:
        time.sleep(0.004)
    return n


def use_json():
    STATE["json_calls"] += 1
    if json.dumps(PAYLOAD) != EXPECTED:
        STATE["json_wrong"] += 1


def long_call():
    STATE["long_started"] += 1
    end = time.monotonic() + 4
    while time.monotonic() < end:
        leaf(1)
        STATE["in_long"] = hooked()
        # Which mechanism records this call (tests of trace's eval path).
        STATE["long_profile"] = sys.getprofile() is not None
        STATE["long_eval"] = not default_frame_evaluator()
        time.sleep(0.001)
    STATE["in_long"] = False


def nap():
    """3 s in one builtin: no Python frame starts or ends meanwhile."""
    STATE["naps"] += 1
    time.sleep(3)


ORIGINALS = hooks_snapshot(globals(), ["func", "outer", "slowish", "long_call", "nap",
                                       "json.dumps"])


def hooks_left():
    return _hooks_left(globals(), ORIGINALS)


def seen_hooks():
    """Threads that found a profile hook set outside a traced call; reset."""
    out = sorted(SEEN)
    SEEN.clear()
    return out


def hooked():
    """Does this thread pay for a trace: a profile hook, or trace's frame
    evaluator (3.10+'s eval path, process-wide while a traced call runs)?"""
    return sys.getprofile() is not None or not default_frame_evaluator()


def note(name):
    if hooked():
        SEEN.add(name)


def drive():
    i = 0
    while True:
        i += 1
        func()
        outer(3)
        slowish(i)
        use_json()
        note("driver")
        STATE["loops"] += 1
        time.sleep(0.003)


def loop_long():
    while True:
        long_call()
        note("looper")


OWN = {"events": 0, "kept": True}


def own_profiler(frame, event, arg):
    OWN["events"] += 1


def own():
    sys.setprofile(own_profiler)
    while True:
        func()
        OWN["kept"] = OWN["kept"] and sys.getprofile() is own_profiler
        time.sleep(0.003)


def napper():
    while True:
        nap()


def bystander():
    while True:
        leaf(2)
        note("bystander")
        time.sleep(0.002)


def main():
    for fn in (drive, loop_long, bystander, own, napper):
        threading.Thread(target=fn, name=fn.__name__, daemon=True).start()
    here = os.path.abspath(__file__)
    announce_when_parked([Spot(threading.main_thread(), here, "main")])
    # SIGUSR1 ends the program normally (test_trace_program_exits_mid_trace);
    # not SIGINT: a shell without job control starts a background job with
    # SIGINT ignored, and Python then leaves it ignored.
    signal.signal(signal.SIGUSR1, lambda *args: sys.exit(0))
    while True:
        time.sleep(3600)  # @main
        note("main")


if __name__ == "__main__":
    main()
