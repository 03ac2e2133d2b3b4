/*
 * trace — the call-tree recorder (see trace.h).  The hook (trace_event,
 * or on the eval path agent_trace_eval) runs on the observed thread for
 * every call and return beneath the traced call, so it does the least it
 * can: two clock reads, a walk over the current node's
 * children and counters.  Names, lines and JSON come later, on the worker.
 */
#include "config.h"

#include "inject/agent/trace.h"

#include "inject/agent/evalhook.h"

#include <frameobject.h>
#include <opcode.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRACE_STACK 256		/* frames followed; deeper ones are counted */
#define TRACE_NODES 4000	/* distinct (callee, call site) per recorded call */
#define TRACE_SUSPENDED 64	/* generator frames of ours suspended at once */
#define REC_NAME "fp.trace.rec"
#define SESSION_NAME "fp.trace.session"
#define EVAL_SLOTS 32		/* recorders on the eval path at once (threads) */

struct tsession {
	volatile int stopped;	/* set by the worker or a disconnect */
	int max_depth;		/* levels below the entry recorded; 0: all */
	bool eval;		/* record on the eval path (evalhook.c) when it can */
};

struct tnode {
	PyObject *callee;	/* code object, or the C callable first seen */
	const void *key;	/* what identifies the callee across calls */
	int lasti;		/* call site: instruction offset in the parent, -1 */
	int parent, child, last, next;
	long long count, total, min, max;	/* ns */
};

struct tframe {
	int node;		/* -1: not recorded (node cap) */
	long long t0;		/* when it (last) started running */
	long long ran;		/* ns it ran before it last resumed (generators) */
	/* Identity only, alive while on the stack; NULL for C.  The profile
	 * path's are PyFrameObject, the eval path's evalhook.h's evh_frame. */
	const void *frame;
	PyObject *hold;		/* what keeps frame alive while it waits in susp[] */
	bool suspends;		/* a generator's or coroutine's: its returns may be yields */
};

/*
 * REC_PAUSED: the entry is a generator or coroutine suspended at a yield or
 * an await.  Its frame waits in susp[] until it resumes; the program's code
 * that runs meanwhile is not ours.
 */
enum { REC_WAIT, REC_RUN, REC_PAUSED, REC_DONE };

struct trec {
	PyObject *self;		/* the capsule: the profile object */
	PyObject *session;	/* strong */
	struct tsession *s;
	PyObject *entry;	/* the traced code object, strong */
	struct tnode *nodes;
	int nnodes, cap;
	struct tframe stack[TRACE_STACK];
	int depth, extra, state;
	/* Frames of ours suspended at a yield (susp[i].hold a strong
	 * reference, so the frame's address is not reused while it waits);
	 * the entry's own frame is root. */
	struct tframe susp[TRACE_SUSPENDED];
	int nsusp;
	const void *root;	/* borrowed: the entry's frame, once seen */
	PyThreadState *ts;	/* the thread hooked */
	bool hooked;
	bool eval;		/* on the eval path: registered in ev_slot[], no profile hook */
	long long dropped;	/* calls not recorded: node cap */
	long long cost;		/* of the entry call, ns */
};

/* The frame's code object, for identity only (the frame keeps it alive). */
static PyObject *
frame_code(PyFrameObject *f)
{
#if PY_VERSION_HEX >= 0x03090000
	PyCodeObject *c = PyFrame_GetCode(f);

	Py_DECREF(c);
	return (PyObject *)c;
#else
	return (PyObject *)f->f_code;
#endif
}

/* Offset in bytes of the instruction the frame is executing (a call). */
static int
frame_lasti(PyFrameObject *f)
{
#if PY_VERSION_HEX >= 0x030b0000
	return PyFrame_GetLasti(f);
#elif PY_VERSION_HEX >= 0x030a0000
	return f->f_lasti * 2;	/* 3.10 counts code units */
#else
	return f->f_lasti;
#endif
}

