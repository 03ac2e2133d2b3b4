/*
 * panes — the pane registry: one struct pane per line of tui/pane_table.h,
 * which pane has the focus, which is shown, and the routing of events
 * (selection, "open this") between panes that never call each other.
 * What panes themselves may call is in tui/tui.h; this is for the rest of
 * the framework.  It knows slots (enum pane_slot), never a pane by name.
 */
#ifndef FP_TUI_PANES_H
#define FP_TUI_PANES_H

#include "tui/tui.h"

/* Make and open every pane of the table; the list and main slots shown. */
void panes_open(struct tui *t);
void panes_close(struct tui *t);
/* Send `ev` to every pane (in table order). */
void panes_broadcast(struct tui *t, const struct pane_event *ev);
/* Focus the next (dir 1) or previous (-1) visible pane; overlays skipped. */
void panes_next(struct tui *t, int dir);
/* Back (Esc): close the overlay, or the focused pane (or the one it is
 * part of), or restore the layout, or go back to the list pane, or let the
 * pane have it.  Clearing a search comes between the overlay and the rest:
 * the caller's. */
void panes_back(struct tui *t);
/* Move the cursor or scroll for a movement action; false for others. */
bool panes_move(struct pane *p, enum action a);
/* The keys of the focused pane, for keymap_lookup and keymap_bar. */
struct keymap_pane panes_keys(const struct tui *t);

#endif
