"""Target of tests/bench/tt.sh: a thread measures, round after round, the
per-call cost of rec() (the function the benchmark records with tt) and of
plain() (the same body, never recorded), 500 calls of each per round with
small but real arguments (an int, a one-item dict, a one-item list), and
prints "round N rec NS plain NS" (nanoseconds per call).  Rounds are
paced (20 ms apart) so that a recording of 10,000 calls keeps up and
drops nothing.  The main thread parks in time.sleep."""

import sys
import threading
import time

CALLS = 500


def rec(i, opts, items):
    return len(items) + opts["k"] + i


def plain(i, opts, items):
    return len(items) + opts["k"] + i


def per_call(fn):
    t0 = time.perf_counter_ns()
    for i in range(CALLS):
        fn(i, {"k": i}, [i])
    return (time.perf_counter_ns() - t0) / CALLS


def measure():
    n = 0
    g = globals()
    while True:
        n += 1
        line = "round %d rec %.1f plain %.1f\n" % (n, per_call(g["rec"]), per_call(plain))
        sys.stdout.write(line)
        sys.stdout.flush()
        time.sleep(0.02)


if __name__ == "__main__":
    threading.Thread(target=measure, name="measure", daemon=True).start()
    while True:
        time.sleep(3600)