static PyFrameObject *
frame_back(PyFrameObject *f)	/* borrowed */
{
#if PY_VERSION_HEX >= 0x03090000
	PyFrameObject *b = PyFrame_GetBack(f);

	Py_XDECREF(b);	/* f holds it */
	return b;
#else
	return f->f_back;
#endif
}

/*
 * Is the frame, whose return the hook sees, suspending at a yield or an
 * await rather than ending?  The profile hook reports both as a return.
 */
static bool
frame_yielding(PyFrameObject *f)
{
#if PY_VERSION_HEX >= 0x030b0000
	PyCodeObject *c = PyFrame_GetCode(f);	/* a generator's: see tframe.suspends */
	PyObject *bytes;
	int lasti = PyFrame_GetLasti(f);
	bool y = false;

#if PY_VERSION_HEX >= 0x030d0000
	lasti -= 2;	/* 3.13 reports the yield with the next instruction current */
#endif
	/* The instruction it left at; PyCode_GetCode is the unspecialized
	 * copy the interpreter caches. */
	if (lasti >= 0 && (bytes = PyCode_GetCode(c)) != NULL) {
		y = lasti < PyBytes_GET_SIZE(bytes) &&
		    (unsigned char)PyBytes_AS_STRING(bytes)[lasti] == YIELD_VALUE;
		Py_DECREF(bytes);
	}
	PyErr_Clear();
	Py_DECREF(c);
	return y;
#elif PY_VERSION_HEX >= 0x030a0000
	return f->f_state == FRAME_SUSPENDED;
#else
	return f->f_stacktop != NULL;	/* NULL while running and once returned */
#endif
}

/* ---- recording (the observed thread) ---------------------------------------- */

static int trace_event(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg);

/*
 * The eval path's recorders, at most one per thread (its running or waiting
 * traced call); the evaluator is installed while there is one, so a thread
 * of the program pays for it only while some traced call runs (see
 * README's trace section for what that costs).  The GIL guards it.
 */
static struct trec *ev_slot[EVAL_SLOTS];
static int ev_top;		/* slots from ev_top on are empty: scans stop there */
int agent_trace_nrec;

static struct trec *
ev_of_thread(PyThreadState *ts)
{
	int i;

	for (i = 0; i < ev_top; i++)
		if (ev_slot[i] != NULL && ev_slot[i]->ts == ts)
			return ev_slot[i];
	return NULL;
}

/* Register r (hooked, with its strong reference) and install the
 * evaluator; false when it cannot: another tool's evaluator, no slot. */
static bool
ev_register(struct trec *r)
{
	int i;

	for (i = 0; i < EVAL_SLOTS && ev_slot[i] != NULL; i++)
		;
	if (i == EVAL_SLOTS || !evh_install())
		return false;
	ev_slot[i] = r;
	if (i >= ev_top)
		ev_top = i + 1;
	agent_trace_nrec++;
	Py_INCREF(r->self);
	return true;
}

/* r leaves the eval path; the last one out puts the interpreter's own
 * evaluator back.  Its in-flight frames return through ours, which then
 * finds no recorder and only passes their results on. */
static void
ev_unregister(struct trec *r)
{
	int i;

	for (i = 0; i < EVAL_SLOTS && ev_slot[i] != r; i++)
		;
	if (i == EVAL_SLOTS)
		return;
	ev_slot[i] = NULL;
	while (ev_top > 0 && ev_slot[ev_top - 1] == NULL)
		ev_top--;
	if (--agent_trace_nrec == 0)
		evh_restore();
	Py_DECREF(r->self);	/* the capsule stays alive: the caller holds it */
}

static void
rec_unhook(struct trec *r)
{
	PyThreadState *ts = PyThreadState_Get();
	PyObject *self = r->self;

	if (!r->hooked)
		return;
	if (r->eval) {	/* any thread: the table is the interpreter's */
		r->hooked = false;
		ev_unregister(r);
		return;
	}
	if (ts != r->ts)	/* ended on another thread: that one unhooks at its next event */
		return;
	r->hooked = false;
	if (ts->c_profilefunc == trace_event && ts->c_profileobj == self) {
		Py_INCREF(self);	/* the interpreter drops its reference now */
		PyEval_SetProfile(NULL, NULL);
		PyErr_Clear();
		Py_DECREF(self);
	}
}

