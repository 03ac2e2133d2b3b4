/*
 * vcall — watch's common case on the function object's vectorcall slot
 * (see vcall.h).
 *
 * A small open-addressing table maps a hooked function to what its calls
 * need: the fast spec (helper.py's _make_hooks: queue, append, max, label,
 * bound, watch, its C drop count), the slot it had, and what _fp_vc_unhook checks before it
 * gives a 3.13+ function its version back.  The GIL guards it.
 */
#include "config.h"

#include "inject/agent/vcall.h"

#include <stdint.h>

#include "inject/agent/monfast.h"

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000

#if PY_VERSION_HEX < 0x030C0000
/* Before 3.12 nothing specializes on a function's version: the slot only. */
static void
PyFunction_SetVectorcall(PyFunctionObject *f, vectorcallfunc v)
{
	f->vectorcall = v;
}
#endif

#define VC_SLOTS 512		/* a power of two; at most half are used */

struct vc_entry {
	PyObject *fn;		/* strong; NULL: a free slot */
	PyObject *fast;		/* strong */
	vectorcallfunc orig;
	/* as hooked: a 3.13+ version is given back only to the same function */
	uint32_t version;
	PyObject *code, *defaults, *kwdefaults;	/* identity only */
};

static struct vc_entry table[VC_SLOTS];
static int used;
static vectorcallfunc standard;	/* the interpreter's own slot */

static size_t
home(PyObject *fn)
{
	return ((uintptr_t)fn >> 4) & (VC_SLOTS - 1);
}

static struct vc_entry *
find(PyObject *fn)
{
	size_t i = home(fn);

	while (table[i].fn != NULL && table[i].fn != fn)
		i = (i + 1) & (VC_SLOTS - 1);
	return table[i].fn == fn ? &table[i] : NULL;
}

/* Free *e and keep every other entry reachable from its home slot. */
static void
forget(struct vc_entry *e)
{
	size_t i = (size_t)(e - table), j = i, h;

	e->fn = NULL;
	for (;;) {
		j = (j + 1) & (VC_SLOTS - 1);
		if (table[j].fn == NULL)
			break;
		h = home(table[j].fn);
		/* j's entry may move to i when i lies on its way from h to j */
		if ((i <= j) ? (h <= i || h > j) : (h <= i && h > j)) {
			table[i] = table[j];
			table[j].fn = NULL;
			i = j;
		}
	}
	used--;
}

static bool
same_name(PyObject *a, PyObject *b)
{
	return a == b || (PyUnicode_Check(a) && PyUnicode_Check(b) && PyUnicode_Compare(a, b) == 0);
}

/* The values as passed, in one tuple: a call that will raise TypeError. */
static PyObject *
as_passed(PyObject *const *argv, Py_ssize_t n)
{
	PyObject *t = PyTuple_New(n);
	Py_ssize_t i;

	for (i = 0; t != NULL && i < n; i++)
		PyTuple_SET_ITEM(t, i, Py_NewRef(argv[i]));
	return t;
}

/* The names of f's parameters, a new reference. */
static PyObject *
param_names(PyCodeObject *co)
{
#if PY_VERSION_HEX >= 0x030B0000
	return PyCode_GetVarnames(co);
#else
	return Py_NewRef(co->co_varnames);
#endif
}

/*
 * The values bound to f's positional parameters (its signature has no
 * others: _fp_vc_hook refuses them), defaults included, as observe.py's
 * other mechanisms give args.  A call that cannot bind (it will raise
 * TypeError) gives its values as passed.  NULL with a Python error.
 */
