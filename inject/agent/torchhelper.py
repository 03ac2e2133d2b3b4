# torchhelper — the Python side of `torch profile`, `torch memory` and
# `torch modules`, compiled into the agent (build-aux/build-agent.sh) and
# run in its own namespace by inject/agent/torch.c.
#
# Never imports torch: a process that has not imported it is told so
# (sys.modules is the only place we look).  Everything that runs on the
# application's threads (the enter/leave of a one-call hook, the module
# hooks) catches every exception: nothing of ours may raise into the
# program.  Hooks are removed when the request ends, however it ends.
#
# C gives this namespace: _helper (helper.py's namespace: the watch
# resolve/install machinery behind observe/unobserve), _fp_heap_in_use()
# (malloc's bytes in use, mallinfo2; -1 where unknown), _fp_instances(type)
# (the collector's objects of a type, found in C) and _fp_repr.

import sys
from time import monotonic_ns as _ns, sleep as _sleep

_WAIT_STEP = 0.02
_MAX_MODULES = 5000     # modules one `torch modules` hooks at most
_NOT_LOADED = "torch is not loaded in this process (it never imported torch; we do not import it)"


_live = {}              # request key -> what removes its hooks (cleanup())


class TorchError(Exception):
    """A request that cannot run: the message says why, for the client."""


def _torch():
    t = sys.modules.get("torch")
    if t is None or getattr(t, "nn", None) is None:
        raise TorchError(_NOT_LOADED)
    return t


def _out_path(path, default):
    """The absolute path to write (the target's cwd unless absolute), checked writable."""
    import os
    p = os.path.abspath(os.path.expanduser(path or default))
    d = os.path.dirname(p)
    if not os.path.isdir(d):
        raise TorchError("cannot write %s: the directory %s does not exist (in the target's "
                         "file system)" % (p, d))
    if os.path.isdir(p):
        raise TorchError("cannot write %s: it is a directory" % p)
    if not os.access(d, os.W_OK | os.X_OK) or (os.path.exists(p) and not os.access(p, os.W_OK)):
        raise TorchError("cannot write %s: permission denied for the target's user" % p)
    return p


def _why(e):
    try:
        text = str(e)
    except BaseException:
        text = _fp_repr(e, 300)
    return "%s: %s" % (type(e).__name__, text[:300]) if text else type(e).__name__


# ---- one call: what torch profile and torch memory -r observe -------------------

class _OneCall(object):
    """The next call of a method, hooked through helper.py's observe():
    start(args) runs on the calling thread at entry, finish(ctx, exc) at its
    exit; only the first call that enters is taken, the others run as if
    nothing were there."""

    def __init__(self, start, finish):
        from _thread import allocate_lock
        self.claim = allocate_lock()
        self.start, self.finish = start, finish
        self.state = "waiting"      # -> running -> done | failed
        self.result = None
        self.error = None
        self.exc = None
        self.t0 = self.t1 = 0

    def enter(self, args, kwargs):
        if not self.claim.acquire(False):
            return None
        try:
            self.t0 = _ns()
            ctx = self.start()
            self.state = "running"
            return (ctx,)
        except BaseException as e:
            self.error = "could not start: " + _why(e)
            self.state = "failed"
            return None

    def leave(self, st, ret, exc):
        if st is None:
            return
        try:
            self.t1 = _ns()
            self.exc = _why(exc) if exc is not None else None
            self.result = self.finish(st[0])
            self.state = "done"
        except BaseException as e:
            self.error = "could not finish: " + _why(e)
            self.state = "failed"


def _one_call(spec, start, finish, cancelled, event, what):
    """Hook the next call of spec's method, wait for it (spec["timeout"]
    seconds to start, then until it returns), remove the hook.  The
    _OneCall, or raises TorchError."""
    h = _helper
    oc = _OneCall(start, finish)
    try:
        w = h["observe"](spec["module"], spec.get("class"), spec["method"], spec.get("nested"),
                         oc.enter, oc.leave)
    except h["WatchError"] as e:
        raise TorchError(str(e))
    _live[spec["_key"]] = lambda: h["unobserve"](w)
    label = ".".join(p for p in (spec["module"], spec.get("class"), spec["method"]) if p)
    timeout = spec.get("timeout", 60)
    try:
        event({"waiting": label, "timeout": timeout, "what": what})
        deadline = _ns() + int(timeout * 1e9)
        while oc.state in ("waiting", "running"):
            if cancelled():
                break
            if oc.state == "waiting" and _ns() > deadline:
                break
            _sleep(_WAIT_STEP)
    finally:
        cleanup(spec["_key"])
    if oc.state == "waiting" and not cancelled():
        raise TorchError("%s was not called within %g s: nothing %s; the hook is removed"
                         % (label, timeout, what))
    if oc.state == "failed":
        raise TorchError(oc.error)
    oc.label = label
    return oc


