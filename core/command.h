/*
 * command — the command language of the guide (`stack -f x.log`): one
 * table (core/command_table.c) that drives the parser, `help`, completion
 * and dispatch, shared by --cmd, the line-mode prompt and the TUI.
 *
 * Each entry carries its handler, what its positional arguments are
 * (module, class, method, file, pid, index, expression...) and what each
 * option's value is (kind, bounds, choices, default).  The parser checks
 * all of that, so a handler only reads values that are already right.
 * Commands of the guide that this build lacks are in the table with their
 * whole grammar and no handler; the commands of the interactive front ends
 * (`save`, `theme`, `quit`...) are in it too, and the front end binds
 * their handlers when it starts, so core never depends on tui/.
 *
 * Parsing never touches the target.
 */
#ifndef FP_COMMAND_H
#define FP_COMMAND_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

/* What a word is: drives checking, completion and `help`. */
enum cmd_kind {
	CMD_FLAG,		/* an option without a value */
	CMD_WORD,		/* any word */
	CMD_MODULE,		/* an imported module: __main__, my.pkg.mod */
	CMD_CLASS,		/* a class of the module before it, maybe dotted (Outer.Inner) */
	CMD_METHOD,		/* a function, or a method of the class before it */
	CMD_FIELD,		/* a variable of the module or class before it */
	CMD_QUALNAME,		/* module.class.method, class None for a function */
	CMD_NESTED,		/* a function defined inside the observed one */
	CMD_FILE,		/* a path on this machine (or the target's, said per use) */
	CMD_PID,		/* a process id */
	CMD_INDEX,		/* a record index (tt: from 1000) */
	CMD_EXPR,		/* a Python expression */
	CMD_CODE,		/* Python statements */
	CMD_REGEX,		/* a PCRE2 pattern */
	CMD_INT,		/* an integer within [min, max] */
	CMD_LIMIT,		/* a count from 1 up to max, or -1 for all */
	CMD_NUMBER,		/* a decimal number within [min, max] (ms, seconds) */
	CMD_CHOICE,		/* one of `choices` */
	CMD_COMMAND,		/* a command's name */
	CMD_THEME,		/* a theme's name (the TUI's) */
};

struct cmd_option {
	const char *shortname;	/* "-f", or NULL */
	const char *longname;	/* "--filepath" */
	const char *arg;	/* "FILE" if it takes a value, NULL for a flag */
	const char *help;
	enum cmd_kind kind;	/* of the value; CMD_FLAG for a flag */
	double min, max;	/* CMD_INT, CMD_NUMBER, CMD_LIMIT (max only) */
	const char *dflt;	/* the value when the option is absent, or NULL */
	const char *const *choices;	/* CMD_CHOICE: NULL-terminated */
	const char *want;	/* numbers: what is accepted, "a depth from 0 to 4" */
};

/* A positional argument. */
struct cmd_param {
	const char *name;	/* as in the usage: "module" */
	const char *what;	/* in messages: "the module" */
	enum cmd_kind kind;
	unsigned flags;		/* CMD_OPTIONAL, CMD_MANY */
	const char *help;
	const char *const *choices;	/* CMD_CHOICE: NULL-terminated */
	double min, max;	/* CMD_INT, CMD_NUMBER */
	const char *want;	/* numbers: what is accepted; a pid: a hint for a word that is no number */
};
#define CMD_OPTIONAL 0x1	/* may be left out; optional ones fill left to right */
#define CMD_MANY 0x2		/* the last one: every word left (execute's code) */

struct cmd_request;
struct runner_streamer;

/*
 * A command's handler.  ctx is the runner (core/runner) for the commands
 * core runs, or what the front end gave command_bind() for its own.
 */
typedef int cmd_run_fn(void *ctx, const struct cmd_request *req, struct sbuf *out,
    char **cause);

/* Spec flags. */
#define CMD_PLANNED 0x01	/* of the guide; this build does not have it yet */
#define CMD_TUI 0x02		/* the TUI's own; it binds the handler */
#define CMD_LINEMODE 0x04	/* the line-mode prompt's own too */
#define CMD_STATEMENT 0x08	/* runs the user's code; output streams while it runs */
#define CMD_INTERACTIVE 0x10	/* reads more lines from the user until left (console) */
#define CMD_SET 0x20		/* runs over a process set itself (stack, perf; help reads none) */
#define CMD_SET_ALL 0x40	/* with --all, runs in each member of a set in turn (core/runner_set) */
#define CMD_JSON_ANSWER 0x80	/* --json: one "answer" record, the agent's end (core/jsonout) */
#define CMD_JSON_STREAM 0x100	/* --json: an "event" record per event, then "end" (core/jsonstream) */
#define CMD_AGENT 0x200		/* loads the agent when it is not there: the TUI asks first */

