/*
 * bars — the title bar (line 0), and at the bottom the status or prompt
 * line and the function bar generated from the key table, so that it
 * cannot drift from the keys.
 */
#ifndef FP_TUI_BARS_H
#define FP_TUI_BARS_H

#include <stdbool.h>

#include "tui/tui.h"

void bars_draw_title(struct tui *t);
void bars_draw_bottom(struct tui *t);
/* Show `menu` (taken; NULL clears) in the function bar until the next key:
 * the candidates of a Tab. */
void bars_menu_set(char *menu);
/* The key of the function-bar item at column x, as last drawn. */
bool bars_key_at(int x, int *key);

#endif
