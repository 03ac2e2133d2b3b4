/*
 * layout — where each pane goes for the terminal's size, and drawing the
 * panes in their frames; the bars above and below are tui/bars.c.
 */
#include "config.h"

#include "tui/layout.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/bars.h"

#define MIN_COLS 40
#define MIN_ROWS 10
#define MIN_THREADS_H 4		/* frame, header, one row */

/* ---- layout ---------------------------------------------------------------- */

static void
place(struct pane *p, int y, int x, int h, int w)
{
	p->y = y;
	p->x = x;
	p->h = h;
	p->w = w;
}

/* The detail slot at (y, x, h, w): its pane, and the sub pane under it. */
static void
place_detail(struct pane *det, struct pane *sub, int y, int x, int h, int w)
{
	int lh;

	if (sub == NULL) {
		place(det, y, x, h, w);
		return;
	}
	lh = (int)sub->ops->nlines(sub) + 2;
	if (lh > h / 2)
		lh = h / 2;
	if (lh < 3)
		lh = 3;
	place(det, y, x, h - lh, w);
	place(sub, y + h - lh, x, lh, w);
}

static int
want_width(struct pane *p)
{
	return p->ops->want_width ? p->ops->want_width(p) : 0;
}

/*
 * The list pane's width beside the main pane: 9/20 of the screen, or more
 * when its lines would be cut while the main pane has room to spare (at 160
 * columns the threads' TOP lost the line number with the stack half empty).
 */
static int
side_by_side_width(struct pane *list, struct pane *main, int cols)
{
	int lw = cols * 9 / 20, tw = want_width(list), sw = want_width(main), room;

	if (tw <= lw)
		return lw;
	if (sw < cols * 2 / 5)
		sw = cols * 2 / 5;
	room = cols - sw;
	return tw < room ? tw : room > lw ? room : lw;
}

/* The list, main and detail slots in the `top` rows from `ay`. */
static void
place_tiles(struct tui *t, int ay, int top, int cols)
{
	struct pane *list = tui_slot_pane(t, SLOT_LIST), *main = tui_slot_pane(t, SLOT_MAIN);
	struct pane *det = tui_slot_pane(t, SLOT_DETAIL);
	struct pane *sub = det != NULL ? tui_slot_pane(t, SLOT_DETAIL_SUB) : NULL;
	int lw, sh, th;

	if (cols >= 110) {
		lw = side_by_side_width(list, main, cols);
		place(list, ay, 0, top, lw);
		if (det != NULL) {
			sh = top * (sub ? 3 : 2) / (sub ? 10 : 5);
			if (sh < 4)
				sh = 4;
			place(main, ay, lw, sh, cols - lw);
			place_detail(det, sub, ay + sh, lw, top - sh, cols - lw);
		} else {
			place(main, ay, lw, top, cols - lw);
		}
	} else if (det != NULL) {
		th = top / (sub ? 5 : 3);
		sh = top / (sub ? 5 : 3);
		place(list, ay, 0, th, cols);
		place(main, ay + th, 0, sh, cols);
		place_detail(det, sub, ay + th + sh, 0, top - th - sh, cols);
	} else {
		/* the list pane first: a header and a row at least, the main
		 * pane keeping one row */
		th = top * 2 / 5 < MIN_THREADS_H ? MIN_THREADS_H : top * 2 / 5;
		if (th > top - 3)
			th = top - 3;
		place(list, ay, 0, th, cols);
		place(main, ay + th, 0, top - th, cols);
	}
}

/* The top pane's rows out of `room`: its lines, at most a third (half
 * while it has the focus), the tiles under it keeping their minimum. */
static int
top_height(struct tui *t, struct pane *top, int room)
{
	int h = (int)top->ops->nlines(top) + 3, most = t->focus == top ? room / 2 : room / 3;

	if (most > room - MIN_THREADS_H - 3)
		most = room - MIN_THREADS_H - 3;
	if (h > most)
		h = most;
	return h < 4 ? (room >= 4 + MIN_THREADS_H + 3 ? 4 : 0) : h;
}

void
layout_panes(struct tui *t)
{
	int cols = COLS, rows = LINES, ay = 1, ah = rows - 3, out = 0;
	struct pane *bottom = tui_slot_pane(t, SLOT_BOTTOM), *over = tui_slot_pane(t, SLOT_OVERLAY);
	struct pane *top = tui_slot_pane(t, SLOT_TOP);
	int *oldh, *oldw, top_h = 0;
	size_t i;

	t->too_small = cols < MIN_COLS || rows < MIN_ROWS;
	if (t->too_small)
		return;
	oldh = xcalloc(t->npanes, sizeof *oldh);
	oldw = xcalloc(t->npanes, sizeof *oldw);
	for (i = 0; i < t->npanes; i++) {
		oldh[i] = t->panes[i].h;
		oldw[i] = t->panes[i].w;
		if (t->panes[i].ops->slot != SLOT_OVERLAY)
			t->panes[i].h = t->panes[i].w = 0;
	}
	if (t->maximised != NULL && t->maximised->visible && t->maximised->ops->slot != SLOT_OVERLAY) {
		place(t->maximised, ay, 0, ah, cols);
	} else {
		if (bottom != NULL) {
			out = ah * bottom->ops->share / 10;
			if (out < 5)
				out = 5;
		}
		if (top != NULL)
			top_h = top_height(t, top, ah - out);
		place_tiles(t, ay + top_h, ah - out - top_h, cols);
		if (top != NULL)
			place(top, ay, 0, top_h, cols);
		if (bottom != NULL)
			place(bottom, ay + ah - out, 0, out, cols);
	}
	if (over != NULL) {
		int w = cols - 4 < 92 ? cols - 4 : 92, h = (int)over->ops->nlines(over) + 2;

		if (h > ah)
			h = ah;
		place(over, ay + (ah - h) / 2, (cols - w) / 2, h, w);
	}
	for (i = 0; i < t->npanes; i++) {
		struct pane *p = &t->panes[i];

		if ((p->h != oldh[i] || p->w != oldw[i]) && p->h > 0 && p->ops->event)
			p->ops->event(p, &(struct pane_event){ .kind = EV_RESIZE });
		pane_clamp(p);
	}
	free(oldh);
	free(oldw);
}

