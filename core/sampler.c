#include "config.h"

#include "core/sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/procfs.h"
#include "core/util.h"

/* How often the thread list is read again from /proc. */
#define REFRESH_NS	200000000ull
/* How often a set that follows processes (sampler_set.grow) looks for new ones. */
#define GROW_NS		1000000000ull
/* One tick in this many has its CPU time measured (stats.read_cpu_ns). */
#define READ_CPU_EVERY	16
/*
 * A wait for the next tick shorter than this is spun, not slept: a
 * wake-up from clock_nanosleep costs this VM 14-25 us of CPU and about as
 * much delay, so sleeping a few microseconds cost more CPU than spinning
 * them and, as reads got cheaper, cut the rate reached at 50-100 kHz
 * asked by a quarter.  Waits this short exist only above ~20 kHz.
 */
#define SPIN_NS		20000
/* Consecutive failed ticks after which a target still there is given up. */
#define MAX_FAILED	200

/*
 * An OS thread, with its schedstat file kept open: one pread per look.
 * A thread was on a CPU in an interval when its run time grew: a thread
 * preempted while runnable (state R, a loaded machine) does not count,
 * so cpu mode follows CPU time, not the scheduler's queue.
 */
struct tinfo {
	pid_t tid;
	int fd;			/* /proc/PID/task/TID/schedstat, -1 if unopenable */
	int sfd;		/* .../syscall, opened on first use; -1 unopenable, -2 not yet */
	uint64_t ran_ns;	/* run time at the last look */
	char *name;		/* Python's or the OS's name, NULL if unknown */
	bool seen;		/* in the latest thread list */
};

struct sampler {
	struct sampler_opts opts;
	struct py_reader *reader;
	pid_t pid;
	struct tinfo *tids;
	size_t ntids, atids;
	bool need_names;	/* a thread appeared: the next tick reads /proc in full */
	uint64_t refreshed_ns;
	uint64_t rnd;
	struct sampler_stats st;
	char *version;
	/* sampler_run_set's, per member */
	unsigned failed_run;	/* failed ticks in a row */
	char *why;		/* the last failure's cause */
	char *gave_up;		/* set when it failed MAX_FAILED ticks in a row */
	bool done;		/* exited or given up: no more ticks */
	uint64_t joined_ns;	/* when it was opened: its elapsed time starts there */
};

static bool ran_since(struct tinfo *ti);

static struct tinfo *
tinfo_find(struct sampler *s, pid_t tid)
{
	size_t i;

	for (i = 0; i < s->ntids; i++)
		if (s->tids[i].tid == tid)
			return &s->tids[i];
	return NULL;
}

static void
tinfo_drop(struct tinfo *ti)
{
	if (ti->fd >= 0)
		close(ti->fd);
	if (ti->sfd >= 0)
		close(ti->sfd);
	free(ti->name);
}

/* The thread list again: new threads get a stat file, gone ones lose theirs. */
static void
refresh_threads(struct sampler *s)
{
	pid_t *tidv = NULL;
	size_t n = 0, i, j;

	s->refreshed_ns = now_ns();
	if (procfs_tids(s->pid, &tidv, &n, NULL) != FP_OK)
		return;
	for (i = 0; i < s->ntids; i++)
		s->tids[i].seen = false;
	for (i = 0; i < n; i++) {
		struct tinfo *ti = tinfo_find(s, tidv[i]);
		char path[80];

		if (ti == NULL) {
			ti = ARRAY_PUSH(s->tids, s->ntids, s->atids);
			memset(ti, 0, sizeof *ti);
			ti->tid = tidv[i];
			snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)s->pid,
			    (int)tidv[i]);
			ti->fd = open(path, O_RDONLY | O_CLOEXEC);
			ti->sfd = -2;
			(void)ran_since(ti);
			s->need_names = true;
		}
		ti->seen = true;
	}
	for (i = j = 0; i < s->ntids; i++) {
		if (s->tids[i].seen)
			s->tids[j++] = s->tids[i];
		else
			tinfo_drop(&s->tids[i]);
	}
	s->ntids = j;
	free(tidv);
}

