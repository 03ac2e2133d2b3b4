#include "config.h"

#include "core/protocol.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	enum proto_type type;
	const char *name;
} type_names[] = {
	{ PROTO_HELLO, "hello" },
	{ PROTO_REQUEST, "req" },
	{ PROTO_EVENT, "ev" },
	{ PROTO_END, "end" },
	{ PROTO_CANCEL, "cancel" },
	{ PROTO_PING, "ping" },
	{ PROTO_PONG, "pong" },
	{ PROTO_ERROR, "error" },
};

static int
errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

const char *
proto_type_name(enum proto_type type)
{
	size_t i;

	for (i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
		if (type_names[i].type == type)
			return type_names[i].name;
	return "?";
}

void
proto_decoder_init(struct proto_decoder *d, size_t max_frame)
{
	memset(d, 0, sizeof *d);
	d->max_frame = max_frame;
}

void
proto_decoder_free(struct proto_decoder *d)
{
	free(d->buf);
	memset(d, 0, sizeof *d);
}

size_t
proto_decoder_pending(const struct proto_decoder *d)
{
	return d->len - d->off;
}

int
proto_decoder_feed(struct proto_decoder *d, const void *data, size_t n)
{
	size_t need, alloc;
	unsigned char *p;

	if (d->failed)
		return -1;
	if (n == 0)
		return 0;
	/* Drop what was decoded, once per feed (not once per message: a read
	 * of many small frames would move the rest again for each). */
	if (d->off > 0) {
		memmove(d->buf, d->buf + d->off, d->len - d->off);
		d->len -= d->off;
		d->off = 0;
	}
	need = d->len + n;
	/*
	 * Never hold more than one maximal frame plus a read's worth: the
	 * caller decodes between feeds, so a larger backlog means a frame
	 * that the header check will refuse anyway.
	 */
	if (need > d->max_frame + PROTO_HEADER_SIZE + 65536) {
		d->failed = true;
		return -1;
	}
	if (need > d->alloc) {
		alloc = d->alloc ? d->alloc : 4096;
		while (alloc < need)
			alloc *= 2;
		p = realloc(d->buf, alloc);
		if (p == NULL) {
			d->failed = true;
			return -1;
		}
		d->buf = p;
		d->alloc = alloc;
	}
	memcpy(d->buf + d->len, data, n);
	d->len += n;
	return 0;
}

static const char *
get_string(json_t *root, const char *key)
{
	json_t *v = json_object_get(root, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int
proto_msg_from_json(json_t *root, struct proto_msg *msg, char *err, size_t errlen)
{
	const char *t;
	json_t *id, *v;
	json_int_t idv;
	size_t i;
	bool known = false;

	memset(msg, 0, sizeof *msg);
	if (!json_is_object(root))
		return errf(err, errlen, "a message must be a JSON object");
	t = get_string(root, "t");
	if (t == NULL)
		return errf(err, errlen, "message without a type (\"t\")");
	for (i = 0; i < sizeof type_names / sizeof type_names[0]; i++) {
		if (strcmp(t, type_names[i].name) == 0) {
			msg->type = type_names[i].type;
			known = true;
			break;
		}
	}
	if (!known)
		return errf(err, errlen, "unknown message type");

	id = json_object_get(root, "id");
	if (msg->type == PROTO_HELLO || msg->type == PROTO_ERROR) {
		msg->id = 0;
	} else {
		if (!json_is_integer(id))
			return errf(err, errlen, "%s message without an integer id", t);
		idv = json_integer_value(id);
		if (idv <= 0 || (uint64_t)idv >= PROTO_MAX_ID)
			return errf(err, errlen, "%s message with id out of range", t);
		msg->id = (uint64_t)idv;
	}

	switch (msg->type) {
	case PROTO_HELLO:
		v = json_object_get(root, "proto");
		if (!json_is_integer(v))
			return errf(err, errlen, "hello without a protocol version");
		break;
	case PROTO_REQUEST:
		msg->cmd = get_string(root, "cmd");
		if (msg->cmd == NULL || msg->cmd[0] == '\0')
			return errf(err, errlen, "request without a command");
		msg->args = json_object_get(root, "args");
		if (msg->args == NULL) {
			/* Absent args: an empty object, owned by root. */
			v = json_object();
			if (v == NULL || json_object_set_new(root, "args", v) != 0)
				return errf(err, errlen, "out of memory");
			msg->args = v;
		} else if (!json_is_object(msg->args)) {
			return errf(err, errlen, "request arguments must be an object");
		}
		break;
	case PROTO_EVENT:
		msg->data = json_object_get(root, "data");
		if (msg->data != NULL && !json_is_object(msg->data))
			return errf(err, errlen, "event data must be an object");
		break;
	case PROTO_END:
		v = json_object_get(root, "ok");
		if (!json_is_boolean(v))
			return errf(err, errlen, "end without ok");
		msg->ok = json_is_true(v);
		msg->data = json_object_get(root, "data");
		if (msg->data != NULL && !json_is_object(msg->data))
			return errf(err, errlen, "end data must be an object");
		if (!msg->ok) {
			msg->error = get_string(root, "error");
			msg->kind = get_string(root, "kind");
			if (msg->error == NULL)
				return errf(err, errlen, "failed end without an error message");
			if (msg->kind == NULL)
				msg->kind = "error";
		}
		break;
	case PROTO_ERROR:
		msg->error = get_string(root, "error");
		if (msg->error == NULL)
			return errf(err, errlen, "error message without text");
		break;
	case PROTO_CANCEL:
	case PROTO_PING:
	case PROTO_PONG:
		break;
	}
	json_incref(root);
	msg->root = root;
	return 0;
}

void
proto_msg_clear(struct proto_msg *msg)
{
	json_decref(msg->root);
	memset(msg, 0, sizeof *msg);
}

int
proto_decoder_next(struct proto_decoder *d, struct proto_msg *msg, char *err, size_t errlen)
{
	const unsigned char *head;
	json_error_t jerr;
	json_t *root;
	uint32_t size;
	int rc;

	memset(msg, 0, sizeof *msg);
	if (d->failed)
		return errf(err, errlen, "the stream already failed");
	if (d->len - d->off < PROTO_HEADER_SIZE)
		return 0;
	head = d->buf + d->off;
	size = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 |
	    (uint32_t)head[2] << 8 | (uint32_t)head[3];
	if (size == 0) {
		d->failed = true;
		return errf(err, errlen, "empty frame");
	}
	if (size > d->max_frame) {
		d->failed = true;
		return errf(err, errlen, "frame of %lu bytes exceeds the limit of %lu",
		    (unsigned long)size, (unsigned long)d->max_frame);
	}
	if (d->len - d->off - PROTO_HEADER_SIZE < size)
		return 0;
	root = json_loadb((const char *)head + PROTO_HEADER_SIZE, size,
	    JSON_REJECT_DUPLICATES, &jerr);
	d->off += PROTO_HEADER_SIZE + size;
	if (d->off == d->len)
		d->off = d->len = 0;
	if (root == NULL) {
		d->failed = true;
		return errf(err, errlen, "frame is not valid JSON: %s at byte %d",
		    jerr.text, jerr.position);
	}
	rc = proto_msg_from_json(root, msg, err, errlen);
	json_decref(root);
	if (rc != 0) {
		d->failed = true;
		return -1;
	}
	return 1;
}

int
proto_encode(const json_t *obj, size_t max_frame, unsigned char **framep, size_t *lenp,
    char *err, size_t errlen)
{
	unsigned char *frame;
	size_t size;

	*framep = NULL;
	*lenp = 0;
	size = json_dumpb(obj, NULL, 0, JSON_COMPACT);
	if (size == 0)
		return errf(err, errlen, "message cannot be encoded");
	if (size > max_frame)
		return errf(err, errlen, "message of %zu bytes exceeds the limit of %zu", size, max_frame);
	frame = malloc(PROTO_HEADER_SIZE + size);
	if (frame == NULL)
		return errf(err, errlen, "out of memory");
	if (json_dumpb(obj, (char *)frame + PROTO_HEADER_SIZE, size, JSON_COMPACT) != size) {
		free(frame);
		return errf(err, errlen, "message changed while encoded");
	}
	frame[0] = (unsigned char)(size >> 24);
	frame[1] = (unsigned char)(size >> 16);
	frame[2] = (unsigned char)(size >> 8);
	frame[3] = (unsigned char)size;
	*framep = frame;
	*lenp = PROTO_HEADER_SIZE + size;
	return 0;
}

static json_t *
with_type(enum proto_type type, uint64_t id)
{
	json_t *o = json_object();

	if (o == NULL)
		return NULL;
	if (json_object_set_new(o, "t", json_string(proto_type_name(type))) != 0 ||
	    (id != 0 && json_object_set_new(o, "id", json_integer((json_int_t)id)) != 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
proto_new_simple(enum proto_type type, uint64_t id)
{
	return with_type(type, id);
}

static json_t *
with_payload(enum proto_type type, uint64_t id, const char *key, json_t *stolen)
{
	json_t *o = with_type(type, id);

	if (o == NULL) {
		json_decref(stolen);
		return NULL;
	}
	if (stolen != NULL && json_object_set_new(o, key, stolen) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
proto_new_request(uint64_t id, const char *cmd, json_t *args)
{
	json_t *o = with_payload(PROTO_REQUEST, id, "args", args ? args : json_object());

	if (o != NULL && json_object_set_new(o, "cmd", json_string(cmd)) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
proto_new_event(uint64_t id, json_t *data)
{
	return with_payload(PROTO_EVENT, id, "data", data);
}

json_t *
proto_new_end_ok(uint64_t id, json_t *data)
{
	json_t *o = with_payload(PROTO_END, id, "data", data);

	if (o != NULL && json_object_set_new(o, "ok", json_true()) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
proto_new_end_error(uint64_t id, const char *kind, const char *error)
{
	json_t *o = with_type(PROTO_END, id), *text;

	if (o == NULL)
		return NULL;
	/* json_string() refuses invalid UTF-8: fall back to a fixed text. */
	text = json_string(error ? error : "failed");
	if (text == NULL)
		text = json_string("(error text was not valid UTF-8)");
	if (json_object_set_new(o, "ok", json_false()) != 0 ||
	    json_object_set_new(o, "kind", json_string(kind ? kind : "error")) != 0 ||
	    json_object_set_new(o, "error", text) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}
