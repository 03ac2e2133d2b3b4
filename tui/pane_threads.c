/*
 * The threads pane: every thread of the target with its state, CPU% over
 * the last refresh interval and top frame; sorted, filtered by a PCRE2
 * regex; the selection follows the same thread (by tid) across refreshes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "core/render.h"
#include "tui/tui.h"

enum sort_col { SORT_TID, SORT_NAME, SORT_STATE, SORT_CPU, SORT_TOP, SORT__COUNT };

static const char *const sort_names[SORT__COUNT] = { "TID", "NAME", "STATE", "CPU%", "TOP" };

struct threads {
	size_t *rows;		/* indices into tui->snap->threads */
	size_t nrows, arows;
	enum sort_col sort;
	bool reverse;
	char *filter;
	pcre2_code *filter_re;
	struct tline scratch;
};

#define W_TID 6
#define W_NAME 15
#define W_STATE 8
#define W_CPU 5

static const char *
short_state(const struct py_thread *t)
{
	if (t->gil == GIL_HELD)
		return "has GIL";
	if (t->gil == GIL_WAITING)
		return "wait GIL";
	switch (t->os_state) {
	case 'R':
		return "running";
	case 'D':
		return "blocked";
	case 'T':
	case 't':
		return "stopped";
	case 'Z':
	case 'X':
		return "exiting";
	case '?':
		return "no OS thr";
	default:
		return "idle";
	}
}

static enum theme_elem
state_elem(const struct py_thread *t)
{
	if (t->gil == GIL_HELD)
		return EL_THREAD_GIL;
	if (t->gil == GIL_WAITING)
		return EL_THREAD_WAIT_GIL;
	if (t->os_state == 'R')
		return EL_THREAD_RUNNING;
	return EL_THREAD_IDLE;
}