def profile(spec, cancelled, event):
    """torch profile: the next call under torch.profiler, CPU (and CUDA when
    available), its trace written as Chrome/Perfetto JSON."""
    torch = _torch()
    path = _out_path(spec.get("file"), "trace.json")
    prof_mod = getattr(torch, "profiler", None)
    if prof_mod is None:
        raise TorchError("this torch (%s) has no torch.profiler" % torch.__version__)
    acts = [prof_mod.ProfilerActivity.CPU]
    cuda = bool(torch.cuda.is_available())
    if cuda:
        acts.append(prof_mod.ProfilerActivity.CUDA)

    def start():
        p = prof_mod.profile(activities=acts)
        p.__enter__()
        return p

    def finish(p):
        # Stopped on the calling thread (the profiler's state is its);
        # the trace is written on the agent's worker below.
        p.__exit__(None, None, None)
        return p

    oc = _one_call(spec, start, finish, cancelled, event, "was profiled")
    if oc.result is None:
        return {"cancelled": True}
    try:
        oc.result.export_chrome_trace(path)
    except OSError as e:
        raise TorchError("the call was profiled, but its trace could not be written to %s: %s"
                         % (path, e.strerror or e))
    import os
    return {"file": path, "bytes": os.path.getsize(path), "cuda": cuda,
            "call_ms": (oc.t1 - oc.t0) / 1e6, "method": oc.label, "exception": oc.exc,
            "events": len(oc.result.events() or [])}


# ---- torch memory ------------------------------------------------------------

def _cuda_ready(torch):
    """None when CUDA memory can be read, else why not.  Never initialises
    CUDA: a process that has not used it has no CUDA memory to show."""
    if getattr(torch.version, "cuda", None) is None:
        return ("this torch (%s) is built without CUDA: torch memory reads the CUDA "
                "caching allocator, there is none; nothing was written" % torch.__version__)
    if not torch.cuda.is_initialized():
        return ("CUDA is not initialised in this process (no CUDA tensor yet): there is no "
                "CUDA memory to show; nothing was written")
    return None


def _snapshot(torch):
    mem = torch.cuda.memory
    if hasattr(mem, "_snapshot"):
        return mem._snapshot()
    return {"segments": torch.cuda.memory_snapshot(), "device_traces": []}


def _record_history(torch, on):
    rec = getattr(torch.cuda.memory, "_record_memory_history", None)
    if rec is None:
        raise TorchError("this torch (%s) cannot record allocation history" % torch.__version__)
    try:
        rec("all" if on else None)              # torch >= 2.1
    except (TypeError, ValueError, RuntimeError):
        rec(bool(on))                           # 2.0 and older


def _write_pickle(obj, path):
    import pickle
    try:
        with open(path, "wb") as f:
            pickle.dump(obj, f)
    except OSError as e:
        raise TorchError("the snapshot could not be written to %s: %s" % (path, e.strerror or e))
    import os
    return os.path.getsize(path)


def memory(spec, cancelled, event):
    torch = _torch()
    why = _cuda_ready(torch)
    if why is not None:
        raise TorchError(why)
    path = _out_path(spec.get("file"), "snapshot.pickle")
    if not spec.get("record"):
        snap = _snapshot(torch)
        return {"file": path, "bytes": _write_pickle(snap, path), "mode": "snapshot",
                "segments": len(snap.get("segments", []))}

    def start():
        _record_history(torch, True)
        return True

    def finish(_):
        try:
            return _snapshot(torch)
        finally:
            _record_history(torch, False)

    oc = _one_call(spec, start, finish, cancelled, event, "was recorded")
    if oc.result is None:
        return {"cancelled": True}
    return {"file": path, "bytes": _write_pickle(oc.result, path), "mode": "record",
            "method": oc.label, "call_ms": (oc.t1 - oc.t0) / 1e6, "exception": oc.exc}


# ---- torch modules ------------------------------------------------------------
#
# The trees: every nn.Module the collector tracks, grouped under the modules
# no other module holds as a child (the roots).  A step is one call of the
# main root (the root with the most modules under it), from the start of
# its forward to the start of the next: backward and the optimizer's step
# fall inside.  N steps need N+1 calls of the main root.
#
# Forward: pre and post hooks.  Backward: not register_full_backward_hook,
# which wraps each output in a custom autograd Function and makes any
# in-place change of that output raise (`out += x`, ReLU(inplace=True)
# after the module) -- it would break the program.  Instead, gradient hooks
# on the tensors: the backward of a call starts when the gradient of its
# output is computed, and ends with the last gradient of its inputs (or of
# its parameters, when no input wants a gradient).  Those tensor hooks are
# removed at the end of each step.

