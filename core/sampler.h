/*
 * sampler — a statistical profiler of a live CPython process, from outside.
 *
 * Built on core/pystack's reader: each tick reads every thread's Python
 * stack with process_vm_readv while the threads run.  It must never stop
 * a thread (py_reader_may_stop(reader, false)): a stack that changed under two
 * reads is counted torn and dropped, never chased.  /proc is read at a
 * lower rate than the samples (the thread list every 200 ms); whether a
 * thread was on a CPU comes from its schedstat file, kept open and re-read
 * (one pread) only when the mode needs it: its run time grew since the
 * last tick.  Intervals are randomised around the requested
 * rate (uniform in [0.5, 1.5) of the period) so that a periodic target
 * cannot alias with the sampler.
 */
#ifndef FP_SAMPLER_H
#define FP_SAMPLER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/pystack.h"

enum sampler_mode {
	SAMPLER_WALL = 0,	/* every active thread (all threads with idle) */
	SAMPLER_CPU,		/* threads on a CPU */
	SAMPLER_GIL,		/* the thread holding the GIL */
};

/* "wall", "cpu", "gil" */
const char *sampler_mode_name(enum sampler_mode mode);

#define SAMPLER_RATE_MIN	1
#define SAMPLER_RATE_MAX	1000000

struct sampler_opts {
	unsigned rate;		/* samples per second */
	uint64_t duration_ns;	/* 0 = until *stop */
	enum sampler_mode mode;
	bool idle;		/* wall: keep idle threads too */
	bool native;		/* native frames (stops each thread briefly) */
	unsigned max_depth;	/* 0 = the reader's default */
	bool state;		/* on_cpu measured for every sample, whatever the
				 * mode, and GIL_WAITING found (one pread of
				 * each non-holder's syscall file a tick): the
				 * flame pane's header shows them */
};

/* One thread in one tick, as handed to the sink. */
struct sample {
	uint64_t time_ns;	/* when the tick's read began (now_ns) */
	uint64_t weight_ns;	/* time this sample stands for: since the last tick */
	const struct py_thread *thread;	/* tid, name (may be NULL), gil, frames */
	pid_t pid;		/* the process it was read in (several over a set) */
	bool on_cpu;		/* ran on a CPU since the last tick (cpu mode,
				 * state; wall mode: threads not holding the GIL) */
};

typedef void sampler_sink_fn(void *arg, const struct sample *s);

struct sampler_stats {
	uint64_t ticks;		/* snapshots taken */
	uint64_t samples;	/* thread samples handed to the sink */
	uint64_t thread_reads;	/* thread stacks read */
	uint64_t torn;		/* of those, torn (dropped) */
	uint64_t failed;	/* ticks whose snapshot failed */
	uint64_t late;		/* ticks started after the next was due */
	uint64_t elapsed_ns;	/* first tick to the end */
	uint64_t busy_ns;	/* wall time spent reading */
	uint64_t cpu_ns;	/* this thread's CPU time, reading and waiting */
	/*
	 * The CPU time of the reads alone, measured on one tick in
	 * READ_CPU_EVERY (a clock read of it is a system call): waking up
	 * from each wait costs this VM more than a read (see README.md).
	 */
	uint64_t read_cpu_ns, read_cpu_reads;
	bool exited;		/* the target exited while sampled */
};

struct sampler;

/*
 * Prepare to sample `pid`: find its runtime, read it once in full (names,
 * tids).  FP_ENOTPY for a process that is not Python.
 */
int sampler_open(pid_t pid, const struct sampler_opts *opts,
    struct sampler **sp, char **cause);
/*
 * Sample until the duration is over, *stop is set (a signal handler) or
 * the target exits (stats->exited).  FP_OK in all three cases; *cause is
 * only set on other failures.
 */
int sampler_run(struct sampler *s, sampler_sink_fn *sink, void *arg,
    volatile sig_atomic_t *stop, char **cause);
/*
 * Several processes sampled in ONE loop (a process set, issue 13): each
 * tick reads every member still there, one after another, so the set
 * costs one thread and one timer, not n.  All were opened with the same
 * opts.  grow, when set, is called about once a second between ticks and
 * may append members (reallocating sv): a tree or a match followed as
 * processes come.
 */
struct sampler_set {
	struct sampler **sv;
	size_t n;
	void (*grow)(struct sampler_set *set, void *arg);
	void *grow_arg;
};

/*
 * Sample a set.  A member that exits (or fails MAX_FAILED ticks in a row)
 * keeps what it gave, its stats say so (exited, or sampler_gave_up), and
 * the others go on; the loop ends when none is left.  A member's busy
 * and CPU time are its own ticks'.  FP_OK unless the set is one sampler
 * and it failed (as sampler_run).
 */
int sampler_run_set(struct sampler_set *set, sampler_sink_fn *sink, void *arg,
    volatile sig_atomic_t *stop, char **cause);
/* Why a member of a set stopped being sampled other than by exiting, or NULL. */
const char *sampler_gave_up(const struct sampler *s);
pid_t sampler_pid(const struct sampler *s);
const struct sampler_stats *sampler_stats(const struct sampler *s);
const char *sampler_version(const struct sampler *s);
/* "1000 samples in 10.0 s (99.8 Hz of 100 asked), 0.1% torn, 2% busy" */
char *sampler_summary(const struct sampler *s);
void sampler_close(struct sampler *s);

#endif
