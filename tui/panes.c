/*
 * panes — the registry, focus, showing and hiding, and events between
 * panes.  Where each pane goes and what Back does follow from its slot.
 */
#include "config.h"

#include "tui/panes.h"

#include <stdlib.h>

#include "core/regex.h"
#include "tui/layout.h"

/* Every pane there is, in the order of tui/pane_table.h. */
static const struct pane_ops *const pane_table[] = {
#define PANE(name) &pane_##name##_ops,
#include "tui/pane_table.h"
#undef PANE
};

void
panes_open(struct tui *t)
{
	size_t i;

	t->npanes = FP_NELEM(pane_table);
	t->panes = xcalloc(t->npanes, sizeof *t->panes);
	/* every ops first: a pane may look at the others' (the help does) */
	for (i = 0; i < t->npanes; i++) {
		t->panes[i].ops = pane_table[i];
		t->panes[i].tui = t;
	}
	for (i = 0; i < t->npanes; i++) {
		t->panes[i].ops->open(&t->panes[i]);
		if (pane_table[i]->slot == SLOT_LIST || pane_table[i]->slot == SLOT_MAIN)
			t->panes[i].visible = true;
	}
	t->focus = tui_slot_pane(t, SLOT_LIST);
	t->maximised = NULL;
}

void
panes_close(struct tui *t)
{
	size_t i;

	for (i = 0; i < t->npanes; i++)
		t->panes[i].ops->close(&t->panes[i]);
	free(t->panes);
	t->panes = NULL;
	t->npanes = 0;
}

struct pane *
tui_pane(struct tui *t, const struct pane_ops *ops)
{
	size_t i;

	for (i = 0; i < t->npanes; i++)
		if (t->panes[i].ops == ops)
			return &t->panes[i];
	return NULL;
}

struct pane *
tui_slot_pane(struct tui *t, enum pane_slot slot)
{
	size_t i;

	for (i = 0; i < t->npanes; i++)
		if (t->panes[i].visible && t->panes[i].ops->slot == slot)
			return &t->panes[i];
	return NULL;
}

static bool
fixed(const struct pane *p)
{
	/* the top slot too: once a process set shows it, it stays */
	return p->ops->slot == SLOT_LIST || p->ops->slot == SLOT_MAIN || p->ops->slot == SLOT_TOP;
}

/* Where the focus goes back to from `p`. */
static struct pane *
up(struct tui *t, const struct pane *p)
{
	struct pane *q = NULL;

	switch (p->ops->slot) {
	case SLOT_OVERLAY:
		q = t->before_overlay;
		break;
	case SLOT_DETAIL_SUB:
		q = tui_slot_pane(t, SLOT_DETAIL);
		break;
	case SLOT_DETAIL:
		q = tui_slot_pane(t, SLOT_MAIN);
		break;
	default:
		break;
	}
	return q != NULL && q->visible ? q : tui_slot_pane(t, SLOT_LIST);
}

int
pane_rows(const struct pane *p)
{
	int n = p->h - 2 - (p->ops->header ? 1 : 0);

	return n > 0 ? n : 0;
}

void
pane_clamp(struct pane *p)
{
	size_t n = p->ops->nlines(p), rows = (size_t)pane_rows(p);

	if (p->cursor >= n)
		p->cursor = n ? n - 1 : 0;
	if (rows == 0)
		return;
	if (p->cursor < p->top)
		p->top = p->cursor;
	if (p->cursor >= p->top + rows)
		p->top = p->cursor - rows + 1;
	/* no empty space below the last line if there is more above */
	if (p->top + rows > n)
		p->top = n > rows ? n - rows : 0;
}

void
pane_lines_dropped(struct pane *p, size_t n)
{
	p->cursor = p->cursor > n ? p->cursor - n : 0;
	p->top = p->top > n ? p->top - n : 0;
}

void
pane_set_cursor(struct pane *p, size_t line)
{
	p->cursor = line;
	pane_clamp(p);
	if (p->ops->moved)
		p->ops->moved(p);
	p->tui->dirty = true;
}

/* Is its command streaming now (a background watch, monitor)? */
static bool
live(struct pane *p)
{
	return p->ops->live != NULL && p->ops->live(p);
}

static void
hide(struct tui *t, struct pane *p)
{
	struct pane *sub;

	if (fixed(p) || !p->visible)
		return;
	if (p->ops->slot == SLOT_DETAIL && (sub = tui_slot_pane(t, SLOT_DETAIL_SUB)) != NULL)
		tui_hide_pane(t, sub);
	if (t->focus == p)
		t->focus = up(t, p);
	p->visible = false;
	if (!t->focus->visible)
		t->focus = tui_slot_pane(t, SLOT_LIST);
	if (t->maximised == p)
		t->maximised = NULL;
	layout_panes(t);
	t->dirty = true;
}

