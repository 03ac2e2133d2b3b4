/*
 * runner — runs parsed commands against one target and renders their
 * results as text.  The same runner serves --cmd, the line-mode prompt and
 * the TUI's output pane, so a command prints the same text everywhere.
 *
 * The runner keeps the process reader (and its caches) and the session
 * with the agent between commands; commands that need the inside view load
 * the agent on first need (core/attach).
 */
#ifndef FP_RUNNER_H
#define FP_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/command.h"
#include "core/model_trace.h"
#include "core/session.h"
#include "core/util.h"

struct runner;

struct runner *runner_new(pid_t pid);
/* The attached process (0 when none). */
pid_t runner_pid(const struct runner *r);
void runner_free(struct runner *r);

/*
 * Where `console` reads its lines and where `console` and `execute` stream
 * what the code prints while it runs.  The default reads standard input
 * (with ">>> " / "... " prompts on a terminal) and writes standard output;
 * the TUI replaces both.  read_line returns a malloc'd line without its
 * newline, or NULL at the end of input; with *interrupted set (Ctrl-C), the
 * console drops the statement being typed.
 */
/*
 * One event of a streaming command, for runner_io.record.  A handler that
 * keeps `trace` moves it out (copies the struct and zeroes the original);
 * what is left is freed after the call.
 */
struct watch_record;
struct monitor_row;
struct runner_record {
	const char *cmd;		/* "trace", "watch", "monitor" */
	enum { RUNNER_RECORD_START, RUNNER_RECORD_ITEM, RUNNER_RECORD_END } kind;
	struct trace_record *trace;	/* START and ITEM of "trace" */
	struct watch_record *watch;	/* START and ITEM of "watch" */
	struct monitor_row *monitor;	/* START and ITEM of "monitor" */
	long long shown, dropped;	/* END: items shown, dropped by the agent */
	bool cancelled;			/* END: stopped by the user */
	bool failed;			/* END (watch, trace, monitor): it ended on an error */
	bool reset;			/* END (watch, trace, monitor): `reset` removed it */
};

struct runner_io {
	char *(*read_line)(void *ctx, const char *prompt, bool *interrupted);
	void (*write)(void *ctx, const char *text, size_t len);
	/*
	 * May be NULL.  Called every few tens of milliseconds while a statement
	 * runs in the target (a front end that owns the terminal keeps its
	 * screen alive from here); true interrupts the statement as Ctrl-C
	 * does.
	 */
	bool (*poll)(void *ctx);
	/*
	 * May be NULL.  A front end that shows records itself (the TUI's trace
	 * pane) gets each event of a streaming command here, parsed into its
	 * model; true: it took the event and no text is written for it.
	 */
	bool (*record)(void *ctx, struct runner_record *rec);
	/*
	 * May be NULL.  Every end the agent sent (ok or not) to a command,
	 * before the command renders it: --json (core/jsonout) keeps its data.
	 */
	void (*answer)(void *ctx, const char *cmd, const struct proto_msg *end);
	/*
	 * May be NULL.  Every event the agent streamed to a command, as it
	 * came, before the command renders it: --json (core/jsonstream)
	 * prints each as a record.
	 */
	void (*event)(void *ctx, const char *cmd, const struct proto_msg *msg);
	bool interactive;	/* prompts, banner; errors do not end the console */
	void *ctx;
};
void runner_set_io(struct runner *r, const struct runner_io *io);
/*
 * For commands that report while they run (gilstat on): ask the front end
 * whether to stop (runner_io.poll; false when it has none).  They write
 * with runner_write (core/runner_int.h).
 */
bool runner_interrupted(struct runner *r);

/*
 * The session with the agent, for front ends that talk to it directly
 * (the TUI's thread names, locals and completion).  runner_attach connects
 * to the agent already running in the target, or with `load` loads it
 * (an injection: only on the user's request).  runner_session is the
 * session, or NULL when none is connected; it never connects.  After a
 * request on it failed in a way that may have broken it, the caller hands
 * it back with runner_session_failed (the session is closed; the state
 * becomes RUNNER_AGENT_LOST).
 */
enum runner_agent_state {
	RUNNER_AGENT_NONE,	/* never connected */
	RUNNER_AGENT_ATTACHED,
	RUNNER_AGENT_LOST,	/* was connected; the connection broke */
};
int runner_attach(struct runner *r, bool load, char **cause);
struct session *runner_session(struct runner *r);
void runner_session_failed(struct runner *r);
/*
 * In a forked child: leave the parent's connection to the parent (its
 * socket stays open there, and with it what the agent keeps for it, such
 * as a `mem sites` session); the child connects on its own when it needs to.
 */
void runner_forget_session(struct runner *r);
/*
 * The runner serves one command and its client then leaves (--cmd): a
 * command whose effect would end with the client says so instead.
 */
