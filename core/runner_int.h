/*
 * runner_int — what the runner's own files (core/runner*.c) share: the
 * calls to the agent, the message of a failed end and the output helpers.
 * Not for front ends, which use core/runner.h.
 */
#ifndef FP_RUNNER_INT_H
#define FP_RUNNER_INT_H

#include <jansson.h>
#include <sys/types.h>

#include "core/attach.h"
#include "core/command.h"
#include "core/protocol.h"
#include "core/runner.h"

struct py_reader;
struct session;

/* The session with the agent of the runner's process, connected (or loaded) on first need. */
int runner_agent(struct runner *r, enum attach_mode mode, struct session **s, char **cause);
/* A request failed in a way that may have broken the session: drop it. */
void runner_agent_failed(struct runner *r, int rc);
/* The reader of the runner's process, or NULL before the first; keep_reader: the runner owns it. */
struct py_reader *runner_reader(struct runner *r);
void runner_keep_reader(struct runner *r, struct py_reader *reader);
/* The process a command names (stack PID; the parser checked it), else the attached one. */
pid_t runner_named_pid(const struct cmd_request *req, pid_t attached);
/* text into path (-f): "cannot write PATH: why" if it cannot. */
int runner_write_file(const char *path, const char *text, char **cause);

/* Send cmd (steals args), wait for its end (no events); loads the agent if needed. */
int runner_call(struct runner *r, const char *cmd, json_t *args, int timeout_ms,
    struct proto_msg *end, char **cause);
/* Hand an agent's end (or one made for it) to the front end's runner_io.answer. */
void runner_answer(struct runner *r, const char *cmd, const struct proto_msg *end);
/* The status and "cmd: message" of a failed end. */
int runner_end_failure(const struct proto_msg *end, const char *cmd, char **cause);

/* Hand an event to the front end's runner_io.record; true: it took it. */
bool runner_take_record(struct runner *r, struct runner_record *rec);
/* Write text to the runner's output (a front end's, or standard output). */
void runner_write(struct runner *r, const char *text);
/* args[key] = value as a JSON string (usage error if it is not UTF-8); NULL adds nothing. */
int runner_add_str(json_t *args, const char *key, const char *value, const char *cmd,
    char **cause);
/* -x, -r, -v into the request arguments (the parser checked -x). */
void runner_value_options(const struct cmd_request *req, json_t *args);

/*
 * Send a request (args stolen) and hand each of its events to on_event as
 * it comes (NULL: events carry output, written as it comes); Ctrl-C, the
 * front end's poll or the timeout (seconds, 0: none) cancels it.  *endp is
 * its end, to be cleared by the caller.
 */
typedef void (*runner_event_fn)(struct runner *r, void *ctx, const struct proto_msg *msg);
int runner_stream(struct runner *r, const char *cmd, json_t *args, long timeout_s,
    runner_event_fn on_event, void *ctx, struct proto_msg *endp, char **cause);

/*
 * -E (--regex) of watch, trace, tt and monitor: list the module's observable
 * functions from the agent, match the patterns here (core/namematch.h) and
 * put the picks in args ("targets", "matched").  Nothing without -E.
 */
int runner_regex_targets(struct runner *r, const struct cmd_request *req, json_t *args,
    const char *cmd, char **cause);

/*
 * The end of a streaming `cmd` (runner_stream's rc and end) to a front end
 * that shows its records itself (runner_io.record, RUNNER_RECORD_END):
 * true when it took a clean end, which then needs no text.
 */
bool runner_stream_ended(struct runner *r, const char *cmd, int rc, const struct proto_msg *end,
    long long shown);


/*
 * A streaming command (watch, trace, monitor) in three parts, so that the same
 * code runs it waited for (runner_stream_run: --cmd, line mode) or in the
 * background (runner_bg_start: the front end's loop turns the session).
 * A command has one when its table entry names it (cmd_spec.streamer).
 * progress is a zeroed block of progress_size bytes, the ctx of event and
 * end; end gets runner_stream's rc and end (zeroed when rc is not FP_OK)
 * and says the last lines into out or the failure.
 */
struct runner_streamer {
	const char *cmd;
	size_t progress_size;
	int (*args)(struct runner *r, const struct cmd_request *req, json_t **args,
	    char **cause);
	runner_event_fn event;
	int (*end)(struct runner *r, void *progress, int rc, const struct proto_msg *end,
	    struct sbuf *out, char **cause);
};
/* Run it and wait for its end (Ctrl-C or the front end's poll cancels it). */
int runner_stream_run(struct runner *r, const struct runner_streamer *st,
    const struct cmd_request *req, struct sbuf *out, char **cause);
/* Hand a message of cmd to the front end's runner_io.event (events) or .answer (ends). */
void runner_seen(struct runner *r, const char *cmd, const struct proto_msg *msg);

#endif
