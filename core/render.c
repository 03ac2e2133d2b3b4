#include "config.h"

#include "core/render.h"

#include <ctype.h>
#include <string.h>

#include "core/termsafe.h"

const char *
render_thread_status(const struct py_thread *t)
{
	if (t->gil == GIL_HELD)
		return "Has the GIL";
	if (t->gil == GIL_WAITING)
		return "Waiting for the GIL";
	if (t->os_state == 'R')
		return "Running";
	return "Idle";
}

const char *
render_frame_function(const struct py_frame *f)
{
	return f->qualname != NULL ? f->qualname : f->name;
}

void
render_frame_line(struct sbuf *out, const char *prefix, const char *file, int line,
    const char *func, struct source_cache *sc)
{
	const char *src;

	termsafe_addf(out, "    %sFile \"%s\", line %d, in %s\n", prefix, file, line, func);
	if (sc == NULL || line <= 0 || (src = source_line(sc, file, line)) == NULL)
		return;
	render_code_line(out, src);
}

void
render_code_line(struct sbuf *out, const char *src)
{
	while (*src == ' ' || *src == '\t')
		src++;
	if (*src == '\0')
		return;
	sbuf_add(out, "        ");
	termsafe_adds(out, src, TERMSAFE_KEEP_TAB);	/* tabs inside code are the code's */
	sbuf_add(out, "\n");
}

static void
python_frame(struct sbuf *out, const struct py_frame *f, const char *prefix,
    struct source_cache *sc)
{
	render_frame_line(out, prefix, f->filename, f->line, render_frame_function(f), sc);
}

static void
native_frame(struct sbuf *out, const struct native_frame *n)
{
	termsafe_addf(out, "    (C) File \"%s\", line %d, in %s (%s)\n",
	    n->file ? n->file : "???", n->file ? n->line : 0,
	    n->function ? n->function : "???", n->module ? n->module : "???");
}

/*
 * Python frames form groups, one per call of the C evaluation loop: the
 * outermost frame of each group has `entry` set.  Returns how many.
 */
static size_t
count_groups(const struct py_thread *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->nframes; i++)
		if (t->frames[i].entry)
			n++;
	return n;
}

static void
merged(struct sbuf *out, const struct py_thread *t, struct source_cache *sc)
{
	size_t neval = 0, i, py = t->nframes;	/* py: frames not yet shown, outermost at py-1 */

	for (i = 0; i < t->nnative; i++)
		if (t->native[i].is_eval)
			neval++;
	if (neval != count_groups(t)) {
		sbuf_addf(out, "    (%zu Python evaluation calls but %zu native evaluation frames: "
		    "stacks shown unmerged)\n", count_groups(t), neval);
		for (i = t->nnative; i-- > 0;)
			native_frame(out, &t->native[i]);
		for (i = t->nframes; i-- > 0;)
			python_frame(out, &t->frames[i], "(Python) ", sc);
		return;
	}
	for (i = t->nnative; i-- > 0;) {
		if (!t->native[i].is_eval) {
			native_frame(out, &t->native[i]);
			continue;
		}
		/* This evaluation loop ran the next group of Python frames. */
		do {
			py--;
			python_frame(out, &t->frames[py], "(Python) ", sc);
		} while (py > 0 && !t->frames[py - 1].entry);
	}
}

void
render_thread(struct sbuf *out, const struct py_thread *t, struct source_cache *sc)
{
	size_t i;

	if (t->tid != 0)
		sbuf_addf(out, "Traceback for thread %d", (int)t->tid);
	else
		sbuf_addf(out, "Traceback for thread 0x%llx", (unsigned long long)t->thread_id);
	termsafe_addf(out, " (%s) [%s]%s (most recent call last):\n",
	    t->name ? t->name : "?", render_thread_status(t), t->partial ? " [partial]" : "");
	if (t->native != NULL || t->native_error != NULL) {
		if (t->native_error != NULL) {
			termsafe_addf(out, "    (native frames unavailable: %s)\n", t->native_error);
			for (i = t->nframes; i-- > 0;)
				python_frame(out, &t->frames[i], "(Python) ", sc);
		} else {
			merged(out, t, sc);
		}
	} else {
		for (i = t->nframes; i-- > 0;)
			python_frame(out, &t->frames[i], "", sc);
		if (t->nframes == 0 && t->error == NULL)
			sbuf_add(out, "    (no Python frames)\n");
	}
	if (t->error != NULL)
		termsafe_addf(out, "    (%s: %s)\n", t->partial ? "partial" : "stack cut short", t->error);
}

void
render_stack(struct sbuf *out, const struct py_snapshot *snap,
    const struct pyruntime *rt, const char *cmdline, struct source_cache *sc)
{
	size_t i;

	termsafe_addf(out, "Process %d: %s\n", (int)snap->pid, cmdline ? cmdline : "?");
	termsafe_addf(out, "Python v%s (%s)\n", snap->version, rt->binary);
	for (i = 0; i < snap->nthreads; i++) {
		sbuf_add(out, "\n");
		render_thread(out, &snap->threads[i], sc);
	}
}