class _Stats(object):
    __slots__ = ("calls", "ns", "mem", "mem_peak")

    def __init__(self):
        self.calls = 0
        self.ns = 0
        self.mem = 0
        self.mem_peak = 0

    def add(self, t0, t1, m0, m1):
        self.calls += 1
        self.ns += t1 - t0
        if m0 is not None and m1 is not None:
            self.mem += m1 - m0
            self.mem_peak = max(self.mem_peak, m1 - m0)


def _tensors(obj, torch, out):
    if isinstance(obj, torch.Tensor):
        if obj.requires_grad:
            out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj[:64]:
            if isinstance(o, torch.Tensor) and o.requires_grad:
                out.append(o)
    elif isinstance(obj, dict):
        for o in list(obj.values())[:64]:
            if isinstance(o, torch.Tensor) and o.requires_grad:
                out.append(o)
    return out


def _find_trees(torch):
    mods = _fp_instances(torch.nn.Module)
    children = set()
    for m in mods:
        for c in getattr(m, "_modules", {}).values():
            if c is not None:
                children.add(id(c))
    roots = [m for m in mods if id(m) not in children]
    del mods
    trees = []
    for r in roots:
        try:
            named = list(r.named_modules())
        except BaseException:
            continue
        trees.append((r, named))
    trees.sort(key=lambda t: -len(t[1]))
    return trees


class _ModulesRun(object):
    def __init__(self, torch, steps, memfn, memname):
        self.torch = torch
        self.steps = steps
        self.memfn = memfn
        self.memname = memname
        self.active = True
        self.step = 0           # 0: before the first step; 1..steps while recording
        self.step_t0 = 0
        self.step_ns = []
        self.stats = {}         # (name, stage) -> _Stats
        self.order = []         # names in first-call order
        self.open = {}          # id(module) -> [(t0, mem0)] of calls in flight
        self.pending = []       # backward calls of this step: [name, t_start, t_end, m0, m1]
        self.tensor_handles = []
        self.bare_params = {}   # id -> parameter that had no hook dict before ours

    def stat(self, name, stage):
        s = self.stats.get((name, stage))
        if s is None:
            s = self.stats[(name, stage)] = _Stats()
            if stage == "forward" and name not in self.order:
                self.order.append(name)
        return s

    def close_step(self, now):
        self.step_ns.append(now - self.step_t0)
        for name, t0, t1, m0, m1 in self.pending:
            if t0 and t1 >= t0:
                self.stat(name, "backward").add(t0, t1, m0, m1)
        self.pending = []
        self.drop_tensor_hooks()

    def drop_tensor_hooks(self):
        # Popped one by one: a second call goes on where an interrupted one stopped.
        hs = self.tensor_handles
        while hs:
            h = hs.pop()
            try:
                h.remove()
            except BaseException:
                pass
        # A parameter is as it was: no hook dict at all, not an empty one.
        ps = self.bare_params
        while ps:
            _, p = ps.popitem()
            try:
                if not p._backward_hooks:
                    p._backward_hooks = None
            except BaseException:
                pass

    def root_pre(self, module, inputs):
        if not self.active:
            return
        now = _ns()
        if self.step == 0:
            self.step = 1
        else:
            self.close_step(now)
            if len(self.step_ns) >= self.steps:
                self.active = False
                return
            self.step += 1
        self.step_t0 = now

    def make_hooks(self, name, own_params):
        torch = self.torch
        memfn = self.memfn
        run = self

        def pre(module, inputs):
            try:
                if run.active and run.step:
                    run.open.setdefault(id(module), []).append((_ns(), memfn()))
            except BaseException:
                pass

        def post(module, inputs, output):
            try:
                calls = run.open.get(id(module))
                if not calls:
                    return
                t0, m0 = calls.pop()
                run.stat(name, "forward").add(t0, _ns(), m0, memfn())
                if run.active and torch.is_grad_enabled():
                    run.backward_hooks(name, inputs, output, own_params)
            except BaseException:
                pass
        return pre, post

    def backward_hooks(self, name, inputs, output, own_params):
        torch = self.torch
        outs = _tensors(output, torch, [])
        if not outs:
            return
        ins = _tensors(inputs, torch, [])
        if not ins:
            ins = [p for p in own_params() if p.requires_grad]
            for p in ins:
                if p._backward_hooks is None:
                    self.bare_params[id(p)] = p
        memfn = self.memfn
        rec = [name, 0, 0, None, None]

        def began(grad):
            if not rec[1]:
                rec[1] = _ns()
                rec[3] = memfn()

        def ended(grad):
            rec[2] = _ns()
            rec[4] = memfn()
        hs = self.tensor_handles
        for t in outs:
            hs.append(t.register_hook(began))
        for t in ins:
            hs.append(t.register_hook(ended))
        self.pending.append(rec)


