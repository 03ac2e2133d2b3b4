/*
 * stackgroup — `stack --group`: identical stacks merged across threads,
 * processes and hosts, largest group first, each named by its members,
 * then the odd ones out.  Local sets (core/stackset) and --hosts
 * (core/hosts, from records parsed back from --json) feed it the same
 * items, so the two group the same way.  It reads nothing itself.
 */
#ifndef FP_STACKGROUP_H
#define FP_STACKGROUP_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/pystack.h"
#include "core/source.h"
#include "core/util.h"

/* One thread of one process, on one host. */
struct stackgroup_item {
	const char *host;	/* NULL for this machine */
	int host_index;		/* the hosts' order in the headers */
	pid_t pid;
	long rank;		/* RANK the process was started with, or -1 */
	const struct py_thread *t;
	struct source_cache *sc;	/* the process's source, or NULL */
	/* Each frame's source line (as t->frames), or NULL: a remote host's. */
	char *const *code;
};

/*
 * Append the groups of items (the caller's, left as they are) to out: as
 * text, or with json as one "group" record each (core/jsonrec).
 */
void stackgroup_render(struct sbuf *out, struct stackgroup_item *items, size_t n,
    bool by_function, bool json);

#endif
