/*
 * format — describe a Python object as a bounded JSON tree for the client
 * to render (EXPR / TYPE / VALUE blocks).
 *
 * Bounds: -x levels (at most 4), items per container (10 without -v),
 * characters per repr, and a character budget for the whole tree; a value
 * already on the path being expanded is shown as recursive.  Containers are
 * copied (with references) before any item is described, so a __repr__
 * that mutates them cannot make us walk freed memory.  Every call to user
 * code (repr, attribute access) is guarded: its exception becomes text.
 */
#include "config.h"

#include "inject/agent/pyagent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_DEPTH (FMT_MAX_DEPTH + 2)

/* Hard caps that hold even with -v. */
#define VERBOSE_ITEMS 100000
#define REPR_CHARS 4096
#define VERBOSE_REPR_CHARS (1 << 20)
#define BUDGET_CHARS ((size_t)1 << 20)
#define VERBOSE_BUDGET_CHARS ((size_t)6 << 20)

void
fmt_opts_init(struct fmt_opts *o, int depth, bool raw, bool verbose)
{
	memset(o, 0, sizeof *o);
	o->depth = depth < 0 ? 0 : depth > FMT_MAX_DEPTH ? FMT_MAX_DEPTH : depth;
	o->raw = raw;
	o->verbose = verbose;
	o->max_items = verbose ? VERBOSE_ITEMS : FMT_ITEMS;
	o->max_repr = verbose || raw ? VERBOSE_REPR_CHARS : REPR_CHARS;
	o->budget = verbose || raw ? VERBOSE_BUDGET_CHARS : BUDGET_CHARS;
}

char *
fmt_exception(void)
{
	PyObject *type, *value, *tb, *s = NULL;
	const char *name = "exception";
	char *text = NULL;
	json_t *j;

	PyErr_Fetch(&type, &value, &tb);
	if (type == NULL)
		return strdup("unknown error");
	PyErr_NormalizeException(&type, &value, &tb);
	if (PyType_Check(type))
		name = ((PyTypeObject *)type)->tp_name;
	if (value != NULL)
		s = PyObject_Str(value);
	if (s == NULL)
		PyErr_Clear();
	j = s ? fmt_str(s, 1000, NULL) : NULL;
	if (j != NULL && json_string_length(j) > 0) {
		size_t len = strlen(name) + json_string_length(j) + 3;

		text = malloc(len);
		if (text != NULL)
			snprintf(text, len, "%s: %s", name, json_string_value(j));
	} else {
		text = strdup(name);
	}
	json_decref(j);
	Py_XDECREF(s);
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
	return text ? text : strdup("exception");
}

json_t *
fmt_str(PyObject *s, size_t max, bool *cut)
{
	PyObject *sub = NULL, *bytes;
	Py_ssize_t n;
	json_t *j;

	if (cut != NULL)
		*cut = false;
	if (!PyUnicode_Check(s))
		return json_string("?");
	n = PyUnicode_GetLength(s);
	if (n < 0) {
		PyErr_Clear();
		return json_string("?");
	}
	if ((size_t)n > max) {
		sub = PyUnicode_Substring(s, 0, (Py_ssize_t)max);
		if (sub == NULL) {
			PyErr_Clear();
			return json_string("?");
		}
		s = sub;
		if (cut != NULL)
			*cut = true;
	}
	/* Lone surrogates (surrogateescape'd bytes) become \udcXX text. */
	bytes = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
	Py_XDECREF(sub);
	if (bytes == NULL) {
		PyErr_Clear();
		return json_string("?");
	}
	j = json_stringn(PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes));
	Py_DECREF(bytes);
	return j ? j : json_string("?");
}

/* repr() of str and bytes is taken of a prefix: a huge string stays cheap. */
static PyObject *
bounded_repr(PyObject *obj, size_t max, bool *cut)
{
	PyObject *part, *r;

	*cut = false;
	if (PyUnicode_Check(obj) && (size_t)PyUnicode_GET_LENGTH(obj) > max) {
		part = PyUnicode_Substring(obj, 0, (Py_ssize_t)max);
		*cut = true;
	} else if (PyBytes_Check(obj) && (size_t)PyBytes_GET_SIZE(obj) > max) {
		part = PyBytes_FromStringAndSize(PyBytes_AS_STRING(obj), (Py_ssize_t)max);
		*cut = true;
	} else {
		return PyObject_Repr(obj);
	}
	if (part == NULL)
		return NULL;
	r = PyObject_Repr(part);
	Py_DECREF(part);
	return r;
}

