/*
 * The stack pane: the selected thread's frames, outermost first and the
 * innermost (most recent call) last, as in a traceback; merged with native
 * frames when they are shown.  Enter opens the source of a frame.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "core/render.h"
#include "tui/inside.h"
#include "tui/tui.h"

struct srow {
	enum { ROW_PY, ROW_NATIVE, ROW_NOTE } kind;
	size_t i;		/* frame index */
	const char *note;
};

struct stack {
	struct srow *rows;
	size_t nrows, arows;
	pid_t tid;		/* whose rows these are */
	bool moved;		/* the user moved the cursor on this thread */
	int locw;		/* width of the location column */
	int funcw;		/* width of the function column */
	char *notebuf;
};

static void
row(struct stack *s, int kind, size_t i, const char *note)
{
	*ARRAY_PUSH(s->rows, s->nrows, s->arows) = (struct srow){ kind, i, note };
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void
build_merged(struct stack *s, const struct py_thread *t)
{
	size_t neval = 0, groups = 0, i, py = t->nframes;

	for (i = 0; i < t->nnative; i++)
		neval += t->native[i].is_eval;
	for (i = 0; i < t->nframes; i++)
		groups += t->frames[i].entry;
	if (neval != groups) {
		free(s->notebuf);
		s->notebuf = xasprintf("(%zu Python evaluation calls but %zu native evaluation "
		    "frames: stacks shown unmerged)", groups, neval);
		row(s, ROW_NOTE, 0, s->notebuf);
		for (i = t->nnative; i-- > 0;)
			row(s, ROW_NATIVE, i, NULL);
		for (i = t->nframes; i-- > 0;)
			row(s, ROW_PY, i, NULL);
		return;
	}
	for (i = t->nnative; i-- > 0;) {
		if (!t->native[i].is_eval) {
			row(s, ROW_NATIVE, i, NULL);
			continue;
		}
		do {
			py--;
			row(s, ROW_PY, py, NULL);
		} while (py > 0 && !t->frames[py - 1].entry);
	}
}

static void
rebuild(struct pane *p)
{
	struct stack *s = p->data;
	const struct py_thread *t = tui_selected_thread(p->tui);
	bool same = t != NULL && t->tid == s->tid;
	const char *func;
	size_t i;
	int w;

	s->nrows = 0;
	s->locw = s->funcw = 0;
	if (t == NULL) {
		s->tid = 0;
		p->cursor = 0;
		return;
	}
	if (t->native_error != NULL) {
		row(s, ROW_NOTE, 0, t->native_error);
		for (i = t->nframes; i-- > 0;)
			row(s, ROW_PY, i, NULL);
	} else if (t->native != NULL) {
		build_merged(s, t);
	} else {
		for (i = t->nframes; i-- > 0;)
			row(s, ROW_PY, i, NULL);
		if (t->nframes == 0 && t->error == NULL)
			row(s, ROW_NOTE, 0, "(no Python frames)");
	}
	if (t->error != NULL)
		row(s, ROW_NOTE, 0, t->error);

	for (i = 0; i < s->nrows; i++) {
		char buf[512];

		if (s->rows[i].kind != ROW_PY)
			continue;
		w = snprintf(buf, sizeof buf, "%s:%d", base_name(t->frames[s->rows[i].i].filename),
		    t->frames[s->rows[i].i].line);
		w = text_width(buf, (size_t)w);
		if (w > s->locw)
			s->locw = w;
		func = render_frame_function(&t->frames[s->rows[i].i]);
		w = text_width(func, strlen(func));
		if (w > s->funcw)
			s->funcw = w;
	}
	if (same && s->moved && p->cursor < s->nrows)
		return;
	/* Put the cursor on the innermost Python frame. */
	s->tid = t->tid;
	s->moved = false;
	p->cursor = s->nrows ? s->nrows - 1 : 0;
	for (i = s->nrows; i-- > 0;) {
		if (s->rows[i].kind == ROW_PY) {
			p->cursor = i;
			break;
		}
	}
}

static void
stack_open(struct pane *p)
{
	p->data = xcalloc(1, sizeof(struct stack));
}

static void
stack_close(struct pane *p)
{
	struct stack *s = p->data;

	if (s == NULL)
		return;
	free(s->rows);
	free(s->notebuf);
	free(s);
	p->data = NULL;
}

static size_t
stack_nlines(struct pane *p)
{
	return ((struct stack *)p->data)->nrows;
}

static void
stack_title(struct pane *p, struct sbuf *out)
{
	const struct py_thread *t = tui_selected_thread(p->tui);

	sbuf_add(out, "Stack");
	if (t == NULL)
		return;
	sbuf_addf(out, " %s %s (%d)", glyph(G_DOT), t->name ? t->name : "?", (int)t->tid);
	/* The frames below may be short or mixed: the note at the end says why. */
	if (t->partial)
		sbuf_add(out, " [partial]");
	if (p->tui->native)
		sbuf_addf(out, " %s native", glyph(G_DOT));
}

/* Columns of the text after the function when the source line is shown. */
#define SOURCE_MIN 20

/*
 * The function, and after it the frame's source line when the pane has
 * room for both uncut (a wide terminal leaves the stack pane half empty).
 */
static void
source_column(struct pane *p, const struct py_frame *f, struct tline *l, int locw)
{
	struct stack *s = p->data;
	const char *func = render_frame_function(f), *text;
	int room = p->w - 2 - 2 - locw - 2 - s->funcw - 2;

	text = room >= SOURCE_MIN && p->tui->sc != NULL ?
	    source_line(p->tui->sc, f->filename, f->line) : NULL;
	if (text == NULL) {
		tline_add(l, EL_STACK_FUNCTION, func);
		return;
	}
	tline_col(l, EL_STACK_FUNCTION, func, s->funcw, false);
	tline_add(l, EL_DEFAULT, "  ");
	while (*text == ' ' || *text == '\t')
		text++;
	tline_add(l, EL_STACK_SOURCE, text);
}

static int
stack_want_width(struct pane *p)
{
	struct stack *s = p->data;

	return 2 + 2 + s->locw + 2 + s->funcw;
}

static void
stack_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct stack *s = p->data;
	const struct py_thread *t = tui_selected_thread(p->tui);
	const struct srow *r = &s->rows[line];
	char buf[512];

	if (t == NULL)
		return;
	switch (r->kind) {
	case ROW_PY: {
		const struct py_frame *f = &t->frames[r->i];
		int locw = s->locw < p->w / 2 ? s->locw : p->w / 2;

		snprintf(buf, sizeof buf, "%s:%d", base_name(f->filename), f->line);
		tline_col_tail(l, EL_STACK_FILE, buf, locw);
		tline_add(l, EL_DEFAULT, "  ");
		source_column(p, f, l, locw);
		break;
	}
	case ROW_NATIVE: {
		const struct native_frame *n = &t->native[r->i];

		tline_add(l, EL_STACK_NATIVE, "(C) ");
		if (n->function != NULL)
			tline_add(l, EL_STACK_NATIVE, n->function);
		else
			tline_addf(l, EL_STACK_NATIVE, "0x%llx", (unsigned long long)n->pc);
		if (n->module != NULL) {
			tline_add(l, EL_DEFAULT, "  ");
			tline_add(l, EL_STACK_MODULE, n->module);
		}
		if (n->file != NULL) {
			tline_add(l, EL_DEFAULT, "  ");
			tline_addf(l, EL_STACK_MODULE, "%s:%d", base_name(n->file), n->line);
		}
		break;
	}
	case ROW_NOTE:
		tline_add(l, EL_STACK_ERROR, r->note);
		break;
	}
}

