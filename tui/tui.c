/*
 * tui — the screen, the layout, the main loop and key dispatch.
 *
 * One thread, one loop: poll() on the terminal with the time left until
 * the next refresh; keys are handled as they come; the target is read
 * (py_reader_snapshot, from outside) when the timer expires; the screen is
 * redrawn only when something changed, through curses' screen diff (no
 * clear, so no flicker).
 */
#include "config.h"

#include "tui/tui.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include "core/command.h"
#include "core/procfs.h"
#include "core/render.h"
#include "core/runner.h"
#include "core/termsafe.h"
#include "tui/inside.h"
#include "tui/termguard.h"

#define MIN_COLS 40
#define MIN_ROWS 10
#define MIN_THREADS_H 4		/* frame, header, one row */
#ifndef CTRL
#define CTRL(c) ((c) & 0x1f)
#endif
#define ESC 27

/* Every pane there is; adding one is a file and a line here. */
static const struct pane_ops *const pane_table[PANE__COUNT] = {
	[PANE_THREADS] = &pane_threads_ops,
	[PANE_STACK] = &pane_stack_ops,
	[PANE_SOURCE] = &pane_source_ops,
	[PANE_LOCALS] = &pane_locals_ops,
	[PANE_OUTPUT] = &pane_output_ops,
	[PANE_CONSOLE] = &pane_console_ops,
	[PANE_HELP] = &pane_help_ops,
};

static const struct local_command local_commands[] = {
	{ "quit", "", "leave (the target keeps running); also q and exit", NULL },
	{ "save", "FILE", "write the selected thread's stack to FILE", NULL },
	{ "theme", "[NAME]", "switch theme; without NAME, list them", theme_list },
	{ "delay", "SECONDS", "set the refresh interval", NULL },
};

/* Function-bar items as last drawn, for mouse clicks. */
static struct {
	int x0, x1, key;
} bar_items[32];
static size_t nbar_items;

/* Candidates of the last Tab, shown in the function bar until the next key. */
static char *completion_menu;

/* ---- helpers for panes ------------------------------------------------- */

void
tui_status(struct tui *t, bool error, const char *fmt, ...)
{
	va_list ap;

	free(t->status);
	va_start(ap, fmt);
	t->status = xvasprintf(fmt, ap);
	va_end(ap);
	t->status_error = error;
	t->dirty = true;
}

const struct py_thread *
tui_selected_thread(const struct tui *t)
{
	size_t i;

	if (t->snap == NULL || t->sel_tid == 0)
		return NULL;
	for (i = 0; i < t->snap->nthreads; i++)
		if (t->snap->threads[i].tid == t->sel_tid)
			return &t->snap->threads[i];
	return NULL;
}

int
pane_rows(const struct pane *p)
{
	int n = p->h - 2 - (p->ops->header ? 1 : 0);

	return n > 0 ? n : 0;
}

static void
clamp(struct pane *p)
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
pane_set_cursor(struct pane *p, size_t line)
{
	p->cursor = line;
	clamp(p);
	if (p->ops->moved)
		p->ops->moved(p);
	p->tui->dirty = true;
}

static void layout(struct tui *t);

void
tui_show_pane(struct tui *t, enum pane_id id, bool focus)
{
	/* the output and the console share the bottom of the screen */
	if (id == PANE_OUTPUT && t->panes[PANE_CONSOLE].visible)
		tui_hide_pane(t, PANE_CONSOLE);
	else if (id == PANE_CONSOLE && t->panes[PANE_OUTPUT].visible)
		tui_hide_pane(t, PANE_OUTPUT);
	t->panes[id].visible = true;
	if (focus)
		t->focus = id;
	if (t->maximised >= 0)
		t->maximised = (int)t->focus;
	layout(t);
	t->dirty = true;
}

void
tui_hide_pane(struct tui *t, enum pane_id id)
{
	if (id == PANE_THREADS || id == PANE_STACK)
		return;
	if (id == PANE_SOURCE && t->panes[PANE_LOCALS].visible)
		tui_hide_pane(t, PANE_LOCALS);
	t->panes[id].visible = false;
	if (t->focus == id)
		t->focus = id == PANE_HELP ? t->before_help : id == PANE_SOURCE ? PANE_STACK :
		    id == PANE_LOCALS ? PANE_SOURCE : PANE_THREADS;
	if (!t->panes[t->focus].visible)
		t->focus = PANE_THREADS;
	if (t->maximised == (int)id)
		t->maximised = -1;
	layout(t);
	t->dirty = true;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
tui_copy(struct tui *t, const char *text)
{
	size_t n = strlen(text), i, lines = 0;
	struct sbuf seq = { 0 };

	sbuf_add(&seq, "\033]52;c;");
	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)text[i] << 16;
		char q[4];

		if (i + 1 < n)
			v |= (unsigned char)text[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)text[i + 2];
		q[0] = b64[(v >> 18) & 63];
		q[1] = b64[(v >> 12) & 63];
		q[2] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? b64[v & 63] : '=';
		sbuf_addn(&seq, q, 4);
	}
	sbuf_add(&seq, "\a");
	for (i = 0; i < n; i++)
		lines += text[i] == '\n';
	if (isatty(STDOUT_FILENO))
		(void)!write(STDOUT_FILENO, seq.s, seq.len);
	sbuf_free(&seq);
	tui_status(t, false, "copied %zu lines to the clipboard (OSC 52; `:save FILE` writes a file)", lines);
}

/* ---- the model ----------------------------------------------------------- */

static int
cmp_tick(const void *a, const void *b)
{
	const struct tick_sample *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Take a new snapshot as the model: CPU% since the last one, events. */
void
tui_set_snapshot(struct tui *t, struct py_snapshot *snap)
{
	long hz = sysconf(_SC_CLK_TCK);
	double dt = t->prev_ns ? (double)(snap->taken_ns - t->prev_ns) / 1e9 : 0;
	size_t i;

	free(t->cpu);
	t->cpu = xcalloc(snap->nthreads ? snap->nthreads : 1, sizeof *t->cpu);
	for (i = 0; i < snap->nthreads; i++) {
		struct tick_sample key = { snap->threads[i].tid, 0 }, *prev = NULL;

		if (t->nprev > 0 && snap->threads[i].tid != 0)
			prev = bsearch(&key, t->prev, t->nprev, sizeof *t->prev, cmp_tick);
		if (prev == NULL || dt <= 0 || hz <= 0 || snap->threads[i].cpu_ticks < prev->ticks)
			t->cpu[i] = -1;
		else
			t->cpu[i] = (double)(snap->threads[i].cpu_ticks - prev->ticks) * 100.0 /
			    ((double)hz * dt);
	}
	free(t->prev);
	t->prev = xcalloc(snap->nthreads ? snap->nthreads : 1, sizeof *t->prev);
	for (i = 0; i < snap->nthreads; i++)
		t->prev[i] = (struct tick_sample){ snap->threads[i].tid, snap->threads[i].cpu_ticks };
	t->nprev = snap->nthreads;
	qsort(t->prev, t->nprev, sizeof *t->prev, cmp_tick);
	t->prev_ns = snap->taken_ns;

	inside_apply_names(t, snap);
	py_snapshot_free(t->snap);
	t->snap = snap;
	t->panes[PANE_THREADS].ops->event(&t->panes[PANE_THREADS], EV_SNAPSHOT);
	t->panes[PANE_STACK].ops->event(&t->panes[PANE_STACK], EV_SNAPSHOT);
	for (i = 0; i < PANE__COUNT; i++)
		clamp(&t->panes[i]);
	t->dirty = true;
}

/* Still running: it exists and is not a zombie waiting for its parent. */
static bool
target_alive(pid_t pid)
{
	struct proc_thread_stat st;

	if (!procfs_exists(pid))
		return false;
	return !procfs_thread_stat(pid, pid, &st) || (st.state != 'Z' && st.state != 'X');
}

/* Read the target again.  Returns an fp_status. */
static int
take_snapshot(struct tui *t, char **causep)
{
	struct py_snapshot_opts opts = { .native = t->native };
	struct py_snapshot *snap;
	char *cause = NULL;
	int rc;

	t->next_refresh_ns = now_ns() + (uint64_t)(t->delay * 1e9);
	if (t->exited || t->reader == NULL)
		return FP_OK;
	rc = py_reader_snapshot(t->reader, &opts, &snap, &cause);
	if (rc == FP_OK) {
		tui_set_snapshot(t, snap);
		free(cause);
		return FP_OK;
	}
	if (rc == FP_EEXITED || rc == FP_ENOPROC || !target_alive(t->pid)) {
		t->exited = true;
		inside_quiesce(t);
		if (t->runner != NULL && runner_session(t->runner) != NULL)
			runner_session_failed(t->runner);	/* the agent went with it */
		tui_status(t, true, "process %d exited; its last snapshot stays on screen (q quits)",
		    (int)t->pid);
	} else {
		tui_status(t, true, "%s", cause ? cause : "cannot read the process");
	}
	if (causep != NULL)
		*causep = cause;
	else
		free(cause);
	return rc;
}

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

static void
layout(struct tui *t)
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
		clamp(p);
	}
}