static json_t *
leaf_text(const char *text, bool err)
{
	json_t *n = json_object();

	json_object_set_new(n, "r", json_string(text));
	if (err)
		json_object_set_new(n, "err", json_true());
	return n;
}

json_t *
fmt_repr(PyObject *obj, size_t max)
{
	PyObject *r;
	json_t *j;
	bool cut = false, cut2 = false;
	char *why, *text;

	r = bounded_repr(obj, max, &cut);
	if (r == NULL || !PyUnicode_Check(r)) {
		if (r == NULL) {
			why = fmt_exception();
		} else {
			why = strdup("__repr__ returned a non-string");
			Py_DECREF(r);
		}
		text = malloc(strlen(why ? why : "?") + 32);
		if (text != NULL)
			sprintf(text, "<repr failed: %s>", why ? why : "?");
		j = json_string(text ? text : "<repr failed>");
		free(text);
		free(why);
		return j;
	}
	j = fmt_str(r, max, &cut2);
	Py_DECREF(r);
	if ((cut || cut2) && j != NULL) {
		text = malloc(json_string_length(j) + 8);
		if (text != NULL) {
			memcpy(text, json_string_value(j), json_string_length(j));
			memcpy(text + json_string_length(j), "...", 4);
			json_decref(j);
			j = json_string(text);
			free(text);
		}
	}
	return j;
}

char *
fmt_type_name(PyTypeObject *tp)
{
	PyObject *mod = NULL, *qual = NULL;
	json_t *jm = NULL, *jq = NULL;
	char *text = NULL;

	if (!PyType_HasFeature(tp, Py_TPFLAGS_HEAPTYPE))
		return strdup(tp->tp_name);	/* "list", "numpy.ndarray" */
	mod = PyObject_GetAttrString((PyObject *)tp, "__module__");
	qual = PyObject_GetAttrString((PyObject *)tp, "__qualname__");
	PyErr_Clear();
	if (qual != NULL && PyUnicode_Check(qual))
		jq = fmt_str(qual, 300, NULL);
	if (mod != NULL && PyUnicode_Check(mod))
		jm = fmt_str(mod, 300, NULL);
	if (jq != NULL) {
		size_t len = json_string_length(jq) + (jm ? json_string_length(jm) : 0) + 2;

		text = malloc(len);
		if (text != NULL) {
			if (jm != NULL && strcmp(json_string_value(jm), "builtins") != 0)
				snprintf(text, len, "%s.%s", json_string_value(jm), json_string_value(jq));
			else
				snprintf(text, len, "%s", json_string_value(jq));
		}
	}
	json_decref(jm);
	json_decref(jq);
	Py_XDECREF(mod);
	Py_XDECREF(qual);
	return text ? text : strdup(tp->tp_name);
}

struct walk {
	struct fmt_opts *o;
	PyObject *path[PATH_MAX_DEPTH];
	int depth;		/* entries in path */
};

static json_t *describe(struct walk *w, PyObject *obj, int level);

/* Charge a leaf's text to the budget; false when the budget is spent. */
static bool
charge(struct walk *w, size_t n)
{
	if (w->o->budget < n) {
		w->o->budget = 0;
		w->o->truncated = true;
		return false;
	}
	w->o->budget -= n;
	return true;
}

static json_t *
leaf(struct walk *w, PyObject *obj)
{
	json_t *r = fmt_repr(obj, w->o->max_repr), *n;
	const char *s = r ? json_string_value(r) : NULL;

	if (s == NULL) {
		json_decref(r);
		return leaf_text("?", true);
	}
	if (!charge(w, json_string_length(r))) {
		json_decref(r);
		return leaf_text("...", false);
	}
	n = json_object();
	if (strncmp(s, "<repr failed:", 13) == 0)
		json_object_set_new(n, "err", json_true());
	json_object_set_new(n, "r", r);
	return n;
}

static bool
on_path(struct walk *w, PyObject *obj)
{
	int i;

	for (i = 0; i < w->depth; i++)
		if (w->path[i] == obj)
			return true;
	return false;
}

