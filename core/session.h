/*
 * session — flight_profiler's end of a connection to the agent in a target:
 * connect, versioned handshake, requests with ids, the events streamed for
 * each, cancel, and noticing a target that exits or an agent that stops
 * answering (the agent's socket loop runs without the GIL, so it answers
 * pings even while the interpreter is busy: silence means it is gone).
 *
 * Finding or loading the agent is core/attach's job; this module only
 * speaks the protocol (core/protocol.h, doc/protocol.md).
 */
#ifndef FP_SESSION_H
#define FP_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "core/protocol.h"
#include "core/util.h"

struct session_info {
	int proto;
	const char *agent;	/* agent version, "0.1.0" */
	const char *build;	/* "cp312 3.12.1 2025-01-01" */
	const char *python;	/* the target's interpreter, "3.12.1" */
	long pid;		/* the target's pid in its own namespace */
	json_t *caps;		/* array of command names */
};

struct session;

/* How long to wait for the agent's hello by default. */
#define SESSION_HANDSHAKE_MS 3000

/*
 * Shake hands with the agent on `fd`, a socket connected to it and proven
 * to be it (core/agentdir: nothing is sent before that proof); the session
 * owns fd from now on, and closes it on failure too.  `pid` is the target,
 * watched while waiting.  Returns an enum fp_status; *cause says why on
 * failure.
 */
int session_open(pid_t pid, int fd, int timeout_ms, struct session **s, char **cause);
/* Close: the open handled requests get error() first. */
void session_close(struct session *s);

const struct session_info *session_info(const struct session *s);
bool session_has_cap(const struct session *s, const char *cap);
pid_t session_pid(const struct session *s);

/*
 * Several requests may be in flight on one session; every message reaches
 * the request it belongs to.  A request is either driven by a handler
 * (session_start: its callbacks run from session_pump/session_wait) or
 * queued (session_send: its messages wait in a bounded queue for
 * session_next).  Nothing of one request is ever dropped for another's
 * sake; a queued request that nobody reads keeps at most
 * SESSION_QUEUE_MAX events (the oldest are dropped and counted).
 */
#define SESSION_QUEUE_MAX 4096

struct session_handler {
	/* An event's data (borrowed; may be NULL). */
	void (*event)(void *ctx, uint64_t id, json_t *data);
	/* The request's end (borrowed): check end->ok.  The request is over. */
	void (*end)(void *ctx, uint64_t id, const struct proto_msg *end);
	/* The connection failed (status, why): the request is over. */
	void (*error)(void *ctx, uint64_t id, int status, const char *cause);
};

/*
 * Send request `cmd` with `args` (stolen; NULL for none) whose messages go
 * to handler h (copied by pointer: it must outlive the request) with ctx;
 * *id is its id.  Callbacks may start, cancel or forget requests, never
 * close the session.
 */
int session_start(struct session *s, const char *cmd, json_t *args,
    const struct session_handler *h, void *ctx, uint64_t *id, char **cause);

/* Send request `cmd` with `args` (stolen; NULL for none), queued for session_next; *id is its id. */
int session_send(struct session *s, const char *cmd, json_t *args, uint64_t *id, char **cause);

/*
 * The socket, for a caller's poll(): readable means session_pump has
 * work; -1 once the connection is over (the next call says why).
 */
int session_fd(const struct session *s);

/*
 * Read what has arrived without blocking (a bounded amount, so a flood
 * cannot starve the caller's other inputs) and dispatch every complete
 * message; notices an agent gone silent (pings it) or a target that
 * exited.  On a failed connection every open request ends (handlers get
 * error(), queued requests return it from session_next) and the status is
 * returned with *cause.
 */
int session_pump(struct session *s, char **cause);
/* session_pump after waiting up to timeout_ms for the socket (0: do not wait). */
int session_wait(struct session *s, int timeout_ms, char **cause);

/* Requests started or sent and not over yet. */
size_t session_pending(const struct session *s);
/* Events of queued request id dropped because nobody read them. */
uint64_t session_dropped(const struct session *s, uint64_t id);

/*
 * The next message for queued request `id`: an event or its end, in *msg
 * (free with proto_msg_clear); after the end the request is over.
 * timeout_ms < 0 waits as long as the agent answers pings and the target
 * lives; when a timeout runs out, FP_OK with msg->root == NULL (the caller
 * may cancel).  Messages of other requests reach their own queues or
 * handlers meanwhile.
 */
int session_next(struct session *s, uint64_t id, int timeout_ms, struct proto_msg *msg,
    char **cause);

/*
 * Stop caring about request `id`: its queued messages are freed, later
 * ones dropped, and nothing more is called for it.  Does not cancel it.
 */
void session_forget(struct session *s, uint64_t id);

/* Ask the agent to cancel request `id` (its end still follows); other requests go on. */
int session_cancel(struct session *s, uint64_t id, char **cause);

/*
 * Was request `id` running in an agent worker (holding the GIL) at the last
 * pong?  1: yes, slow Python code; 0: no, still waiting for the GIL; -1: no
 * pong said since the last request was sent (it was young, or the agent is
 * older).  The client pings after 2 s of silence, so a request that waited
 * longer has an answer.
 */
int session_running(const struct session *s, uint64_t id);

/*
 * Send a request and wait for its end, passing each event's data to
 * on_event (may be NULL).  On a timeout the request is cancelled.  *end
 * holds the end message on FP_OK (check end->ok); free with proto_msg_clear.
 */
typedef void (*session_event_fn)(json_t *data, void *ctx);
int session_call(struct session *s, const char *cmd, json_t *args, int timeout_ms,
    session_event_fn on_event, void *ctx, struct proto_msg *end, char **cause);

#endif
