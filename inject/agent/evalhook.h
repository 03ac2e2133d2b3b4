/*
 * evalhook — trace's second recording mechanism (3.10+): a PEP 523 frame
 * evaluator (_PyInterpreterState_SetEvalFrameFunc) that every Python
 * frame of the interpreter is evaluated through while it is installed.
 * It costs a thread with no traced call running one load and one test
 * before the interpreter's own evaluator (evh_eval); a thread with one
 * goes to trace.c's agent_trace_eval, which times the frame.  Builtins
 * (C calls) are not seen: their time stays in their Python caller's own.
 *
 * This file alone is compiled with Py_BUILD_CORE: it reads the
 * interpreter's frames (internal/pycore_frame.h), which differ per
 * version; trace.c sees frames as opaque pointers through the functions
 * below.  Everything here needs the GIL.
 */
#ifndef FP_AGENT_EVALHOOK_H
#define FP_AGENT_EVALHOOK_H

#include <stdbool.h>

#include "inject/agent/pyagent.h"

/* A code whose returns may be yields: a generator's, a coroutine's. */
#define EVH_SUSPENDS (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)

/* The frame an evaluator gets: PyFrameObject (3.10), _PyInterpreterFrame (3.11+). */
typedef void evh_frame;

/* What the interpreter's evaluator is now. */
enum { EVH_DEFAULT, EVH_OURS, EVH_FOREIGN, EVH_UNSUPPORTED };

/* Compiled for this interpreter (3.10+)? */
bool evh_supported(void);
/* EVH_*: the interpreter's own, ours, another tool's (PyTorch dynamo,
 * pydevd), or EVH_UNSUPPORTED before 3.10. */
int evh_state(void);
/* Ours installed, over the interpreter's own only; false (nothing done)
 * when another tool's is installed. */
bool evh_install(void);
/* The interpreter's own evaluator again, if ours is the one installed
 * (another tool that replaced ours meanwhile keeps its own). */
void evh_restore(void);

/* The interpreter's own evaluator, on frame. */
PyObject *evh_default(PyThreadState *ts, evh_frame *f, int throwflag);
/* The frame's code object (borrowed). */
PyObject *evh_code(evh_frame *f);
/* 3.11+: the call of a generator function that only creates the generator
 * (RETURN_GENERATOR: a frame not yet owned by a generator); its first run
 * comes later, from the generator.  Always false on 3.10. */
bool evh_creating(evh_frame *f);
/* Instruction offset in bytes of the thread's current Python frame, the
 * caller of the frame about to be evaluated; -1 if none. */
int evh_caller_lasti(PyThreadState *ts);
/* After its evaluation returned: did the generator's or coroutine's frame
 * stop at a yield or an await (rather than return or raise)? */
bool evh_suspended(evh_frame *f);
/* What keeps a generator's frame at one address while it waits (borrowed):
 * the frame object (3.10), the generator (3.11+, the frame lives in it). */
PyObject *evh_holder(evh_frame *f);
/* The frame of code among the thread's top 4 Python frames (an observer
 * called from inside the entry, 3.12+'s sys.monitoring); NULL if none. */
evh_frame *evh_running(PyThreadState *ts, PyObject *code);

/* trace.c: recorders registered for the eval path; evh_eval reads it first. */
extern int agent_trace_nrec;
/* trace.c: evaluate frame f on thread ts, which may be recording. */
PyObject *agent_trace_eval(PyThreadState *ts, evh_frame *f, int throwflag);

#endif