void
tui_relayout(struct tui *t)
{
	layout(t);
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
	clamp(p);
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

/* The target's command line with argv[0] shortened to its base name. */
static const char *
short_cmdline(const char *cmdline)
{
	const char *end = strchr(cmdline, ' '), *slash;

	if (end == NULL)
		end = cmdline + strlen(cmdline);
	for (slash = end; slash > cmdline && slash[-1] != '/'; slash--)
		;
	return slash;
}

static void
draw_title(struct tui *t)
{
	struct tline l = { 0 }, r = { 0 };
	const struct py_thread *holder = NULL;
	const char *cmd = short_cmdline(t->target_cmdline), *dot = glyph(G_DOT);
	char *brand, *head, *tail;
	const char *agent;
	int cols = COLS, rw, cmdw, avail;
	enum theme_elem el = t->exited ? EL_TITLE_ALERT : EL_TITLE;
	size_t i;

	for (i = 0; t->snap != NULL && i < t->snap->nthreads; i++)
		if (t->snap->threads[i].gil == GIL_HELD)
			holder = &t->snap->threads[i];

	if (t->exited)
		tline_add(&r, EL_TITLE_ALERT, " TARGET EXITED ");
	else if (t->paused)
		tline_add(&r, EL_TITLE_PAUSED, " PAUSED ");
	else
		tline_addf(&r, el, " live %gs ", t->delay);
	rw = text_width(r.text.s, r.text.len);

	/* Drop the least useful parts first when the line is short. */
	brand = xasprintf(" flight_profiler %s", dot);
	head = xasprintf(" pid %d %s ", (int)t->pid, dot);
	switch (inside_state(t)) {
	case RUNNER_AGENT_ATTACHED:
		agent = draw_utf8() ? "\u25cf" : "on";
		break;
	case RUNNER_AGENT_LOST:
		agent = draw_utf8() ? "\u2715 lost" : "lost";
		break;
	default:
		agent = draw_utf8() ? "\u25cb" : "off";
		break;
	}
	tail = xasprintf(" %s CPython %s %s GIL: %s %s agent %s ", dot, t->version, dot,
	    holder ? (holder->name ? holder->name : "?") : "none", dot, agent);
	avail = cols - rw - text_width(head, strlen(head)) - text_width(tail, strlen(tail));
	if (avail - text_width(brand, strlen(brand)) >= 24) {
		tline_add(&l, el, brand);
		avail -= text_width(brand, strlen(brand));
	}
	tline_add(&l, el, head);
	cmdw = text_width(cmd, strlen(cmd));
	if (cmdw > avail)
		cmdw = avail > 8 ? avail : 8;
	tline_col(&l, el, cmd, cmdw, false);
	tline_add(&l, el, tail);
	draw_tline(0, 0, cols - rw, &l, -1, NULL);
	draw_tline(0, cols - rw, rw, &r, -1, NULL);
	free(brand);
	free(head);
	free(tail);
	tline_free(&l);
	tline_free(&r);
}

/* The function bar's bindings for the focused pane, in table order. */
struct bar {
	const struct keybinding *b[32];
	size_t n;
};

static void
bar_collect(const struct keybinding *b, void *arg)
{
	struct bar *bar = arg;

	if (bar->n < FP_NELEM(bar->b))
		bar->b[bar->n++] = b;
}

static int
bar_width(const struct keybinding *b, bool paused)
{
	char buf[16];
	const char *k = keymap_key_name(b->key, buf, sizeof buf), *label = keymap_bar_label(b, paused);

	return text_width(k, strlen(k)) + 1 + text_width(label, strlen(label)) + 2;
}

/*
 * Draw the bar; when it is too wide, drop items before the last (Quit
 * stays: the one key everybody looks for).
 */
static void
bar_draw(struct tline *l, const char *pane, int cols, bool paused)
{
	struct bar bar = { .n = 0 };
	char buf[16];
	int w = 0;
	size_t i;

	keymap_bar(pane, bar_collect, &bar);
	for (i = 0; i < bar.n; i++)
		w += bar_width(bar.b[i], paused);
	while (w > cols && bar.n > 2) {
		w -= bar_width(bar.b[bar.n - 2], paused);
		bar.b[bar.n - 2] = bar.b[bar.n - 1];
		bar.n--;
	}
	for (i = 0; i < bar.n; i++) {
		int x0 = text_width(l->text.s ? l->text.s : "", l->text.len);

		tline_add(l, EL_BAR_KEY, keymap_key_name(bar.b[i]->key, buf, sizeof buf));
		tline_add(l, EL_BAR, " ");
		tline_add(l, EL_BAR, keymap_bar_label(bar.b[i], paused));
		tline_add(l, EL_BAR, "  ");
		if (nbar_items < FP_NELEM(bar_items)) {
			bar_items[nbar_items].x0 = x0;
			bar_items[nbar_items].x1 = text_width(l->text.s, l->text.len);
			bar_items[nbar_items++].key = bar.b[i]->key;
		}
	}
}
/* The bar while a prompt is open: key, label, key, label, ..., NULL. */
static void
bar_pairs(struct tline *l, const char *const *pairs)
{
	for (; pairs[0] != NULL; pairs += 2) {
		tline_add(l, EL_BAR_KEY, pairs[0]);
		tline_add(l, EL_BAR, pairs[1]);
	}
}


static void
draw_bottom(struct tui *t)
{
	struct tline l = { 0 };
	int y = LINES - 2, cols = COLS, cx = -1;
	const char *prefix;

	nbar_items = 0;
	if (t->prompt != PROMPT_NONE) {
		const char *text = cmdline_text(&t->edit);
		int before, skip = 0, avail;
		const char *p = text;

		prefix = t->prompt == PROMPT_COMMAND ? ":" : t->prompt == PROMPT_SEARCH ? "/" :
		    t->prompt == PROMPT_CONSOLE ? t->console_prompt : "\\";
		tline_add(&l, EL_PROMPT_PREFIX, prefix);
		avail = cols - 1 - text_width(prefix, strlen(prefix));
		before = text_width(text, t->edit.cursor);
		/* scroll horizontally so the cursor stays on screen */
		while (before - skip >= avail && *p != '\0') {
			int w = text_width(p, 1);

			p++;
			while ((*p & 0xc0) == 0x80)
				p++;
			skip += w ? w : 1;
		}
		tline_add(&l, EL_PROMPT, p);
		draw_tline(y, 0, cols, &l, -1, NULL);
		cx = text_width(prefix, strlen(prefix)) + before - skip;
	} else if (t->status != NULL) {
		tline_add(&l, t->status_error ? EL_STATUS_ERROR : EL_STATUS, t->status);
		draw_tline(y, 0, cols, &l, -1, NULL);
	} else {
		draw_fill(y, 0, cols, EL_STATUS);
	}

	tline_reset(&l);
	if (completion_menu != NULL) {
		tline_add(&l, EL_BAR, completion_menu);
	} else if (t->busy) {
		static const char *const keys[] = { "C-c", " Interrupt  ", "Esc",
		    " Interrupt and leave  ", "PgUp/PgDn", " Scroll  ", NULL };

		bar_pairs(&l, keys);
	} else if (t->prompt == PROMPT_CONSOLE) {
		static const char *const keys[] = { "Enter", " Run  ", "Esc", " Leave  ",
		    "C-c", " Drop line  ", "Up/Down", " History  ", "PgUp/PgDn",
		    " Scroll  ", NULL };

		bar_pairs(&l, keys);
	} else if (t->prompt == PROMPT_COMMAND) {
		static const char *const keys[] = { "Enter", " Run  ", "Esc", " Cancel  ",
		    "Tab", " Complete  ", "Up/Down", " History  ", NULL };

		bar_pairs(&l, keys);
	} else if (t->prompt != PROMPT_NONE) {
		static const char *const keys[] = { "Enter", " Apply  ", "Esc", " Cancel  ",
		    "Up/Down", " History  ", NULL };

		bar_pairs(&l, keys);
	} else {
		bar_draw(&l, t->panes[t->focus].ops->name, cols, t->paused);
	}
	tline_add(&l, EL_BAR, " ");
	draw_tline(LINES - 1, 0, cols, &l, -1, NULL);
	tline_free(&l);

	if (cx >= 0 && cx < cols) {
		move(y, cx);
		curs_set(1);
	} else {
		curs_set(0);
	}
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
	draw_title(t);
	for (i = 0; i < PANE__COUNT; i++) {
		if (i == PANE_HELP || !t->panes[i].visible || t->panes[i].h == 0)
			continue;
		draw_pane(t, &t->panes[i], t->focus == i);
	}
	if (t->panes[PANE_HELP].visible)
		draw_pane(t, &t->panes[PANE_HELP], true);
	draw_bottom(t);
	refresh();
}

/* ---- search -------------------------------------------------------------------- */

static pcre2_code *
compile(const char *pattern, char **cause)
{
	uint32_t flags = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
	const char *c;
	pcre2_code *re;
	PCRE2_SIZE off;
	int err;

	/* smart case, as in less -i and vim's smartcase */
	for (c = pattern; *c != '\0' && !(*c >= 'A' && *c <= 'Z'); c++)
		;
	if (*c == '\0')
		flags |= PCRE2_CASELESS;
	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, flags, &err, &off, NULL);
	if (re == NULL) {
		PCRE2_UCHAR msg[256];

		pcre2_get_error_message(err, msg, sizeof msg);
		fail(cause, FP_EUSAGE, "bad search pattern at offset %zu: %s", (size_t)off, (char *)msg);
	}
	return re;
}

