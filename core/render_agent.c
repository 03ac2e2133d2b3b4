#include "config.h"

#include "core/render_agent.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/render.h"
#include "core/termsafe.h"

#define INLINE_WIDTH 100	/* a value that fits on one line is shown on one */

static void
pad(struct sbuf *out, int n)
{
	while (n-- > 0)
		sbuf_add(out, " ");
}

/*
 * The target's text that may span lines (a repr, an expression): its line
 * breaks are kept and each continuation line is indented, so it cannot
 * forge a line of the layout; everything else is escaped.
 */
static void
add_indented(struct sbuf *out, const char *text, int indent)
{
	const char *nl;

	while ((nl = strchr(text, '\n')) != NULL) {
		termsafe_add(out, text, (size_t)(nl - text), TERMSAFE_KEEP_TAB);
		sbuf_add(out, "\n");
		pad(out, indent);
		text = nl + 1;
	}
	termsafe_adds(out, text, TERMSAFE_KEEP_TAB);
}

static void
more_note(struct sbuf *out, const struct value_tree *v, const char *what)
{
	if (v->more > 0)
		sbuf_addf(out, "... %lld more %s%s (-v shows all)", v->more, what,
		    v->more == 1 ? "" : "s");
}

/* The one-line form; false when it would not fit in `room` characters. */
static bool
inline_form(struct sbuf *b, const struct value_tree *n, size_t room)
{
	size_t i;

	if (b->len > room)
		return false;
	if (n->kind == VALUE_LEAF) {
		if (strchr(n->repr, '\n') != NULL)
			return false;
		termsafe_adds(b, n->repr, TERMSAFE_KEEP_TAB);
		return b->len <= room;
	}
	if (n->kind == VALUE_OBJECT) {
		termsafe_addf(b, "%s(", n->type_name);
		for (i = 0; i < n->nitems; i++) {
			termsafe_addf(b, "%s%s=", i == 0 ? "" : ", ", n->items[i].name);
			if (!inline_form(b, n->items[i].value, room))
				return false;
		}
		if (n->more > 0)
			sbuf_add(b, ", ...");
		sbuf_add(b, ")");
		return b->len <= room;
	}
	termsafe_adds(b, n->open, TERMSAFE_FIELD);
	for (i = 0; i < n->nitems; i++) {
		if (i > 0)
			sbuf_add(b, ", ");
		if (n->kind == VALUE_MAP) {
			if (!inline_form(b, n->items[i].key, room))
				return false;
			sbuf_add(b, ": ");
		}
		if (!inline_form(b, n->items[i].value, room))
			return false;
	}
	if (n->more > 0)
		sbuf_addf(b, "%s... %lld more item%s", n->nitems == 0 ? "" : ", ", n->more,
		    n->more == 1 ? "" : "s");
	/* A one-element tuple keeps its comma. */
	if (strcmp(n->open, "(") == 0 && n->nitems == 1 && n->n == 1)
		sbuf_add(b, ",");
	termsafe_adds(b, n->close, TERMSAFE_FIELD);
	return b->len <= room;
}

void
render_value(struct sbuf *out, const struct value_tree *n, int indent)
{
	struct sbuf b = { 0 };
	size_t i;

	if (n->kind == VALUE_LEAF) {
		add_indented(out, n->repr, indent);
		return;
	}
	if (inline_form(&b, n, INLINE_WIDTH > indent + 20 ? (size_t)(INLINE_WIDTH - indent) : 20)) {
		sbuf_add(out, b.s);
		sbuf_free(&b);
		return;
	}
	sbuf_free(&b);
	if (n->kind == VALUE_OBJECT)
		termsafe_addf(out, "%s @ %s (\n", n->type_name, n->addr);
	else
		termsafe_addf(out, "%s\n", n->open);
	for (i = 0; i < n->nitems; i++) {
		pad(out, indent + 4);
		if (n->kind == VALUE_OBJECT) {
			termsafe_addf(out, "%s=", n->items[i].name);
		} else if (n->kind == VALUE_MAP) {
			render_value(out, n->items[i].key, indent + 4);
			sbuf_add(out, ": ");
		}
		render_value(out, n->items[i].value, indent + 4);
		sbuf_add(out, ",\n");
	}
	if (n->more > 0) {
		pad(out, indent + 4);
		more_note(out, n, n->kind == VALUE_OBJECT ? "attribute" : "item");
		sbuf_add(out, "\n");
	}
	pad(out, indent);
	if (n->kind == VALUE_OBJECT)
		sbuf_add(out, ")");
	else
		termsafe_adds(out, n->close, TERMSAFE_FIELD);
}

