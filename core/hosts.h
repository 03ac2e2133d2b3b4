/*
 * hosts — `--hosts h1,h2 --cmd "stack --group"` (issue 13): flight_profiler
 * runs on each host through the system's ssh (the user's config, keys and
 * jump hosts: we add nothing but BatchMode and a connect timeout), all
 * hosts at once and within a timeout, with --json; the records come back
 * here and are grouped across hosts by core/stackgroup, the code that
 * groups a local set.  A host that fails, times out or runs another
 * version of flight_profiler is reported in one line; the rest are shown.
 * It never runs a shell here, and quotes every word for the remote one.
 */
#ifndef FP_HOSTS_H
#define FP_HOSTS_H

#include <stdbool.h>

#include "core/procset.h"
#include "core/util.h"

struct hosts_opts {
	char **hosts;		/* --hosts h1,h2 */
	size_t nhosts;
	char *ssh;		/* --ssh, else $FP_SSH, else "ssh" (split like a shell) */
	char *remote;		/* --remote-binary, else $FP_REMOTE_BINARY, else flight_profiler */
	double timeout;		/* --ssh-timeout: seconds for a host to answer (0: 60) */
	bool json;		/* --json: records, each with its "host" */
};

/* One of the options above by its name ("--hosts"); FP_EUSAGE with *cause. */
int hosts_option(struct hosts_opts *o, const char *name, const char *value, char **cause);
void hosts_opts_clear(struct hosts_opts *o);

/*
 * Run cmd (`stack` and its options) over the set spec on every host;
 * the result on standard output, the failures of hosts among it, a
 * usage error on standard error.  FP_OK when at least one host answered.
 */
int hosts_main(const struct hosts_opts *o, const struct proc_set_spec *spec, const char *cmd);

#endif
