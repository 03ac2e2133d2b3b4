/*
 * jsonstream — the records of streaming commands (see jsonstream.h).
 *
 * The records carry the agent's data as it came (doc/protocol.md), the
 * same the text renderers and the TUI are fed from, with type, version,
 * command and pid around it: a script reads the protocol's fields, not a
 * second model of them.
 */
#include "config.h"

#include "core/jsonstream.h"

#include <stdlib.h>
#include <string.h>

#include "core/jsonrec.h"
#include "core/procfs.h"

struct stream {
	struct runner *r;
	const char *name;
	FILE *live;
	struct sbuf *out;
	long long events;	/* event records written */
	bool ended, end_ok;	/* the agent's end came; it was ok */
	char *end_kind;		/* when not ok: "cancelled", "failed", ... */
	json_t *end_data;	/* its data, or NULL */
};

/* A record of `type` with the command and the process, fields to follow. */
static json_t *
stream_rec(const struct stream *st, const char *type)
{
	json_t *rec = jsonrec_new(type);

	json_object_set_new(rec, "command", json_string(st->name));
	json_object_set_new(rec, "pid", json_integer(runner_pid(st->r)));
	return rec;
}

static void
stream_write(struct stream *st, json_t *rec)
{
	struct sbuf line = { 0 };

	if (st->live == NULL) {
		jsonrec_emit(st->out, rec);
		return;
	}
	jsonrec_emit(&line, rec);
	fwrite(line.s != NULL ? line.s : "", 1, line.len, st->live);
	fflush(st->live);
	sbuf_free(&line);
}

static void
stream_event(void *ctx, const char *cmd, const struct proto_msg *msg)
{
	struct stream *st = ctx;
	json_t *rec;

	(void)cmd;
	if (msg->type != PROTO_EVENT || !json_is_object(msg->data))
		return;
	rec = stream_rec(st, "event");
	json_object_set_new(rec, "data", json_incref(msg->data));
	st->events++;
	stream_write(st, rec);
}

static void
stream_end(void *ctx, const char *cmd, const struct proto_msg *end)
{
	struct stream *st = ctx;

	(void)cmd;
	st->ended = true;
	st->end_ok = end->ok;
	free(st->end_kind);
	st->end_kind = end->kind != NULL ? xstrdup(end->kind) : NULL;
	json_decref(st->end_data);
	st->end_data = json_incref(end->data);
}

static char *
no_input(void *ctx, const char *prompt, bool *interrupted)
{
	(void)ctx, (void)prompt, (void)interrupted;
	return NULL;
}

static void
discard(void *ctx, const char *text, size_t len)
{
	(void)ctx, (void)text, (void)len;
}

const struct runner_io jsonstream_quiet = { .read_line = no_input, .write = discard };

/* How the command ended, in one word (doc/json.md's "end"). */
static const char *
end_how(const struct stream *st, int rc)
{
	if (st->ended && st->end_ok && rc == FP_OK)
		return json_is_true(json_object_get(st->end_data, "reset")) ? "reset" : "done";
	if (st->ended && st->end_kind != NULL && strcmp(st->end_kind, "cancelled") == 0 &&
	    rc == FP_OK)
		return "cancelled";
	if (!procfs_exists(runner_pid(st->r)))
		return "exited";
	return "error";
}

int
jsonstream_exec(struct runner *r, const char *name, const char *line, FILE *live,
    struct sbuf *out, bool *keep, char **cause)
{
	struct stream st = { .r = r, .name = name, .live = live, .out = out };
	struct runner_io io = jsonstream_quiet;
	struct sbuf text = { 0 };
	json_t *rec;
	int rc;

	io.event = stream_event;
	io.answer = stream_end;
	io.ctx = &st;
	runner_set_io(r, &io);
	rc = runner_exec(r, line, &text, cause);
	runner_set_io(r, &jsonstream_quiet);
	sbuf_free(&text);
	/* Refused before any event (a usage error, a bad name, no agent): its
	 * one line only, as without --json. */
	if (rc != FP_OK && st.events == 0) {
		free(st.end_kind);
		json_decref(st.end_data);
		return rc;
	}
	rec = stream_rec(&st, "end");
	json_object_set_new(rec, "how", json_string(end_how(&st, rc)));
	json_object_set_new(rec, "events", json_integer(st.events));
	json_object_set_new(rec, "error", rc != FP_OK ?
	    jsonrec_string(*cause ? *cause : "unknown error") : json_null());
	json_object_set_new(rec, "data", st.end_data != NULL ? st.end_data : json_null());
	stream_write(&st, rec);
	free(st.end_kind);
	*keep = true;
	return rc;
}