def _memory_source(torch):
    """(function -> bytes or None, description): CUDA's allocator when this
    process uses CUDA, else malloc's bytes in use (torch's CPU allocator
    allocates through malloc), else nothing."""
    if getattr(torch.version, "cuda", None) is not None and torch.cuda.is_initialized():
        return torch.cuda.memory_allocated, "CUDA memory allocated (torch.cuda.memory_allocated)"
    if _fp_heap_in_use() >= 0:
        return _fp_heap_in_use, "CPU: malloc's bytes in use (mallinfo2), all threads"
    return (lambda: None), "none (no CUDA, and this libc has no mallinfo2)"


def _install_modules(run, trees, filt, handles):
    """Hook every module of every tree (the main root always, for the
    steps), the handles to remove into handles; how many were hooked."""
    main = trees[0][0]
    handles.append(main.register_forward_pre_hook(run.root_pre))
    seen = set()
    count = 0
    for root, named in trees:
        rname = type(root).__name__
        for sub, m in named:
            if id(m) in seen or count >= _MAX_MODULES:
                continue
            seen.add(id(m))
            name = rname + ("." + sub if sub else "")
            if filt is not None and not filt.search(name):
                continue
            pre, post = run.make_hooks(name, m.parameters)
            try:
                handles.append(m.register_forward_pre_hook(pre))
                handles.append(m.register_forward_hook(post))
                count += 1
            except BaseException:
                continue
    return count


def modules(spec, cancelled, event):
    import re
    torch = _torch()
    steps = int(spec.get("steps", 1))
    filt = None
    if spec.get("filter"):
        try:
            filt = re.compile(spec["filter"])
        except re.error as e:
            raise TorchError("--filter is not a valid pattern: %s" % e)
    trees = _find_trees(torch)
    if not trees:
        raise TorchError("no torch.nn.Module exists in this process")
    memfn, memname = _memory_source(torch)
    run = _ModulesRun(torch, steps, memfn, memname)
    main = trees[0][0]
    mainname = type(main).__name__
    timeout = spec.get("timeout", 60)
    handles = []

    def remove():
        run.active = False
        while handles:     # popped: a second call finishes an interrupted one
            h = handles.pop()
            try:
                h.remove()
            except BaseException:
                pass
        run.drop_tensor_hooks()
    _live[spec["_key"]] = remove
    try:
        count = _install_modules(run, trees, filt, handles)
        if count == 0:
            raise TorchError("no module name matches --filter %s" % spec["filter"])
        event({"waiting": mainname, "timeout": timeout, "what": "steps", "modules": count,
               "steps": steps})
        deadline = _ns() + int(timeout * 1e9)
        while run.active and not cancelled() and _ns() < deadline:
            _sleep(_WAIT_STEP)
    finally:
        cleanup(spec["_key"])
    done = len(run.step_ns)
    if done == 0 and not cancelled():
        raise TorchError("no step completed within %g s (a step is one call of %s, the "
                         "largest module tree; %d needed): the hooks are removed"
                         % (timeout, mainname, steps + 1))
    step_total = sum(run.step_ns) or 1
    rows = []
    for name in run.order:
        for stage in ("forward", "backward"):
            s = run.stats.get((name, stage))
            if s is None or not s.calls:
                continue
            rows.append({"module": name, "stage": stage, "calls": s.calls,
                         "total_ms": s.ns / 1e6, "avg_ms": s.ns / 1e6 / s.calls,
                         "share": 100.0 * s.ns / step_total,
                         "mem": s.mem if run.memfn() is not None else None,
                         "mem_peak": s.mem_peak if run.memfn() is not None else None})
    return {"steps": done, "steps_asked": steps, "root": mainname, "roots": len(trees),
            "step_ms": [n / 1e6 for n in run.step_ns], "memory": memname, "rows": rows,
            "modules": len(run.order)}


_ACTIONS = {"profile": profile, "memory": memory, "modules": modules}


def cleanup(key):
    """Remove the hooks of request key, if any are left: called by run()
    and again by C after it (an interrupt may land in run's own cleanup)."""
    fn = _live.get(key)
    if fn is not None:
        fn()
        # Forgotten only once it ran to its end: an interrupt inside fn
        # leaves it for the next call.
        _live.pop(key, None)


def run(action, spec_json, key, cancelled, event):
    """One torch request (its arguments as JSON text, key naming it for
    cleanup()): plain data; {"error": ...} when it cannot run."""
    try:
        import json
        spec = json.loads(spec_json)
        spec["_key"] = key
        fn = _ACTIONS.get(action)
        if fn is None:
            return {"error": "torch: the action is profile, memory or modules"}
        return fn(spec, cancelled, event)
    except TorchError as e:
        return {"error": str(e)}
