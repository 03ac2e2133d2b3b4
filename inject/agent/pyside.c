/*
 * pyside — the requests that need the interpreter.  Runs on worker
 * threads, which hold the GIL only inside agent_py_run() and the other
 * entry points below; each request's answer is sent through agent_send().
 *
 * Version notes: _Py_IsFinalizing() (3.8-3.12) became Py_IsFinalizing()
 * in 3.13; everything else used here is the same C API from 3.8 to 3.13.
 */
#include "config.h"

#include "inject/agent/pyagent.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/protocol.h"
#include "inject/agent/agent.h"
#include "inject/agent/mem.h"
#include "inject/agent/monfast.h"
#include "inject/agent/vcall.h"
#include "inject/agent/torch.h"
#include "inject/agent/trace.h"
#include "helper_py.h"		/* generated from helper.py: helper_py_source */
#include "tracehelper_py.h"	/* generated from tracehelper.py */
#include "observe_py.h"		/* observe.py (run in helper's namespace): observe_py_source */
#include "monitor_py.h"		/* monitor.py (the same): monitor_py_source */
#include "tthelper_py.h"	/* generated from tthelper.py: tthelper_py_source */

#define HELPER_FILE "<flight_profiler agent>"
#define OUTPUT_LIMIT (1 << 20)	/* characters of output kept per statement */

static PyObject *helper;	/* the helper's namespace (a dict) */
static PyObject *consoles;	/* {connection serial: console namespace} */

