#include "config.h"

#include "core/model.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"


static uint64_t
ident(json_t *o)
{
	return (uint64_t)json_integer_value(json_object_get(o, "ident"));
}

static void
parse_locals(struct frame_locals *l, json_t *frame)
{
	json_t *v, *more = json_object_get(frame, "locals_more");
	size_t i, alloc = 0;

	if ((l->note = model_text_or_null(frame, "locals_note")) != NULL)
		return;
	json_array_foreach(json_object_get(frame, "locals"), i, v) {
		const char *name = json_string_value(json_array_get(v, 0));
		const char *repr = json_string_value(json_array_get(v, 1));
		struct local_var *lv;

		if (name == NULL)
			continue;	/* nothing to call it */
		lv = ARRAY_PUSH(l->vars, l->nvars, alloc);
		lv->name = xstrdup(name);
		lv->repr = xstrdup(repr ? repr : "?");
	}
	l->more = json_is_integer(more) && json_integer_value(more) > 0 ?
	    json_integer_value(more) : 0;
}

static void
locals_clear(struct frame_locals *l)
{
	size_t i;

	for (i = 0; i < l->nvars; i++) {
		free(l->vars[i].name);
		free(l->vars[i].repr);
	}
	free(l->vars);
	free(l->note);
}

/* An array of frames, innermost first; with `locals` their locals too. */
static struct agent_frame *
parse_frames(json_t *array, bool locals, size_t *n)
{
	struct agent_frame *frames = NULL;
	size_t i, alloc = 0;
	json_t *f;

	*n = 0;
	json_array_foreach(array, i, f) {
		struct agent_frame *af = ARRAY_PUSH(frames, *n, alloc);
		json_int_t line = json_integer_value(json_object_get(f, "line"));

		memset(af, 0, sizeof *af);
		af->file = model_text(f, "file");
		af->func = model_text(f, "func");
		af->line = line > 0 && line < (1 << 30) ? (int)line : 0;
		if (locals)
			parse_locals(&af->locals, f);
	}
	return frames;
}

static void
frames_free(struct agent_frame *frames, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(frames[i].file);
		free(frames[i].func);
		locals_clear(&frames[i].locals);
	}
	free(frames);
}

static void
parse_names(struct agent_threads *m, json_t *names)
{
	size_t i, alloc = 0;
	json_t *t;

	m->has_names = json_is_array(names);
	json_array_foreach(names, i, t) {
		struct thread_name *tn;

		if (!json_is_string(json_object_get(t, "name")))
			continue;	/* a thread Python has no name for keeps its OS name */
		tn = ARRAY_PUSH(m->names, m->nnames, alloc);
		tn->ident = ident(t);
		tn->name = model_text(t, "name");
		tn->daemon = json_is_true(json_object_get(t, "daemon"));
		tn->native_id = json_integer_value(json_object_get(t, "native_id"));
	}
}

static void
parse_asyncio(struct agent_threads *m, json_t *aio)
{
	size_t i, j, alloc = 0, talloc;
	json_t *loop, *task;

	m->asyncio_note = model_text_or_null(aio, "note");
	json_array_foreach(json_object_get(aio, "loops"), i, loop) {
		struct async_loop *l = ARRAY_PUSH(m->loops, m->nloops, alloc);

		memset(l, 0, sizeof *l);
		l->ident = ident(loop);
		l->error = model_text_or_null(loop, "error");
		talloc = 0;
		json_array_foreach(json_object_get(loop, "tasks"), j, task) {
			struct async_task *t = ARRAY_PUSH(l->tasks, l->ntasks, talloc);

			t->name = model_text(task, "name");
			t->coro = model_text(task, "coro");
			t->state = model_text(task, "state");
			t->awaiting = model_text_or_null(task, "awaiting");
			t->current = json_is_true(json_object_get(task, "current"));
			t->frames = parse_frames(json_object_get(task, "frames"), false, &t->nframes);
		}
	}
}

struct agent_threads *
agent_threads_parse(json_t *data)
{
	struct agent_threads *m = xcalloc(1, sizeof *m);
	size_t i, alloc = 0;
	json_t *st;

	parse_names(m, json_object_get(data, "names"));
	json_array_foreach(json_object_get(data, "stacks"), i, st) {
		struct agent_stack *s = ARRAY_PUSH(m->stacks, m->nstacks, alloc);

		s->ident = ident(st);
		s->frames = parse_frames(json_object_get(st, "frames"), true, &s->nframes);
	}
	parse_asyncio(m, json_object_get(data, "asyncio"));
	return m;
}

struct agent_threads *
agent_threads_from_end(const struct proto_msg *end)
{
	return agent_threads_parse(end->type == PROTO_END && end->ok ? end->data : NULL);
}

void
agent_threads_free(struct agent_threads *m)
{
	size_t i, j;

	if (m == NULL)
		return;
	for (i = 0; i < m->nnames; i++)
		free(m->names[i].name);
	free(m->names);
	for (i = 0; i < m->nstacks; i++)
		frames_free(m->stacks[i].frames, m->stacks[i].nframes);
	free(m->stacks);
	for (i = 0; i < m->nloops; i++) {
		for (j = 0; j < m->loops[i].ntasks; j++) {
			struct async_task *t = &m->loops[i].tasks[j];

			free(t->name);
			free(t->coro);
			free(t->state);
			free(t->awaiting);
			frames_free(t->frames, t->nframes);
		}
		free(m->loops[i].tasks);
		free(m->loops[i].error);
	}
	free(m->loops);
	free(m->asyncio_note);
	free(m);
}

json_t *
agent_threads_args(bool locals, bool asyncio, long long limit)
{
	return json_pack("{s:b, s:b, s:I}", "locals", locals, "asyncio", asyncio, "limit",
	    (json_int_t)limit);
}

int
agent_threads_send(struct session *s, bool locals, bool asyncio, long long limit, uint64_t *id,
    char **cause)
{
	return session_send(s, "threads", agent_threads_args(locals, asyncio, limit), id, cause);
}

const struct agent_stack *
agent_threads_stack(const struct agent_threads *m, uint64_t id)
{
	size_t i;

	for (i = 0; m != NULL && i < m->nstacks; i++)
		if (m->stacks[i].ident == id)
			return &m->stacks[i];
	return NULL;
}

const struct agent_frame *
agent_threads_frame(const struct agent_threads *m, uint64_t id, size_t nframes, size_t index,
    const char *file, const char *func)
{
	const struct agent_stack *st = agent_threads_stack(m, id);
	const struct agent_frame *a;
	size_t depth;

	if (st == NULL || index >= nframes)
		return NULL;
	depth = nframes - 1 - index;
	if (depth >= st->nframes)
		return NULL;
	a = &st->frames[st->nframes - 1 - depth];
	if (strcmp(a->file, file) != 0 || strcmp(a->func, func) != 0)
		return NULL;
	return a;
}
