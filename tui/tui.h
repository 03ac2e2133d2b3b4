/*
 * tui — the full-screen front end: panes, layout, keys, the command line,
 * the live refresh of the target's threads.
 *
 * A pane is a `struct pane` with `const struct pane_ops *ops`; the
 * framework owns the cursor, scrolling, search, the frame and the drawing;
 * a pane only says how many lines it has and what each line says
 * (draw_line fills a struct tline).  Adding a pane is one file and one line
 * in tui/pane_table.h: where it goes, its title, its keys and its help
 * section are in its ops.  Panes never call each other: selection and
 * "open this" are events the framework routes (tui_select_thread,
 * tui_open).
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

#include "core/runner.h"

#include "core/procset.h"

#include "core/pystack.h"
#include "core/source.h"
#include "tui/cmdline.h"
#include "tui/draw.h"
#include "tui/keymap.h"
#include "tui/theme.h"

struct tui;
struct pane;

/*
 * Where a pane goes (tui/layout.c).  The slot also says where the focus
 * goes back to when the pane closes: SUB to DETAIL to MAIN to LIST, BOTTOM
 * to LIST, OVERLAY to the pane focused before it.  One pane at a time per
 * slot: showing one hides the other.
 */
enum pane_slot {
	SLOT_LIST,		/* left, or on top: always shown */
	SLOT_MAIN,		/* beside or under the list: always shown */
	SLOT_DETAIL,		/* under the main pane */
	SLOT_DETAIL_SUB,	/* under the detail pane, closed with it */
	SLOT_BOTTOM,		/* across the bottom of the screen */
	SLOT_OVERLAY,		/* centred over the rest; takes every key */
	SLOT_TOP,		/* above the list and main slots, across the width;
				 * shown only when asked (a process set) */
};

/*
 * What the framework tells panes, and what panes ask of each other
 * without knowing who answers: a pane never calls another pane.
 */
enum pane_event_kind {
	EV_SNAPSHOT,		/* to all: tui->snap was replaced */
	EV_SELECT,		/* to all: tui->sel_tid changed */
	EV_RESIZE,		/* to one: its size changed */
	EV_OPEN_THREAD,		/* open this: the thread ev->tid */
	EV_OPEN_SOURCE,		/* open this: ev->filename at ev->line, in ev->function */
	EV_OPEN_FLAME,		/* open this: a live flamegraph sampled at ev->line Hz */
	EV_OPEN_MEM,		/* open this: memory by type, sampled every ev->line s (0: default) */
	EV_TICK,		/* to all: a refresh is due, even when the target has exited */
	EV_OPEN_PROCESS,	/* open this: the threads of the process now looked at */
};

struct pane_event {
	enum pane_event_kind kind;
	pid_t tid;
	const char *filename;
	const char *function;	/* or NULL */
	int line;
};