static json_t *
summary(PyObject *obj, Py_ssize_t n)
{
	char *tn = fmt_type_name(Py_TYPE(obj)), text[400];

	snprintf(text, sizeof text, "<%s, %zd item%s>", tn, n, n == 1 ? "" : "s");
	free(tn);
	return leaf_text(text, false);
}

/* The first k items of a container, as new references (NULL on error). */
static PyObject **
take_items(PyObject *obj, size_t k, size_t *got)
{
	PyObject **items, *it, *x;
	Py_ssize_t pos = 0, i, n;
	PyObject *key, *val;
	size_t m = 0;

	*got = 0;
	items = calloc(k ? k * 2 : 1, sizeof *items);
	if (items == NULL)
		return NULL;
	if (PyDict_Check(obj)) {
		while (m < k && PyDict_Next(obj, &pos, &key, &val)) {
			Py_INCREF(key);
			Py_INCREF(val);
			items[2 * m] = key;
			items[2 * m + 1] = val;
			m++;
		}
	} else if (PyList_Check(obj) || PyTuple_Check(obj)) {
		n = PyList_Check(obj) ? PyList_GET_SIZE(obj) : PyTuple_GET_SIZE(obj);
		for (i = 0; i < n && m < k; i++) {
			x = PyList_Check(obj) ? PyList_GET_ITEM(obj, i) : PyTuple_GET_ITEM(obj, i);
			Py_INCREF(x);
			items[m++] = x;
		}
	} else {
		/* set, frozenset: iterating them runs no user code. */
		it = PyObject_GetIter(obj);
		if (it == NULL) {
			PyErr_Clear();
			free(items);
			return NULL;
		}
		while (m < k && (x = PyIter_Next(it)) != NULL)
			items[m++] = x;
		PyErr_Clear();
		Py_DECREF(it);
	}
	*got = m;
	return items;
}

static void
drop_items(PyObject **items, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		Py_XDECREF(items[i]);
	free(items);
}

static json_t *
container(struct walk *w, PyObject *obj, int level, Py_ssize_t n)
{
	bool is_dict = PyDict_Check(obj);
	size_t k = (size_t)n < w->o->max_items ? (size_t)n : w->o->max_items, got, i;
	PyObject **items = take_items(obj, k, &got);
	json_t *node = json_object(), *arr = json_array();
	char *tn = fmt_type_name(Py_TYPE(obj));
	const char *open = "[", *close = "]";

	if (items == NULL) {
		free(tn);
		json_decref(node);
		json_decref(arr);
		return leaf(w, obj);
	}
	if (PyTuple_Check(obj)) {
		open = "(";
		close = ")";
	} else if (PyAnySet_Check(obj) || is_dict) {
		open = "{";
		close = "}";
	}
	w->path[w->depth++] = obj;
	for (i = 0; i < got; i++) {
		if (w->o->budget == 0) {
			w->o->truncated = true;
			break;
		}
		if (is_dict) {
			json_t *pair = json_array();

			/* Keys are shown by repr: they are hashable, usually short. */
			json_array_append_new(pair, leaf(w, items[2 * i]));
			json_array_append_new(pair, describe(w, items[2 * i + 1], level - 1));
			json_array_append_new(arr, pair);
		} else {
			json_array_append_new(arr, describe(w, items[i], level - 1));
		}
	}
	w->depth--;
	drop_items(items, is_dict ? 2 * got : got);
	json_object_set_new(node, is_dict ? "map" : "seq", json_string(tn));
	json_object_set_new(node, "open", json_string(open));
	json_object_set_new(node, "close", json_string(close));
	json_object_set_new(node, "n", json_integer(n));
	json_object_set_new(node, "items", arr);
	if ((size_t)n > json_array_size(arr))
		json_object_set_new(node, "more", json_integer(n - (Py_ssize_t)json_array_size(arr)));
	free(tn);
	return node;
}

