/*
 * layout — places the panes for the terminal's size and draws them in
 * their frames (tui_draw, tui_relayout in tui/tui.h).  It decides where a
 * pane goes, never what a pane shows.
 */
#ifndef FP_TUI_LAYOUT_H
#define FP_TUI_LAYOUT_H

#include "tui/tui.h"

/* Place every visible pane again (sizes, focus, maximised); EV_RESIZE to
 * the panes whose size changed. */
void layout_panes(struct tui *t);

#endif
