/*
 * pane_flame — a live flamegraph of the target (F, or `:flame`): icicle
 * style, the root on top, each frame as wide as its share of the samples,
 * growing as tui/flamelive's sampling thread folds samples in.  Over it,
 * one line per thread with its GIL-held / waiting / idle / on-CPU shares;
 * `t` shows the same samples as a top table.  The TUI's loop only reads
 * what has arrived (under flamelive's lock, for as long as a layout
 * takes): keys never wait for the target.
 *
 * `z` freezes: sampling pauses (the target is not read) and the view
 * stays as it is; `z` again resumes.  Closing the pane pauses it too.
 */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/perf_cmd.h"
#include "tui/flamelive.h"
#include "tui/flameview.h"
#include "tui/tui.h"

#define MAX_THREAD_LINES 8

struct flame {
	struct flamelive *fl;
	struct flameview v;
	uint64_t laid_gen;	/* generation of the layout; UINT64_MAX: redo */
	uint32_t zoom, sel;	/* nodes of the profile shown */
	pid_t tid;		/* the thread shown; 0: all */
	bool frozen;		/* by z (closing the pane pauses too, not frozen) */
	bool top;		/* the top table instead of the graph */
	enum flame_sort sort;
	bool invert;
	struct flame_top *rows;
	size_t nrows;
	size_t nthreads;	/* thread lines above the graph */
	bool *match;		/* per frame, for the search in force */
	size_t amatch;
	const pcre2_code *matched_re;
	uint64_t match_sum;
	char *our_status;	/* a copy of what we last said in the status line */
};

static const char *const sort_names[] = { "own %", "total %", "own time", "total time" };

static struct profile *
shown(struct flame *f)
{
	return f->fl != NULL ? flamelive_profile(f->fl, f->tid) : NULL;
}

static size_t
header_lines(struct flame *f)
{
	return f->nthreads + (f->top ? 1 : 0);
}

/* The frame's share of everything and of the zoom, in the status line. */
static void
say_selected(struct pane *p)
{
	struct flame *f = p->data;
	struct profile *prof;
	uint64_t n, all, zoom;

	if (f->fl == NULL || f->top)
		return;
	flamelive_lock(f->fl);
	if ((prof = shown(f)) != NULL && f->sel < prof->nnodes) {
		n = prof->nodes[f->sel].total;
		all = prof->nodes[0].total;
		zoom = prof->nodes[f->zoom].total;
		tui_status(p->tui, false, "%s — %llu samples, %.1f%% of all, %.1f%% of zoom",
		    flameview_label(&f->v, prof, f->sel), (unsigned long long)n,
		    all ? 100.0 * (double)n / (double)all : 0.0,
		    zoom ? 100.0 * (double)n / (double)zoom : 0.0);
		free(f->our_status);
		f->our_status = xstrdup(p->tui->status);
	}
	flamelive_unlock(f->fl);
}

/* Under the lock: the layout for the profile as it is now, and the cursor on the selection. */
static void
relayout(struct pane *p, struct profile *prof)
{
	struct flame *f = p->data;
	size_t row, cell;
	size_t threads = f->fl->nthreads < MAX_THREAD_LINES ? f->fl->nthreads : MAX_THREAD_LINES;

	if (f->laid_gen == f->fl->generation && f->v.width == p->w - 2 && f->v.zoom == f->zoom &&
	    f->nthreads == threads)
		return;
	f->nthreads = threads;
	f->laid_gen = f->fl->generation;
	f->matched_re = p->tui->search_re;
	flameview_layout(&f->v, prof, f->zoom, p->w - 2);
	if (f->top) {
		free(f->rows);
		f->rows = flameview_top(prof, f->zoom, f->sort, f->invert, &f->nrows);
		return;
	}
	/* a frame too narrow to draw now: its nearest drawn ancestor */
	while (!flameview_find(&f->v, f->sel, &row, &cell) && f->sel != f->zoom && f->sel != 0)
		f->sel = prof->nodes[f->sel].parent;
	if (flameview_find(&f->v, f->sel, &row, &cell))
		p->cursor = header_lines(f) + row;
	if (p->tui->search_re != NULL && prof->nframes > 0) {
		array_reserve(&f->match, &f->amatch, prof->nframes, sizeof *f->match);
		f->match_sum = flameview_search(&f->v, prof, p->tui->search_re, f->match);
	}
}

