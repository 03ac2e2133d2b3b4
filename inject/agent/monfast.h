/*
 * monfast — watch's sys.monitoring callbacks in C (3.12+): the hot path of
 * an observed call without a Python call of ours.
 *
 * observe.py registers these instead of its Python callbacks when they
 * exist.  A code whose entry in observe.py's table carries a "fast" spec
 * (one observation, watch's common case: no -b, no --stack) is handled
 * here: PY_START reads the arguments from the frame and takes the clock,
 * PY_RETURN / PY_UNWIND queue the same record tuple as helper.py's
 * _make_hooks.  Every other code is handed to the Python callbacks,
 * unchanged.  The callbacks never raise into the program and never call
 * its code.
 *
 * Python sees (in the helper's namespace, 3.12+ only):
 *   _fp_mon_setup(frames, cframes, start, ret, unwind) -> bool
 *       observe.py's tables and its Python callbacks; false when the
 *       interpreter has no code-extra slot left (keep the Python ones)
 *   _fp_mon_bind(code, entry or None)   codes[code] changed
 *   _fp_mon_start, _fp_mon_return, _fp_mon_unwind   the callbacks
 */
#ifndef FP_AGENT_MONFAST_H
#define FP_AGENT_MONFAST_H

#include "inject/agent/pyagent.h"

/* Put the _fp_mon_* functions into namespace ns (nothing before 3.12);
 * false with a Python error. */
bool agent_monfast_export(PyObject *ns);

#endif
