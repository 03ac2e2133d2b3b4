# observe — how the agent sees the calls of one function, compiled into the
# agent and run in helper.py's namespace (after it).  watch, monitor, tt and
# trace build on one interface:
#
#     h = observe_install(fn, enter, leave, nested=None)
#     enter(args, kwargs) -> state      in the calling thread, at entry
#     leave(state, ret, exc)            in the calling thread, at exit
#     observe_remove(h)
#     enter.resume(state)               optional: 3.12+, a generator or coroutine
#                                       resuming after a yield/await (trace)
#
# The observation is on the function's CODE, not on the attribute that
# names it, so every reference is observed: a callback stored before the
# watch, a bound method held elsewhere, functools.partial, the function
# under a decorator (__wrapped__), every closure made from a nested code.
#   - 3.12+: sys.monitoring LOCAL events (PY_START, PY_RETURN) on that code
#     object only (PY_UNWIND, for exits by an exception, exists only as a
#     process-wide event: see _mon_acquire), under a tool id of our own that was free (never
#     one a debugger, coverage or profiler holds), released when the last
#     observation ends.  Code that is not observed pays nothing.
#   - 3.8-3.11: the function's __code__ is swapped for a trampoline with the
#     same signature and free variables that calls the original code through
#     our hook; restored exactly (`fn.__code__ is original`) on removal.
# args are the values bound to the positional parameters (defaults
# included) and any extra *args; kwargs the keyword-only parameters and any
# extra **kwargs: the code sees parameters, not how the caller spelt them.
# enter and leave never raise into the program: what they raise is dropped.
# Never hold the GIL long here; never call the program's code.

import sys as _sys

_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08
_CO_GENERATOR, _CO_COROUTINE, _CO_ASYNC_GENERATOR = 0x20, 0x80, 0x200
_USE_MONITORING = hasattr(_sys, "monitoring")
# _caller_stack (helper.py): under sys.monitoring the first frame outside
# the agent is the observed call itself, not its caller.
_OBSERVE_SKIPS_CALLEE = _USE_MONITORING
_TOOL_PREFERENCE = (4, 3, 5, 2, 1, 0)   # the named ids (debugger 0, coverage 1,
                                         # profiler 2) last


class _Obs(object):
    """One observation: a code object watched for one enter/leave pair."""
    __slots__ = ("fn", "code", "enter", "leave", "owner", "label", "resume", "fast",
                 "slot_only")

    def __init__(self, fn, code, enter, leave):
        self.fn, self.code, self.enter, self.leave = fn, code, enter, leave
        self.resume = getattr(enter, "resume", None)
        self.owner = None   # 3.8-3.11: (holder, attribute) whose code we swapped
        self.label = getattr(code, "co_qualname", code.co_name)
        # 3.12+ with the agent's C callbacks (monfast.c): what they need to
        # do enter/leave's work themselves, when leave says it is watch's
        # common case (helper.py's _make_hooks).
        self.fast = getattr(leave, "_fp_fast", None) if _FAST_C else None
        # A fast spec only vcall.c knows (monitor's): the code-level C
        # callbacks build watch's records only.
        self.slot_only = getattr(leave, "_fp_slot_only", False)


def _fast_of(obs):
    """What the agent's C code (monfast.c) needs to do the work of a code's
    observations itself: the fast spec of the one observation when it is
    watch's common case; None, and the Python hooks run, otherwise."""
    return obs[0].fast if len(obs) == 1 and not obs[0].slot_only else None


def _nested_code(code, name):
    """The code object of the function `name` defined directly in code."""
    import types
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and c.co_name == name:
            return c
    return None


# ---- 3.12+: sys.monitoring local events --------------------------------------

_mon = {"tool": None, "codes": {}, "frames": {}, "cframes": {}, "c": False}
# The agent's C callbacks (monfast.c), which it exports on 3.12+ only;
# before, its C HOOK for trampolines.
_MON_C = _USE_MONITORING and "_fp_mon_start" in globals()
_FAST_C = _MON_C or (not _USE_MONITORING and "_fp_tr_hook" in globals())


def _param_names(code):
    """(positional names, keyword-only names, *name or None, **name or None)."""
    n, k = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    i = n + k
    star = dstar = None
    if code.co_flags & _CO_VARARGS:
        star = names[i]
        i += 1
    if code.co_flags & _CO_VARKEYWORDS:
        dstar = names[i]
    return names[:n], names[n:n + k], star, dstar


