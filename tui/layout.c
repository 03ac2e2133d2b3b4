/*
 * layout — where each pane goes for the terminal's size, and drawing the
 * panes in their frames; the bars above and below are tui/bars.c.
 */
#include "config.h"

#include "tui/layout.h"

#include <curses.h>
#include <stdio.h>
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

/* The source view at (y, x, h, w): the source, and the locals under it. */
static void
place_source(struct tui *t, int y, int x, int h, int w)
{
	int lh;

	if (!t->panes[PANE_LOCALS].visible) {
		place(&t->panes[PANE_SOURCE], y, x, h, w);
		return;
	}
	lh = (int)t->panes[PANE_LOCALS].ops->nlines(&t->panes[PANE_LOCALS]) + 2;
	if (lh > h / 2)
		lh = h / 2;
	if (lh < 3)
		lh = 3;
	place(&t->panes[PANE_SOURCE], y, x, h - lh, w);
	place(&t->panes[PANE_LOCALS], y + h - lh, x, lh, w);
}

/*
 * The threads pane's width beside the stack pane: 9/20 of the screen, or
 * more when its TOP column would be cut while the stack pane has room to
 * spare (at 160 columns it lost the line number with the stack half empty).
 */
static int
side_by_side_width(struct tui *t, int cols)
{
	int lw = cols * 9 / 20, tw = pane_threads_want_width(&t->panes[PANE_THREADS]);
	int sw = pane_stack_want_width(&t->panes[PANE_STACK]), room;

	if (tw <= lw)
		return lw;
	if (sw < cols * 2 / 5)
		sw = cols * 2 / 5;
	room = cols - sw;
	return tw < room ? tw : room > lw ? room : lw;
}

void
layout_panes(struct tui *t)
{
	int cols = COLS, rows = LINES, ay = 1, ah = rows - 3, top, out = 0, lw, sh, th;
	bool src = t->panes[PANE_SOURCE].visible, loc = src && t->panes[PANE_LOCALS].visible;
	enum pane_id bottom = t->panes[PANE_CONSOLE].visible ? PANE_CONSOLE : PANE_OUTPUT;
	bool outp = t->panes[bottom].visible;
	size_t i;

	int oldh[PANE__COUNT], oldw[PANE__COUNT];

	t->too_small = cols < MIN_COLS || rows < MIN_ROWS;
	if (t->too_small)
		return;
	for (i = 0; i < PANE__COUNT; i++) {
		oldh[i] = t->panes[i].h;
		oldw[i] = t->panes[i].w;
		if (i != PANE_HELP)
			t->panes[i].h = t->panes[i].w = 0;
	}
	if (t->maximised >= 0 && t->panes[t->maximised].visible && t->maximised != PANE_HELP) {
		place(&t->panes[t->maximised], ay, 0, ah, cols);
	} else {
		if (outp) {
			out = bottom == PANE_CONSOLE ? ah / 2 : ah * 2 / 5;
			if (out < 5)
				out = 5;
		}
		top = ah - out;
		if (cols >= 110) {
			lw = side_by_side_width(t, cols);
			place(&t->panes[PANE_THREADS], ay, 0, top, lw);
			if (src) {
				sh = top * (loc ? 3 : 2) / (loc ? 10 : 5);
				if (sh < 4)
					sh = 4;
				place(&t->panes[PANE_STACK], ay, lw, sh, cols - lw);
				place_source(t, ay + sh, lw, top - sh, cols - lw);
			} else {
				place(&t->panes[PANE_STACK], ay, lw, top, cols - lw);
			}
		} else if (src) {
			th = top / (loc ? 5 : 3);
			sh = top / (loc ? 5 : 3);
			place(&t->panes[PANE_THREADS], ay, 0, th, cols);
			place(&t->panes[PANE_STACK], ay + th, 0, sh, cols);
			place_source(t, ay + th + sh, 0, top - th - sh, cols);
		} else {
			/* the threads pane first: a header and a row at least, the
			 * stack pane keeping one row */
			th = top * 2 / 5 < MIN_THREADS_H ? MIN_THREADS_H : top * 2 / 5;
			if (th > top - 3)
				th = top - 3;
			place(&t->panes[PANE_THREADS], ay, 0, th, cols);
			place(&t->panes[PANE_STACK], ay + th, 0, top - th, cols);
		}
		if (outp)
			place(&t->panes[bottom], ay + top, 0, out, cols);
	}
	if (t->panes[PANE_HELP].visible) {
		int w = cols - 4 < 92 ? cols - 4 : 92;
		int h = (int)t->panes[PANE_HELP].ops->nlines(&t->panes[PANE_HELP]) + 2;

		if (h > ah)
			h = ah;
		place(&t->panes[PANE_HELP], ay + (ah - h) / 2, (cols - w) / 2, h, w);
	}
	for (i = 0; i < PANE__COUNT; i++) {
		struct pane *p = &t->panes[i];

		if ((p->h != oldh[i] || p->w != oldw[i]) && p->h > 0 && p->ops->event)
			p->ops->event(p, EV_RESIZE);
		pane_clamp(p);
	}
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
		    line != p->cursor ? -1 : focused ? EL_CURSOR : p->ops->marker ? EL_CURSOR_UNFOCUSED : -1,
		    focused ? t->search_re : NULL);
	}
	tline_free(&l);
}


void
tui_draw(struct tui *t)
{
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
	for (i = 0; i < PANE__COUNT; i++) {
		if (i == PANE_HELP || !t->panes[i].visible || t->panes[i].h == 0)
			continue;
		draw_pane(t, &t->panes[i], t->focus == i);
	}
	if (t->panes[PANE_HELP].visible)
		draw_pane(t, &t->panes[PANE_HELP], true);
	bars_draw_bottom(t);
	refresh();
}

