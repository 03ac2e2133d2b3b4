/*
 * ptrace — hijack one thread of another process for the injector's calls,
 * on top of core/tstop (the one ptrace holder: seize, interrupt, waits,
 * the registry of held threads and the release of them all): save and
 * restore its general registers and its whole extended (XSAVE) state, let
 * it run one step or until it faults, keep the signals it takes meanwhile,
 * and let it go.
 *
 * While a thread is held, every signal that reaches it and is not a fault
 * of the code it runs for us (a return to address 0, a single-step trap) is
 * taken off it, kept, and handed back at release one at a time, each at a
 * signal-delivery-stop of its own, so its handlers never run on our stack,
 * a signal that came once is delivered once, and the target loses none.
 *
 * It must never leave a thread stopped, traced or with our registers: every
 * wait has a deadline; ptrace_thread_release() restores what was saved and
 * detaches on every path; a thread that will not stop (uninterruptible
 * sleep) is left to core/tstop, which lets it go at its next call or in
 * tstop_release_all().  That function (async-signal-safe, for fatal
 * signals and atexit) first restores the registers of the thread held
 * right now, even one stopped in the middle of our call, re-sends its
 * signals and detaches it.  Never PTRACE_O_EXITKILL: if we die the target
 * lives on.
 *
 * ptrace belongs to the thread of ours that seized: use one ptrace_thread
 * from one thread, and let nothing else reap the target's wait statuses.
 */
#ifndef FP_INJECT_PTRACE_H
#define FP_INJECT_PTRACE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct ptrace_thread {
	pid_t pid, tid;
	bool attached;		/* seized by us */
	bool stopped;		/* in a ptrace-stop */
	bool sigstop;		/* ... and it is a signal-delivery-stop */
	bool group_stopped;	/* saw a job-control stop while held */
	uint64_t stopped_ns;	/* when it first stopped, for FP_STOP_STATS */
	uint64_t stop_began_ns;	/* when the current stop began; 0 if none */
	uint64_t longest_stop_ns;	/* longest stop so far */
	/* With FP_STOP_STATS: when it was last let run, and its run time
	 * plus run-queue wait and its count of times on a CPU (schedstat)
	 * then, to date each stop back. */
	bool stop_stats;
	uint64_t resumed_ns, sched_busy_ns, sched_slices;

	/* Saved by ptrace_thread_save(), put back by release. */
	bool saved;
	struct user_regs_struct regs;
	void *xstate;		/* NT_X86_XSTATE, exactly xstate_len bytes */
	size_t xstate_len;
	struct user_fpregs_struct fpregs;	/* when XSAVE is unavailable */
	bool have_fpregs;

	/* Foreign signals taken off the thread while held. */
	siginfo_t *queued;
	size_t nqueued, aqueued;
};

/* What stopped the thread when it ran for us. */
enum ptrace_stop_kind {
	PTRACE_STOP_FAULT,	/* a synchronous fault or trap; see si */
	PTRACE_STOP_SECCOMP,	/* SIGSYS from seccomp: a system call denied */
	PTRACE_STOP_INTERRUPT,	/* our PTRACE_INTERRUPT */
};

struct ptrace_stop {
	enum ptrace_stop_kind kind;
	siginfo_t si;
};

/*
 * Seize thread `tid` of process `pid` and wait until `deadline_ns`
 * (now_ns() clock) for it to stop.  0 when stopped; FP_EEXITED when gone;
 * FP_EPERM when not permitted (another tracer, ...); FP_ERR otherwise.
 * *job_stopped is set when the process turned out to be stopped by job
 * control (SIGSTOP): the thread was let go and stays stopped.
 */
int ptrace_thread_seize(struct ptrace_thread *t, pid_t pid, pid_t tid,
    uint64_t deadline_ns, bool *job_stopped, char **cause);

/* Save registers and extended state (once); release puts them back. */
int ptrace_thread_save(struct ptrace_thread *t, char **cause);

int ptrace_thread_getregs(struct ptrace_thread *t, struct user_regs_struct *r,
    char **cause);
int ptrace_thread_setregs(struct ptrace_thread *t,
    const struct user_regs_struct *r, char **cause);

/*
 * Run the stopped thread (one instruction when `step`) until it faults,
 * traps, hits seccomp, or `deadline_ns` passes (then it is interrupted and
 * FP_ERR returned with the thread stopped again, if it stops).  Foreign
 * signals are queued on the way.  FP_EEXITED if it died.
 */
int ptrace_thread_run(struct ptrace_thread *t, bool step, uint64_t deadline_ns,
    struct ptrace_stop *stop, char **cause);

/*
 * Put back the saved registers and extended state, restart an epoll wait
 * our stop broke off (core/tresume.h), hand back the queued signals one at
 * a time (the thread runs its handlers meanwhile, still traced: at most a
 * second, then the rest are re-sent) and detach.  With FP_STOP_STATS set,
 * records how long the thread was held and its longest single stop, each
 * stop counted from when the kernel stopped the thread, not from when we
 * saw it (schedstat; see mark_stopped() in ptrace.c).
 * Returns 0, FP_EEXITED if the thread died, FP_ERR if
 * the restore failed (*cause says what).  Always ends with the thread not
 * traced by us (or remembered to be let go as soon as it stops), and frees
 * what `t` holds.
 */
int ptrace_thread_release(struct ptrace_thread *t, char **cause);

/*
 * For the tests only (NULL otherwise): called right after each resume of a
 * held thread, to widen the window in which a fatal signal may reach us
 * while the thread already runs (tests/inject/injtool.c).
 */
extern void (*ptrace_after_resume_hook)(void);

#endif
