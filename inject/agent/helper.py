# The agent's Python half: compiled by pyside.c into a private namespace
# (never put in sys.modules) the first time a worker needs it.
#
# Rules for everything here:
#  - never raise into the application: every entry point returns plain
#    data (dict, list, str, int, None) and catches BaseException;
#  - never take a lock an application thread may hold while it waits for
#    the GIL (threading.enumerate() does: read threading._active instead);
#  - never import threading or asyncio: importing threading from a foreign
#    thread makes that thread its "main thread"; look in sys.modules;
#  - never print: only the request's own thread is captured.
#
# C gives this namespace: _fp_repr(obj, limit) -> str (a bounded repr that
# never raises) and __file__ (frames of this file are hidden in tracebacks).

import sys
from _thread import get_ident as _get_ident

_captures = {}      # thread ident -> _Capture of the request it runs


class _Capture(object):
    """What one request's thread writes to sys.stdout/sys.stderr: streamed
    to the client in pieces through emit(text), bounded to `limit` chars."""

    __slots__ = ("emit", "parts", "size", "total", "limit", "dropped")

    def __init__(self, emit, limit):
        self.emit = emit
        self.parts = []
        self.size = 0
        self.total = 0
        self.limit = limit
        self.dropped = 0

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        n = len(s)
        if self.total + self.size + n > self.limit:
            keep = max(0, self.limit - self.total - self.size)
            self.dropped += n - keep
            s = s[:keep]
        if s:
            self.parts.append(s)
            self.size += len(s)
            if self.size >= 16384:
                self.flush()
        return n

    def flush(self):
        if self.parts:
            text = "".join(self.parts)
            self.parts = []
            self.total += self.size
            self.size = 0
            self.emit(text)


class _Proxy(object):
    """Stands in for sys.stdout/sys.stderr while a request runs: writes from
    a request's thread go to its capture, every other thread's go to the
    original stream unchanged."""

    def __init__(self, orig):
        self._fp_orig = orig

    def write(self, s):
        cap = _captures.get(_get_ident())
        if cap is not None:
            return cap.write(s)
        orig = self._fp_orig
        if orig is None:
            return len(s)
        return orig.write(s)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        cap = _captures.get(_get_ident())
        if cap is not None:
            return None
        orig = self._fp_orig
        if orig is not None:
            return orig.flush()

    def __getattr__(self, name):
        return getattr(self._fp_orig, name)


def _begin(cap):
    _captures[_get_ident()] = cap
    for name in ("stdout", "stderr"):
        cur = getattr(sys, name, None)
        if type(cur) is not _Proxy:
            setattr(sys, name, _Proxy(cur))


def _end():
    _captures.pop(_get_ident(), None)
    if not _captures:
        for name in ("stdout", "stderr"):
            cur = getattr(sys, name, None)
            # If the application replaced the stream meanwhile, keep theirs.
            if type(cur) is _Proxy:
                setattr(sys, name, cur._fp_orig)


def _user_tb(tb):
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


def _failure(e):
    try:
        import traceback
        text = "".join(traceback.format_exception(type(e), e, _user_tb(e.__traceback__)))
    except BaseException:
        text = "%s: %s\n" % (type(e).__name__, _fp_repr(e, 1000))
    try:
        message = str(e)
    except BaseException:
        message = _fp_repr(e, 1000)
    return {"ok": False, "exc": type(e).__name__, "message": message, "traceback": text,
            "interrupted": isinstance(e, KeyboardInterrupt)}


def _console_parts(source, filename):
    """One console input as [(code, is_expression)], a part per top-level
    statement: as in Python's console, `x = 5; x` echoes 5."""
    import ast
    tree = compile(source, filename, "exec", ast.PyCF_ONLY_AST)
    parts = []
    for node in tree.body:
        if isinstance(node, ast.Expr):
            parts.append((compile(ast.Expression(node.value), filename, "eval"), True))
        else:
            parts.append((compile(ast.Module([node], []), filename, "exec"), False))
    return parts


def _syntax_failure(e):
    """A SyntaxError as Python's console shows it: where and what, without
    the frames of the compiler's machinery (codeop)."""
    out = _failure(e)
    try:
        import traceback
        out["traceback"] = "".join(traceback.format_exception_only(type(e), e))
    except BaseException:
        pass
    return out


