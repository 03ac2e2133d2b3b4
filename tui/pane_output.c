/*
 * The output pane: the history of the commands that have no pane of their
 * own (`help`, `stack`, `execute`, ...), each under a heading with the line
 * typed, their text exactly as --cmd would print it, escaped.  Text may
 * arrive in pieces while a statement runs (`execute`); the store is
 * bounded (tui/outstore.h) and the title says how much went.
 *
 * y copies the output of the command under the cursor (OSC 52, escaped as
 * shown); [ and ] go to the previous and next command; Left and Right
 * scroll long lines sideways.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "core/termsafe.h"
#include "tui/outstore.h"
#include "tui/tui.h"

/* Lines and bytes kept: a statement printing millions of lines keeps the
 * newest of them, and the title counts the rest. */
#define OUTPUT_MAX_LINES 100000
#define OUTPUT_MAX_BYTES (16u << 20)
/* A line without its newline is cut into lines of this many bytes. */
#define OUTPUT_MAX_PENDING 65536
/* Columns Left and Right scroll by. */
#define HSCROLL_STEP 8

struct output {
	struct outstore *store;
	struct sbuf pending;	/* the running command's last line, raw, no newline yet */
	struct sbuf scratch;	/* pending, escaped, for drawing */
	bool open;		/* a command's text is arriving */
	bool follow;		/* keep the last line in view as text arrives */
	int hscroll;		/* columns scrolled to the right */
};

static void
output_open(struct pane *p)
{
	struct output *o = xcalloc(1, sizeof *o);

	o->store = outstore_new(OUTPUT_MAX_LINES, OUTPUT_MAX_BYTES);
	p->data = o;
}

static void
output_close(struct pane *p)
{
	struct output *o = p->data;

	if (o == NULL)
		return;
	outstore_free(o->store);
	sbuf_free(&o->pending);
	sbuf_free(&o->scratch);
	free(o);
	p->data = NULL;
}

/* `n` bytes of the target's text as shown: escaped, tabs expanded. */
static void
escape_line(struct sbuf *out, const char *s, size_t n)
{
	struct sbuf esc = { 0 };
	size_t i, k;
	int col = 0;

	out->len = 0;
	sbuf_add(out, "");
	termsafe_add(&esc, s, n, TERMSAFE_KEEP_TAB);
	for (i = 0; i < esc.len; i += k) {
		for (k = 1; i + k < esc.len && (esc.s[i + k] & 0xc0) == 0x80; k++)
			;
		if (esc.s[i] == '\t') {
			do
				sbuf_add(out, " ");
			while (++col % 8 != 0);
			continue;
		}
		sbuf_addn(out, esc.s + i, k);
		col += text_width(esc.s + i, k);
	}
	sbuf_free(&esc);
}

static void
push(struct pane *p, enum outstore_kind kind, const char *text, size_t len)
{
	struct output *o = p->data;
	struct sbuf line = { 0 };
	size_t gone;

	escape_line(&line, text, len);
	gone = outstore_push(o->store, kind, line.s, line.len);
	sbuf_free(&line);
	pane_lines_dropped(p, gone);
}

static size_t
output_nlines(struct pane *p)
{
	struct output *o = p->data;

	return outstore_count(o->store) + (o->pending.len > 0);
}

static void
follow(struct pane *p)
{
	struct output *o = p->data;
	size_t n = output_nlines(p);

	if (o->follow && n > 0) {
		pane_set_cursor(p, n - 1);
	} else if (o->open && p->top < p->cursor) {
		/*
		 * The page was filled from above while the command had no
		 * output yet: bring its heading up as its output comes.
		 */
		p->top = p->cursor;
		pane_clamp(p);
	}
	p->tui->dirty = true;
}

void
pane_output_append(struct pane *p, const char *text, size_t len)
{
	struct output *o = p->data;
	size_t i, from = 0;

	for (i = 0; i < len; i++) {
		if (text[i] != '\n')
			continue;
		sbuf_addn(&o->pending, text + from, i - from);
		push(p, OUT_LINE, o->pending.s, o->pending.len);
		o->pending.len = 0;
		from = i + 1;
	}
	sbuf_addn(&o->pending, text + from, len - from);
	while (o->pending.len >= OUTPUT_MAX_PENDING) {
		push(p, OUT_LINE, o->pending.s, OUTPUT_MAX_PENDING);
		memmove(o->pending.s, o->pending.s + OUTPUT_MAX_PENDING,
		    o->pending.len - OUTPUT_MAX_PENDING);
		o->pending.len -= OUTPUT_MAX_PENDING;
	}
	follow(p);
}