void
tui_show_pane(struct tui *t, struct pane *p, bool focus)
{
	struct pane *other = tui_slot_pane(t, p->ops->slot);

	/*
	 * One pane per slot: the output and the console share the bottom.  A
	 * pane whose command streams in the background (a watch) comes back
	 * when the one that took its slot (an answer, the console) closes.
	 */
	if (other != NULL && other != p && !fixed(other)) {
		if (live(other)) {
			t->displaced = other;
			t->displaced_focus = t->focus == other;
		}
		hide(t, other);
	}
	if (p == t->displaced)
		t->displaced = NULL;
	if (p->ops->slot == SLOT_OVERLAY && !p->visible)
		t->before_overlay = t->focus;
	p->visible = true;
	if (focus)
		t->focus = p;
	if (t->maximised != NULL)
		t->maximised = t->focus;
	layout_panes(t);
	t->dirty = true;
}

void
tui_hide_pane(struct tui *t, struct pane *p)
{
	struct pane *back = t->displaced;
	bool was = p->visible;

	hide(t, p);
	if (was && back != NULL && back != p && back->ops->slot == p->ops->slot &&
	    !back->visible && tui_slot_pane(t, p->ops->slot) == NULL) {
		t->displaced = NULL;
		tui_show_pane(t, back, t->displaced_focus);
	}
}

void
panes_broadcast(struct tui *t, const struct pane_event *ev)
{
	size_t i;

	for (i = 0; i < t->npanes; i++)
		if (t->panes[i].ops->event != NULL)
			t->panes[i].ops->event(&t->panes[i], ev);
}

void
tui_select_thread(struct tui *t, pid_t tid)
{
	if (tid == t->sel_tid)
		return;
	t->sel_tid = tid;
	panes_broadcast(t, &(struct pane_event){ .kind = EV_SELECT, .tid = tid });
	t->dirty = true;
}

bool
tui_open(struct tui *t, const struct pane_event *ev)
{
	size_t i;

	for (i = 0; i < t->npanes; i++) {
		struct pane *p = &t->panes[i];

		if (p->ops->event != NULL && p->ops->event(p, ev)) {
			tui_show_pane(t, p, true);
			return true;
		}
	}
	return false;
}

void
panes_next(struct tui *t, int dir)
{
	size_t n = t->npanes, i, k = (size_t)(t->focus - t->panes);

	for (i = 0; i < n; i++) {
		k = (k + (dir > 0 ? 1 : n - 1)) % n;
		if (t->panes[k].ops->slot != SLOT_OVERLAY && t->panes[k].visible)
			break;
	}
	t->focus = &t->panes[k];
	if (t->maximised != NULL)
		t->maximised = t->focus;
	layout_panes(t);
	t->dirty = true;
}

void
panes_back(struct tui *t)
{
	struct pane *p = t->focus, *overlay = tui_slot_pane(t, SLOT_OVERLAY);

	if (overlay != NULL)
		tui_hide_pane(t, overlay);
	else if (p->ops->back_first && p->ops->key != NULL && p->ops->key(p, A_BACK))
		;	/* the pane went back a step of its own (zoomed out) */
	else if (p->ops->slot == SLOT_DETAIL_SUB)
		tui_hide_pane(t, up(t, p));	/* it is part of the detail pane */
	else if (!fixed(p))
		tui_hide_pane(t, p);
	else if (t->maximised != NULL) {
		t->maximised = NULL;
		layout_panes(t);
	} else if (p->ops->slot == SLOT_MAIN)
		t->focus = tui_slot_pane(t, SLOT_LIST);
	else if (p->ops->key != NULL)
		p->ops->key(p, A_BACK);
	t->dirty = true;
}

struct keymap_pane
panes_keys(const struct tui *t)
{
	return (struct keymap_pane){ t->focus->ops->keys, t->focus->ops->slot == SLOT_OVERLAY };
}

bool
panes_move(struct pane *p, enum action a)
{
	size_t n = p->ops->nlines(p), rows = (size_t)(pane_rows(p) > 1 ? pane_rows(p) - 1 : 1);

	switch (a) {
	case A_UP:
		if (p->cursor > 0)
			pane_set_cursor(p, p->cursor - 1);
		return true;
	case A_DOWN:
		if (p->cursor + 1 < n)
			pane_set_cursor(p, p->cursor + 1);
		return true;
	case A_PAGE_UP:
		p->top = p->top > rows ? p->top - rows : 0;
		pane_set_cursor(p, p->cursor > rows ? p->cursor - rows : 0);
		return true;
	case A_PAGE_DOWN:
		p->top += rows;
		pane_set_cursor(p, p->cursor + rows < n ? p->cursor + rows : (n ? n - 1 : 0));
		return true;
	case A_FIRST:
		pane_set_cursor(p, 0);
		return true;
	case A_LAST:
		pane_set_cursor(p, n ? n - 1 : 0);
		return true;
	default:
		return false;
	}
}

bool
pane_filter_compile(const char *re, pcre2_code **code, char **cause)
{
	*code = NULL;
	if (re == NULL || *re == '\0')
		return true;
	*code = regex_compile(re, PCRE2_CASELESS, "filter", cause);
	return *code != NULL;
}
