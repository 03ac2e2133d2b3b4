"""The plain Python decorator that watch's benchmarks compare with: it
captures what watch captures (arguments, result, a monotonic time and the
cost) into a bounded deque.  Used by watch_target.py and observe_cost.py."""

import collections
import functools
import time


def capture(fn):
    q = collections.deque(maxlen=1024)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0 = time.monotonic_ns()
        r = fn(*args, **kwargs)
        q.append((t0, time.monotonic_ns() - t0, args, kwargs, r))
        return r
    return wrapper
