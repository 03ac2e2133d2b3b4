/*
 * The source pane: a source file of the target, read through
 * /proc/<pid>/root (core/source.c), with the frame's line marked; and the
 * frame's locals, which need the agent.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/inside.h"
#include "tui/tui.h"

struct source {
	char *filename;
	char *function;
	int line;
	int nlines;		/* 0: unreadable */
	char *why;		/* the one line shown when unreadable */
};

static void
source_open(struct pane *p)
{
	p->data = xcalloc(1, sizeof(struct source));
}

static void
source_close(struct pane *p)
{
	struct source *s = p->data;

	if (s == NULL)
		return;
	free(s->filename);
	free(s->function);
	free(s->why);
	free(s);
	p->data = NULL;
}

static void
show(struct pane *p, const char *filename, int line, const char *function)
{
	struct source *s = p->data;

	free(s->filename);
	free(s->function);
	free(s->why);
	s->filename = xstrdup(filename);
	s->function = function ? xstrdup(function) : NULL;
	s->line = line;
	s->why = NULL;
	s->nlines = p->tui->sc ? source_nlines(p->tui->sc, filename) : 0;
	if (s->nlines == 0)
		s->why = xasprintf("cannot read %s through /proc/%d/root (not a file, gone, or not text)",
		    filename, (int)p->tui->pid);
	p->cursor = line > 0 && line <= s->nlines ? (size_t)(line - 1) : 0;
	/* centre the line: the framework keeps the cursor visible from here */
	p->top = p->cursor > (size_t)(pane_rows(p) / 2) ? p->cursor - (size_t)(pane_rows(p) / 2) : 0;
}

static size_t
source_nlines_op(struct pane *p)
{
	struct source *s = p->data;

	return s->nlines > 0 ? (size_t)s->nlines : 1;
}

static void
source_title(struct pane *p, struct sbuf *out)
{
	struct source *s = p->data;
	const char *b;

	if (s->filename == NULL) {
		sbuf_add(out, "Source");
		return;
	}
	b = strrchr(s->filename, '/');
	sbuf_addf(out, "%s:%d", b ? b + 1 : s->filename, s->line);
	if (s->function != NULL)
		sbuf_addf(out, " in %s", s->function);
}

static void
source_header(struct pane *p, struct tline *l)
{
	tline_add(l, EL_STACK_LOCALS, inside_locals_hint(p->tui));
}

static void
source_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct source *s = p->data;
	const char *text;
	enum theme_elem el;
	bool current;
	int digits = 1, n;
	char buf[16];

	if (s->nlines == 0) {
		tline_add(l, EL_STACK_ERROR, s->why ? s->why : "");
		return;
	}
	for (n = s->nlines; n >= 10; n /= 10)
		digits++;
	current = (int)line + 1 == s->line;
	el = current ? EL_STACK_CURRENT_LINE : EL_STACK_SOURCE;
	snprintf(buf, sizeof buf, "%d", (int)line + 1);
	tline_col(l, current ? el : EL_STACK_LINENO, buf, digits, true);
	tline_add(l, el, current ? glyph(G_CURSOR) : " ");
	tline_add(l, el, " ");
	text = source_line(p->tui->sc, s->filename, (int)line + 1);
	tline_add_text(l, el, text ? text : "");
}

static bool
source_event(struct pane *p, const struct pane_event *ev)
{
	size_t half = (size_t)pane_rows(p) / 2;

	switch (ev->kind) {
	case EV_OPEN_SOURCE:
		show(p, ev->filename, ev->line, ev->function);
		return true;
	case EV_RESIZE:
		/* keep the cursor line in the middle when the pane gets its size */
		p->top = p->cursor > half ? p->cursor - half : 0;
		return false;
	default:
		return false;
	}
}

static const struct keybinding source_keys[] = {
	{ NULL, 'y', A_COPY, "Copy", "copy the stack as text to the clipboard (OSC 52)" },
	{ NULL, 'L', A_AGENT, "Locals", "show the frame's locals (loads the agent if needed)" },
	{ .key = 0 },
};

const struct pane_ops pane_source_ops = {
	.name = "source",
	.help_title = "Source pane",
	.slot = SLOT_DETAIL,
	.keys = source_keys,
	.marker = false,
	.open = source_open,
	.close = source_close,
	.nlines = source_nlines_op,
	.title = source_title,
	.header = source_header,
	.draw_line = source_draw_line,
	.event = source_event,
};
