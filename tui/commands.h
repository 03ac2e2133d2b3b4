/*
 * commands — what Enter on the `:` prompt runs: every command through
 * core/runner and the command table, its output into the output pane;
 * statements (console, execute) through tui/console.c.  The TUI's own
 * entries of the table (quit, save, theme, delay) have their handlers here.
 */
#ifndef FP_TUI_COMMANDS_H
#define FP_TUI_COMMANDS_H

#include <stddef.h>

#include "tui/tui.h"

void commands_run(struct tui *t, const char *line);
/* Bind the handlers of the table's TUI entries to `t`; NULL unbinds them. */
void commands_bind(struct tui *t);

#endif
