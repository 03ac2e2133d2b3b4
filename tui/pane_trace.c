/*
 * The trace pane: the call trees of a `:trace` as they arrive (the last
 * TRACE_KEEP calls), one line per node, indented by depth, coloured by the
 * node's share of its parent, repeats merged as the agent merged them.
 * Enter folds or unfolds the node under the cursor, Left folds, Right
 * unfolds, y copies the call's tree as text.  It only shows: the runner
 * hands it the events (runner_io.record); it never talks to the agent.
 * The trace runs in the TUI's background (tui/stream.c): while it waits
 * for a call the title says so, and q or Esc stops it (and closes the
 * pane once it has ended).
 */
#include "config.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "core/model_trace.h"
#include "core/render_trace.h"
#include "tui/tui.h"

#define TRACE_KEEP 50		/* calls kept; older ones go */

struct trace_line {
	size_t rec;
	struct trace_node *node;	/* for a hidden-calls line: the node they are under */
	const struct trace_node *parent;
	int depth;
	bool hidden;
};

struct trace_view {
	struct trace_record recs[TRACE_KEEP];
	size_t nrecs;
	char *what;		/* the traced method(s) */
	bool py_only;		/* the eval path: builtins are not in the trees */
	char *end;		/* "stopped after 3 calls", or NULL while running */
	bool running, leave;
	struct trace_line *lines;
	size_t nlines, alines;
};

static void
add_line(struct trace_view *v, size_t rec, struct trace_node *n, const struct trace_node *parent,
    int depth, bool hidden)
{
	struct trace_line *l = ARRAY_PUSH(v->lines, v->nlines, v->alines);

	l->rec = rec;
	l->node = n;
	l->parent = parent;
	l->depth = depth;
	l->hidden = hidden;
}

static void
add_node(struct trace_view *v, size_t rec, struct trace_node *n, const struct trace_node *parent,
    int depth)
{
	size_t i;

	add_line(v, rec, n, parent, depth, false);
	if (n->folded)
		return;
	for (i = 0; i < n->nchildren; i++)
		add_node(v, rec, &n->children[i], n, depth + 1);
	if (n->hidden > 0)
		add_line(v, rec, n, n, depth + 1, true);
}

static void
rebuild(struct pane *p)
{
	struct trace_view *v = p->data;
	size_t i;

	v->nlines = 0;
	for (i = 0; i < v->nrecs; i++)
		if (v->recs[i].root != NULL)
			add_node(v, i, v->recs[i].root, NULL, 0);
	pane_clamp(p);
	p->tui->dirty = true;
}

static void
view_clear(struct trace_view *v)
{
	size_t i;

	for (i = 0; i < v->nrecs; i++)
		trace_record_clear(&v->recs[i]);
	v->nrecs = 0;
	v->nlines = 0;
	free(v->what);
	free(v->end);
	v->what = v->end = NULL;
}

static void
started(struct pane *p, const struct trace_record *t)
{
	struct trace_view *v = p->data;

	view_clear(v);
	if (t->nobserved == 1)
		v->what = xstrdup(t->observed[0]);
	else
		v->what = xasprintf("%zu methods", t->nobserved);
	v->py_only = t->mechanism != NULL && strcmp(t->mechanism, "eval") == 0;
	v->running = true;
	v->leave = false;
	p->cursor = p->top = 0;
	rebuild(p);
}

/* Keep the record (moved out of *t). */
static void
traced(struct pane *p, struct trace_record *t)
{
	struct trace_view *v = p->data;
	size_t old = v->nlines;

	if (v->nrecs == TRACE_KEEP) {
		trace_record_clear(&v->recs[0]);
		memmove(&v->recs[0], &v->recs[1], (TRACE_KEEP - 1) * sizeof v->recs[0]);
		v->nrecs--;
	}
	v->recs[v->nrecs++] = *t;
	memset(t, 0, sizeof *t);
	rebuild(p);
	/* Follow the newest call while the cursor is on the last line. */
	if (v->nlines > 0 && (old == 0 || p->cursor + 1 >= old))
		pane_set_cursor(p, v->nlines - 1);
}

static void
ended(struct pane *p, const struct runner_record *rec)
{
	struct trace_view *v = p->data;

	v->running = false;
	free(v->end);
	v->end = xasprintf("%s after %lld call%s%s", rec->failed ? "ended" : rec->cancelled ?
	    "stopped" : rec->reset ? "removed by reset" : "done", rec->shown,
	    rec->shown == 1 ? "" : "s", rec->dropped > 0 ? ", some dropped" : "");
	if (!rec->failed)
		tui_status(p->tui, false, "trace: %s; the hooks are removed", v->end);
	if (v->leave)
		tui_hide_pane(p->tui, p);
	p->tui->dirty = true;
}

bool
pane_trace_record(void *tui, struct runner_record *rec)
{
	struct tui *t = tui;
	struct pane *p;
	struct trace_view *v;

	if (strcmp(rec->cmd, "trace") != 0)
		return false;
	p = tui_pane(t, &pane_trace_ops);
	v = p->data;
	if (rec->kind == RUNNER_RECORD_END) {
		/* One that never started (it failed first) says so as runner_exec would. */
		if (!v->running)
			return false;
		ended(p, rec);
		return true;
	}
	if (rec->trace == NULL)
		return false;
	/* Shown when it starts; a call that comes later leaves the console or the output pane be. */
	if (rec->kind == RUNNER_RECORD_START) {
		started(p, rec->trace);
		tui_show_pane(t, p, true);
	} else {
		traced(p, rec->trace);
	}
	return true;
}

static void
trace_open(struct pane *p)
{
	p->data = xcalloc(1, sizeof(struct trace_view));
}

