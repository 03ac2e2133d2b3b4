# monitor — the Python side of `monitor` and `reset`, compiled into the agent
# and run in helper.py's namespace (after observe.py).
#
# Every instrumentation a client starts (watch, monitor, tt and trace,
# through observe.py's observing()) registers here under its connection
# with a remove() callable; `reset` calls them, for this client or, with
# --all, for every client.  remove() must be idempotent and make its
# request's worker end.
#
# monitor: the calling thread appends (target, cost, failed) to a bounded
# deque and nothing else; the worker folds them into per-cycle figures
# (exact calls, failures, sum, min, max; p99 from a log histogram with 16
# buckets per power of two, so within 1/16 of the true value) and sends one
# row per observed function per cycle.

_instruments = {}   # conn -> {token: (kind, label, remove)}
_instrument_seq = [0]
_MONITOR_QUEUE = 1 << 20     # costs waiting for the worker; more are dropped


def instrument_add(conn, kind, label, remove):
    """Register an instrumentation of connection conn; the token is for
    instrument_drop when it ends by itself."""
    _instrument_seq[0] += 1
    token = _instrument_seq[0]
    _instruments.setdefault(conn, {})[token] = (kind, label, remove)
    return token


def instrument_drop(conn, token):
    mine = _instruments.get(conn)
    if mine is not None:
        mine.pop(token, None)
        if not mine:
            _instruments.pop(conn, None)


def reset_run(conn, everyone):
    """Remove every instrumentation of conn (of every client if everyone):
    {"removed": ["watch __main__.add", ...], "observing": what is left}."""
    removed = []
    for c in [c for c in list(_instruments) if everyone or c == conn]:
        for token, (kind, label, remove) in sorted(_instruments.pop(c, {}).items()):
            try:
                remove()
            except BaseException:
                pass
            removed.append("%s %s" % (kind, label))
    return {"removed": removed, "observing": observe_status()}


def _bucket(c):
    if c < 32:
        return c
    b = c.bit_length()
    return (b << 4) | ((c >> (b - 5)) & 15)


def _bucket_top(i):
    if i < 32:
        return i
    b, m = i >> 4, i & 15
    return ((17 + m) << (b - 5)) - 1


class _Cycle(object):
    __slots__ = ("calls", "failed", "total", "low", "high", "hist")

    def __init__(self):
        self.calls = self.failed = self.total = self.high = 0
        self.low = None
        self.hist = {}

    def add(self, cost, failed):
        self.calls += 1
        self.failed += failed
        self.total += cost
        if self.low is None or cost < self.low:
            self.low = cost
        if cost > self.high:
            self.high = cost
        b = _bucket(cost)
        self.hist[b] = self.hist.get(b, 0) + 1

    def p99(self):
        rank = self.calls - self.calls // 100   # the call at or above 99 %
        seen = 0
        for b in sorted(self.hist):
            seen += self.hist[b]
            if seen >= rank:
                return min(_bucket_top(b), self.high)
        return self.high

    def row(self, label, when):
        ms = 1e6
        r = {"time": when, "method": label, "calls": self.calls,
             "success": self.calls - self.failed, "failed": self.failed,
             "fail_rate": (100.0 * self.failed / self.calls) if self.calls else 0.0}
        if self.calls:
            r.update(avg_ms=self.total / self.calls / ms, min_ms=self.low / ms,
                     max_ms=self.high / ms, p99_ms=self.p99() / ms)
        return r


class _Monitor(_Watch):
    """monitor's observer: the calling thread appends (target index, cost,
    failed) to w.queue and nothing else."""
    __slots__ = ("count",)

    def __init__(self):
        _Watch.__init__(self, False, False)
        self.count = 0

    def make_hooks(self, fn, label, bound):
        q, index, w = self.queue, self.count, self
        MAXQ = _MONITOR_QUEUE
        self.count += 1   # _install asks in the targets' order

        def enter(args, kwargs):
            return _ns()

        def leave(t0, ret, exc):
            if len(q) < MAXQ:
                q.append((index, _ns() - t0, exc is not None))
            else:
                w._dropped += 1
        # The same through the function's call slot, in C (vcall.c).
        leave._fp_fast = (q, q.append, MAXQ, index, False, w, w.drops, "monitor")
        leave._fp_slot_only = True
        return enter, leave


def monitor_run(conn, rid, spec, record, cancelled):
    """Observe the targets and send one row per target each cycle until -n
    cycles, cancel, reset or the connection's end."""
    import time
    try:
        targets, matched = spec_targets(spec)
    except WatchError as e:
        return {"ok": False, "message": str(e)}
    cycle = max(0.1, float(spec.get("cycle", 60)))
    limit = spec.get("limit")
    w = _Monitor()
    shown = 0
    try:
        with observing(conn, rid, "monitor", w, targets, spec.get("nested")) as labels:
            record({"started": True, "matched": matched, "observed": labels, "cycle": cycle}, [])
            q = w.queue
            cycles = [_Cycle() for _ in targets]
            end = time.monotonic() + cycle
            while w.active and not cancelled() and (limit is None or shown < limit):
                while q:
                    i, cost, failed = q.popleft()
                    cycles[i].add(cost, failed)
                now = time.monotonic()
                if now < end:
                    time.sleep(min(0.02, end - now))
                    continue
                end += cycle
                shown += 1
                for label, c in zip(labels, cycles):
                    r = c.row(label, time.time())
                    r["cycle"] = shown
                    if w.dropped:
                        r["dropped"] = w.dropped
                    record(r, [])
                cycles = [_Cycle() for _ in targets]
            return {"ok": True, "cycles": shown, "reset": not w.active}
    except WatchError as e:
        return {"ok": False, "message": str(e)}