struct pane_ops {
	const char *name;	/* for messages */
	const char *help_title;	/* its section in the help: "Threads pane" */
	enum pane_slot slot;
	int share;		/* SLOT_BOTTOM: tenths of the height it takes */
	bool marker;		/* draw a cursor marker column */
	/* its own keys, ending with { .key = 0 }; NULL: none */
	const struct keybinding *keys;
	void (*open)(struct pane *);
	void (*close)(struct pane *);
	/* Lines the pane has now. */
	size_t (*nlines)(struct pane *);
	/* The title in the frame. */
	void (*title)(struct pane *, struct sbuf *);
	/* A fixed header line above the list, or NULL. */
	void (*header)(struct pane *, struct tline *);
	void (*draw_line)(struct pane *, size_t line, struct tline *);
	/* A pane action (enum action); true if handled.  A_BACK comes last,
	 * after the framework's own meanings of Back. */
	bool (*key)(struct pane *, enum action);
	/* An event; true if the pane took it.  The pane that takes an "open
	 * this" is shown and focused. */
	bool (*event)(struct pane *, const struct pane_event *);
	/* The cursor moved (by the framework). */
	void (*moved)(struct pane *);
	/* The frame width (borders included) that shows every line uncut, for
	 * the layout to share the width; NULL: any. */
	int (*want_width)(struct pane *);
	/* Keep only the lines matching `re` (NULL or "": all); false with
	 * *cause on a bad regex.  NULL: the pane does not filter. */
	bool (*filter)(struct pane *, const char *re, char **cause);
	/* the filter in force, or NULL */
	const char *(*filter_text)(struct pane *);
	/* Go to the next (or previous) match of tui->search_re itself, for a
	 * pane whose matches are not whole lines; NULL: the framework's. */
	void (*search)(struct pane *, bool forward);
	/* `:save FILE [--format F]` while the pane has the focus; NULL: the
	 * selected thread's stack is saved.  Sets the status. */
	void (*save)(struct pane *, const char *file, const char *format);
	/* It draws its own cursor: no line is highlighted for it. */
	bool own_cursor;
	/* Back reaches the pane first (.key with A_BACK), before the
	 * framework closes it: true if the pane used it (zoomed out). */
	bool back_first;
	/* Its command streams now, in the background (tui/stream.c): Back
	 * (its .key with A_BACK) stops the command, and a pane that takes its
	 * slot meanwhile gives it back when it closes.  NULL: never. */
	bool (*live)(struct pane *);
};

struct pane {
	const struct pane_ops *ops;
	struct tui *tui;
	void *data;
	bool visible;
	size_t cursor, top;
	int y, x, h, w;		/* the frame, when visible */
};

struct tui_options {
	double delay;		/* refresh interval, seconds */
	const char *theme;	/* name or path; NULL: default */
	bool no_color;
	/* a process set (--tree, --match, PID,PID): its processes pane; NULL: none */
	const struct proc_set_spec *set;
};

struct statement;
struct stream;

struct tui {
	pid_t pid;
	struct py_reader *reader;
	struct runner *runner;
	struct source_cache *sc;
	struct inside *inside;	/* the agent's view (tui/inside.c) */
	char *target_cmdline;
	char version[24];
	const struct proc_set_spec *set;	/* the caller's, or NULL: one process */
	char *set_name;		/* "tree of 4100", for the title bar */

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

	/* the screen: a pane per line of tui/pane_table.h, in its order */
	struct pane *panes;
	size_t npanes;
	struct pane *focus, *before_overlay;
	struct pane *maximised;	/* or NULL */
	/* a live pane another took the slot of: back when that one closes */
	struct pane *displaced;
	bool displaced_focus;
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
	/* the pane the console took the slot of, back when it closes (focused if it was) */
	struct pane *console_displaced;
	bool console_displaced_focus;
	char *console_prompt;	/* ">>> " or "... " */
	char *console_line;	/* the line entered */
	struct history *console_history;
	struct statement *stmt;	/* `execute` in the background (tui/statement.c) */
	struct stream *stream;	/* watch, monitor in the background (tui/stream.c) */

	/* search in the focused pane */
	char *search;
	pcre2_code *search_re;
};

/* The panes there are: pane_threads_ops, ... (tui/pane_table.h). */
#define PANE(name) extern const struct pane_ops pane_##name##_ops;
#include "tui/pane_table.h"
#undef PANE

/*
 * Run the TUI on `pid` (reader already opened and handed over).  Returns an
 * fp_status for the exit code.
 */
int tui_run(pid_t pid, struct py_reader *reader, const struct tui_options *opts);

/*
 * Look at process `pid` of the set instead (the processes pane): the
 * reader, runner, agent view and source cache are the new process's, the
 * panes that belong to the old one are closed.  Refused (false, *cause)
 * while a statement or the console runs, or while a pane that streams
 * from the process (flame, mem, watch...) is open.
 */
bool tui_switch_target(struct tui *t, pid_t pid, char **cause);

