/*
 * pyagent — the agent's Python-facing parts (pyside.c, format.c).
 * Every function here needs the GIL, and none leaves a Python exception
 * set when it returns: whatever user code raises is caught and described.
 */
#ifndef FP_PYAGENT_H
#define FP_PYAGENT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "inject/agent/clock.h"

/*
 * How a value is described (the -x, -r and -v options):
 * depth      levels of containers and object attributes expanded (0..4)
 * raw        just repr(), bounded
 * verbose    every item of a container (still bounded by hard caps)
 */
struct fmt_opts {
	int depth;
	bool raw;
	bool verbose;
	size_t max_items;	/* per container */
	size_t max_repr;	/* characters per repr */
	size_t budget;		/* characters left for the whole tree */
	bool truncated;		/* set when the budget ran out */
};

/* Spellings of 3.9 and 3.10 the agent uses on 3.8 and 3.9. */
#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *
Py_NewRef(PyObject *o)
{
	Py_INCREF(o);
	return o;
}
#endif
#if PY_VERSION_HEX < 0x03090000
#define PyObject_CallOneArg(fn, arg) PyObject_CallFunctionObjArgs((fn), (arg), NULL)
#endif

/* Put C functions defs[0..n) into namespace ns under their names; false
 * with a Python error. */
static inline bool
agent_export_defs(PyObject *ns, PyMethodDef *defs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		PyObject *fn = PyCFunction_New(&defs[i], NULL);

		if (fn == NULL || PyDict_SetItemString(ns, defs[i].ml_name, fn) != 0) {
			Py_XDECREF(fn);
			return false;
		}
		Py_DECREF(fn);
	}
	return true;
}

#define FMT_MAX_DEPTH 4
#define FMT_ITEMS 10		/* items per container without -v */

void fmt_opts_init(struct fmt_opts *o, int depth, bool raw, bool verbose);

/* A JSON description tree of obj (see doc/protocol.md, "values"). */
json_t *fmt_value(PyObject *obj, struct fmt_opts *o);
/* "module.Qualname" of a type ("list" for builtins); malloc'd, never NULL. */
char *fmt_type_name(PyTypeObject *tp);
/* repr(obj) cut at max characters, never failing: "<repr failed: ...>". */
json_t *fmt_repr(PyObject *obj, size_t max);
/* A str as JSON; lone surrogates and the like are backslash-escaped. */
json_t *fmt_str(PyObject *s, size_t max, bool *cut);
/* Plain data (dict with str keys, list, tuple, str, int, float, bool, None) as JSON. */
json_t *fmt_plain(PyObject *obj);
/* Compile source as file and run it in namespace ns (a dict); false with
 * the Python error set. */
bool agent_py_exec(PyObject *ns, const char *source, const char *file);
/* "TypeName: message" of the current exception, which is cleared; malloc'd. */
char *fmt_exception(void);

/* ---- pyside.c: the agent's Python helpers ---- */

/*
 * A new namespace (dict) in which source was run, as "<flight_profiler
 * agent>" (frames of it are hidden from tracebacks), with __name__ = name
 * and _fp_repr(obj, limit); NULL and *why (malloc'd) when it failed.
 */
PyObject *agent_py_namespace(const char *source, const char *name, char **why);
/* ns[fn](*args) (args stolen) as plain JSON; NULL and *why (malloc'd) when it raised. */
json_t *agent_py_call_plain(PyObject *ns, const char *fn, PyObject *args, char **why);
/* helper.py's namespace (borrowed); loaded before any command runs. */
PyObject *agent_py_helper(void);

#endif