static size_t
flame_nlines(struct pane *p)
{
	struct flame *f = p->data;
	struct profile *prof;
	size_t n;

	if (f->fl == NULL)
		return 1;
	flamelive_lock(f->fl);
	if ((prof = shown(f)) != NULL) {
		if (f->matched_re != p->tui->search_re)
			f->laid_gen = UINT64_MAX;
		relayout(p, prof);
	}
	n = header_lines(f) + (f->top ? f->nrows : f->v.nrows);
	flamelive_unlock(f->fl);
	return n;
}

static void
draw_thread(struct flame *f, size_t i, struct tline *l)
{
	const struct flamelive_thread *ft = &f->fl->threads[i];
	double n = ft->samples ? (double)ft->samples : 1;
	char tid[32];

	snprintf(tid, sizeof tid, "%d", (int)ft->tid);
	tline_add(l, EL_DEFAULT, f->tid == ft->tid ? glyph(G_CURSOR) : " ");
	tline_col(l, EL_THREAD_TID, tid, 8, true);
	tline_add(l, EL_DEFAULT, " ");
	tline_col(l, EL_THREAD_NAME, ft->name ? ft->name : "?", 16, false);
	tline_addf(l, EL_THREAD_GIL, "  gil %5.1f%%", 100.0 * (double)ft->gil_held / n);
	tline_addf(l, EL_THREAD_WAIT_GIL, "  wait %5.1f%%", 100.0 * (double)ft->gil_wait / n);
	tline_addf(l, EL_THREAD_IDLE, "  idle %5.1f%%", 100.0 * (double)ft->idle / n);
	tline_addf(l, EL_THREAD_RUNNING, "  cpu %5.1f%%", 100.0 * (double)ft->on_cpu / n);
	tline_addf(l, EL_THREAD_TID, "  %llu samples", (unsigned long long)ft->samples);
}

static void
draw_row(struct pane *p, size_t row, struct tline *l)
{
	struct flame *f = p->data;
	const struct flame_row *r = &f->v.rows[row];
	char cut[1024];
	int x = 0;
	size_t k, n;

	for (k = 0; k < r->n; k++) {
		const struct flame_cell *c = &r->cells[k];
		uint32_t fr = c->node != 0 ? c->frame : 0;
		enum theme_elem el;
		const char *label = c->node == 0 ? "all" : f->v.shorts[fr];

		for (; x < c->x; x++)
			tline_add(l, EL_DEFAULT, " ");
		if (c->node == f->sel)
			el = EL_FLAME_SELECTED;
		else if (c->node != 0 && f->matched_re != NULL && p->tui->search_re != NULL &&
		    fr < f->amatch && f->match[fr])
			el = EL_FLAME_MATCH;
		else
			el = (enum theme_elem)(EL_FLAME_0 + (c->node != 0 ? f->v.color[fr] : 0));
		/* a narrow cell measures a prefix, not the whole label: with
		 * thousands of thin frames this is most of a redraw */
		n = strlen(label);
		if (n > (size_t)c->w * 4 + 8)
			n = (size_t)c->w * 4 + 8;
		snprintf(cut, sizeof cut, "%.*s", (int)(n < sizeof cut - 1 ? n : sizeof cut - 1), label);
		tline_col(l, el, cut, c->w > 1 ? c->w - 1 : 1, false);
		if (c->w > 1)
			tline_add(l, EL_DEFAULT, " ");
		x = c->x + c->w;
	}
}

static void
fmt_time(char *buf, size_t size, uint64_t ns)
{
	snprintf(buf, size, "%.2fs", (double)ns / 1e9);
}

static void
draw_top(struct pane *p, size_t i, struct tline *l)
{
	struct flame *f = p->data;
	const struct flame_top *r = &f->rows[i];
	struct profile *prof = shown(f);
	double all = prof && prof->nodes[f->zoom].total ? (double)prof->nodes[f->zoom].total : 1;
	enum theme_elem el = i + header_lines(f) == p->cursor ? EL_CURSOR : EL_DEFAULT;
	char a[32], b[32];

	fmt_time(a, sizeof a, r->self_ns);
	fmt_time(b, sizeof b, r->total_ns);
	tline_addf(l, el, "%7.1f%% %7.1f%% %10s %10s  ", 100.0 * (double)r->self / all,
	    100.0 * (double)r->total / all, a, b);
	tline_add(l, el == EL_CURSOR ? el : EL_STACK_FUNCTION, f->v.labels[r->frame]);
}

