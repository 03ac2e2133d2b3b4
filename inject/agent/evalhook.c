/*
 * evalhook — the frame evaluator of trace's eval path (see evalhook.h).
 * The only agent file built with Py_BUILD_CORE, for the frame layouts of
 * internal/pycore_frame.h; it uses nothing else of the interpreter's
 * internals (no internal function: those are not exported).
 */
#include "config.h"

#if !defined(Py_BUILD_CORE)
#define Py_BUILD_CORE 1
#endif
#include "inject/agent/evalhook.h"

#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_frame.h>
#endif
/* 3.14 (untested: no 3.14 here) moved the frame's inline helpers to
 * pycore_interpframe.h and made f_executable a _PyStackRef, which
 * _PyFrame_GetCode reads. */
#if PY_VERSION_HEX >= 0x030e0000 && defined(__has_include)
#if __has_include(<internal/pycore_interpframe.h>)
#include <internal/pycore_interpframe.h>
#endif
#endif
#if PY_VERSION_HEX >= 0x030a0000
#include <frameobject.h>
#endif

#if PY_VERSION_HEX >= 0x030a0000

/* 3.10 hands the evaluator a frame object, 3.11+ the interpreter's frame. */
#if PY_VERSION_HEX >= 0x030b0000
typedef struct _PyInterpreterFrame evh_pyframe;
#else
typedef PyFrameObject evh_pyframe;
#endif

/* The cheap part: a thread with no traced call (none at all, most of the
 * time) goes straight on to the interpreter's evaluator. */
static PyObject *
evh_eval(PyThreadState *ts, evh_pyframe *f, int throwflag)
{
	if (__builtin_expect(agent_trace_nrec == 0, 1))
		return _PyEval_EvalFrameDefault(ts, f, throwflag);
	return agent_trace_eval(ts, f, throwflag);
}

bool
evh_supported(void)
{
	return true;
}

int
evh_state(void)
{
	_PyFrameEvalFunction cur =
	    _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get());

	if (cur == evh_eval)
		return EVH_OURS;
	/* 3.11+ report NULL (the default) as _PyEval_EvalFrameDefault. */
	return cur == _PyEval_EvalFrameDefault || cur == NULL ? EVH_DEFAULT : EVH_FOREIGN;
}

bool
evh_install(void)
{
	switch (evh_state()) {
	case EVH_OURS:
		return true;
	case EVH_DEFAULT:
		_PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(), evh_eval);
		return true;
	default:
		return false;
	}
}

void
evh_restore(void)
{
	/* Set back to the default, which 3.11+ store as NULL again, so
	 * their inlined Python-to-Python calls come back. */
	if (evh_state() == EVH_OURS)
		_PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(),
		    _PyEval_EvalFrameDefault);
}

PyObject *
evh_default(PyThreadState *ts, evh_frame *f, int throwflag)
{
	return _PyEval_EvalFrameDefault(ts, f, throwflag);
}

/* The code of an interpreter frame: 3.13+ call it f_executable (a code
 * object in every frame we see: shims are skipped before). */
#if PY_VERSION_HEX >= 0x030d0000
#define PYFRAME_CODE(f) ((PyObject *)_PyFrame_GetCode(f))
#elif PY_VERSION_HEX >= 0x030b0000
#define PYFRAME_CODE(f) ((PyObject *)(f)->f_code)
#endif

PyObject *
evh_code(evh_frame *vf)
{
	evh_pyframe *f = vf;

#if PY_VERSION_HEX >= 0x030b0000
	return PYFRAME_CODE(f);
#else
	return (PyObject *)f->f_code;
#endif
}

bool
evh_creating(evh_frame *vf)
{
#if PY_VERSION_HEX >= 0x030b0000
	evh_pyframe *f = vf;

	return f->owner != FRAME_OWNED_BY_GENERATOR &&
	    (((PyCodeObject *)PYFRAME_CODE(f))->co_flags & EVH_SUSPENDS);
#else
	(void)vf;
	return false;
#endif
}

