/*
 * The console pane: the transcript of `console` — the lines typed (with
 * their >>> or ... prompt) and what the code printed, streamed as it comes,
 * kept in a bounded store (tui/outstore.h) as the output pane's is.  The
 * line being typed is on the command line at the bottom
 * (tui/console.c reads it for the runner); this pane keeps and shows text.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tui/outstore.h"
#include "tui/tui.h"

/* The transcript keeps this many lines (and bytes); older ones scroll
 * away, each in constant time however fast the code prints. */
#define CONSOLE_MAX_LINES 5000
#define CONSOLE_MAX_BYTES (4u << 20)

struct console {
	struct outstore *lines;	/* OUT_HEAD: a line typed; OUT_LINE: printed */
	struct sbuf open;	/* the last line printed, no newline yet */
	bool follow;		/* keep the last line in view */
};

static void
console_open(struct pane *p)
{
	struct console *c = xcalloc(1, sizeof *c);

	c->lines = outstore_new(CONSOLE_MAX_LINES, CONSOLE_MAX_BYTES);
	c->follow = true;
	p->data = c;
}

static void
console_close(struct pane *p)
{
	struct console *c = p->data;

	if (c == NULL)
		return;
	outstore_free(c->lines);
	sbuf_free(&c->open);
	free(c);
	p->data = NULL;
}

static void
push(struct pane *p, enum outstore_kind kind, const char *text, size_t len)
{
	struct console *c = p->data;

	pane_lines_dropped(p, outstore_push(c->lines, kind, text, len));
}

static size_t
console_nlines(struct pane *p)
{
	struct console *c = p->data;

	return outstore_count(c->lines) + (c->open.len > 0);
}

static void
follow(struct pane *p)
{
	struct console *c = p->data;
	size_t n = console_nlines(p);

	if (c->follow && n > 0) {
		p->cursor = n - 1;
		if (p->h > 0 && p->cursor >= p->top + (size_t)pane_rows(p))
			p->top = p->cursor + 1 - (size_t)pane_rows(p);
	}
	p->tui->dirty = true;
}

void
pane_console_write(struct pane *p, const char *text, size_t len)
{
	struct console *c = p->data;
	size_t i, from = 0;

	for (i = 0; i < len; i++) {
		if (text[i] != '\n')
			continue;
		sbuf_addn(&c->open, text + from, i - from);
		push(p, OUT_LINE, c->open.s, c->open.len);
		c->open.len = 0;
		from = i + 1;
	}
	sbuf_addn(&c->open, text + from, len - from);
	follow(p);
}

void
pane_console_echo(struct pane *p, const char *prompt, const char *line)
{
	struct console *c = p->data;
	char *l = xasprintf("%s%s", prompt, line);

	if (c->open.len > 0)
		push(p, OUT_LINE, c->open.s, c->open.len);
	c->open.len = 0;
	push(p, OUT_HEAD, l, strlen(l));
	free(l);
	c->follow = true;
	follow(p);
}

void
pane_console_scroll(struct pane *p, int pages)
{
	struct console *c = p->data;
	size_t rows = (size_t)(pane_rows(p) > 1 ? pane_rows(p) - 1 : 1), n = console_nlines(p);

	if (n == 0)
		return;
	if (pages < 0) {
		p->top = p->top > rows ? p->top - rows : 0;
		p->cursor = p->top;
		c->follow = false;
	} else {
		p->top += rows;
		p->cursor = p->top + rows < n ? p->top + rows : n - 1;
		c->follow = p->cursor + 1 >= n;
	}
	pane_set_cursor(p, p->cursor);
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
	enum outstore_kind kind = OUT_LINE;
	const char *text = line < outstore_count(c->lines) ? outstore_get(c->lines, line, &kind) :
	    c->open.s;

	/* \r and escapes are drawn escaped (tui/draw): they never reach the terminal. */
	tline_add_text(l, kind == OUT_HEAD ? EL_PROMPT_PREFIX : EL_OUTPUT, text ? text : "");
}

static void
console_moved(struct pane *p)
{
	struct console *c = p->data;

	c->follow = console_nlines(p) == 0 || p->cursor + 1 >= console_nlines(p);
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
