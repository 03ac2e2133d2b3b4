/*
 * procset — a set of processes to look at together (issue 13): the pids
 * given (flight_profiler 4101,4102,...), a process and every descendant
 * (--tree PID), or every process whose command line matches (--match
 * REGEX).  The set is a recipe, resolved afresh on each use: a tree or a
 * match follows processes as they come and go.
 */
#ifndef FP_PROCSET_H
#define FP_PROCSET_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/util.h"

struct proc_set_spec {
	pid_t *pids;		/* given, or the roots of --tree */
	size_t npids;
	bool tree;		/* and every descendant of each */
	char *match;		/* PCRE2 on command lines, or NULL */
};

/* One member, as resolve found it. */
struct proc_member {
	pid_t pid;
	char *cmdline;		/* NULL when it is gone already */
};

struct proc_set {
	struct proc_member *m;	/* by pid */
	size_t n;
};

/*
 * "4101,4102" into spec->pids (appended); FP_EUSAGE with *cause on a word
 * that is not a process id.
 */
int procset_parse_pids(struct proc_set_spec *spec, const char *text, char **cause);
/* Is this more than the one process flight_profiler PID looks at? */
bool procset_is_set(const struct proc_set_spec *spec);
/*
 * The members now, sorted by pid, never this process itself.  Returns an
 * enum fp_status: FP_EUSAGE for a bad pattern, FP_ENOPROC for an empty set.
 */
int procset_resolve(const struct proc_set_spec *spec, struct proc_set *set, char **cause);
void procset_clear(struct proc_set *set);
void procset_spec_clear(struct proc_set_spec *spec);
/* "4101–4107, 4110" for sorted pids: runs of consecutive ones as ranges. */
void procset_ranges(struct sbuf *out, const pid_t *pids, size_t n);

#endif
