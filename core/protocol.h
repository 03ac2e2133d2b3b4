/*
 * protocol — the wire format between flight_profiler and its agent:
 * length-prefixed frames, each holding one JSON object (jansson), with
 * request ids, streamed events, an end message per request, cancel, ping,
 * and a versioned handshake.  doc/protocol.md is the reference.
 *
 * The agent compiles this file into itself, so it must stay free of
 * anything that can exit or abort: libc and jansson only, no xmalloc, no
 * core/util.  Every function reports failure by its return value and an
 * error text written into a caller's buffer.
 *
 * The decoder must survive any byte sequence (it is fuzzed by
 * tests/fuzz/protocol_fuzz.c): a bad frame is a protocol error that ends
 * the connection, never a crash, a hang or unbounded memory.
 */
#ifndef FP_PROTOCOL_H
#define FP_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Bumped on any incompatible change; the handshake refuses a mismatch. */
#define PROTO_VERSION 1

/* A frame is a 4-byte big-endian payload length, then the payload. */
#define PROTO_HEADER_SIZE 4
/* Requests are small; the largest is `execute` of a script file. */
#define PROTO_MAX_TO_AGENT ((size_t)1 << 20)
/* Replies: formatted objects are bounded well below this in the agent. */
#define PROTO_MAX_TO_CLIENT ((size_t)16 << 20)
/* Request ids are positive and fit a JSON number exactly (2^53). */
#define PROTO_MAX_ID ((uint64_t)1 << 53)

enum proto_type {
	PROTO_HELLO,		/* both ways, once, first */
	PROTO_REQUEST,		/* client: "req"    id, cmd, args */
	PROTO_EVENT,		/* agent:  "ev"     id, data (zero or more per request) */
	PROTO_END,		/* agent:  "end"    id, ok, data | error + kind */
	PROTO_CANCEL,		/* client: "cancel" id */
	PROTO_PING,		/* client: "ping"   id */
	PROTO_PONG,		/* agent:  "pong"   id */
	PROTO_ERROR,		/* agent:  "error"  connection-level, then it closes */
};

/* One decoded message.  Every pointer is borrowed from `root`. */
struct proto_msg {
	enum proto_type type;
	uint64_t id;		/* 0 for hello and error */
	const char *cmd;	/* request: command name */
	json_t *args;		/* request: arguments object (never NULL for a request) */
	json_t *data;		/* event, end: payload object or NULL */
	bool ok;		/* end */
	const char *error;	/* end when !ok, error: the message */
	const char *kind;	/* end when !ok: "usage", "notfound", "raised", ... */
	json_t *root;		/* the whole object; owned: proto_msg_clear() */
};

struct proto_decoder {
	unsigned char *buf;
	size_t off;		/* buf[off..len) is undecoded: decoding never moves the rest */
	size_t len, alloc;
	size_t max_frame;	/* payload limit for this direction */
	bool failed;		/* a protocol error was returned: stop feeding */
};

void proto_decoder_init(struct proto_decoder *d, size_t max_frame);
void proto_decoder_free(struct proto_decoder *d);

/* Append received bytes.  -1 when out of memory or already failed. */
int proto_decoder_feed(struct proto_decoder *d, const void *data, size_t n);

/*
 * Take the next complete message: 1 with *msg filled, 0 when more bytes
 * are needed, -1 on a protocol error (err says what; the connection must
 * be closed).  An oversized frame is refused from its header alone.
 */
int proto_decoder_next(struct proto_decoder *d, struct proto_msg *msg,
    char *err, size_t errlen);

/* Bytes buffered but not yet decoded (a truncated frame at EOF). */
size_t proto_decoder_pending(const struct proto_decoder *d);

/* Validate a parsed JSON object as a message (takes a reference on success). */
int proto_msg_from_json(json_t *root, struct proto_msg *msg, char *err, size_t errlen);
void proto_msg_clear(struct proto_msg *msg);

const char *proto_type_name(enum proto_type type);

/*
 * Serialize `obj` as one frame into a malloc'd buffer (header included).
 * -1 when it cannot be encoded or the payload exceeds max_frame.
 */
int proto_encode(const json_t *obj, size_t max_frame, unsigned char **frame,
    size_t *len, char *err, size_t errlen);

/* Builders for the common messages (new references; NULL when out of memory). */
json_t *proto_new_request(uint64_t id, const char *cmd, json_t *args_stolen);
json_t *proto_new_event(uint64_t id, json_t *data_stolen);
json_t *proto_new_end_ok(uint64_t id, json_t *data_stolen);
json_t *proto_new_end_error(uint64_t id, const char *kind, const char *error);
json_t *proto_new_simple(enum proto_type type, uint64_t id);

#endif