static void
flame_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct flame *f = p->data;

	if (f->fl == NULL) {
		tline_add(l, EL_DEFAULT, "not sampling: F or :flame starts");
		return;
	}
	flamelive_lock(f->fl);
	if (line < f->nthreads)
		draw_thread(f, line, l);
	else if (f->top && line == f->nthreads)
		tline_addf(l, EL_HEADER, "%8s %8s %10s %10s  %s  (sorted by %s%s; > < I)", "OWN%",
		    "TOTAL%", "OWN", "TOTAL", "FUNCTION", sort_names[f->sort], f->invert ? ", inverted" : "");
	else if (f->top && line - header_lines(f) < f->nrows)
		draw_top(p, line - header_lines(f), l);
	else if (!f->top && line - header_lines(f) < f->v.nrows)
		draw_row(p, line - header_lines(f), l);
	flamelive_unlock(f->fl);
}

static void
flame_header(struct pane *p, struct tline *l)
{
	struct flame *f = p->data;
	double hz, err;

	if (f->fl == NULL)
		return;
	flamelive_lock(f->fl);
	flamelive_rates(f->fl, &hz, &err);
	tline_addf(l, EL_HEADER, "%.1f Hz of %u, %.2f%% errors, %llu samples, mode %s", hz,
	    f->fl->rate, 100.0 * err, (unsigned long long)f->fl->stats.samples,
	    sampler_mode_name(f->fl->mode));
	if (f->fl->ended)
		tline_add(l, EL_STACK_ERROR, f->fl->stats.exited ? "  the process exited: what was "
		    "sampled stays" : "  sampling failed");
	else if (f->frozen)
		tline_add(l, EL_TITLE_PAUSED, "  frozen: z resumes");
	if (f->fl->error != NULL)
		tline_addf(l, EL_STACK_ERROR, ": %s", f->fl->error);
	flamelive_unlock(f->fl);
}

static void
flame_title(struct pane *p, struct sbuf *s)
{
	struct flame *f = p->data;
	struct profile *prof;
	size_t i;

	sbuf_add(s, f->top ? "Flame: top" : "Flame");
	if (f->fl == NULL)
		return;
	flamelive_lock(f->fl);
	for (i = 0; f->tid != 0 && i < f->fl->nthreads; i++)
		if (f->fl->threads[i].tid == f->tid)
			sbuf_addf(s, " — thread %s (%d)", f->fl->threads[i].name ?
			    f->fl->threads[i].name : "?", (int)f->tid);
	if (f->tid == 0)
		sbuf_add(s, " — all threads");
	if ((prof = shown(f)) != NULL && f->zoom != 0 && f->zoom < prof->nnodes)
		sbuf_addf(s, " — zoom: %s (%.1f%%)", flameview_label(&f->v, prof, f->zoom),
		    prof->nodes[0].total ? 100.0 * (double)prof->nodes[f->zoom].total /
		    (double)prof->nodes[0].total : 0.0);
	if (prof != NULL && p->tui->search_re != NULL && f->matched_re == p->tui->search_re &&
	    prof->nodes[f->zoom].total > 0)
		sbuf_addf(s, " — /%s: %.1f%% of zoom", p->tui->search,
		    100.0 * (double)f->match_sum / (double)prof->nodes[f->zoom].total);
	flamelive_unlock(f->fl);
}

/* The drawn cell next to the selection in its row (dir -1, 1), or its parent/child. */
static void
move_sel(struct pane *p, enum action a)
{
	struct flame *f = p->data;
	struct profile *prof = shown(f);
	size_t row, cell, k;

	if (prof == NULL || !flameview_find(&f->v, f->sel, &row, &cell))
		return;
	if (a == A_UP && f->sel != f->zoom)
		f->sel = prof->nodes[f->sel].parent;
	else if (a == A_DOWN && row + 1 < f->v.nrows) {
		/* the widest child drawn */
		const struct flame_row *r = &f->v.rows[row + 1];
		int best = 0;

		for (k = 0; k < r->n; k++)
			if (prof->nodes[r->cells[k].node].parent == f->sel && r->cells[k].w > best) {
				best = r->cells[k].w;
				f->sel = r->cells[k].node;
			}
	} else if (a == A_SCROLL_LEFT && cell > 0)
		f->sel = f->v.rows[row].cells[cell - 1].node;
	else if (a == A_SCROLL_RIGHT && cell + 1 < f->v.rows[row].n)
		f->sel = f->v.rows[row].cells[cell + 1].node;
	if (flameview_find(&f->v, f->sel, &row, &cell))
		p->cursor = header_lines(f) + row;
}

