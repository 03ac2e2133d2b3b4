#include "config.h"

#include "core/render_agent.h"

#include <stdlib.h>
#include <string.h>

#include "core/render.h"
#include "core/termsafe.h"

#define INLINE_WIDTH 100	/* a value that fits on one line is shown on one */

static const char *
str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

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
more_note(struct sbuf *out, json_t *node, const char *what)
{
	json_int_t more = json_integer_value(json_object_get(node, "more"));

	if (more > 0)
		sbuf_addf(out, "... %lld more %s%s (-v shows all)", (long long)more, what,
		    more == 1 ? "" : "s");
}

/* The one-line form; false when it would not fit in `room` characters. */
static bool
inline_form(struct sbuf *b, json_t *n, size_t room)
{
	json_t *items, *v;
	size_t i;
	bool first = true;

	if (b->len > room)
		return false;
	if (json_object_get(n, "r") != NULL) {
		const char *r = str(n, "r");

		if (strchr(r, '\n') != NULL)
			return false;
		termsafe_adds(b, r, TERMSAFE_KEEP_TAB);
		return b->len <= room;
	}
	if (json_object_get(n, "obj") != NULL) {
		termsafe_addf(b, "%s(", str(n, "obj"));
		json_array_foreach(json_object_get(n, "attrs"), i, v) {
			termsafe_addf(b, "%s%s=", first ? "" : ", ", json_string_value(json_array_get(v, 0)));
			if (!inline_form(b, json_array_get(v, 1), room))
				return false;
			first = false;
		}
		if (json_integer_value(json_object_get(n, "more")) > 0)
			sbuf_add(b, ", ...");
		sbuf_add(b, ")");
		return b->len <= room;
	}
	items = json_object_get(n, "items");
	termsafe_adds(b, str(n, "open"), TERMSAFE_FIELD);
	json_array_foreach(items, i, v) {
		if (!first)
			sbuf_add(b, ", ");
		first = false;
		if (json_object_get(n, "map") != NULL) {
			if (!inline_form(b, json_array_get(v, 0), room))
				return false;
			sbuf_add(b, ": ");
			if (!inline_form(b, json_array_get(v, 1), room))
				return false;
		} else if (!inline_form(b, v, room)) {
			return false;
		}
	}
	if (json_integer_value(json_object_get(n, "more")) > 0)
		sbuf_addf(b, "%s... %lld more item%s", first ? "" : ", ",
		    (long long)json_integer_value(json_object_get(n, "more")),
		    json_integer_value(json_object_get(n, "more")) == 1 ? "" : "s");
	/* A one-element tuple keeps its comma. */
	if (strcmp(str(n, "open"), "(") == 0 && json_array_size(items) == 1 &&
	    json_integer_value(json_object_get(n, "n")) == 1)
		sbuf_add(b, ",");
	termsafe_adds(b, str(n, "close"), TERMSAFE_FIELD);
	return b->len <= room;
}

void
render_value(struct sbuf *out, json_t *n, int indent)
{
	struct sbuf b = { 0 };
	json_t *v;
	size_t i;
	bool is_map = json_object_get(n, "map") != NULL;

	if (json_object_get(n, "r") != NULL) {
		add_indented(out, str(n, "r"), indent);
		return;
	}
	if (inline_form(&b, n, INLINE_WIDTH > indent + 20 ? (size_t)(INLINE_WIDTH - indent) : 20)) {
		sbuf_add(out, b.s);
		sbuf_free(&b);
		return;
	}
	sbuf_free(&b);
	if (json_object_get(n, "obj") != NULL) {
		termsafe_addf(out, "%s @ %s (\n", str(n, "obj"), str(n, "addr"));
		json_array_foreach(json_object_get(n, "attrs"), i, v) {
			pad(out, indent + 4);
			termsafe_addf(out, "%s=", json_string_value(json_array_get(v, 0)));
			render_value(out, json_array_get(v, 1), indent + 4);
			sbuf_add(out, ",\n");
		}
		if (json_integer_value(json_object_get(n, "more")) > 0) {
			pad(out, indent + 4);
			more_note(out, n, "attribute");
			sbuf_add(out, "\n");
		}
		pad(out, indent);
		sbuf_add(out, ")");
		return;
	}
	termsafe_addf(out, "%s\n", str(n, "open"));
	json_array_foreach(json_object_get(n, "items"), i, v) {
		pad(out, indent + 4);
		if (is_map) {
			render_value(out, json_array_get(v, 0), indent + 4);
			sbuf_add(out, ": ");
			render_value(out, json_array_get(v, 1), indent + 4);
		} else {
			render_value(out, v, indent + 4);
		}
		sbuf_add(out, ",\n");
	}
	if (json_integer_value(json_object_get(n, "more")) > 0) {
		pad(out, indent + 4);
		more_note(out, n, "item");
		sbuf_add(out, "\n");
	}
	pad(out, indent);
	termsafe_adds(out, str(n, "close"), TERMSAFE_FIELD);
}

void
render_value_block(struct sbuf *out, json_t *data)
{
	json_t *count = json_object_get(data, "count");

	sbuf_add(out, "EXPR:  ");
	add_indented(out, str(data, "expr"), 7);
	termsafe_addf(out, "\nTYPE:  %s\n", str(data, "type"));
	if (json_is_integer(count))
		sbuf_addf(out, "COUNT: %lld instance%s (subclasses included), %lld shown\n",
		    (long long)json_integer_value(count), json_integer_value(count) == 1 ? "" : "s",
		    (long long)json_integer_value(json_object_get(data, "shown")));
	sbuf_add(out, "VALUE: ");
	render_value(out, json_object_get(data, "value"), 7);
	sbuf_add(out, "\n");
	if (json_is_true(json_object_get(data, "truncated")))
		sbuf_add(out, "(the value was cut short: it is larger than flight_profiler shows)\n");
}