static void
search(struct tui *t, bool forward)
{
	struct pane *p = &t->panes[t->focus];
	size_t n = p->ops->nlines(p), k, i;
	pcre2_match_data *md;
	struct tline l = { 0 };
	bool wrapped = false;

	if (t->search_re == NULL) {
		tui_status(t, true, "no search yet: / searches");
		return;
	}
	md = pcre2_match_data_create_from_pattern(t->search_re, NULL);
	for (k = 1; k <= n; k++) {
		i = forward ? (p->cursor + k) % n : (p->cursor + n - k % n) % n;
		if (forward ? i <= p->cursor : i >= p->cursor)
			wrapped = true;
		tline_reset(&l);
		p->ops->draw_line(p, i, &l);
		if (pcre2_match(t->search_re, (PCRE2_SPTR)(l.text.s ? l.text.s : ""), l.text.len, 0, 0,
		    md, NULL) >= 0) {
			size_t rows = (size_t)pane_rows(p);

			p->cursor = i;
			if (i < p->top || i >= p->top + rows)
				p->top = i > rows / 2 ? i - rows / 2 : 0;
			pane_set_cursor(p, i);
			if (wrapped)
				tui_status(t, false, "search wrapped around: %s", t->search);
			else
				tui_status(t, false, "/%s", t->search);
			break;
		}
	}
	if (k > n)
		tui_status(t, true, "pattern not found in this pane: %s", t->search);
	pcre2_match_data_free(md);
	tline_free(&l);
}

/* ---- commands ---------------------------------------------------------------- */

static void
apply_theme(struct tui *t, const char *name)
{
	struct sbuf errs = { 0 };
	struct theme th;
	char *cause = NULL;

	if (theme_load(&th, name, &errs, &cause) != FP_OK) {
		tui_status(t, true, "%s", cause);
		free(cause);
		return;
	}
	t->theme = th;
	theme_apply(&t->theme, t->use_color);
	clearok(curscr, TRUE);
	if (errs.len > 0) {
		char *nl = strchr(errs.s, '\n');
		size_t more = 0, i;

		for (i = 0; i < errs.len; i++)
			more += errs.s[i] == '\n';
		if (nl != NULL)
			*nl = '\0';
		tui_status(t, true, "%s%s", errs.s, more > 1 ? " (and more; the rest of the theme loaded)" : "");
	} else {
		tui_status(t, false, "theme %s%s", name, t->use_color ? "" : " (no colours: NO_COLOR or the terminal)");
	}
	sbuf_free(&errs);
}

static void
save_stack(struct tui *t, const char *file)
{
	struct sbuf text = { 0 };
	char *path;
	FILE *f;
	const char *home = getenv("HOME");

	if (strncmp(file, "~/", 2) == 0 && home != NULL)
		path = xasprintf("%s/%s", home, file + 2);
	else
		path = xstrdup(file);
	pane_stack_text(&t->panes[PANE_STACK], &text);
	if (text.len == 0) {
		tui_status(t, true, "no thread selected: nothing to save");
	} else if ((f = fopen(path, "w")) == NULL) {
		tui_status(t, true, "cannot write %s: %s", path, strerror(errno));
	} else {
		fputs(text.s, f);
		if (fclose(f) != 0)
			tui_status(t, true, "cannot write %s: %s", path, strerror(errno));
		else
			tui_status(t, false, "wrote the stack of thread %d to %s", (int)t->sel_tid, path);
	}
	free(path);
	sbuf_free(&text);
}

