/*
 * monfast — watch's hot path in C (see monfast.h).
 *
 * 3.12+, observe.py's tables, as this file reads them:
 *   codes    code -> entry, also kept in the code object itself (a
 *            code-extra slot, set by _fp_mon_bind), where PY_START and
 *            PY_UNWIND look: a code's hash is computed anew at each
 *            dictionary look-up, a cost every frame that raises would pay.
 *            entry = (observations, positional names, keyword-only names,
 *            *name or None, **name or None, fast or None)
 *            fast = (queue, queue.append, max queued, label, bound, watch,
 *            its C drop count: 8 bytes):
 *            the entry's one observation is watch's common case, handled
 *            here (helper.py's _make_hooks gives it, as leave._fp_fast)
 *   frames   frame -> [(observation, state)]: calls the Python callbacks
 *            started
 *   cframes  frame -> record begun (see record_begin): calls started here
 * A call started here ends here even if its code has become a Python
 * case meanwhile (a second watch of the same function), and the other
 * way round, because both tables are looked at on every exit.
 *
 * 3.8-3.11: the entry of observe.py's _tr table (a list) gets a sixth
 * item, the fast spec or None, which tr_call reads at every call.
 *
 * Version notes: PyFrame_GetVar, PyUnstable_Code_SetExtra and
 * sys.monitoring are 3.12+; before, observe.py swaps __code__ instead.
 */
#include "config.h"

#include "inject/agent/monfast.h"

#include <time.h>

/* Python 3.8 spellings of what this file uses (pyagent.h has the others). */
#if PY_VERSION_HEX < 0x03090000
#define PyObject_Vectorcall _PyObject_Vectorcall
#define PyObject_GC_IsTracked(o) _PyObject_GC_IS_TRACKED(o)
#endif


void
agent_count_drop(PyObject *fast)
{
	PyObject *drops = PyTuple_GET_SIZE(fast) > 6 ? PyTuple_GET_ITEM(fast, 6) : NULL;

	/* A watch's C count: 8 bytes its dropped property adds (helper.py). */
	if (drops != NULL && PyByteArray_Check(drops) && PyByteArray_GET_SIZE(drops) == 8)
		(*(long long *)PyByteArray_AS_STRING(drops))++;
}

bool
agent_queue_full(PyObject *fast)
{
	Py_ssize_t max = PyLong_AsSsize_t(PyTuple_GET_ITEM(fast, 2));
	Py_ssize_t len = PyObject_Length(PyTuple_GET_ITEM(fast, 0));

	if (len >= 0 && max >= 0 && len < max)
		return false;
	PyErr_Clear();
	agent_count_drop(fast);
	return true;
}

/* The calling thread's ident as an int, the last one kept (GIL held). */
static PyObject *
thread_ident(void)
{
	static unsigned long last;
	static PyObject *obj;
	unsigned long id = PyThread_get_thread_ident();

	if (obj == NULL || id != last) {
		PyObject *n = PyLong_FromUnsignedLong(id);

		if (n == NULL)
			return NULL;
		Py_XSETREF(obj, n);
		last = id;
	}
	return Py_NewRef(obj);
}

void
agent_queue_call(PyObject *fast, PyObject *args, PyObject *kwargs, long long t0, long long t1,
    PyObject *ret, PyObject *exc)
{
	PyObject *items[10] = {
		Py_NewRef(PyTuple_GET_ITEM(fast, 3)), Py_NewRef(PyTuple_GET_ITEM(fast, 4)),
		PyLong_FromLongLong(t0), PyLong_FromLongLong(t1 - t0), args, kwargs,
		Py_NewRef(ret != NULL ? ret : Py_None), Py_NewRef(exc != NULL ? exc : Py_None),
		Py_NewRef(Py_None), thread_ident(),
	};
	PyObject *rec = NULL, *r = NULL;
	int i;

	for (i = 0; i < 10 && items[i] != NULL; i++)
		;
	if (i == 10 && (rec = PyTuple_New(10)) != NULL) {
		for (i = 0; i < 10; i++)
			PyTuple_SET_ITEM(rec, i, items[i]);
		/* Only the agent holds it and its consumers unpack it: in no
		 * cycle, so out of the collector's sight, which would otherwise
		 * traverse the thousands a queue holds at every collection of
		 * the program.  What it holds stays tracked. */
		PyObject_GC_UnTrack(rec);
		r = PyObject_CallOneArg(PyTuple_GET_ITEM(fast, 1), rec);
		Py_DECREF(rec);
	} else {
		for (i = 0; i < 10; i++)
			Py_XDECREF(items[i]);
	}
	if (r == NULL)
		PyErr_Clear();
	Py_XDECREF(r);
}