/* The child of parent for (key, lasti), added if new; -1 at the node cap. */
static int
rec_node(struct trec *r, int parent, const void *key, PyObject *callee, int lasti)
{
	struct tnode *n;
	int i;

	for (i = parent >= 0 ? r->nodes[parent].child : -1; i >= 0; i = r->nodes[i].next)
		if (r->nodes[i].key == key && r->nodes[i].lasti == lasti)
			return i;
	if (r->nnodes == r->cap) {
		int cap = r->cap ? r->cap * 2 : 64;
		struct tnode *p;

		if (r->cap >= TRACE_NODES || (p = realloc(r->nodes, cap * sizeof *p)) == NULL)
			return -1;
		r->nodes = p;
		r->cap = cap;
	}
	i = r->nnodes++;
	n = &r->nodes[i];
	memset(n, 0, sizeof *n);
	n->callee = callee;
	Py_INCREF(callee);
	n->key = key;
	n->lasti = lasti;
	n->parent = parent;
	n->child = n->last = n->next = -1;
	n->min = -1;
	if (parent >= 0) {
		if (r->nodes[parent].child < 0)
			r->nodes[parent].child = i;
		else
			r->nodes[r->nodes[parent].last].next = i;
		r->nodes[parent].last = i;
	}
	return i;
}

static void
rec_push(struct trec *r, const void *key, PyObject *callee, int lasti, const void *frame,
    PyObject *hold)
{
	struct tframe *top = r->depth ? &r->stack[r->depth - 1] : NULL;
	int node = -1;

	if (r->extra > 0 || r->depth == TRACE_STACK ||
	    (r->s->max_depth > 0 && r->depth > r->s->max_depth)) {
		r->extra++;
		return;
	}
	if (top == NULL || top->node >= 0)
		node = rec_node(r, top ? top->node : -1, key, callee, lasti);
	if (node < 0)
		r->dropped++;
	r->stack[r->depth].node = node;
	r->stack[r->depth].frame = frame;
	r->stack[r->depth].hold = hold;
	r->stack[r->depth].ran = 0;
	r->stack[r->depth].suspends = frame != NULL &&
	    ((PyCodeObject *)callee)->co_flags & EVH_SUSPENDS;
	r->stack[r->depth].t0 = agent_now_ns();
	r->depth++;
}

/* The node's figures for one whole call that ran dt ns. */
static void
node_count(struct trec *r, int node, long long dt)
{
	struct tnode *n;

	if (node < 0)
		return;
	n = &r->nodes[node];
	n->count++;
	n->total += dt;
	if (n->min < 0 || dt < n->min)
		n->min = dt;
	if (dt > n->max)
		n->max = dt;
}

static void
rec_pop(struct trec *r)
{
	struct tframe *f;
	long long dt;

	if (r->extra > 0) {
		r->extra--;
		return;
	}
	if (r->depth == 0)
		return;
	f = &r->stack[--r->depth];
	dt = agent_now_ns() - f->t0 + f->ran;
	node_count(r, f->node, dt);
	if (r->depth == 0) {
		r->cost = dt;
		r->state = REC_DONE;
		rec_unhook(r);	/* nothing after the entry returned is ours */
	}
}

/*
 * The frame on top, ours, suspends at a yield: it waits in susp[] with the
 * time it ran so far, and resumes with rec_resume.  The entry's own frame
 * suspending pauses the recorder; from 3.12 the thread is unhooked then
 * (observe.py's PY_RESUME brings it back, see py_resume), before that the
 * hook stays and only watches for the entry's frame resuming.  False when
 * there is no room: the frame is then counted as a call that returned.
 */