void
render_value_block(struct sbuf *out, const struct value_block *b)
{
	sbuf_add(out, "EXPR:  ");
	add_indented(out, b->expr, 7);
	termsafe_addf(out, "\nTYPE:  %s\n", b->type_name);
	if (b->has_count)
		sbuf_addf(out, "COUNT: %lld instance%s (subclasses included), %lld shown\n",
		    b->count, b->count == 1 ? "" : "s", b->shown);
	sbuf_add(out, "VALUE: ");
	render_value(out, b->value, 7);
	sbuf_add(out, "\n");
	if (b->truncated)
		sbuf_add(out, "(the value was cut short: it is larger than flight_profiler shows)\n");
}

/* ---- stack ------------------------------------------------------------------ */

void
render_apply_thread_names(struct py_snapshot *snap, const struct agent_threads *m)
{
	size_t i, k;

	for (i = 0; m != NULL && i < snap->nthreads; i++) {
		struct py_thread *th = &snap->threads[i];

		for (k = 0; k < m->nnames && m->names[k].ident != th->thread_id; k++)
			;
		if (k == m->nnames)
			continue;
		free(th->name);
		th->name = xstrdup(m->names[k].name);
	}
}

static void
locals_lines(struct sbuf *out, const struct frame_locals *l)
{
	size_t i;

	if (l->note != NULL) {
		termsafe_addf(out, "        (%s)\n", l->note);
		return;
	}
	for (i = 0; i < l->nvars; i++) {
		termsafe_addf(out, "        %s = ", l->vars[i].name);
		add_indented(out, l->vars[i].repr, 12);
		sbuf_add(out, "\n");
	}
	if (l->more > 0)
		sbuf_addf(out, "        ... %lld more locals\n", l->more);
}

void
render_stack_locals(struct sbuf *out, const struct py_snapshot *snap,
    const struct pyruntime *rt, const char *cmdline, struct source_cache *sc,
    const struct agent_threads *m)
{
	const struct agent_frame *a;
	size_t i, k, nf;

	termsafe_addf(out, "Process %d: %s\n", (int)snap->pid, cmdline ? cmdline : "?");
	termsafe_addf(out, "Python v%s (%s)\n", snap->version, rt->binary);
	for (i = 0; i < snap->nthreads; i++) {
		const struct py_thread *t = &snap->threads[i];

		sbuf_add(out, "\n");
		if (t->tid != 0)
			sbuf_addf(out, "Traceback for thread %d", (int)t->tid);
		else
			sbuf_addf(out, "Traceback for thread 0x%llx", (unsigned long long)t->thread_id);
		termsafe_addf(out, " (%s) [%s] (most recent call last):\n", t->name ? t->name : "?",
		    render_thread_status(t));
		nf = t->nframes;
		/* Outermost first; the agent's frames (innermost first) align from the outer end. */
		for (k = nf; k-- > 0;) {
			const struct py_frame *f = &t->frames[k];

			render_frame_line(out, "", f->filename, f->line, render_frame_function(f), sc);
			a = agent_threads_frame(m, t->thread_id, nf, k, f->filename,
			    render_frame_function(f));
			if (a != NULL)
				locals_lines(out, &a->locals);
		}
		if (nf == 0 && t->error == NULL)
			sbuf_add(out, "    (no Python frames)\n");
		if (t->error != NULL)
			termsafe_addf(out, "    (stack cut short: %s)\n", t->error);
		if (agent_threads_stack(m, t->thread_id) == NULL && nf > 0)
			sbuf_add(out, "    (no locals: the thread was not seen by the agent)\n");
	}
}

