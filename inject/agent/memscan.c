/*
 * memscan — see memscan.h.
 *
 * Version notes (checked against the installed headers of 3.8.18, 3.9.18,
 * 3.10.13, 3.11.7, 3.12.1 and 3.13.0): every one keeps the collector's
 * state as `struct _gc_runtime_state` (internal/pycore_pymem.h in 3.8,
 * internal/pycore_gc.h since 3.9) with the same members from
 * `generations` to `collecting`, and a 16-byte PyGC_Head {_gc_next,
 * _gc_prev} right before each tracked object.  _gc_next is a plain
 * pointer outside a collection; 0 means untracked.  3.13.0 still has the
 * three-generation collector (the incremental one came with 3.14, which
 * this file does not serve).  We mirror only that tail of the struct and
 * find it from a freshly tracked object, whose _gc_next is the head of
 * generation 0, so no offset inside the interpreter state is needed.
 */
#include "config.h"

#include "inject/agent/memscan.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLICE_MS 4.0		/* the longest we keep the GIL at once, roughly */
#define CHECK_EVERY 64		/* objects between two looks at the clock */
#define REFERENT_DEPTH 8	/* untracked containers inside untracked containers */
#define SCAN_MAX_MS 30000.0	/* a program allocating faster than we read: stop there */

#if PY_VERSION_HEX >= 0x030E0000
#error "memscan: 3.14 has the incremental collector; its lists are not walked here"
#endif

struct gc_head {
	uintptr_t next;
	uintptr_t prev;
};

struct gc_generation {
	struct gc_head head;
	int threshold;
	int count;
};

struct gc_stats {
	Py_ssize_t collections, collected, uncollectable;
};

/* struct _gc_runtime_state from `generations` to `collecting` (3.8-3.13). */
struct gc_tail {
	struct gc_generation generations[3];
	struct gc_head *generation0;
	struct gc_generation permanent;
	struct gc_stats stats[3];
	int collecting;
};

#define NLISTS 4
#define AS_GC(o) ((struct gc_head *)(o) - 1)
#define FROM_GC(g) ((PyObject *)((struct gc_head *)(g) + 1))

enum { SIZE_UNKNOWN, SIZE_BASIC, SIZE_CFUNC };

struct walk {
	struct memscan *scan;
	struct gc_tail *gc;
	struct gc_head *heads[NLISTS];
	bool done[NLISTS];
	int list;			/* the list the cursor is in, as far as we know */
	struct gc_head *cur;
	/*
	 * Each list's last object when the scan began, held: the walk of a
	 * list ends there, so objects allocated during the scan (appended to
	 * generation 0 behind the cursor) cannot keep it going for ever.
	 */
	PyObject *last[NLISTS];
	uintptr_t *seen;		/* untracked objects counted: open addressing */
	size_t nseen, seencap;
	int depth;
	PyCFunction object_sizeof;
	PyObject *sizeof_name;
};

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static size_t
hash_ptr(const void *p)
{
	uintptr_t x = (uintptr_t)p >> 4;

	x ^= x >> 17;
	x *= (uintptr_t)0xed5ad4bbU;
	x ^= x >> 11;
	return (size_t)x;
}

/* ---- the type table ------------------------------------------------------- */

static bool
types_grow(struct memscan *scan)
{
	size_t cap = scan->cap ? scan->cap * 2 : 256, i, j;
	struct memscan_type *t = calloc(cap, sizeof *t);

	if (t == NULL)
		return false;
	for (i = 0; i < scan->cap; i++) {
		if (scan->types[i].tp == NULL)
			continue;
		for (j = hash_ptr(scan->types[i].tp) & (cap - 1); t[j].tp != NULL; j = (j + 1) & (cap - 1))
			;
		t[j] = scan->types[i];
	}
	free(scan->types);
	scan->types = t;
	scan->cap = cap;
	return true;
}