bool
agent_py_ready(void)
{
#if PY_VERSION_HEX >= 0x030D0000
	return Py_IsInitialized() && !Py_IsFinalizing();
#else
	return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

const char *
agent_py_version(void)
{
	static char version[32];
	const char *v = Py_GetVersion();	/* "3.12.1 (main, ...) [GCC ...]" */
	size_t n = strcspn(v, " ");

	if (version[0] == '\0') {
		if (n >= sizeof version)
			n = sizeof version - 1;
		memcpy(version, v, n);
		version[n] = '\0';
	}
	return version;
}

/* ---- small helpers ---------------------------------------------------------- */

static json_t *
end_errorf(uint64_t id, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Drop the incomplete UTF-8 sequence a cut may have left at the end of text. */
static void
utf8_trim(char *text)
{
	size_t n = strlen(text), i = n, need;
	unsigned char c;

	while (i > 0 && n - i < 3 && ((unsigned char)text[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0)
		return;
	c = (unsigned char)text[i - 1];
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	if (c >= 0xc0 && n - (i - 1) < need)
		text[i - 1] = '\0';
}

/*
 * vsnprintf into a fixed buffer (size > 4); a text cut short is cut at a
 * character boundary (JSON wants whole UTF-8) and ends with "...".
 */
static void
bounded_vtext(char *buf, size_t size, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, size, fmt, ap);

	if (n >= 0 && (size_t)n >= size) {
		buf[size - 4] = '\0';
		utf8_trim(buf);
		strcat(buf, "...");
	}
}

static void
bounded_text(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
bounded_text(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bounded_vtext(buf, size, fmt, ap);
	va_end(ap);
}

/* A client's or the program's word quoted in a message: at most QUOTE_MAX bytes. */
#define QUOTE_MAX 200
#define QUOTE_BUF (QUOTE_MAX + 4)

static const char *
brief(const char *s, char buf[QUOTE_BUF])
{
	if (strlen(s) <= QUOTE_MAX)
		return s;
	memcpy(buf, s, QUOTE_MAX);
	buf[QUOTE_MAX] = '\0';
	utf8_trim(buf);
	strcat(buf, "...");
	return buf;
}

static json_t *
end_errorf(uint64_t id, const char *kind, const char *fmt, ...)
{
	char text[1200];
	va_list ap;

	va_start(ap, fmt);
	bounded_vtext(text, sizeof text, fmt, ap);
	va_end(ap);
	return proto_new_end_error(id, kind, text);
}

static const char *
arg_str(json_t *args, const char *key)
{
	json_t *v = json_object_get(args, key);

	return json_is_string(v) && json_string_length(v) > 0 ? json_string_value(v) : NULL;
}

static long long
arg_int(json_t *args, const char *key, long long dflt)
{
	json_t *v = json_object_get(args, key);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static double
arg_num(json_t *args, const char *key, double dflt)
{
	json_t *v = json_object_get(args, key);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

static bool
arg_bool(json_t *args, const char *key)
{
	return json_is_true(json_object_get(args, key));
}

static double
elapsed_ms(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

/* _fp_repr(obj, limit): a repr that never raises, for the helper. */
static PyObject *
py_fp_repr(PyObject *self, PyObject *args)
{
	PyObject *obj, *s;
	Py_ssize_t limit = 200;
	json_t *j;

	if (!PyArg_ParseTuple(args, "O|n", &obj, &limit))
		return NULL;
	j = fmt_repr(obj, limit > 0 ? (size_t)limit : 200);
	s = PyUnicode_DecodeUTF8(json_string_value(j), (Py_ssize_t)json_string_length(j), "replace");
	json_decref(j);
	return s;
}

static PyMethodDef fp_repr_def = {
	"_fp_repr", py_fp_repr, METH_VARARGS, "bounded repr that never raises",
};

bool
agent_py_exec(PyObject *ns, const char *source, const char *file)
{
	PyObject *code = Py_CompileString(source, file, Py_file_input), *r;

	if (code == NULL)
		return false;
	r = PyEval_EvalCode(code, ns, ns);
	Py_DECREF(code);
	Py_XDECREF(r);
	return r != NULL;
}

PyObject *
agent_py_namespace(const char *source, const char *name, char **why)
{
	PyObject *g, *fn, *builtins;

	g = PyDict_New();
	builtins = PyImport_ImportModule("builtins");
	fn = PyCFunction_New(&fp_repr_def, NULL);
	if (g == NULL || builtins == NULL || fn == NULL ||
	    PyDict_SetItemString(g, "__builtins__", builtins) != 0 ||
	    PyDict_SetItemString(g, "__name__", PyUnicode_FromString(name)) != 0 ||
	    PyDict_SetItemString(g, "__file__", PyUnicode_FromString(HELPER_FILE)) != 0 ||
	    PyDict_SetItemString(g, "_fp_repr", fn) != 0 ||
	    !agent_py_exec(g, source, HELPER_FILE))
		goto fail;
	Py_DECREF(builtins);
	Py_DECREF(fn);
	return g;
fail:
	*why = fmt_exception();
	Py_XDECREF(g);
	Py_XDECREF(builtins);
	Py_XDECREF(fn);
	return NULL;
}

json_t *
agent_py_call_plain(PyObject *ns, const char *fn, PyObject *args, char **why)
{
	PyObject *f = PyDict_GetItemString(ns, fn), *r = NULL;
	json_t *j = NULL;

	r = f && args ? PyObject_CallObject(f, args) : NULL;
	Py_XDECREF(args);
	if (r != NULL) {
		j = fmt_plain(r);
		Py_DECREF(r);
	} else {
		*why = PyErr_Occurred() ? fmt_exception() : strdup("the agent helper has no such "
		    "function");
	}
	PyErr_Clear();
	return j;
}

/*
 * Compile helper.py, then observe.py and tracehelper.py beside it, into one
 * namespace, once.
 */
static bool
helper_ready(char **why)
{
	PyObject *g;

	if (helper != NULL)
		return true;
	if ((g = agent_py_namespace(helper_py_source, "_flight_profiler_agent", why)) == NULL)
		return false;
	if (!agent_monfast_export(g) || !agent_vcall_export(g) ||
	    !agent_py_exec(g, observe_py_source, HELPER_FILE) ||
	    !agent_py_exec(g, monitor_py_source, HELPER_FILE) || !agent_trace_export(g) ||
	    !agent_py_exec(g, tracehelper_py_source, HELPER_FILE) ||
	    !agent_py_exec(g, tthelper_py_source, HELPER_FILE)) {
		*why = fmt_exception();
		Py_DECREF(g);
		return false;
	}
	helper = g;
	consoles = PyDict_New();
	return true;
}

PyObject *
agent_py_helper(void)
{
	return helper;
}

/* Call helper function `name` with a new tuple of arguments (stolen). */
static PyObject *
helper_call(const char *name, PyObject *args)
{
	PyObject *fn = PyDict_GetItemString(helper, name), *r;

	if (fn == NULL || args == NULL) {
		Py_XDECREF(args);
		PyErr_Format(PyExc_RuntimeError, "agent helper %s is missing", name);
		return NULL;
	}
	r = PyObject_Call(fn, args, NULL);
	Py_DECREF(args);
	return r;
}

/* ---- output events: what a request's thread prints ------------------------ */

struct emitter {
	uint64_t conn, id;
};

static void
emitter_free(PyObject *capsule)
{
	free(PyCapsule_GetPointer(capsule, "fp.emitter"));
}

static PyObject *
py_emit(PyObject *self, PyObject *args)
{
	struct emitter *e = PyCapsule_GetPointer(self, "fp.emitter");
	PyObject *text;
	json_t *data;

	if (e == NULL || !PyArg_ParseTuple(args, "U", &text))
		return NULL;
	data = json_object();
	json_object_set_new(data, "out", fmt_str(text, (size_t)OUTPUT_LIMIT * 2, NULL));
	agent_send(e->conn, proto_new_event(e->id, data));
	Py_RETURN_NONE;
}

static PyMethodDef emit_def = { "_fp_emit", py_emit, METH_VARARGS, "send output" };

static PyObject *
new_emitter(uint64_t conn, uint64_t id)
{
	struct emitter *e = malloc(sizeof *e);
	PyObject *cap, *fn;

	if (e == NULL)
		return PyErr_NoMemory();
	e->conn = conn;
	e->id = id;
	cap = PyCapsule_New(e, "fp.emitter", emitter_free);
	if (cap == NULL) {
		free(e);
		return NULL;
	}
	fn = PyCFunction_New(&emit_def, cap);
	Py_DECREF(cap);
	return fn;
}

/* ---- getglobal, vmtool ---------------------------------------------------------- */

/* A module from sys.modules (borrowed), or an end message saying why not. */
static PyObject *
find_module(uint64_t id, const char *name, json_t **end)
{
	PyObject *m = PyDict_GetItemString(PyImport_GetModuleDict(), name);
	char b[QUOTE_BUF];

	if (m == NULL)
		*end = end_errorf(id, "notfound", "module '%s' is not imported in process %d",
		    brief(name, b), (int)agent_host_pid());
	return m;
}

/*
 * getattr(obj, name) for the lookup of a class or field: a new reference,
 * or NULL with *end set ("not found" for AttributeError, else "raised").
 */
static PyObject *
lookup(uint64_t id, PyObject *obj, const char *name, const char *what, const char *where,
    json_t **end)
{
	PyObject *v = PyObject_GetAttrString(obj, name);
	char *why, b[QUOTE_BUF];

	if (v != NULL)
		return v;
	if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
		PyErr_Clear();
		*end = end_errorf(id, "notfound", "%s '%s' not found in %s", what, brief(name, b),
		    where);
	} else {
		why = fmt_exception();
		*end = end_errorf(id, "raised", "looking up %s '%s' in %s raised %s", what,
		    brief(name, b), where, why);
		free(why);
	}
	return NULL;
}

/* Dotted class path "Outer.Inner" inside a module. */
static PyObject *
lookup_class(uint64_t id, PyObject *mod, const char *modname, const char *path, json_t **end)
{
	char where[600], *copy = strdup(path), *part, *save = NULL, b1[QUOTE_BUF], b2[QUOTE_BUF];
	PyObject *cur = mod, *next;

	if (copy == NULL) {
		*end = proto_new_end_error(id, "internal", "out of memory");
		return NULL;
	}
	Py_INCREF(cur);
	bounded_text(where, sizeof where, "module '%s'", brief(modname, b1));
	for (part = strtok_r(copy, ".", &save); part != NULL; part = strtok_r(NULL, ".", &save)) {
		next = lookup(id, cur, part, "class", where, end);
		Py_DECREF(cur);
		if (next == NULL) {
			free(copy);
			return NULL;
		}
		cur = next;
		bounded_text(where, sizeof where, "class '%s' of module '%s'", brief(path, b1),
		    brief(modname, b2));
	}
	free(copy);
	return cur;
}

static bool
eval_expr(const char *expr, const char *bind, PyObject *value, PyObject **result, char **why)
{
	PyObject *code, *g, *builtins;
	char *e;

	*result = NULL;
	code = Py_CompileString(expr, "<expr>", Py_eval_input);
	if (code == NULL) {
		e = fmt_exception();
		*why = malloc(strlen(e) + 64);
		if (*why)
			sprintf(*why, "the expression is not valid Python: %s", e);
		free(e);
		return false;
	}
	g = PyDict_New();
	builtins = PyImport_ImportModule("builtins");
	if (g != NULL && builtins != NULL && PyDict_SetItemString(g, "__builtins__", builtins) == 0 &&
	    PyDict_SetItemString(g, bind, value) == 0)
		*result = PyEval_EvalCode(code, g, g);
	Py_DECREF(code);
	Py_XDECREF(g);
	Py_XDECREF(builtins);
	if (*result == NULL) {
		e = fmt_exception();
		*why = malloc(strlen(e) + 64);
		if (*why)
			sprintf(*why, "the expression raised %s", e);
		free(e);
		return false;
	}
	return true;
}

static json_t *
value_result(uint64_t id, const char *exprtext, PyObject *value, json_t *args,
    long long top_items, json_t *extra)
{
	struct fmt_opts o;
	json_t *data = extra ? extra : json_object();
	char *tn;

	fmt_opts_init(&o, (int)arg_int(args, "depth", 1), arg_bool(args, "raw"),
	    arg_bool(args, "verbose"));
	if (top_items > 0 && (size_t)top_items > o.max_items && PyList_Check(value))
		o.max_items = (size_t)top_items;
	tn = fmt_type_name(Py_TYPE(value));
	json_object_set_new(data, "expr", json_string(exprtext));
	json_object_set_new(data, "type", json_string(tn));
	json_object_set_new(data, "value", fmt_value(value, &o));
	if (o.truncated)
		json_object_set_new(data, "truncated", json_true());
	free(tn);
	return proto_new_end_ok(id, data);
}

static json_t *
do_getglobal(struct agent_job *job)
{
	const char *modname = arg_str(job->args, "module"), *cls = arg_str(job->args, "class");
	const char *field = arg_str(job->args, "field"), *expr = arg_str(job->args, "expr");
	PyObject *mod, *owner, *value, *result;
	json_t *end = NULL;
	char where[600], exprtext[800], *why = NULL, b1[QUOTE_BUF], b2[QUOTE_BUF];

	if (modname == NULL || field == NULL)
		return proto_new_end_error(job->id, "usage", "getglobal needs a module and a field");
	if ((mod = find_module(job->id, modname, &end)) == NULL)
		return end;
	if (cls != NULL) {
		if ((owner = lookup_class(job->id, mod, modname, cls, &end)) == NULL)
			return end;
		bounded_text(where, sizeof where, "class '%s' of module '%s'", brief(cls, b1),
		    brief(modname, b2));
		bounded_text(exprtext, sizeof exprtext, "%s.%s.%s", modname, cls, field);
	} else {
		owner = mod;
		Py_INCREF(owner);
		bounded_text(where, sizeof where, "module '%s'", brief(modname, b1));
		bounded_text(exprtext, sizeof exprtext, "%s.%s", modname, field);
	}
	value = lookup(job->id, owner, field, "field", where, &end);
	Py_DECREF(owner);
	if (value == NULL)
		return end;
	if (expr != NULL) {
		if (!eval_expr(expr, "target", value, &result, &why)) {
			Py_DECREF(value);
			end = proto_new_end_error(job->id, "raised", why ? why : "the expression failed");
			free(why);
			return end;
		}
		Py_DECREF(value);
		value = result;
		bounded_text(exprtext, sizeof exprtext, "%s", expr);
	}
	end = value_result(job->id, exprtext, value, job->args, 0, NULL);
	Py_DECREF(value);
	return end;
}

static json_t *
do_get_instances(struct agent_job *job)
{
	const char *modname = arg_str(job->args, "module"), *cls = arg_str(job->args, "class");
	const char *expr = arg_str(job->args, "expr");
	long long limit = arg_int(job->args, "limit", 10), total = 0;
	PyObject *mod, *type, *gc = NULL, *all = NULL, *found = NULL, *result;
	json_t *end = NULL, *extra;
	Py_ssize_t i, n;
	char *why = NULL;

	if (modname == NULL || cls == NULL)
		return proto_new_end_error(job->id, "usage", "getInstances needs a module and a class");
	if ((mod = find_module(job->id, modname, &end)) == NULL)
		return end;
	if ((type = lookup_class(job->id, mod, modname, cls, &end)) == NULL)
		return end;
	if (!PyType_Check(type)) {
		char *tn = fmt_type_name(Py_TYPE(type)), b1[QUOTE_BUF], b2[QUOTE_BUF];

		end = end_errorf(job->id, "usage", "'%s' in module '%s' is not a class (it is a %s)",
		    brief(cls, b1), brief(modname, b2), tn);
		free(tn);
		Py_DECREF(type);
		return end;
	}
	gc = PyImport_ImportModule("gc");
	all = gc ? PyObject_CallMethod(gc, "get_objects", NULL) : NULL;
	found = PyList_New(0);
	if (all == NULL || found == NULL || !PyList_Check(all)) {
		why = fmt_exception();
		end = end_errorf(job->id, "internal", "cannot list the objects: %s", why);
		goto out;
	}
	n = PyList_GET_SIZE(all);
	for (i = 0; i < n; i++) {
		PyObject *o = PyList_GET_ITEM(all, i);

		/* The type check runs no user code (no __instancecheck__). */
		if (!PyObject_TypeCheck(o, (PyTypeObject *)type))
			continue;
		total++;
		if (limit < 0 || PyList_GET_SIZE(found) < limit)
			PyList_Append(found, o);
	}
	Py_CLEAR(all);
	extra = json_object();
	json_object_set_new(extra, "count", json_integer(total));
	json_object_set_new(extra, "shown", json_integer(PyList_GET_SIZE(found)));
	if (expr != NULL) {
		if (!eval_expr(expr, "instances", found, &result, &why)) {
			json_decref(extra);
			end = proto_new_end_error(job->id, "raised", why ? why : "the expression failed");
			goto out;
		}
		end = value_result(job->id, expr, result, job->args, 0, extra);
		Py_DECREF(result);
	} else {
		end = value_result(job->id, "instances", found, job->args,
		    limit < 0 ? (long long)PyList_GET_SIZE(found) : limit, extra);
	}
out:
	free(why);
	Py_XDECREF(gc);
	Py_XDECREF(all);
	Py_XDECREF(found);
	Py_DECREF(type);
	PyErr_Clear();
	return end;
}

static json_t *
do_vmtool(struct agent_job *job)
{
	const char *action = arg_str(job->args, "action");
	struct timespec t0;
	json_t *data;
	Py_ssize_t collected;
	char b[QUOTE_BUF];

	if (action != NULL && strcmp(action, "getInstances") == 0)
		return do_get_instances(job);
	if (action != NULL && strcmp(action, "forceGc") == 0) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		collected = PyGC_Collect();
		PyErr_Clear();
		data = json_object();
		json_object_set_new(data, "collected", json_integer(collected));
		json_object_set_new(data, "ms", json_real(elapsed_ms(&t0)));
		return proto_new_end_ok(job->id, data);
	}
	return end_errorf(job->id, "usage", "vmtool: unknown action '%s' (getInstances, forceGc)",
	    brief(action ? action : "", b));
}

/* ---- module, execute, console, threads (helper.py) ------------------------- */

static json_t *
helper_result(uint64_t id, PyObject *r)
{
	json_t *data;
	char *why;

	if (r == NULL) {
		why = fmt_exception();
		data = end_errorf(id, "internal", "agent helper failed: %s", why);
		free(why);
		return data;
	}
	data = fmt_plain(r);
	Py_DECREF(r);
	return proto_new_end_ok(id, data);
}

static json_t *
do_module(struct agent_job *job)
{
	const char *path = arg_str(job->args, "path");
	PyObject *r;
	json_t *end, *mods, *data;
	char b1[QUOTE_BUF], b2[QUOTE_BUF];

	if (path == NULL)
		return proto_new_end_error(job->id, "usage", "module needs a file path");
	r = helper_call("find_module", Py_BuildValue("(s)", path));
	end = helper_result(job->id, r);
	data = json_object_get(end, "data");
	mods = json_object_get(data, "modules");
	if (json_is_true(json_object_get(end, "ok")) && json_array_size(mods) == 0) {
		const char *abs = json_string_value(json_object_get(data, "path"));
		json_t *e = end_errorf(job->id, "notfound", "'%s' is not imported in process %d "
		    "(no module in sys.modules was loaded from %s)", brief(path, b1),
		    (int)agent_host_pid(), brief(abs ? abs : path, b2));

		json_decref(end);
		return e;
	}
	return end;
}

static PyObject *
console_namespace(uint64_t conn)
{
	PyObject *key = PyLong_FromUnsignedLongLong(conn), *ns;

	if (key == NULL)
		return NULL;
	ns = PyDict_GetItem(consoles, key);
	if (ns != NULL) {
		Py_INCREF(ns);
	} else {
		ns = helper_call("new_namespace", Py_BuildValue("(s)", "__console__"));
		if (ns != NULL && PyDict_SetItem(consoles, key, ns) != 0)
			Py_CLEAR(ns);
	}
	Py_DECREF(key);
	return ns;
}

static json_t *
do_run(struct agent_job *job, bool console)
{
	const char *code = arg_str(job->args, "code"), *file = arg_str(job->args, "filename");
	PyObject *ns, *emit, *r;
	json_t *end, *data;
	const char *exc;

	if (code == NULL)
		code = "";
	if (file == NULL)
		file = console ? "<console>" : "<execute>";
	ns = console ? console_namespace(job->conn) :
	    helper_call("new_namespace", Py_BuildValue("(s)", "__flight_profiler__"));
	emit = new_emitter(job->conn, job->id);
	if (ns == NULL || emit == NULL) {
		Py_XDECREF(ns);
		Py_XDECREF(emit);
		return helper_result(job->id, NULL);
	}
	r = helper_call("run_code", Py_BuildValue("(sssOOi)", code, file,
	    console ? "console" : "exec", ns, emit, OUTPUT_LIMIT));
	/* An interrupt that landed in the helper's own cleanup: clean up again. */
	PyErr_Clear();
	Py_XDECREF(helper_call("_end", PyTuple_New(0)));
	PyErr_Clear();
	Py_DECREF(ns);
	Py_DECREF(emit);
	end = helper_result(job->id, r);
	data = json_object_get(end, "data");
	if (json_is_false(json_object_get(data, "ok"))) {
		exc = json_string_value(json_object_get(data, "exc"));
		json_t *e = end_errorf(job->id,
		    json_is_true(json_object_get(data, "interrupted")) ? "cancelled" : "raised",
		    "%s%s%s", exc ? exc : "exception",
		    json_string_length(json_object_get(data, "message")) ? ": " : "",
		    json_string_value(json_object_get(data, "message")) ?
			json_string_value(json_object_get(data, "message")) : "");

		json_object_set(e, "data", data);
		json_decref(end);
		end = e;
	}
	return end;
}

static json_t *
do_threads(struct agent_job *job)
{
	PyObject *r = helper_call("threads_info", Py_BuildValue("(OOi)",
	    arg_bool(job->args, "locals") ? Py_True : Py_False,
	    arg_bool(job->args, "asyncio") ? Py_True : Py_False,
	    (int)arg_int(job->args, "limit", 200)));

	return helper_result(job->id, r);
}

static json_t *
do_execute(struct agent_job *job)
{
	return do_run(job, false);
}

static json_t *
do_console(struct agent_job *job)
{
	return do_run(job, true);
}


/* ---- watch (helper.py's watch_run) ---------------------------------------- */

/* What a watch's record() and cancelled() callables know. */
struct watch_sink {
	struct agent_job *job;	/* alive while watch_run runs */
	int depth;
	bool raw, verbose;
	long long interval_ns;	/* trace: inner calls shorter are hidden */
	int max_depth;		/* trace: levels shown below the entry, 0: all */
};

static void
watch_sink_free(PyObject *capsule)
{
	free(PyCapsule_GetPointer(capsule, "fp.watch"));
}

/* One label, value and error of a record, formatted here on the worker. */
static json_t *
watch_value(const struct watch_sink *w, PyObject *item)
{
	PyObject *label, *obj, *err;
	struct fmt_opts o;
	json_t *v = json_object();
	char *tn;

	if (!PyArg_ParseTuple(item, "OOO", &label, &obj, &err)) {
		PyErr_Clear();
		return v;
	}
	json_object_set_new(v, "expr", PyUnicode_Check(label) ? fmt_str(label, 400, NULL) :
	    json_string("?"));
	if (err != Py_None) {
		json_object_set_new(v, "error", PyUnicode_Check(err) ? fmt_str(err, 600, NULL) :
		    json_string("?"));
		return v;
	}
	fmt_opts_init(&o, w->depth, w->raw, w->verbose);
	tn = fmt_type_name(Py_TYPE(obj));
	json_object_set_new(v, "type", json_string(tn));
	json_object_set_new(v, "value", fmt_value(obj, &o));
	if (o.truncated)
		json_object_set_new(v, "truncated", json_true());
	free(tn);
	return v;
}

/* record(meta, values): one event of the watch request; for trace, values
 * is the finished recorder and becomes the "tree". */
static PyObject *
py_watch_record(PyObject *self, PyObject *args)
{
	struct watch_sink *w = PyCapsule_GetPointer(self, "fp.watch");
	PyObject *meta, *values, *item;
	json_t *data, *vals;
	Py_ssize_t i;

	if (w == NULL || !PyArg_ParseTuple(args, "O!O", &PyDict_Type, &meta, &values))
		return NULL;
	data = fmt_plain(meta);
	if (agent_trace_is_recorder(values)) {
		json_object_set_new(data, "tree", agent_trace_tree(values, w->interval_ns,
		    w->max_depth));
		agent_send(w->job->conn, proto_new_event(w->job->id, data));
		Py_RETURN_NONE;
	}
	if (!PyList_Check(values)) {
		json_decref(data);
		PyErr_SetString(PyExc_TypeError, "record: values must be a list");
		return NULL;
	}
	vals = json_array();
	for (i = 0; i < PyList_GET_SIZE(values); i++) {
		item = PyList_GET_ITEM(values, i);
		if (PyTuple_Check(item))
			json_array_append_new(vals, watch_value(w, item));
	}
	json_object_set_new(data, "values", vals);
	agent_send(w->job->conn, proto_new_event(w->job->id, data));
	Py_RETURN_NONE;
}

static PyObject *
py_watch_cancelled(PyObject *self, PyObject *unused)
{
	struct watch_sink *w = PyCapsule_GetPointer(self, "fp.watch");

	(void)unused;
	if (w == NULL)
		return NULL;
	return PyBool_FromLong(agent_job_is_cancelled(w->job));
}

static PyMethodDef watch_record_def = { "_fp_record", py_watch_record, METH_VARARGS, "send a record" };
static PyMethodDef watch_cancelled_def = { "_fp_cancelled", py_watch_cancelled, METH_NOARGS,
    "is the request cancelled" };

static json_t *
watch_spec(json_t *args)
{
	static const char *const keys[] = { "module", "class", "method", "expr", "filter", "nested",
	    "exception", "success", "before", "stack", "regex", "limit", "entrance_ms",
	    "max_depth", "targets", "matched", "cycle", "c_calls" };
	json_t *spec = json_object();
	size_t i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (json_object_get(args, keys[i]) != NULL)
			json_object_set(spec, keys[i], json_object_get(args, keys[i]));
	return spec;
}

static PyObject *
json_to_py(json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	PyObject *json = PyImport_ImportModule("json"), *r = NULL;

	if (text != NULL && json != NULL)
		r = PyObject_CallMethod(json, "loads", "s", text);
	free(text);
	Py_XDECREF(json);
	return r;
}

/* end as it is, or a "notfound" error when the helper answered ok: False. */
static json_t *
helper_refused(uint64_t id, json_t *end, const char *fallback)
{
	json_t *data = json_object_get(end, "data"), *e;
	const char *m, *k;

	if (!json_is_false(json_object_get(data, "ok")))
		return end;
	m = json_string_value(json_object_get(data, "message"));
	k = json_string_value(json_object_get(data, "kind"));
	e = proto_new_end_error(id, k ? k : "notfound", m ? m : fallback);
	json_decref(end);
	return e;
}

/*
 * A streaming request (watch, trace, monitor, tt): run helper function
 * run(conn, id, spec, record, cancelled) until it ends; record(meta,
 * values) sends one event, its values formatted with the request's
 * -x/-r/-v; its instrumentation is removed on every path (watch_stop).
 * Takes spec_json.
 */
static json_t *
stream_call(struct agent_job *job, const char *run, json_t *spec_json)
{
	struct watch_sink *w;
	PyObject *cap = NULL, *rec = NULL, *can = NULL, *spec = NULL, *r = NULL;
	json_t *end = NULL;

	if ((w = calloc(1, sizeof *w)) == NULL) {
		json_decref(spec_json);
		return proto_new_end_error(job->id, "internal", "out of memory");
	}
	w->job = job;
	w->depth = (int)arg_int(job->args, "depth", 1);
	w->raw = arg_bool(job->args, "raw");
	w->verbose = arg_bool(job->args, "verbose");
	w->interval_ns = (long long)(arg_num(job->args, "interval_ms", 0) * 1e6);
	w->max_depth = (int)arg_int(job->args, "max_depth", 0);
	if ((cap = PyCapsule_New(w, "fp.watch", watch_sink_free)) == NULL)
		free(w);
	if (cap != NULL && (rec = PyCFunction_New(&watch_record_def, cap)) != NULL &&
	    (can = PyCFunction_New(&watch_cancelled_def, cap)) != NULL &&
	    (spec = json_to_py(spec_json)) != NULL)
		r = helper_call(run, Py_BuildValue("(KKOOO)", (unsigned long long)job->conn,
		    (unsigned long long)job->id, spec, rec, can));
	json_decref(spec_json);
	/* An interrupt that landed in the helper's own cleanup: remove again. */
	if (r == NULL)
		end = helper_result(job->id, NULL);
	PyErr_Clear();
	Py_XDECREF(helper_call("watch_stop", Py_BuildValue("(KK)", (unsigned long long)job->conn,
	    (unsigned long long)job->id)));
	PyErr_Clear();
	Py_XDECREF(spec);
	Py_XDECREF(rec);
	Py_XDECREF(can);
	Py_XDECREF(cap);
	if (r == NULL)
		return end;
	return helper_refused(job->id, helper_result(job->id, r), "failed");
}

/* watch, trace and monitor: a module [class] method observed. */
static json_t *
do_observe(struct agent_job *job, const char *run)
{
	if (arg_str(job->args, "module") == NULL || arg_str(job->args, "method") == NULL)
		return end_errorf(job->id, "usage", "%s needs a module and a method", job->cmd);
	return stream_call(job, run, watch_spec(job->args));
}

static json_t *
do_watch(struct agent_job *job)
{
	return do_observe(job, "watch_run");
}

static json_t *
do_trace(struct agent_job *job)
{
	return do_observe(job, "trace_run");
}

static json_t *
do_monitor(struct agent_job *job)
{
	return do_observe(job, "monitor_run");
}

/* tt: every action is tthelper.py's tt_run, with the request's arguments. */
static json_t *
do_tt(struct agent_job *job)
{
	if (arg_str(job->args, "action") == NULL)
		return proto_new_end_error(job->id, "usage", "tt needs an action");
	return stream_call(job, "tt_run", json_incref(job->args));
}

/* reset: remove every instrumentation of this connection (all: of every one). */
static json_t *
do_reset(struct agent_job *job)
{
	return helper_result(job->id, helper_call("reset_run", Py_BuildValue("(KO)",
	    (unsigned long long)job->conn, arg_bool(job->args, "all") ? Py_True : Py_False)));
}

/* names: the observable functions of a module, for a client's -E (observe.py). */
static json_t *
do_names(struct agent_job *job)
{
	const char *module = arg_str(job->args, "module");

	if (module == NULL)
		return proto_new_end_error(job->id, "usage", "names needs a module");
	return helper_refused(job->id, helper_result(job->id, helper_call("observable_names_call",
	    Py_BuildValue("(s)", module))), "names failed");
}

/*
 * Every command a client may send: the hello's capabilities are its names,
 * and a request is run by its entry.  Only a connection that sent a
 * command which keeps state gets a drop when it closes: a client that read
 * (a getglobal, a stack's threads) leaves nothing for a worker to wait
 * for, so a fork() right after it finds no worker inside a request.  An entry without a handler is a
 * capability the server answers itself (cancel).
 */
static const struct agent_command commands[] = {
	{ "getglobal", do_getglobal, false, false },
	{ "vmtool", do_vmtool, false, false },
	{ "module", do_module, false, false },
	{ "execute", do_execute, true, false },
	{ "console", do_console, true, true },
	{ "threads", do_threads, false, false },
	{ "mem", agent_mem_run, false, true },
	{ "watch", do_watch, true, true },
	{ "torch", agent_torch_run, true, true },
	{ "trace", do_trace, true, true },
	{ "names", do_names, false, false },
	{ "monitor", do_monitor, true, true },
	{ "reset", do_reset, false, false },
	{ "tt", do_tt, true, true },
	{ "cancel", NULL, false, false },
};

const struct agent_command *
agent_command_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < sizeof commands / sizeof commands[0]; i++)
		if (commands[i].run != NULL && strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

json_t *
agent_capabilities(void)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
		json_array_append_new(a, json_string(commands[i].name));
	return a;
}

static json_t *
dispatch(struct agent_job *job)
{
	const struct agent_command *cmd = agent_command_find(job->cmd);
	char *why = NULL;
	json_t *end;

	if (!helper_ready(&why)) {
		end = end_errorf(job->id, "internal", "the agent's helper did not load: %s",
		    why ? why : "?");
		free(why);
		return end;
	}
	if (cmd == NULL)	/* jobs_submit refuses these: kept for safety */
		return end_errorf(job->id, "usage", "this agent has no command '%s'", job->cmd);
	return cmd->run(job);
}

void
agent_py_run(struct agent_job *job)
{
	PyGILState_STATE g;
	json_t *end = NULL;
	bool cancelled;

	if (!agent_py_ready()) {
		agent_job_left_python(job);
		agent_send(job->conn, proto_new_end_error(job->id, "shutdown",
		    "the interpreter is shutting down"));
		return;
	}
	g = agent_mem_gil_ensure();	/* not PyGILState_Ensure: see mem.h */
	/* Before any answer: a client that got one may make the program fork. */
	agent_py_install_fork_hooks();
	agent_job_mark_running(job, PyThread_get_thread_ident());
	if (!agent_job_is_cancelled(job))
		end = dispatch(job);
	PyErr_Clear();
	agent_job_mark_done(job);
	cancelled = agent_job_is_cancelled(job);
	/* A late KeyboardInterrupt still pending dies with this thread state. */
	PyGILState_Release(g);
	if (cancelled) {
		json_t *c = proto_new_end_error(job->id, "cancelled", "cancelled");

		if (end != NULL && json_object_get(end, "data") != NULL)
			json_object_set(c, "data", json_object_get(end, "data"));
		json_decref(end);
		end = c;
	}
	if (end == NULL)
		end = proto_new_end_error(job->id, "internal", "out of memory");
	agent_job_left_python(job);
	agent_send(job->conn, end);
}

void
agent_py_drop_conn(uint64_t conn)
{
	PyGILState_STATE g;
	PyObject *key;

	if (!agent_py_ready())
		return;
	g = agent_mem_gil_ensure();	/* not PyGILState_Ensure: see mem.h */
	if (consoles != NULL && (key = PyLong_FromUnsignedLongLong(conn)) != NULL) {
		if (PyDict_GetItem(consoles, key) != NULL)
			PyDict_DelItem(consoles, key);
		Py_DECREF(key);
	}
	/* Hooks of the connection's watches that outlived their worker. */
	if (helper != NULL)
		Py_XDECREF(helper_call("watch_stop", Py_BuildValue("(KO)", (unsigned long long)conn,
		    Py_None)));
	PyErr_Clear();
	/* And every other instrumentation it registered (monitor, tt, trace). */
	if (helper != NULL)
		Py_XDECREF(helper_call("reset_run", Py_BuildValue("(KO)", (unsigned long long)conn,
		    Py_False)));
	PyErr_Clear();
	agent_mem_drop_conn(conn);
	PyGILState_Release(g);
}

void
agent_py_child_reset(void)
{
	if (helper != NULL)
		Py_XDECREF(helper_call("reset_run", Py_BuildValue("(OO)", Py_None, Py_True)));
	PyErr_Clear();
}

void
agent_py_interrupt(uint64_t conn, uint64_t id)
{
	PyGILState_STATE g;
	unsigned long ident;

	if (!agent_py_ready())
		return;
	g = agent_mem_gil_ensure();	/* not PyGILState_Ensure: see mem.h */
	if (agent_job_running_ident(conn, id, &ident))
		PyThreadState_SetAsyncExc(ident, PyExc_KeyboardInterrupt);
	PyGILState_Release(g);
}
