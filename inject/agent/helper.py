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


def run_code(source, filename, mode, ns, emit, limit):
    """Run source in ns.  mode "exec" (execute) runs it as a module body;
    "console" runs one interactive statement and echoes an expression's
    value, as the interactive interpreter does (but keeps `_` in ns, not
    in builtins, which belong to the application)."""
    cap = _Capture(emit, limit)
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
