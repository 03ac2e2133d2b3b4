/*
 * hostrun — run one command per host at once (ssh, for core/hosts) and
 * collect what each printed and how it ended, within a deadline: a child
 * still running then is killed (by its pid, nothing else) and said to
 * have timed out.  No shell: argv goes to execvp as it is.
 */
#ifndef FP_HOSTRUN_H
#define FP_HOSTRUN_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/util.h"

struct hostrun {
	char **argv;		/* the caller's, NULL-terminated */
	/* filled by hostrun_all */
	pid_t pid;
	int out_fd, err_fd;
	struct sbuf out, err;	/* standard output, standard error (capped) */
	int status;		/* exit status, or 128+signal */
	bool timed_out;
	char *start_error;	/* it could not be started, or NULL */
};

/* Run every r[i].argv, stdin from /dev/null, until all end or timeout_s passed. */
void hostrun_all(struct hostrun *r, size_t n, double timeout_s);
/* Free what hostrun_all filled in (not argv). */
void hostrun_clear(struct hostrun *r);

#endif