/* ---- console and execute: the runner reads and writes through the screen -- */

static void pump(struct tui *t, bool busy);
static void open_prompt(struct tui *t, int mode, const char *text);
static void run_in_console(struct tui *t, const char *line, bool console);

static void
console_write(void *ctx, const char *text, size_t len)
{
	struct tui *t = ctx;

	pane_console_write(&t->panes[PANE_CONSOLE], text, len);
}

/*
 * The console's next line: a modal prompt on the command line, while the
 * screen goes on refreshing.  NULL at the end (Esc, Ctrl-D, the target or
 * the terminal gone); NULL with *interrupted for Ctrl-C.
 */
static char *
console_read_line(void *ctx, const char *prompt, bool *interrupted)
{
	struct tui *t = ctx;
	char *line = NULL;

	*interrupted = false;
	t->busy = false;
	if (t->console_leave || t->quit || t->exited) {
		t->console_leave = false;
		return NULL;
	}
	free(t->console_prompt);
	t->console_prompt = xstrdup(prompt);
	t->console_input = CONSOLE_WAIT;
	open_prompt(t, PROMPT_CONSOLE, NULL);
	while (t->console_input == CONSOLE_WAIT && !t->quit && !t->exited)
		pump(t, false);
	t->prompt = PROMPT_NONE;
	t->dirty = true;
	if (t->console_input == CONSOLE_LINE) {
		line = t->console_line;
		t->console_line = NULL;
		inside_quiesce(t);	/* the statement needs the session */
	} else if (t->console_input == CONSOLE_INTERRUPT) {
		*interrupted = true;
	}
	return line;
}

/* While a statement runs: keep the screen alive; true interrupts it. */
static bool
console_poll(void *ctx)
{
	struct tui *t = ctx;
	bool stop;

	if (!t->busy) {
		t->busy = true;
		t->dirty = true;
	}
	pump(t, true);
	stop = t->interrupt || t->quit;
	t->interrupt = false;
	return stop;
}

/* Keep a key typed before the console is ready for it: its next lines. */
static void
type_ahead(struct tui *t, int key, bool fkey)
{
	if (t->nahead < FP_NELEM(t->ahead)) {
		t->ahead[t->nahead].key = key;
		t->ahead[t->nahead++].fkey = fkey;
	}
}

/* Keys while a statement runs: interrupt, leave, scroll. */
static void
busy_key(struct tui *t, int key, bool fkey)
{
	t->dirty = true;
	if (fkey && key == KEY_RESIZE) {
		layout(t);
	} else if (!fkey && key == CTRL('c')) {
		t->interrupt = true;
		tui_status(t, false, "interrupting the statement (KeyboardInterrupt)...");
	} else if (!fkey && key == ESC) {
		t->interrupt = true;
		t->console_leave = t->console_open;
		tui_status(t, false, "interrupting the statement%s...",
		    t->console_open ? ", then leaving the console" : "");
	} else if (fkey && (key == KEY_PPAGE || key == KEY_NPAGE)) {
		pane_console_scroll(&t->panes[PANE_CONSOLE], key == KEY_PPAGE ? -1 : 1);
	} else if (!(fkey && key == KEY_MOUSE)) {
		type_ahead(t, key, fkey);
	}
}

/*
 * The console ended on an error (a statement that did not stop after
 * Ctrl-C, a lost agent): the pane stays, with the whole message in it, and
 * keeps the keyboard (console_modal_key) until it is closed.
 */
static void
console_broke(struct tui *t, const char *cause)
{
	char *msg = xasprintf("[flight_profiler] %s", cause ? cause : "the console failed");
	struct pane *p = &t->panes[PANE_CONSOLE];
	const char *s = msg, *hint = "[typing opens a new >>> prompt; Esc closes this pane]\n";
	int w;

	tui_show_pane(t, PANE_CONSOLE, true);
	w = p->w > 22 ? p->w - 2 : 20;
	/* the pane does not wrap: the whole message, in lines of its width */
	pane_console_write(p, "\n", 1);
	while (*s != '\0') {
		int n = (int)strlen(s), cut = n;

		if (n > w)
			for (cut = w; cut > 0 && s[cut] != ' '; cut--)
				;
		if (cut == 0)
			cut = w;
		pane_console_write(p, s, (size_t)cut);
		pane_console_write(p, "\n", 1);
		for (s += cut; *s == ' '; s++)
			;
	}
	pane_console_write(p, hint, strlen(hint));
	free(msg);
	t->console_broken = true;
	tui_status(t, true, "the console stopped: the message is in its pane");
}

/*
 * With the pane of a console that broke focused, what is typed goes to a
 * new Python prompt (the key its first character), never to the TUI's own
 * keys; Ctrl-C and Esc close the pane instead of quitting.
 */
static bool
console_modal_key(struct tui *t, int key, bool fkey)
{
	if (!t->console_broken || t->focus != PANE_CONSOLE || !t->panes[PANE_CONSOLE].visible ||
	    fkey || key == '\t')
		return false;
	if (key == ESC || key == CTRL('c')) {
		t->console_broken = false;
		tui_hide_pane(t, PANE_CONSOLE);
		tui_status(t, false, "console closed (c opens it again)");
		return true;
	}
	if (key < ' ' || key == 127)
		return true;	/* no TUI key leaks through */
	type_ahead(t, key, false);
	run_in_console(t, "console", true);
	return true;
}

/* `console` and `execute`: their text goes to the console pane. */
static void
run_in_console(struct tui *t, const char *line, bool console)
{
	struct cmd_request *req = NULL;
	struct sbuf out = { 0 };
	char *cause = NULL;
	int rc;

	if (t->console_open || t->busy) {
		tui_status(t, true, "the console is busy: finish it first");
		return;
	}
	/* Usage errors before the agent is loaded for nothing. */
	if ((rc = command_parse(line, &req, &cause)) != FP_OK) {
		tui_status(t, true, "%s", cause);
		free(cause);
		return;
	}
	command_request_free(req);
	if (!inside_attach(t, true, false))
		return;
	inside_quiesce(t);
	tui_show_pane(t, PANE_CONSOLE, true);
	if (console) {
		t->console_open = true;
		t->console_leave = false;
	} else {
		pane_console_echo(&t->panes[PANE_CONSOLE], ":", line);
		t->busy = true;
		tui_status(t, false, "running in process %d: Ctrl-C interrupts", (int)t->pid);
	}
	t->interrupt = false;
	t->dirty = true;
	rc = runner_exec(t->runner, line, &out, &cause);
	t->busy = false;
	t->console_open = false;
	t->console_leave = false;
	t->prompt = PROMPT_NONE;
	t->nahead = 0;
	if (out.len > 0)
		pane_console_write(&t->panes[PANE_CONSOLE], out.s, out.len);
	t->console_broken = false;
	if (t->exited) {
		;	/* take_snapshot said so */
	} else if (rc != FP_OK && console) {
		console_broke(t, cause);
	} else if (rc != FP_OK) {
		tui_status(t, true, "%s", cause ? cause : "failed");
	} else if (console) {
		tui_hide_pane(t, PANE_CONSOLE);
		tui_status(t, false, "left the console (c opens it again; its variables are kept "
		    "while flight_profiler stays attached)");
	}
	else
		tui_status(t, false, "execute: done");
	free(cause);
	sbuf_free(&out);
	t->dirty = true;
}

