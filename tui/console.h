/*
 * console — `console` and `execute` in the TUI: the runner reads the
 * console's lines from the prompt and writes into the console pane while
 * the screen keeps refreshing.  Keys typed while a statement runs only
 * interrupt it, scroll, or wait for the next prompt; none reaches the TUI.
 */
#ifndef FP_TUI_CONSOLE_H
#define FP_TUI_CONSOLE_H

#include <stdbool.h>

#include "tui/tui.h"

/* Make the runner read and write through the screen. */
void console_set_io(struct tui *t);
/* Run `console` (console true) or `execute ...`. */
void console_run(struct tui *t, const char *line, bool console);
/* A key while a statement runs. */
void console_busy_key(struct tui *t, int key, bool fkey);
/* Keep a key for when the console is ready for it. */
void console_type_ahead(struct tui *t, int key, bool fkey);
/* A key while the pane of a console that broke has the focus; true if
 * it was the console's. */
bool console_modal_key(struct tui *t, int key, bool fkey);

#endif