/* Did the thread run since the last look?  Reads its schedstat again. */
static bool
ran_since(struct tinfo *ti)
{
	char buf[128];
	ssize_t len;
	uint64_t ran, before = ti->ran_ns;

	if (ti->fd < 0 || (len = pread(ti->fd, buf, sizeof buf - 1, 0)) <= 0)
		return false;
	buf[len] = '\0';
	ran = strtoull(buf, NULL, 10);
	ti->ran_ns = ran;
	return ran > before;
}

/*
 * Is the thread blocked on the GIL's futex?  Its syscall file, kept open:
 * one pread, answered at once ("running") for a thread on a CPU.  Asked
 * only of threads other than the holder, and only while one holds it.
 */
static bool
waits_on_gil(struct sampler *s, struct tinfo *ti)
{
	uint64_t arg0;
	long nr;

	if (ti->sfd == -2) {
		char path[80];

		snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)s->pid, (int)ti->tid);
		ti->sfd = open(path, O_RDONLY | O_CLOEXEC);
	}
	return ti->sfd >= 0 && procfs_syscall_fd(ti->sfd, &nr, &arg0) &&
	    py_reader_gil_wait(s->reader, nr, arg0);
}

/* Names from a full snapshot: Python's where threading has them. */
static void
learn_names(struct sampler *s, const struct py_snapshot *snap)
{
	size_t i;

	for (i = 0; i < snap->nthreads; i++) {
		const struct py_thread *t = &snap->threads[i];
		struct tinfo *ti = tinfo_find(s, t->tid);

		if (ti != NULL && t->name != NULL) {
			free(ti->name);
			ti->name = xstrdup(t->name);
		}
	}
	s->need_names = false;
}

int
sampler_open(pid_t pid, const struct sampler_opts *opts, struct sampler **sp,
    char **cause)
{
	struct py_snapshot_opts so = { 0 };
	struct py_snapshot *snap = NULL;
	struct sampler *s;
	int rc;

	*sp = NULL;
	if (opts->rate < SAMPLER_RATE_MIN || opts->rate > SAMPLER_RATE_MAX)
		return fail(cause, FP_EUSAGE, "rate %u out of range: give %d to %d samples per second",
		    opts->rate, SAMPLER_RATE_MIN, SAMPLER_RATE_MAX);
	s = xcalloc(1, sizeof *s);
	s->opts = *opts;
	s->pid = pid;
	s->rnd = now_ns() | 1;
	s->joined_ns = now_ns();
	if ((rc = py_reader_open(pid, &s->reader, cause)) != FP_OK) {
		free(s);
		return rc;
	}
	py_reader_may_stop(s->reader, false);
	s->version = xstrdup(py_reader_runtime(s->reader)->version);
	refresh_threads(s);
	/* One full read: names, and (before 3.11) where glibc keeps the tid. */
	if ((rc = py_reader_snapshot(s->reader, &so, &snap, cause)) != FP_OK) {
		sampler_close(s);
		return rc;
	}
	learn_names(s, snap);
	py_snapshot_free(snap);
	*sp = s;
	return FP_OK;
}

/* Uniform in [0.5, 1.5) periods: no aliasing with a periodic target. */
static uint64_t
next_interval(struct sampler *s)
{
	uint64_t period = 1000000000ull / s->opts.rate;

	s->rnd ^= s->rnd << 13;
	s->rnd ^= s->rnd >> 7;
	s->rnd ^= s->rnd << 17;
	return period / 2 + s->rnd % (period > 0 ? period : 1);
}

static bool
keep(const struct sampler *s, const struct py_thread *t, bool on_cpu)
{
	if (t->nframes == 0 && t->nnative == 0)
		return false;
	switch (s->opts.mode) {
	case SAMPLER_GIL:
		return t->gil == GIL_HELD;
	case SAMPLER_CPU:
		return on_cpu;
	case SAMPLER_WALL:
	default:
		return s->opts.idle || on_cpu || t->gil == GIL_HELD;
	}
}