static bool
rec_suspend(struct trec *r)
{
	struct tframe *f = &r->stack[r->depth - 1];

	if (r->nsusp == TRACE_SUSPENDED - (r->depth > 1))	/* room kept for the entry */
		return false;
	if (f->hold == NULL)	/* cannot keep it (a frame not a generator's) */
		return false;
	f->ran += agent_now_ns() - f->t0;
	Py_INCREF(f->hold);
	r->susp[r->nsusp++] = *f;
	if (--r->depth > 0)
		return true;
	r->state = REC_PAUSED;
#if PY_VERSION_HEX >= 0x030c0000
	/* The eval path stays: the resume comes through its evaluator, on
	 * whichever thread. */
	if (!r->eval)
		rec_unhook(r);
#endif
	return true;
}

/* A suspended frame of ours resumes: back on the stack, running again. */
static bool
rec_resume(struct trec *r, const void *frame)
{
	int i;

	for (i = 0; i < r->nsusp && r->susp[i].frame != frame; i++)
		;
	if (i == r->nsusp || r->depth == TRACE_STACK)
		return false;
	r->stack[r->depth] = r->susp[i];
	r->stack[r->depth].t0 = agent_now_ns();
	r->depth++;
	Py_DECREF(r->susp[i].hold);	/* running: its generator (or caller) holds it */
	r->susp[i] = r->susp[--r->nsusp];
	r->state = REC_RUN;
	return true;
}

/* The end: frames still suspended (the entry's, or generators it left
 * unfinished) count as calls that ran for the time they ran. */
static void
rec_finish(struct trec *r)
{
	r->extra = 0;
	while (r->depth > 0)
		rec_pop(r);
	while (r->nsusp > 0) {
		struct tframe *f = &r->susp[--r->nsusp];

		node_count(r, f->node, f->ran);
		if (f->frame == r->root)
			r->cost = f->ran;
		Py_DECREF(f->hold);
	}
	r->state = REC_DONE;
}

/* A C callable's identity across calls: bound builtins are new objects each time. */
static const void *
c_key(PyObject *fn)
{
	if (PyCFunction_Check(fn))
		return ((PyCFunctionObject *)fn)->m_ml;
	return fn;
}

static int
trace_event(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	struct trec *r = PyCapsule_GetPointer(obj, REC_NAME);

	if (r == NULL) {
		PyErr_Clear();
		return 0;
	}
	if (r->s->stopped || r->state == REC_DONE) {
		rec_unhook(r);
		return 0;
	}
	switch (what) {
	case PyTrace_CALL: {
		PyObject *code = frame_code(frame);

		if (r->state == REC_WAIT && code == r->entry) {
			r->state = REC_RUN;
			r->root = frame;
			rec_push(r, code, code, -1, frame, (PyObject *)frame);
		} else if (r->state == REC_PAUSED) {
			if (frame == r->root)
				rec_resume(r, frame);
		} else if (r->state == REC_RUN) {
			/* Resumed already by py_resume, or a generator of ours resuming. */
			if (r->extra == 0 && (r->stack[r->depth - 1].frame == frame ||
			    rec_resume(r, frame)))
				break;
			struct tframe *top = &r->stack[r->depth - 1];
			int lasti = r->extra == 0 && top->frame != NULL ?
			    frame_lasti((PyFrameObject *)top->frame) : -1;

			rec_push(r, code, code, lasti, frame, (PyObject *)frame);
		}
		break;
	}
	case PyTrace_C_CALL:
		if (r->state == REC_RUN && arg != NULL)
			rec_push(r, c_key(arg), arg, frame != NULL ? frame_lasti(frame) : -1, NULL,
			    NULL);
		break;
	case PyTrace_RETURN:
	case PyTrace_C_RETURN:
	case PyTrace_C_EXCEPTION:
		/* Only what we pushed: when hooked from inside the entry (an
		 * observer called at its start), the observer's own frames and
		 * C calls return first, and they are not ours. */
		if (r->state != REC_RUN)
			break;
		if (r->extra > 0)
			rec_pop(r);
		else if (r->stack[r->depth - 1].frame == (what == PyTrace_RETURN ? frame : NULL) &&
		    !(r->stack[r->depth - 1].suspends && frame_yielding(frame) && rec_suspend(r)))
			rec_pop(r);
		break;
	default:
		break;
	}
	return 0;
}