# The hot path binds what it uses once: the tables are never replaced.
_mon_codes = _mon["codes"]     # code -> (observations, *_param_names(code), fast)
_mon_frames = _mon["frames"]   # frame -> [(observation, state)]
_mon_cframes = _mon["cframes"]   # frame -> record begun, [8] its fast: monfast.c's
_mon_code_get = _mon_codes.get
_getframe = _sys._getframe


def _mon_start(code, offset):
    e = _mon_code_get(code)
    if e is None:
        return
    f = _getframe(1)
    obs, pos, kwo, star, dstar, _ = e
    try:
        loc = f.f_locals
        args = tuple([loc[x] for x in pos])
        kwargs = {x: loc[x] for x in kwo} if kwo else {}
        if star is not None:
            args += tuple(loc[star])
        if dstar is not None:
            kwargs.update(loc[dstar])
    except BaseException:
        return
    states = []
    for o in obs:
        try:
            states.append((o, o.enter(args, kwargs)))
        except BaseException:
            pass
    _mon_frames[f] = states


def _mon_leave(frame, ret, exc):
    states = _mon_frames.pop(frame, None)
    if states:
        for o, st in states:
            try:
                o.leave(st, ret, exc)
            except BaseException:
                pass


def _mon_return(code, offset, ret):
    _mon_leave(_getframe(1), ret, None)


def _mon_unwind(code, offset, exc):
    if code in _mon_codes:
        _mon_leave(_getframe(1), None, exc)


def _mon_events():
    E = _sys.monitoring.events
    return E.PY_START | E.PY_RETURN


# ---- 3.12+: resumes of a generator or coroutine, for observers that ask --------
#
# PY_RESUME (a local event) on the codes of generators and coroutines only,
# and only while an observation of it has enter.resume (trace: its recorder
# unhooks the thread at each yield and comes back here).

_CO_SUSPENDS = _CO_GENERATOR | _CO_COROUTINE | _CO_ASYNC_GENERATOR


def _mon_resume(code, offset):
    sts = _mon_frames.get(_getframe(1))
    if sts:
        for o, st in sts:
            if o.resume is not None:
                try:
                    o.resume(st)
                except BaseException:
                    pass


def _mon_code_events(code):
    """The local events code needs for the observations it has now."""
    e = _mon_codes.get(code)
    if code.co_flags & _CO_SUSPENDS and e and any(o.resume is not None for o in e[0]):
        return _mon_events() | _sys.monitoring.events.PY_RESUME
    return _mon_events()


def _mon_code_events_update(code):
    if code in _mon_codes:
        try:
            _sys.monitoring.set_local_events(_mon["tool"], code, _mon_code_events(code))
        except BaseException:
            pass


def _mon_acquire():
    m = _sys.monitoring
    if _mon["tool"] is not None:
        return _mon["tool"]
    for tid in _TOOL_PREFERENCE:
        if m.get_tool(tid) is not None:
            continue
        try:
            m.use_tool_id(tid, "flight_profiler")
        except ValueError:
            continue
        E = m.events
        # C first (they call the Python ones for what they do not do),
        # unless the interpreter has no code-extra slot left for them.
        _mon["c"] = _MON_C and _fp_mon_setup(_mon_frames, _mon_cframes,
                                             _mon_start, _mon_return, _mon_unwind)
        if _mon["c"]:
            m.register_callback(tid, E.PY_START, _fp_mon_start)
            m.register_callback(tid, E.PY_RETURN, _fp_mon_return)
            m.register_callback(tid, E.PY_UNWIND, _fp_mon_unwind)
        else:
            m.register_callback(tid, E.PY_START, _mon_start)
            m.register_callback(tid, E.PY_RETURN, _mon_return)
            m.register_callback(tid, E.PY_UNWIND, _mon_unwind)
        m.register_callback(tid, E.PY_RESUME, _mon_resume)
        # PY_UNWIND cannot be a local event (3.12, 3.13): it is set for the
        # whole process, so a frame of code we do not observe that ends by
        # an exception pays one dictionary look-up in _mon_unwind.
        m.set_events(tid, E.PY_UNWIND)
        _mon["tool"] = tid
        return tid
    held = ", ".join("%d=%s" % (t, m.get_tool(t)) for t in range(6))
    raise WatchError("every sys.monitoring tool id is taken by other tools (%s): "
                     "nothing can be observed until one is freed" % held)