/* The thread's current Python frame, the one making the call. */
static evh_pyframe *
current(PyThreadState *ts)
{
#if PY_VERSION_HEX >= 0x030d0000
	evh_pyframe *f = ts->current_frame;
#elif PY_VERSION_HEX >= 0x030b0000
	evh_pyframe *f = ts->cframe->current_frame;
#else
	evh_pyframe *f = ts->frame;
#endif

#if PY_VERSION_HEX >= 0x030c0000
	/* 3.12+: the entry shim of a C-to-Python call is a frame too. */
	while (f != NULL && f->owner == FRAME_OWNED_BY_CSTACK)
		f = f->previous;
#endif
	return f;
}

int
evh_caller_lasti(PyThreadState *ts)
{
	evh_pyframe *f = current(ts);

	if (f == NULL)
		return -1;
#if PY_VERSION_HEX >= 0x030b0000
	/* The CALL (or SEND) the frame is at, as PyFrame_GetLasti says it:
	 * the profile path's call sites, so both give the same lines. */
	return _PyInterpreterFrame_LASTI(f) * (int)sizeof(_Py_CODEUNIT);
#else
	return f->f_lasti * 2;	/* 3.10 counts code units */
#endif
}

bool
evh_suspended(evh_frame *vf)
{
	evh_pyframe *f = vf;

#if PY_VERSION_HEX >= 0x030b0000
	/* Only a generator's frame can stop at a yield; the generator holds
	 * it (its caller holds the generator) until we return. */
	if (f->owner != FRAME_OWNED_BY_GENERATOR)
		return false;
	/* FRAME_SUSPENDED and 3.13's FRAME_SUSPENDED_YIELD_FROM are below
	 * FRAME_EXECUTING; a frame that returned is EXECUTING still (gen_send_ex2
	 * marks it completed after we return), or CLEARED (3.12+). */
	return _PyFrame_GetGenerator(f)->gi_frame_state < FRAME_EXECUTING;
#else
	return f->f_state == FRAME_SUSPENDED;
#endif
}

PyObject *
evh_holder(evh_frame *vf)
{
	evh_pyframe *f = vf;

#if PY_VERSION_HEX >= 0x030b0000
	return f->owner == FRAME_OWNED_BY_GENERATOR ? (PyObject *)_PyFrame_GetGenerator(f) : NULL;
#else
	return (PyObject *)f;
#endif
}

evh_frame *
evh_running(PyThreadState *ts, PyObject *code)
{
	evh_pyframe *f = current(ts);
	int i;

	for (i = 0; f != NULL && i < 4; i++) {
		if (evh_code(f) == code)
			return f;
#if PY_VERSION_HEX >= 0x030b0000
		f = f->previous;
#if PY_VERSION_HEX >= 0x030c0000
		while (f != NULL && f->owner == FRAME_OWNED_BY_CSTACK)
			f = f->previous;
#endif
#else
		f = f->f_back;
#endif
	}
	return NULL;
}

#else /* 3.8, 3.9: no eval path (their profile hook costs little: see README) */

bool
evh_supported(void)
{
	return false;
}

int
evh_state(void)
{
	return EVH_UNSUPPORTED;
}

bool
evh_install(void)
{
	return false;
}

void
evh_restore(void)
{
}

PyObject *
evh_default(PyThreadState *ts, evh_frame *f, int throwflag)
{
	(void)ts, (void)f, (void)throwflag;
	return NULL;
}

PyObject *
evh_code(evh_frame *f)
{
	(void)f;
	return NULL;
}

bool
evh_creating(evh_frame *f)
{
	(void)f;
	return false;
}

int
evh_caller_lasti(PyThreadState *ts)
{
	(void)ts;
	return -1;
}

bool
evh_suspended(evh_frame *f)
{
	(void)f;
	return false;
}

PyObject *
evh_holder(evh_frame *f)
{
	(void)f;
	return NULL;
}

evh_frame *
evh_running(PyThreadState *ts, PyObject *code)
{
	(void)ts, (void)code;
	return NULL;
}

#endif