# Agent threads that ran the user's code (execute, the console), by ident,
# the latest 32: what watch and trace name them when threading does not
# know them (their records are formatted after the code has returned).
_RAN_CODE = {}


def run_code(source, filename, mode, ns, emit, limit):
    """Run source in ns.  mode "exec" (execute) runs it as a module body;
    "console" runs one interactive statement and echoes an expression's
    value, as the interactive interpreter does (but keeps `_` in ns, not
    in builtins, which belong to the application)."""
    cap = _Capture(emit, limit)
    me = _get_ident()
    try:
        _RAN_CODE.pop(me, None)
        _RAN_CODE[me] = "flight_profiler " + ("console" if mode == "console" else "execute")
        while len(_RAN_CODE) > 32:
            _RAN_CODE.pop(next(iter(_RAN_CODE)), None)
    except (RuntimeError, StopIteration):  # another thread of ours changed it meanwhile
        pass
    _begin(cap)
    try:
        try:
            if mode == "console":
                import codeop
                if codeop.compile_command(source, filename, "single") is None:
                    return {"ok": True, "incomplete": True}
                parts = _console_parts(source, filename)
            else:
                parts = [(compile(source, filename, "exec"), False)]
        except SyntaxError as e:
            return _syntax_failure(e)
        except BaseException as e:
            return _failure(e)
        try:
            for code, expr in parts:
                if expr:
                    value = eval(code, ns)
                    if value is not None:
                        ns["_"] = value
                        cap.write(_fp_repr(value, 1 << 20) + "\n")
                else:
                    exec(code, ns)
        except BaseException as e:
            return _failure(e)
        return {"ok": True}
    except BaseException as e:
        return _failure(e)
    finally:
        try:
            cap.flush()
        except BaseException:
            pass
        _end()
        if cap.dropped:
            emit("\n[flight_profiler: %d more characters of output dropped]\n" % cap.dropped)


def new_namespace(name):
    import builtins
    return {"__name__": name, "__builtins__": builtins, "__doc__": None}


def find_module(path):
    """Names of the imported modules whose file is path (resolved in the
    target: relative to its working directory, ~ expanded)."""
    import os
    want = os.path.realpath(os.path.expanduser(path))
    names = []
    for name, mod in list(sys.modules.items()):
        try:
            d = getattr(mod, "__dict__", None)
            f = d.get("__file__") if isinstance(d, dict) else None
            if not isinstance(f, str):
                continue
            cands = [f]
            if f.endswith((".pyc", ".pyo")):
                head, tail = os.path.split(f)
                if os.path.basename(head) == "__pycache__":
                    cands.append(os.path.join(os.path.dirname(head), tail.split(".")[0] + ".py"))
                else:
                    cands.append(f[:-1])
            if any(os.path.realpath(c) == want for c in cands):
                names.append(name)
        except BaseException:
            continue
    return {"path": want, "modules": sorted(names)}


def _frame_info(f, want_locals):
    code = f.f_code
    info = {"file": code.co_filename, "line": f.f_lineno,
            "func": getattr(code, "co_qualname", code.co_name)}
    if want_locals:
        if code.co_name == "<module>":
            info["locals_note"] = "module level: its locals are the module's globals"
        else:
            try:
                items = list(f.f_locals.items())
            except BaseException as e:
                info["locals_note"] = "locals unavailable: %s" % _fp_repr(e, 200)
                items = []
            out = []
            for k, v in items[:50]:
                out.append([k if isinstance(k, str) else _fp_repr(k, 100), _fp_repr(v, 200)])
            info["locals"] = out
            if len(items) > 50:
                info["locals_more"] = len(items) - 50
    return info


def _stack(f, want_locals, limit=200):
    frames = []
    while f is not None and len(frames) < limit:
        if f.f_code.co_filename != __file__:
            frames.append(_frame_info(f, want_locals))
        f = f.f_back
    return frames