void
tui_relayout(struct tui *t)
{
	layout_panes(t);
	t->dirty = true;
}

/* ---- drawing ----------------------------------------------------------------- */

static void
draw_frame(struct tui *t, struct pane *p, bool focused)
{
	enum theme_elem border = focused ? EL_BORDER_FOCUS : EL_BORDER;
	struct sbuf title = { 0 };
	struct tline l = { 0 };
	int y, tw;

	p->ops->title(p, &title);
	tline_add(&l, border, glyph(G_TL));
	tline_add(&l, border, glyph(G_HLINE));
	tline_add(&l, focused ? EL_PANE_TITLE_FOCUS : EL_PANE_TITLE, " ");
	tw = p->w - 6;
	if (tw > 0)
		tline_col(&l, focused ? EL_PANE_TITLE_FOCUS : EL_PANE_TITLE, title.s,
		    text_width(title.s, title.len) < tw ? text_width(title.s, title.len) : tw, false);
	tline_add(&l, focused ? EL_PANE_TITLE_FOCUS : EL_PANE_TITLE, " ");
	for (tw = text_width(l.text.s, l.text.len); tw < p->w - 1; tw++)
		tline_add(&l, border, glyph(G_HLINE));
	tline_add(&l, border, glyph(G_TR));
	draw_tline(p->y, p->x, p->w, &l, -1, NULL);

	tline_reset(&l);
	tline_add(&l, border, glyph(G_BL));
	for (tw = 1; tw < p->w - 1; tw++)
		tline_add(&l, border, glyph(G_HLINE));
	tline_add(&l, border, glyph(G_BR));
	draw_tline(p->y + p->h - 1, p->x, p->w, &l, -1, NULL);
	for (y = p->y + 1; y < p->y + p->h - 1; y++) {
		draw_text(y, p->x, 1, border, glyph(G_VLINE));
		draw_text(y, p->x + p->w - 1, 1, border, glyph(G_VLINE));
	}
	tline_free(&l);
	sbuf_free(&title);
}

static void
draw_pane(struct tui *t, struct pane *p, bool focused)
{
	struct tline l = { 0 };
	int y = p->y + 1, x = p->x + 1, w = p->w - 2, rows, r;
	size_t n, line;

	if (p->h < 2 || p->w < 3)
		return;
	draw_frame(t, p, focused);
	if (p->ops->header && p->h > 2) {
		if (p->ops->marker)
			tline_add(&l, EL_HEADER, "  ");
		p->ops->header(p, &l);
		draw_tline(y++, x, w, &l, -1, NULL);
	}
	rows = pane_rows(p);
	n = p->ops->nlines(p);
	pane_clamp(p);
	for (r = 0; r < rows; r++) {
		line = p->top + (size_t)r;
		tline_reset(&l);
		if (line >= n) {
			draw_fill(y + r, x, w, EL_DEFAULT);
			continue;
		}
		if (p->ops->marker) {
			tline_add(&l, EL_DEFAULT, line == p->cursor ? glyph(G_CURSOR) : " ");
			tline_add(&l, EL_DEFAULT, " ");
		}
		p->ops->draw_line(p, line, &l);
		draw_tline(y + r, x, w, &l,
		    line != p->cursor || p->ops->own_cursor ? -1 : focused ? EL_CURSOR : p->ops->marker ? EL_CURSOR_UNFOCUSED : -1,
		    focused ? t->search_re : NULL);
	}
	tline_free(&l);
}


void
tui_draw(struct tui *t)
{
	struct pane *over;
	size_t i;

	erase();
	if (t->too_small) {
		char size[64];

		snprintf(size, sizeof size, "%dx%d, needs %dx%d", COLS, LINES, MIN_COLS, MIN_ROWS);
		draw_text(LINES / 2 - 1, COLS > 18 ? (COLS - 18) / 2 : 0, COLS, EL_STATUS_ERROR,
		    "terminal too small");
		draw_text(LINES / 2, COLS > (int)strlen(size) ? (COLS - (int)strlen(size)) / 2 : 0, COLS,
		    EL_STATUS, size);
		curs_set(0);
		refresh();
		return;
	}
	bars_draw_title(t);
	for (i = 0; i < t->npanes; i++) {
		struct pane *p = &t->panes[i];

		if (p->ops->slot == SLOT_OVERLAY || !p->visible || p->h == 0)
			continue;
		draw_pane(t, p, t->focus == p);
	}
	if ((over = tui_slot_pane(t, SLOT_OVERLAY)) != NULL)
		draw_pane(t, over, true);
	bars_draw_bottom(t);
	refresh();
}

