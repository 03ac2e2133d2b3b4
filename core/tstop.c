#include "config.h"

#include "core/tstop.h"

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/procfs.h"
#include "core/tresume.h"
#include "core/util.h"

/*
 * The registry.  Fixed size and lock-free so that a signal handler can walk
 * it while the code it interrupted is changing it: a slot is claimed by a
 * compare-and-swap of its tid, and a handler that finds a half-filled slot
 * only tries a detach, which fails harmlessly if there is nothing to detach.
 * 4096 covers --block on any Python process we expect to meet.
 */
#define TSTOP_MAX 4096

enum slot_state {
	SLOT_SEIZING = 0,	/* seized or about to be, stop not seen yet */
	SLOT_STOPPED,		/* in a ptrace-stop: detach with `sig` */
	SLOT_PENDING,		/* gave up waiting: detach as soon as it stops */
	SLOT_OWNED,		/* held by a tstop_seize() caller, who lets it go */
};

struct slot {
	volatile sig_atomic_t tid;	/* 0 when free */
	volatile sig_atomic_t state;
	volatile sig_atomic_t sig;	/* signal to hand back at detach */
	uint64_t stopped_ns;	/* when the stop was seen, for FP_STOP_STATS */
};

static struct slot slots[TSTOP_MAX];
static volatile sig_atomic_t nslots;	/* high-water mark of used slots */

/* What tstop_release_all() calls first: the owner of SLOT_OWNED slots. */
static void (*volatile owner_rescue)(void);

enum release_result {
	RELEASED,		/* detached, still alive */
	GONE,			/* it exited: nothing to detach */
	STILL_RUNNING,		/* not stopped yet; now SLOT_PENDING */
};

static struct slot *
slot_find(pid_t tid)
{
	int i, n = nslots;

	for (i = 0; i < n; i++)
		if (slots[i].tid == tid)
			return &slots[i];
	return NULL;
}

static struct slot *
slot_claim(pid_t tid)
{
	int i, hwm;

	for (i = 0; i < TSTOP_MAX; i++) {
		sig_atomic_t zero = 0;

		if (slots[i].tid != 0 || !__atomic_compare_exchange_n(&slots[i].tid,
		    &zero, tid, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			continue;
		slots[i].state = SLOT_SEIZING;
		slots[i].sig = 0;
		slots[i].stopped_ns = 0;
		while ((hwm = nslots) <= i)
			(void)__atomic_compare_exchange_n(&nslots, &hwm, i + 1,
			    false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		return &slots[i];
	}
	return NULL;
}

static void
slot_free(struct slot *s)
{
	s->state = SLOT_SEIZING;
	s->sig = 0;
	__atomic_store_n(&s->tid, 0, __ATOMIC_SEQ_CST);
}

static pid_t
wait_nohang(pid_t tid, int *status)
{
	pid_t r;

	do
		r = waitpid(tid, status, __WALL | WNOHANG);
	while (r == -1 && errno == EINTR);
	return r;
}

/*
 * Sleep a little between two looks.  A thread usually stops within tens
 * of microseconds, and it is held from then on whether we look or not
 * (signals that come meanwhile wait, and two of a kind merge): yield a few
 * times, then look every 50 us for ~100 ms, which covers every stop and
 * every call an injection makes, and only then every 1 ms.
 */
static void
backoff(unsigned *spins)
{
	struct timespec nap = { 0, 0 };

	if ((*spins)++ < 20) {
		sched_yield();
		return;
	}
	nap.tv_nsec = *spins < 2000 ? 50000 : 1000000;
	nanosleep(&nap, NULL);
}

pid_t
tstop_wait(pid_t tid, int *status, uint64_t deadline_ns)
{
	unsigned spins = 0;
	pid_t r;

	for (;;) {
		if ((r = wait_nohang(tid, status)) != 0)
			return r;
		if (now_ns() >= deadline_ns)
			return 0;
		backoff(&spins);
	}
}

/*
 * Detach the thread of slot `s` and free the slot, unless the thread has
 * not reached a ptrace-stop yet: a running tracee cannot be detached, so the
 * slot is kept as SLOT_PENDING for the next sweep.  Only async-signal-safe
 * calls (ptrace and waitpid are plain system calls).
 */
static enum release_result
slot_release(struct slot *s)
{
	pid_t tid = s->tid, r;
	int status, sig;

	if (tid == 0)
		return GONE;
	sig = s->state == SLOT_STOPPED ? s->sig : 0;
	tresume_fix_syscall(tid, tid);	/* nothing if it is not stopped */
	if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig) == 0)
		goto released;
	if (errno != ESRCH &&
	    ptrace(PTRACE_DETACH, tid, NULL, (void *)0L) == 0)
		goto released;

	/* Not in a ptrace-stop (still on its way to one, or dying). */
	r = wait_nohang(tid, &status);
	if (r == 0) {
		s->state = SLOT_PENDING;
		return STILL_RUNNING;
	}
	if (r == -1 || WIFEXITED(status) || WIFSIGNALED(status)) {
		slot_free(s);
		return GONE;
	}
	/* It has just stopped; a signal-delivery-stop keeps its signal. */
	sig = (status >> 16) == 0 ? WSTOPSIG(status) : 0;
	tresume_fix_syscall(tid, tid);
	if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig) == -1) {
		slot_free(s);
		return GONE;
	}