void
agent_exc_fetch(PyObject **type, PyObject **value, PyObject **tb)
{
	PyErr_Fetch(type, value, tb);
	PyErr_NormalizeException(type, value, tb);
	if (*tb != NULL && *value != NULL)
		PyException_SetTraceback(*value, *tb);
}

#if PY_VERSION_HEX >= 0x030C0000

/*
 * A call's record, begun at its start: helper.py's _make_hooks layout,
 * (label, bound, t0, cost, args, kwargs, ret, exc, stack, thread ident),
 * where stack holds the fast spec until the call ends (observe.py's
 * _mon_remove finds a watch's calls in flight by it) and cost, ret, exc
 * and the ident are None.  One tuple per call instead of a state and a
 * record: the record is finished in place while only this file holds it.
 */
static PyObject *
record_begin(PyObject *fast, PyObject *args, PyObject *kwargs)
{
	PyObject *rec = PyTuple_New(10), *t0 = PyLong_FromLongLong(agent_now_ns());
	PyObject *items[10] = {
		PyTuple_GET_ITEM(fast, 3), PyTuple_GET_ITEM(fast, 4), t0, Py_None, args, kwargs,
		Py_None, Py_None, fast, Py_None
	};
	int i;

	if (rec == NULL || t0 == NULL) {
		Py_XDECREF(rec);
		Py_XDECREF(t0);
		return NULL;
	}
	for (i = 0; i < 10; i++)
		PyTuple_SET_ITEM(rec, i, Py_NewRef(items[i]));
	Py_DECREF(t0);
	return rec;
}

static void
record_set(PyObject *rec, Py_ssize_t i, PyObject *v)
{
	PyObject *old = PyTuple_GET_ITEM(rec, i);

	PyTuple_SET_ITEM(rec, i, v);
	Py_DECREF(old);
}

static PyObject *
record_copy(PyObject *rec)
{
	PyObject *c = PyTuple_New(10);
	Py_ssize_t i;

	for (i = 0; c != NULL && i < 10; i++)
		PyTuple_SET_ITEM(c, i, Py_NewRef(PyTuple_GET_ITEM(rec, i)));
	return c;
}

/* Finish rec (stolen), begun by record_begin, and queue it. */
static void
record_end(PyObject *rec, PyObject *ret, PyObject *exc)
{
	/* Ours until the end: once the watch is removed, rec may be all that
	 * holds it (a call in flight), and slot 8 is overwritten below. */
	PyObject *fast = Py_NewRef(PyTuple_GET_ITEM(rec, 8));
	PyObject *q = PyTuple_GET_ITEM(fast, 0), *append = PyTuple_GET_ITEM(fast, 1);
	PyObject *cost, *ident, *r = NULL;
	long long end = agent_now_ns();
	Py_ssize_t len = PyObject_Length(q), max = PyLong_AsSsize_t(PyTuple_GET_ITEM(fast, 2));

	if (len < 0 || max < 0 || len >= max) {
		PyErr_Clear();
		agent_count_drop(fast);
		Py_DECREF(rec);
		Py_DECREF(fast);
		return;
	}
	/* Someone else sees it (_mon_remove listing the calls in flight): a
	 * copy (PyTuple_GetSlice of a whole tuple is the tuple itself). */
	if (Py_REFCNT(rec) != 1)
		Py_SETREF(rec, record_copy(rec));
	cost = PyLong_FromLongLong(end - PyLong_AsLongLong(PyTuple_GET_ITEM(rec, 2)));
	ident = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
	if (rec != NULL && cost != NULL && ident != NULL) {
		record_set(rec, 3, Py_NewRef(cost));
		record_set(rec, 6, Py_NewRef(ret));
		record_set(rec, 7, Py_NewRef(exc));
		record_set(rec, 8, Py_NewRef(Py_None));
		record_set(rec, 9, Py_NewRef(ident));
		/* The collector may have untracked it while it held atoms only. */
		if (!PyObject_GC_IsTracked(rec))
			PyObject_GC_Track(rec);
		r = PyObject_CallOneArg(append, rec);
	}
	if (r == NULL)
		PyErr_Clear();
	Py_XDECREF(r);
	Py_XDECREF(rec);
	Py_XDECREF(ident);
	Py_XDECREF(cost);
	Py_DECREF(fast);
}