/* Append the __slots__ values of heap types in obj's MRO to names/values. */
static void
slot_attrs(PyObject *obj, PyObject *names, PyObject *values)
{
	PyObject *mro = Py_TYPE(obj)->tp_mro, *slots, *it, *name, *val, *seq;
	Py_ssize_t i, j;

	if (mro == NULL || !PyTuple_Check(mro))
		return;
	for (i = 0; i < PyTuple_GET_SIZE(mro); i++) {
		PyTypeObject *tp = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);

		if (!PyType_HasFeature(tp, Py_TPFLAGS_HEAPTYPE) || tp->tp_dict == NULL)
			continue;
		slots = PyDict_GetItemString(tp->tp_dict, "__slots__");
		if (slots == NULL)
			continue;
		if (PyUnicode_Check(slots)) {
			seq = PyTuple_Pack(1, slots);
		} else {
			it = PyObject_GetIter(slots);
			seq = it ? PySequence_Tuple(it) : NULL;
			Py_XDECREF(it);
		}
		if (seq == NULL) {
			PyErr_Clear();
			continue;
		}
		for (j = 0; j < PyTuple_GET_SIZE(seq); j++) {
			name = PyTuple_GET_ITEM(seq, j);
			if (!PyUnicode_Check(name) ||
			    PyUnicode_CompareWithASCIIString(name, "__dict__") == 0 ||
			    PyUnicode_CompareWithASCIIString(name, "__weakref__") == 0)
				continue;
			/* Private names are stored mangled: __x in class A is _A__x. */
			if (PyUnicode_GET_LENGTH(name) > 2 &&
			    PyUnicode_READ_CHAR(name, 0) == '_' && PyUnicode_READ_CHAR(name, 1) == '_' &&
			    !(PyUnicode_READ_CHAR(name, PyUnicode_GET_LENGTH(name) - 1) == '_' &&
			      PyUnicode_READ_CHAR(name, PyUnicode_GET_LENGTH(name) - 2) == '_')) {
				PyObject *cls = PyObject_GetAttrString((PyObject *)tp, "__name__");
				PyObject *m = NULL;

				if (cls != NULL && PyUnicode_Check(cls))
					m = PyUnicode_FromFormat("_%U%U", cls, name);
				Py_XDECREF(cls);
				if (m == NULL) {
					PyErr_Clear();
					continue;
				}
				val = PyObject_GetAttr(obj, m);
				Py_DECREF(m);
			} else {
				val = PyObject_GetAttr(obj, name);
			}
			if (val == NULL) {
				PyErr_Clear();	/* unset slot */
				continue;
			}
			PyList_Append(names, name);
			PyList_Append(values, val);
			Py_DECREF(val);
		}
		Py_DECREF(seq);
	}
	PyErr_Clear();
}

/* An object's attributes (__dict__ and __slots__), or a leaf if it has none. */
static json_t *
instance(struct walk *w, PyObject *obj, int level)
{
	PyObject *dict, *names, *values, *key, *val;
	Py_ssize_t pos = 0, n, i;
	json_t *node, *arr;
	char *tn, addr[32];

	if (PyModule_Check(obj) || PyType_Check(obj) || PyFunction_Check(obj) ||
	    PyCFunction_Check(obj) || PyMethod_Check(obj) || PyExceptionInstance_Check(obj))
		return leaf(w, obj);
	names = PyList_New(0);
	values = PyList_New(0);
	if (names == NULL || values == NULL) {
		Py_XDECREF(names);
		Py_XDECREF(values);
		PyErr_Clear();
		return leaf(w, obj);
	}
	dict = PyObject_GenericGetDict(obj, NULL);
	if (dict != NULL && PyDict_Check(dict)) {
		while (PyDict_Next(dict, &pos, &key, &val)) {
			if (PyList_Append(names, key) != 0 || PyList_Append(values, val) != 0)
				break;
		}
	}
	Py_XDECREF(dict);
	PyErr_Clear();
	slot_attrs(obj, names, values);
	n = PyList_GET_SIZE(names);
	if (n == 0) {
		Py_DECREF(names);
		Py_DECREF(values);
		return leaf(w, obj);
	}
	node = json_object();
	arr = json_array();
	w->path[w->depth++] = obj;
	for (i = 0; i < n && (size_t)i < w->o->max_items; i++) {
		json_t *pair = json_array();
		PyObject *name = PyList_GET_ITEM(names, i);

		if (w->o->budget == 0) {
			w->o->truncated = true;
			json_decref(pair);
			break;
		}
		if (PyUnicode_Check(name)) {
			json_array_append_new(pair, fmt_str(name, 200, NULL));
		} else {
			json_t *r = fmt_repr(name, 200);

			json_array_append_new(pair, r ? r : json_string("?"));
		}
		json_array_append_new(pair, describe(w, PyList_GET_ITEM(values, i), level - 1));
		json_array_append_new(arr, pair);
	}
	w->depth--;
	tn = fmt_type_name(Py_TYPE(obj));
	snprintf(addr, sizeof addr, "%p", (void *)obj);
	json_object_set_new(node, "obj", json_string(tn));
	json_object_set_new(node, "addr", json_string(addr));
	json_object_set_new(node, "n", json_integer(n));
	json_object_set_new(node, "attrs", arr);
	if ((size_t)n > json_array_size(arr))
		json_object_set_new(node, "more", json_integer(n - (Py_ssize_t)json_array_size(arr)));
	free(tn);
	Py_DECREF(names);
	Py_DECREF(values);
	return node;
}

