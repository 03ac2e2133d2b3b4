/*
 * keymap — the one table that maps keys to named actions, per context.
 * Dispatch, the `?` help overlay and the function bar are all generated
 * from it, so they cannot drift apart.
 *
 * The table here holds the keys of everywhere (context NULL) and of every
 * pane ("list"); each pane brings its own keys in its ops (tui/tui.h), so
 * that a new pane is one file.  The most specific binding wins: the pane's,
 * then "list", then everywhere (an overlay takes no key of everywhere).
 */
#ifndef FP_KEYMAP_H
#define FP_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

#ifndef CTRL
#define CTRL(c) ((c) & 0x1f)
#endif
#define ESC 27

enum action {
	A_NONE = 0,
	/* everywhere */
	A_QUIT, A_HELP, A_COMMAND, A_REDRAW, A_NEXT_PANE, A_PREV_PANE,
	A_MAXIMISE, A_PAUSE, A_REFRESH, A_BACK, A_CONSOLE, A_AGENT,
	/* every pane */
	A_UP, A_DOWN, A_PAGE_UP, A_PAGE_DOWN, A_FIRST, A_LAST,
	A_SEARCH, A_SEARCH_NEXT, A_SEARCH_PREV,
	/* one pane */
	A_ENTER, A_SORT_NEXT, A_SORT_PREV, A_SORT_INVERT, A_SORT_CPU,
	A_FILTER, A_NATIVE, A_COPY, A_WRAP, A_SCROLL_LEFT, A_SCROLL_RIGHT, A_OLDER, A_NEWER,
	A_FLAME, A_FREEZE, A_TOP_TABLE, A_NEXT_THREAD, A_IDLE,
	A_MEM, A_MEM_SITES, A_MEM_BASE, A_FASTER, A_SLOWER,
	A_MEM_TORCH, A_MEM_VIEW,
	A_TT_REPLAY, A_TT_DELETE, A_TT_SEARCH,
	A_SAMPLE_MODE,
	A_CLEAR,
	A_GROUP,
	A__COUNT
};

struct keybinding {
	const char *ctx;	/* "list", or NULL for everywhere; a pane's own: NULL */
	int key;		/* a character or a curses KEY_* code */
	enum action action;
	const char *bar;	/* label in the function bar, or NULL */
	const char *help;	/* what it does here */
};

/* A pane's own keys: an array ending with an entry whose key is 0. */
struct keymap_pane {
	const struct keybinding *keys;	/* NULL: none */
	bool overlay;			/* no key of everywhere */
};

/* The binding of `key` in a pane (NULL: none focused). */
const struct keybinding *keymap_lookup(const struct keymap_pane *pane, int key);

const struct keybinding *keymap_all(size_t *n);

/* "Up", "PgDn", "C-l", "Tab", "j"... */
const char *keymap_key_name(int key, char *buf, size_t size);

/*
 * The bindings that work in pane `pane`, most specific first, one per
 * action, for the function bar: `fn` is called with each that has a bar
 * label.
 */
void keymap_bar(const struct keymap_pane *pane, void (*fn)(const struct keybinding *, void *),
    void *arg);

/* A binding's bar label in the current state: Pause says "Resume" while
 * the refresh is paused. */
const char *keymap_bar_label(const struct keybinding *b, bool paused);

/* The help's headings of the table's two contexts. */
#define KEYMAP_EVERYWHERE "Everywhere"
#define KEYMAP_EVERY_PANE "In every pane"

#endif