static PyObject *frames, *cframes;	/* observe.py's tables */
static PyObject *py_start, *py_return, *py_unwind;	/* its Python callbacks */
static Py_ssize_t extra_index = -1;	/* our code-extra slot: the code's entry */

/* A code object that had an entry is freed. */
static void
extra_free(void *entry)
{
	Py_XDECREF((PyObject *)entry);
}

/* The entry of an observed code (borrowed), NULL for every other. */
static PyObject *
entry_of(PyObject *code)
{
	void *e = NULL;

	if (PyUnstable_Code_GetExtra(code, extra_index, &e) != 0) {
		PyErr_Clear();
		return NULL;
	}
	return e;
}

/* Call a Python callback with our own arguments; what it raises is dropped. */
static void
fallback(PyObject *fn, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *r = PyObject_Vectorcall(fn, args, (size_t)nargs, NULL);

	if (r == NULL)
		PyErr_Clear();
	Py_XDECREF(r);
}

/*
 * (args, kwargs) as observe.py's _mon_start builds them from f_locals:
 * args the positional parameters then any *args, kwargs the keyword-only
 * parameters then any **kwargs.  false with a Python error.
 */
static bool
read_args(PyFrameObject *f, PyObject *e, PyObject **args, PyObject **kwargs)
{
	PyObject *pos = PyTuple_GET_ITEM(e, 1), *kwo = PyTuple_GET_ITEM(e, 2);
	PyObject *star = PyTuple_GET_ITEM(e, 3), *dstar = PyTuple_GET_ITEM(e, 4);
	PyObject *extra = NULL, *v;
	Py_ssize_t n = PyTuple_GET_SIZE(pos), i;

	*args = *kwargs = NULL;
	if (star != Py_None) {
		if ((v = PyFrame_GetVar(f, star)) == NULL)
			return false;
		extra = PySequence_Tuple(v);	/* a tuple already: a new reference */
		Py_DECREF(v);
		if (extra == NULL)
			return false;
	}
	*args = PyTuple_New(n + (extra != NULL ? PyTuple_GET_SIZE(extra) : 0));
	for (i = 0; *args != NULL && i < n; i++) {
		if ((v = PyFrame_GetVar(f, PyTuple_GET_ITEM(pos, i))) == NULL)
			goto fail;
		PyTuple_SET_ITEM(*args, i, v);
	}
	for (i = 0; *args != NULL && extra != NULL && i < PyTuple_GET_SIZE(extra); i++)
		PyTuple_SET_ITEM(*args, n + i, Py_NewRef(PyTuple_GET_ITEM(extra, i)));
	if (*args == NULL || (*kwargs = PyDict_New()) == NULL)
		goto fail;
	for (i = 0; i < PyTuple_GET_SIZE(kwo); i++) {
		PyObject *k = PyTuple_GET_ITEM(kwo, i);

		if ((v = PyFrame_GetVar(f, k)) == NULL || PyDict_SetItem(*kwargs, k, v) != 0) {
			Py_XDECREF(v);
			goto fail;
		}
		Py_DECREF(v);
	}
	if (dstar != Py_None) {
		if ((v = PyFrame_GetVar(f, dstar)) == NULL || PyDict_Update(*kwargs, v) != 0) {
			Py_XDECREF(v);
			goto fail;
		}
		Py_DECREF(v);
	}
	Py_XDECREF(extra);
	return true;
fail:
	Py_XDECREF(extra);
	Py_CLEAR(*args);
	Py_CLEAR(*kwargs);
	return false;
}

/* PY_START(code, offset) */
static PyObject *
mon_start(PyObject *self, PyObject *const *argv, Py_ssize_t nargs)
{
	PyObject *e, *fast, *args, *kwargs, *rec;
	PyFrameObject *f;

	(void)self;
	if (nargs < 1 || (e = entry_of(argv[0])) == NULL)
		Py_RETURN_NONE;
	fast = PyTuple_GET_ITEM(e, 5);
	if (fast == Py_None) {
		fallback(py_start, argv, nargs);
		Py_RETURN_NONE;
	}
	Py_INCREF(e);	/* ours while we read it, whatever happens to the table */
	if ((f = PyEval_GetFrame()) == NULL || !read_args(f, e, &args, &kwargs)) {
		Py_DECREF(e);
		PyErr_Clear();
		Py_RETURN_NONE;
	}
	rec = record_begin(fast, args, kwargs);
	if (rec == NULL || PyDict_SetItem(cframes, (PyObject *)f, rec) != 0)
		PyErr_Clear();
	Py_XDECREF(rec);
	Py_DECREF(args);
	Py_DECREF(kwargs);
	Py_DECREF(e);
	Py_RETURN_NONE;
}

