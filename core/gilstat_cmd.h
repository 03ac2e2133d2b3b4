/*
 * gilstat_cmd — `gilstat on [take_ms] [hold_ms] [interval_s] [max_threads]`
 * and `gilstat off`.
 *
 * `on` probes take_gil/drop_gil exactly (core/gilprobe) where the target's
 * image has them, else samples each thread's GIL state from outside
 * (statistical, labelled so, with the reason), and prints a statistics
 * report every interval_s and warnings as they come, until Ctrl-C (or
 * SIGTERM/SIGHUP, or the front end's interrupt), or the target exits.
 * The probes are fds of this process: every way out of `on` closes them,
 * and so does our exit.  A command line client is one process running one
 * `on` at a time, so `off` there only says that nothing is on.
 */
#ifndef FP_GILSTAT_CMD_H
#define FP_GILSTAT_CMD_H

#include "core/command.h"

/* The handlers in the command table; ctx is the runner. */
cmd_run_fn gilstat_cmd_on, gilstat_cmd_off;
/*
 * gilstat on --json (core/jsonout): the same run, its start, reports,
 * warnings and end as records written through the runner's io as they
 * come (doc/json.md).
 */
struct runner;
int gilstat_on_json(struct runner *r, const struct cmd_request *req, struct sbuf *out,
    char **cause);

#endif