def _mon_release():
    """Give the tool id back once nothing is observed: callbacks cleared
    first (3.12 and 3.13's free_tool_id leaves them registered)."""
    tid = _mon["tool"]
    if tid is None or _mon["codes"]:
        return
    m = _sys.monitoring
    E = m.events
    try:
        m.set_events(tid, 0)
    except BaseException:
        pass
    for ev in (E.PY_START, E.PY_RETURN, E.PY_UNWIND, E.PY_RESUME):
        try:
            m.register_callback(tid, ev, None)
        except BaseException:
            pass
    try:
        m.free_tool_id(tid)
    except BaseException:
        pass
    _mon["tool"] = None
    _mon["frames"].clear()
    _mon["cframes"].clear()


def _mon_install(o):
    tid = _mon_acquire()
    e = _mon_codes.get(o.code)
    if e is None:
        try:
            _sys.monitoring.set_local_events(tid, o.code, _mon_events())
        except BaseException as e:
            _mon_release()
            raise WatchError("cannot observe %s: %s" % (o.label, e))
        e = ((),) + _param_names(o.code)
    # Copy on write: a callback iterating the old entry is not disturbed.
    _mon_set(o.code, _mon_entry(e[0] + (o,), e[1:5]))
    if o.resume is not None:
        _mon_code_events_update(o.code)


def _mon_entry(obs, params):
    """A code's entry: the C callbacks do the work themselves when its one
    observation is watch's common case; the Python ones otherwise."""
    return (obs,) + tuple(params) + (_fast_of(obs),)


def _mon_set(code, entry):
    """_mon_codes[code] = entry, or removed when entry is None; the C
    callbacks find the entry in the code object itself (a code object's
    hash is computed anew at every dictionary look-up)."""
    if entry is None:
        _mon_codes.pop(code, None)
    else:
        _mon_codes[code] = entry
    if _mon["c"]:
        _fp_mon_bind(code, entry)


def _mon_remove(o):
    codes = _mon_codes
    e = codes.get(o.code)
    left = tuple(x for x in (e[0] if e else ()) if x is not o)
    if left:
        _mon_set(o.code, _mon_entry(left, e[1:5]))
        if o.resume is not None:
            _mon_code_events_update(o.code)
    elif e is not None:
        _mon_set(o.code, None)
        try:
            _sys.monitoring.set_local_events(_mon["tool"], o.code, 0)
        except BaseException:
            pass
    frames = _mon_frames
    for f in [f for f, sts in list(frames.items()) if any(x is o for x, _ in sts)]:
        sts = [s for s in frames.get(f, ()) if s[0] is not o]
        if sts:
            frames[f] = sts
        else:
            frames.pop(f, None)
    if o.fast is not None:
        cf = _mon_cframes
        for f in [f for f, rec in list(cf.items()) if rec[8] is o.fast]:
            cf.pop(f, None)
    _mon_release()


# ---- 3.8-3.11: a trampoline __code__ -----------------------------------------
#
# The trampoline has the function's signature (so its defaults and keyword
# rules apply unchanged) and its free variables (so the closure still fits)
# and calls HOOK, a constant we put in its co_consts.  HOOK calls the
# original code as a shadow function made with the same globals and
# closure.  For a nested function (-nm) the closure differs per creation:
# HOOK then gets the trampoline's own cells first and makes the shadow then.

_HOOK = "\x00fp-observe-hook"
_tr = {}   # id(code) -> (holder, attr, original code, trampoline, [obs])


def _tr_source(code, with_cells):
    names = code.co_varnames
    n, p, k = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    sig, call = [], []
    for i, x in enumerate(names[:n]):
        sig.append(x)
        call.append(x)
        if p and i == p - 1:
            sig.append("/")
    i = n + k
    if code.co_flags & _CO_VARARGS:
        sig.append("*" + names[i])
        call.append("*" + names[i])
        i += 1
    elif k:
        sig.append("*")
    for x in names[n:n + k]:
        sig.append(x)
        call.append("%s=%s" % (x, x))
    if code.co_flags & _CO_VARKEYWORDS:
        sig.append("**" + names[i])
        call.append("**" + names[i])
    free = list(code.co_freevars)
    cells = "(lambda: (%s,)).__closure__" % ", ".join(free) if free else "()"
    if with_cells:
        call.insert(0, cells)
    if not with_cells:
        call.insert(0, "None")
    invoke = "%r(%s)" % (_HOOK, ", ".join(call))
    flags = code.co_flags
    head = "def"
    if flags & _CO_COROUTINE:
        head, invoke = "async def", "await " + invoke
    elif flags & _CO_GENERATOR:
        invoke = "(yield from %s)" % invoke
    lines = ["def __fp_outer__():"]
    if free:
        lines.append("    %s = None" % " = ".join(free))
    lines.append("    %s __fp_trampoline__(%s):" % (head, ", ".join(sig)))
    lines.append("        return " + invoke)
    if free:   # makes them free variables here, in the same (sorted) order
        lines.append("        (%s,)" % ", ".join(free))
    lines.append("    return __fp_trampoline__")
    return "\n".join(lines) + "\n"