/* The end of an observed call, by a return (exc NULL) or an exception. */
static void
leave(PyObject *ret, PyObject *exc, PyObject *fn, PyObject *const *argv, Py_ssize_t nargs)
{
	PyFrameObject *f;
	PyObject *rec;

	if (PyDict_GET_SIZE(cframes) > 0 && (f = PyEval_GetFrame()) != NULL &&
	    (rec = PyDict_GetItemWithError(cframes, (PyObject *)f)) != NULL) {
		Py_INCREF(rec);
		if (PyDict_DelItem(cframes, (PyObject *)f) == 0)
			record_end(rec, ret, exc);
		else
			Py_DECREF(rec);
	}
	PyErr_Clear();
	if (PyDict_GET_SIZE(frames) > 0)
		fallback(fn, argv, nargs);
}

/* PY_RETURN(code, offset, retval): a local event, for observed codes only */
static PyObject *
mon_return(PyObject *self, PyObject *const *argv, Py_ssize_t nargs)
{
	(void)self;
	if (nargs == 3)
		leave(argv[2], Py_None, py_return, argv, nargs);
	Py_RETURN_NONE;
}

/* PY_UNWIND(code, offset, exception): process-wide, so most calls are
 * frames of code nobody observes, and leave at the first look-up. */
static PyObject *
mon_unwind(PyObject *self, PyObject *const *argv, Py_ssize_t nargs)
{
	(void)self;
	if (nargs != 3 || entry_of(argv[0]) == NULL)
		Py_RETURN_NONE;
	leave(Py_None, argv[2], py_unwind, argv, nargs);
	Py_RETURN_NONE;
}

static PyObject *
mon_setup(PyObject *self, PyObject *args)
{
	PyObject *t[5];

	(void)self;
	if (!PyArg_ParseTuple(args, "O!O!OOO", &PyDict_Type, &t[0], &PyDict_Type, &t[1],
	    &t[2], &t[3], &t[4]))
		return NULL;
	if (extra_index < 0 && (extra_index = PyUnstable_Eval_RequestCodeExtraIndex(extra_free)) < 0) {
		PyErr_Clear();
		Py_RETURN_FALSE;	/* every slot taken: observe.py keeps its own callbacks */
	}
	/* Kept for the life of the process, as the helper's namespace is. */
	Py_XSETREF(frames, Py_NewRef(t[0]));
	Py_XSETREF(cframes, Py_NewRef(t[1]));
	Py_XSETREF(py_start, Py_NewRef(t[2]));
	Py_XSETREF(py_return, Py_NewRef(t[3]));
	Py_XSETREF(py_unwind, Py_NewRef(t[4]));
	Py_RETURN_TRUE;
}

/* _fp_mon_bind(code, entry or None): code's entry, where entry_of finds it */
static PyObject *
mon_bind(PyObject *self, PyObject *args)
{
	PyObject *code, *entry, *put;
	void *old = NULL;

	(void)self;
	if (!PyArg_ParseTuple(args, "O!O", &PyCode_Type, &code, &entry))
		return NULL;
	if (extra_index < 0) {
		PyErr_SetString(PyExc_RuntimeError, "_fp_mon_setup first");
		return NULL;
	}
	put = entry == Py_None ? NULL : Py_NewRef(entry);
	if (PyUnstable_Code_GetExtra(code, extra_index, &old) != 0 ||
	    PyUnstable_Code_SetExtra(code, extra_index, put) != 0) {
		Py_XDECREF(put);
		return NULL;
	}
	Py_XDECREF((PyObject *)old);
	Py_RETURN_NONE;
}

static PyMethodDef monfast_defs[] = {
	{ "_fp_mon_setup", mon_setup, METH_VARARGS, "observe.py's tables and callbacks" },
	{ "_fp_mon_bind", mon_bind, METH_VARARGS, "a code's entry, or None" },
	{ "_fp_mon_start", (PyCFunction)(void (*)(void))mon_start, METH_FASTCALL, "PY_START" },
	{ "_fp_mon_return", (PyCFunction)(void (*)(void))mon_return, METH_FASTCALL, "PY_RETURN" },
	{ "_fp_mon_unwind", (PyCFunction)(void (*)(void))mon_unwind, METH_FASTCALL, "PY_UNWIND" },
};

#else	/* 3.8-3.11: the HOOK a __code__ trampoline calls */

/* (args, kwargs) of the trampoline's call HOOK(None, *args, **kwargs);
 * kwargs None when there are none (helper.py makes it {} for the user). */