/* ---- stack ------------------------------------------------------------------ */

static json_t *
by_ident(json_t *array, uint64_t ident)
{
	json_t *v;
	size_t i;

	json_array_foreach(array, i, v)
		if ((uint64_t)json_integer_value(json_object_get(v, "ident")) == ident)
			return v;
	return NULL;
}

void
render_apply_thread_names(struct py_snapshot *snap, json_t *threads)
{
	json_t *names = json_object_get(threads, "names"), *t;
	size_t i;

	for (i = 0; i < snap->nthreads; i++) {
		struct py_thread *th = &snap->threads[i];

		t = by_ident(names, th->thread_id);
		if (t == NULL || !json_is_string(json_object_get(t, "name")))
			continue;
		free(th->name);
		th->name = xstrdup(str(t, "name"));
	}
}

static void
locals_lines(struct sbuf *out, json_t *frame)
{
	json_t *v;
	size_t i;

	if (json_object_get(frame, "locals_note") != NULL) {
		termsafe_addf(out, "        (%s)\n", str(frame, "locals_note"));
		return;
	}
	json_array_foreach(json_object_get(frame, "locals"), i, v) {
		termsafe_addf(out, "        %s = ", json_string_value(json_array_get(v, 0)));
		add_indented(out, json_string_value(json_array_get(v, 1)) ?
		    json_string_value(json_array_get(v, 1)) : "?", 12);
		sbuf_add(out, "\n");
	}
	if (json_integer_value(json_object_get(frame, "locals_more")) > 0)
		sbuf_addf(out, "        ... %lld more locals\n",
		    (long long)json_integer_value(json_object_get(frame, "locals_more")));
}

void
render_stack_locals(struct sbuf *out, const struct py_snapshot *snap,
    const struct pyruntime *rt, const char *cmdline, struct source_cache *sc, json_t *threads)
{
	json_t *stacks = json_object_get(threads, "stacks"), *st, *af;
	size_t i, k, nf, m;

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
		st = by_ident(stacks, t->thread_id);
		af = st ? json_object_get(st, "frames") : NULL;
		m = json_array_size(af);
		nf = t->nframes;
		/* Outermost first; the agent's frames (innermost first) align from the outer end. */
		for (k = nf; k-- > 0;) {
			const struct py_frame *f = &t->frames[k];
			size_t depth = nf - 1 - k;
			json_t *a = depth < m ? json_array_get(af, m - 1 - depth) : NULL;

			render_frame_line(out, "", f->filename, f->line, render_frame_function(f), sc);
			if (a != NULL && strcmp(str(a, "file"), f->filename) == 0 &&
			    strcmp(str(a, "func"), render_frame_function(f)) == 0)
				locals_lines(out, a);
		}
		if (nf == 0 && t->error == NULL)
			sbuf_add(out, "    (no Python frames)\n");
		if (t->error != NULL)
			termsafe_addf(out, "    (stack cut short: %s)\n", t->error);
		if (st == NULL && nf > 0)
			sbuf_add(out, "    (no locals: the thread was not seen by the agent)\n");
	}
}

void
render_asyncio(struct sbuf *out, const struct py_snapshot *snap, json_t *threads)
{
	json_t *aio = json_object_get(threads, "asyncio"), *loops = json_object_get(aio, "loops");
	json_t *loop, *task, *f;
	size_t i, j, k, n;

	sbuf_add(out, "\n");
	if (json_array_size(loops) == 0) {
		termsafe_addf(out, "Asyncio: %s\n", json_object_get(aio, "note") ? str(aio, "note") :
		    "no event loop is running in any thread");
		return;
	}
	json_array_foreach(loops, i, loop) {
		uint64_t ident = (uint64_t)json_integer_value(json_object_get(loop, "ident"));
		const struct py_thread *t = NULL;

		for (n = 0; n < snap->nthreads; n++)
			if (snap->threads[n].thread_id == ident)
				t = &snap->threads[n];
		n = json_array_size(json_object_get(loop, "tasks"));
		if (t != NULL && t->tid != 0)
			termsafe_addf(out, "Asyncio tasks of the event loop in thread %d (%s): %zu task%s\n",
			    (int)t->tid, t->name ? t->name : "?", n, n == 1 ? "" : "s");
		else
			sbuf_addf(out, "Asyncio tasks of the event loop in thread 0x%llx: %zu task%s\n",
			    (unsigned long long)ident, n, n == 1 ? "" : "s");
		if (json_object_get(loop, "error") != NULL)
			termsafe_addf(out, "    (%s)\n", str(loop, "error"));
		json_array_foreach(json_object_get(loop, "tasks"), j, task) {
			termsafe_addf(out, "\n  Task '%s' %s() [%s]", str(task, "name"), str(task, "coro"),
			    json_is_true(json_object_get(task, "current")) ? "running" : str(task, "state"));
			if (json_object_get(task, "awaiting") != NULL)
				termsafe_addf(out, " awaiting %s", str(task, "awaiting"));
			sbuf_add(out, " (most recent call last):\n");
			n = json_array_size(json_object_get(task, "frames"));
			for (k = n; k-- > 0;) {
				f = json_array_get(json_object_get(task, "frames"), k);
				render_frame_line(out, "", str(f, "file"),
				    (int)json_integer_value(json_object_get(f, "line")), str(f, "func"), NULL);
			}
			if (n == 0)
				sbuf_add(out, "    (no frames: the task has not started or has finished)\n");
		}
	}
}