static struct memscan_type *
type_slot(struct memscan *scan, PyTypeObject *tp)
{
	size_t j;

	if ((scan->ntypes + 1) * 2 > scan->cap && !types_grow(scan))
		return NULL;
	for (j = hash_ptr(tp) & (scan->cap - 1); scan->types[j].tp != NULL; j = (j + 1) & (scan->cap - 1))
		if (scan->types[j].tp == tp)
			return &scan->types[j];
	Py_INCREF(tp);
	scan->types[j].tp = tp;
	scan->ntypes++;
	return &scan->types[j];
}

/* ---- sizes as sys.getsizeof reports them ---------------------------------- */

static void
size_kind(struct walk *w, struct memscan_type *t)
{
	PyObject *d = _PyType_Lookup(t->tp, w->sizeof_name);	/* borrowed, never raises */

	t->size_kind = SIZE_BASIC;
	if (d != NULL && Py_TYPE(d) == &PyMethodDescr_Type) {
		PyMethodDef *ml = ((PyMethodDescrObject *)d)->d_method;

		if ((ml->ml_flags & METH_NOARGS) && ml->ml_meth != w->object_sizeof) {
			t->size_kind = SIZE_CFUNC;
			t->size_fn = ml->ml_meth;
		}
	} else if (d != NULL) {
		/* Python code (or something else callable): never run it here. */
		w->scan->python_sizeof = true;
	}
}

static long long
object_size(struct walk *w, struct memscan_type *t, PyObject *o)
{
	PyTypeObject *tp = t->tp;
	long long n = -1, pre = PyObject_IS_GC(o) ? (long long)sizeof(struct gc_head) : 0;
	PyObject *r;

	if (t->size_kind == SIZE_UNKNOWN)
		size_kind(w, t);
	if (t->size_kind == SIZE_CFUNC && (r = t->size_fn(o, NULL)) != NULL) {
		n = PyLong_AsLongLong(r);
		Py_DECREF(r);
	}
	if (n < 0) {
		PyErr_Clear();
		n = (long long)tp->tp_basicsize;
		if (tp->tp_itemsize > 0)
			n += (long long)Py_SIZE(o) * (long long)tp->tp_itemsize;
	}
#if PY_VERSION_HEX >= 0x030C0000
	if (!PyType_Check(o) || PyType_HasFeature((PyTypeObject *)o, Py_TPFLAGS_HEAPTYPE))
		pre += PyType_HasFeature(tp, Py_TPFLAGS_PREHEADER) ? 2 * (long long)sizeof(PyObject *) : 0;
#elif PY_VERSION_HEX >= 0x030B0000
	pre += PyType_HasFeature(tp, Py_TPFLAGS_MANAGED_DICT) ? 2 * (long long)sizeof(PyObject *) : 0;
#endif
	return n + pre;
}

static bool
count_object(struct walk *w, PyObject *o)
{
	struct memscan_type *t = type_slot(w->scan, Py_TYPE(o));
	long long size;

	if (t == NULL)
		return false;
	size = object_size(w, t, o);
	t->count++;
	t->size += size;
	w->scan->objects++;
	w->scan->bytes += size;
	return true;
}

/* ---- untracked referents, each once ----------------------------------------- */

static bool
seen_add(struct walk *w, PyObject *o)
{
	size_t j, i;

	if ((w->nseen + 1) * 2 > w->seencap) {
		size_t cap = w->seencap ? w->seencap * 2 : 4096;
		uintptr_t *s = calloc(cap, sizeof *s);

		if (s == NULL)
			return false;
		for (i = 0; i < w->seencap; i++) {
			if (w->seen[i] == 0)
				continue;
			for (j = hash_ptr((void *)w->seen[i]) & (cap - 1); s[j] != 0; j = (j + 1) & (cap - 1))
				;
			s[j] = w->seen[i];
		}
		free(w->seen);
		w->seen = s;
		w->seencap = cap;
	}
	for (j = hash_ptr(o) & (w->seencap - 1); w->seen[j] != 0; j = (j + 1) & (w->seencap - 1))
		if (w->seen[j] == (uintptr_t)o)
			return false;
	w->seen[j] = (uintptr_t)o;
	w->nseen++;
	return true;
}

static bool
is_tracked(PyObject *o)
{
	return PyObject_IS_GC(o) && AS_GC(o)->next != 0;
}