static void
zoom(struct pane *p, bool in)
{
	struct flame *f = p->data;
	struct profile *prof = shown(f);

	if (prof == NULL)
		return;
	if (in)
		f->zoom = f->sel;
	else if (f->zoom != 0)
		f->zoom = prof->nodes[f->zoom].parent;
	f->laid_gen = UINT64_MAX;
}

static void
next_thread(struct pane *p)
{
	struct flame *f = p->data;
	size_t i;

	flamelive_lock(f->fl);
	for (i = 0; i < f->fl->nthreads && f->fl->threads[i].tid != f->tid; i++)
		;
	/* all, then each thread in the order they were first sampled */
	if (f->tid == 0)
		f->tid = f->fl->nthreads > 0 ? f->fl->threads[0].tid : 0;
	else
		f->tid = i + 1 < f->fl->nthreads ? f->fl->threads[i + 1].tid : 0;
	flamelive_unlock(f->fl);
	f->zoom = f->sel = 0;
	f->laid_gen = UINT64_MAX;
	if (f->tid != 0)
		tui_status(p->tui, false, "thread %d only (T: the next)", (int)f->tid);
	else
		tui_status(p->tui, false, "all threads");
}

static bool
top_key(struct pane *p, enum action a)
{
	struct flame *f = p->data;

	switch (a) {
	case A_SORT_NEXT:
	case A_SORT_PREV:
		f->sort = (enum flame_sort)((f->sort + (a == A_SORT_NEXT ? 1 : FLAME_SORT__COUNT - 1)) %
		    FLAME_SORT__COUNT);
		break;
	case A_SORT_INVERT:
		f->invert = !f->invert;
		break;
	default:
		return false;
	}
	f->laid_gen = UINT64_MAX;
	tui_status(p->tui, false, "sorted by %s%s", sort_names[f->sort], f->invert ? ", inverted" : "");
	return true;
}

/* m: wall, cpu, gil, wall ...: the trees start again in the new mode. */
static void
next_mode(struct pane *p)
{
	static const char *const what[] = {
		"every active thread's samples", "on-CPU samples only", "samples holding the GIL only",
	};
	struct flame *f = p->data;
	enum sampler_mode m = (enum sampler_mode)((f->fl->mode + 1) % 3);

	flamelive_mode(f->fl, m);
	f->sel = f->zoom = 0;
	f->laid_gen = UINT64_MAX;
	tui_status(p->tui, false, "mode %s: %s from now on, the graph starts again", sampler_mode_name(m),
	    what[m]);
}

static bool
flame_key(struct pane *p, enum action a)
{
	struct flame *f = p->data;

	if (f->fl == NULL)
		return false;
	switch (a) {
	case A_FREEZE:
		f->frozen = !f->frozen;
		flamelive_freeze(f->fl, f->frozen);
		tui_status(p->tui, false, f->frozen ? "frozen: sampling paused, the view stays (z resumes)" :
		    "sampling again");
		return true;
	case A_TOP_TABLE:
		f->top = !f->top;
		f->laid_gen = UINT64_MAX;
		p->cursor = p->top = 0;
		return true;
	case A_NEXT_THREAD:
		next_thread(p);
		return true;
	case A_SAMPLE_MODE:
		next_mode(p);
		return true;
	case A_IDLE:
		flamelive_lock(f->fl);
		f->fl->idle = !f->fl->idle;
		flamelive_unlock(f->fl);
		tui_status(p->tui, false, f->fl->idle ? "idle samples kept from now on" :
		    "idle samples left out from now on");
		return true;
	default:
		break;
	}
	if (f->top)
		return top_key(p, a);
	flamelive_lock(f->fl);
	switch (a) {
	case A_UP:
	case A_DOWN:
	case A_SCROLL_LEFT:
	case A_SCROLL_RIGHT:
		move_sel(p, a);
		break;
	case A_ENTER:
		zoom(p, true);
		break;
	case A_BACK:
		if (f->zoom == 0) {
			flamelive_unlock(f->fl);
			return false;
		}
		zoom(p, false);
		break;
	default:
		flamelive_unlock(f->fl);
		return false;
	}
	flamelive_unlock(f->fl);
	say_selected(p);
	return true;
}

