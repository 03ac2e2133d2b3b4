/*
 * statement — `execute` in the TUI while the user goes on working.  The
 * request runs on the agent's session in the background; what it prints
 * streams into the output pane as it arrives; Esc or Ctrl-C cancels it
 * and nothing else; the refresh, other commands (`:getglobal` ...) and the
 * inside view go on meanwhile, each answer reaching its own request
 * (core/session).  Must never block the loop: nothing here waits for the
 * agent.  One statement at a time.
 */
#ifndef FP_TUI_STATEMENT_H
#define FP_TUI_STATEMENT_H

#include <stdbool.h>

#include "tui/tui.h"

/* Start `execute ...` (the whole line); false with the reason in the status. */
bool statement_start(struct tui *t, const char *line);
bool statement_running(const struct tui *t);
/*
 * Ask the agent to interrupt it (KeyboardInterrupt); its end follows.  A
 * statement that has not stopped RUNNER_CANCEL_GRACE_MS later, or is
 * cancelled twice, is given up on: it goes on in its worker, unwatched.
 */
void statement_cancel(struct tui *t);
/*
 * The loop's turn: read what the agent sent (without blocking) and
 * dispatch it; cancel a statement whose --timeout ran out.  Returns the
 * ms until it wants the next turn, -1 for "only when the socket is
 * readable".  *fd is the socket to poll, or -1.
 */
int statement_tick(struct tui *t, int *fd);
/*
 * Another command is about to write into the output pane: close the
 * statement's entry there; what it prints later goes under a new heading
 * of its own, not under that command's.
 */
void statement_yield_output(struct tui *t);
void statement_free(struct tui *t);

#endif
