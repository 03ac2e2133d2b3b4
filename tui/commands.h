/*
 * commands — what Enter on the `:` prompt runs: the TUI's own commands
 * (quit, save, theme, delay, help) here, console and execute through
 * tui/console.c, the rest through core/runner into the output pane.
 */
#ifndef FP_TUI_COMMANDS_H
#define FP_TUI_COMMANDS_H

#include <stddef.h>

#include "tui/tui.h"

void commands_run(struct tui *t, const char *line);
/* The TUI-only commands, for completion and help. */
const struct local_command *commands_local(size_t *n);

#endif