static bool
hook_args(PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames, PyObject **args,
    PyObject **kwargs)
{
	Py_ssize_t i, nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;

	*kwargs = NULL;
	if ((*args = PyTuple_New(nargs - 1)) == NULL)
		return false;
	for (i = 1; i < nargs; i++)
		PyTuple_SET_ITEM(*args, i - 1, Py_NewRef(argv[i]));
	if (nkw == 0) {		/* none: the consumer makes the empty dict */
		*kwargs = Py_NewRef(Py_None);
		return true;
	}
	if ((*kwargs = PyDict_New()) == NULL)
		goto fail;
	for (i = 0; i < nkw; i++)
		if (PyDict_SetItem(*kwargs, PyTuple_GET_ITEM(kwnames, i), argv[nargs + i]) != 0)
			goto fail;
	return true;
fail:
	Py_CLEAR(*args);
	Py_CLEAR(*kwargs);
	return false;
}

/*
 * Queue the record of a trampoline's call that ended (ret, or exc with ret
 * NULL), or count a drop, building nothing, when the queue is full.  The
 * arguments are those the caller still holds, as passed.  Never raises.
 */
static void
tr_queue(PyObject *fast, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames,
    long long t0, long long t1, PyObject *ret, PyObject *exc)
{
	PyObject *args, *kwargs;

	if (agent_queue_full(fast))
		return;
	if (!hook_args(argv, nargs, kwnames, &args, &kwargs)) {
		PyErr_Clear();
		return;
	}
	agent_queue_call(fast, args, kwargs, t0, t1, ret, exc);
}

/*
 * self = (entry, Python hook, shadow): observe.py's _tr entry (a list,
 * [5] the fast spec of its one observation or None), the hook it would
 * have used, and the original code as a function.  Watch's common case
 * is done here, every other case by the Python hook.  The cost covers the
 * call of the original only, as the Python hook's does.  Nothing is built
 * before the call: the record is made after it, and only when its queue
 * has room.
 */
static PyObject *
tr_call(PyObject *self, PyObject *const *argv, size_t nargsf, PyObject *kwnames)
{
	PyObject *fast = PyList_GET_ITEM(PyTuple_GET_ITEM(self, 0), 5);
	PyObject *r, *type, *value, *tb;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
	long long t0, t1;

	if (fast == Py_None || nargs < 1 || argv[0] != Py_None)
		return PyObject_Vectorcall(PyTuple_GET_ITEM(self, 1), argv, nargsf, kwnames);
	/* Ours until the record is queued: the call may end the watch. */
	fast = Py_NewRef(fast);
	t0 = agent_now_ns();
	r = PyObject_Vectorcall(PyTuple_GET_ITEM(self, 2), argv + 1, (size_t)(nargs - 1), kwnames);
	t1 = agent_now_ns();
	if (r != NULL) {
		tr_queue(fast, argv, nargs, kwnames, t0, t1, r, NULL);
	} else {
		agent_exc_fetch(&type, &value, &tb);
		tr_queue(fast, argv, nargs, kwnames, t0, t1, NULL, value);
		PyErr_Restore(type, value, tb);
	}
	Py_DECREF(fast);
	return r;
}

static PyMethodDef tr_call_def = {
	"__fp_hook__", (PyCFunction)(void (*)(void))tr_call, METH_FASTCALL | METH_KEYWORDS,
	"watch's common case for a trampoline"
};

/* _fp_tr_hook(entry, python_hook, shadow) -> the C HOOK */
static PyObject *
tr_hook(PyObject *self, PyObject *args)
{
	PyObject *entry, *pyhook, *shadow, *t, *fn;

	(void)self;
	if (!PyArg_ParseTuple(args, "O!OO", &PyList_Type, &entry, &pyhook, &shadow))
		return NULL;
	if (PyList_GET_SIZE(entry) < 6) {
		PyErr_SetString(PyExc_ValueError, "_fp_tr_hook: entry without a fast spec slot");
		return NULL;
	}
	if ((t = PyTuple_Pack(3, entry, pyhook, shadow)) == NULL)
		return NULL;
	fn = PyCFunction_New(&tr_call_def, t);
	Py_DECREF(t);
	return fn;
}

static PyMethodDef monfast_defs[] = {
	{ "_fp_tr_hook", tr_hook, METH_VARARGS, "the C HOOK of a trampoline" },
};

#endif

bool
agent_monfast_export(PyObject *ns)
{
	return agent_export_defs(ns, monfast_defs, sizeof monfast_defs / sizeof monfast_defs[0]);
}
