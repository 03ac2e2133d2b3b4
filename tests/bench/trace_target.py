"""Target of tests/bench/trace.sh: a thread measures, round after round,
one call of entry() (1,000 calls of work(), about 5 us each, calibrated
again each round: the function
the benchmark traces), the same body as same() (never traced), and the
per-call cost of tiny() made 20,000 times by tiny_entry() (traced in the
second part) and by tiny_same() (never traced); it prints one line per
round: "round N entry NS same NS tiny NS tinysame NS other NS" (CPU ns of
the thread per entry call; per tiny call).  "other" is what an unobserved
thread pays: the median ns per call of tiny_other(), made in batches by a
thread of its own that is never traced, while the rest runs (and while
hold(), a 5 s call on a third thread, is traced: trace's frame evaluator
is then installed all along).  The main thread parks in time.sleep."""

import sys
import threading
import time

CALLS = 1000
TINY = 20000
SPIN = 1


def work():
    x = 0
    for i in range(SPIN):
        x += i
    return x


def entry():
    for _ in range(CALLS):
        work()


def same():
    for _ in range(CALLS):
        work()


def tiny(x):
    return x


def tiny_entry():
    for i in range(TINY):
        tiny(i)


def tiny_same():
    for i in range(TINY):
        tiny(i)


def tiny_other():
    for i in range(TINY):
        tiny(i)


def hold():
    for _ in range(200):
        time.sleep(0.025)


OTHER = []     # ns per call of tiny_other's batches since the last round


def other():
    while True:
        OTHER.append(timed(tiny_other) / TINY)
        time.sleep(0.002)


def holder():
    while True:
        hold()


# The thread's own CPU time: on a loaded machine, time spent descheduled
# would swamp a 5 % difference.
clock = time.thread_time_ns


def timed(fn):
    t0 = clock()
    fn()
    return clock() - t0


def calibrate():
    """SPIN such that one work() takes about 5 us."""
    global SPIN
    SPIN = 50
    while True:
        t = min(timed(work) for _ in range(200))
        if t >= 5000 or SPIN > 10 ** 6:
            return
        SPIN = int(SPIN * 5000 / max(t, 1)) + 1


def measure():
    n = 0
    while True:
        n += 1
        # Again each round: this VM's speed moves by up to 2x within a run,
        # and a work() of 3 us would show a fixed cost per call as 5/3 more.
        calibrate()
        e = s = 0
        for _ in range(5):  # interleaved, so that drift hits both alike
            e += timed(entry)
            s += timed(same)
        t = timed(tiny_entry) / TINY
        ts = timed(tiny_same) / TINY
        o = sorted(OTHER)
        del OTHER[:]
        sys.stdout.write("round %d entry %.0f same %.0f tiny %.1f tinysame %.1f other %.1f\n"
                         % (n, e / 5, s / 5, t, ts, o[len(o) // 2] if o else 0))
        sys.stdout.flush()
        time.sleep(0.02)


threading.Thread(target=measure, daemon=True).start()
threading.Thread(target=other, daemon=True).start()
threading.Thread(target=holder, daemon=True).start()
while True:
    time.sleep(3600)