/*
 * Is the GIL holder used?  By gil mode, by the state a pane shows, and by
 * wall mode without --idle (a holder is kept without asking whether it
 * ran).  Otherwise it is not read: on 3.11 that is the runtime's page, on
 * 3.12+ the GIL's own, one pin of ~8 a tick.
 */
static bool
wants_gil(const struct sampler *s)
{
	return s->opts.mode == SAMPLER_GIL || s->opts.state ||
	    (s->opts.mode == SAMPLER_WALL && !s->opts.idle);
}

/* Hand one snapshot's threads to the sink. */
static void
emit(struct sampler *s, struct py_snapshot *snap, uint64_t t0, uint64_t weight,
    sampler_sink_fn *sink, void *arg)
{
	bool need_state = s->opts.state || s->opts.mode == SAMPLER_CPU ||
	    (s->opts.mode == SAMPLER_WALL && !s->opts.idle);
	bool held = false;
	size_t i;

	for (i = 0; i < snap->nthreads && s->opts.state; i++)
		held |= snap->threads[i].gil == GIL_HELD;

	for (i = 0; i < snap->nthreads; i++) {
		struct py_thread *t = &snap->threads[i];
		struct tinfo *ti = tinfo_find(s, t->tid);
		struct sample smp;
		bool on_cpu = t->os_state == 'R';

		if (t->tstate == 0)
			continue;	/* an OS thread Python does not know (--native) */
		s->st.thread_reads++;
		if (t->partial) {
			s->st.torn++;
			continue;
		}
		/*
		 * --native stops each thread to unwind it, and a stopped and
		 * resumed thread has run: there, the state letter read before
		 * any stop says it.  Wall mode keeps a GIL holder whatever its
		 * CPU: it is not asked, one pread a tick fewer for a busy
		 * thread.  Its next look then spans the ticks it held the GIL:
		 * a thread that just let go of it counts as run once more.
		 */
		if (need_state && !s->opts.native && ti != NULL && ti->fd >= 0 &&
		    (s->opts.state || s->opts.mode != SAMPLER_WALL || t->gil != GIL_HELD))
			on_cpu = ran_since(ti);
		/* The snapshot reads no /proc: waiting is asked here, of state users only. */
		if (held && t->gil == GIL_NONE && !s->opts.native && ti != NULL && waits_on_gil(s, ti))
			t->gil = GIL_WAITING;
		if (t->name == NULL && ti != NULL && ti->name != NULL)
			t->name = xstrdup(ti->name);
		if (!keep(s, t, on_cpu))
			continue;
		smp.time_ns = t0;
		smp.weight_ns = weight;
		smp.thread = t;
		smp.on_cpu = on_cpu;
		s->st.samples++;
		smp.pid = s->pid;
		sink(arg, &smp);
	}
}

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * What measuring costs: two reads of the thread's CPU clock back to back,
 * the least of a few.  Each is a system call (1-2 us in this VM), and
 * half of each lies inside the interval a tick's measure spans.
 */
static uint64_t
thread_cpu_cost(void)
{
	uint64_t best = UINT64_MAX, a, b;
	int i;

	for (i = 0; i < 8; i++) {
		a = thread_cpu_ns();
		b = thread_cpu_ns();
		if (b - a < best)
			best = b - a;
	}
	return best;
}

/* Read one tick.  False when sampling must end (the target is gone). */
static bool
tick(struct sampler *s, uint64_t t0, uint64_t weight, sampler_sink_fn *sink, void *arg)
{
	struct py_snapshot_opts so = {
		.native = s->opts.native,
		.max_depth = s->opts.max_depth, .no_proc = !s->need_names,
		.no_gil = !wants_gil(s),
	};
	struct py_snapshot *snap = NULL;
	int rc;

	free(s->why);
	s->why = NULL;
	rc = py_reader_snapshot(s->reader, &so, &snap, &s->why);
	s->st.ticks++;
	if (rc == FP_OK) {
		s->failed_run = 0;
		if (so.no_proc == false)
			learn_names(s, snap);
		emit(s, snap, t0, weight, sink, arg);
		py_reader_recycle(s->reader, snap);	/* its room serves the next tick */
	} else {
		s->st.failed++;
		if (rc == FP_EEXITED || !procfs_exists(s->pid) || ++s->failed_run >= MAX_FAILED) {
			s->st.exited = rc == FP_EEXITED || !procfs_exists(s->pid);
			return false;
		}
	}
	return true;
}