/* ---- the eval path (3.10+, evalhook.c) ------------------------------------- */

/* The recorder frame f belongs to on thread ts: the thread's own, or a
 * waiting one whose entry (a generator or coroutine) f resumes, on any
 * thread. */
static struct trec *
ev_find(PyThreadState *ts, const void *f)
{
	int i;

	for (i = 0; i < ev_top; i++) {
		struct trec *r = ev_slot[i];

		if (r == NULL)
			continue;
		if (r->state == REC_PAUSED ? r->root == f : r->ts == ts)
			return r;
	}
	return NULL;
}

/* Is f one of ours that waits at a yield (then it resumes)? */
static bool
ev_suspended_here(struct trec *r, const void *f)
{
	int i;

	for (i = 0; i < r->nsusp; i++)
		if (r->susp[i].frame == f)
			return true;
	return false;
}

/*
 * One Python frame evaluated on a thread that has a recorder (evh_eval
 * sends only those): the frame is pushed (or, a generator of ours, resumed)
 * before the interpreter runs it and popped (or suspended) after, so the
 * calls nest as the C stack does; its caller is the thread's current frame
 * at entry, the call site that frame's instruction.  Nothing here touches
 * the frame's result or the exception it raised.
 */
PyObject *
agent_trace_eval(PyThreadState *ts, evh_frame *f, int throwflag)
{
	struct trec *r = ev_find(ts, f);
	PyObject *code, *res;
	bool ours = false, gen;

	/* Frames of a trace or monitoring callback (3.12+: observe.py's
	 * PY_RETURN handler runs inside the entry) are not the program's: the
	 * profile hook does not see them either. */
	if (r == NULL || ts->tracing > 0)
		return evh_default(ts, f, throwflag);
	if (r->s->stopped) {
		rec_unhook(r);
		return evh_default(ts, f, throwflag);
	}
	code = evh_code(f);
	switch (r->state) {
	case REC_WAIT:	/* between _fp_trace_begin and the entry's first run */
		if (code == r->entry && !evh_creating(f)) {
			r->state = REC_RUN;
			r->root = f;
			rec_push(r, code, code, -1, f, evh_holder(f));
			ours = true;
		}
		break;
	case REC_PAUSED:	/* ev_find: f is the entry's frame, resuming */
		r->ts = ts;
		ours = rec_resume(r, f);
		break;
	case REC_RUN:
		if (r->extra == 0 && r->nsusp > 0 && ev_suspended_here(r, f))
			ours = rec_resume(r, f);
		else if (!evh_creating(f)) {
			rec_push(r, code, code, r->extra == 0 ? evh_caller_lasti(ts) : -1, f,
			    evh_holder(f));
			ours = true;
		}
		break;
	default:
		break;
	}
	if (!ours)
		return evh_default(ts, f, throwflag);
	/* The capsule may be freed meanwhile (3.12+ finish the recorder from
	 * inside the entry, at its PY_RETURN, and may drop it). */
	Py_INCREF(r->self);
	gen = ((PyCodeObject *)code)->co_flags & EVH_SUSPENDS;
	res = evh_default(ts, f, throwflag);
	/* Ended (the entry returned, a stop, _fp_trace_end) while f ran:
	 * nothing of f is left to close. */
	if (r->hooked && r->state == REC_RUN) {
		if (r->extra > 0)
			rec_pop(r);
		else if (r->depth > 0 && r->stack[r->depth - 1].frame == f &&
		    !(gen && evh_suspended(f) && rec_suspend(r)))
			rec_pop(r);
	}
	Py_DECREF(r->self);
	return res;
}

static void
rec_free(PyObject *cap)
{
	struct trec *r = PyCapsule_GetPointer(cap, REC_NAME);
	int i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nnodes; i++)
		Py_DECREF(r->nodes[i].callee);
	for (i = 0; i < r->nsusp; i++)
		Py_DECREF(r->susp[i].hold);
	free(r->nodes);
	Py_XDECREF(r->session);
	Py_XDECREF(r->entry);
	free(r);
}