static void
run_command(struct tui *t, const char *line)
{
	struct sbuf out = { 0 };
	char **words = NULL, *cause = NULL;
	size_t n = 0, i;
	int rc;

	if (command_split(line, &words, &n, &cause) != FP_OK) {
		tui_status(t, true, "%s", cause);
		free(cause);
		return;
	}
	if (n == 0) {
		command_words_free(words, n);
		return;
	}
	if (strcmp(words[0], "quit") == 0 || strcmp(words[0], "q") == 0 || strcmp(words[0], "exit") == 0) {
		t->quit = true;
	} else if (strcmp(words[0], "save") == 0) {
		if (n != 2)
			tui_status(t, true, "usage: save FILE");
		else
			save_stack(t, words[1]);
	} else if (strcmp(words[0], "theme") == 0) {
		if (n == 1) {
			char **names = theme_list(&n);
			struct sbuf s = { 0 };

			for (i = 0; i < n; i++)
				sbuf_addf(&s, "%s%s", i ? " " : "", names[i]);
			tui_status(t, false, "themes: %s", s.s);
			sbuf_free(&s);
			command_words_free(names, n);
			n = 1;
		} else if (n == 2) {
			apply_theme(t, words[1]);
		} else {
			tui_status(t, true, "usage: theme [NAME]");
		}
	} else if (strcmp(words[0], "delay") == 0) {
		char *end = NULL;
		double d = n == 2 ? strtod(words[1], &end) : 0;

		if (n != 2 || end == words[1] || *end != '\0' || !(d >= 0.1 && d <= 3600)) {
			tui_status(t, true, "usage: delay SECONDS (0.1 to 3600)");
		} else {
			t->delay = d;
			t->next_refresh_ns = now_ns() + (uint64_t)(d * 1e9);
			tui_status(t, false, "refreshing every %gs", d);
		}
	} else if (strcmp(words[0], "console") == 0 || strcmp(words[0], "execute") == 0) {
		run_in_console(t, line, strcmp(words[0], "console") == 0);
	} else if (strcmp(words[0], "help") == 0 && n <= 2 &&
	    cmdline_help(&out, local_commands, FP_NELEM(local_commands), n == 2 ? words[1] : NULL)) {
		pane_output_set(&t->panes[PANE_OUTPUT], line, out.s);
		tui_show_pane(t, PANE_OUTPUT, true);
	} else {
		inside_quiesce(t);	/* the runner may use the agent's session */
		rc = runner_exec(t->runner, line, &out, &cause);
		if (out.len > 0) {
			pane_output_set(&t->panes[PANE_OUTPUT], line, out.s);
			tui_show_pane(t, PANE_OUTPUT, true);
		}
		if (rc != FP_OK)
			tui_status(t, true, "%s", cause ? cause : "failed");
		else if (out.len == 0)
			tui_status(t, false, "%s: done", words[0]);
	}
	command_words_free(words, n);
	free(cause);
	sbuf_free(&out);
}

static void
prompt_enter(struct tui *t)
{
	char *text = xstrdup(cmdline_text(&t->edit));
	char *cause = NULL;
	int mode = t->prompt;

	t->prompt = PROMPT_NONE;
	t->dirty = true;
	if (mode == PROMPT_CONSOLE) {
		pane_console_echo(&t->panes[PANE_CONSOLE], t->console_prompt, text);
		history_add(t->console_history, text);
		t->console_line = text;
		t->console_input = CONSOLE_LINE;
		return;
	}
	if (mode == PROMPT_COMMAND) {
		history_add(t->history, text);
		run_command(t, text);
	} else if (mode == PROMPT_SEARCH) {
		history_add(t->search_history, text);
		if (*text == '\0' && t->search != NULL) {
			search(t, true);	/* an empty pattern repeats the last one */
		} else if (*text != '\0') {
			pcre2_code *re = compile(text, &cause);

			if (re == NULL) {
				tui_status(t, true, "%s", cause);
			} else {
				pcre2_code_free(t->search_re);
				free(t->search);
				t->search_re = re;
				t->search = xstrdup(text);
				search(t, true);
			}
		}
	} else if (mode == PROMPT_FILTER) {
		history_add(t->filter_history, text);
		if (!pane_threads_filter(&t->panes[PANE_THREADS], text, &cause))
			tui_status(t, true, "%s", cause);
		else if (*text != '\0')
			tui_status(t, false, "threads matching /%s/ (\\ then Enter on an empty line shows all)", text);
		else
			tui_status(t, false, "all threads");
		clamp(&t->panes[PANE_THREADS]);
	}
	free(cause);
	free(text);
}

static void
open_prompt(struct tui *t, int mode, const char *text)
{
	t->prompt = mode;
	cmdline_clear(&t->edit);
	t->edit.hist = mode == PROMPT_COMMAND ? t->history : mode == PROMPT_CONSOLE ?
	    t->console_history : mode == PROMPT_SEARCH ? t->search_history : t->filter_history;
	t->edit.hist_pos = t->edit.hist ? history_count(t->edit.hist) : 0;
	if (text != NULL)
		cmdline_set(&t->edit, text);
	t->dirty = true;
}

/* Keys of the console's prompt that differ from the command line's. */
static bool
console_prompt_key(struct tui *t, int key, bool fkey)
{
	struct cmdline *c = &t->edit;

	if (fkey) {
		if (key == KEY_PPAGE || key == KEY_NPAGE) {
			pane_console_scroll(&t->panes[PANE_CONSOLE], key == KEY_PPAGE ? -1 : 1);
			return true;
		}
		return key == KEY_BACKSPACE && c->buf.len == 0;
	}
	switch (key) {
	case ESC:
	case CTRL('g'):
		/* leave; a block being typed is dropped, not run */
		if (strcmp(t->console_prompt, ">>> ") != 0) {
			t->console_input = CONSOLE_INTERRUPT;
			t->console_leave = true;
		} else {
			t->console_input = CONSOLE_EOF;
		}
		return true;
	case CTRL('d'):
		if (c->buf.len > 0)
			return false;
		t->console_input = CONSOLE_EOF;
		return true;
	case CTRL('c'):
		t->console_input = CONSOLE_INTERRUPT;
		return true;
	case '\t':
		/* indentation, as Python's own console does */
		do
			cmdline_insert(c, " ");
		while (text_width(cmdline_text(c), c->cursor) % 4 != 0);
		return true;
	case 127:
	case CTRL('h'):
		return c->buf.len == 0;
	default:
		return false;
	}
}