void
render_asyncio(struct sbuf *out, const struct py_snapshot *snap, const struct agent_threads *m)
{
	size_t i, j, k, n;

	sbuf_add(out, "\n");
	if (m->nloops == 0) {
		termsafe_addf(out, "Asyncio: %s\n", m->asyncio_note ? m->asyncio_note :
		    "no event loop is running in any thread");
		return;
	}
	for (i = 0; i < m->nloops; i++) {
		const struct async_loop *loop = &m->loops[i];
		const struct py_thread *t = NULL;

		for (n = 0; n < snap->nthreads; n++)
			if (snap->threads[n].thread_id == loop->ident)
				t = &snap->threads[n];
		n = loop->ntasks;
		if (t != NULL && t->tid != 0)
			termsafe_addf(out, "Asyncio tasks of the event loop in thread %d (%s): %zu task%s\n",
			    (int)t->tid, t->name ? t->name : "?", n, n == 1 ? "" : "s");
		else
			sbuf_addf(out, "Asyncio tasks of the event loop in thread 0x%llx: %zu task%s\n",
			    (unsigned long long)loop->ident, n, n == 1 ? "" : "s");
		if (loop->error != NULL)
			termsafe_addf(out, "    (%s)\n", loop->error);
		for (j = 0; j < loop->ntasks; j++) {
			const struct async_task *task = &loop->tasks[j];

			termsafe_addf(out, "\n  Task '%s' %s() [%s]", task->name, task->coro,
			    task->current ? "running" : task->state);
			if (task->awaiting != NULL)
				termsafe_addf(out, " awaiting %s", task->awaiting);
			sbuf_add(out, " (most recent call last):\n");
			for (k = task->nframes; k-- > 0;)
				render_frame_line(out, "", task->frames[k].file, task->frames[k].line,
				    task->frames[k].func, NULL);
			if (task->nframes == 0)
				sbuf_add(out, "    (no frames: the task has not started or has finished)\n");
		}
	}
}

/* ---- watch ------------------------------------------------------------------ */

#define WATCH_EXPR_MIN 10	/* the EXPR column is at least this wide */
#define WATCH_EXPR_MAX 30	/* ... and at most this: longer ones go on their own line */

static void
watch_started(struct sbuf *out, const struct watch_record *w)
{
	size_t i;

	if (w->nobserved == 1 && w->matched == 1) {
		termsafe_addf(out, "Watching %s (Ctrl-C to stop).\n", w->observed[0]);
		return;
	}
	sbuf_addf(out, "Pattern matched %lld method%s; watching %zu (Ctrl-C to stop):\n",
	    w->matched, w->matched == 1 ? "" : "s", w->nobserved);
	for (i = 0; i < w->nobserved; i++)
		termsafe_addf(out, "  %s\n", w->observed[i]);
}

static void
watch_header(struct sbuf *out, const struct watch_record *w)
{
	char when[64];
	time_t sec = (time_t)w->time;
	struct tm tm;

	if (localtime_r(&sec, &tm) == NULL ||
	    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		strcpy(when, "?");
	sbuf_addf(out, "[%lld] %s.%03d  ", w->index, when,
	    (int)((w->time - (double)sec) * 1000) % 1000);
	termsafe_addf(out, "%s  ", w->method);
	if (w->has_cost)
		sbuf_addf(out, "cost=%.3f ms  ", w->cost_ms);
	if (w->exception != NULL)
		termsafe_addf(out, "raised %s\n", w->exception);
	else
		sbuf_add(out, w->has_cost ? "returned\n" : "at entry\n");
	if (w->dropped > 0)
		sbuf_addf(out, "    (%lld calls were not shown: they came faster than they could be "
		    "formatted)\n", w->dropped);
}

void
render_watch_record(struct sbuf *out, const struct watch_record *w)
{
	size_t i, width = WATCH_EXPR_MIN, len;

	if (w->started) {
		watch_started(out, w);
		return;
	}
	watch_header(out, w);
	for (i = 0; i < w->nstack; i++)
		termsafe_addf(out, "    at %s (%s:%lld)\n", w->stack[i].func, w->stack[i].file,
		    w->stack[i].line);
	for (i = 0; i < w->nvalues; i++)
		if ((len = strlen(w->values[i].expr)) > width && len <= WATCH_EXPR_MAX)
			width = len;
	sbuf_addf(out, "    %-*s  VALUE\n", (int)width, "EXPR");
	for (i = 0; i < w->nvalues; i++) {
		const struct watch_value *v = &w->values[i];

		sbuf_add(out, "    ");
		add_indented(out, v->expr, 4);
		len = strlen(v->expr);
		if (len > width) {
			sbuf_add(out, "\n");
			len = 0;
			pad(out, 4);
		}
		pad(out, (int)(width - len) + 2);
		if (v->error != NULL) {
			sbuf_add(out, "(");
			add_indented(out, v->error, (int)width + 6);
			sbuf_add(out, ")");
		} else {
			render_value(out, v->value, (int)width + 6);
		}
		sbuf_add(out, v->truncated ? "  (cut short)\n" : "\n");
	}
}