static void
session_free(PyObject *cap)
{
	free(PyCapsule_GetPointer(cap, SESSION_NAME));
}

/* _fp_trace_session(max_depth, c_calls) -> (session, mechanism, note):
 * mechanism "eval" or "profile", note why the profile hook when it was
 * not asked for (None otherwise). */
static PyObject *
py_session(PyObject *self, PyObject *args)
{
	struct tsession *s;
	PyObject *cap;
	const char *note = NULL;
	int max_depth, c_calls;

	(void)self;
	if (!PyArg_ParseTuple(args, "ip", &max_depth, &c_calls))
		return NULL;
	if ((s = calloc(1, sizeof *s)) == NULL)
		return PyErr_NoMemory();
	s->max_depth = max_depth;
	/* Which mechanism records by default (measured, see README's "make
	 * bench-trace"): the eval path on 3.10+, where a profile hook costs
	 * 2.4x (3.11: every instruction through the tracing path,
	 * unspecialized), 1.3x (3.10) or 1.1-1.2x (3.12, 3.13: sys.monitoring
	 * shims) on a call of 1,000 small Python calls and the evaluator
	 * 1.00-1.08x; the profile hook on 3.8 and 3.9 (no eval path there). */
	if (!c_calls && evh_supported()) {
		s->eval = evh_state() != EVH_FOREIGN;
		if (!s->eval)
			note = "another tool's frame evaluator (PEP 523) is installed";
	}
	if ((cap = PyCapsule_New(s, SESSION_NAME, session_free)) == NULL) {
		free(s);
		return NULL;
	}
	return Py_BuildValue("(Nsz)", cap, s->eval ? "eval" : "profile", note);
}

/* Is the entry's frame already running (an observer called at its start)? */
static PyFrameObject *
running_entry(PyObject *code)
{
	PyFrameObject *f = PyEval_GetFrame();
	int i;

	for (i = 0; f != NULL && i < 4; i++, f = frame_back(f))
		if (frame_code(f) == code)
			return f;
	return NULL;
}

/* _fp_trace_begin(session, code): hook this thread until the call of code returns. */
static PyObject *
py_begin(PyObject *self, PyObject *args)
{
	PyObject *scap, *code, *cap;
	PyThreadState *ts = PyThreadState_Get();
	PyFrameObject *in;
	evh_frame *ef;
	struct tsession *s;
	struct trec *r;

	(void)self;
	if (!PyArg_ParseTuple(args, "OO!", &scap, &PyCode_Type, &code) ||
	    (s = PyCapsule_GetPointer(scap, SESSION_NAME)) == NULL)
		return NULL;
	/* Another profiler, or this very trace one level up (recursion). */
	if (s->stopped || ts->c_profilefunc != NULL || ev_of_thread(ts) != NULL)
		Py_RETURN_NONE;
	if ((r = calloc(1, sizeof *r)) == NULL)
		return PyErr_NoMemory();
	if ((cap = PyCapsule_New(r, REC_NAME, rec_free)) == NULL) {
		free(r);
		return NULL;
	}
	r->self = cap;
	r->s = s;
	r->session = scap;
	Py_INCREF(scap);
	r->entry = code;
	Py_INCREF(code);
	/* The eval path, when the evaluator is ours or can be, and the entry
	 * is not a generator or coroutine already running (3.12+: hooked from
	 * inside its first run, whose yield the evaluator would not see). */
	if (s->eval && ((ef = evh_running(ts, code)) == NULL ||
	    !(((PyCodeObject *)code)->co_flags & EVH_SUSPENDS))) {
		r->eval = true;
		r->hooked = true;
		r->ts = ts;
		if (ev_register(r)) {
			if (ef != NULL) {
				r->state = REC_RUN;
				r->root = ef;
				rec_push(r, code, code, -1, ef, NULL);
			}
			return cap;
		}
		r->eval = false;	/* another evaluator came meanwhile: the profile hook */
		r->hooked = false;
	}
	if ((in = running_entry(code)) != NULL) {
		r->state = REC_RUN;
		r->root = in;
		rec_push(r, code, code, -1, in, (PyObject *)in);
	}
	r->hooked = true;
	r->ts = ts;
	PyEval_SetProfile(trace_event, cap);
	if (PyErr_Occurred()) {	/* an audit hook refused sys.setprofile */
		PyErr_Clear();
		r->hooked = false;
		Py_DECREF(cap);
		Py_RETURN_NONE;
	}
	return cap;
}

