/*
 * The console pane: the transcript of `console` and `execute` — the lines
 * typed (with their >>> or ... prompt) and what the code printed, streamed
 * as it comes.  The line being typed is on the command line at the bottom
 * (tui.c reads it for the runner); this pane only keeps and shows text.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tui/tui.h"

/* The transcript keeps this many lines; older ones scroll away. */
#define CONSOLE_MAX_LINES 5000

struct cline {
	bool echo;		/* a line the user typed */
	struct sbuf text;
};

struct console {
	struct cline *lines;
	size_t n, alloc;
	bool open;		/* the last line has no newline yet */
	bool follow;		/* keep the last line in view */
};

static void
console_open(struct pane *p)
{
	struct console *c = xcalloc(1, sizeof *c);

	c->follow = true;
	p->data = c;
}

static void
console_close(struct pane *p)
{
	struct console *c = p->data;
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++)
		sbuf_free(&c->lines[i].text);
	free(c->lines);
	free(c);
	p->data = NULL;
}

static struct cline *
new_line(struct console *c, bool echo)
{
	struct cline *l;

	if (c->n == CONSOLE_MAX_LINES) {
		sbuf_free(&c->lines[0].text);
		memmove(c->lines, c->lines + 1, (c->n - 1) * sizeof *c->lines);
		c->n--;
	}
	l = ARRAY_PUSH(c->lines, c->n, c->alloc);
	memset(l, 0, sizeof *l);
	l->echo = echo;
	sbuf_add(&l->text, "");
	return l;
}

static void
follow(struct pane *p)
{
	struct console *c = p->data;

	if (c->follow && c->n > 0) {
		p->cursor = c->n - 1;
		if (p->h > 0 && p->cursor >= p->top + (size_t)pane_rows(p))
			p->top = p->cursor + 1 - (size_t)pane_rows(p);
	}
	p->tui->dirty = true;
}

void
pane_console_write(struct pane *p, const char *text, size_t len)
{
	struct console *c = p->data;
	struct cline *l = c->open ? &c->lines[c->n - 1] : NULL;
	size_t i, from = 0;

	for (i = 0; i <= len; i++) {
		if (i < len && text[i] != '\n')
			continue;
		if (i == len && i == from)
			break;
		if (l == NULL)
			l = new_line(c, false);
		sbuf_addn(&l->text, text + from, i - from);
		c->open = i == len;
		if (i < len)
			l = NULL;
		from = i + 1;
	}
	follow(p);
}

void
pane_console_echo(struct pane *p, const char *prompt, const char *line)
{
	struct console *c = p->data;
	struct cline *l = new_line(c, true);

	sbuf_addf(&l->text, "%s%s", prompt, line);
	c->open = false;
	c->follow = true;
	follow(p);
}

void
pane_console_scroll(struct pane *p, int pages)
{
	struct console *c = p->data;
	size_t rows = (size_t)(pane_rows(p) > 1 ? pane_rows(p) - 1 : 1);

	if (c->n == 0)
		return;
	if (pages < 0) {
		p->top = p->top > rows ? p->top - rows : 0;
		p->cursor = p->top;
		c->follow = false;
	} else {
		p->top += rows;
		p->cursor = p->top + rows < c->n ? p->top + rows : c->n - 1;
		c->follow = p->cursor + 1 >= c->n;
	}
	pane_set_cursor(p, p->cursor);
}

static size_t
console_nlines(struct pane *p)
{
	return ((struct console *)p->data)->n;
}

static void
console_title(struct pane *p, struct sbuf *out)
{
	struct tui *t = p->tui;

	sbuf_addf(out, "Console %s Python in process %d", glyph(G_DOT), (int)t->pid);
	if (t->busy)
		sbuf_addf(out, " %s running (Ctrl-C interrupts)", glyph(G_DOT));
	else if (!t->console_open)
		sbuf_addf(out, " %s closed (c opens it)", glyph(G_DOT));
}

static void
console_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct console *c = p->data;
	const struct cline *cl = &c->lines[line];
	enum theme_elem el = cl->echo ? EL_PROMPT_PREFIX : EL_OUTPUT;

	/* \r and escapes are drawn escaped (tui/draw): they never reach the terminal. */
	tline_add_text(l, el, cl->text.s ? cl->text.s : "");
}

static void
console_moved(struct pane *p)
{
	struct console *c = p->data;

	c->follow = c->n == 0 || p->cursor + 1 >= c->n;
}

const struct pane_ops pane_console_ops = {
	.name = "console",
	.help_title = "Console pane",
	.slot = SLOT_BOTTOM,
	.share = 5,
	.marker = false,
	.open = console_open,
	.close = console_close,
	.nlines = console_nlines,
	.title = console_title,
	.draw_line = console_draw_line,
	.moved = console_moved,
};