def _tr_code(code, hook, with_cells):
    import types
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # "str is not callable": HOOK is replaced
        outer = compile(_tr_source(code, with_cells), __file__, "exec")
    outer = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
    t = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
    if t.co_freevars != code.co_freevars:
        raise WatchError("cannot observe %s: its free variables do not fit a trampoline"
                         % code.co_name)
    consts = tuple(hook if (type(c) is str and c == _HOOK) else c for c in t.co_consts)
    kw = {"co_consts": consts, "co_name": code.co_name}
    if hasattr(code, "co_qualname"):
        kw["co_qualname"] = code.co_qualname
    return t.replace(**kw)


def _tr_hook(entry, shadow, make):
    """HOOK for one trampoline: calls the original code as shadow, or for a
    nested function as make(cells) with the trampoline's own cells.
    entry[4] is the live list of observations."""
    kind = entry[2].co_flags

    def begin(args, kwargs):
        states = []
        for o in entry[4]:
            try:
                states.append((o, o.enter(args, kwargs)))
            except BaseException:
                pass
        return states

    def end(states, ret, exc):
        for o, st in states:
            try:
                o.leave(st, ret, exc)
            except BaseException:
                pass

    # Three bodies because `await` and `yield from` are syntax: the cost of
    # a coroutine or generator covers its whole run, not its creation.
    if kind & _CO_COROUTINE:
        async def hook(cells, *args, **kwargs):
            f = shadow if cells is None else make(cells)
            sts = begin(args, kwargs)
            try:
                r = await f(*args, **kwargs)
            except BaseException as e:
                end(sts, None, e)
                raise
            end(sts, r, None)
            return r
    elif kind & _CO_GENERATOR:
        def hook(cells, *args, **kwargs):
            f = shadow if cells is None else make(cells)
            sts = begin(args, kwargs)
            try:
                r = yield from f(*args, **kwargs)
            except BaseException as e:
                end(sts, None, e)
                raise
            end(sts, r, None)
            return r
    else:
        def hook(cells, *args, **kwargs):
            f = shadow if cells is None else make(cells)
            sts = begin(args, kwargs)
            try:
                r = f(*args, **kwargs)
            except BaseException as e:
                end(sts, None, e)
                raise
            end(sts, r, None)
            return r
    return hook


def _tr_install(o, holder, nested):
    """holder: the function whose __code__ is swapped: fn itself, or for -nm
    the outer function, whose new code holds the nested trampoline as the
    constant the original nested code was."""
    import types
    key = id(o.code)
    entry = _tr.get(key)
    if entry is None:
        orig = holder.__code__
        entry = [holder, orig, o.code, None, [], None]   # [5]: _fast_of
        if nested is None:
            shadow = types.FunctionType(o.code, holder.__globals__, o.code.co_name,
                                        None, holder.__closure__)
            hook = _tr_hook(entry, shadow, None)
            if _FAST_C and not o.code.co_flags & (_CO_GENERATOR | _CO_COROUTINE |
                                                  _CO_ASYNC_GENERATOR):
                hook = _fp_tr_hook(entry, hook, shadow)   # monfast.c, Python hook inside
            entry[3] = _tr_code(o.code, hook, False)
        else:
            g = holder.__globals__

            def make(cells, code=o.code, g=g):
                return types.FunctionType(code, g, code.co_name, None, cells or None)
            t = _tr_code(o.code, _tr_hook(entry, None, make), True)
            entry[3] = orig.replace(co_consts=tuple(t if c is o.code else c
                                                    for c in orig.co_consts))
        holder.__code__ = entry[3]
        _tr[key] = entry
    entry[4] = entry[4] + [o]
    entry[5] = _fast_of(entry[4])


