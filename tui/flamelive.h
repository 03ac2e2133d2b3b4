/*
 * flamelive — the flame pane's model: core/sampler running in a thread of
 * its own, folding samples into core/profile trees (every thread, and
 * each thread alone) and counting each thread's state (GIL held, waiting,
 * idle, on a CPU).  The TUI's loop never waits on the target for it: the
 * pane takes the lock only to read what has arrived.  It never stops a
 * thread of the target (the sampler's reader may not stop threads).
 *
 * Everything below `mu` is shared with the sampling thread: read it only
 * between flamelive_lock and flamelive_unlock.
 */
#ifndef FP_FLAMELIVE_H
#define FP_FLAMELIVE_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/profile.h"
#include "core/sampler.h"

#define FLAMELIVE_RATE	100	/* samples per second, perf's default */
#define FLAMELIVE_MAX_THREADS	256	/* threads with their own tree; the rest only in all */

struct flamelive_thread {
	pid_t tid;
	char *name;		/* the target's; escape it before it is shown */
	struct profile *profile;	/* this thread's kept samples */
	uint64_t samples;	/* every sample of it, kept or not */
	uint64_t gil_held, gil_wait, idle, on_cpu;
};

struct flamelive {
	pthread_mutex_t mu;
	struct profile *all;	/* every thread's kept samples */
	struct flamelive_thread *threads;
	size_t nthreads, athreads;
	struct sampler_stats stats;	/* the sampler's, copied as it runs */
	unsigned rate;
	uint64_t generation;	/* grows with every sample kept */
	bool idle;		/* keep idle samples in the trees too */
	enum sampler_mode mode;	/* which samples the trees keep (perf --mode) */
	bool frozen;		/* sampling paused (z): nothing changes any more */
	uint64_t frozen_ns;	/* when it was */
	bool ended;		/* sampling is over: the target exited, or an error */
	char *error;		/* why it ended, when not by exit */
	uint64_t run_ns;	/* time spent sampling before run_start_ns */
	uint64_t run_start_ns;	/* when sampling resumed; 0 while it does not run */

	/* private */
	struct sampler *s;
	pthread_t thread;
	pthread_cond_t cv;
	volatile sig_atomic_t stop;
	bool closing;
	bool fake;		/* no thread (flamelive_fake) */
};

/* Start sampling `pid` at `rate` Hz.  Returns an fp_status (FP_ENOTPY...). */
int flamelive_start(pid_t pid, unsigned rate, struct flamelive **flp, char **cause);
/*
 * For benchmarks: a model around `all` (taken over) with no sampling
 * thread; the caller may bump `generation` as if samples had arrived.
 */
struct flamelive *flamelive_fake(struct profile *all, unsigned rate);
/* Stop sampling, wait for the thread, free everything. */
void flamelive_stop(struct flamelive *fl);
void flamelive_lock(struct flamelive *fl);
void flamelive_unlock(struct flamelive *fl);
/* Pause (the target is not read at all) or resume sampling; the trees stay. */
void flamelive_freeze(struct flamelive *fl, bool frozen);
/* The achieved rate (ticks per second of sampling) and the share of reads
 * that failed or were torn (0..1).  Under the lock. */
void flamelive_rates(const struct flamelive *fl, double *hz, double *errors);
/*
 * Keep only the samples of `mode` from now on (wall: active threads, or
 * all with idle; cpu: on a CPU; gil: holding the GIL); the trees start
 * again.  The threads' state counts go on.
 */
void flamelive_mode(struct flamelive *fl, enum sampler_mode mode);
/* The tree of thread `tid`, or every thread's (tid 0); NULL if unknown.  Under the lock. */
struct profile *flamelive_profile(struct flamelive *fl, pid_t tid);

#endif