/* _fp_trace_end(recorder): unhook; the entry's cost in ns, None if not seen whole. */
static PyObject *
py_end(PyObject *self, PyObject *cap)
{
	struct trec *r = PyCapsule_GetPointer(cap, REC_NAME);

	(void)self;
	if (r == NULL)
		return NULL;
	rec_unhook(r);
	/* Cut short by a stop, or a generator's end seen here first: close
	 * what is open. */
	if (r->state == REC_RUN || r->state == REC_PAUSED)
		rec_finish(r);
	if (r->state != REC_DONE) {	/* never seen: nothing to record any more */
		r->state = REC_DONE;
		Py_RETURN_NONE;
	}
	return PyLong_FromLongLong(r->cost);
}

/* _fp_trace_resume(recorder): the entry, a generator or coroutine, resumes
 * (3.12+: its PY_RESUME event, on the thread that resumes it). */
static PyObject *
py_resume(PyObject *self, PyObject *cap)
{
	struct trec *r = PyCapsule_GetPointer(cap, REC_NAME);
	PyThreadState *ts = PyThreadState_Get();

	(void)self;
	if (r == NULL)
		return NULL;
	if (r->eval || r->state != REC_PAUSED || r->hooked || r->s->stopped ||
	    ts->c_profilefunc != NULL)
		Py_RETURN_NONE;
	r->hooked = true;
	r->ts = ts;
	PyEval_SetProfile(trace_event, cap);
	if (PyErr_Occurred()) {
		PyErr_Clear();
		r->hooked = false;
		Py_RETURN_NONE;
	}
	rec_resume(r, r->root);
	Py_RETURN_NONE;
}

/* _fp_trace_stop(session) */
static PyObject *
py_stop(PyObject *self, PyObject *scap)
{
	struct tsession *s = PyCapsule_GetPointer(scap, SESSION_NAME);
	int i;

	(void)self;
	if (s == NULL)
		return NULL;
	s->stopped = 1;
	/* The eval path's recorders of it leave at once, and with the last one
	 * the evaluator: a stop from the worker (the end of the trace, reset,
	 * a disconnect, a fork's child) must not wait for their threads. */
	for (i = 0; i < ev_top; i++)
		if (ev_slot[i] != NULL && ev_slot[i]->s == s)
			rec_unhook(ev_slot[i]);
	Py_RETURN_NONE;
}

static PyMethodDef trace_defs[] = {
	{ "_fp_trace_session", py_session, METH_VARARGS, "a trace session" },
	{ "_fp_trace_begin", py_begin, METH_VARARGS, "hook this thread for one call" },
	{ "_fp_trace_end", py_end, METH_O, "unhook; the call's cost" },
	{ "_fp_trace_stop", py_stop, METH_O, "stop every recorder of a session" },
	{ "_fp_trace_resume", py_resume, METH_O, "the traced generator resumes" },
};

bool
agent_trace_export(PyObject *ns)
{
	return agent_export_defs(ns, trace_defs, sizeof trace_defs / sizeof trace_defs[0]);
}

bool
agent_trace_is_recorder(PyObject *obj)
{
	return PyCapsule_IsValid(obj, REC_NAME);
}

/* ---- the tree as JSON (the worker) -------------------------------------------- */