static void
prompt_key(struct tui *t, int key, bool fkey)
{
	struct cmdline *c = &t->edit;

	t->dirty = true;
	if (t->prompt == PROMPT_CONSOLE && console_prompt_key(t, key, fkey))
		return;
	if (fkey) {
		switch (key) {
		case KEY_ENTER:
			prompt_enter(t);
			return;
		case KEY_BACKSPACE:
			if (c->buf.len == 0)
				t->prompt = PROMPT_NONE;
			cmdline_backspace(c);
			return;
		case KEY_DC:
			cmdline_delete(c);
			return;
		case KEY_LEFT:
			cmdline_left(c);
			return;
		case KEY_RIGHT:
			cmdline_right(c);
			return;
		case KEY_HOME:
			cmdline_home(c);
			return;
		case KEY_END:
			cmdline_end(c);
			return;
		case KEY_UP:
			cmdline_history_prev(c);
			return;
		case KEY_DOWN:
			cmdline_history_next(c);
			return;
		case KEY_RESIZE:
			layout(t);
			return;
		default:
			return;
		}
	}
	switch (key) {
	case '\n':
	case '\r':
		prompt_enter(t);
		return;
	case ESC:
	case CTRL('c'):
	case CTRL('g'):
		t->prompt = PROMPT_NONE;
		return;
	case 127:
	case CTRL('h'):
		if (c->buf.len == 0)
			t->prompt = PROMPT_NONE;
		cmdline_backspace(c);
		return;
	case CTRL('d'):
		cmdline_delete(c);
		return;
	case CTRL('a'):
		cmdline_home(c);
		return;
	case CTRL('e'):
		cmdline_end(c);
		return;
	case CTRL('b'):
		cmdline_left(c);
		return;
	case CTRL('f'):
		cmdline_right(c);
		return;
	case CTRL('k'):
		cmdline_kill_end(c);
		return;
	case CTRL('u'):
		cmdline_kill_start(c);
		return;
	case CTRL('w'):
		cmdline_kill_word(c);
		return;
	case CTRL('p'):
		cmdline_history_prev(c);
		return;
	case CTRL('n'):
		cmdline_history_next(c);
		return;
	case '\t':
		if (t->prompt == PROMPT_COMMAND) {
			struct cmdline_namer namer = { inside_names, t };
			char *note;
			size_t n, i;
			char **cands = cmdline_complete(c, local_commands, FP_NELEM(local_commands), &namer,
			    &n, &note);

			if (n > 1) {
				struct sbuf s = { 0 };

				for (i = 0; i < n; i++)
					sbuf_addf(&s, "%s%s", i ? "  " : " ", cands[i]);
				free(completion_menu);
				completion_menu = sbuf_steal(&s);
			} else if (n == 0 && note != NULL) {
				/* the prompt hides the status line: say it in the bar */
				free(completion_menu);
				completion_menu = xasprintf(" %s", note);
			}
			free(note);
			command_words_free(cands, n);
		}
		return;
	default:
		if (key >= 32 && key != 127) {
			char mb[MB_LEN_MAX + 1];
			mbstate_t st;
			size_t len;

			memset(&st, 0, sizeof st);
			len = wcrtomb(mb, (wchar_t)key, &st);
			if (len != (size_t)-1) {
				mb[len] = '\0';
				cmdline_insert(c, mb);
			}
		}
	}
}

/* ---- keys ------------------------------------------------------------------ */

static void
next_pane(struct tui *t, int dir)
{
	int i, id = (int)t->focus;

	for (i = 0; i < PANE__COUNT; i++) {
		id = (id + dir + PANE__COUNT) % PANE__COUNT;
		if (id != PANE_HELP && t->panes[id].visible)
			break;
	}
	t->focus = (enum pane_id)id;
	if (t->maximised >= 0)
		t->maximised = id;
	layout(t);
	t->dirty = true;
}

static void
act(struct tui *t, enum action a)
{
	struct pane *p = &t->panes[t->focus];
	size_t n = p->ops->nlines(p), rows = (size_t)(pane_rows(p) > 1 ? pane_rows(p) - 1 : 1);

	t->dirty = true;
	if (p->ops->key != NULL && p->ops->key(p, a))
		return;
	switch (a) {
	case A_UP:
		if (p->cursor > 0)
			pane_set_cursor(p, p->cursor - 1);
		break;
	case A_DOWN:
		if (p->cursor + 1 < n)
			pane_set_cursor(p, p->cursor + 1);
		break;
	case A_PAGE_UP:
		p->top = p->top > rows ? p->top - rows : 0;
		pane_set_cursor(p, p->cursor > rows ? p->cursor - rows : 0);
		break;
	case A_PAGE_DOWN:
		p->top += rows;
		pane_set_cursor(p, p->cursor + rows < n ? p->cursor + rows : (n ? n - 1 : 0));
		break;
	case A_FIRST:
		pane_set_cursor(p, 0);
		break;
	case A_LAST:
		pane_set_cursor(p, n ? n - 1 : 0);
		break;
	case A_SEARCH:
		open_prompt(t, PROMPT_SEARCH, NULL);
		break;
	case A_SEARCH_NEXT:
	case A_SEARCH_PREV:
		search(t, a == A_SEARCH_NEXT);
		break;
	case A_FILTER: {
		const char *cur = pane_threads_filter_text(&t->panes[PANE_THREADS]);

		open_prompt(t, PROMPT_FILTER, cur);
		break;
	}
	case A_NATIVE:
		t->native = !t->native;
		take_snapshot(t, NULL);
		if (t->native)
			tui_status(t, false, "native frames shown: each thread is stopped briefly "
			    "while it is unwound (x hides them)");
		else
			tui_status(t, false, "native frames hidden");
		break;
	case A_QUIT:
		t->quit = true;
		break;
	case A_HELP:
		if (t->panes[PANE_HELP].visible) {
			tui_hide_pane(t, PANE_HELP);
			break;
		}
		t->before_help = t->focus;
		t->panes[PANE_HELP].cursor = t->panes[PANE_HELP].top = 0;
		tui_show_pane(t, PANE_HELP, true);
		break;
	case A_COMMAND:
		open_prompt(t, PROMPT_COMMAND, NULL);
		break;
	case A_CONSOLE:
		run_command(t, "console");
		break;
	case A_AGENT:
		if (t->panes[PANE_SOURCE].visible)
			inside_reload_locals(t);
		else
			inside_attach(t, true, false);
		break;
	case A_REDRAW:
		clearok(curscr, TRUE);
		break;
	case A_NEXT_PANE:
	case A_PREV_PANE:
		next_pane(t, a == A_NEXT_PANE ? 1 : -1);
		break;
	case A_MAXIMISE:
		t->maximised = t->maximised >= 0 ? -1 : (int)t->focus;
		layout(t);
		break;
	case A_PAUSE:
		t->paused = !t->paused;
		if (!t->paused)
			take_snapshot(t, NULL);
		tui_status(t, false, t->paused ? "paused: Space resumes" : "live again");
		break;
	case A_REFRESH:
		take_snapshot(t, NULL);
		break;
	case A_BACK:
		if (t->panes[PANE_HELP].visible)
			tui_hide_pane(t, PANE_HELP);
		else if (t->search_re != NULL) {
			pcre2_code_free(t->search_re);
			t->search_re = NULL;
			free(t->search);
			t->search = NULL;
		} else if (t->focus == PANE_LOCALS)
			tui_hide_pane(t, PANE_SOURCE);
		else if (t->focus == PANE_SOURCE || t->focus == PANE_OUTPUT || t->focus == PANE_CONSOLE)
			tui_hide_pane(t, t->focus);
		else if (t->maximised >= 0) {
			t->maximised = -1;
			layout(t);
		} else if (t->focus == PANE_STACK)
			t->focus = PANE_THREADS;
		else if (pane_threads_filter_text(&t->panes[PANE_THREADS]) != NULL) {
			pane_threads_filter(&t->panes[PANE_THREADS], NULL, NULL);
			tui_status(t, false, "filter cleared");
		}
		break;
	default:
		break;
	}
}