released:
	slot_free(s);
	return RELEASED;
}

/* Let go of threads that were still running when we gave up on them. */
static void
sweep_pending(void)
{
	int i, n = nslots;

	for (i = 0; i < n; i++)
		if (slots[i].tid != 0 && slots[i].state == SLOT_PENDING)
			(void)slot_release(&slots[i]);
}

/* The state letter of /proc/<tid>/stat, or 0. */
static char
thread_state(pid_t tid)
{
	char path[64], *text, *p, state = 0;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)tid);
	if ((text = read_file_str(path, NULL)) == NULL)
		return 0;
	if ((p = strrchr(text, ')')) != NULL && p[1] == ' ')
		state = p[2];
	free(text);
	return state;
}

/* The process (thread group) of a thread, or the tid itself if unknown. */
static pid_t
thread_tgid(pid_t tid)
{
	char path[64], *text, *p;
	pid_t tgid = tid;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if ((text = read_file_str(path, NULL)) == NULL)
		return tid;
	if ((p = strstr(text, "\nTgid:")) != NULL)
		tgid = (pid_t)strtol(p + 6, NULL, 10);
	free(text);
	return tgid > 0 ? tgid : tid;
}

static const char *
stop_signal_name(int sig)
{
	switch (sig) {
	case SIGSTOP:
		return "SIGSTOP";
	case SIGTSTP:
		return "SIGTSTP";
	case SIGTTIN:
		return "SIGTTIN";
	case SIGTTOU:
		return "SIGTTOU";
	}
	return "a stop signal";
}

static int
seize_error(pid_t pid, pid_t tid, int e, char **cause)
{
	char state, *why;
	pid_t tracer;
	int rc;

	if (e == ESRCH)
		return fail(cause, FP_EEXITED,
		    "thread %d does not exist (it has exited)", (int)tid);
	if (e != EPERM)
		return fail(cause, FP_ERR, "cannot stop thread %d: "
		    "ptrace(PTRACE_SEIZE): %s", (int)tid, strerror(e));

	state = thread_state(tid);
	if (state == 0 && !procfs_exists(tid))
		return fail(cause, FP_EEXITED,
		    "thread %d does not exist (it has exited)", (int)tid);
	if (state == 'Z' || state == 'X')
		return fail(cause, FP_EEXITED, "thread %d has exited", (int)tid);
	if (pid == getpid())
		return fail(cause, FP_ERR,
		    "thread %d belongs to flight_profiler itself", (int)tid);
	tracer = procfs_tracer(tid);
	if (tracer == getpid())
		return fail(cause, FP_ERR, "cannot stop thread %d: flight_profiler "
		    "already traces it outside tstop", (int)tid);
	if (tracer > 0)
		return fail(cause, FP_EPERM, "cannot stop thread %d: it is already "
		    "traced by process %d (a debugger or another profiler); a "
		    "thread can have only one tracer, detach that one first",
		    (int)tid, (int)tracer);
	why = procfs_explain_eperm(pid);
	rc = fail(cause, FP_EPERM, "cannot stop thread %d: permission denied (%s)",
	    (int)tid, why);
	free(why);
	return rc;
}

/*
 * Register `tid` in a slot of `state`, seize it and interrupt it: 0 with
 * *sp its slot, the stop on its way; an enum fp_status otherwise, with
 * nothing left seized.  `pid` is its process, 0 if not known yet.
 */
static int
seize(pid_t pid, pid_t tid, int state, struct slot **sp, char **cause)
{
	struct slot *s;
	int e;

	sweep_pending();
	if (tid <= 0)
		return fail(cause, FP_ERR, "invalid thread id %d", (int)tid);
	if ((s = slot_find(tid)) != NULL && s->state == SLOT_PENDING)
		return fail(cause, FP_ERR, "thread %d has still not reached the "
		    "stop asked for earlier (state %c); try again later", (int)tid,
		    thread_state(tid) ? thread_state(tid) : '?');
	if (s != NULL)
		return fail(cause, FP_ERR, "thread %d is already stopped by us",
		    (int)tid);
	if ((s = slot_claim(tid)) == NULL)
		return fail(cause, FP_ERR, "cannot stop thread %d: %d threads "
		    "are stopped already", (int)tid, TSTOP_MAX);
	s->state = state;

	/* Registered before seizing: a signal handler must see it. */
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) == -1) {
		e = errno;
		slot_free(s);
		return seize_error(pid > 0 ? pid : thread_tgid(tid), tid, e, cause);
	}
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) == -1) {
		e = errno;
		if (slot_release(s) != RELEASED || e == ESRCH)
			return fail(cause, FP_EEXITED, "thread %d exited", (int)tid);
		return fail(cause, FP_ERR, "cannot stop thread %d: "
		    "ptrace(PTRACE_INTERRUPT): %s", (int)tid, strerror(e));
	}
	*sp = s;
	return FP_OK;
}

