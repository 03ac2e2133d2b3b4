#include "config.h"

#include "tui/keymap.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

/*
 * Order matters twice: the function bar shows labels in this order, and the
 * help overlay lists bindings in this order within each context.  A pane's
 * own keys are in its ops (tui/tui.h).
 */
static const struct keybinding table[] = {
	{ NULL, '?', A_HELP, "Help", "show this help" },
	{ NULL, KEY_F(1), A_HELP, NULL, "show this help" },
	/* the focused pane's own keys come here (in the bar, after Help) */
	{ NULL, 0, A_NONE, NULL, NULL },

	{ NULL, '\t', A_NEXT_PANE, "Pane", "focus the next pane" },
	{ NULL, KEY_BTAB, A_PREV_PANE, NULL, "focus the previous pane" },
	{ "list", '/', A_SEARCH, "Search", "search forward in this pane (PCRE2 regular expression)" },
	{ "list", 'n', A_SEARCH_NEXT, NULL, "next match" },
	{ "list", 'N', A_SEARCH_PREV, NULL, "previous match" },
	{ NULL, ':', A_COMMAND, "Cmd", "enter a command (`help` lists them; Tab completes)" },
	{ NULL, 'c', A_CONSOLE, "Console", "a Python console inside the process (loads the agent)" },
	{ NULL, 'F', A_FLAME, "Flame", "a live flamegraph of the process, sampled from outside (:flame)" },
	{ NULL, 'M', A_MEM, NULL, "memory by type, re-sampled live, with growth and trend (loads the agent)" },
	{ NULL, 'L', A_AGENT, NULL, "load the agent: thread names, locals, completion" },
	{ NULL, ' ', A_PAUSE, "Pause", "pause or resume the live refresh" },
	{ NULL, 'r', A_REFRESH, NULL, "refresh now" },
	{ NULL, 'z', A_MAXIMISE, NULL, "maximise the focused pane, or restore the layout" },
	{ NULL, ESC, A_BACK, NULL, "back: close a pane or the help; clear the search" },
	{ NULL, KEY_BACKSPACE, A_BACK, NULL, "back: close a pane or the help; clear the search" },
	{ NULL, CTRL('l'), A_REDRAW, NULL, "redraw the screen" },
	{ NULL, 'q', A_QUIT, "Quit", "quit (the target keeps running)" },
	{ NULL, CTRL('c'), A_QUIT, NULL, "quit (the target keeps running)" },
	{ NULL, KEY_F(10), A_QUIT, NULL, "quit (the target keeps running)" },

	{ "list", KEY_UP, A_UP, NULL, "move up" },
	{ "list", 'k', A_UP, NULL, "move up" },
	{ "list", KEY_DOWN, A_DOWN, NULL, "move down" },
	{ "list", 'j', A_DOWN, NULL, "move down" },
	{ "list", KEY_PPAGE, A_PAGE_UP, NULL, "page up" },
	{ "list", CTRL('b'), A_PAGE_UP, NULL, "page up" },
	{ "list", KEY_NPAGE, A_PAGE_DOWN, NULL, "page down" },
	{ "list", CTRL('f'), A_PAGE_DOWN, NULL, "page down" },
	{ "list", KEY_HOME, A_FIRST, NULL, "first line" },
	{ "list", 'g', A_FIRST, NULL, "first line" },
	{ "list", KEY_END, A_LAST, NULL, "last line" },
	{ "list", 'G', A_LAST, NULL, "last line" },
};

const struct keybinding *
keymap_all(size_t *n)
{
	*n = FP_NELEM(table);
	return table;
}

static bool
ctx_is(const struct keybinding *b, const char *ctx)
{
	if (ctx == NULL)
		return b->ctx == NULL;
	return b->ctx != NULL && strcmp(b->ctx, ctx) == 0;
}

const struct keybinding *
keymap_lookup(const struct keymap_pane *pane, int key)
{
	const struct keybinding *b;
	size_t i, k;

	for (b = pane ? pane->keys : NULL; b != NULL && b->key != 0; b++)
		if (b->key == key)
			return b;
	for (k = 0; k < 2; k++) {
		if (k == 1 && pane != NULL && pane->overlay)
			break;
		for (i = 0; i < FP_NELEM(table); i++)
			if (table[i].key == key && table[i].action != A_NONE &&
			    ctx_is(&table[i], k == 0 ? "list" : NULL))
				return &table[i];
	}
	return NULL;
}

const char *
keymap_key_name(int key, char *buf, size_t size)
{
	static const struct {
		int key;
		const char *name;
	} names[] = {
		{ KEY_UP, "Up" }, { KEY_DOWN, "Down" }, { KEY_LEFT, "Left" }, { KEY_RIGHT, "Right" },
		{ KEY_PPAGE, "PgUp" }, { KEY_NPAGE, "PgDn" }, { KEY_HOME, "Home" }, { KEY_END, "End" },
		{ KEY_BTAB, "S-Tab" }, { KEY_ENTER, "Enter" }, { KEY_BACKSPACE, "BkSp" },
		{ '\t', "Tab" }, { '\n', "Enter" }, { ESC, "Esc" }, { ' ', "Space" },
	};
	size_t i;

	for (i = 0; i < FP_NELEM(names); i++)
		if (names[i].key == key)
			return names[i].name;
	if (key >= KEY_F(1) && key <= KEY_F(12))
		snprintf(buf, size, "F%d", key - KEY_F0);
	else if (key > 0 && key < 32)
		snprintf(buf, size, "C-%c", key + 'a' - 1);
	else if (key > 32 && key < 127)
		snprintf(buf, size, "%c", key);
	else
		snprintf(buf, size, "#%d", key);
	return buf;
}

/* Calls fn for b if it has a label, is the first of its action and is what
 * its key does in `pane`. */
static void
bar_item(const struct keymap_pane *pane, const struct keybinding *b, bool *seen,
    void (*fn)(const struct keybinding *, void *), void *arg)
{
	if (b->bar == NULL || seen[b->action] || keymap_lookup(pane, b->key) != b)
		return;
	seen[b->action] = true;
	fn(b, arg);
}

void
keymap_bar(const struct keymap_pane *pane, void (*fn)(const struct keybinding *, void *), void *arg)
{
	bool seen[A__COUNT] = { false };
	const struct keybinding *b;
	size_t i;

	for (i = 0; i < FP_NELEM(table); i++) {
		if (table[i].action != A_NONE) {
			bar_item(pane, &table[i], seen, fn, arg);
			continue;
		}
		for (b = pane ? pane->keys : NULL; b != NULL && b->key != 0; b++)
			bar_item(pane, b, seen, fn, arg);
	}
}

const char *
keymap_bar_label(const struct keybinding *b, bool paused)
{
	return b->action == A_PAUSE && paused ? "Resume" : b->bar;
}
