/*
 * The help overlay: generated from the key table (tui/keymap.c), so it
 * always says what the keys really do.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/tui.h"

struct hline {
	const char *section;	/* a heading, or NULL */
	char *keys;
	const char *help;
};

struct help {
	struct hline *lines;
	size_t n, alloc;
	int keyw;
};

static void
add(struct help *h, const char *section, char *keys, const char *help)
{
	*ARRAY_PUSH(h->lines, h->n, h->alloc) = (struct hline){ section, keys, help };
}

static void
help_open(struct pane *p)
{
	struct help *h = xcalloc(1, sizeof *h);
	const struct keybinding *all;
	size_t n, i, j, c;
	char buf[32];

	p->data = h;
	all = keymap_all(&n);
	for (c = 0; keymap_contexts[c] != NULL; c++) {
		const char *ctx = *keymap_contexts[c] ? keymap_contexts[c] : NULL;
		bool any = false;

		for (i = 0; i < n; i++) {
			struct sbuf keys = { 0 };
			bool first = true;

			if ((ctx == NULL) != (all[i].ctx == NULL) ||
			    (ctx != NULL && strcmp(ctx, all[i].ctx) != 0))
				continue;
			/* one line per action: merge its other keys into the first one's */
			for (j = 0; j < i; j++)
				if (all[j].action == all[i].action && (all[j].ctx == NULL) == (ctx == NULL) &&
				    (ctx == NULL || strcmp(all[j].ctx, ctx) == 0) &&
				    strcmp(all[j].help, all[i].help) == 0)
					break;
			if (j < i)
				continue;
			for (j = i; j < n; j++) {
				if (all[j].action != all[i].action || (all[j].ctx == NULL) != (ctx == NULL) ||
				    (ctx != NULL && strcmp(all[j].ctx, ctx) != 0) ||
				    strcmp(all[j].help, all[i].help) != 0)
					continue;
				sbuf_addf(&keys, "%s%s", first ? "" : " ",
				    keymap_key_name(all[j].key, buf, sizeof buf));
				first = false;
			}
			if (!any) {
				if (h->n > 0)
					add(h, "", NULL, NULL);
				add(h, keymap_context_title(ctx), NULL, NULL);
				any = true;
			}
			if ((int)keys.len > h->keyw)
				h->keyw = (int)keys.len;
			add(h, NULL, sbuf_steal(&keys), all[i].help);
			sbuf_free(&keys);
		}
	}
	add(h, "", NULL, NULL);
	add(h, "Command line", NULL, NULL);
	add(h, NULL, xstrdup(":help"), "list the commands; `:help stack` explains one");
	add(h, NULL, xstrdup("Tab"), "complete commands, options and (with the agent) names");
	add(h, NULL, xstrdup("Up Down"), "history (kept between sessions)");
	add(h, NULL, xstrdup(":save FILE"), "write the selected thread's stack to FILE");
	add(h, NULL, xstrdup(":theme NAME"), "switch theme (default light monochrome high-contrast)");
	add(h, NULL, xstrdup(":delay SECS"), "set the refresh interval");
	add(h, "", NULL, NULL);
	add(h, "Console (c, :console, :execute)", NULL, NULL);
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
	free(h);
	p->data = NULL;
}

static size_t
help_nlines(struct pane *p)
{
	return ((struct help *)p->data)->n;
}

static void
help_title(struct pane *p, struct sbuf *out)
{
	sbuf_add(out, "Help (q or Esc to close)");
}

static void
help_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct help *h = p->data;
	const struct hline *hl = &h->lines[line];

	if (hl->section != NULL) {
		tline_add(l, EL_HELP_SECTION, hl->section);
		return;
	}
	tline_add(l, EL_DEFAULT, "  ");
	tline_col(l, EL_HELP_KEY, hl->keys, h->keyw, false);
	tline_add(l, EL_DEFAULT, "  ");
	tline_add(l, EL_HELP_TEXT, hl->help);
}

const struct pane_ops pane_help_ops = {
	.name = "help",
	.marker = false,
	.open = help_open,
	.close = help_close,
	.nlines = help_nlines,
	.title = help_title,
	.draw_line = help_draw_line,
};
