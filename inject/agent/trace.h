/*
 * trace — the call-tree recorder under the agent's `trace` command.
 *
 * While one call of the traced function runs, every call beneath it is
 * merged into a tree keyed by (callee, call site): repeats become one node
 * with a count, a total, a minimum and a maximum.  Two mechanisms see the
 * calls (a session picks one, see py_session):
 *   - the eval path (3.10+, the default): our PEP 523 frame evaluator
 *     (evalhook.c), installed while some recorder is registered, times the
 *     Python frames of the threads with one; builtins are not seen.  A
 *     stop takes it out at once; it is never put over another tool's.
 *   - the profile hook (3.8, 3.9, --c-calls, another tool's evaluator): a
 *     C profile hook on that thread only (PyEval_SetProfile), removed when
 *     the call returns, or at the thread's next event once its session is
 *     stopped.
 * Neither is used on a thread that already has a profiler (a debugger,
 * cProfile); neither raises into the application.
 *
 * A generator or coroutine gives one tree for its whole execution: at each
 * yield or await of its frame the recorder pauses, keeping the open calls
 * (frames suspended beneath it, asyncio.sleep's for one), and goes on when
 * that frame resumes; the cost is the time it ran, not the time it waited.
 * From 3.12 the thread is unhooked while it waits (observe.py's PY_RESUME
 * calls _fp_trace_resume); before, the hook stays but records nothing
 * until the frame resumes.
 *
 * Python sees (in the helper's namespace, see tracehelper.py):
 *   _fp_trace_session(max_depth, c_calls) -> (session, mechanism, note)
 *   _fp_trace_begin(session, code) -> recorder or None (not traced)
 *   _fp_trace_end(recorder) -> cost of the call in ns, or None
 *   _fp_trace_stop(session)  every recorder of it unhooks at its next event
 *   _fp_trace_resume(recorder)  its generator or coroutine resumes (3.12+)
 */
#ifndef FP_AGENT_TRACE_H
#define FP_AGENT_TRACE_H

#include "inject/agent/pyagent.h"

/* Put the _fp_trace_* functions into namespace ns; false with a Python error. */
bool agent_trace_export(PyObject *ns);

/* Is obj a finished recorder (what _fp_trace_end leaves behind)? */
bool agent_trace_is_recorder(PyObject *obj);

/*
 * The recorded tree of a finished recorder as JSON (see doc/protocol.md,
 * "trace"): nodes under interval_ns and import-system frames are left out
 * (counted in "hidden"), and nothing deeper than max_depth levels below the
 * entry (0: no limit).  Needs the GIL.
 */
json_t *agent_trace_tree(PyObject *recorder, long long interval_ns, int max_depth);

#endif