static PyObject *
bind(PyFunctionObject *f, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames)
{
	PyCodeObject *co = (PyCodeObject *)f->func_code;
	Py_ssize_t n = co->co_argcount, nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
	Py_ssize_t ndefs = f->func_defaults != NULL ? PyTuple_GET_SIZE(f->func_defaults) : 0;
	Py_ssize_t i, j, bound = 0;
	PyObject *args, *names = NULL;

	if (nargs == n && nkw == 0)	/* the common case */
		return as_passed(argv, nargs);
	if (nargs > n || (args = PyTuple_New(n)) == NULL)
		return as_passed(argv, nargs + nkw);
	for (i = 0; i < nargs; i++)
		PyTuple_SET_ITEM(args, i, Py_NewRef(argv[i]));
	if (nkw > 0 && (names = param_names(co)) == NULL)
		goto fail;
	for (i = nargs; i < n; i++) {
		PyObject *v = NULL;

		for (j = 0; names != NULL && i >= co->co_posonlyargcount && j < nkw; j++)
			if (same_name(PyTuple_GET_ITEM(kwnames, j), PyTuple_GET_ITEM(names, i))) {
				v = argv[nargs + j];
				bound++;
				break;
			}
		if (v == NULL && i >= n - ndefs)
			v = PyTuple_GET_ITEM(f->func_defaults, i - (n - ndefs));
		if (v == NULL)
			break;
		PyTuple_SET_ITEM(args, i, Py_NewRef(v));
	}
	Py_XDECREF(names);
	if (i == n && bound == nkw)
		return args;
	Py_DECREF(args);	/* a slot left NULL is skipped by tuple's dealloc */
	return as_passed(argv, nargs + nkw);
fail:
	Py_DECREF(args);
	return NULL;
}

/*
 * Queue the record of a call that ended (ret, or exc with ret NULL), or
 * count a drop: monitor's (index, cost, failed) for its spec (monitor.py,
 * eight items), else helper.py's _make_hooks layout, (label, bound, t0, cost,
 * args, kwargs, ret, exc, stack, thread ident), kwargs None (the
 * signature has none: helper.py makes it {}), no stack.  Built only when
 * the queue has room, from the arguments still held by the caller.  Never
 * raises.
 */
static void
queue_record(PyFunctionObject *f, PyObject *fast, PyObject *const *argv, size_t nargsf,
    PyObject *kwnames, long long t0, long long t1, PyObject *ret, PyObject *exc)
{
	PyObject *rec, *r;

	if (agent_queue_full(fast))
		return;
	if (PyTuple_GET_SIZE(fast) > 7) {	/* monitor's: (index, cost, failed) */
		rec = Py_BuildValue("(OLO)", PyTuple_GET_ITEM(fast, 3), t1 - t0,
		    ret != NULL ? Py_False : Py_True);
		r = rec != NULL ? PyObject_CallOneArg(PyTuple_GET_ITEM(fast, 1), rec) : NULL;
		Py_XDECREF(rec);
		if (r == NULL)
			PyErr_Clear();
		Py_XDECREF(r);
		return;
	}
	/* no keywords: the signature has none */
	agent_queue_call(fast, bind(f, argv, PyVectorcall_NARGS(nargsf), kwnames),
	    Py_NewRef(Py_None), t0, t1, ret, exc);
}

/*
 * The vectorcall slot of every hooked function: the call itself between
 * two clock reads, then its record.  The entry's fields are copied first:
 * the call may unhook fn (the table moves entries) or end the watch (the
 * spec is kept alive here until the record is queued).
 */
static PyObject *
vc_call(PyObject *fn, PyObject *const *argv, size_t nargsf, PyObject *kwnames)
{
	struct vc_entry *e = find(fn);
	PyObject *fast, *r, *type, *value, *tb;
	vectorcallfunc orig;
	long long t0, t1;

	if (e == NULL)		/* not ours any more: the slot is restored first */
		return standard(fn, argv, nargsf, kwnames);
	orig = e->orig;
	fast = Py_NewRef(e->fast);
	t0 = agent_now_ns();
	r = orig(fn, argv, nargsf, kwnames);
	t1 = agent_now_ns();
	if (r != NULL) {
		queue_record((PyFunctionObject *)fn, fast, argv, nargsf, kwnames, t0, t1, r, NULL);
	} else {
		agent_exc_fetch(&type, &value, &tb);
		queue_record((PyFunctionObject *)fn, fast, argv, nargsf, kwnames, t0, t1, NULL,
		    value);
		PyErr_Restore(type, value, tb);
	}
	Py_DECREF(fast);
	return r;
}

