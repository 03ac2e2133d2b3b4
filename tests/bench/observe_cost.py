"""tests/bench/observe_cost.py — the observation mechanism alone, without
the worker that formats records: run inside watch.sh's target by
`execute` once the agent is loaded.  It pauses the target's rounds, then
measures ns per call of a tiny function observed with the agent's own
watch hooks (helper.py's _make_hooks, installed by observe.py): through
the function's vectorcall slot (vcall.c: 3.8-3.10, 3.12+, what watch
uses for it), and through the code-level mechanism the other cases use:
on 3.12+ sys.monitoring with the agent's C callbacks (monfast.c) or the
Python callbacks they fall back to, before 3.12 the __code__ trampoline
calling the agent's C hook or the Python one; next to the same function
unobserved and under a plain
Python decorator doing the same capture (_capture.py).  Best of 7 rounds
of 100 x 1,000 calls; the queue is emptied between batches of 1,000,
outside the timing, as the worker would, so every call queues a record
(none is dropped).  Prints one line per mechanism and, on 3.12+, the
floor: sys.monitoring delivering the two events to a C no-op."""

import gc
import sys
import time

import __main__

from _capture import capture   # watch.sh's target runs from tests/bench


def agent_namespace():
    for d in gc.get_objects():
        if type(d) is dict and "_make_hooks" in d and "observe_install" in d:
            return d
    raise SystemExit("observe_cost.py: no agent in this process (run by watch.sh)")


def tiny(x):
    return x + 1


def plain(x):
    return x + 1


def per_call(fn, q=None, batches=100, n=1000):
    best = None
    for _ in range(7):
        total = 0
        for _ in range(batches):
            t0 = time.perf_counter_ns()
            for i in range(n):
                fn(i)
            total += time.perf_counter_ns() - t0
            if q is not None:
                q.clear()   # the worker's part, untimed
        ns = total / (batches * n)
        best = ns if best is None else min(best, ns)
    return best


def observed(ns, kind):
    """ns per call of tiny() under watch's hooks, by mechanism: "vc" the
    function's vectorcall slot (vcall.c), "c" the code-level mechanism's
    C callbacks (monfast.c), "python" its Python callbacks."""
    w = ns["_Watch"](False, False)
    vc = ns.get("_VC_C", False)
    ns["_VC_C"] = vc and kind == "vc"     # observe.py reads it at each install
    try:
        h = ns["observe_install"](tiny, *ns["_make_hooks"](w, "tiny", False))
    finally:
        ns["_VC_C"] = vc
    try:
        assert (ns["_vc"].get(id(tiny)) is h) == (kind == "vc"), kind
        if kind == "python":   # take the C fast path away
            h.fast = None
            if ns["_USE_MONITORING"]:
                e = ns["_mon_codes"][h.code]
                ns["_mon_set"](h.code, ns["_mon_entry"](e[0], e[1:5]))
            else:
                ns["_tr"][id(h.code)][5] = None
        w.queue.clear()
        cost = per_call(tiny, w.queue)
        tiny(-1)
        last = w.queue[-1] if w.queue else None
    finally:
        ns["observe_remove"](h)
    assert last is not None and last[4] == (-1,) and last[6] == 0 and w.dropped == 0, last
    return cost


def dispatch_floor():
    """3.12+: ns per call of tiny() with PY_START and PY_RETURN delivered to
    a C callable that does nothing useful (slice): what sys.monitoring
    costs before any callback of ours runs."""
    m = sys.monitoring
    E = m.events
    tid = next(t for t in range(6) if m.get_tool(t) is None)
    m.use_tool_id(tid, "observe_cost floor")
    try:
        m.register_callback(tid, E.PY_START, slice)
        m.register_callback(tid, E.PY_RETURN, slice)
        m.set_local_events(tid, tiny.__code__, E.PY_START | E.PY_RETURN)
        return per_call(tiny)
    finally:
        m.set_local_events(tid, tiny.__code__, 0)
        m.register_callback(tid, E.PY_START, None)
        m.register_callback(tid, E.PY_RETURN, None)
        m.free_tool_id(tid)


def main():
    ns = agent_namespace()
    __main__.PAUSE.set()           # the target's rounds stop ...
    __main__.IDLE.wait(30)         # ... once the current one ended
    try:
        base = per_call(plain)
        deco = per_call(capture(plain)) - base
        kinds = [("vectorcall slot, C", "vc")] if ns.get("_VC_C") else []
        if ns["_USE_MONITORING"]:
            kinds += [("sys.monitoring, C callbacks", "c"), ("sys.monitoring, Python callbacks",
                                                             "python")]
        else:
            kinds += [("__code__ swap, C hook", "c"), ("__code__ swap, Python hook", "python")]
        for label, kind in kinds:
            cost = observed(ns, kind) - base
            print("%s (%s): plain %.0f ns, decorator +%.0f ns, observed +%.0f ns: "
                  "observed/decorator added cost %.2f (budget <= 0.50)"
                  % (sys.version.split()[0], label, base, deco, cost, cost / deco))
        if hasattr(sys, "monitoring"):
            floor = dispatch_floor() - base
            print("%s (sys.monitoring alone, 2 events to a C no-op): +%.0f ns: %.2f of the "
                  "decorator's added cost" % (sys.version.split()[0], floor, floor / deco))
        print("%s: after the watch, tiny %.0f ns / plain %.0f ns"
              % (sys.version.split()[0], per_call(tiny), per_call(plain)))
    finally:
        __main__.PAUSE.clear()


main()
