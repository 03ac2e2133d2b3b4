/*
 * stackset — `stack` over a set of processes (issue 13): each member's
 * dump in turn, or, with --group, identical stacks merged across
 * processes and threads, so that the one rank that is not where the
 * others are stands out.  Reads from outside only, as `stack` does.
 */
#ifndef FP_STACKSET_H
#define FP_STACKSET_H

#include <stdbool.h>

#include "core/procset.h"
#include "core/util.h"

struct stackset_opts {
	bool block;		/* stop each process while it is read */
	bool group;		/* merge identical stacks */
	bool by_function;	/* ... ignoring line numbers */
	bool json;		/* records (core/jsonrec), not text */
};

/*
 * Read every member and write the dump to out.  Members that are not
 * Python, or exit, are listed at the end with the reason; only a set
 * with no member read fails (FP_ENOPROC or the first member's error).
 */
int stackset_run(const struct proc_set *set, const struct stackset_opts *o,
    struct sbuf *out, char **cause);
/*
 * `stack` (its options in req) over the set spec resolves to now, as
 * text or records; -f is the caller's.
 */
struct cmd_request;
int stackset_cmd(const struct proc_set_spec *spec, const struct cmd_request *req, bool json,
    struct sbuf *out, char **cause);

#endif