void
pane_output_end(struct pane *p, const char *note)
{
	struct output *o = p->data;

	if (o->pending.len > 0)
		push(p, OUT_LINE, o->pending.s, o->pending.len);
	o->pending.len = 0;
	if (note != NULL)
		push(p, OUT_NOTE, note, strlen(note));
	o->open = false;
	follow(p);
	o->follow = false;
}

void
pane_output_begin(struct pane *p, const char *command)
{
	struct output *o = p->data;

	if (o->open)
		pane_output_end(p, NULL);
	push(p, OUT_HEAD, command, strlen(command));
	/* the new command's text from its start */
	p->cursor = p->top = outstore_count(o->store) - 1;
	o->open = true;
	o->follow = false;
	o->hscroll = 0;
	p->tui->dirty = true;
}

void
pane_output_set(struct pane *p, const char *title, const char *text)
{
	pane_output_begin(p, title);
	pane_output_append(p, text, strlen(text));
	pane_output_end(p, NULL);
}

/* Line `i` (the pending line past the store's), and its kind. */
static const char *
line_at(struct pane *p, size_t i, enum outstore_kind *kind)
{
	struct output *o = p->data;

	if (i < outstore_count(o->store))
		return outstore_get(o->store, i, kind);
	*kind = OUT_LINE;
	escape_line(&o->scratch, o->pending.s ? o->pending.s : "", o->pending.len);
	return o->scratch.s;
}

/* The heading of the command that line `i` belongs to, or SIZE_MAX. */
static size_t
head_of(struct pane *p, size_t i)
{
	struct output *o = p->data;
	enum outstore_kind kind;
	size_t n = outstore_count(o->store);

	for (i = i < n ? i + 1 : n; i-- > 0;)
		if (outstore_get(o->store, i, &kind) != NULL && kind == OUT_HEAD)
			return i;
	return SIZE_MAX;
}

/* The command whose heading is record `head` (SIZE_MAX: it was dropped). */
static const char *
command_name(struct output *o, size_t head)
{
	return head != SIZE_MAX ? outstore_get(o->store, head, NULL) :
	    "(a command whose first lines were dropped)";
}

static void
output_title(struct pane *p, struct sbuf *out)
{
	struct output *o = p->data;
	size_t n = outstore_count(o->store), head = head_of(p, p->cursor), i, k = 0, total = 0;
	enum outstore_kind kind;
	const char *dot = glyph(G_DOT);

	for (i = 0; i < n; i++) {
		outstore_get(o->store, i, &kind);
		total += kind == OUT_HEAD;
		k += kind == OUT_HEAD && i <= head;
	}
	sbuf_addf(out, "Output %s %s", dot, command_name(o, head));
	if (total > 1 && head != SIZE_MAX)
		sbuf_addf(out, " %s %zu of %zu", dot, k, total);
	/* an entry still open is a statement still running (in the
	 * foreground or in the background) */
	if (o->open && head_of(p, n) == head)
		sbuf_addf(out, " %s running (Esc interrupts)", dot);
	if (o->hscroll > 0)
		sbuf_addf(out, " %s from column %d", dot, o->hscroll + 1);
	if (outstore_dropped(o->store) > 0)
		sbuf_addf(out, " %s %llu older lines dropped", dot,
		    (unsigned long long)outstore_dropped(o->store));
}

/* Skip `cols` display columns of s; a wide character cut in two leaves
 * spaces for its visible half. */
static const char *
skip_columns(const char *s, int cols, int *pad)
{
	int w;
	size_t k;

	*pad = 0;
	while (cols > 0 && *s != '\0') {
		for (k = 1; s[k] != '\0' && (s[k] & 0xc0) == 0x80; k++)
			;
		w = text_width(s, k);
		s += k;
		cols -= w;
	}
	*pad = cols < 0 ? -cols : 0;
	return s;
}

