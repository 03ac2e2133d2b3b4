/*
 * theme — colours and attributes of every screen element, read from text
 * files in a tig-like format:
 *
 *   # comment
 *   color <element> <fg> <bg> [attr...]
 *
 * Colours are `default`, the eight names (`red`...) and their `bright-`
 * forms, a palette index (`123` or `color123`) or `#rrggbb`; they are
 * mapped down to what the terminal has (256, 16 or 8 colours, or none).
 * Attributes: normal bold dim underline reverse standout blink italic.
 *
 * The default theme is compiled in (themes/default.theme says the same, and
 * a unit test keeps them equal).  A bad line is reported as
 * `file:line: message` and the rest of the file still loads.
 *
 * Parsing never touches the terminal; theme_apply() is the only part that
 * talks to curses.
 */
#ifndef FP_THEME_H
#define FP_THEME_H

#include <stdbool.h>

#include "core/util.h"

/* X(enum suffix, element name) */
#define THEME_ELEMENTS(X) \
	X(DEFAULT, "default") \
	X(TITLE, "title") \
	X(TITLE_ALERT, "title.alert") \
	X(TITLE_PAUSED, "title.paused") \
	X(BAR, "bar") \
	X(BAR_KEY, "bar.key") \
	X(STATUS, "status") \
	X(STATUS_ERROR, "status.error") \
	X(PROMPT, "prompt") \
	X(PROMPT_PREFIX, "prompt.prefix") \
	X(BORDER, "pane.border") \
	X(BORDER_FOCUS, "pane.border-focus") \
	X(PANE_TITLE, "pane.title") \
	X(PANE_TITLE_FOCUS, "pane.title-focus") \
	X(HEADER, "list.header") \
	X(CURSOR, "list.cursor") \
	X(CURSOR_UNFOCUSED, "list.cursor-unfocused") \
	X(SEARCH_MATCH, "search.match") \
	X(THREAD_TID, "threads.tid") \
	X(THREAD_NAME, "threads.name") \
	X(THREAD_GIL, "threads.has-gil") \
	X(THREAD_WAIT_GIL, "threads.wait-gil") \
	X(THREAD_RUNNING, "threads.running") \
	X(THREAD_IDLE, "threads.idle") \
	X(THREAD_CPU, "threads.cpu") \
	X(THREAD_CPU_HIGH, "threads.cpu-high") \
	X(THREAD_TOP, "threads.top") \
	X(STACK_FUNCTION, "stack.function") \
	X(STACK_FILE, "stack.file") \
	X(STACK_NATIVE, "stack.native") \
	X(STACK_MODULE, "stack.module") \
	X(STACK_ERROR, "stack.error") \
	X(STACK_LINENO, "stack.lineno") \
	X(STACK_SOURCE, "stack.source") \
	X(STACK_CURRENT_LINE, "stack.current-line") \
	X(STACK_LOCALS, "stack.locals") \
	X(OUTPUT, "output.text") \
	X(HELP_KEY, "help.key") \
	X(HELP_TEXT, "help.text") \
	X(HELP_SECTION, "help.section") \
	X(FLAME_0, "flame.0") \
	X(FLAME_1, "flame.1") \
	X(FLAME_2, "flame.2") \
	X(FLAME_3, "flame.3") \
	X(FLAME_4, "flame.4") \
	X(FLAME_5, "flame.5") \
	X(FLAME_MATCH, "flame.match") \
	X(FLAME_SELECTED, "flame.selected") \
	X(WATCH_TIME, "watch.time") \
	X(WATCH_COST, "watch.cost") \
	X(WATCH_METHOD, "watch.method") \
	X(WATCH_ERROR, "watch.error") \
	X(WATCH_DETAIL, "watch.detail") \
	X(MONITOR_METHOD, "monitor.method") \
	X(MONITOR_FAIL, "monitor.fail") \
	X(MONITOR_DELTA, "monitor.delta") \
	X(MONITOR_TREND, "monitor.trend")

enum theme_elem {
#define X(e, n) EL_##e,
	THEME_ELEMENTS(X)
#undef X
	EL__COUNT
};

#define THEME_COLOR_DEFAULT (-1)
#define THEME_RGB(r, g, b) (0x1000000 | ((r) << 16) | ((g) << 8) | (b))
#define THEME_IS_RGB(c) ((c) >= 0x1000000)

enum theme_attr {
	TA_BOLD = 1 << 0,
	TA_DIM = 1 << 1,
	TA_UNDERLINE = 1 << 2,
	TA_REVERSE = 1 << 3,
	TA_STANDOUT = 1 << 4,
	TA_BLINK = 1 << 5,
	TA_ITALIC = 1 << 6,
};

struct theme_style {
	int fg, bg;		/* THEME_COLOR_DEFAULT, 0-255, or THEME_RGB() */
	unsigned attrs;		/* enum theme_attr bits */
};

struct theme {
	struct theme_style style[EL__COUNT];
};

const char *theme_elem_name(enum theme_elem e);

/* The compiled-in default theme. */
void theme_default(struct theme *t);

/*
 * Apply the lines of `text` on top of *t.  Each bad line appends
 * "<filename>:<line>: <message>\n" to `errs` and is skipped.  Returns the
 * number of bad lines.
 */
int theme_parse(struct theme *t, const char *text, const char *filename, struct sbuf *errs);

/*
 * Find a theme by name: a path (containing '/'), or NAME.theme in the
 * directories of $FLIGHT_PROFILER_THEME_PATH (colon-separated), then
 * $XDG_CONFIG_HOME/flight_profiler/themes (~/.config/...), then the
 * bundled themes compiled into the binary (so a binary run from its build
 * tree has them), then the installed directory.  "default" is always the
 * compiled-in one.  Loads it
 * into *t (starting from the default), appending bad lines to `errs`.
 * Returns an fp_status; FP_ERR with *cause when not found or unreadable.
 */
int theme_load(struct theme *t, const char *name, struct sbuf *errs, char **cause);

/* The bundled themes/ files, generated into tui/themes_builtin.c at build
 * time; ends with { NULL, NULL }. */
struct theme_builtin {
	const char *name, *text;
};
extern const struct theme_builtin theme_builtins[];

/* Names of the themes theme_load() can find, sorted, without duplicates. */
char **theme_list(size_t *n);

/*
 * Curses: set up colour pairs for *t.  `use_color` false (NO_COLOR, or a
 * terminal without colours) keeps attributes only; elements whose look
 * came from colour alone get a fallback attribute so they stay visible.
 */
void theme_apply(const struct theme *t, bool use_color);
/* The curses attributes (attr_t with the colour pair) of an element. */
unsigned long theme_attr(enum theme_elem e);

/* Map a colour to one of `ncolors` terminal colours (-1: default). */
int theme_map_color(int color, int ncolors);

#endif
