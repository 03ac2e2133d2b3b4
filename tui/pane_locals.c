/*
 * The locals pane, under the source view: the local variables of the
 * frame shown, as the agent read them (bounded reprs: the agent cuts each
 * at 200 characters and sends at most 50), or one line saying why there
 * are none.  Asking is tui/inside.c's job; this pane only shows.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "tui/tui.h"

struct lline {
	char *name;		/* NULL: a continuation or a note */
	char *text;
};

struct locals {
	char *function;
	struct lline *lines;
	size_t n, alloc;
	int namew;
};

static void
clear(struct locals *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->lines[i].name);
		free(l->lines[i].text);
	}
	l->n = 0;
	l->namew = 0;
	free(l->function);
	l->function = NULL;
}

static void
add(struct locals *l, const char *name, const char *text, size_t len)
{
	struct lline *ll = ARRAY_PUSH(l->lines, l->n, l->alloc);

	ll->name = name ? xstrdup(name) : NULL;
	ll->text = xstrndup(text, len);
}

static void
locals_open(struct pane *p)
{
	p->data = xcalloc(1, sizeof(struct locals));
}

static void
locals_close(struct pane *p)
{
	struct locals *l = p->data;

	if (l == NULL)
		return;
	clear(l);
	free(l->lines);
	free(l);
	p->data = NULL;
}

void
pane_locals_set(struct pane *p, const char *function, const struct frame_locals *locals,
    const char *note)
{
	struct locals *l = p->data;
	size_t i;

	clear(l);
	l->function = function ? xstrdup(function) : NULL;
	p->cursor = p->top = 0;
	p->tui->dirty = true;
	if (locals == NULL || locals->note != NULL) {
		note = locals ? locals->note : note ? note : "";
		add(l, NULL, note, strlen(note));
		return;
	}
	for (i = 0; i < locals->nvars; i++) {
		const char *name = locals->vars[i].name, *repr = locals->vars[i].repr, *nl;
		int w = text_width(name, strlen(name));

		if (w > l->namew)
			l->namew = w;
		/* a repr may span lines: continuation lines line up under it */
		nl = strchr(repr, '\n');
		add(l, name, repr, nl ? (size_t)(nl - repr) : strlen(repr));
		while (nl != NULL) {
			repr = nl + 1;
			nl = strchr(repr, '\n');
			add(l, "", repr, nl ? (size_t)(nl - repr) : strlen(repr));
		}
	}
	if (locals->more > 0) {
		char *more = xasprintf("... %lld more locals", locals->more);

		add(l, NULL, more, strlen(more));
		free(more);
	}
	if (l->n == 0)
		add(l, NULL, "(no locals)", strlen("(no locals)"));
	if (l->namew > 24)
		l->namew = 24;
}

static size_t
locals_nlines(struct pane *p)
{
	return ((struct locals *)p->data)->n;
}

static void
locals_title(struct pane *p, struct sbuf *out)
{
	struct locals *l = p->data;

	sbuf_add(out, "Locals");
	if (l->function != NULL)
		sbuf_addf(out, " %s %s", glyph(G_DOT), l->function);
}

static void
locals_draw_line(struct pane *p, size_t line, struct tline *tl)
{
	struct locals *l = p->data;
	const struct lline *ll = &l->lines[line];

	if (ll->name == NULL) {
		tline_add(tl, EL_STACK_LOCALS, ll->text);
		return;
	}
	tline_col(tl, EL_STACK_FUNCTION, ll->name, l->namew, false);
	tline_add(tl, EL_DEFAULT, *ll->name ? " = " : "   ");
	tline_add(tl, EL_OUTPUT, ll->text);
}

static const struct keybinding locals_keys[] = {
	{ NULL, 'L', A_AGENT, "Reload", "read the frame's locals again" },
	{ .key = 0 },
};

const struct pane_ops pane_locals_ops = {
	.name = "locals",
	.help_title = "Locals pane",
	.slot = SLOT_DETAIL_SUB,
	.keys = locals_keys,
	.marker = false,
	.open = locals_open,
	.close = locals_close,
	.nlines = locals_nlines,
	.title = locals_title,
	.draw_line = locals_draw_line,
};
