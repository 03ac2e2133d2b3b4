/*
 * bars — the title bar on the first line, the status or prompt line and
 * the function bar at the bottom (generated from the key table).
 */
#include "config.h"

#include "tui/bars.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "tui/inside.h"
#include "tui/panes.h"

/* Function-bar items as last drawn, for mouse clicks. */
static struct {
	int x0, x1, key;
} bar_items[32];
static size_t nbar_items;

/* Candidates of the last Tab, shown in the function bar until the next key. */
static char *completion_menu;

void
bars_menu_set(char *menu)
{
	free(completion_menu);
	completion_menu = menu;
}

bool
bars_key_at(int x, int *key)
{
	size_t i;

	for (i = 0; i < nbar_items; i++)
		if (x >= bar_items[i].x0 && x < bar_items[i].x1) {
			*key = bar_items[i].key;
			return true;
		}
	return false;
}

/* The target's command line with argv[0] shortened to its base name. */
static const char *
short_cmdline(const char *cmdline)
{
	const char *end = strchr(cmdline, ' '), *slash;

	if (end == NULL)
		end = cmdline + strlen(cmdline);
	for (slash = end; slash > cmdline && slash[-1] != '/'; slash--)
		;
	return slash;
}

void
bars_draw_title(struct tui *t)
{
	struct tline l = { 0 }, r = { 0 };
	const struct py_thread *holder = NULL;
	const char *cmd = short_cmdline(t->target_cmdline), *dot = glyph(G_DOT);
	char *brand, *head, *tail;
	const char *agent;
	int cols = COLS, rw, cmdw, avail;
	enum theme_elem el = t->exited ? EL_TITLE_ALERT : EL_TITLE;
	size_t i;

	for (i = 0; t->snap != NULL && i < t->snap->nthreads; i++)
		if (t->snap->threads[i].gil == GIL_HELD)
			holder = &t->snap->threads[i];

	if (t->exited)
		tline_add(&r, EL_TITLE_ALERT, " TARGET EXITED ");
	else if (t->paused)
		tline_add(&r, EL_TITLE_PAUSED, " PAUSED ");
	else
		tline_addf(&r, el, " live %gs ", t->delay);
	rw = text_width(r.text.s, r.text.len);

	/* Drop the least useful parts first when the line is short. */
	brand = xasprintf(" flight_profiler %s", dot);
	head = t->set_name != NULL ? xasprintf(" %s %s pid %d %s ", t->set_name, dot, (int)t->pid, dot) :
	    xasprintf(" pid %d %s ", (int)t->pid, dot);
	switch (inside_state(t)) {
	case RUNNER_AGENT_ATTACHED:
		agent = draw_utf8() ? "\u25cf" : "on";
		break;
	case RUNNER_AGENT_LOST:
		agent = draw_utf8() ? "\u2715 lost" : "lost";
		break;
	default:
		agent = draw_utf8() ? "\u25cb" : "off";
		break;
	}
	tail = xasprintf(" %s CPython %s %s GIL: %s %s agent %s ", dot, t->version, dot,
	    holder ? (holder->name ? holder->name : "?") : "none", dot, agent);
	avail = cols - rw - text_width(head, strlen(head)) - text_width(tail, strlen(tail));
	if (avail - text_width(brand, strlen(brand)) >= 24) {
		tline_add(&l, el, brand);
		avail -= text_width(brand, strlen(brand));
	}
	tline_add(&l, el, head);
	cmdw = text_width(cmd, strlen(cmd));
	if (cmdw > avail)
		cmdw = avail > 8 ? avail : 8;
	tline_col(&l, el, cmd, cmdw, false);
	tline_add(&l, el, tail);
	draw_tline(0, 0, cols - rw, &l, -1, NULL);
	draw_tline(0, cols - rw, rw, &r, -1, NULL);
	free(brand);
	free(head);
	free(tail);
	tline_free(&l);
	tline_free(&r);
}

/* The function bar's bindings for the focused pane, in table order. */
struct bar {
	const struct keybinding *b[32];
	size_t n;
};

static void
bar_collect(const struct keybinding *b, void *arg)
{
	struct bar *bar = arg;

	if (bar->n < FP_NELEM(bar->b))
		bar->b[bar->n++] = b;
}

static int
bar_width(const struct keybinding *b, bool paused)
{
	char buf[16];
	const char *k = keymap_key_name(b->key, buf, sizeof buf), *label = keymap_bar_label(b, paused);

	return text_width(k, strlen(k)) + 1 + text_width(label, strlen(label)) + 2;
}

/*
 * Draw the bar; when it is too wide, drop items before the last (Quit
 * stays: the one key everybody looks for).
 */