/* _fp_vc_hook(fn, fast) -> bool */
static PyObject *
vc_hook(PyObject *self, PyObject *args)
{
	PyObject *fn, *fast;
	PyFunctionObject *f;
	PyCodeObject *co;
	size_t i;

	(void)self;
	if (!PyArg_ParseTuple(args, "O!O!", &PyFunction_Type, &fn, &PyTuple_Type, &fast))
		return NULL;
	if (PyTuple_GET_SIZE(fast) < 7) {
		PyErr_SetString(PyExc_ValueError, "_fp_vc_hook: not a fast spec");
		return NULL;
	}
	f = (PyFunctionObject *)fn;
	co = (PyCodeObject *)f->func_code;
	if (f->vectorcall != standard || find(fn) != NULL || used >= VC_SLOTS / 2 ||
	    co->co_kwonlyargcount != 0 || (co->co_flags & (CO_VARARGS | CO_VARKEYWORDS |
	    CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)) != 0)
		Py_RETURN_FALSE;
	for (i = home(fn); table[i].fn != NULL; i = (i + 1) & (VC_SLOTS - 1))
		;
	table[i] = (struct vc_entry){
		.fn = Py_NewRef(fn), .fast = Py_NewRef(fast), .orig = f->vectorcall,
#if PY_VERSION_HEX >= 0x030C0000
		.version = f->func_version,
#endif
		.code = f->func_code, .defaults = f->func_defaults, .kwdefaults = f->func_kwdefaults,
	};
	used++;
	PyFunction_SetVectorcall(f, vc_call);
	Py_RETURN_TRUE;
}

/* _fp_vc_unhook(fn) */
static PyObject *
vc_unhook(PyObject *self, PyObject *fn)
{
	struct vc_entry *e = find(fn), saved;
	PyFunctionObject *f = (PyFunctionObject *)fn;

	(void)self;
	if (e == NULL)
		Py_RETURN_NONE;
	saved = *e;
	forget(e);
	/* Unless another tool took the slot meanwhile. */
	if (f->vectorcall == vc_call) {
		PyFunction_SetVectorcall(f, saved.orig);
#if PY_VERSION_HEX >= 0x030D0000
		/* 3.13+ versions a function once, when it is made, and setting the
		 * slot cleared it: without it back its call sites would stay
		 * unspecialized for good.  Only when nothing the version stands
		 * for changed meanwhile (a new __code__ or defaults clear it). */
		if (f->func_version <= (PY_VERSION_HEX >= 0x030E0000 ? 1u : 0u) &&
		    f->func_code == saved.code && f->func_defaults == saved.defaults &&
		    f->func_kwdefaults == saved.kwdefaults)
			f->func_version = saved.version;
#endif
	}
	Py_DECREF(saved.fast);
	Py_DECREF(saved.fn);
	Py_RETURN_NONE;
}

static PyObject *
vc_count(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromLong(used);
}

static PyMethodDef vcall_defs[] = {
	{ "_fp_vc_hook", vc_hook, METH_VARARGS, "watch fn through its vectorcall slot" },
	{ "_fp_vc_unhook", vc_unhook, METH_O, "fn's own slot again" },
	{ "_fp_vc_count", vc_count, METH_NOARGS, "functions hooked now" },
};

bool
agent_vcall_export(PyObject *ns)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;

	/* The interpreter's own slot, from a function of the helper's. */
	while (standard == NULL && PyDict_Next(ns, &pos, &k, &v))
		if (PyFunction_Check(v))
			standard = ((PyFunctionObject *)v)->vectorcall;
	if (standard == NULL)
		return true;	/* nothing to compare with: observe.py keeps the others */
	return agent_export_defs(ns, vcall_defs, sizeof vcall_defs / sizeof vcall_defs[0]);
}

#else	/* 3.11 inlines Python calls past the slot: the trampoline stays */

bool
agent_vcall_export(PyObject *ns)
{
	(void)ns;
	return true;
}

#endif
