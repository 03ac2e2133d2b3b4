/*
 * jsonrec — the records of --json (see jsonrec.h).
 */
#include "config.h"

#include "core/jsonrec.h"

#include <stdlib.h>
#include <string.h>

#include "core/perfset.h"
#include "core/render.h"

json_t *
jsonrec_new(const char *type)
{
	return json_pack("{s:s,s:s}", "type", type, "version", PACKAGE_VERSION);
}

void
jsonrec_emit(struct sbuf *out, json_t *rec)
{
	char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);

	if (s != NULL) {
		sbuf_add(out, s);
		sbuf_add(out, "\n");
		free(s);
	}
	json_decref(rec);
}

json_t *
jsonrec_string(const char *s)
{
	struct sbuf b = { 0 };
	json_t *j;
	size_t i;

	if (s == NULL)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	/* Not UTF-8 (a file name in latin-1, say): keep ASCII, show the rest. */
	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] < 0x80)
			sbuf_addn(&b, &s[i], 1);
		else
			sbuf_addf(&b, "\\x%02x", (unsigned char)s[i]);
	j = json_string(b.s != NULL ? b.s : "");
	sbuf_free(&b);
	return j;
}

json_t *
jsonrec_frame(const struct py_frame *f, struct source_cache *sc, const char *code)
{
	const char *src = sc != NULL && f->line > 0 ? source_line(sc, f->filename, f->line) : code;

	while (src != NULL && (*src == ' ' || *src == '\t'))
		src++;
	return json_pack("{s:o,s:i,s:o,s:o}", "file", jsonrec_string(f->filename), "line", f->line,
	    "function", jsonrec_string(render_frame_function(f)),
	    "code", src != NULL && *src != '\0' ? jsonrec_string(src) : json_null());
}

static json_t *
thread_json(const struct py_thread *t, struct source_cache *sc)
{
	json_t *frames = json_array();
	size_t i;

	for (i = 0; i < t->nframes; i++)
		json_array_append_new(frames, jsonrec_frame(&t->frames[i], sc, NULL));
	return json_pack("{s:i,s:o,s:b,s:s,s:b,s:o,s:o}", "tid", (int)t->tid,
	    "name", jsonrec_string(t->name), "main", t->is_main,
	    "status", render_thread_status(t), "partial", t->partial,
	    "error", jsonrec_string(t->error), "frames", frames);
}

json_t *
jsonrec_stack(pid_t pid, const char *cmdline, const struct py_snapshot *snap,
    struct source_cache *sc)
{
	json_t *rec = jsonrec_new("stack"), *threads = json_array();
	long rank;
	bool local;
	size_t i;

	json_object_set_new(rec, "pid", json_integer(pid));
	json_object_set_new(rec, "cmdline", jsonrec_string(cmdline));
	if (perfset_rank(pid, &rank, &local))
		json_object_set_new(rec, local ? "local_rank" : "rank", json_integer(rank));
	json_object_set_new(rec, "python", json_string(snap->version));
	json_object_set_new(rec, "blocked", json_boolean(snap->blocked));
	for (i = 0; i < snap->nthreads; i++)
		json_array_append_new(threads, thread_json(&snap->threads[i], sc));
	json_object_set_new(rec, "threads", threads);
	return rec;
}

json_t *
jsonrec_skipped(pid_t pid, const char *cmdline, const char *reason)
{
	json_t *rec = jsonrec_new("skipped");

	json_object_set_new(rec, "pid", json_integer(pid));
	json_object_set_new(rec, "cmdline", jsonrec_string(cmdline));
	json_object_set_new(rec, "reason", jsonrec_string(reason));
	return rec;
}

/* A string member, copied; NULL when missing or null. */
static char *
dup_member(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s != NULL ? xstrdup(s) : NULL;
}

static int
parse_thread(const json_t *jt, struct py_thread *t, char ***codep, char **cause)
{
	const json_t *frames = json_object_get(jt, "frames"), *jf;
	size_t i;

	if (!json_is_object(jt) || !json_is_array(frames))
		return fail(cause, FP_ERR, "a thread without frames");
	t->tid = (pid_t)json_integer_value(json_object_get(jt, "tid"));
	t->name = dup_member(jt, "name");
	t->is_main = json_is_true(json_object_get(jt, "main"));
	t->partial = json_is_true(json_object_get(jt, "partial"));
	t->error = dup_member(jt, "error");
	t->nframes = json_array_size(frames);
	t->frames = xcalloc(t->nframes ? t->nframes : 1, sizeof *t->frames);
	*codep = xcalloc(t->nframes ? t->nframes : 1, sizeof **codep);
	json_array_foreach(frames, i, jf) {
		if (!json_is_string(json_object_get(jf, "file")) ||
		    !json_is_string(json_object_get(jf, "function")))
			return fail(cause, FP_ERR, "a frame without file or function");
		t->frames[i].filename = dup_member(jf, "file");
		t->frames[i].name = dup_member(jf, "function");
		t->frames[i].line = (int)json_integer_value(json_object_get(jf, "line"));
		(*codep)[i] = dup_member(jf, "code");
	}
	return FP_OK;
}

int
jsonrec_parse_stack(const json_t *rec, struct jsonrec_process *p, char **cause)
{
	const json_t *threads = json_object_get(rec, "threads"), *jt;
	size_t i;
	int rc;

	memset(p, 0, sizeof *p);
	if (!json_is_integer(json_object_get(rec, "pid")) || !json_is_array(threads))
		return fail(cause, FP_ERR, "a stack record without pid or threads");
	p->pid = (pid_t)json_integer_value(json_object_get(rec, "pid"));
	p->cmdline = dup_member(rec, "cmdline");
	p->rank = json_is_integer(json_object_get(rec, "rank")) ?
	    (long)json_integer_value(json_object_get(rec, "rank")) : -1;
	p->threads = xcalloc(json_array_size(threads) + 1, sizeof *p->threads);
	p->code = xcalloc(json_array_size(threads) + 1, sizeof *p->code);
	json_array_foreach(threads, i, jt) {
		p->nthreads = i + 1;
		if ((rc = parse_thread(jt, &p->threads[i], &p->code[i], cause)) != FP_OK)
			return rc;
	}
	return FP_OK;
}

void
jsonrec_process_clear(struct jsonrec_process *p)
{
	size_t i, k;

	for (i = 0; i < p->nthreads; i++) {
		struct py_thread *t = &p->threads[i];

		for (k = 0; k < t->nframes; k++) {
			free(t->frames[k].filename);
			free(t->frames[k].name);
			if (p->code[i] != NULL)
				free(p->code[i][k]);
		}
		free(t->frames);
		free(p->code[i]);
		free(t->name);
		free(t->error);
	}
	free(p->threads);
	free(p->code);
	free(p->cmdline);
	memset(p, 0, sizeof *p);
}
