/*
 * tui — the full-screen front end: panes, layout, keys, the command line,
 * the live refresh of the target's threads.
 *
 * A pane is a `struct pane` with `const struct pane_ops *ops`; the
 * framework owns the cursor, scrolling, search, the frame and the drawing;
 * a pane only says how many lines it has and what each line says
 * (draw_line fills a struct tline).  Adding a pane is one file and one line
 * in pane_table[] (tui.c).
 *
 * The TUI only talks to core/.  It reads the target from outside on a
 * timer (py_reader_snapshot: no thread is stopped unless native frames are
 * shown) and never blocks on the target for longer than one read.  What
 * needs the agent (thread names, locals, completion, the console) goes
 * through tui/inside.c, which never loads it without the user asking.
 */
#ifndef FP_TUI_H
#define FP_TUI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "core/pystack.h"
#include "core/source.h"
#include "tui/cmdline.h"
#include "tui/draw.h"
#include "tui/keymap.h"
#include "tui/theme.h"

struct tui;
struct pane;

enum tui_event {
	EV_SNAPSHOT,		/* tui->snap was replaced */
	EV_SELECT,		/* tui->sel_tid changed */
	EV_RESIZE,		/* the pane's size changed */
};

struct pane_ops {
	const char *name;	/* also its keymap context */
	bool marker;		/* draw a cursor marker column */
	void (*open)(struct pane *);
	void (*close)(struct pane *);
	/* Lines the pane has now. */
	size_t (*nlines)(struct pane *);
	/* The title in the frame. */
	void (*title)(struct pane *, struct sbuf *);
	/* A fixed header line above the list, or NULL. */
	void (*header)(struct pane *, struct tline *);
	void (*draw_line)(struct pane *, size_t line, struct tline *);
	/* A pane action (enum action); true if handled. */
	bool (*key)(struct pane *, enum action);
	void (*event)(struct pane *, enum tui_event);
	/* The cursor moved (by the framework). */
	void (*moved)(struct pane *);
};

struct pane {
	const struct pane_ops *ops;
	struct tui *tui;
	void *data;
	bool visible;
	size_t cursor, top;
	int y, x, h, w;		/* the frame, when visible */
};

enum pane_id {
	PANE_THREADS,
	PANE_STACK,
	PANE_SOURCE,
	PANE_LOCALS,
	PANE_OUTPUT,
	PANE_CONSOLE,
	PANE_HELP,
	PANE__COUNT
};

struct tui_options {
	double delay;		/* refresh interval, seconds */
	const char *theme;	/* name or path; NULL: default */
	bool no_color;
};

struct tui {
	pid_t pid;
	struct py_reader *reader;
	struct runner *runner;
	struct source_cache *sc;
	struct inside *inside;	/* the agent's view (tui/inside.c) */
	char *target_cmdline;
	char version[24];

	/* the model */
	struct py_snapshot *snap;
	double *cpu;		/* per snap thread; < 0 unknown */
	struct tick_sample { pid_t tid; uint64_t ticks; } *prev;
	size_t nprev;
	uint64_t prev_ns;
	pid_t sel_tid;		/* the thread the stack pane shows */
	bool native;		/* snapshots with native frames */
	bool paused;
	bool exited;		/* the target is gone */
	double delay;
	uint64_t next_refresh_ns;

	/* the screen */
	struct pane panes[PANE__COUNT];
	enum pane_id focus, before_help;
	int maximised;		/* a pane id, or -1 */
	bool too_small;
	bool dirty;
	bool quit;
	struct theme theme;
	bool use_color;

	/* the bottom lines */
	char *status;
	bool status_error;
	enum { PROMPT_NONE, PROMPT_COMMAND, PROMPT_SEARCH, PROMPT_FILTER, PROMPT_CONSOLE } prompt;
	struct cmdline edit;
	struct history *history;
	struct history *search_history, *filter_history;	/* this session's */