/* Which pane is at (y, x), and which of its lines (or -1). */
static struct pane *
pane_at(struct tui *t, int y, int x, long *line)
{
	struct pane *p = NULL;
	int i, first;

	if (t->panes[PANE_HELP].visible) {
		p = &t->panes[PANE_HELP];
		if (y < p->y || y >= p->y + p->h || x < p->x || x >= p->x + p->w)
			return NULL;
	} else {
		for (i = 0; i < PANE__COUNT; i++) {
			struct pane *q = &t->panes[i];

			if (q->visible && q->h > 0 && y >= q->y && y < q->y + q->h && x >= q->x && x < q->x + q->w)
				p = q;
		}
	}
	if (p == NULL)
		return NULL;
	first = p->y + 1 + (p->ops->header ? 1 : 0);
	*line = y >= first && y < p->y + p->h - 1 ? (long)p->top + (y - first) : -1;
	if (*line >= (long)p->ops->nlines(p))
		*line = -1;
	return p;
}

static void handle_key(struct tui *t, int key, bool fkey);

static void
mouse(struct tui *t)
{
	static uint64_t last_ns;
	static int last_y = -1, last_x = -1;
	struct pane *p;
	MEVENT me;
	long line;
	size_t i;

	if (getmouse(&me) != OK)
		return;
	if (me.y == LINES - 1 && (me.bstate & BUTTON1_PRESSED) && t->prompt == PROMPT_NONE) {
		for (i = 0; i < nbar_items; i++)
			if (me.x >= bar_items[i].x0 && me.x < bar_items[i].x1) {
				handle_key(t, bar_items[i].key, bar_items[i].key >= KEY_MIN);
				return;
			}
		return;
	}
	if ((p = pane_at(t, me.y, me.x, &line)) == NULL)
		return;
	t->dirty = true;
	if (me.bstate & BUTTON4_PRESSED) {
		p->top = p->top > 3 ? p->top - 3 : 0;
		pane_set_cursor(p, p->cursor > 3 ? p->cursor - 3 : 0);
		return;
	}
#ifdef BUTTON5_PRESSED
	if (me.bstate & BUTTON5_PRESSED) {
		size_t n = p->ops->nlines(p);

		p->top += 3;
		pane_set_cursor(p, p->cursor + 3 < n ? p->cursor + 3 : (n ? n - 1 : 0));
		return;
	}
#endif
	if (!(me.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
		return;
	if (p != &t->panes[PANE_HELP]) {
		t->focus = (enum pane_id)(p - t->panes);
		layout(t);
	}
	if (line >= 0) {
		bool dbl = me.y == last_y && me.x == last_x && now_ns() - last_ns < 400000000ull;

		pane_set_cursor(p, (size_t)line);
		if (dbl)
			act(t, A_ENTER);
	}
	last_ns = now_ns();
	last_y = me.y;
	last_x = me.x;
}

static void
handle_key(struct tui *t, int key, bool fkey)
{
	const struct keybinding *b;
	char buf[16];

	free(completion_menu);
	completion_menu = NULL;
	if (fkey && key == KEY_RESIZE) {
		layout(t);
		t->dirty = true;
		return;
	}
	if (t->prompt != PROMPT_NONE) {
		prompt_key(t, key, fkey);
		return;
	}
	if (fkey && key == KEY_MOUSE) {
		mouse(t);
		return;
	}
	if (!fkey && key == '\r')
		key = '\n';
	if (!fkey && key >= KEY_MIN)
		key = -1;	/* a character that happens to have a KEY_ code's value */
	free(t->status);
	t->status = NULL;
	t->dirty = true;
	if (t->too_small && key != 'q' && key != CTRL('c') && key != CTRL('l'))
		return;
	if (console_modal_key(t, key, fkey))
		return;
	b = keymap_lookup(t->panes[t->focus].ops->name, key);
	if (b == NULL) {
		if (key > 32 && key < 127)
			tui_status(t, true, "'%s' does nothing here: ? lists the keys",
			    keymap_key_name(key, buf, sizeof buf));
		return;
	}
	act(t, b->action);
}

/* ---- the loop ------------------------------------------------------------------- */

/*
 * One turn: draw what changed, wait for a key (until the next refresh, or
 * not at all while a statement runs), handle the keys, refresh when due,
 * let tui/inside pick up the agent's answers.  `busy`: called by the
 * runner while a statement runs; keys then only interrupt or scroll.
 */
static void
pump(struct tui *t, bool busy)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	int timeout = -1, r, tick;
	wint_t wc;

	/* Keys typed while a statement ran, up to the end of the next line. */
	while (!busy && t->nahead > 0 && !t->quit &&
	    !(t->console_open && t->console_input != CONSOLE_WAIT)) {
		int key = t->ahead[0].key;
		bool fkey = t->ahead[0].fkey;

		memmove(t->ahead, t->ahead + 1, --t->nahead * sizeof t->ahead[0]);
		handle_key(t, key, fkey);
	}
	if (!busy && !t->paused && !t->exited) {
		uint64_t now = now_ns();

		timeout = now >= t->next_refresh_ns ? 0 :
		    (int)((t->next_refresh_ns - now + 999999) / 1000000);
	}
	if (!busy && (tick = inside_tick(t)) >= 0 && (timeout < 0 || tick < timeout))
		timeout = tick;
	if (busy)
		timeout = 0;	/* the runner waits for the agent meanwhile */
	if (t->dirty) {
		tui_draw(t);
		t->dirty = false;
	}
	r = poll(&pfd, 1, timeout);
	if (r < 0 && errno != EINTR) {
		t->quit = true;
		return;
	}
	if (r > 0 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) && !(pfd.revents & POLLIN)) {
		t->quit = true;	/* the terminal is gone */
		return;
	}
	while ((r = wget_wch(stdscr, &wc)) != ERR) {
		if (busy)
			busy_key(t, (int)wc, r == KEY_CODE_YES);
		else if (t->console_open && t->console_input != CONSOLE_WAIT)
			type_ahead(t, (int)wc, r == KEY_CODE_YES);	/* a line was just entered */
		else
			handle_key(t, (int)wc, r == KEY_CODE_YES);
		if (t->quit)
			break;
	}
	if (!t->quit && !t->paused && !t->exited && now_ns() >= t->next_refresh_ns)
		take_snapshot(t, NULL);
	if (busy && t->dirty) {
		tui_draw(t);
		t->dirty = false;
	}
}

/* ---- set up and tear down ---------------------------------------------------------- */

static void
panes_open(struct tui *t)
{
	size_t i;

	for (i = 0; i < PANE__COUNT; i++) {
		t->panes[i].ops = pane_table[i];
		t->panes[i].tui = t;
		t->panes[i].ops->open(&t->panes[i]);
	}
	t->panes[PANE_THREADS].visible = true;
	t->panes[PANE_STACK].visible = true;
	t->focus = PANE_THREADS;
	t->maximised = -1;
}

static struct tui *
tui_new(pid_t pid)
{
	struct tui *t = xcalloc(1, sizeof *t);

	t->pid = pid;
	t->delay = 1.0;
	theme_default(&t->theme);
	t->history = history_open(NULL);
	t->console_history = history_open(NULL);
	t->search_history = history_open(NULL);
	t->filter_history = history_open(NULL);
	t->inside = inside_new();
	cmdline_init(&t->edit, NULL);
	panes_open(t);
	return t;
}

