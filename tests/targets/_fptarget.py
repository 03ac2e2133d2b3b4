"""Helpers shared by the integration-test targets (standard library only).

A target is a real Python program that parks its threads at lines marked
with a trailing ``# @name`` comment and then tells the test harness it is
ready by writing one line "ready\\n" to the file descriptor named by the
environment variable FP_READY_FD.  "Ready" must mean *every* thread is at its
line, so nothing here relies on a sleep: a separate announcer thread looks at
the other threads' frames (sys._current_frames) and their kernel state until
each one is parked where the target said it would be, and only then writes.

Runs on CPython 3.7 too (the unsupported-version test starts idle.py on 3.7),
so no syntax or API newer than that here.  Call these helpers only *before* a
thread parks: once parked, a thread's stack must show the target's own frames.
"""

import os
import re
import sys
import threading
import time

# "# @name" or "# any words @name" at the end of a line; names are ASCII.
_MARKER = re.compile(r"#(?:.*\s)?@([A-Za-z0-9_-]+)\s*$")

# How long the announcer waits for the threads to park before giving up.
PARK_TIMEOUT = 30.0


def marker_lines(path):
    """Map each ``# @name`` marker in the file at path to its line number."""
    lines = {}
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            m = _MARKER.search(text)
            if m:
                if m.group(1) in lines:
                    raise ValueError("%s: marker @%s used twice" % (path, m.group(1)))
                lines[m.group(1)] = number
    return lines


def name_os_thread(name=None):
    """Give the calling thread's OS thread (its /proc comm) its Python name.

    Without an agent in the target, the outside view can only show the OS
    thread name, and CPython up to 3.13 never sets it.
    """
    thread = threading.current_thread()
    native_id = getattr(thread, "native_id", None)
    if native_id is None:
        return
    raw = (name or thread.name).encode("utf-8")[:15]
    try:
        with open("/proc/self/task/%d/comm" % native_id, "wb") as f:
            f.write(raw)
    except OSError:
        pass


def signal_ready(keep_gil=False):
    """Write the ready line to FP_READY_FD (no-op when run by hand).

    os.write() lets go of the GIL around the system call, so a reader woken
    by the line could catch the writer without the GIL.  With keep_gil the
    line is written through ctypes.PyDLL, whose calls keep holding the GIL.
    """
    fd = os.environ.get("FP_READY_FD")
    if fd is None:
        return
    if keep_gil:
        import ctypes
        libc = ctypes.PyDLL(None)
        libc.write(int(fd), b"ready\n", 6)
        libc.close(int(fd))
    else:
        os.write(int(fd), b"ready\n")
        os.close(int(fd))


def _task_state(thread):
    native_id = getattr(thread, "native_id", None)
    if native_id is None:
        return "S"  # 3.7 has no native ids: trust the frame check alone
    try:
        with open("/proc/self/task/%d/stat" % native_id) as f:
            stat = f.read()
    except OSError:
        return "?"
    return stat[stat.rindex(")") + 2]


class Spot:
    """A thread that should be parked (kernel state S) with its innermost
    frame from `path` at the line of `marker`."""

    def __init__(self, thread, path, marker):
        self.thread = thread
        self.path = os.path.abspath(path)
        self.marker = marker
        self.line = marker_lines(path)[marker]

    def frames(self):
        """Frames of the thread's stack that belong to `path`, innermost first."""
        frame = sys._current_frames().get(self.thread.ident)
        mine = []
        while frame is not None:
            # co_filename is the path as run (build-asan/../x.py); self.path is absolute
            if os.path.abspath(frame.f_code.co_filename) == self.path:
                mine.append(frame)
            frame = frame.f_back
        return mine

    def problem(self):
        """None when parked, else why not."""
        mine = self.frames()
        if not mine:
            return "%s: no frame of %s yet" % (self.thread.name, self.path)
        if mine[0].f_lineno != self.line:
            return "%s: at line %d, not at @%s (line %d)" % (
                self.thread.name, mine[0].f_lineno, self.marker, self.line)
        state = _task_state(self.thread)
        if state != "S":
            return "%s: at @%s but in kernel state %s, not S" % (
                self.thread.name, self.marker, state)
        return None


def wait_until_parked(spots, extra_check=None):
    """Return once every spot is parked, seen so on two looks in a row.

    Between the looks this thread sleeps briefly and so lets go of the GIL:
    a thread that had reached its line but was still waiting for the GIL
    then gets it and enters its blocking call, instead of being caught in
    a GIL wait.  extra_check() may return a further problem string or None.
    Gives up after PARK_TIMEOUT seconds: prints why on stderr and exits 3.
    """
    deadline = time.monotonic() + PARK_TIMEOUT
    good_looks = 0
    while True:
        problems = [p for p in (s.problem() for s in spots) if p]
        if extra_check is not None and not problems:
            extra = extra_check()
            if extra:
                problems.append(extra)
        good_looks = 0 if problems else good_looks + 1
        if good_looks >= 2:
            return
        if time.monotonic() > deadline:
            sys.stderr.write("target never parked: %s\n" % "; ".join(problems))
            sys.stderr.flush()
            os._exit(3)
        time.sleep(0.005)


def announce_when_parked(spots, extra_check=None):
    """Start the announcer thread "fp-ready": it waits until every spot is
    parked, writes the ready line, then parks itself for good (so that no
    thread is exiting while the tests read the process)."""

    def announcer():
        name_os_thread()
        wait_until_parked(spots, extra_check)
        signal_ready()
        threading.Event().wait()

    thread = threading.Thread(target=announcer, name="fp-ready", daemon=True)
    thread.start()
    return thread


