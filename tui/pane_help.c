/*
 * The help overlay: generated from the key table (tui/keymap.c), so it
 * always says what the keys really do.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "core/command.h"
#include "tui/tui.h"

struct hline {
	const char *section;	/* a heading, or NULL */
	char *keys;		/* NULL on a wrapped line's continuation */
	const char *help;
	int len;		/* bytes of `help` on this row (rows only) */
};

struct help {
	struct hline *lines;	/* as the key table says */
	size_t n, alloc;
	struct hline *rows;	/* wrapped to the overlay's width */
	size_t nrows, arows;
	int keyw, wrapped_for;
};

static void
add(struct help *h, const char *section, char *keys, const char *help)
{
	*ARRAY_PUSH(h->lines, h->n, h->alloc) = (struct hline){ section, keys, help, 0 };
}

/* Whether key name `k` is already among the space-separated `keys`: '\n'
 * and KEY_ENTER are both "Enter", and the help says it once. */
static bool
key_listed(const char *keys, const char *k)
{
	size_t len = strlen(k);
	const char *p;

	for (p = keys; (p = strstr(p, k)) != NULL; p += len)
		if ((p == keys || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
			return true;
	return false;
}

/*
 * Wrap each help text to the overlay's width (tui.c's layout: COLS - 4, at
 * most 92, inside a frame), so that no line is cut off: continuation rows
 * start under the text.
 */
static void
rewrap(struct help *h)
{
	int w = (COLS - 4 < 92 ? COLS - 4 : 92) - 2, room = w - 2 - h->keyw - 2;
	size_t i;

	if (room < 20)
		room = 20;
	h->nrows = 0;
	h->wrapped_for = COLS;
	for (i = 0; i < h->n; i++) {
		const struct hline *hl = &h->lines[i];
		const char *t = hl->help;
		char *keys = hl->keys;

		if (hl->section != NULL) {
			*ARRAY_PUSH(h->rows, h->nrows, h->arows) = *hl;
			continue;
		}
		do {
			int len = (int)strlen(t), cut = len;

			if (len > room) {
				for (cut = room; cut > 0 && t[cut] != ' '; cut--)
					;
				if (cut == 0)
					cut = room;
			}
			*ARRAY_PUSH(h->rows, h->nrows, h->arows) = (struct hline){ NULL, keys, t, cut };
			keys = NULL;
			t += cut;
			while (*t == ' ')
				t++;
		} while (*t != '\0');
	}
}

static bool
same_line(const struct keybinding *a, const struct keybinding *b)
{
	return a->action == b->action && strcmp(a->help, b->help) == 0;
}

/*
 * A section: `title`, then one line per action of the bindings whose
 * context is `ctx` (all of them for a pane's own), its keys merged.
 */
static void
section(struct help *h, const char *title, const struct keybinding *all, size_t n, bool any_ctx,
    const char *ctx)
{
	bool any = false;
	size_t i, j;
	char buf[32];

#define IN(b) (any_ctx || ((ctx == NULL) == ((b)->ctx == NULL) && \
    (ctx == NULL || strcmp(ctx, (b)->ctx) == 0)))
	for (i = 0; i < n; i++) {
		struct sbuf keys = { 0 };
		const char *name;

		if (all[i].action == A_NONE || !IN(&all[i]))
			continue;
		/* one line per action: merge its other keys into the first one's */
		for (j = 0; j < i; j++)
			if (IN(&all[j]) && same_line(&all[j], &all[i]))
				break;
		if (j < i)
			continue;
		for (j = i; j < n; j++) {
			if (!IN(&all[j]) || !same_line(&all[j], &all[i]))
				continue;
			name = keymap_key_name(all[j].key, buf, sizeof buf);
			if (keys.s != NULL && key_listed(keys.s, name))
				continue;
			sbuf_addf(&keys, "%s%s", keys.len ? " " : "", name);
		}
		if (!any) {
			if (h->n > 0)
				add(h, "", NULL, NULL);
			add(h, title, NULL, NULL);
			any = true;
		}
		if ((int)keys.len > h->keyw)
			h->keyw = (int)keys.len;
		add(h, NULL, sbuf_steal(&keys), all[i].help);
	}
#undef IN
}

/* The TUI's own commands, as the command table has them. */
static void
add_tui_commands(struct help *h)
{
	const struct cmd_spec *const *all;
	size_t i, n;

	all = command_all(&n);
	for (i = 0; i < n; i++)
		if ((all[i]->flags & CMD_TUI) && !(all[i]->flags & CMD_PLANNED))
			add(h, NULL, xasprintf(":%s%s%s", all[i]->name, all[i]->usage[0] ? " " : "",
			    all[i]->usage), all[i]->summary);
}

