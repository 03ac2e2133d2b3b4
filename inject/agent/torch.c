/*
 * torch — see torch.h.  The C side only loads the helper, gives it what
 * Python cannot reach (the request's cancel flag and events, malloc's
 * counters) and turns its answer into the end of the request.
 */
#include "config.h"

#include "inject/agent/torch.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/protocol.h"
#include "inject/agent/pyagent.h"
#include "torchhelper_py.h"	/* generated from torchhelper.py: torchhelper_py_source */

static PyObject *torchhelper;	/* its namespace */

/*
 * _fp_heap_in_use(): malloc's bytes in use, all arenas and mmapped chunks
 * (torch's CPU allocator allocates through malloc); -1 without mallinfo2
 * (glibc before 2.33).
 */
static PyObject *
py_heap_in_use(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	struct mallinfo2 mi = mallinfo2();

	return PyLong_FromSize_t(mi.uordblks + mi.hblkhd);
#else
	return PyLong_FromLong(-1);
#endif
}

/*
 * _fp_instances(type): every object the collector tracks whose type is
 * type or a subclass.  In C and without a release of the GIL between
 * gc.get_objects() and dropping its list: a list made in Python would hold
 * every tensor of the program while the program runs on (freeing a tensor
 * whose Python object we still hold makes torch warn on its stderr).
 */
static PyObject *
py_instances(PyObject *self, PyObject *type)
{
	PyObject *gc, *all, *found;
	Py_ssize_t i;

	(void)self;
	if (!PyType_Check(type)) {
		PyErr_SetString(PyExc_TypeError, "_fp_instances needs a type");
		return NULL;
	}
	if ((gc = PyImport_ImportModule("gc")) == NULL)
		return NULL;
	all = PyObject_CallMethod(gc, "get_objects", NULL);
	Py_DECREF(gc);
	if (all == NULL || (found = PyList_New(0)) == NULL) {
		Py_XDECREF(all);
		return NULL;
	}
	for (i = 0; PyList_Check(all) && i < PyList_GET_SIZE(all); i++) {
		PyObject *o = PyList_GET_ITEM(all, i);

		if (PyObject_TypeCheck(o, (PyTypeObject *)type) && PyList_Append(found, o) != 0) {
			Py_CLEAR(found);
			break;
		}
	}
	Py_DECREF(all);
	return found;
}

static PyMethodDef instances_def = { "_fp_instances", py_instances, METH_O,
    "the tracked instances of a type" };

static PyMethodDef heap_def = { "_fp_heap_in_use", py_heap_in_use, METH_NOARGS,
    "malloc's bytes in use" };

static PyObject *
py_cancelled(PyObject *self, PyObject *unused)
{
	struct agent_job *job = PyCapsule_GetPointer(self, "fp.torch");

	(void)unused;
	return job ? PyBool_FromLong(agent_job_is_cancelled(job)) : NULL;
}

/* event(dict): one event of the request (what it waits for). */
static PyObject *
py_event(PyObject *self, PyObject *args)
{
	struct agent_job *job = PyCapsule_GetPointer(self, "fp.torch");
	PyObject *d;

	if (job == NULL || !PyArg_ParseTuple(args, "O!", &PyDict_Type, &d))
		return NULL;
	agent_send(job->conn, proto_new_event(job->id, fmt_plain(d)));
	Py_RETURN_NONE;
}

static PyMethodDef cancelled_def = { "_fp_cancelled", py_cancelled, METH_NOARGS,
    "is the request cancelled" };
static PyMethodDef event_def = { "_fp_event", py_event, METH_VARARGS, "send an event" };

static bool
torchhelper_ready(char **why)
{
	PyObject *heap, *inst;

	if (torchhelper != NULL)
		return true;
	torchhelper = agent_py_namespace(torchhelper_py_source, "_flight_profiler_torch", why);
	if (torchhelper == NULL)
		return false;
	heap = PyCFunction_New(&heap_def, NULL);
	inst = PyCFunction_New(&instances_def, NULL);
	if (heap == NULL || inst == NULL || agent_py_helper() == NULL ||
	    PyDict_SetItemString(torchhelper, "_fp_instances", inst) != 0 ||
	    PyDict_SetItemString(torchhelper, "_helper", agent_py_helper()) != 0 ||
	    PyDict_SetItemString(torchhelper, "_fp_heap_in_use", heap) != 0) {
		*why = PyErr_Occurred() ? fmt_exception() : strdup("the agent's helper is not loaded");
		Py_XDECREF(heap);
		Py_XDECREF(inst);
		Py_CLEAR(torchhelper);
		return false;
	}
	Py_DECREF(heap);
	Py_DECREF(inst);
	return true;
}

/*
 * run(action, spec_json, key, cancelled, event) in torchhelper.py, as plain
 * JSON; then cleanup(key), as watch does: an interrupt (a cancel, a client
 * gone) that landed in run's own cleanup must not leave a hook behind.
 */
static json_t *
call_run(struct agent_job *job, const char *action, char **why)
{
	PyObject *cap, *can = NULL, *ev = NULL, *args = NULL;
	char *spec = json_dumps(job->args, JSON_COMPACT), *late = NULL;
	json_t *r = NULL;

	if ((cap = PyCapsule_New(job, "fp.torch", NULL)) != NULL &&
	    (can = PyCFunction_New(&cancelled_def, cap)) != NULL &&
	    (ev = PyCFunction_New(&event_def, cap)) != NULL && spec != NULL)
		args = Py_BuildValue("(ss(KK)OO)", action, spec, (unsigned long long)job->conn,
		    (unsigned long long)job->id, can, ev);
	if (args != NULL)
		r = agent_py_call_plain(torchhelper, "run", args, why);
	else
		*why = PyErr_Occurred() ? fmt_exception() : strdup("out of memory");
	json_decref(agent_py_call_plain(torchhelper, "cleanup", Py_BuildValue("((KK))",
	    (unsigned long long)job->conn, (unsigned long long)job->id), &late));
	free(late);
	Py_XDECREF(ev);
	Py_XDECREF(can);
	Py_XDECREF(cap);
	free(spec);
	return r;
}

json_t *
agent_torch_run(struct agent_job *job)
{
	const char *action = json_string_value(json_object_get(job->args, "action"));
	json_t *data, *end;
	char *why = NULL;

	if (action == NULL)
		return proto_new_end_error(job->id, "usage", "torch: the action is profile, memory "
		    "or modules");
	if (!torchhelper_ready(&why) || (data = call_run(job, action, &why)) == NULL) {
		end = proto_new_end_error(job->id, "internal", why ? why : "torch helper failed");
		free(why);
		return end;
	}
	if (json_is_string(json_object_get(data, "error"))) {
		end = proto_new_end_error(job->id, "failed",
		    json_string_value(json_object_get(data, "error")));
		json_decref(data);
		return end;
	}
	return proto_new_end_ok(job->id, data);
}