/*
 * The stop did not come in time: detach the thread if it has stopped
 * meanwhile, or leave its slot to the sweeps to let it go when it does.
 */
static int
timed_out(struct slot *s, pid_t tid, int timeout_ms, char **cause)
{
	char state = thread_state(tid);

	if (slot_release(s) != STILL_RUNNING)
		return fail(cause, FP_ERR, "thread %d did not stop within "
		    "%d ms; it was left running", (int)tid, timeout_ms);
	return fail(cause, FP_ERR, "thread %d did not stop within %d ms "
	    "(state %c%s); it will be let go as soon as it stops",
	    (int)tid, timeout_ms, state ? state : '?', state == 'D' ?
	    ": uninterruptible sleep, e.g. disk or network I/O" : "");
}

int
tstop_stop(pid_t tid, int timeout_ms, char **cause)
{
	struct slot *s;
	uint64_t deadline;
	pid_t r, tgid;
	int e, status, sig, rc;

	if ((rc = seize(0, tid, SLOT_SEIZING, &s, cause)) != FP_OK)
		return rc;
	deadline = now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000u;
	if ((r = tstop_wait(tid, &status, deadline)) == 0)
		return timed_out(s, tid, timeout_ms, cause);
	if (r == -1) {
		e = errno;
		(void)slot_release(s);
		if (e == ECHILD)
			return fail(cause, FP_EEXITED, "thread %d exited",
			    (int)tid);
		return fail(cause, FP_ERR, "cannot stop thread %d: "
		    "waitpid: %s", (int)tid, strerror(e));
	}
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		slot_free(s);
		return fail(cause, FP_EEXITED, "thread %d exited", (int)tid);
	}
	if (!WIFSTOPPED(status)) {
		(void)slot_release(s);
		return fail(cause, FP_ERR, "thread %d: unexpected wait status "
		    "0x%x", (int)tid, (unsigned)status);
	}
	if ((status >> 16) == PTRACE_EVENT_STOP && (sig = WSTOPSIG(status)) !=
	    SIGTRAP) {
		/*
		 * A group-stop: the whole process is stopped by job control
		 * (or was before we came).  Detaching leaves it stopped, as
		 * its owner wants it.
		 */
		tgid = thread_tgid(tid);
		(void)slot_release(s);
		return fail(cause, FP_ERR, "process %d is stopped (%s, job control "
		    "or a debugger), so thread %d was left as it was; resume it "
		    "with `kill -CONT %d` and try again", (int)tgid,
		    stop_signal_name(sig), (int)tid, (int)tgid);
	}
	/*
	 * Our interrupt, or a signal-delivery-stop: a signal reached the
	 * thread before our interrupt did.  The thread is stopped all the
	 * same; keep the signal and hand it back at detach, which delivers it
	 * with its siginfo intact (a PTRACE_CONT now and a re-sent signal
	 * later would not).
	 */
	s->sig = (status >> 16) == 0 ? WSTOPSIG(status) : 0;
	s->stopped_ns = now_ns();
	s->state = SLOT_STOPPED;
	return FP_OK;
}

int
tstop_seize(pid_t pid, pid_t tid, void (*rescue)(void), char **cause)
{
	struct slot *s;

	owner_rescue = rescue;
	return seize(pid, tid, SLOT_OWNED, &s, cause);
}

void
tstop_let_go(pid_t tid, bool detached)
{
	struct slot *s = slot_find(tid);

	if (s == NULL)
		return;
	if (detached)
		slot_free(s);
	else
		s->state = SLOT_PENDING;
}

int
tstop_resume(pid_t tid)
{
	struct slot *s = slot_find(tid);
	enum release_result r;
	uint64_t stopped;

	if (s == NULL || s->state != SLOT_STOPPED) {
		sweep_pending();
		return FP_ERR;
	}
	stopped = s->stopped_ns;
	r = slot_release(s);
	tresume_note_held("tstop", tid, stopped, 0);
	sweep_pending();
	/* A stopped thread that cannot be detached was killed meanwhile. */
	return r == RELEASED ? FP_OK : FP_EEXITED;
}

void
tstop_release_all(void)
{
	void (*rescue)(void) = owner_rescue;
	int i, n = nslots, saved = errno;

	if (rescue != NULL)
		rescue();
	for (i = 0; i < n; i++)
		if (slots[i].tid != 0)
			(void)slot_release(&slots[i]);
	errno = saved;
}
