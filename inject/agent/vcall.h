/*
 * vcall — watch's common case on the function object itself: its
 * vectorcall slot points at our C function, which times the call of the
 * original slot and queues the record helper.py's _make_hooks would (or
 * counts a drop, building nothing, when the queue is full).  No frame is
 * read, no Python callback and no sys.monitoring event runs, so an
 * observed call costs a clock read on each side and the record.
 *
 * Only where every call of a function object goes through its vectorcall
 * slot: 3.8-3.10 (CALL_FUNCTION calls it) and 3.12+ (a function whose slot
 * is not the interpreter's own is never inlined or specialized).  3.11
 * inlines every Python-to-Python call without looking at the slot, so it
 * keeps the __code__ trampoline.  observe.py picks this path for one
 * observation with a fast spec (watch's and tt's records, monitor's
 * figures) of a plain function (not a generator or
 * coroutine, not nested), whose signature has no keyword-only, *args or
 * **kwargs parameter; every other case keeps the code-level mechanisms.
 *
 * The observation is on one function object, not on its code: every
 * reference to that object (a stored callback, a bound method, a partial,
 * a decorator's __wrapped__) is observed; another function made from the
 * same code is not (a nested def made anew per call: -nm keeps the code
 * mechanism).  Python sees, in the helper's namespace:
 *   _fp_vc_hook(fn, fast) -> bool    false: fn's slot is not the standard
 *                                    one (another tool's), or the table is full
 *   _fp_vc_unhook(fn)               the slot as it was, and on 3.13+ the
 *                                    function's version, so its call sites
 *                                    specialize again
 *   _fp_vc_count() -> int           functions hooked now
 */
#ifndef FP_AGENT_VCALL_H
#define FP_AGENT_VCALL_H

#include "inject/agent/pyagent.h"

/* Put the functions above into namespace ns (3.8-3.10 and 3.12+ only);
 * false with a Python error. */
bool agent_vcall_export(PyObject *ns);

#endif