static void
help_open(struct pane *p)
{
	struct help *h = xcalloc(1, sizeof *h);
	const struct keybinding *all, *b;
	size_t n, i;

	p->data = h;
	all = keymap_all(&n);
	section(h, KEYMAP_EVERYWHERE, all, n, false, NULL);
	section(h, KEYMAP_EVERY_PANE, all, n, false, "list");
	/* each pane's own keys, in the order of the pane table */
	for (i = 0; i < p->tui->npanes; i++) {
		const struct pane_ops *ops = p->tui->panes[i].ops;

		for (b = ops->keys, n = 0; b != NULL && b[n].key != 0; n++)
			;
		section(h, ops->help_title ? ops->help_title : ops->name, b, n, true, NULL);
	}
	add(h, "", NULL, NULL);
	add(h, "Command line", NULL, NULL);
	add(h, NULL, xstrdup(":help"), "list the commands; `:help stack` explains one");
	add(h, NULL, xstrdup("Tab"), "complete commands, options and (with the agent) names");
	add(h, NULL, xstrdup("Up Down"), "history (kept between sessions)");
	add_tui_commands(h);
	add(h, "", NULL, NULL);
	add(h, "Console (c or :console; :execute prints into the output pane)", NULL, NULL);
	add(h, NULL, xstrdup("Enter"), "run the line; a block takes more lines");
	add(h, NULL, xstrdup("C-c"), "drop the line, or interrupt the running statement");
	add(h, NULL, xstrdup("Esc C-d"), "leave the console (its variables stay)");
	add(h, NULL, xstrdup("PgUp PgDn"), "scroll what it printed");
	if (h->keyw > 16)
		h->keyw = 16;
}

static void
help_close(struct pane *p)
{
	struct help *h = p->data;
	size_t i;

	if (h == NULL)
		return;
	for (i = 0; i < h->n; i++)
		free(h->lines[i].keys);
	free(h->lines);
	free(h->rows);
	free(h);
	p->data = NULL;
}

static size_t
help_nlines(struct pane *p)
{
	struct help *h = p->data;

	if (h->wrapped_for != COLS)
		rewrap(h);
	return h->nrows;
}

/* Says where the view is when it does not all fit, and how to scroll. */
static void
help_title(struct pane *p, struct sbuf *out)
{
	size_t n = help_nlines(p), rows = (size_t)pane_rows(p);

	if (rows == 0 || n <= rows) {
		sbuf_add(out, "Help (q or Esc to close)");
		return;
	}
	sbuf_addf(out, "Help %zu-%zu of %zu %s j k PgDn PgUp scroll %s q or Esc closes",
	    p->top + 1, p->top + rows < n ? p->top + rows : n, n, glyph(G_DOT), glyph(G_DOT));
}

static void
help_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct help *h = p->data;
	const struct hline *hl = &h->rows[line];

	if (hl->section != NULL) {
		tline_add(l, EL_HELP_SECTION, hl->section);
		return;
	}
	tline_add(l, EL_DEFAULT, "  ");
	tline_col(l, EL_HELP_KEY, hl->keys ? hl->keys : "", h->keyw, false);
	tline_add(l, EL_DEFAULT, "  ");
	tline_addn(l, EL_HELP_TEXT, hl->help, (size_t)hl->len);
}

/* The help has no cursor to show: Up and Down scroll it a line at a time. */
static bool
help_key(struct pane *p, enum action a)
{
	size_t n = help_nlines(p), rows = (size_t)pane_rows(p);

	if (a == A_DOWN)
		pane_set_cursor(p, p->top + rows < n ? p->top + rows : (n ? n - 1 : 0));
	else if (a == A_UP)
		pane_set_cursor(p, p->top > 0 ? p->top - 1 : 0);
	else
		return false;
	return true;
}

static const struct keybinding help_keys[] = {
	{ NULL, '?', A_BACK, NULL, "close the help" },
	{ NULL, 'q', A_BACK, "Close", "close the help" },
	{ NULL, ESC, A_BACK, NULL, "close the help" },
	{ .key = 0 },
};

const struct pane_ops pane_help_ops = {
	.name = "help",
	.help_title = "This help",
	.slot = SLOT_OVERLAY,
	.keys = help_keys,
	.marker = false,
	.open = help_open,
	.close = help_close,
	.nlines = help_nlines,
	.title = help_title,
	.draw_line = help_draw_line,
	.key = help_key,
};
