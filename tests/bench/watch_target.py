"""Target of tests/bench/watch.sh: a thread measures, round after round,
the per-call cost of tiny() (the function the benchmark watches), of
plain() (the same body, never watched) and of decorated() (the same body
under a plain Python decorator capturing what watch captures: arguments,
result, a monotonic time, into a bounded deque), and prints one line per
round: "round N tiny NS plain NS decorated NS" (nanoseconds per call).
The main thread parks in time.sleep (a safe point for the injector).
PAUSE set (by observe_cost.py, run inside by `execute`) stops the rounds;
IDLE says they stopped."""

import sys
import threading
import time

from _capture import capture  # the plain decorator watch is compared with

CALLS = 100000
PAUSE = threading.Event()
IDLE = threading.Event()


def tiny(x):
    return x + 1


def plain(x):
    return x + 1


@capture
def decorated(x):
    return x + 1


def per_call(name):
    g = globals()
    t0 = time.perf_counter_ns()
    for i in range(CALLS):
        g[name](i)
    return (time.perf_counter_ns() - t0) / CALLS


def measure():
    n = 0
    while True:
        if PAUSE.is_set():
            IDLE.set()
            time.sleep(0.05)
            continue
        IDLE.clear()
        n += 1
        line = "round %d tiny %.1f plain %.1f decorated %.1f\n" % (
            n, per_call("tiny"), per_call("plain"), per_call("decorated"))
        sys.stdout.write(line)
        sys.stdout.flush()
        time.sleep(0.05)


threading.Thread(target=measure, daemon=True).start()
while True:
    time.sleep(3600)
