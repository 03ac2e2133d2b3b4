/*
 * perfset — `perf` over a set of processes (issue 13): one sampler loop
 * reads every member each tick (core/sampler's sampler_run_set, a reader
 * per member), and the profile gets the process as its root frame ("pid
 * 4101 python3 train.py", or "rank 3 (pid 4101)" when RANK or LOCAL_RANK
 * is in its environment), or none with --merge.  Members that are not
 * Python are skipped with the reason; one that exits keeps its samples;
 * a tree or a match is followed as processes come.
 */
#ifndef FP_PERFSET_H
#define FP_PERFSET_H

#include <stdbool.h>

#include "core/procset.h"
#include "core/sampler.h"
#include "core/util.h"

struct profile;

struct perfset_opts {
	struct sampler_opts so;
	bool threads;		/* thread roots under the process roots */
	bool merge;		/* no process roots: all processes folded together */
	int format;		/* perf_format_named's */
	const char *file;	/* NULL: none written (perf --json without -f) */
	/*
	 * May be NULL.  The profile once sampled, with the summary line and
	 * the processes sampled: perf --json (core/jsonperf) prints its records.
	 */
	void (*profiled)(void *arg, const struct profile *prof, const char *summary,
	    size_t processes);
	void *profiled_arg;
};

/*
 * Sample every member of the set and write the profile to o->file; what
 * happened to each member goes to out.  A tree or a match is resolved
 * again about once a second while sampling, its new processes joining.
 * Only a set with no Python member at the start fails.
 */
int perfset_run(const struct proc_set_spec *spec, const struct perfset_opts *o,
    struct sbuf *out, char **cause);

/* "rank 3 (pid 4101)" or "pid 4101 python3 train.py": a process root's label. */
char *perfset_label(pid_t pid, const char *cmdline);
/*
 * The rank the process was started with: RANK in its environment, else
 * LOCAL_RANK (*local set); false when neither is there (or unreadable).
 */
bool perfset_rank(pid_t pid, long *rank, bool *local);

#endif
