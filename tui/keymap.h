/*
 * keymap — the one table that maps keys to named actions, per context.
 * Dispatch, the `?` help overlay and the function bar are all generated
 * from it, so they cannot drift apart.
 *
 * A context is a pane name ("threads", "stack", ...), "list" (every pane)
 * or NULL (everywhere).  The most specific binding wins.
 */
#ifndef FP_KEYMAP_H
#define FP_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

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
	A_FILTER, A_NATIVE, A_COPY,
	A__COUNT
};

struct keybinding {
	const char *ctx;	/* pane name, "list", or NULL for everywhere */
	int key;		/* a character or a curses KEY_* code */
	enum action action;
	const char *bar;	/* label in the function bar, or NULL */
	const char *help;	/* what it does here */
};

/* The binding of `key` for a pane named `pane` (NULL: none focused). */
const struct keybinding *keymap_lookup(const char *pane, int key);

const struct keybinding *keymap_all(size_t *n);

/* "Up", "PgDn", "C-l", "Tab", "j"... */
const char *keymap_key_name(int key, char *buf, size_t size);

/*
 * The bindings that work in pane `pane`, most specific first, one per
 * action, for the function bar: `fn` is called with each that has a bar
 * label.
 */
void keymap_bar(const char *pane, void (*fn)(const struct keybinding *, void *), void *arg);

/* A binding's bar label in the current state: Pause says "Resume" while
 * the refresh is paused. */
const char *keymap_bar_label(const struct keybinding *b, bool paused);

/* Contexts in the order the help overlay lists them, NULL-terminated. */
extern const char *const keymap_contexts[];
/* A heading for a context: "Everywhere", "Every pane", "Threads pane"... */
const char *keymap_context_title(const char *ctx);

#endif