def threads_info(want_locals, want_asyncio, limit):
    """Python thread names (from threading._active, without its lock),
    and optionally every thread's frames with their locals, and asyncio
    tasks of the event loops running in threads."""
    me = _get_ident()
    names = []
    th = sys.modules.get("threading")
    if th is not None:
        for reg in ("_active", "_limbo"):
            try:
                table = dict(getattr(th, reg, {}))
            except BaseException:
                continue
            for ident, t in table.items():
                if ident == me or not isinstance(ident, int):
                    continue
                try:
                    names.append({"ident": ident, "name": str(t._name),
                                  "daemon": bool(getattr(t, "_daemonic", False)),
                                  "native_id": getattr(t, "_native_id", None)})
                except BaseException:
                    continue
    out = {"names": names}
    frames = sys._current_frames()
    frames.pop(me, None)
    if want_locals:
        out["stacks"] = [{"ident": ident, "frames": _stack(f, True, limit)}
                         for ident, f in frames.items()]
    if want_asyncio:
        out["asyncio"] = _asyncio_info(frames, limit)
    return out


def _task_info(aio, task, limit):
    info = {}
    try:
        info["name"] = task.get_name()
    except BaseException:
        info["name"] = "?"
    try:
        coro = task.get_coro()
        info["coro"] = getattr(coro, "__qualname__", None) or _fp_repr(coro, 200)
    except BaseException:
        info["coro"] = "?"
    try:
        info["state"] = "cancelled" if task.cancelled() else "done" if task.done() else "pending"
    except BaseException:
        info["state"] = "?"
    try:
        waiter = getattr(task, "_fut_waiter", None)
        if waiter is not None:
            info["awaiting"] = _fp_repr(waiter, 200)
    except BaseException:
        pass
    try:
        stack = task.get_stack(limit=limit)   # oldest first
        info["frames"] = [_frame_info(f, False) for f in reversed(stack)]
    except BaseException as e:
        info["frames"] = []
        info["error"] = _fp_repr(e, 200)
    return info


def _asyncio_info(frames, limit):
    aio = sys.modules.get("asyncio")
    if aio is None:
        return {"loops": [], "note": "asyncio is not imported in the process"}
    loops = []
    seen = set()
    for ident, f in frames.items():
        while f is not None:
            if f.f_code.co_name in ("run_forever", "_run_once", "run_until_complete"):
                try:
                    loop = f.f_locals.get("self")
                except BaseException:
                    loop = None
                if isinstance(loop, aio.AbstractEventLoop) and id(loop) not in seen:
                    seen.add(id(loop))
                    loops.append((ident, loop))
            f = f.f_back
    result = []
    for ident, loop in loops:
        entry = {"ident": ident, "loop": _fp_repr(loop, 200), "tasks": []}
        try:
            current = aio.current_task(loop)
        except BaseException:
            current = None
        try:
            tasks = list(aio.all_tasks(loop))
        except BaseException as e:
            entry["error"] = "cannot list tasks: %s" % _fp_repr(e, 200)
            tasks = []
        for task in tasks:
            info = _task_info(aio, task, limit)
            info["current"] = task is current
            entry["tasks"].append(info)
        entry["tasks"].sort(key=lambda t: (not t.get("current"), t.get("name", "")))
        result.append(entry)
    return {"loops": result}


# ---- watch: observe the calls of one method ---------------------------------
#
# The function's code is observed (observe.py: sys.monitoring local events
# on 3.12+, a __code__ swap before), so every reference to it is seen and
# the attribute that names it is never touched.  The calling thread only
# captures references and a monotonic time into a bounded deque; evaluating the expressions and formatting the values run on
# the agent worker that serves the request (watch_run), off the hot path.

from time import monotonic_ns as _ns

_WATCH_QUEUE = 1024         # records waiting for the worker; more are dropped
_WATCH_SHARE = 0.1          # of the time, the most the worker formats records in
_STACK_DEPTH = 32
_watches = {}               # (conn, id) -> _Watch


class WatchError(Exception):
    """A watch that cannot start: the message says why, for the client."""


def _is_main_thread(ident):
    """Does thread ident run __main__'s module code at its bottom?  For a
    program that never imported threading (or imported it late, from
    another thread), threading cannot say which thread is the main one."""
    f = sys._current_frames().get(ident)
    main = sys.modules.get("__main__")
    while f is not None and f.f_back is not None:
        f = f.f_back
    return f is not None and main is not None and f.f_globals is getattr(main, "__dict__", None)


