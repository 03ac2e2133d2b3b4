/*
 * linemode — the prompt used when standard output is not a terminal or
 * TERM=dumb: one command per line, the same text --cmd prints.
 *
 * On a terminal it edits the line itself (history shared with the TUI,
 * Tab completion) using only carriage return and backspace, so it works
 * on a dumb terminal.  Each command runs in a child process so that
 * Ctrl-C cancels it without losing the session (the child lets every
 * stopped thread of the target go on its way out); Ctrl-D leaves.
 */
#ifndef FP_LINEMODE_H
#define FP_LINEMODE_H

#include <sys/types.h>

struct runner;

/* Returns the status of the last command (an fp_status). */
int linemode_run(struct runner *r, pid_t pid);

/*
 * Run one command the way --cmd does: output on stdout, the error on
 * stderr as "flight_profiler: ...".  Returns its status.
 */
int linemode_exec(struct runner *r, const char *line);

#endif