/* n / N and a new search: the next matching frame drawn, and the share matched. */
static void
flame_search(struct pane *p, bool forward)
{
	struct flame *f = p->data;
	struct profile *prof;
	size_t row = 0, cell = 0, i, total, k;
	uint64_t zoomed;

	if (f->fl == NULL || f->top)
		return;
	f->laid_gen = UINT64_MAX;
	(void)flame_nlines(p);	/* the matches for this pattern */
	flamelive_lock(f->fl);
	if ((prof = shown(f)) == NULL) {
		flamelive_unlock(f->fl);
		return;
	}
	zoomed = prof->nodes[f->zoom].total;
	(void)flameview_find(&f->v, f->sel, &row, &cell);
	/* cells in reading order, from the one after the selection */
	for (total = 0, i = 0; i < f->v.nrows; i++)
		total += f->v.rows[i].n;
	for (k = 1; k <= total; k++) {
		if (forward && ++cell >= f->v.rows[row].n) {
			cell = 0;
			row = (row + 1) % f->v.nrows;
			while (f->v.rows[row].n == 0)
				row = (row + 1) % f->v.nrows;
		} else if (!forward && cell-- == 0) {
			do
				row = (row + f->v.nrows - 1) % f->v.nrows;
			while (f->v.rows[row].n == 0);
			cell = f->v.rows[row].n - 1;
		}
		if (f->v.rows[row].cells[cell].node != 0 && f->match[f->v.rows[row].cells[cell].frame])
			break;
	}
	if (k <= total) {
		f->sel = f->v.rows[row].cells[cell].node;
		p->cursor = header_lines(f) + row;
	}
	flamelive_unlock(f->fl);
	tui_status(p->tui, k > total, "/%s: %s%.1f%% of the zoom's samples (%llu)", p->tui->search,
	    k > total ? "no frame drawn matches; " : "matches cover ",
	    zoomed ? 100.0 * (double)f->match_sum / (double)zoomed : 0.0,
	    (unsigned long long)f->match_sum);
}

static void
flame_save(struct pane *p, const char *file, const char *format)
{
	struct flame *f = p->data;
	int fmt = format != NULL ? perf_format_named(format) : perf_format_of(file);
	char *title, *sub;
	double hz, err;
	FILE *out;
	int rc;

	if (f->fl == NULL) {
		tui_status(p->tui, true, "nothing sampled yet: F starts the flamegraph");
		return;
	}
	if ((out = fopen(file, "w")) == NULL) {
		tui_status(p->tui, true, "cannot write %s: %s", file, strerror(errno));
		return;
	}
	flamelive_lock(f->fl);
	flamelive_rates(f->fl, &hz, &err);
	title = xasprintf("flight_profiler flame: process %d%s", (int)p->tui->pid,
	    f->tid ? " (one thread)" : "");
	sub = xasprintf("%llu samples at %.1f Hz, %.2f%% errors",
	    (unsigned long long)f->fl->stats.samples, hz, 100.0 * err);
	rc = perf_write(shown(f), fmt, out, title, sub);
	flamelive_unlock(f->fl);
	if (fclose(out) != 0)
		rc = -1;
	if (rc != 0)
		tui_status(p->tui, true, "cannot write %s: %s", file, strerror(errno));
	else
		tui_status(p->tui, false, "wrote the flamegraph (%s) to %s", format != NULL ? format :
		    fmt == 1 ? "collapsed" : fmt == 2 ? "speedscope" : fmt == 3 ? "text" : "svg", file);
	free(title);
	free(sub);
}