/*
 * One tick of every member still sampled: false when none is left.  A
 * member's busy time is its own read's.
 */
static bool
tick_all(struct sampler **sv, size_t n, uint64_t t0, uint64_t weight,
    sampler_sink_fn *sink, void *arg)
{
	uint64_t a = t0, b;
	bool any = false;
	size_t i;

	for (i = 0; i < n; i++) {
		struct sampler *s = sv[i];

		if (s->done)
			continue;
		if (a - s->refreshed_ns >= REFRESH_NS)
			refresh_threads(s);
		if (!tick(s, t0, weight, sink, arg)) {
			s->done = true;
			if (!s->st.exited)
				s->gave_up = xasprintf("sampling process %d failed %d times in a row: %s",
				    (int)s->pid, MAX_FAILED, s->why != NULL ? s->why : "unknown error");
		}
		b = now_ns();
		s->st.busy_ns += b - a;
		a = b;
		any |= !s->done;
	}
	return any;
}

int
sampler_run(struct sampler *s, sampler_sink_fn *sink, void *arg,
    volatile sig_atomic_t *stop, char **cause)
{
	struct sampler_set one = { &s, 1, NULL, NULL };

	return sampler_run_set(&one, sink, arg, stop, cause);
}

/* One tick's CPU time, measured: each member ticked had its share. */
static void
share_read_cpu(struct sampler **sv, size_t n, uint64_t cpu)
{
	size_t i;

	for (i = 0; i < n; i++) {
		sv[i]->st.read_cpu_ns += cpu / n;
		sv[i]->st.read_cpu_reads++;
	}
}

/* The loop's CPU time, shared among the members by their busy time. */
static void
share_cpu(struct sampler **sv, size_t n, uint64_t cpu)
{
	uint64_t busy = 0;
	size_t i;

	for (i = 0; i < n; i++)
		busy += sv[i]->st.busy_ns;
	for (i = 0; i < n; i++)
		sv[i]->st.cpu_ns += n == 1 ? cpu : busy == 0 ? cpu / n :
		    (uint64_t)((double)cpu * (double)sv[i]->st.busy_ns / (double)busy);
}

