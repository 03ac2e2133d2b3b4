# tthelper — `tt`, the time tunnel: record calls, then list, inspect,
# evaluate, search, delete and replay them.  Compiled by pyside.c into
# helper.py's namespace, after helper.py: a recording IS a watch (_Watch,
# resolved as watch's and observed through observe.py's observing()), so it
# is removed exactly when a watch is (-n, cancel, disconnect, SIGKILL of the
# client, reset), and only its consumer differs: records go to a store instead of
# the client.  helper.py's rules hold here too (never raise into the
# application, never import threading or asyncio, never print).
#
# The store is the process's, not a connection's: `tt -t` in one
# invocation and `tt -l` / `tt -i N -p` in the next is how the command
# guide uses it.  It holds references (replay needs the real objects), so
# it is bounded by record count AND by an estimate of the bytes it keeps
# alive, and evicts the oldest records, saying so.

import sys
from collections import deque as _deque

TT_FIRST_INDEX = 1000
TT_MAX_RECORDS = 1000           # default bound on records kept
TT_MAX_BYTES = 64 << 20         # default bound on the bytes they keep alive (estimated)
_TT_GONE_KEPT = 4096            # deleted / evicted indexes remembered for the error
_TT_LIST_MAX = 5000             # rows one -l or -s answer carries
_TT_ERRORS_SHOWN = 10           # filter / search errors reported one by one
_TT_REPLAY_THREAD = "flight_profiler replay"
# Threads running a replay now: a live recording of the same function
# leaves their calls alone (the replay records its call itself).
_tt_replaying = set()


class _TTQueue(_deque):
    """A recording's watch queue: the observed thread's append also notes
    what tt needs that watch records lack: which thread called, and a
    shallow fingerprint of the arguments as the call left them (taken
    here because the caller may change them right after; the deep one is
    taken on the worker, off the hot path)."""

    __slots__ = ()

    def append(self, item, _append=_deque.append, _ident=_get_ident, _skip=_tt_replaying):
        ident = _ident()
        if ident not in _skip:
            _append(self, (item, ident, _tt_shallow(item[1], item[4], item[5])))


def _tt_shallow(bound, args, kwargs):
    """The arguments' types, lengths and atomic values, one level: cheap
    enough for the observed thread."""
    out = []
    for a in (args[1:] if bound else args):
        t = type(a)
        out.append(a if t in _TT_ATOMS else len(a) if t in _TT_SIZED else id(t))
    for a in (kwargs.values() if kwargs else ()):   # None: the C paths' "no keywords"
        t = type(a)
        out.append(a if t in _TT_ATOMS else len(a) if t in _TT_SIZED else id(t))
    try:
        return hash(tuple(out))
    except BaseException:
        return None


class _TTRecord(object):
    __slots__ = ("index", "method", "where", "wall", "cost", "thread", "thread_name",
                 "bound", "args", "kwargs", "ret", "exc", "fp", "size", "replay_of")


def _tt_size(args, kwargs, ret, exc):
    """Estimated bytes a record keeps alive: shallow sizes of its arguments,
    result and exception and of their items, one level deep."""
    gs = sys.getsizeof
    n = 160     # the record itself
    try:
        for o in (args, kwargs, ret, exc):
            n += gs(o)
            if type(o) in (list, tuple, set, frozenset):
                for i, x in enumerate(o):
                    if i >= 1000:
                        break
                    n += gs(x)
            elif type(o) is dict:
                for i, (k, v) in enumerate(o.items()):
                    if i >= 1000:
                        break
                    n += gs(k) + gs(v)
    except BaseException:
        n += 1024
    return n


_TT_ATOMS = frozenset((type(None), bool, int, float, complex, str, bytes))
_TT_SIZED = frozenset((list, dict, set, tuple, bytearray))


def _tt_fingerprint(bound, args, kwargs):
    """A hash of the arguments' contents (containers and instance __dict__,
    four levels, at most 512 nodes; the target, self or cls, left out: its
    state is not an argument): a different one later means the arguments
    were mutated since recording."""
    out = []
    budget = [512]

    def walk(o, d):
        if budget[0] <= 0:
            return
        budget[0] -= 1
        t = type(o)
        out.append(id(t))
        if t in _TT_ATOMS:
            out.append(o)
        elif d <= 0:
            out.append(id(o))
        elif t is list or t is tuple:
            out.append(len(o))
            for x in o[:64]:
                walk(x, d - 1)
        elif t is dict:
            out.append(len(o))
            for i, (k, v) in enumerate(list(o.items())):
                if i >= 64:
                    break
                walk(k, d - 1)
                walk(v, d - 1)
        elif t is set or t is frozenset:
            out.append(len(o))
            out.append(hash(frozenset(o)))
        else:
            out.append(id(o))
            try:
                dd = object.__getattribute__(o, "__dict__")
            except BaseException:
                dd = None
            if type(dd) is dict:
                walk(dd, d - 1)
    try:
        walk((args[1:] if bound else args, kwargs), 5)
        return hash(tuple(out))
    except BaseException:
        return None