def _tr_remove(o):
    key = id(o.code)
    entry = _tr.get(key)
    if entry is None:
        return
    entry[4] = [x for x in entry[4] if x is not o]
    entry[5] = _fast_of(entry[4])
    if entry[4]:
        return
    del _tr[key]
    holder, orig, _, installed = entry[0], entry[1], entry[2], entry[3]
    # Put the original back unless the program replaced ours meanwhile.
    if holder.__code__ is installed:
        holder.__code__ = orig
    entry[3] = None   # the trampoline holds the hook, which holds entry: a cycle


# ---- 3.8-3.10, 3.12+: the function's vectorcall slot (vcall.c) ---------------
#
# Watch's common case (one observation with a fast spec) of a plain
# function with positional parameters only: the function object's call
# slot times the call and queues the record in C, with no event, frame or
# Python call of ours.  It sees every call of that function object, by
# whatever reference; a second function made from the same code (a nested
# def) is not seen, so -nm keeps the code mechanisms.

_VC_C = "_fp_vc_hook" in globals()
_vc = {}   # id(fn) -> the observation hooked through fn's slot


def _vc_install(o, nested):
    """Observe o through fn's slot when that is the case; false otherwise."""
    fn = o.fn
    if (not _VC_C or o.fast is None or nested is not None or id(fn) in _vc or
            fn.__code__ is not o.code):
        return False
    # A special method may be entered past the slot: 3.13's specialized
    # call of a class runs its __init__'s code after checking the type
    # only.  Those keep the code-level mechanisms, which see every call.
    name = o.code.co_name
    if name.startswith("__") and name.endswith("__"):
        return False
    if not _fp_vc_hook(fn, o.fast):
        return False
    _vc[id(fn)] = o
    return True


def _vc_remove(o):
    """True when o was observed through fn's slot (and is no more)."""
    if _vc.get(id(o.fn)) is not o:
        return False
    del _vc[id(o.fn)]
    _fp_vc_unhook(o.fn)
    return True


# ---- the interface ----------------------------------------------------------

def observe_install(fn, enter, leave, nested=None):
    """Observe fn's code (or, with nested, the code of the function named
    nested defined in fn) with enter/leave; the handle is for
    observe_remove.  Raises WatchError when it cannot."""
    import types
    if not isinstance(fn, types.FunctionType):
        raise WatchError("%r is not a Python function" % (fn,))
    code = fn.__code__
    if not _USE_MONITORING:
        swapped = [e for e in _tr.values() if e[0] is fn and e[3] is code]
        if swapped and (nested is not None or swapped[0][1] is not swapped[0][2]):
            raise WatchError("%s or a function nested in it is observed already: before "
                             "Python 3.12 only one of them at a time" % code.co_name)
        if swapped:
            code = swapped[0][2]   # observe the original with the others
    if nested is not None:
        inner = _nested_code(code, nested)
        if inner is None:
            raise WatchError("no function '%s' is defined in %s" % (nested, code.co_name))
        code = inner
    if code.co_flags & _CO_ASYNC_GENERATOR and not _USE_MONITORING:
        raise WatchError("%s is an async generator: observed on Python 3.12 and later only"
                         % code.co_name)
    o = _Obs(fn, code, enter, leave)
    if _vc_install(o, nested):
        pass
    elif _USE_MONITORING:
        _mon_install(o)
    else:
        _tr_install(o, fn, nested)
    return o


def observe_remove(o):
    if _vc_remove(o):
        return
    if _USE_MONITORING:
        _mon_remove(o)
    else:
        _tr_remove(o)


def observe_status():
    """What is observed now, for tests and `reset`: tool id, code count."""
    if _USE_MONITORING:
        return {"mechanism": "sys.monitoring", "tool_id": _mon["tool"],
                "codes": len(_mon["codes"]), "functions": len(_vc),
                "in_flight": len(_mon["frames"]) + len(_mon["cframes"])}
    return {"mechanism": "__code__ swap", "tool_id": None, "codes": len(_tr),
            "functions": len(_vc), "in_flight": 0}


# ---- -E: the names a client may match ---------------------------------------
#
# The client matches class and method patterns with PCRE2 (the same engine
# as the TUI's search), so the agent only lists what could be observed and
# takes back exact names (spec["targets"]).

_NAMES_MAX = 10000   # names one answer lists at most


