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

#define S(member) MODEL_FIELD(struct tt_store_info, member, MODEL_INT)

static const struct model_field store_fields[] = {
	S(records), S(bytes), S(max_records), S(max_bytes), S(evicted),
};

void
tt_store_parse(json_t *data, struct tt_store_info *s)
{
	model_fields_read(data, store_fields, MODEL_NFIELDS(store_fields), s);
}

#define R(member, kind) MODEL_FIELD(struct tt_row, member, kind)

static const struct model_field row_fields[] = {
	R(index, MODEL_INT), R(method, MODEL_TEXT), R(time, MODEL_NUM), R(cost_ms, MODEL_NUM),
	R(thread, MODEL_TEXT), R(exception, MODEL_TEXT_OR_NULL), R(replay_of, MODEL_INT),
	R(size, MODEL_INT),
};

static void
row_parse(json_t *o, struct tt_row *r)
{
	model_fields_read(o, row_fields, MODEL_NFIELDS(row_fields), r);
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
		e->evicted = model_int(ev, "count", 0);
		e->evicted_first = model_int(ev, "first", 0);
		e->evicted_last = model_int(ev, "last", 0);
	}
	e->dropped = model_int(data, "dropped", -1);
	e->mutated = json_is_true(json_object_get(data, "mutated"));
	e->replay = model_int(data, "replay", 0);
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
	l->matched = model_int(data, "matched", (long long)l->nrows);
	tt_store_parse(json_object_get(data, "store"), &l->store);
	l->searched = json_is_array(errs);
	l->errors = xcalloc(json_array_size(errs) + 1, sizeof *l->errors);
	l->error_index = xcalloc(json_array_size(errs) + 1, sizeof *l->error_index);
	json_array_foreach(errs, i, v) {
		l->error_index[l->nerrors] = model_int(v, "index", 0);
		l->errors[l->nerrors++] = model_text(v, "error");
	}
	l->error_count = model_int(data, "error_count", (long long)l->nerrors);
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
