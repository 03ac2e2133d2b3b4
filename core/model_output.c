#include "config.h"

#include "core/model.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

bool
output_chunk_parse(json_t *data, struct output_chunk *c)
{
	json_t *out = json_object_get(data, "out");

	memset(c, 0, sizeof *c);
	if (!json_is_string(out))
		return false;
	c->len = json_string_length(out);
	c->text = xmalloc(c->len + 1);
	memcpy(c->text, json_string_value(out), c->len);
	c->text[c->len] = '\0';
	return true;
}

bool
output_chunk_from_msg(const struct proto_msg *ev, struct output_chunk *c)
{
	return output_chunk_parse(ev->type == PROTO_EVENT ? ev->data : NULL, c);
}

void
output_chunk_clear(struct output_chunk *c)
{
	free(c->text);
	memset(c, 0, sizeof *c);
}


void
statement_end_parse(json_t *data, struct statement_end *e)
{
	memset(e, 0, sizeof *e);
	e->incomplete = json_is_true(json_object_get(data, "incomplete"));
	e->exc = model_text_or_null(data, "exc");
	e->message = model_text_or_null(data, "message");
	e->traceback = model_text_or_null(data, "traceback");
}

void
statement_end_from_msg(const struct proto_msg *end, struct statement_end *e)
{
	statement_end_parse(end->type == PROTO_END ? end->data : NULL, e);
}

void
statement_end_clear(struct statement_end *e)
{
	free(e->exc);
	free(e->message);
	free(e->traceback);
	memset(e, 0, sizeof *e);
}

char *
statement_str_literal(const char *s)
{
	json_t *j = json_string(s);
	char *lit = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	json_decref(j);
	return lit;
}

int
statement_send(struct session *s, const char *cmd, const char *code, const char *filename,
    uint64_t *id, char **cause)
{
	json_t *args = json_pack("{s:s, s:s}", "code", code, "filename", filename);

	if (args == NULL)
		return fail(cause, FP_EUSAGE, "%s: the code is not valid UTF-8", cmd);
	return session_send(s, cmd, args, id, cause);
}
