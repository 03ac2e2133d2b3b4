/*
 * foreign_eval — another tool's PEP 523 frame evaluator, as PyTorch's
 * dynamo or pydevd install one: it counts frames and runs the
 * interpreter's own.  The trace suite builds it against the target's
 * interpreter and loads it with ctypes.PyDLL (the GIL held) to check that
 * trace then records with the profile hook and leaves this one in place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static long long frames;

#if PY_VERSION_HEX >= 0x030b0000
static PyObject *
foreign(PyThreadState *ts, struct _PyInterpreterFrame *f, int throwflag)
#else
static PyObject *
foreign(PyThreadState *ts, PyFrameObject *f, int throwflag)
#endif
{
	frames++;
	return _PyEval_EvalFrameDefault(ts, f, throwflag);
}

void
foreign_install(void)
{
	_PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(), foreign);
}

void
foreign_remove(void)
{
	_PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(), _PyEval_EvalFrameDefault);
}

long long
foreign_frames(void)
{
	return frames;
}
