/*
 * runner — runs parsed commands against one target and renders their
 * results as text.  The same runner serves --cmd, the line-mode prompt and
 * the TUI's output pane, so a command prints the same text everywhere.
 *
 * The runner keeps the process reader (and its caches) between commands.
 */
#ifndef FP_RUNNER_H
#define FP_RUNNER_H

#include <sys/types.h>

#include "core/util.h"

struct runner;

struct runner *runner_new(pid_t pid);
void runner_free(struct runner *r);

/*
 * Parse and run one command line, appending its output to `out`.  Returns
 * an enum fp_status; on failure *cause is the one-line message.
 */
int runner_exec(struct runner *r, const char *line, struct sbuf *out, char **cause);

#endif