def _thread_name(ident):
    """Python's name of thread ident, from threading's registries (never
    its lock); else ours (execute, the console), MainThread or the ident."""
    th = sys.modules.get("threading")
    for reg in ("_active", "_limbo"):
        try:
            t = getattr(th, reg, {}).get(ident) if th is not None else None
            if t is not None:
                return str(t._name)
        except BaseException:
            continue
    if ident in _RAN_CODE:
        return _RAN_CODE[ident]
    return "MainThread" if _is_main_thread(ident) else "ident %d" % ident


class _Watch(object):
    __slots__ = ("queue", "_dropped", "drops", "active", "before", "stack", "installs")

    def __init__(self, before, stack):
        from collections import deque
        self.queue = deque()
        self._dropped = 0            # calls not queued, counted by the Python hooks
        self.drops = bytearray(8)    # ... and by the C ones (monfast.c, vcall.c)
        self.active = True
        self.before = before
        self.stack = stack
        self.installs = []  # (owner, name, raw, wrapper-as-installed, created)

    @property
    def dropped(self):
        return self._dropped + int.from_bytes(self.drops, sys.byteorder)


def _closest(name, names):
    import difflib
    near = difflib.get_close_matches(name, [n for n in names if isinstance(n, str)], 3, 0.6)
    return (" (closest: %s)" % ", ".join(near)) if near else ""


def _caller_stack():
    f = sys._getframe(2)
    out = []
    callee = _OBSERVE_SKIPS_CALLEE
    while f is not None and len(out) < _STACK_DEPTH:
        c = f.f_code
        if c.co_filename == __file__:
            pass
        elif callee:
            callee = False   # the observed call itself (sys.monitoring), not its caller
        else:
            out.append((c.co_filename, f.f_lineno, getattr(c, "co_qualname", c.co_name)))
        f = f.f_back
    return out


def _snapshot(args, kwargs):
    """-b: the arguments as passed, copied before the body can change them
    (references where a copy is impossible)."""
    import copy
    try:
        return copy.deepcopy((args, kwargs))
    except BaseException:
        return (args, kwargs)


def _make_hooks(w, label, bound):
    """enter(args, kwargs) -> state and leave(state, ret, exc) for one
    observed function (observe.py); bound: its first argument is the
    target (self or cls).  Both only capture references, the clock and the thread ident."""
    q = w.queue
    MAXQ = _WATCH_QUEUE

    def put(t0, cost, args, kwargs, ret, exc, stack):
        if len(q) < MAXQ:
            q.append((label, bound, t0, cost, args, kwargs, ret, exc, stack, _get_ident()))
        else:
            w._dropped += 1

    if not w.before and not w.stack:
        # The common case, inlined: no call of ours but the clock's.
        def enter(args, kwargs):
            return (args, kwargs, _ns())

        def leave(st, ret, exc):
            t0 = st[2]
            if len(q) < MAXQ:
                q.append((label, bound, t0, _ns() - t0, st[0], st[1], ret, exc, None,
                          _get_ident()))
            else:
                w._dropped += 1
        # What observe.py's C callbacks (3.12+, monfast.c) need to do all of
        # the above themselves, appending the same tuple.
        leave._fp_fast = (q, q.append, MAXQ, label, bound, w, w.drops)
        return enter, leave

    def enter(args, kwargs):
        stack = _caller_stack() if w.stack else None
        if w.before:
            a, k = _snapshot(args, kwargs)
            put(_ns(), None, a, k, None, None, stack)
        return (stack, args, kwargs, _ns())

    def leave(st, ret, exc):
        if not w.before:
            stack, args, kwargs, t0 = st
            put(t0, _ns() - t0, args, kwargs, ret, exc, stack)
    return enter, leave


def _resolve_owner(modname, cls):
    mod = sys.modules.get(modname)
    if mod is None:
        raise WatchError("module '%s' is not imported in this process%s"
                         % (modname, _closest(modname, list(sys.modules))))
    if not cls:
        return mod, "module '%s'" % modname
    owner = mod
    where = "module '%s'" % modname
    for part in cls.split("."):
        try:
            owner = getattr(owner, part)
        except AttributeError:
            raise WatchError("class '%s' not found in %s%s" % (part, where, _closest(part, dir(owner))))
        where = "class '%s' of module '%s'" % (cls, modname)
    if not isinstance(owner, type):
        raise WatchError("'%s' in module '%s' is not a class (it is a %s)"
                         % (cls, modname, type(owner).__name__))
    return owner, where


