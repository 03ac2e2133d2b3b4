/*
 * forkhooks — keep the agent's threads out of the program's fork().
 *
 * CPython 3.12+ warns on stderr ("This process ... is multi-threaded, use
 * of fork() may lead to deadlocks in the child") when os.fork() finds more
 * than one thread in the process, counted from /proc/self/stat on Linux.
 * A single-threaded program we attached to must not get that warning on
 * our account, so the agent registers with os.register_at_fork(): `before`
 * stops our threads (agent_park), `after_in_parent` starts them again with
 * the same socket and connections (agent_resume).  server.c's
 * pthread_atfork handler closes our descriptors in the child for every
 * fork(), os.fork() or not, and leaves the agent dormant; `after_in_child`
 * removes the hooks of every watch, trace, tt and monitor there (their
 * clients are the parent's: nothing would ever read what they queue, and
 * the child's calls would pay for them for good).  A fork() from C runs no
 * Python hook: its child keeps them.
 *
 * When the threads are counted (Modules/posixmodule.c, os_fork_impl):
 * 3.12 warns before PyOS_AfterFork_Parent() runs the after_in_parent hooks;
 * 3.13 and 3.14 count after them (gh-137109, fixed in later patch
 * releases).  From 3.13 on, a fork() by the main thread therefore resumes
 * us from a pending call, once the frame that called fork() runs again,
 * past the count.  A fork() by another thread resumes at once: the process
 * has two threads of its own then, and the warning is the program's.
 *
 * Must never: raise from a hook, release the GIL in one, or resume in a
 * child (agent_resume checks the pid).
 */
#include "config.h"

#include "inject/agent/pyagent.h"

#include <stdatomic.h>
#include <unistd.h>

#include "inject/agent/agent.h"
#include "inject/agent/jobs.h"

#define RESUME_TRIES 10000	/* pending calls before resuming regardless */

static atomic_bool installed;	/* inherited by a forked child, as the hooks are */

static PyObject *
before_fork(PyObject *self, PyObject *unused)
{
	agent_park();
	Py_RETURN_NONE;
}

#if PY_VERSION_HEX >= 0x030D0000
static const void *fork_frame;	/* identity only: the frame that called fork() */
static int resume_tries;

/*
 * On the main thread, at an eval-breaker check.  Another after_in_parent
 * hook written in Python may be running (its frame is on top): wait until
 * the caller of fork() itself runs again.
 */
static int
resume_pending(void *unused)
{
	if ((const void *)PyEval_GetFrame() != fork_frame && ++resume_tries < RESUME_TRIES &&
	    Py_AddPendingCall(resume_pending, NULL) == 0)
		return 0;
	fork_frame = NULL;
	agent_resume();
	return 0;
}
#endif

static PyObject *
after_fork_parent(PyObject *self, PyObject *unused)
{
#if PY_VERSION_HEX >= 0x030D0000
	if (jobs_gettid() == getpid() && (fork_frame = PyEval_GetFrame()) != NULL) {
		resume_tries = 0;
		if (Py_AddPendingCall(resume_pending, NULL) == 0)
			Py_RETURN_NONE;
	}
#endif
	agent_resume();
	Py_RETURN_NONE;
}

static PyObject *
after_fork_child(PyObject *self, PyObject *unused)
{
	agent_py_child_reset();
	Py_RETURN_NONE;
}

static PyMethodDef before_def = {
	"_fp_before_fork", before_fork, METH_NOARGS, "park the flight_profiler agent",
};
static PyMethodDef after_def = {
	"_fp_after_fork_parent", after_fork_parent, METH_NOARGS, "resume the flight_profiler agent",
};
static PyMethodDef child_def = {
	"_fp_after_fork_child", after_fork_child, METH_NOARGS, "drop flight_profiler's hooks",
};

void
agent_py_install_fork_hooks(void)
{
	PyObject *os, *reg = NULL, *args = NULL, *kw = NULL, *r = NULL;
	PyGILState_STATE g;

	if (atomic_load(&installed) || !agent_py_ready())
		return;
	g = PyGILState_Ensure();	/* nests when the caller holds it */
	if (!atomic_load(&installed) && (os = PyImport_ImportModule("os")) != NULL) {
		reg = PyObject_GetAttrString(os, "register_at_fork");
		args = PyTuple_New(0);
		kw = Py_BuildValue("{s:N,s:N,s:N}", "before", PyCFunction_New(&before_def, NULL),
		    "after_in_parent", PyCFunction_New(&after_def, NULL),
		    "after_in_child", PyCFunction_New(&child_def, NULL));
		if (reg != NULL && args != NULL && kw != NULL)
			r = PyObject_Call(reg, args, kw);
		atomic_store(&installed, r != NULL);
		Py_XDECREF(r);
		Py_XDECREF(kw);
		Py_XDECREF(args);
		Py_XDECREF(reg);
		Py_DECREF(os);
	}
	PyErr_Clear();
	PyGILState_Release(g);
}