void runner_set_one_shot(struct runner *r);
struct proc_set_spec;
/*
 * Look at a set of processes (issue 13; the runner takes the spec): `stack`
 * reads every member, resolved afresh for each command; the commands that
 * do not run over a set yet say so.
 */
void runner_set_procset(struct runner *r, struct proc_set_spec *spec);
/* The runner's process set, or NULL when it looks at one process. */
const struct proc_set_spec *runner_procset(const struct runner *r);
bool runner_one_shot(const struct runner *r);
enum runner_agent_state runner_agent_state(const struct runner *r);

/*
 * Parse and run one command line, appending its output to `out`: the
 * handler of its entry in the command table (a front end's own command
 * goes to the handler that front end bound).  Returns an enum fp_status;
 * on failure *cause is the one-line message.
 */
int runner_exec(struct runner *r, const char *line, struct sbuf *out, char **cause);

/* The handlers of the command table (core/command_table.c); ctx is the runner. */
cmd_run_fn runner_cmd_stack, runner_cmd_getglobal, runner_cmd_vmtool, runner_cmd_module,
    runner_cmd_execute, runner_cmd_console, runner_cmd_mem_summary, runner_cmd_mem_diff,
    runner_cmd_mem_sites, runner_cmd_mem_rss, runner_cmd_torch_profile,
    runner_cmd_torch_memory, runner_cmd_torch_modules;
cmd_run_fn runner_cmd_reset;
/* A streaming command (watch, trace, monitor): its table entry's streamer, waited for. */
cmd_run_fn runner_cmd_stream;
struct runner_streamer;
extern const struct runner_streamer runner_watch_streamer, runner_monitor_streamer,
    runner_trace_streamer;
cmd_run_fn runner_cmd_tt;
/* tt -l (method: -m, search: -s; NULL for none) as a model, for the TUI's tt pane. */
struct tt_list;
int runner_tt_list(struct runner *r, const char *method, const char *search,
    struct tt_list *l, char **cause);

/*
 * A statement (`execute ...`) that runs while the front end goes on.  Its
 * front end sees typed calls, never the protocol: what it printed, then
 * exactly one of its end (rc as runner_exec returns it; `text` what the
 * user should see after the output -- the traceback, KeyboardInterrupt;
 * `cause` the message when rc is not FP_OK) or a failed connection.
 */
struct statement_handler {
	void (*output)(void *ctx, const char *text, size_t len);
	void (*end)(void *ctx, int rc, const char *text, size_t len, const char *cause);
	void (*error)(void *ctx, int status, const char *cause);
};

/* The caller's, alive until the end, the error or session_forget. */
struct runner_statement {
	const struct statement_handler *h;
	void *ctx;
};

/* Is `line` a statement (else a usage error runner_exec explains). */
bool runner_is_statement(const char *line);
/*
 * A cancelled statement that has not ended this long after its
 * KeyboardInterrupt is given up on (it may be blocked in a C call);
 * runner_not_stopped says so as the status and message.
 */
#define RUNNER_CANCEL_GRACE_MS 3000
int runner_not_stopped(const char *cmd, char **cause);
/*
 * Start `line` on the agent's session (loaded on need), reporting to st's
 * handler; *id is its request (cancel it with session_cancel on
 * runner_session, or drop it with session_forget).
 */
int runner_start(struct runner *r, const char *line, struct runner_statement *st,
    uint64_t *id, char **cause);
int runner_statement_end(const struct proto_msg *end, const char *cmd, struct sbuf *text,
    char **cause);

/*
 * watch, trace and monitor while the front end goes on (the TUI).  The
 * request runs on the agent's session (loaded on need); its events reach
 * runner_io.record (or .write) exactly as under runner_exec, from whatever
 * turns the session next (session_pump in the front end's loop, or another
 * request's wait).  Its end reaches h->end with what runner_exec would have
 * given: rc, the text it would have appended to `out` ("" for none) and
 * the message when rc is not FP_OK; a lost connection ends it the same
 * way.  The runner_bg is freed after h->end: forget it there.
 */
struct runner_bg;
struct runner_bg_handler {
	void (*end)(void *ctx, int rc, const char *text, const char *cause);
};
/* Is `line` a command that runs in the background here (not over a set)? */
bool runner_is_background(const struct runner *r, const char *line);
/* Usage errors and a failed start come back here (*cause), no callback. */
int runner_bg_start(struct runner *r, const char *line, const struct runner_bg_handler *h,
    void *ctx, struct runner_bg **bg, char **cause);
/* Ask the agent to stop it (it removes its hooks); its end follows. */
int runner_bg_cancel(struct runner_bg *bg, char **cause);
/* Stop waiting for it: nothing more is called, bg is freed (the session closing ends it). */
void runner_bg_forget(struct runner_bg *bg);
/*
 * Its stop was asked for RUNNER_CANCEL_GRACE_MS ago and has not come:
 * stop waiting, and end it now as failed (h->end, records as for a lost
 * connection); bg is freed.
 */
void runner_bg_give_up(struct runner_bg *bg);

#endif
