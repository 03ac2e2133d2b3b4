#include "config.h"

#include "tui/keymap.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#ifndef CTRL
#define CTRL(c) ((c) & 0x1f)
#endif
#define ESC 27

/*
 * Order matters twice: the function bar shows labels in this order, and the
 * help overlay lists bindings in this order within each context.
 */
static const struct keybinding table[] = {
	{ NULL, '?', A_HELP, "Help", "show this help" },
	{ NULL, KEY_F(1), A_HELP, NULL, "show this help" },
	{ "help", '?', A_BACK, NULL, "close the help" },
	{ "help", 'q', A_BACK, "Close", "close the help" },
	{ "help", ESC, A_BACK, NULL, "close the help" },

	{ "threads", '\n', A_ENTER, "Stack", "show the selected thread's stack" },
	{ "threads", KEY_ENTER, A_ENTER, NULL, "show the selected thread's stack" },
	{ "threads", '\\', A_FILTER, "Filter", "filter threads by a regular expression (empty: all)" },
	{ "threads", '>', A_SORT_NEXT, NULL, "sort by the next column" },
	{ "threads", '<', A_SORT_PREV, NULL, "sort by the previous column" },
	{ "threads", 'I', A_SORT_INVERT, NULL, "invert the sort order" },
	{ "threads", 'P', A_SORT_CPU, NULL, "sort by CPU%, busiest first" },
	{ "stack", '\n', A_ENTER, "Source", "show the source around the selected frame" },
	{ "stack", KEY_ENTER, A_ENTER, NULL, "show the source around the selected frame" },
	{ "stack", 'x', A_NATIVE, "Native", "show native (C) frames too, or not "
	    "(each thread is stopped briefly while it is unwound)" },
	{ "stack", 'y', A_COPY, "Copy", "copy the stack as text to the clipboard (OSC 52)" },
	{ "source", 'y', A_COPY, "Copy", "copy the stack as text to the clipboard (OSC 52)" },
	{ "source", 'L', A_AGENT, "Locals", "show the frame's locals (loads the agent if needed)" },
	{ "locals", 'L', A_AGENT, "Reload", "read the frame's locals again" },

	{ NULL, '\t', A_NEXT_PANE, "Pane", "focus the next pane" },
	{ NULL, KEY_BTAB, A_PREV_PANE, NULL, "focus the previous pane" },
	{ "list", '/', A_SEARCH, "Search", "search forward in this pane (PCRE2 regular expression)" },
	{ "list", 'n', A_SEARCH_NEXT, NULL, "next match" },
	{ "list", 'N', A_SEARCH_PREV, NULL, "previous match" },
	{ NULL, ':', A_COMMAND, "Cmd", "enter a command (`help` lists them; Tab completes)" },
	{ NULL, 'c', A_CONSOLE, "Console", "a Python console inside the process (loads the agent)" },
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

const char *const keymap_contexts[] = { "", "list", "threads", "stack", "source", "locals",
	"output", "console", "help", NULL };

const char *
keymap_context_title(const char *ctx)
{
	if (ctx == NULL || *ctx == '\0')
		return "Everywhere";
	if (strcmp(ctx, "list") == 0)
		return "In every pane";
	if (strcmp(ctx, "threads") == 0)
		return "Threads pane";
	if (strcmp(ctx, "stack") == 0)
		return "Stack pane";
	if (strcmp(ctx, "source") == 0)
		return "Source pane";
	if (strcmp(ctx, "locals") == 0)
		return "Locals pane";
	if (strcmp(ctx, "output") == 0)
		return "Output pane";
	if (strcmp(ctx, "console") == 0)
		return "Console pane";
	if (strcmp(ctx, "help") == 0)
		return "This help";
	return ctx;
}

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

/* The help overlay takes only its own keys and movement. */
static bool
is_help(const char *pane)
{
	return pane != NULL && strcmp(pane, "help") == 0;
}

const struct keybinding *
keymap_lookup(const char *pane, int key)
{
	const char *order[3] = { pane, "list", NULL };
	size_t i, k;

	for (k = 0; k < 3; k++) {
		if (k == 0 && pane == NULL)
			continue;
		if (k == 2 && is_help(pane))
			break;
		for (i = 0; i < FP_NELEM(table); i++)
			if (table[i].key == key && ctx_is(&table[i], order[k]))
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

void
keymap_bar(const char *pane, void (*fn)(const struct keybinding *, void *), void *arg)
{
	bool seen[A__COUNT] = { false };
	size_t i;

	for (i = 0; i < FP_NELEM(table); i++) {
		const struct keybinding *b = &table[i];

		if (b->bar == NULL || seen[b->action] || keymap_lookup(pane, b->key) != b)
			continue;
		seen[b->action] = true;
		fn(b, arg);
	}
}

const char *
keymap_bar_label(const struct keybinding *b, bool paused)
{
	return b->action == A_PAUSE && paused ? "Resume" : b->bar;
}