def _unwrapped(fn):
    """The function a decorator wrapped (functools.wraps's __wrapped__),
    innermost first: a decorator's wrapper code is shared by every function
    it decorates, so observing it would observe them all."""
    import inspect
    import types
    try:
        inner = inspect.unwrap(fn)
    except BaseException:
        return fn
    return inner if isinstance(inner, types.FunctionType) else fn


def _target_of(owner, name, where, strict):
    """(raw attribute as stored, function to call, bound) or None when not
    observable and not strict; raises WatchError when strict."""
    import types
    raw = None
    if isinstance(owner, type):
        for k in owner.__mro__:
            if name in k.__dict__:
                raw = k.__dict__[name]
                break
    else:
        raw = getattr(owner, "__dict__", {}).get(name)
    if raw is None:
        if not strict:
            return None
        raise WatchError("method '%s' not found in %s%s" % (name, where, _closest(name, dir(owner))))
    if isinstance(raw, staticmethod):
        return raw, _unwrapped(raw.__func__), False
    if isinstance(raw, classmethod):
        return raw, _unwrapped(raw.__func__), True
    if isinstance(raw, types.FunctionType):
        return raw, _unwrapped(raw), isinstance(owner, type)
    if not strict:
        return None
    what = type(raw).__name__
    if callable(raw):
        raise WatchError("'%s' in %s is a %s written in C: only Python functions can be watched"
                         % (name, where, what))
    raise WatchError("'%s' in %s is not a function (it is a %s)" % (name, where, what))


def _resolve(modname, cls, method):
    """[(owner, name, raw, fn, bound, label)] and the count of matches."""
    owner, where = _resolve_owner(modname, cls)
    raw, fn, bound = _target_of(owner, method, where, True)
    label = ".".join(p for p in (modname, cls, method) if p)
    return [(owner, method, raw, fn, bound, label)], 1


def _install(w, targets, nested=None, hooks=None):
    """Observe every target's code (observe.py): every reference to the
    function is observed, and the attribute itself is never touched.  The
    observer is watch's own (_make_hooks), or hooks=(enter, leave) given
    (torch), or w.make_hooks(fn, label, bound) -> (enter, leave) (trace,
    monitor)."""
    custom = getattr(w, "make_hooks", None)
    for owner, name, raw, fn, bound, label in targets:
        if nested:
            label = "%s.%s" % (label, nested)
            bound = False
        if hooks is not None:
            enter, leave = hooks
        elif custom is not None:
            enter, leave = custom(fn, label, bound)
        else:
            enter, leave = _make_hooks(w, label, bound)
        w.installs.append(observe_install(fn, enter, leave, nested))


def _remove(w):
    """Stop observing: the code objects are the originals again and, when
    nothing else is observed, the sys.monitoring tool id is free."""
    w.active = False
    on_remove = getattr(w, "on_remove", None)
    if on_remove is not None:
        on_remove()
    while w.installs:
        try:
            observe_remove(w.installs.pop())
        except BaseException:
            pass
    w.queue.clear()


def observe(modname, cls, method, nested, enter, leave):
    """The observation interface for the agent's other helpers (torchhelper.py):
    module [class] method resolved as watch resolves it; every call runs
    enter(args, kwargs) -> state at entry and leave(state, ret, exc) at exit,
    on the calling thread (neither may raise).  A handle for unobserve();
    raises WatchError saying why it cannot."""
    targets, _ = _resolve(modname, cls, method)
    w = _Watch(False, False)
    _install(w, targets, nested, (enter, leave))
    return w


def unobserve(w):
    _remove(w)


def watch_stop(conn, rid):
    """Remove the hooks of request (conn, rid), or of every request of conn
    when rid is None.  Idempotent; called again by C after watch_run."""
    for key in [k for k in list(_watches) if k[0] == conn and (rid is None or k[1] == rid)]:
        w = _watches.pop(key, None)
        if w is not None:
            _remove(w)