static int
visit_referent(PyObject *o, void *arg)
{
	struct walk *w = arg;

	if (o == NULL || is_tracked(o) || !seen_add(w, o))
		return 0;
	if (!count_object(w, o))
		return 0;
	w->scan->untracked++;
	if (PyObject_IS_GC(o) && Py_TYPE(o)->tp_traverse != NULL && w->depth < REFERENT_DEPTH) {
		w->depth++;
		Py_TYPE(o)->tp_traverse(o, visit_referent, w);
		w->depth--;
	}
	return 0;
}

/* ---- the walk ----------------------------------------------------------------- */

static bool
find_lists(struct walk *w, char **why)
{
	PyObject *probe = PyList_New(0);	/* tracked at the tail of generation 0 */
	struct gc_head *head0;
	int i;

	if (probe == NULL) {
		PyErr_Clear();
		*why = strdup("out of memory");
		return false;
	}
	head0 = (struct gc_head *)AS_GC(probe)->next;
	Py_DECREF(probe);
	w->gc = (struct gc_tail *)head0;
	if (head0 == NULL || w->gc->generation0 != head0) {
		*why = strdup("the collector's lists are not laid out as in CPython " PY_VERSION
		    " (not a supported build)");
		return false;
	}
	for (i = 0; i < 3; i++)
		w->heads[i] = &w->gc->generations[i].head;
	w->heads[3] = &w->gc->permanent.head;
	for (i = 0; i < NLISTS; i++) {
		/* _gc_prev keeps two flag bits low (3.8+); the head's is clean outside a collection. */
		struct gc_head *tail = (struct gc_head *)(w->heads[i]->prev & ~(uintptr_t)3);

		if (tail != w->heads[i]) {
			w->last[i] = FROM_GC(tail);
			Py_INCREF(w->last[i]);
		}
	}
	return true;
}

static Py_ssize_t
collections(const struct walk *w)
{
	return w->gc->stats[0].collections + w->gc->stats[1].collections +
	    w->gc->stats[2].collections;
}

/* The cursor is a list's head: that list is done; start the next one. */
static bool
next_list(struct walk *w)
{
	int i;

	for (i = 0; i < NLISTS; i++)
		if (w->cur == w->heads[i])
			break;
	if (i < NLISTS) {
		if (i != w->list)
			w->scan->approximate = true;	/* the cursor moved to another generation */
		w->done[i] = true;
	}
	for (i = 0; i < NLISTS && w->done[i]; i++)
		;
	if (i == NLISTS)
		return false;
	w->list = i;
	w->cur = (struct gc_head *)w->heads[i]->next;
	return true;
}

static bool
at_head(const struct walk *w)
{
	int i;

	for (i = 0; i < NLISTS; i++)
		if (w->cur == w->heads[i])
			return true;
	return false;
}

/* One slice: false when every list is done. */
static bool
slice(struct walk *w)
{
	double start = now_ms();
	unsigned n = 0;
	PyObject *o;

	for (;;) {
		if (at_head(w) && !next_list(w))
			return false;
		if (at_head(w))
			continue;
		o = FROM_GC(w->cur);
		count_object(w, o);
		if (Py_TYPE(o)->tp_traverse != NULL)
			Py_TYPE(o)->tp_traverse(o, visit_referent, w);
		if (o == w->last[w->list])
			w->cur = w->heads[w->list];	/* this list is done */
		else
			w->cur = (struct gc_head *)w->cur->next;
		if (++n % CHECK_EVERY == 0 && now_ms() - start >= SLICE_MS)
			return true;
	}
}

/*
 * Let the program run: hold the cursor's object (it cannot be freed or
 * leave the lists while we hold it, short of an explicit collection that
 * moves it to an older generation), drop the GIL, take it again.
 */