static json_t *
attr_text(PyObject *obj, const char *name)
{
	PyObject *v = PyObject_GetAttrString(obj, name);
	json_t *j = NULL;

	if (v != NULL && PyUnicode_Check(v))
		j = fmt_str(v, 200, NULL);
	Py_XDECREF(v);
	PyErr_Clear();
	return j;
}

static bool
is_import_code(PyObject *callee)
{
	const char *file;

	if (!PyCode_Check(callee) || !PyUnicode_Check(((PyCodeObject *)callee)->co_filename))
		return false;
	file = PyUnicode_AsUTF8(((PyCodeObject *)callee)->co_filename);
	PyErr_Clear();
	return file != NULL && strncmp(file, "<frozen importlib", 17) == 0;
}

/* name, file and definition line of the callee. */
static void
callee_json(json_t *o, PyObject *callee)
{
	json_t *name, *mod;

	if (PyCode_Check(callee)) {
		PyCodeObject *c = (PyCodeObject *)callee;

		name = attr_text(callee, "co_qualname");	/* 3.11+ */
		json_object_set_new(o, "name", name ? name : fmt_str(c->co_name, 200, NULL));
		json_object_set_new(o, "file", fmt_str(c->co_filename, 400, NULL));
		json_object_set_new(o, "def_line", json_integer(c->co_firstlineno));
		return;
	}
	name = attr_text(callee, "__qualname__");
	if (name == NULL)
		name = attr_text(callee, "__name__");
	mod = attr_text(callee, "__module__");
	if (name != NULL && mod != NULL && strcmp(json_string_value(mod), "builtins") != 0) {
		char *full = NULL;

		if (asprintf(&full, "%s.%s", json_string_value(mod), json_string_value(name)) > 0) {
			json_decref(name);
			name = json_string(full);
		}
		free(full);
	}
	json_decref(mod);
	json_object_set_new(o, "name", name ? name : json_string(Py_TYPE(callee)->tp_name));
	json_object_set_new(o, "c", json_true());
}

static json_t *
node_json(struct trec *r, int i, int level, long long interval_ns, int max_depth)
{
	struct tnode *n = &r->nodes[i];
	json_t *o = json_object(), *kids = json_array();
	long long hidden = 0, hidden_ns = 0;
	int k;

	callee_json(o, n->callee);
	if (n->parent >= 0 && n->lasti >= 0 && PyCode_Check(r->nodes[n->parent].callee))
		json_object_set_new(o, "line", json_integer(PyCode_Addr2Line(
		    (PyCodeObject *)r->nodes[n->parent].callee, n->lasti)));
	json_object_set_new(o, "count", json_integer(n->count));
	json_object_set_new(o, "total_ns", json_integer(n->total));
	json_object_set_new(o, "min_ns", json_integer(n->min < 0 ? 0 : n->min));
	json_object_set_new(o, "max_ns", json_integer(n->max));
	for (k = n->child; k >= 0; k = r->nodes[k].next) {
		struct tnode *c = &r->nodes[k];

		if (c->total < interval_ns || is_import_code(c->callee) ||
		    (max_depth > 0 && level >= max_depth)) {
			hidden += c->count;
			hidden_ns += c->total;
			continue;
		}
		json_array_append_new(kids, node_json(r, k, level + 1, interval_ns, max_depth));
	}
	json_object_set_new(o, "children", kids);
	if (hidden > 0) {
		json_object_set_new(o, "hidden", json_integer(hidden));
		json_object_set_new(o, "hidden_ns", json_integer(hidden_ns));
	}
	return o;
}

json_t *
agent_trace_tree(PyObject *recorder, long long interval_ns, int max_depth)
{
	struct trec *r = PyCapsule_GetPointer(recorder, REC_NAME);
	json_t *t;

	if (r == NULL) {
		PyErr_Clear();
		return json_null();
	}
	if (r->nnodes == 0)
		return json_null();
	t = node_json(r, 0, 0, interval_ns, max_depth);
	if (r->dropped > 0)
		json_object_set_new(t, "unrecorded", json_integer(r->dropped));
	return t;
}