void
tui_free(struct tui *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < PANE__COUNT; i++)
		if (t->panes[i].ops != NULL)
			t->panes[i].ops->close(&t->panes[i]);
	py_snapshot_free(t->snap);
	free(t->cpu);
	free(t->prev);
	free(t->status);
	free(t->search);
	pcre2_code_free(t->search_re);
	cmdline_free(&t->edit);
	history_close(t->history);
	history_close(t->console_history);
	history_close(t->search_history);
	history_close(t->filter_history);
	free(t->console_prompt);
	free(t->console_line);
	inside_free(t->inside);
	runner_free(t->runner);
	source_cache_free(t->sc);
	free(t->target_cmdline);
	py_reader_close(t->reader);
	free(completion_menu);
	completion_menu = NULL;
	free(t);
}

struct tui *
tui_new_headless(struct py_snapshot *snap)
{
	struct tui *t = tui_new(1);

	t->target_cmdline = xstrdup("python bench.py");
	snprintf(t->version, sizeof t->version, "%s", snap->version);
	t->use_color = has_colors();
	theme_apply(&t->theme, t->use_color);
	layout(t);
	tui_set_snapshot(t, snap);
	return t;
}

/* What to write to the terminal to undo the TUI, if we die by a signal. */
static char *
restore_sequence(void)
{
	static const char *const caps[] = { "sgr0", "cnorm", "rmkx", "rmcup" };
	struct sbuf s = { 0 };
	size_t i;

	sbuf_add(&s, "\033[?1000l\033[?1002l\033[?1003l\033[?1006l");
	for (i = 0; i < FP_NELEM(caps); i++) {
		char *v = tigetstr((char *)caps[i]);

		if (v != NULL && v != (char *)-1)
			sbuf_add(&s, v);
	}
	return sbuf_steal(&s);
}

static SCREEN *screen;

static int
screen_init(struct tui *t, const struct tui_options *opts, char **cause)
{
	struct termios tio;
	char *seq;
	SCREEN *scr;

	if (tcgetattr(STDIN_FILENO, &tio) != 0)
		return fail(cause, FP_ERR, "standard input is not a terminal: %s", strerror(errno));
	if ((scr = newterm(NULL, stdout, stdin)) == NULL)
		return fail(cause, FP_ERR, "cannot use the terminal (TERM=%s): set TERM, or use --cmd",
		    getenv("TERM") ? getenv("TERM") : "");
	set_term(scr);
	screen = scr;
	set_escdelay(25);
	raw();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	intrflush(stdscr, FALSE);
	curs_set(0);
	t->use_color = !opts->no_color && has_colors();
	if (t->use_color)
		start_color();
	theme_apply(&t->theme, t->use_color);
	mouseinterval(0);
	mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
	    | BUTTON5_PRESSED
#endif
	    , NULL);
	seq = restore_sequence();
	guard_terminal(STDOUT_FILENO, seq, &tio);
	free(seq);
	layout(t);
	return FP_OK;
}

static void
screen_end(void)
{
	mousemask(0, NULL);
	endwin();
	guard_terminal(-1, NULL, NULL);
	delscreen(screen);
	screen = NULL;
}

int
tui_run(pid_t pid, struct py_reader *reader, const struct tui_options *opts)
{
	struct tui *t = tui_new(pid);
	struct sbuf errs = { 0 };
	char *cause = NULL, *hpath;
	int rc;

	draw_init(strcmp(nl_langinfo(CODESET), "UTF-8") == 0);
	t->reader = reader;
	t->runner = runner_new(pid);
	runner_set_io(t->runner, &(struct runner_io){
		.read_line = console_read_line,
		.write = console_write,
		.poll = console_poll,
		.interactive = true,
		.ctx = t,
	});
	t->sc = source_cache_new(pid);
	t->delay = opts->delay;
	t->target_cmdline = procfs_cmdline(pid);
	if (t->target_cmdline == NULL)
		t->target_cmdline = xstrdup("?");
	snprintf(t->version, sizeof t->version, "%s", py_reader_runtime(reader)->version);
	hpath = history_default_path();
	history_close(t->history);
	t->history = history_open(hpath);
	free(hpath);

	if (opts->theme != NULL && theme_load(&t->theme, opts->theme, &errs, &cause) != FP_OK) {
		termsafe_error(stderr, cause);
		free(cause);
		sbuf_free(&errs);
		tui_free(t);
		return FP_EUSAGE;
	}
	/* The first read before the screen: its errors are plain messages. */
	if ((rc = take_snapshot(t, &cause)) != FP_OK) {
		termsafe_error(stderr, cause ? cause : "cannot read the process");
		free(cause);
		sbuf_free(&errs);
		tui_free(t);
		return rc;
	}
	if ((rc = screen_init(t, opts, &cause)) != FP_OK) {
		termsafe_error(stderr, cause);
		free(cause);
		sbuf_free(&errs);
		tui_free(t);
		return rc;
	}
	if (errs.len > 0) {
		char *nl = strchr(errs.s, '\n');

		if (nl != NULL && nl[1] != '\0')
			strcpy(nl, " (and more; the rest of the theme loaded)");
		else if (nl != NULL)
			*nl = '\0';
		tui_status(t, true, "%s", errs.s);
	}
	sbuf_free(&errs);
	/* An agent already running there (never loads one): names, locals. */
	inside_attach(t, false, true);
	t->dirty = true;

	while (!t->quit)
		pump(t, false);
	screen_end();
	t->reader = reader;	/* tui_free closes it */
	tui_free(t);
	return FP_OK;
}

/* ---- a fake snapshot for benchmarks ------------------------------------------- */

struct py_snapshot *
tui_fake_snapshot(size_t nthreads, size_t depth)
{
	struct py_snapshot *s = xcalloc(1, sizeof *s);
	size_t i, k;

	s->pid = 1;
	snprintf(s->version, sizeof s->version, "3.12.1");
	s->threads = xcalloc(nthreads, sizeof *s->threads);
	s->nthreads = nthreads;
	s->taken_ns = now_ns();
	for (i = 0; i < nthreads; i++) {
		struct py_thread *t = &s->threads[i];

		t->tid = (pid_t)(1000 + i);
		t->thread_id = 0x7f0000000000ull + i * 0x1000;
		t->name = xasprintf("worker-%zu", i);
		t->os_state = i % 7 == 0 ? 'R' : 'S';
		t->gil = i == 3 ? GIL_HELD : i % 11 == 0 ? GIL_WAITING : GIL_NONE;
		t->is_main = i == 0;
		t->cpu_ticks = i * 3;
		t->frames = xcalloc(depth, sizeof *t->frames);
		t->nframes = depth;
		for (k = 0; k < depth; k++) {
			struct py_frame *f = &t->frames[k];

			f->filename = xasprintf("/srv/app/lib/python3.12/site-packages/pkg%zu/module_%zu.py",
			    k % 13, (i + k) % 17);
			f->name = xasprintf("function_%zu", (i * 7 + k) % 97);
			f->qualname = xasprintf("Class%zu.function_%zu", k % 5, (i * 7 + k) % 97);
			f->line = (int)(10 + (i + k) % 900);
			f->code = 0x7f1000000000ull + k * 64;
			f->entry = k + 1 == depth;
		}
	}
	return s;
}