static void
pause_slice(struct walk *w, double *held_since)
{
	PyObject *keep = at_head(w) ? NULL : FROM_GC(w->cur);
	Py_ssize_t before;
	PyThreadState *ts;
	double held = now_ms() - *held_since;

	if (held > w->scan->max_hold_ms)
		w->scan->max_hold_ms = held;
	Py_XINCREF(keep);
	before = collections(w);
	ts = PyEval_SaveThread();
	sched_yield();
	PyEval_RestoreThread(ts);
	*held_since = now_ms();
	/* A collection in progress (we got the GIL from a finalizer): wait it out. */
	while (w->gc->collecting) {
		ts = PyEval_SaveThread();
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		PyEval_RestoreThread(ts);
		*held_since = now_ms();
	}
	if (collections(w) != before)
		w->scan->approximate = true;
	/*
	 * Our reference may be the last one: its dealloc would unlink it under
	 * the cursor.  Hold the next object before letting it go.
	 */
	while (keep != NULL && Py_REFCNT(keep) == 1 && AS_GC(keep)->next != 0) {
		struct gc_head *next = (struct gc_head *)AS_GC(keep)->next;
		PyObject *old = keep;

		keep = NULL;
		for (int i = 0; i < NLISTS; i++)
			if (next == w->heads[i])
				w->cur = next;
		if (w->cur != next) {
			keep = FROM_GC(next);
			Py_INCREF(keep);
		}
		Py_DECREF(old);
	}
	if (keep != NULL && AS_GC(keep)->next == 0) {
		/* Untracked meanwhile: the rest of this list cannot be followed from it. */
		w->scan->approximate = true;
		w->cur = w->heads[w->list];
	} else if (keep != NULL) {
		w->cur = AS_GC(keep);
	}
	Py_XDECREF(keep);
}

bool
memscan_run(struct memscan *scan, struct agent_job *job, char **why)
{
	struct walk w;
	PyObject *object_sizeof;
	double start = now_ms(), held_since = start;
	bool ok = true;

	memset(scan, 0, sizeof *scan);
	memset(&w, 0, sizeof w);
	w.scan = scan;
	w.sizeof_name = PyUnicode_InternFromString("__sizeof__");
	object_sizeof = w.sizeof_name ? _PyType_Lookup(&PyBaseObject_Type, w.sizeof_name) : NULL;
	if (object_sizeof == NULL || Py_TYPE(object_sizeof) != &PyMethodDescr_Type) {
		PyErr_Clear();
		Py_XDECREF(w.sizeof_name);
		*why = strdup("object.__sizeof__ is not where it should be");
		return false;
	}
	w.object_sizeof = ((PyMethodDescrObject *)object_sizeof)->d_method->ml_meth;
	if (!find_lists(&w, why)) {
		Py_DECREF(w.sizeof_name);
		return false;
	}
	w.list = 0;
	w.cur = (struct gc_head *)w.heads[0]->next;
	while (slice(&w)) {
		scan->slices++;
		pause_slice(&w, &held_since);
		if (now_ms() - start > SCAN_MAX_MS) {
			scan->approximate = scan->cut_short = true;
			break;
		}
		if (job != NULL && agent_job_is_cancelled(job)) {
			*why = strdup("cancelled");
			ok = false;
			break;
		}
	}
	scan->slices++;
	if (now_ms() - held_since > scan->max_hold_ms)
		scan->max_hold_ms = now_ms() - held_since;
	scan->wall_ms = now_ms() - start;
	free(w.seen);
	for (int i = 0; i < NLISTS; i++)
		Py_XDECREF(w.last[i]);
	Py_DECREF(w.sizeof_name);
	return ok;
}

const struct memscan_type *
memscan_find(const struct memscan *scan, PyTypeObject *tp)
{
	size_t j;

	if (scan->cap == 0)
		return NULL;
	for (j = hash_ptr(tp) & (scan->cap - 1); scan->types[j].tp != NULL; j = (j + 1) & (scan->cap - 1))
		if (scan->types[j].tp == tp)
			return &scan->types[j];
	return NULL;
}

void
memscan_clear(struct memscan *scan)
{
	size_t i;

	for (i = 0; i < scan->cap; i++)
		Py_XDECREF(scan->types[i].tp);
	free(scan->types);
	memset(scan, 0, sizeof *scan);
}
