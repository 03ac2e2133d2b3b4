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
void session_close(struct session *s);

const struct session_info *session_info(const struct session *s);
bool session_has_cap(const struct session *s, const char *cap);
pid_t session_pid(const struct session *s);

/* Send request `cmd` with `args` (stolen; NULL for none); *id is its id. */
int session_send(struct session *s, const char *cmd, json_t *args, uint64_t *id, char **cause);

/*
 * The next message for request `id`: an event or its end, in *msg (free
 * with proto_msg_clear).  timeout_ms < 0 waits as long as the agent
 * answers pings and the target lives; when a timeout runs out, FP_OK with
 * msg->root == NULL (the caller may cancel).  Messages of other requests
 * are dropped.
 */
int session_next(struct session *s, uint64_t id, int timeout_ms, struct proto_msg *msg,
    char **cause);

/* Ask the agent to cancel request `id` (its end still follows). */
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