def watch_stop_all():
    for key in list(_watches):
        w = _watches.pop(key, None)
        if w is not None:
            _remove(w)


def _expr_parts(text):
    """--expr "a, b" as [("a", code), ("b", code)]: one row per element of a
    top-level tuple written without parentheses, as the guide shows them."""
    import ast
    try:
        tree = ast.parse(text.strip(), "<expr>", "eval")
    except SyntaxError as e:
        raise WatchError("--expr is not a valid Python expression: %s" % e.msg)
    src = text.strip()
    body = tree.body
    if isinstance(body, ast.Tuple) and body.elts and not src.startswith("("):
        parts = []
        for elt in body.elts:
            seg = ast.get_source_segment(src, elt) or ast.dump(elt)
            parts.append((seg, compile(ast.Expression(elt), "<expr>", "eval")))
        return parts
    return [(src, compile(tree, "<expr>", "eval"))]


def _describe_exc(e):
    try:
        text = str(e)
    except BaseException:
        text = _fp_repr(e, 300)
    if len(text) > 300:
        text = text[:300] + "..."
    return "%s: %s" % (type(e).__name__, text) if text else type(e).__name__


def watch_run(conn, rid, spec, record, cancelled):
    """Run one watch until -n records were shown, the request is cancelled
    (cancelled() true, or KeyboardInterrupt from the agent), or the
    connection closed.  record(meta, values) formats and sends one record on
    this worker; values is [(label, obj, error)]."""
    try:
        exprs = _expr_parts(spec.get("expr") or "args,kwargs")
        filt = None
        if spec.get("filter"):
            try:
                filt = compile(spec["filter"], "<filter>", "eval")
            except SyntaxError as e:
                raise WatchError("-f is not a valid Python expression: %s" % e.msg)
        targets, matched = spec_targets(spec)
    except WatchError as e:
        return {"ok": False, "message": str(e)}
    w = _Watch(bool(spec.get("before")), bool(spec.get("stack")))
    try:
        with observing(conn, rid, "watch", w, targets, spec.get("nested")) as labels:
            return _watch_loop(w, spec, exprs, filt, matched, labels, record, cancelled)
    except WatchError as e:   # observe.py could not observe one of them
        return {"ok": False, "message": str(e)}


def _watch_loop(w, spec, exprs, filt, matched, labels, record, cancelled):
    """watch_run's stream, while w observes: one record per call shown."""
    import builtins
    import time
    only_exc, only_ok = spec.get("exception"), spec.get("success")
    limit = spec.get("limit", 10)
    g = {"__builtins__": builtins}
    shown = 0
    record({"started": True, "matched": matched, "observed": labels}, [])
    reported_drops = 0
    for call in observed_calls(w, cancelled, lambda: shown < limit, _WATCH_SHARE):
        label, bound, t0, cost, args, kwargs, ret, exc, stack, ident = call
        if kwargs is None:   # the C paths' "no keywords"
            kwargs = {}
        if exc is not None and only_ok:
            continue
        if exc is None and only_exc and cost is not None:
            continue
        target = None
        if bound and args:
            target, args = args[0], args[1:]
        ms = cost / 1e6 if cost is not None else 0.0
        ns = {"target": target, "return_obj": ret, "cost": ms, "args": args,
              "kwargs": kwargs}
        meta = {"method": label, "time": time.time() - (_ns() - t0) / 1e9,
                "cost_ms": ms if cost is not None else None, "thread": _thread_name(ident)}
        if exc is not None:
            meta["exception"] = _describe_exc(exc)
        if stack is not None:
            meta["stack"] = [list(s) for s in stack]
        if w.dropped != reported_drops:
            meta["dropped"] = w.dropped
            reported_drops = w.dropped
        values = []
        if filt is not None:
            try:
                if not eval(filt, g, dict(ns)):
                    continue
            except Exception as e:
                values.append(("-f", None, "the filter raised " + _describe_exc(e)))
        for text, code in exprs:
            try:
                values.append((text, eval(code, g, dict(ns)), None))
            except Exception as e:
                values.append((text, None, "raised " + _describe_exc(e)))
        shown += 1
        meta["index"] = shown
        record(meta, values)
    return {"ok": True, "shown": shown, "dropped": w.dropped, "matched": matched,
            "reset": not w.active}