def _tt_mutated(r):
    now = (_tt_shallow(r.bound, r.args, r.kwargs), _tt_fingerprint(r.bound, r.args, r.kwargs))
    return now != r.fp


class _TTStore(object):
    def __init__(self):
        self.records = {}       # index -> _TTRecord, oldest first
        self.next = TT_FIRST_INDEX
        self.bytes = 0
        self.max_records = TT_MAX_RECORDS
        self.max_bytes = TT_MAX_BYTES
        self.evicted = 0
        self.gone = {}          # index -> "deleted" / "evicted" (the last _TT_GONE_KEPT)

    def info(self):
        return {"records": len(self.records), "bytes": self.bytes,
                "max_records": self.max_records, "max_bytes": self.max_bytes,
                "evicted": self.evicted, "next": self.next}

    def _forget(self, index, why):
        r = self.records.pop(index, None)
        if r is not None:
            self.bytes -= r.size
            self.gone[index] = why
            while len(self.gone) > _TT_GONE_KEPT:
                del self.gone[next(iter(self.gone))]
        return r

    def _evict(self, room=0, size=0):
        """Oldest first until `room` more records of `size` more bytes fit
        within both bounds; {count, first, last} or None."""
        first = last = None
        n = 0
        while self.records and (len(self.records) + room > self.max_records or
                                self.bytes + size > self.max_bytes):
            index = next(iter(self.records))
            self._forget(index, "evicted")
            first = index if first is None else first
            last = index
            n += 1
        if not n:
            return None
        self.evicted += n
        return {"count": n, "first": first, "last": last}

    def configure(self, max_records, max_bytes):
        """Each recording sets the bounds: the ones given, else the defaults."""
        self.max_records = max_records or TT_MAX_RECORDS
        self.max_bytes = max_bytes or TT_MAX_BYTES
        return self._evict()

    def add(self, r):
        """Store r under the next index; the newest record always stays,
        even if alone it is over the byte bound."""
        r.index = self.next
        self.next += 1
        ev = self._evict(1, r.size)
        self.records[r.index] = r
        self.bytes += r.size
        return ev

    def missing(self, index):
        why = self.gone.get(index)
        if why == "evicted":
            return ("record %d was evicted: the store keeps at most %d records and %d bytes "
                    "(tt -t --store-records / --store-mib raise the bounds)"
                    % (index, self.max_records, self.max_bytes))
        if why == "deleted":
            return "record %d was deleted" % index
        if TT_FIRST_INDEX <= index < self.next:
            return "record %d is gone (deleted or evicted); tt -l lists the records" % index
        return "no record %d: %s" % (index, "nothing is recorded yet (tt -t records calls)"
                                     if self.next == TT_FIRST_INDEX else
                                     "indexes so far are %d to %d" % (TT_FIRST_INDEX, self.next - 1))


_tt_store = _TTStore()


def _tt_row(r):
    m = {"index": r.index, "method": r.method, "time": r.wall, "cost_ms": r.cost,
         "thread": r.thread_name, "thread_id": r.thread, "size": r.size}
    if r.exc is not None:
        m["exception"] = _describe_exc(r.exc)
    if r.replay_of is not None:
        m["replay_of"] = r.replay_of
    return m


def _tt_names(r):
    target, args = None, r.args
    if r.bound and args:
        target, args = args[0], args[1:]
    return {"target": target, "return_obj": r.ret, "cost": r.cost, "args": args,
            "kwargs": r.kwargs}


def _tt_method_match(label, m):
    if not m:
        return True
    parts = m.split(".")
    alt = ".".join(parts[:-2] + parts[-1:]) if len(parts) >= 3 and parts[-2] == "None" else m
    if "*" in m or "?" in m or "[" in m:
        import fnmatch
        return fnmatch.fnmatchcase(label, m) or fnmatch.fnmatchcase(label, alt)
    return label == m or label == alt


def _tt_compile(text, option):
    try:
        return compile(text, "<%s>" % option, "eval")
    except SyntaxError as e:
        raise WatchError("%s is not a valid Python expression: %s" % (option, e.msg))