int
sampler_run_set(struct sampler_set *set, sampler_sink_fn *sink, void *arg,
    volatile sig_atomic_t *stop, char **cause)
{
	struct sampler *s = set->sv[0];	/* the timing: every member has the same opts */
	uint64_t start = now_ns(), next = start, prev = start, grown = start, t0, t1;
	/*
	 * This thread's CPU time over the whole run, not per tick: it does
	 * nothing but sample and wait, and a clock read of it is a system
	 * call (two per tick were a tenth of a cheap tick's cost).  Waiting
	 * is not free: in this VM a wake-up from clock_nanosleep costs
	 * 14-25 us of CPU, more than a read; the reads alone are measured on
	 * one tick in READ_CPU_EVERY.
	 */
	uint64_t cost = thread_cpu_cost(), cpu0 = thread_cpu_ns(), c0 = 0, c1, ticks = 0;
	bool first = true, measure;
	size_t i;
	int rc = FP_OK;
	/*
	 * A sleeping thread is woken up to its timer slack late (50 us by
	 * default): at 20 kHz (a 50 us period) that halved the rate reached.
	 * A fiftieth of the period, for this run only.
	 */
	int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	unsigned long want = 1000000000ul / s->opts.rate / 50;

	if (slack > 0 && want < (unsigned long)slack)
		prctl(PR_SET_TIMERSLACK, want > 0 ? want : 1ul, 0, 0, 0);

	while (stop == NULL || !*stop) {
		t0 = now_ns();
		if (s->opts.duration_ns > 0 && t0 - start >= s->opts.duration_ns)
			break;
		if (set->grow != NULL && t0 - grown >= GROW_NS) {
			set->grow(set, set->grow_arg);
			grown = t0 = now_ns();
		}
		measure = ++ticks % READ_CPU_EVERY == 0;	/* not the first: it reads more */
		if (measure)
			c0 = thread_cpu_ns();
		if (!tick_all(set->sv, set->n, t0, first ? next_interval(s) : t0 - prev, sink, arg))
			break;
		if (measure) {
			c1 = thread_cpu_ns() - c0;
			share_read_cpu(set->sv, set->n, c1 > cost ? c1 - cost : 0);
		}
		first = false;
		prev = t0;
		t1 = now_ns();
		next += next_interval(s);
		if (t1 < next && next - t1 < SPIN_NS) {
			/* Spin the short waits (see SPIN_NS); Ctrl-C still ends it. */
			while (now_ns() < next && (stop == NULL || !*stop))
				;
			continue;
		}
		if (t1 >= next) {
			/* Behind by more than a period: start again from now, and say so. */
			if (t1 - next > 1000000000ull / s->opts.rate) {
				for (i = 0; i < set->n; i++)
					set->sv[i]->st.late += !set->sv[i]->done;
				next = t1;
			}
			continue;
		}
		{
			struct timespec ts = { (time_t)(next / 1000000000u), (long)(next % 1000000000u) };

			/* A signal (Ctrl-C) ends the sleep early: the loop looks at *stop. */
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	t1 = now_ns();
	for (i = 0; i < set->n; i++)
		set->sv[i]->st.elapsed_ns = t1 - (set->sv[i]->joined_ns > start ?
		    set->sv[i]->joined_ns : start);
	share_cpu(set->sv, set->n, thread_cpu_ns() - cpu0);
	if (set->n == 1 && s->gave_up != NULL)
		rc = fail(cause, FP_ERR, "%s", s->gave_up);
	return rc;
}

const char *
sampler_gave_up(const struct sampler *s)
{
	return s->gave_up;
}

pid_t
sampler_pid(const struct sampler *s)
{
	return s->pid;
}

const struct sampler_stats *
sampler_stats(const struct sampler *s)
{
	return &s->st;
}

const char *
sampler_mode_name(enum sampler_mode mode)
{
	return mode == SAMPLER_CPU ? "cpu" : mode == SAMPLER_GIL ? "gil" : "wall";
}

const char *
sampler_version(const struct sampler *s)
{
	return s->version;
}

char *
sampler_summary(const struct sampler *s)
{
	const struct sampler_stats *st = &s->st;
	double secs = (double)st->elapsed_ns / 1e9;
	double hz = secs > 0 ? (double)st->ticks / secs : 0;
	double torn = st->thread_reads > 0 ? 100.0 * (double)st->torn / (double)st->thread_reads : 0;
	double busy = st->elapsed_ns > 0 ? 100.0 * (double)st->busy_ns / (double)st->elapsed_ns : 0;

	double cpu_us = st->ticks > 0 ? (double)st->cpu_ns / 1e3 / (double)st->ticks : 0;
	double read_us = st->read_cpu_reads > 0 ?
	    (double)st->read_cpu_ns / 1e3 / (double)st->read_cpu_reads : 0;

	return xasprintf("%llu samples from %llu reads in %.1f s (%.1f Hz of %u asked), "
	    "%.2f%% torn, %llu failed reads, %.1f us CPU per read (%.1f reading, the rest "
	    "waiting), %.0f%% busy%s",
	    (unsigned long long)st->samples, (unsigned long long)st->ticks, secs, hz,
	    s->opts.rate, torn, (unsigned long long)st->failed, cpu_us, read_us, busy,
	    st->late > st->ticks / 10 ? " (saturated: the rate asked is more than it reaches)" : "");
}

void
sampler_close(struct sampler *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ntids; i++)
		tinfo_drop(&s->tids[i]);
	free(s->tids);
	py_reader_close(s->reader);
	free(s->version);
	free(s->why);
	free(s->gave_up);
	free(s);
}
