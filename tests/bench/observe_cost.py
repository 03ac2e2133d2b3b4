"""tests/bench/observe_cost.py — the observation mechanism alone, no agent
and no worker: ns per call of a tiny function observed by
inject/agent/observe.py with watch's default capture (enter/leave as
helper.py's _make_hooks builds them), next to the same function
unobserved and under a plain Python decorator doing the same capture;
best of 5 rounds of 200,000 calls each, all in this process.  Prints one
line.  watch.sh runs it beside the end-to-end numbers, which also pay for
the worker formatting records on the target's GIL."""

import collections
import os
import sys
import time
from time import monotonic_ns as _ns

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _capture import capture  # noqa: E402  the decorator watch.sh compares with

SOURCE = os.path.join(HERE, "..", "..", "inject", "agent", "observe.py")


class WatchError(Exception):
    pass


def load():
    ns = {"__name__": "observe_bench", "__file__": "<flight_profiler agent>",
          "WatchError": WatchError, "sys": sys}
    with open(SOURCE) as f:
        exec(compile(f.read(), "<flight_profiler agent>", "exec"), ns)
    return ns


def hooks(q):
    def enter(args, kwargs):
        return (args, kwargs, _ns())

    def leave(st, ret, exc):
        t0 = st[2]
        if len(q) < 1024:
            q.append(("tiny", False, t0, _ns() - t0, st[0], st[1], ret, exc, None))
    return enter, leave


def tiny(x):
    return x + 1


def plain(x):
    return x + 1


def per_call(fn, q=None, n=200000):
    best = None
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for i in range(n):
            fn(i)
        ns = (time.perf_counter_ns() - t0) / n
        best = ns if best is None else min(best, ns)
        if q is not None:
            q.clear()   # the worker's part: keep the queue from filling
    return best


def main():
    ns = load()
    q = collections.deque()
    base = per_call(plain)
    deco = per_call(capture(plain))
    h = ns["observe_install"](tiny, *hooks(q))
    observed = per_call(tiny, q)
    ns["observe_remove"](h)
    after = per_call(tiny)
    print("%s (%s): plain %.0f ns, decorator %.0f ns (+%.0f), observed %.0f ns (+%.0f), "
          "after %.0f ns; observed/decorator added cost %.2f (budget <= 0.50)"
          % (sys.version.split()[0], ns["observe_status"]()["mechanism"], base, deco,
             deco - base, observed, observed - base, after, (observed - base) / (deco - base)))


if __name__ == "__main__":
    main()
