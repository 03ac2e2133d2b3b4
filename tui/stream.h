/*
 * stream — `:watch`, `:trace` and `:monitor` in the TUI while the user
 * goes on working.  The request runs on the agent's session in the background
 * (core/runner_bg); its records reach their pane through runner_io.record
 * from the loop's turn on the socket, so the console, `:` commands, Tab
 * and ? work beside it.  q or Esc in its pane (or Ctrl-C) stops it and
 * nothing else; the agent removes its hooks.  Must never block the loop.
 * One at a time: a second is refused with a clear line.
 */
#ifndef FP_TUI_STREAM_H
#define FP_TUI_STREAM_H

#include <stdbool.h>

#include "tui/tui.h"

/* Does `line` run here in the background (watch, trace, monitor)? */
bool stream_is(const struct tui *t, const char *line);
/* Start it; false with the reason in the status. */
bool stream_start(struct tui *t, const char *line);
bool stream_running(const struct tui *t);
/*
 * Ask the agent to stop it; its end follows.  One that has not ended
 * RUNNER_CANCEL_GRACE_MS later is given up on (stream_tick), and ends as
 * failed.
 */
void stream_cancel(struct tui *t);
/* The loop's turn: ms until it wants the next one, or -1. */
int stream_tick(struct tui *t);
void stream_free(struct tui *t);

#endif