	/* console and execute: the runner calls back into the screen */
	bool busy;		/* a statement runs in the target */
	bool interrupt;		/* Ctrl-C (or Esc) while it ran */
	struct { int key; bool fkey; } ahead[64];	/* typed while it ran */
	size_t nahead;
	bool console_open;	/* `console` reads its lines from the TUI */
	enum { CONSOLE_WAIT, CONSOLE_LINE, CONSOLE_INTERRUPT, CONSOLE_EOF } console_input;
	bool console_leave;	/* Esc while a statement ran: leave after it */
	bool console_broken;	/* it ended on an error: its pane stays, modal */
	char *console_prompt;	/* ">>> " or "... " */
	char *console_line;	/* the line entered */
	struct history *console_history;

	/* search in the focused pane */
	char *search;
	pcre2_code *search_re;
};

/* pane_threads.c, pane_stack.c, ... */
extern const struct pane_ops pane_threads_ops;
extern const struct pane_ops pane_stack_ops;
extern const struct pane_ops pane_source_ops;
extern const struct pane_ops pane_locals_ops;
extern const struct pane_ops pane_output_ops;
extern const struct pane_ops pane_console_ops;
extern const struct pane_ops pane_help_ops;

/*
 * Run the TUI on `pid` (reader already opened and handed over).  Returns an
 * fp_status for the exit code.
 */
int tui_run(pid_t pid, struct py_reader *reader, const struct tui_options *opts);

/* For panes. */
void tui_status(struct tui *t, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tui_show_pane(struct tui *t, enum pane_id id, bool focus);
void tui_hide_pane(struct tui *t, enum pane_id id);
void pane_set_cursor(struct pane *p, size_t line);
/* Keep the cursor in the lines and on screen. */
void pane_clamp(struct pane *p);
/* Lines of the list area (frame and header excluded). */
int pane_rows(const struct pane *p);
/* The selected thread of the snapshot, or NULL. */
const struct py_thread *tui_selected_thread(const struct tui *t);
/* Copy text to the terminal's clipboard (OSC 52). */
void tui_copy(struct tui *t, const char *text);

/* For the framework's own modules (layout, bars, prompt, commands,
 * console): one turn of the main loop; `busy` while a statement runs. */
void tui_pump(struct tui *t, bool busy);

#ifndef CTRL
#define CTRL(c) ((c) & 0x1f)
#endif
#define ESC 27

/* pane_source.c: show `line` of `filename` with the line marked. */
void pane_source_show(struct pane *p, const char *filename, int line, const char *function);
/*
 * pane_locals.c: the locals of a frame (the agent's frame object:
 * `locals` as [name, repr] pairs, `locals_note`, `locals_more`), or, with
 * frame NULL, one line saying why there are none.
 */
void pane_locals_set(struct pane *p, const char *function, json_t *frame, const char *note);
/* pane_console.c: append what the code printed; a line of its own for echoes */
void pane_console_write(struct pane *p, const char *text, size_t len);
void pane_console_echo(struct pane *p, const char *prompt, const char *line);
void pane_console_scroll(struct pane *p, int pages);
/* pane_output.c: replace the output with `text`, titled `title`. */
void pane_output_set(struct pane *p, const char *title, const char *text);
/* pane_stack.c: the selected thread as text (render_thread) */
void pane_stack_text(struct pane *p, struct sbuf *out);
/* the frame width (borders included) that shows every frame's location and
 * function uncut */
int pane_stack_want_width(struct pane *p);
/* pane_threads.c: the frame width that shows every row's TOP column uncut */
int pane_threads_want_width(struct pane *p);
/* pane_threads.c: refilter (NULL or "": none); false with *cause on a bad regex */
bool pane_threads_filter(struct pane *p, const char *re, char **cause);
/* the filter in force, or NULL */
const char *pane_threads_filter_text(struct pane *p);

/*
 * Build a fake snapshot for benchmarks and tests: `nthreads` threads of
 * `depth` frames each.  Free with py_snapshot_free().
 */
struct py_snapshot *tui_fake_snapshot(size_t nthreads, size_t depth);
/*
 * Headless use by the benchmark: set up a struct tui around `snap` on the
 * current curses screen, draw it, and free it.
 */
struct tui *tui_new_headless(struct py_snapshot *snap);
/* Make `snap` the model (CPU% against the previous one); takes ownership. */
void tui_set_snapshot(struct tui *t, struct py_snapshot *snap);
void tui_draw(struct tui *t);
/* Place the panes again for the terminal's size (after KEY_RESIZE). */
void tui_relayout(struct tui *t);
void tui_free(struct tui *t);

#endif