/* For panes. */
void tui_status(struct tui *t, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The pane of `ops`. */
struct pane *tui_pane(struct tui *t, const struct pane_ops *ops);
/* The visible pane in `slot`, or NULL. */
struct pane *tui_slot_pane(struct tui *t, enum pane_slot slot);
void tui_show_pane(struct tui *t, struct pane *p, bool focus);
void tui_hide_pane(struct tui *t, struct pane *p);
/* Select thread `tid` (EV_SELECT to every pane). */
void tui_select_thread(struct tui *t, pid_t tid);
/* "Open this": the pane that takes `ev` is shown and focused; false if
 * none did. */
bool tui_open(struct tui *t, const struct pane_event *ev);
void pane_set_cursor(struct pane *p, size_t line);
/* Keep the cursor in the lines and on screen. */
void pane_clamp(struct pane *p);
/* `n` lines went from the start of the pane: what is on screen stays. */
void pane_lines_dropped(struct pane *p, size_t n);
/*
 * For a pane's filter (ops->filter): `re` compiled (caseless, UTF-8) into
 * *code, NULL when it is empty; false with *cause on a bad pattern.
 */
bool pane_filter_compile(const char *re, pcre2_code **code, char **cause);
/* Lines of the list area (frame and header excluded). */
int pane_rows(const struct pane *p);
/* The selected thread of the snapshot, or NULL. */
const struct py_thread *tui_selected_thread(const struct tui *t);
/* Copy text to the terminal's clipboard (OSC 52). */
void tui_copy(struct tui *t, const char *text);

/* For the framework's own modules (layout, bars, prompt, commands,
 * console): one turn of the main loop; `busy` while a statement runs. */
void tui_pump(struct tui *t, bool busy);

/*
 * pane_locals.c: the locals of a frame (the agent's frame object:
 * `locals` as [name, repr] pairs, `locals_note`, `locals_more`), or, with
 * frame NULL, one line saying why there are none.
 */
struct frame_locals;
void pane_locals_set(struct pane *p, const char *function, const struct frame_locals *locals,
    const char *note);
/* pane_console.c: append what the code printed; a line of its own for echoes */
void pane_console_write(struct pane *p, const char *text, size_t len);
void pane_console_echo(struct pane *p, const char *prompt, const char *line);
void pane_console_scroll(struct pane *p, int pages);
/*
 * pane_output.c: the history of commands and their output.  begin starts
 * a command's entry (`command` as typed), append adds its text as it comes
 * (any pieces; the target's text, escaped when shown), end closes it with
 * a note of ours (or NULL); set is the three at once.
 */
void pane_output_begin(struct pane *p, const char *command);
void pane_output_append(struct pane *p, const char *text, size_t len);
void pane_output_end(struct pane *p, const char *note);
void pane_output_set(struct pane *p, const char *command, const char *text);

/*
 * pane_trace.c: the events of a `trace` the TUI runs (runner_io.record,
 * with the struct tui as ctx); true when it took one.
 */
bool pane_trace_record(void *tui, struct runner_record *rec);
/* pane_watch.c, pane_monitor.c: the same for `watch` and `monitor`. */
bool pane_watch_record(void *tui, struct runner_record *rec);
bool pane_monitor_record(void *tui, struct runner_record *rec);

/*
 * pane_flame.c: show `fl` instead of sampling the target (the benchmark's,
 * from flamelive_fake); the pane takes it over.
 */
struct flamelive;
void pane_flame_show(struct pane *p, struct flamelive *fl);
/*
 * pane_mem.c: the pane's model, for benchmarks to feed samples to
 * (memlive_feed) instead of the agent.
 */
struct memlive;
struct memlive *pane_mem_model(struct pane *p);

/* tt pane: list the records again after the `tt` command `line` (-l, -s set what it lists). */
void pane_tt_after(struct pane *p, const char *line);

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
