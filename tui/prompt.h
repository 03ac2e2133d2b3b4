/*
 * prompt — the bottom line's prompts (`:` command, `/` search, `\` filter,
 * the console's `>>> `): editing, histories, what Enter does.
 */
#ifndef FP_TUI_PROMPT_H
#define FP_TUI_PROMPT_H

#include <stdbool.h>

#include "tui/tui.h"

/* Open prompt `mode` (PROMPT_*) with `text` in it (NULL: empty). */
void prompt_open(struct tui *t, int mode, const char *text);
/* A key while a prompt is open. */
void prompt_key(struct tui *t, int key, bool fkey);
/* The next (or previous) match of the search in the focused pane. */
void prompt_search(struct tui *t, bool forward);

#endif