static bool
start(struct pane *p, unsigned rate)
{
	struct flame *f = p->data;
	char *cause = NULL;

	if (f->fl != NULL) {
		if (!f->frozen)
			flamelive_freeze(f->fl, false);	/* paused while the pane was closed */
		return true;
	}
	if (p->tui->exited) {
		tui_status(p->tui, true, "process %d exited: nothing to sample", (int)p->tui->pid);
		return false;
	}
	if (flamelive_start(p->tui->pid, rate ? rate : FLAMELIVE_RATE, &f->fl, &cause) != FP_OK) {
		tui_status(p->tui, true, "flame: %s", cause ? cause : "cannot sample the process");
		free(cause);
		return false;
	}
	f->laid_gen = UINT64_MAX;
	tui_status(p->tui, false, "sampling at %u Hz from outside; threads are never stopped",
	    rate ? rate : FLAMELIVE_RATE);
	return true;
}

void
pane_flame_show(struct pane *p, struct flamelive *fl)
{
	struct flame *f = p->data;

	flamelive_stop(f->fl);
	f->fl = fl;
	f->zoom = f->sel = 0;
	f->laid_gen = UINT64_MAX;
	tui_show_pane(p->tui, p, true);
}

static bool
flame_event(struct pane *p, const struct pane_event *ev)
{
	struct flame *f = p->data;

	switch (ev->kind) {
	case EV_OPEN_FLAME:
		return start(p, ev->line > 0 ? (unsigned)ev->line : 0);
	case EV_SNAPSHOT:
		/* the framework's refresh: redraw what arrived meanwhile */
		if (f->fl != NULL && !p->visible && !f->frozen)
			flamelive_freeze(f->fl, true);	/* closed: stop reading the target */
		/* the status line is ours still: its numbers follow the samples */
		if (f->fl != NULL && p->visible && p->tui->status != NULL && f->our_status != NULL &&
		    strcmp(p->tui->status, f->our_status) == 0)
			say_selected(p);
		return false;
	default:
		return false;
	}
}

static void
flame_open(struct pane *p)
{
	struct flame *f = xcalloc(1, sizeof *f);

	f->laid_gen = UINT64_MAX;
	f->sort = FLAME_SORT_OWN;
	p->data = f;
}

static void
flame_close(struct pane *p)
{
	struct flame *f = p->data;

	flamelive_stop(f->fl);
	flameview_free(&f->v);
	free(f->rows);
	free(f->match);
	free(f->our_status);
	free(f);
}

static const struct keybinding flame_keys[] = {
	{ NULL, '\n', A_ENTER, "Zoom", "zoom into the selected frame (Esc zooms out)" },
	{ NULL, KEY_ENTER, A_ENTER, NULL, "zoom into the selected frame (Esc zooms out)" },
	{ NULL, KEY_LEFT, A_SCROLL_LEFT, NULL, "the frame to the left" },
	{ NULL, 'h', A_SCROLL_LEFT, NULL, "the frame to the left" },
	{ NULL, KEY_RIGHT, A_SCROLL_RIGHT, NULL, "the frame to the right" },
	{ NULL, 'l', A_SCROLL_RIGHT, NULL, "the frame to the right" },
	{ NULL, 'z', A_FREEZE, "Freeze", "freeze: pause sampling, the view stays; again resumes" },
	{ NULL, 't', A_TOP_TABLE, "Top", "the top table (own, total) or the flamegraph" },
	{ NULL, 'T', A_NEXT_THREAD, "Thread", "show one thread, the next, ... then all again" },
	{ NULL, 'i', A_IDLE, NULL, "keep idle samples too (or leave them out again)" },
	{ NULL, 'm', A_SAMPLE_MODE, "Mode", "mode wall, cpu (on a CPU), gil (holding it): starts again" },
	{ NULL, '>', A_SORT_NEXT, NULL, "top table: sort by the next column" },
	{ NULL, '<', A_SORT_PREV, NULL, "top table: sort by the previous column" },
	{ NULL, 'I', A_SORT_INVERT, NULL, "top table: invert the sort order" },
	{ .key = 0 },
};

const struct pane_ops pane_flame_ops = {
	.name = "flame",
	.help_title = "Flame pane (F)",
	.slot = SLOT_BOTTOM,
	.share = 6,
	.keys = flame_keys,
	.own_cursor = true,
	.back_first = true,
	.open = flame_open,
	.close = flame_close,
	.nlines = flame_nlines,
	.title = flame_title,
	.header = flame_header,
	.draw_line = flame_draw_line,
	.key = flame_key,
	.event = flame_event,
	.search = flame_search,
	.save = flame_save,
};