static bool
is_scalar(PyObject *obj)
{
	return obj == Py_None || PyBool_Check(obj) || PyLong_Check(obj) || PyFloat_Check(obj) ||
	    PyComplex_Check(obj) || PyUnicode_Check(obj) || PyBytes_Check(obj) ||
	    PyByteArray_Check(obj);
}

static json_t *
describe(struct walk *w, PyObject *obj, int level)
{
	Py_ssize_t n;
	json_t *node;
	char *tn, text[420];

	if (w->o->budget == 0) {
		w->o->truncated = true;
		return leaf_text("...", false);
	}
	if (is_scalar(obj))
		return leaf(w, obj);
	if (on_path(w, obj) || w->depth >= PATH_MAX_DEPTH) {
		tn = fmt_type_name(Py_TYPE(obj));
		snprintf(text, sizeof text, "<recursive %s at %p>", tn, (void *)obj);
		free(tn);
		node = leaf_text(text, false);
		json_object_set_new(node, "rec", json_true());
		return node;
	}
	if (PyDict_Check(obj) || PyList_Check(obj) || PyTuple_Check(obj) || PyAnySet_Check(obj)) {
		n = PyObject_Length(obj);
		if (n < 0) {
			PyErr_Clear();
			return leaf(w, obj);
		}
		if (level <= 0)
			return n == 0 ? leaf(w, obj) : summary(obj, n);
		return container(w, obj, level, n);
	}
	if (level <= 0)
		return leaf(w, obj);
	return instance(w, obj, level);
}

json_t *
fmt_value(PyObject *obj, struct fmt_opts *o)
{
	struct walk w;
	json_t *node;

	memset(&w, 0, sizeof w);
	w.o = o;
	if (o->raw)
		node = leaf(&w, obj);
	else
		node = describe(&w, obj, o->depth);
	PyErr_Clear();
	return node ? node : leaf_text("?", true);
}

json_t *
fmt_plain(PyObject *obj)
{
	json_t *j, *v;
	Py_ssize_t i, n, pos = 0;
	PyObject *key, *val;

	if (obj == NULL || obj == Py_None)
		return json_null();
	if (PyBool_Check(obj))
		return json_boolean(obj == Py_True);
	if (PyLong_Check(obj)) {
		long long x = PyLong_AsLongLong(obj);

		if (x == -1 && PyErr_Occurred()) {
			PyErr_Clear();
			return fmt_repr(obj, 100);
		}
		return json_integer(x);
	}
	if (PyFloat_Check(obj))
		return json_real(PyFloat_AS_DOUBLE(obj));
	if (PyUnicode_Check(obj))
		return fmt_str(obj, (size_t)8 << 20, NULL);
	if (PyList_Check(obj) || PyTuple_Check(obj)) {
		j = json_array();
		n = PySequence_Fast_GET_SIZE(obj);
		for (i = 0; i < n; i++)
			json_array_append_new(j, fmt_plain(PySequence_Fast_GET_ITEM(obj, i)));
		return j;
	}
	if (PyDict_Check(obj)) {
		j = json_object();
		while (PyDict_Next(obj, &pos, &key, &val)) {
			json_t *k = PyUnicode_Check(key) ? fmt_str(key, 1000, NULL) : fmt_repr(key, 1000);

			v = fmt_plain(val);
			if (k != NULL && json_string_value(k) != NULL)
				json_object_setn_new(j, json_string_value(k), json_string_length(k), v);
			else
				json_decref(v);
			json_decref(k);
		}
		return j;
	}
	return fmt_repr(obj, 1000);
}
