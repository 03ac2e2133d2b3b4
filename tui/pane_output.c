/*
 * The output pane: the text of the last command that has no pane of its
 * own (`help`, `stack`, ...), exactly as --cmd would print it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tui/tui.h"

struct output {
	char *title;
	char *text;
	char **lines;		/* into text */
	size_t n, alloc;
};

static void
output_open(struct pane *p)
{
	p->data = xcalloc(1, sizeof(struct output));
}

static void
output_close(struct pane *p)
{
	struct output *o = p->data;

	if (o == NULL)
		return;
	free(o->title);
	free(o->text);
	free(o->lines);
	free(o);
	p->data = NULL;
}

void
pane_output_set(struct pane *p, const char *title, const char *text)
{
	struct output *o = p->data;
	char *s, *nl;

	free(o->title);
	free(o->text);
	o->title = xstrdup(title);
	o->text = xstrdup(text);
	o->n = 0;
	for (s = o->text; *s != '\0'; s = nl + 1) {
		*ARRAY_PUSH(o->lines, o->n, o->alloc) = s;
		if ((nl = strchr(s, '\n')) == NULL)
			break;
		*nl = '\0';
	}
	p->cursor = p->top = 0;
}

static size_t
output_nlines(struct pane *p)
{
	return ((struct output *)p->data)->n;
}

static void
output_title(struct pane *p, struct sbuf *out)
{
	struct output *o = p->data;

	sbuf_addf(out, "Output %s %s", glyph(G_DOT), o->title ? o->title : "");
}

static void
output_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct output *o = p->data;

	tline_add_text(l, EL_OUTPUT, o->lines[line]);
}

const struct pane_ops pane_output_ops = {
	.name = "output",
	.help_title = "Output pane",
	.slot = SLOT_BOTTOM,
	.share = 4,
	.marker = false,
	.open = output_open,
	.close = output_close,
	.nlines = output_nlines,
	.title = output_title,
	.draw_line = output_draw_line,
};