def _tt_new(label, where, bound, args, kwargs, ret, exc, cost_ms, wall, ident, name, fp):
    r = _TTRecord()
    r.method, r.where, r.bound = label, where, bound
    r.args, r.kwargs, r.ret, r.exc = args, kwargs, ret, exc
    r.cost, r.wall, r.thread, r.thread_name = cost_ms, wall, ident, name
    r.fp = (fp, _tt_fingerprint(bound, args, kwargs))
    r.size = _tt_size(args, kwargs, ret, exc)
    r.replay_of = None
    return r


def _tt_record(conn, rid, spec, record, cancelled):
    import builtins
    import time
    store = _tt_store
    try:
        filt = _tt_compile(spec["filter"], "-f") if spec.get("filter") else None
        targets, matched = spec_targets(spec)
    except WatchError as e:
        return {"ok": False, "message": str(e)}
    ev = store.configure(spec.get("store_records"), spec.get("store_bytes"))
    # Where to find each function again for a replay (not a nested one).
    where = {} if spec.get("nested") else \
        {t[5]: (spec["module"], spec.get("class"), t[1]) for t in targets}
    w = _Watch(False, False)
    w.queue = _TTQueue()
    limit = spec.get("limit", 50)
    g = {"__builtins__": builtins}
    stored = filter_errors = reported_drops = 0
    with observing(conn, rid, "tt", w, targets, spec.get("nested")) as labels:
        start = {"started": True, "matched": matched, "observed": labels,
                 "store": store.info()}
        if ev:
            start["evicted"] = ev
        record(start, [])
        for call in observed_calls(w, cancelled, lambda: stored < limit):
            (label, bound, t0, cost, args, kwargs, ret, exc, _, _), ident, fp = call
            if kwargs is None:   # the C paths' "no keywords"
                kwargs = {}
            wall = time.time() - (_ns() - t0) / 1e9
            r = _tt_new(label, where.get(label), bound, args, kwargs, ret, exc, cost / 1e6,
                        wall, ident, _thread_name(ident), fp)
            if filt is not None:
                try:
                    keep = eval(filt, g, _tt_names(r))
                except Exception as e:
                    filter_errors += 1
                    if filter_errors <= _TT_ERRORS_SHOWN:
                        record({"filter_error": "the filter raised %s: call not recorded"
                                % _describe_exc(e), "method": label, "time": wall}, [])
                    continue
                if not keep:
                    continue
            ev = store.add(r)
            stored += 1
            meta = _tt_row(r)
            if ev:
                meta["evicted"] = ev
            if w.dropped != reported_drops:
                meta["dropped"] = reported_drops = w.dropped
            record(meta, [])
        return {"ok": True, "recorded": stored, "dropped": w.dropped,
                "filter_errors": filter_errors, "store": store.info(), "reset": not w.active}


def _tt_get(spec):
    index = spec.get("index")
    r = _tt_store.records.get(index)
    if r is None:
        raise WatchError(_tt_store.missing(index if isinstance(index, int) else -1))
    return r


def _tt_inspect(spec, record):
    r = _tt_get(spec)
    meta = _tt_row(r)
    meta["mutated"] = _tt_mutated(r)
    names = _tt_names(r)
    if spec.get("watch"):
        code = _tt_compile(spec["watch"], "-w")
        import builtins
        try:
            values = [(spec["watch"], eval(code, {"__builtins__": builtins}, names), None)]
        except Exception as e:
            values = [(spec["watch"], None, "raised " + _describe_exc(e))]
    else:
        values = []
        if r.bound:
            values.append(("target", names["target"], None))
        values += [("args", names["args"], None), ("kwargs", r.kwargs, None)]
        if r.exc is not None:
            values.append(("exception", r.exc, None))
        else:
            values.append(("return_obj", r.ret, None))
    record(meta, values)
    return {"ok": True}


def _tt_current(r):
    """The function as it is NOW (a reload or a patch since recording is
    what a replay should exercise), never our recorder around it."""
    if r.where is None:
        raise WatchError("cannot replay record %d: %s is a nested function (-nm), "
                         "which exists only while its outer function runs"
                         % (r.index, r.method))
    modname, cls, name = r.where
    owner, where = _resolve_owner(modname, cls)
    raw = None
    for k in (owner.__mro__ if isinstance(owner, type) else (owner,)):
        d = getattr(k, "__dict__", {})
        if name in d:
            raw = d[name]
            break
    if raw is None:
        raise WatchError("cannot replay record %d: '%s' no longer exists in %s"
                         % (r.index, name, where))
    fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    while getattr(fn, "_fp_watch", False) and hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    if not callable(fn):
        raise WatchError("cannot replay record %d: '%s' in %s is no longer callable"
                         % (r.index, name, where))
    return fn


