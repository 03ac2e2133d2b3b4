# tracehelper — the Python side of the agent's `trace` command.
#
# Runs in helper.py's namespace (pyside.c compiles both into one dict), so
# the target is resolved as watch's is and hooked and unhooked by
# observe.py's observing(); this file only brings the observer: enter() hooks
# the calling thread with trace.c's recorder, leave() unhooks it and queues
# the finished tree.  The tree is turned into JSON by C on the worker.
#
# C gives this namespace (inject/agent/trace.c):
#   _fp_trace_session(max_depth, c_calls) -> (session, mechanism, note),
#   _fp_trace_begin(session, code),
#   _fp_trace_end(recorder), _fp_trace_stop(session), _fp_trace_resume(recorder)

_TRACE_QUEUE = 32           # finished trees waiting for the worker; more are dropped


class _Trace(_Watch):
    __slots__ = ("session", "filt", "filter_error", "entrance_ns", "g", "nested")

    def __init__(self, session, filt, entrance_ns, nested=None):
        _Watch.__init__(self, False, False)
        import builtins
        self.nested = nested
        self.session = session
        self.filt = filt
        self.filter_error = None
        self.entrance_ns = entrance_ns
        self.g = {"__builtins__": builtins}

    def on_remove(self):
        # Calls running now unhook their thread at its next event.
        _fp_trace_stop(self.session)

    def passes(self, args, kwargs, bound):
        """-f, evaluated in the calling thread: it decides whether to trace."""
        target = None
        if bound and args:
            target, args = args[0], args[1:]
        try:
            return bool(eval(self.filt, self.g, {"target": target, "args": args,
                                                 "kwargs": kwargs}))
        except Exception as e:
            if self.filter_error is None:
                self.filter_error = _describe_exc(e)
            return False

    def make_hooks(self, fn, label, bound):
        # The recorder's entry is the code that runs the observed call: with
        # -nm the nested function's original code, not fn's (observe.py
        # hooks that one; none there is said by observe_install).
        code = fn.__code__
        if self.nested:
            code = _nested_code(code, self.nested) or code
        q = self.queue
        session = self.session
        begin, end, resume = _fp_trace_begin, _fp_trace_end, _fp_trace_resume
        ident = _get_ident
        w = self

        def enter(args, kwargs):
            if w.filt is not None and not w.passes(args, kwargs, bound):
                return None
            return (begin(session, code), _ns())

        def leave(st, ret, exc):
            if st is None or st[0] is None:
                return
            cost = end(st[0])
            if cost is None or cost < w.entrance_ns:
                return
            if len(q) < _TRACE_QUEUE:
                q.append((label, st[1], cost, st[0], exc, ident()))
            else:
                w._dropped += 1

        def on_resume(st):
            # 3.12+: a generator or coroutine resumes (observe.py).
            if st is not None and st[0] is not None:
                resume(st[0])
        enter.resume = on_resume
        return enter, leave


def trace_run(conn, rid, spec, record, cancelled):
    """Trace calls until -n trees were shown, the request is cancelled or
    the connection closed.  record(meta, recorder) sends one tree."""
    import time
    try:
        filt = None
        if spec.get("filter"):
            try:
                filt = compile(spec["filter"], "<filter>", "eval")
            except SyntaxError as e:
                raise WatchError("-f is not a valid Python expression: %s" % e.msg)
        targets, matched = spec_targets(spec)
    except WatchError as e:
        return {"ok": False, "message": str(e)}
    session, mechanism, note = _fp_trace_session(int(spec.get("max_depth") or 0),
                                                 bool(spec.get("c_calls")))
    w = _Trace(session, filt, int(float(spec.get("entrance_ms") or 0) * 1e6), spec.get("nested"))
    limit = spec.get("limit", 10)
    shown = 0
    with observing(conn, rid, "trace", w, targets, spec.get("nested")) as labels:
        start = {"started": True, "matched": matched, "observed": labels,
                 "mechanism": mechanism}
        if note is not None:
            start["mechanism_note"] = note
        record(start, [])
        reported_drops = 0
        reported_filter = None
        for call in observed_calls(w, cancelled, lambda: shown < limit):
            label, t0, cost, rec, exc, tid = call
            meta = {"method": label, "time": time.time() - (_ns() - t0) / 1e9,
                    "cost_ms": cost / 1e6, "thread": _thread_name(tid)}
            if exc is not None:
                meta["exception"] = _describe_exc(exc)
            if w.dropped != reported_drops:
                meta["dropped"] = w.dropped
                reported_drops = w.dropped
            if w.filter_error is not None and w.filter_error != reported_filter:
                meta["filter_error"] = w.filter_error
                reported_filter = w.filter_error
            shown += 1
            meta["index"] = shown
            record(meta, rec)
        return {"ok": True, "shown": shown, "dropped": w.dropped, "matched": matched,
                "filter_error": w.filter_error, "reset": not w.active}