struct cmd_spec {
	const char *name;	/* "stack"; a subcommand's is "mem summary" */
	const char *usage;	/* after the name: "[pid] [-f FILE] [--native]" */
	const char *summary;	/* one line */
	const struct cmd_param *params;
	size_t nparams;
	const struct cmd_option *options;
	size_t noptions;
	/* Subcommands (mem summary | diff): the first word after the name picks one. */
	struct cmd_spec *const *subs;
	size_t nsubs;
	/* The positional arguments come only with this option (tt -t module method). */
	const char *params_with;
	/* What options and arguments mean for each other (vmtool -a forceGc takes no class). */
	int (*check)(const struct cmd_request *req, char **cause);
	unsigned flags;
	const char *aliases[3];	/* other names: quit's q and exit */
	cmd_run_fn *run;	/* NULL: not built, or not bound by this front end */
	void *ctx;		/* for run, from command_bind; NULL: the runner */
	/*
	 * A streaming command's request, events and end (core/runner_int.h):
	 * run waits for it (runner_cmd_stream), a front end may run it in its
	 * background instead (runner_bg_start).  NULL for the others.
	 */
	const struct runner_streamer *streamer;
};

struct cmd_arg {
	const struct cmd_option *opt;
	char *value;		/* NULL for a flag */
};

struct cmd_request {
	const struct cmd_spec *spec;	/* the subcommand's, when it has one */
	char **args;		/* positional arguments */
	size_t nargs, aargs;
	const struct cmd_param **params;	/* what each of args is (nargs of them) */
	struct cmd_arg *opts;
	size_t nopts, aopts;
};

/* Split a line like a shell: quotes, backslashes.  Returns an fp_status. */
int command_split(const char *line, char ***words, size_t *n, char **cause);

/*
 * Parse one command line: the command, its subcommand, options and their
 * values (kind, bounds, choices), the number of positional arguments and
 * how they go together.  FP_EUSAGE with a message (suggesting the closest
 * command or option) on bad input; FP_OK with *req otherwise, also for
 * commands that this build or this front end does not run (see
 * command_unavailable).  An empty line gives FP_OK and *req == NULL.
 */
int command_parse(const char *line, struct cmd_request **req, char **cause);
void command_request_free(struct cmd_request *req);

/* The value of an option (by long name), "" for a present flag, NULL if absent. */
const char *command_opt(const struct cmd_request *req, const char *longname);
/* The value of an option as given, else its default; NULL with neither. */
const char *command_value(const struct cmd_request *req, const char *longname);
/* The value of a number option (checked by the parser), or its default (0 without one). */
long command_int(const struct cmd_request *req, const char *longname);
double command_number(const struct cmd_request *req, const char *longname);
/* The positional argument that is `name` ("class"), or NULL when left out. */
const char *command_arg(const struct cmd_request *req, const char *name);

/* Is value one of choices (NULL-terminated)? */
bool command_choice_ok(const char *const *choices, const char *value);

/* By name or alias; a subcommand's spec by its full name ("mem diff"). */
const struct cmd_spec *command_find(const char *name);
/* Every command, in the order `help` lists them (subcommands not included). */
const struct cmd_spec *const *command_all(size_t *n);
/* "a, b, c": the commands (and subcommands) with flag, from the table, so that a message cannot drift. */
void command_names_with(struct sbuf *out, unsigned flag);

/*
 * The spec named by a line's first word, NULL if none.  Front ends ask
 * before parsing: a command this build lacks answers that, not its usage.
 */
const struct cmd_spec *command_of_line(const char *line);

/*
 * FP_OK when `spec` can run here; FP_EUSAGE with the one clear answer
 * otherwise: a command of the guide not built yet, or a front end's own
 * command where that front end is not running (save in --cmd).
 */
int command_unavailable(const struct cmd_spec *spec, char **cause);

/*
 * A front end binds the handlers of its own commands (CMD_TUI,
 * CMD_LINEMODE) when it starts; fn NULL unbinds.  There is one front end
 * per process.
 */
void command_bind(const char *name, cmd_run_fn *fn, void *ctx);

/* `help` (every command) and `help NAME`; FP_EUSAGE for an unknown NAME. */
int command_help(struct sbuf *out, const char *name, char **cause);

/* The closest of `candidates` to `word` within a small edit distance, or NULL. */
const char *command_closest(const char *word, const char *const *candidates, size_t n);

/* The table, for command.c only: every command and its subcommands. */
extern struct cmd_spec *const command_table[];
extern const size_t command_table_size;

#endif
