/*
 * monfast — watch's hot path in C: the work of an observed call done
 * without a Python call of ours, for watch's common case (one watch of
 * the code, no -b, no --stack; helper.py's _make_hooks says so by giving
 * leave._fp_fast).  Every other case (tt, monitor, trace, torch, -b,
 * --stack, two observations of one code, nested functions and, before
 * 3.12, generators and coroutines) runs observe.py's Python hooks,
 * unchanged.  Records are the very tuples _make_hooks queues.  Nothing
 * here raises into the program or calls its code.
 *
 * 3.12+: sys.monitoring callbacks.  PY_START reads the arguments from the
 * frame and takes the clock, PY_RETURN / PY_UNWIND queue the record (or
 * count a drop).  Python sees, in the helper's namespace:
 *   _fp_mon_setup(frames, cframes, start, ret, unwind) -> bool
 *       observe.py's tables and its Python callbacks; false when the
 *       interpreter has no code-extra slot left (keep the Python ones)
 *   _fp_mon_bind(code, entry or None)   codes[code] changed
 *   _fp_mon_start, _fp_mon_return, _fp_mon_unwind   the callbacks
 *
 * 3.8-3.11: the HOOK a __code__ trampoline calls.  It calls the original
 * code and queues the record, instead of the Python hook's enter/leave:
 *   _fp_tr_hook(entry, python_hook, shadow) -> HOOK
 */
#ifndef FP_AGENT_MONFAST_H
#define FP_AGENT_MONFAST_H

#include "inject/agent/pyagent.h"

/* Put the functions above into namespace ns; false with a Python error. */
bool agent_monfast_export(PyObject *ns);

/* One more call the queue of fast spec `fast` had no room for (its watch's
 * `dropped`, helper.py's _Watch); never raises. */
void agent_count_drop(PyObject *fast);
/* True, and the drop counted, when the queue of fast spec `fast` is
 * full (nothing to build then); never raises. */
bool agent_queue_full(PyObject *fast);
/*
 * Queue a call that ended (ret, or exc with ret NULL) in helper.py's
 * _make_hooks layout: (label, bound, t0, cost, args, kwargs, ret, exc,
 * stack None, thread ident).  args and kwargs are stolen (NULL: a failed
 * build, nothing is queued); kwargs None stands for no keywords (helper.py
 * makes it {}).  Never raises.
 */
void agent_queue_call(PyObject *fast, PyObject *args, PyObject *kwargs, long long t0,
    long long t1, PyObject *ret, PyObject *exc);
/* The pending exception, normalized, its traceback on the value (as
 * PyErr_Fetch: the caller restores or releases the three). */
void agent_exc_fetch(PyObject **type, PyObject **value, PyObject **tb);

#endif