def observable_names(modname):
    """{"functions": [...], "classes": [[name, [methods]]], "truncated"}:
    the observable functions defined by module modname and its classes."""
    mod = sys.modules.get(modname)
    if mod is None:
        raise WatchError("module '%s' is not imported in this process%s"
                         % (modname, _closest(modname, list(sys.modules))))
    left = [_NAMES_MAX]

    def functions(owner, where, own):
        out = []
        for k in sorted(n for n in vars(owner) if isinstance(n, str)):
            t = _target_of(owner, k, where, False)
            if t is None or (own and getattr(t[1], "__module__", None) != modname):
                continue
            if left[0] <= 0:
                break
            left[0] -= 1
            out.append(k)
        return out
    funcs = functions(mod, "module '%s'" % modname, True)
    classes = []
    for k, v in sorted((k, v) for k, v in vars(mod).items() if isinstance(k, str)):
        if isinstance(v, type) and getattr(v, "__module__", None) == modname and left[0] > 0:
            classes.append([k, functions(v, "class '%s'" % k, False)])
    return {"ok": True, "functions": funcs, "classes": classes, "truncated": left[0] <= 0}


def observable_names_call(modname):
    try:
        return observable_names(modname)
    except WatchError as e:
        return {"ok": False, "message": str(e)}


def resolve_targets(modname, pairs):
    """[(owner, name, raw, fn, bound, label)] for the exact (class, method)
    pairs a client picked; a name gone since it listed them is an error."""
    out = []
    for cls, method in pairs:
        owner, where = _resolve_owner(modname, cls)
        raw, fn, bound = _target_of(owner, method, where, True)
        out.append((owner, method, raw, fn, bound,
                    ".".join(p for p in (modname, cls, method) if p)))
    return out


def spec_targets(spec):
    """A request's targets and how many matched: the client's -E picks
    (spec["targets"]) or its one module [class] method."""
    if spec.get("targets") is not None:
        targets = resolve_targets(spec["module"], spec["targets"])
        return targets, spec.get("matched", len(targets))
    return _resolve(spec["module"], spec.get("class"), spec["method"])


# ---- one streaming request's observation, from install to removal -----------
#
# watch, trace, tt's recording and monitor all observe their targets for as
# long as one request streams.  observing() is the only place that installs
# them, registers them for `reset` and the connection's end (monitor.py's
# instrument_add) and watch_stop (helper.py's _watches), and removes them on
# every way out: the end of the with block by return, -n, cancel, `reset`,
# an error or an interrupt.  Removal runs first and the registrations go
# after it, so an interrupt that lands in the middle leaves the watch where
# watch_stop (called again by C after every request) or the connection's
# end still finds it.

class observing(object):
    """with observing(conn, rid, kind, w, targets, nested) as labels: w (a
    _Watch, helper.py) observes every target's code (nested: the function
    of that name defined in each) for the block; labels name what is
    observed, as the client shows them.  Raises WatchError on entry when a
    target cannot be observed, with nothing left installed."""

    def __init__(self, conn, rid, kind, w, targets, nested=None):
        self.conn, self.rid, self.kind, self.w = conn, rid, kind, w
        self.targets, self.nested = targets, nested
        self.labels = [t[5] + ("." + nested if nested else "") for t in targets]
        self.token = None

    def __enter__(self):
        w = self.w
        _watches[(self.conn, self.rid)] = w
        self.token = instrument_add(self.conn, self.kind, ", ".join(self.labels),
                                    lambda: _remove(w))
        try:
            _install(w, self.targets, self.nested)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self.labels

    def __exit__(self, typ, value, tb):
        _remove(self.w)
        _watches.pop((self.conn, self.rid), None)
        instrument_drop(self.conn, self.token)
        return False


def observed_calls(w, cancelled, more, share=None):
    """The calls w's queue holds, oldest first, while more() is true: ends
    when the request is cancelled or `reset` removed w (w.active false).
    share: the most of the time the consumer may spend on them (formatting
    on this worker takes the GIL from the program): past it, it waits, and
    the calls that come meanwhile are dropped, and counted, once the queue
    is full."""
    import time
    spent, since = 0, _ns()
    while more():
        if cancelled() or not w.active:
            return
        if not w.queue:
            time.sleep(0.01)
            continue
        t0 = _ns()
        yield w.queue.popleft()
        if share is None:
            continue
        now = _ns()
        spent += now - t0
        if now - since > 1000000000:     # a window of a second
            spent, since = 0, now
        elif spent > share * (now - since):
            time.sleep(min(spent / share - (now - since), 50000000) / 1e9)
