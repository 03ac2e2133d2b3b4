/*
 * inside — what the TUI asks the agent (the inside view): whether it is
 * attached, the Python names of the threads, the locals of the frame in
 * the source view, and names for Tab completion.
 *
 * It never loads the agent by itself: only inside_attach(t, true), run on
 * the user's key or by a command that needs the agent, injects it.  It
 * never holds the screen for long: the names and locals requests are sent
 * and their answers picked up by inside_tick() from the main loop, one
 * request in flight at a time (a session serves one waiting request at a
 * time, so before anything else uses the session, inside_quiesce() drops
 * it); completion waits at most INSIDE_COMPLETE_MS.
 */
#ifndef FP_INSIDE_H
#define FP_INSIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/pystack.h"
#include "core/runner.h"
#include "tui/cmdline.h"

struct tui;
struct inside;

/* How long Tab completion may wait for the agent. */
#define INSIDE_COMPLETE_MS 300
/* How often the Python thread names are asked for again. */
#define INSIDE_NAMES_EVERY_MS 3000

struct inside *inside_new(void);
void inside_free(struct inside *in);

/*
 * Connect to the agent running in the target or, with `load`, load it
 * (an injection: the user asked).  True when attached; the status line
 * says what happened either way, unless `quiet`.
 */
bool inside_attach(struct tui *t, bool load, bool quiet);
/*
 * May the agent be used: it is there, or the user said yes to loading it
 * into this process (asked here, once per process).  No says so in the
 * status: what `cmd` (NULL: c or L) did not do.
 */
bool inside_may_load(struct tui *t, const char *cmd);
enum runner_agent_state inside_state(struct tui *t);

/*
 * From the main loop: pick up answers, ask for the thread names again
 * when they are due.  Returns the milliseconds until it wants to run
 * again, or -1.
 */
int inside_tick(struct tui *t);
/* Forget the request in flight (its answer is dropped when it comes). */
void inside_quiesce(struct tui *t);

/* Give a new snapshot the Python thread names known so far. */
void inside_apply_names(struct tui *t, struct py_snapshot *snap);

/*
 * The source view now shows frame `index` (0 = innermost) of thread `th`,
 * or a native frame (index SIZE_MAX): ask for its locals when the agent
 * is attached.
 */
void inside_frame(struct tui *t, const struct py_thread *th, size_t index);
/* Ask again (L in the source view), attaching first if needed. */
void inside_reload_locals(struct tui *t);
/* The source pane's header: where the locals are, or how to get them. */
const char *inside_locals_hint(struct tui *t);

/* cmdline's namer: module, class and attribute names from the agent. */
char **inside_names(void *tui, enum cmdline_names kind, const char *module, const char *cls,
    const char *prefix, size_t *n, char **cause);

#endif
