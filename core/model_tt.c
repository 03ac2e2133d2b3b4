/*
 * model_tt — the events and answers of a `tt` request as tt_event and
 * tt_list models (see core/model.h).  A missing or mistyped field becomes
 * an empty one, never a crash.
 */
#include "config.h"

#include "core/model.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static long long
int_of(json_t *o, const char *key, long long dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

void
tt_store_parse(json_t *data, struct tt_store_info *s)
{
	s->records = int_of(data, "records", 0);
	s->bytes = int_of(data, "bytes", 0);
	s->max_records = int_of(data, "max_records", 0);
	s->max_bytes = int_of(data, "max_bytes", 0);
	s->evicted = int_of(data, "evicted", 0);
}

static void
row_parse(json_t *o, struct tt_row *r)
{
	r->index = int_of(o, "index", 0);
	r->method = model_text(o, "method");
	r->time = json_number_value(json_object_get(o, "time"));
	r->cost_ms = json_number_value(json_object_get(o, "cost_ms"));
	r->thread = model_text(o, "thread");
	r->exception = model_text_or_null(o, "exception");
	r->replay_of = int_of(o, "replay_of", 0);
	r->size = int_of(o, "size", 0);
}

static void
row_clear(struct tt_row *r)
{
	free(r->method);
	free(r->thread);
	free(r->exception);
	memset(r, 0, sizeof *r);
}

void
tt_event_parse(json_t *data, struct tt_event *e)
{
	json_t *ev = json_object_get(data, "evicted"), *store = json_object_get(data, "store");

	memset(e, 0, sizeof *e);
	watch_record_parse(data, &e->call);
	e->started = e->call.started;
	e->filter_error = model_text_or_null(data, "filter_error");
	e->has_row = !e->started && e->filter_error == NULL;
	if (e->has_row)
		row_parse(data, &e->row);
	if ((e->has_store = json_is_object(store)))
		tt_store_parse(store, &e->store);
	if (json_is_object(ev)) {
		e->evicted = int_of(ev, "count", 0);
		e->evicted_first = int_of(ev, "first", 0);
		e->evicted_last = int_of(ev, "last", 0);
	}
	e->dropped = int_of(data, "dropped", -1);
	e->mutated = json_is_true(json_object_get(data, "mutated"));
	e->replay = int_of(data, "replay", 0);
}

void
tt_event_clear(struct tt_event *e)
{
	watch_record_clear(&e->call);
	row_clear(&e->row);
	free(e->filter_error);
	memset(e, 0, sizeof *e);
}

void
tt_list_parse(json_t *data, struct tt_list *l)
{
	json_t *rows = json_object_get(data, "rows"), *errs = json_object_get(data, "errors"), *v;
	size_t i;

	memset(l, 0, sizeof *l);
	l->rows = xcalloc(json_array_size(rows) + 1, sizeof *l->rows);
	json_array_foreach(rows, i, v)
		row_parse(v, &l->rows[l->nrows++]);
	l->matched = int_of(data, "matched", (long long)l->nrows);
	tt_store_parse(json_object_get(data, "store"), &l->store);
	l->searched = json_is_array(errs);
	l->errors = xcalloc(json_array_size(errs) + 1, sizeof *l->errors);
	l->error_index = xcalloc(json_array_size(errs) + 1, sizeof *l->error_index);
	json_array_foreach(errs, i, v) {
		l->error_index[l->nerrors] = int_of(v, "index", 0);
		l->errors[l->nerrors++] = model_text(v, "error");
	}
	l->error_count = int_of(data, "error_count", (long long)l->nerrors);
}

void
tt_list_clear(struct tt_list *l)
{
	size_t i;

	for (i = 0; i < l->nrows; i++)
		row_clear(&l->rows[i]);
	free(l->rows);
	for (i = 0; i < l->nerrors; i++)
		free(l->errors[i]);
	free(l->errors);
	free(l->error_index);
	memset(l, 0, sizeof *l);
}