static void
output_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct output *o = p->data;
	enum outstore_kind kind;
	const char *text = line_at(p, line, &kind);
	int pad;

	if (kind == OUT_HEAD) {
		tline_add(l, EL_PROMPT_PREFIX, ":");
		tline_add(l, EL_PROMPT_PREFIX, text);
		return;
	}
	text = skip_columns(text, o->hscroll, &pad);
	while (pad-- > 0)
		tline_add(l, EL_OUTPUT, " ");
	tline_add_text(l, kind == OUT_NOTE ? EL_STATUS_ERROR : EL_OUTPUT, text);
}

/* Copy the output of the command under the cursor: its lines as shown. */
static void
copy_entry(struct pane *p)
{
	struct output *o = p->data;
	size_t n = output_nlines(p), head = head_of(p, p->cursor), i, lines = 0;
	enum outstore_kind kind;
	struct sbuf text = { 0 };
	const char *s;

	if (n == 0) {
		tui_status(p->tui, true, "no output to copy");
		return;
	}
	for (i = head == SIZE_MAX ? 0 : head + 1; i < n; i++) {
		s = line_at(p, i, &kind);
		if (kind == OUT_HEAD)
			break;
		if (kind == OUT_LINE) {
			sbuf_addf(&text, "%s\n", s);
			lines++;
		}
	}
	tui_copy(p->tui, text.len > 0 ? text.s : "");
	tui_status(p->tui, false, "copied %zu line%s of :%s to the clipboard (OSC 52, escaped as shown)",
	    lines, lines == 1 ? "" : "s", command_name(o, head));
	sbuf_free(&text);
}

/* The cursor to the heading of the previous (dir < 0) or next command. */
static void
jump(struct pane *p, int dir)
{
	struct output *o = p->data;
	size_t n = outstore_count(o->store), i, head = head_of(p, p->cursor);
	enum outstore_kind kind;

	if (dir < 0) {
		/* the start of this command's output, then the one before */
		if (head == SIZE_MAX)
			return;
		i = head;
		if (p->cursor == head && head > 0 && head_of(p, head - 1) != SIZE_MAX)
			i = head_of(p, head - 1);
	} else {
		for (i = p->cursor + 1; i < n; i++)
			if (outstore_get(o->store, i, &kind) != NULL && kind == OUT_HEAD)
				break;
		if (i >= n)
			return;
	}
	p->top = i;
	pane_set_cursor(p, i);
}

static bool
output_key(struct pane *p, enum action a)
{
	struct output *o = p->data;

	switch (a) {
	case A_COPY:
		copy_entry(p);
		return true;
	case A_OLDER:
	case A_NEWER:
		jump(p, a == A_OLDER ? -1 : 1);
		return true;
	case A_SCROLL_LEFT:
		o->hscroll = o->hscroll > HSCROLL_STEP ? o->hscroll - HSCROLL_STEP : 0;
		return true;
	case A_SCROLL_RIGHT:
		o->hscroll += HSCROLL_STEP;
		return true;
	default:
		return false;
	}
}

static void
output_moved(struct pane *p)
{
	struct output *o = p->data;

	o->follow = o->open && p->cursor + 1 >= output_nlines(p);
}

static const struct keybinding output_keys[] = {
	{ NULL, 'y', A_COPY, "Copy", "copy the output of the command under the cursor (OSC 52)" },
	{ NULL, '[', A_OLDER, "Older", "go to the previous command's output" },
	{ NULL, ']', A_NEWER, NULL, "go to the next command's output" },
	{ NULL, KEY_LEFT, A_SCROLL_LEFT, NULL, "scroll long lines to the left" },
	{ NULL, 'h', A_SCROLL_LEFT, NULL, "scroll long lines to the left" },
	{ NULL, KEY_RIGHT, A_SCROLL_RIGHT, NULL, "scroll long lines to the right" },
	{ NULL, 'l', A_SCROLL_RIGHT, NULL, "scroll long lines to the right" },
	{ .key = 0 },
};

const struct pane_ops pane_output_ops = {
	.name = "output",
	.help_title = "Output pane",
	.slot = SLOT_BOTTOM,
	.share = 4,
	.keys = output_keys,
	.marker = false,
	.open = output_open,
	.close = output_close,
	.nlines = output_nlines,
	.title = output_title,
	.draw_line = output_draw_line,
	.key = output_key,
	.moved = output_moved,
};