# ---- what an observation may leave behind ------------------------------------
#
# The agent's watch, trace, tt and monitor observe a function at its code
# (a __code__ swap before 3.12, a sys.monitoring tool id and local events
# since) and must leave nothing when they end.  A target takes a snapshot
# at start, before any agent is loaded, and a test asks hooks_left() from
# inside afterwards.

def _code_of(obj):
    return getattr(getattr(obj, "__func__", obj), "__code__", None)


# Where PyFunctionObject keeps its vectorcall slot, in pointers from its
# start (Include/cpython/funcobject.h of each version): watch's common case
# (the agent's vcall.c) observes a function there.
_SLOT_INDEX = {(3, 8): 14, (3, 9): 14, (3, 10): 15, (3, 11): 15, (3, 12): 16, (3, 13): 16}


def _call_slot(fn):
    """fn's vectorcall slot as an address, read from the object itself;
    None when this version's layout is not known here."""
    import ctypes
    import types
    i = _SLOT_INDEX.get(sys.version_info[:2])
    if i is None or not isinstance(fn, types.FunctionType):
        return None
    return ctypes.c_void_p.from_address(id(fn) + i * ctypes.sizeof(ctypes.c_void_p)).value


def _slot_changed(obj):
    fn = getattr(obj, "__func__", obj)
    slot = _call_slot(fn)
    return slot is not None and slot != _call_slot(lambda: None)


def _lookup(namespace, name):
    """namespace's "name", or for "json.dumps" / "Calc.mul" the attribute
    as its module or class stores it (a class's own __dict__ entry: the
    staticmethod, not the function it holds)."""
    head, _, rest = name.partition(".")
    obj = namespace.get(head)
    for part in rest.split(".") if rest else ():
        d = getattr(obj, "__dict__", {})
        obj = d.get(part) if isinstance(obj, type) else getattr(obj, part, None)
    return obj


def frame_evaluator():
    """The interpreter's PEP 523 frame evaluator (an address), or None
    where it cannot be read (3.8, no ctypes): trace's eval path installs
    one of its own while a traced call runs (inject/agent/evalhook.c)."""
    try:
        import ctypes
        api = ctypes.pythonapi
        get = api._PyInterpreterState_GetEvalFrameFunc
        interp = api.PyInterpreterState_Get
    except (ImportError, AttributeError):
        return None
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
    interp.restype, interp.argtypes = ctypes.c_void_p, []
    return get(interp())


def default_frame_evaluator():
    """Is the interpreter's own frame evaluator the one installed (True
    where it cannot be read)?"""
    cur = frame_evaluator()
    if cur is None:
        return True
    import ctypes
    return cur == ctypes.cast(ctypes.pythonapi._PyEval_EvalFrameDefault, ctypes.c_void_p).value


def hooks_snapshot(namespace, names, classes=()):
    """The originals hooks_left compares with: the objects named in names
    (see _lookup) and every attribute of the classes named in classes,
    their code objects and those of the functions they wrap (decorators'
    __wrapped__), the class dictionaries' keys and the sys.monitoring tool
    ids the program holds itself."""
    objects = dict((n, _lookup(namespace, n)) for n in names)
    for c in classes:
        for k, v in vars(namespace[c]).items():
            objects[c + "." + k] = v
    codes = {}
    for n, obj in objects.items():
        if _code_of(obj) is not None:
            codes[n] = _code_of(obj)
        inner = getattr(getattr(obj, "__func__", obj), "__wrapped__", None)
        if _code_of(inner) is not None:
            codes[n + ".__wrapped__"] = _code_of(inner)
    mon = getattr(sys, "monitoring", None)
    tools = dict((t, mon.get_tool(t)) for t in range(6)) if mon else {}
    return {"objects": objects, "codes": codes, "tools": tools,
            "classes": dict((c, set(vars(namespace[c]))) for c in classes),
            "evaluator": frame_evaluator()}


def hooks_left(namespace, originals):
    """What an observation left, against hooks_snapshot's originals: names
    whose attribute is not the very object it was at start, class
    attributes added, "code NAME" for each function whose code is not the
    original, "vectorcall NAME" for each whose call slot is not the
    interpreter's own, "tool T=WHO" for a sys.monitoring tool id held by anyone but
    the program, "lost tool T" for one of the program's that changed and
    "frame evaluator" when the PEP 523 evaluator is not the one of start."""
    left = [n for n, obj in originals["objects"].items() if _lookup(namespace, n) is not obj]
    for c, keys in originals["classes"].items():
        left += [c + "." + k for k in vars(namespace[c]) if k not in keys]
    for n, code in originals["codes"].items():
        obj = originals["objects"][n.replace(".__wrapped__", "")]
        if n.endswith(".__wrapped__"):
            obj = getattr(obj, "__func__", obj).__wrapped__
        if _code_of(obj) is not code:
            left.append("code " + n)
        if _slot_changed(obj):
            left.append("vectorcall " + n)
    mon = getattr(sys, "monitoring", None)
    for t, who in originals["tools"].items():
        now = mon.get_tool(t)
        if who is None and now is not None:
            left.append("tool %d=%s" % (t, now))
        elif who is not None and now != who:
            left.append("lost tool %d" % t)
    if frame_evaluator() != originals["evaluator"]:
        left.append("frame evaluator")
    return left