static int
state_rank(const struct py_thread *t)
{
	if (t->gil == GIL_HELD)
		return 0;
	if (t->gil == GIL_WAITING)
		return 1;
	return t->os_state == 'R' ? 2 : 3;
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "function (file.py:12)" for the innermost frame. */
static void
top_frame(const struct py_thread *t, struct sbuf *out)
{
	const struct py_frame *f;

	if (t->partial)
		sbuf_add(out, "[partial] ");
	if (t->nframes == 0) {
		sbuf_add(out, t->error ? t->error : "(no Python frames)");
		return;
	}
	f = &t->frames[0];
	sbuf_addf(out, "%s (%s:%d)", render_frame_function(f), base_name(f->filename), f->line);
}

static int
cmp_rows(const void *a, const void *b, void *arg)
{
	struct pane *p = arg;
	struct threads *th = p->data;
	const struct tui *tui = p->tui;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const struct py_thread *x = &tui->snap->threads[ia], *y = &tui->snap->threads[ib];
	int r = 0;

	switch (th->sort) {
	case SORT_NAME:
		r = strcmp(x->name ? x->name : "", y->name ? y->name : "");
		break;
	case SORT_STATE:
		r = state_rank(x) - state_rank(y);
		break;
	case SORT_CPU: {
		double cx = tui->cpu ? tui->cpu[ia] : 0, cy = tui->cpu ? tui->cpu[ib] : 0;

		r = (cx < cy) - (cx > cy);	/* busiest first */
		break;
	}
	case SORT_TOP: {
		const char *fx = x->nframes ? render_frame_function(&x->frames[0]) : "";
		const char *fy = y->nframes ? render_frame_function(&y->frames[0]) : "";

		r = strcmp(fx, fy);
		break;
	}
	case SORT_TID:
	case SORT__COUNT:
		break;
	}
	if (r == 0) {
		/* the snapshot's own order: main thread first, then by tid */
		r = (ia > ib) - (ia < ib);
	}
	return th->reverse ? -r : r;
}

static bool
matches(struct threads *th, const struct py_thread *t, struct sbuf *tmp)
{
	pcre2_match_data *md;
	int rc;

	if (th->filter_re == NULL)
		return true;
	tmp->len = 0;
	sbuf_addf(tmp, "%d %s %s ", (int)t->tid, t->name ? t->name : "?", short_state(t));
	top_frame(t, tmp);
	md = pcre2_match_data_create_from_pattern(th->filter_re, NULL);
	rc = pcre2_match(th->filter_re, (PCRE2_SPTR)tmp->s, tmp->len, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	return rc >= 0;
}

/* Rebuild the rows and put the cursor back on the selected thread. */
static void
rebuild(struct pane *p)
{
	struct threads *th = p->data;
	struct tui *tui = p->tui;
	struct sbuf tmp = { 0 };
	size_t i;

	th->nrows = 0;
	if (tui->snap == NULL)
		return;
	for (i = 0; i < tui->snap->nthreads; i++)
		if (matches(th, &tui->snap->threads[i], &tmp))
			*ARRAY_PUSH(th->rows, th->nrows, th->arows) = i;
	sbuf_free(&tmp);
	qsort_r(th->rows, th->nrows, sizeof *th->rows, cmp_rows, p);
	for (i = 0; i < th->nrows; i++) {
		if (tui->snap->threads[th->rows[i]].tid == tui->sel_tid) {
			p->cursor = i;
			return;
		}
	}
	/* The selected thread is gone or filtered out: stay at the same place. */
	if (p->cursor >= th->nrows)
		p->cursor = th->nrows ? th->nrows - 1 : 0;
	tui_select_thread(tui, th->nrows ? tui->snap->threads[th->rows[p->cursor]].tid : 0);
}

static void
threads_open(struct pane *p)
{
	p->data = xcalloc(1, sizeof(struct threads));
}

static void
threads_close(struct pane *p)
{
	struct threads *th = p->data;

	if (th == NULL)
		return;
	free(th->rows);
	free(th->filter);
	pcre2_code_free(th->filter_re);
	tline_free(&th->scratch);
	free(th);
	p->data = NULL;
}

static size_t
threads_nlines(struct pane *p)
{
	return ((struct threads *)p->data)->nrows;
}

static void
threads_title(struct pane *p, struct sbuf *out)
{
	struct threads *th = p->data;
	size_t total = p->tui->snap ? p->tui->snap->nthreads : 0;

	if (th->filter != NULL)
		sbuf_addf(out, "Threads %zu/%zu %s %s", th->nrows, total, glyph(G_DOT), th->filter);
	else
		sbuf_addf(out, "Threads %zu", total);
}

/* Whether the rows go from small to large values down the pane: CPU% comes
 * busiest first unless reversed, every other column smallest first. */
static bool
ascending(const struct threads *th)
{
	return (th->sort != SORT_CPU) != th->reverse;
}

/* The arrow means the same on every column: ▲ ascending, ▼ descending. */
static void
header_col(struct tline *l, struct threads *th, enum sort_col c, int width, bool right)
{
	char buf[32];

	if (th->sort == c)
		snprintf(buf, sizeof buf, "%s%s", sort_names[c],
		    draw_utf8() ? (ascending(th) ? "\u25b2" : "\u25bc") : (ascending(th) ? "^" : "v"));
	else
		snprintf(buf, sizeof buf, "%s", sort_names[c]);
	tline_col(l, EL_HEADER, buf, width, right);
}

static void
threads_header(struct pane *p, struct tline *l)
{
	struct threads *th = p->data;

	header_col(l, th, SORT_TID, W_TID, true);
	tline_add(l, EL_HEADER, " ");
	header_col(l, th, SORT_NAME, W_NAME, false);
	tline_add(l, EL_HEADER, " ");
	header_col(l, th, SORT_STATE, W_STATE, false);
	tline_add(l, EL_HEADER, " ");
	header_col(l, th, SORT_CPU, W_CPU + 1, true);
	tline_add(l, EL_HEADER, " ");
	header_col(l, th, SORT_TOP, 200, false);
}

static void
threads_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct threads *th = p->data;
	struct tui *tui = p->tui;
	size_t i = th->rows[line];
	const struct py_thread *t = &tui->snap->threads[i];
	struct sbuf top = { 0 };
	char buf[32];
	double cpu = tui->cpu ? tui->cpu[i] : -1;

	if (t->tid != 0)
		snprintf(buf, sizeof buf, "%d", (int)t->tid);
	else
		snprintf(buf, sizeof buf, "?");
	tline_col(l, EL_THREAD_TID, buf, W_TID, true);
	tline_add(l, EL_DEFAULT, " ");
	tline_col(l, EL_THREAD_NAME, t->name ? t->name : "?", W_NAME, false);
	tline_add(l, EL_DEFAULT, " ");
	tline_col(l, state_elem(t), short_state(t), W_STATE, false);
	tline_add(l, EL_DEFAULT, " ");
	if (cpu < 0)
		snprintf(buf, sizeof buf, "-");
	else
		snprintf(buf, sizeof buf, "%.1f", cpu);
	tline_col(l, cpu >= 50 ? EL_THREAD_CPU_HIGH : EL_THREAD_CPU, buf, W_CPU + 1, true);
	tline_add(l, EL_DEFAULT, " ");
	top_frame(t, &top);
	tline_add(l, t->nframes ? EL_THREAD_TOP : EL_STACK_ERROR, top.s);
	sbuf_free(&top);
}

static void
select_cursor(struct pane *p)
{
	struct threads *th = p->data;
	struct tui *tui = p->tui;
	pid_t tid;

	if (th->nrows == 0 || tui->snap == NULL)
		return;
	tid = tui->snap->threads[th->rows[p->cursor]].tid;
	tui_select_thread(tui, tid);
}

static bool threads_filter(struct pane *p, const char *re, char **cause);

static bool
threads_key(struct pane *p, enum action a)
{
	struct threads *th = p->data;
	struct tui *tui = p->tui;

	switch (a) {
	case A_ENTER:
		select_cursor(p);
		tui_open(tui, &(struct pane_event){ .kind = EV_OPEN_THREAD, .tid = tui->sel_tid });
		return true;
	case A_BACK:
		if (th->filter == NULL)
			return false;
		threads_filter(p, NULL, NULL);
		tui_status(tui, false, "filter cleared");
		return true;
	case A_SORT_NEXT:
	case A_SORT_PREV:
		th->sort = (enum sort_col)((th->sort + (a == A_SORT_NEXT ? 1 : SORT__COUNT - 1)) % SORT__COUNT);
		break;
	case A_SORT_INVERT:
		th->reverse = !th->reverse;
		break;
	case A_SORT_CPU:
		th->sort = SORT_CPU;
		th->reverse = false;
		break;
	default:
		return false;
	}
	rebuild(p);
	tui_status(tui, false, "sorted by %s, %s%s", sort_names[th->sort],
	    ascending(th) ? "ascending" : "descending", th->reverse ? " (reversed)" : "");
	return true;
}

static bool
threads_event(struct pane *p, const struct pane_event *ev)
{
	if (ev->kind == EV_SNAPSHOT)
		rebuild(p);
	return ev->kind == EV_OPEN_PROCESS;	/* it lists that process's threads already */
}

static void
threads_moved(struct pane *p)
{
	select_cursor(p);
}

static bool
threads_filter(struct pane *p, const char *re, char **cause)
{
	struct threads *th = p->data;
	pcre2_code *code;

	if (!pane_filter_compile(re, &code, cause))
		return false;
	pcre2_code_free(th->filter_re);
	free(th->filter);
	th->filter_re = code;
	th->filter = code ? xstrdup(re) : NULL;
	rebuild(p);
	return true;
}

static int
threads_want_width(struct pane *p)
{
	struct threads *th = p->data;
	struct sbuf top = { 0 };
	int w = 0, tw;
	size_t i;

	for (i = 0; p->tui->snap != NULL && i < th->nrows; i++) {
		top.len = 0;
		top_frame(&p->tui->snap->threads[th->rows[i]], &top);
		tw = text_width(top.s, top.len);
		if (tw > w)
			w = tw;
	}
	sbuf_free(&top);
	/* borders, marker, the fixed columns and their gaps, TOP */
	return 2 + 2 + W_TID + 1 + W_NAME + 1 + W_STATE + 1 + W_CPU + 1 + 1 + w;
}

static const char *
threads_filter_text(struct pane *p)
{
	return ((struct threads *)p->data)->filter;
}

static const struct keybinding threads_keys[] = {
	{ NULL, '\n', A_ENTER, "Stack", "show the selected thread's stack" },
	{ NULL, KEY_ENTER, A_ENTER, NULL, "show the selected thread's stack" },
	{ NULL, '\\', A_FILTER, "Filter", "filter threads by a regular expression (empty: all)" },
	{ NULL, '>', A_SORT_NEXT, NULL, "sort by the next column" },
	{ NULL, '<', A_SORT_PREV, NULL, "sort by the previous column" },
	{ NULL, 'I', A_SORT_INVERT, NULL, "invert the sort order" },
	{ NULL, 'P', A_SORT_CPU, NULL, "sort by CPU%, busiest first" },
	{ .key = 0 },
};

const struct pane_ops pane_threads_ops = {
	.name = "threads",
	.help_title = "Threads pane",
	.slot = SLOT_LIST,
	.keys = threads_keys,
	.marker = true,
	.open = threads_open,
	.close = threads_close,
	.nlines = threads_nlines,
	.title = threads_title,
	.header = threads_header,
	.draw_line = threads_draw_line,
	.key = threads_key,
	.event = threads_event,
	.moved = threads_moved,
	.want_width = threads_want_width,
	.filter = threads_filter,
	.filter_text = threads_filter_text,
};