def _tt_finish(v):
    """A coroutine runs to its end on a fresh event loop (never the
    application's); a generator is driven to its end: the outcome is what
    the call finally returns, as the recorder saw it."""
    import inspect
    if inspect.iscoroutine(v):
        aio = sys.modules.get("asyncio")
        if aio is None:
            v.close()
            raise WatchError("cannot run the coroutine: asyncio is not imported in the process")
        loop = aio.new_event_loop()
        try:
            return loop.run_until_complete(v)
        finally:
            loop.close()
    if inspect.isgenerator(v):
        try:
            while True:
                next(v)
        except StopIteration as s:
            return s.value
    return v


def _tt_call(r, fn):
    t0 = _ns()
    try:
        ret, exc = _tt_finish(fn(*r.args, **r.kwargs)), None
    except WatchError:
        raise
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        ret, exc = None, e
    return ret, exc, (_ns() - t0) / 1e6


def _tt_replay(spec, record, cancelled):
    import time
    r = _tt_get(spec)
    fn = _tt_current(r)
    times = spec.get("times", 1)
    interval = spec.get("interval", 0) / 1000.0
    done = 0
    while done < times and not cancelled():
        if done and interval:
            end = time.monotonic() + interval
            while not cancelled() and time.monotonic() < end:
                time.sleep(min(0.05, max(0.0, end - time.monotonic())))
            if cancelled():
                break
        mutated = _tt_mutated(r)
        fp = _tt_shallow(r.bound, r.args, r.kwargs)
        wall = time.time()
        _tt_replaying.add(_get_ident())
        try:
            ret, exc, cost = _tt_call(r, fn)
        finally:
            _tt_replaying.discard(_get_ident())
        n = _tt_new(r.method, r.where, r.bound, r.args, r.kwargs, ret, exc, cost, wall,
                    _get_ident(), _TT_REPLAY_THREAD, fp)
        n.replay_of = r.index
        ev = _tt_store.add(n)
        done += 1
        meta = _tt_row(n)
        meta["mutated"] = mutated
        meta["replay"] = done
        if ev:
            meta["evicted"] = ev
        record(meta, [("exception", exc, None)] if exc is not None else
               [("return_obj", ret, None)])
    return {"ok": True, "replayed": done, "of": r.index}


def _tt_rows(spec):
    """The records of -l / -s (with -m) and the errors of -s's expression."""
    import builtins
    code = _tt_compile(spec["search"], "-s") if spec.get("search") else None
    g = {"__builtins__": builtins}
    rows, errors = [], []
    nerrors = 0
    for r in list(_tt_store.records.values()):
        if not _tt_method_match(r.method, spec.get("method")):
            continue
        if code is not None:
            try:
                if not eval(code, g, _tt_names(r)):
                    continue
            except Exception as e:
                nerrors += 1
                if len(errors) < _TT_ERRORS_SHOWN:
                    errors.append({"index": r.index, "error": "raised " + _describe_exc(e)})
                continue
        rows.append(_tt_row(r))
    out = {"ok": True, "rows": rows[-_TT_LIST_MAX:], "matched": len(rows),
           "store": _tt_store.info()}
    if code is not None:
        out["errors"] = errors
        out["error_count"] = nerrors
    return out


def tt_run(conn, rid, spec, record, cancelled):
    """One tt request; record(meta, values) sends an event (values are
    [(label, obj, error)], formatted by C with the request's -x/-r/-v)."""
    action = spec.get("action")
    try:
        if action == "record":
            return _tt_record(conn, rid, spec, record, cancelled)
        if action == "list":
            return _tt_rows(spec)
        if action == "inspect":
            return _tt_inspect(spec, record)
        if action == "replay":
            return _tt_replay(spec, record, cancelled)
        if action == "delete":
            r = _tt_get(spec)
            _tt_store._forget(r.index, "deleted")
            return {"ok": True, "deleted": 1, "store": _tt_store.info()}
        if action == "delete_all":
            n = len(_tt_store.records)
            for index in list(_tt_store.records):
                _tt_store._forget(index, "deleted")
            return {"ok": True, "deleted": n, "store": _tt_store.info()}
        return {"ok": False, "message": "tt: unknown action %r" % (action,)}
    except WatchError as e:
        return {"ok": False, "message": str(e)}