static bool
stack_key(struct pane *p, enum action a)
{
	struct stack *s = p->data;
	struct tui *tui = p->tui;
	const struct py_thread *t = tui_selected_thread(tui);
	struct pane_event ev;
	size_t index = SIZE_MAX;

	switch (a) {
	case A_ENTER:
		if (t == NULL || s->nrows == 0)
			return true;
		if (s->rows[p->cursor].kind == ROW_PY) {
			const struct py_frame *f = &t->frames[s->rows[p->cursor].i];

			ev = (struct pane_event){ EV_OPEN_SOURCE, t->tid, f->filename,
			    render_frame_function(f), f->line };
			index = s->rows[p->cursor].i;
		} else if (s->rows[p->cursor].kind == ROW_NATIVE &&
		    t->native[s->rows[p->cursor].i].file != NULL) {
			const struct native_frame *n = &t->native[s->rows[p->cursor].i];

			ev = (struct pane_event){ EV_OPEN_SOURCE, t->tid, n->file, n->function, n->line };
		} else {
			tui_status(tui, true, "no source for this frame");
			return true;
		}
		if (!tui_open(tui, &ev))
			return true;
		/* its locals, when the agent is there (never loads it) */
		inside_frame(tui, t, index);
		return true;
	default:
		return false;
	}
}

static bool
stack_event(struct pane *p, const struct pane_event *ev)
{
	switch (ev->kind) {
	case EV_SNAPSHOT:
	case EV_SELECT:
		rebuild(p);
		return false;
	case EV_OPEN_THREAD:
		return true;	/* it shows the selected thread already */
	default:
		return false;
	}
}

static void
stack_moved(struct pane *p)
{
	((struct stack *)p->data)->moved = true;
}

static const struct keybinding stack_keys[] = {
	{ NULL, '\n', A_ENTER, "Source", "show the source around the selected frame" },
	{ NULL, KEY_ENTER, A_ENTER, NULL, "show the source around the selected frame" },
	{ NULL, 'x', A_NATIVE, "Native", "show native (C) frames too, or not "
	    "(each thread is stopped briefly while it is unwound)" },
	{ NULL, 'y', A_COPY, "Copy", "copy the stack as text to the clipboard (OSC 52)" },
	{ .key = 0 },
};

const struct pane_ops pane_stack_ops = {
	.name = "stack",
	.help_title = "Stack pane",
	.slot = SLOT_MAIN,
	.keys = stack_keys,
	.marker = true,
	.open = stack_open,
	.close = stack_close,
	.nlines = stack_nlines,
	.title = stack_title,
	.draw_line = stack_draw_line,
	.key = stack_key,
	.event = stack_event,
	.moved = stack_moved,
	.want_width = stack_want_width,
};
