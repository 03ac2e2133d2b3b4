/*
 * cmdline — the line editor behind the TUI's command line and the
 * line-mode prompt: an editable buffer (UTF-8, cursor by character),
 * persistent history and Tab completion from the command table.
 *
 * Nothing here draws: the TUI and line mode show the buffer their own way.
 */
#ifndef FP_CMDLINE_H
#define FP_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

struct history;

struct cmdline {
	struct sbuf buf;
	size_t cursor;		/* byte offset, at a character boundary */
	struct history *hist;	/* may be NULL */
	size_t hist_pos;	/* == count when not browsing */
	char *stash;		/* the line being typed before browsing */
};

void cmdline_init(struct cmdline *c, struct history *h);
void cmdline_free(struct cmdline *c);
void cmdline_clear(struct cmdline *c);
const char *cmdline_text(const struct cmdline *c);
void cmdline_set(struct cmdline *c, const char *text);

void cmdline_insert(struct cmdline *c, const char *s);
void cmdline_backspace(struct cmdline *c);
void cmdline_delete(struct cmdline *c);
void cmdline_left(struct cmdline *c);
void cmdline_right(struct cmdline *c);
void cmdline_home(struct cmdline *c);
void cmdline_end(struct cmdline *c);
void cmdline_kill_end(struct cmdline *c);	/* C-k */
void cmdline_kill_start(struct cmdline *c);	/* C-u */
void cmdline_kill_word(struct cmdline *c);	/* C-w */
void cmdline_history_prev(struct cmdline *c);
void cmdline_history_next(struct cmdline *c);

/*
 * History in a file, one line each, newest last.  NULL path: in memory
 * only.  history_default_path() is $XDG_STATE_HOME/flight_profiler/history
 * (~/.local/state/...); the directory is created 0700 on first write.
 */
char *history_default_path(void);
struct history *history_open(const char *path);
void history_add(struct history *h, const char *line);
size_t history_count(const struct history *h);
const char *history_get(const struct history *h, size_t i);
void history_close(struct history *h);

/*
 * Names that only the process knows (module, class, attribute), for the
 * positions of commands like `getglobal module [class] field`.  names()
 * returns a malloc'd array (free with strv_free) of the names
 * starting with `prefix`, or NULL with *cause (malloc'd) when it cannot
 * (NULL *cause: the agent is not attached).
 */
enum cmdline_names {
	NAMES_MODULES,		/* sys.modules, one dotted level at a time */
	NAMES_MEMBERS,		/* names in `module` */
	NAMES_CLASSES,		/* classes in `module` */
	NAMES_CLASS_MEMBERS,	/* names in class `cls` of `module` */
};
struct cmdline_namer {
	char **(*names)(void *ctx, enum cmdline_names kind, const char *module, const char *cls,
	    const char *prefix, size_t *n, char **cause);
	void *ctx;
};

/*
 * Complete the word before the cursor from the command table: command
 * names, subcommands, options, option values and arguments by their kind
 * (choices, commands, themes) and, through `namer` (may be NULL), names in
 * the process.  Applies a unique completion or the longest common prefix.
 * Returns the candidates (NULL-terminated, malloc'd, for a menu; free with
 * strv_free) and their number in *n.  *note gets a malloc'd
 * sentence when nothing can be completed for a reason the user should see
 * (e.g. names need the agent), else NULL.
 */
char **cmdline_complete(struct cmdline *c, const struct cmdline_namer *namer, size_t *n,
    char **note);

#endif