static void
bar_draw_items(struct tline *l, struct bar bar, int cols, bool paused)
{
	char buf[16];
	int w = 0;
	size_t i;

	for (i = 0; i < bar.n; i++)
		w += bar_width(bar.b[i], paused);
	while (w > cols && bar.n > 2) {
		w -= bar_width(bar.b[bar.n - 2], paused);
		bar.b[bar.n - 2] = bar.b[bar.n - 1];
		bar.n--;
	}
	for (i = 0; i < bar.n; i++) {
		int x0 = text_width(l->text.s ? l->text.s : "", l->text.len);

		tline_add(l, EL_BAR_KEY, keymap_key_name(bar.b[i]->key, buf, sizeof buf));
		tline_add(l, EL_BAR, " ");
		tline_add(l, EL_BAR, keymap_bar_label(bar.b[i], paused));
		tline_add(l, EL_BAR, "  ");
		if (nbar_items < FP_NELEM(bar_items)) {
			bar_items[nbar_items].x0 = x0;
			bar_items[nbar_items].x1 = text_width(l->text.s, l->text.len);
			bar_items[nbar_items++].key = bar.b[i]->key;
		}
	}
}
static void
bar_draw(struct tline *l, const struct keymap_pane *pane, int cols, bool paused)
{
	struct bar bar = { .n = 0 };

	keymap_bar(pane, bar_collect, &bar);
	bar_draw_items(l, bar, cols, paused);
}

/* The bar while a prompt is open: key, label, key, label, ..., NULL. */
static void
bar_pairs(struct tline *l, const char *const *pairs)
{
	for (; pairs[0] != NULL; pairs += 2) {
		tline_add(l, EL_BAR_KEY, pairs[0]);
		tline_add(l, EL_BAR, pairs[1]);
	}
}


void
bars_draw_bottom(struct tui *t)
{
	struct tline l = { 0 };
	int y = LINES - 2, cols = COLS, cx = -1;
	const char *prefix;

	nbar_items = 0;
	if (t->prompt != PROMPT_NONE) {
		const char *text = cmdline_text(&t->edit);
		int before, skip = 0, avail;
		const char *p = text;

		prefix = t->prompt == PROMPT_COMMAND ? ":" : t->prompt == PROMPT_SEARCH ? "/" :
		    t->prompt == PROMPT_CONSOLE ? t->console_prompt : "\\";
		tline_add(&l, EL_PROMPT_PREFIX, prefix);
		avail = cols - 1 - text_width(prefix, strlen(prefix));
		before = text_width(text, t->edit.cursor);
		/* scroll horizontally so the cursor stays on screen */
		while (before - skip >= avail && *p != '\0') {
			int w = text_width(p, 1);

			p++;
			while ((*p & 0xc0) == 0x80)
				p++;
			skip += w ? w : 1;
		}
		tline_add(&l, EL_PROMPT, p);
		draw_tline(y, 0, cols, &l, -1, NULL);
		cx = text_width(prefix, strlen(prefix)) + before - skip;
	} else if (t->status != NULL) {
		tline_add(&l, t->status_error ? EL_STATUS_ERROR : EL_STATUS, t->status);
		draw_tline(y, 0, cols, &l, -1, NULL);
	} else {
		draw_fill(y, 0, cols, EL_STATUS);
	}

	tline_reset(&l);
	if (completion_menu != NULL) {
		tline_add(&l, EL_BAR, completion_menu);
	} else if (t->busy) {
		static const char *const keys[] = { "C-c", " Interrupt  ", "Esc",
		    " Interrupt and leave  ", "PgUp/PgDn", " Scroll  ", NULL };

		bar_pairs(&l, keys);
	} else if (t->prompt == PROMPT_CONSOLE) {
		static const char *const keys[] = { "Enter", " Run  ", "Esc", " Leave  ",
		    "C-c", " Drop line  ", "Up/Down", " History  ", "PgUp/PgDn",
		    " Scroll  ", NULL };

		bar_pairs(&l, keys);
	} else if (t->prompt == PROMPT_COMMAND) {
		static const char *const keys[] = { "Enter", " Run  ", "Esc", " Cancel  ",
		    "Tab", " Complete  ", "Up/Down", " History  ", NULL };

		bar_pairs(&l, keys);
	} else if (t->prompt != PROMPT_NONE) {
		static const char *const keys[] = { "Enter", " Apply  ", "Esc", " Cancel  ",
		    "Up/Down", " History  ", NULL };

		bar_pairs(&l, keys);
	} else {
		struct keymap_pane keys = panes_keys(t);

		bar_draw(&l, &keys, cols, t->paused);
	}
	tline_add(&l, EL_BAR, " ");
	draw_tline(LINES - 1, 0, cols, &l, -1, NULL);
	tline_free(&l);

	if (cx >= 0 && cx < cols) {
		move(y, cx);
		curs_set(1);
	} else {
		curs_set(0);
	}
}