static void
trace_close(struct pane *p)
{
	struct trace_view *v = p->data;

	if (v == NULL)
		return;
	view_clear(v);
	free(v->lines);
	free(v);
	p->data = NULL;
}

static size_t
trace_nlines(struct pane *p)
{
	return ((struct trace_view *)p->data)->nlines;
}

static void
trace_title(struct pane *p, struct sbuf *out)
{
	struct trace_view *v = p->data;

	sbuf_add(out, "Trace");
	if (v->what != NULL)
		sbuf_addf(out, " %s %s %s %zu call%s%s", glyph(G_DOT), v->what, glyph(G_DOT),
		    v->nrecs, v->nrecs == 1 ? "" : "s", v->py_only ? ", Python calls only" : "");
	if (v->end != NULL)
		sbuf_addf(out, " (%s)", v->end);
	else if (v->running && v->nrecs == 0)
		sbuf_addf(out, " %s waiting for a call (q stops)", glyph(G_DOT));
	else if (v->running)
		sbuf_addf(out, " %s running (q stops)", glyph(G_DOT));
}

/* Hot lines stand out: the theme's high-CPU red, wait-GIL amber, idle grey. */
static enum theme_elem
share_elem(double share)
{
	if (share >= 50.0)
		return EL_THREAD_CPU_HIGH;
	if (share >= 20.0)
		return EL_THREAD_WAIT_GIL;
	if (share < 5.0)
		return EL_THREAD_IDLE;
	return EL_OUTPUT;
}

static void
record_head(struct tline *tl, const struct trace_record *r)
{
	tline_addf(tl, EL_THREAD_TID, "[%lld] ", r->index);
	tline_add(tl, EL_THREAD_NAME, r->thread);
	tline_addf(tl, EL_DEFAULT, " %.3f ms%s%s  ", r->cost_ms, r->exception ? " raised " : "",
	    r->exception ? r->exception : "");
}

static void
trace_draw_line(struct pane *p, size_t line, struct tline *tl)
{
	struct trace_view *v = p->data;
	const struct trace_line *l = &v->lines[line];
	struct sbuf s = { 0 };
	int i;

	for (i = 0; i < l->depth; i++)
		tline_add(tl, EL_DEFAULT, "  ");
	if (l->hidden) {
		render_trace_hidden(&s, l->node);
		tline_add(tl, EL_THREAD_IDLE, s.s);
		sbuf_free(&s);
		return;
	}
	if (l->node->nchildren > 0 || l->node->hidden > 0)
		tline_add(tl, EL_STACK_MODULE, l->node->folded ? "+ " : "- ");
	else
		tline_add(tl, EL_DEFAULT, "  ");
	if (l->parent == NULL)
		record_head(tl, &v->recs[l->rec]);
	render_trace_label(&s, l->node, l->parent);
	tline_add(tl, share_elem(trace_node_share(l->node, l->parent)), s.s);
	sbuf_free(&s);
}

static void
fold(struct pane *p, int how)	/* 1 fold, 0 unfold, -1 toggle */
{
	struct trace_view *v = p->data;
	struct trace_node *n;

	if (p->cursor >= v->nlines)
		return;
	n = v->lines[p->cursor].node;
	if (v->lines[p->cursor].hidden || (n->nchildren == 0 && n->hidden == 0))
		return;
	n->folded = how < 0 ? !n->folded : how == 1;
	rebuild(p);
}

static bool
trace_key(struct pane *p, enum action a)
{
	struct trace_view *v = p->data;
	struct sbuf s = { 0 };

	switch (a) {
	case A_ENTER:
		fold(p, -1);
		return true;
	case A_SCROLL_LEFT:
		fold(p, 1);
		return true;
	case A_SCROLL_RIGHT:
		fold(p, 0);
		return true;
	case A_BACK:
		/* while it runs (tui/stream.c stops it): close when it has ended */
		if (!v->running)
			return false;
		v->leave = true;
		tui_status(p->tui, false, "stopping the trace...");
		return true;
	case A_COPY:
		if (p->cursor >= v->nlines)
			return true;
		render_trace_record(&s, &v->recs[v->lines[p->cursor].rec]);
		tui_copy(p->tui, s.s);
		sbuf_free(&s);
		return true;
	default:
		return false;
	}
}

static bool
trace_live(struct pane *p)
{
	return ((struct trace_view *)p->data)->running;
}

static const struct keybinding trace_keys[] = {
	{ NULL, '\n', A_ENTER, "Fold", "fold or unfold the calls beneath this one" },
	{ NULL, KEY_ENTER, A_ENTER, NULL, "fold or unfold the calls beneath this one" },
	{ NULL, KEY_LEFT, A_SCROLL_LEFT, NULL, "fold the calls beneath this one" },
	{ NULL, 'h', A_SCROLL_LEFT, NULL, "fold the calls beneath this one" },
	{ NULL, KEY_RIGHT, A_SCROLL_RIGHT, NULL, "unfold the calls beneath this one" },
	{ NULL, 'l', A_SCROLL_RIGHT, NULL, "unfold the calls beneath this one" },
	{ NULL, 'y', A_COPY, "Copy", "copy this call's tree as text (OSC 52)" },
	{ NULL, 'q', A_BACK, "Stop", "stop the trace (the hooks are removed) and close the pane" },
	{ .key = 0 },
};

const struct pane_ops pane_trace_ops = {
	.name = "trace",
	.help_title = "Trace pane",
	.slot = SLOT_BOTTOM,
	.share = 6,
	.keys = trace_keys,
	.marker = true,
	.open = trace_open,
	.close = trace_close,
	.nlines = trace_nlines,
	.title = trace_title,
	.draw_line = trace_draw_line,
	.key = trace_key,
	.live = trace_live,
};
