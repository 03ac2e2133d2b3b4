/*
 * model_watch — the events of a `watch` request as watch_record models
 * (see core/model.h).  Everything the agent sent is checked: a missing or
 * mistyped field becomes an empty or absent one, never a crash.
 */
#include "config.h"

#include "core/model.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static void
parse_values(json_t *arr, struct watch_record *w)
{
	json_t *v;
	size_t i;

	w->values = xcalloc(json_array_size(arr) + 1, sizeof *w->values);
	json_array_foreach(arr, i, v) {
		struct watch_value *wv = &w->values[w->nvalues++];

		wv->expr = model_text(v, "expr");
		wv->error = model_text_or_null(v, "error");
		if (wv->error == NULL) {
			wv->type_name = model_text(v, "type");
			wv->value = value_tree_parse(json_object_get(v, "value"));
		}
		wv->truncated = json_is_true(json_object_get(v, "truncated"));
	}
}

static void
parse_stack(json_t *arr, struct watch_record *w)
{
	json_t *f;
	size_t i;

	if (!json_is_array(arr))
		return;
	w->stack = xcalloc(json_array_size(arr) + 1, sizeof *w->stack);
	json_array_foreach(arr, i, f) {
		struct watch_frame *wf = &w->stack[w->nstack++];
		const char *file = json_string_value(json_array_get(f, 0));
		const char *func = json_string_value(json_array_get(f, 2));

		wf->file = xstrdup(file ? file : "?");
		wf->func = xstrdup(func ? func : "?");
		wf->line = json_is_integer(json_array_get(f, 1)) ?
		    json_integer_value(json_array_get(f, 1)) : 0;
	}
}

void
watch_record_parse(json_t *data, struct watch_record *w)
{
	json_t *cost = json_object_get(data, "cost_ms");

	memset(w, 0, sizeof *w);
	w->dropped = -1;
	if (json_is_true(json_object_get(data, "started"))) {
		w->started = true;
		w->matched = json_integer_value(json_object_get(data, "matched"));
		w->observed = model_strings(json_object_get(data, "observed"), &w->nobserved);
		return;
	}
	w->index = json_integer_value(json_object_get(data, "index"));
	w->method = model_text(data, "method");
	w->thread = model_text_or_null(data, "thread");
	w->time = json_number_value(json_object_get(data, "time"));
	w->has_cost = json_is_number(cost);
	w->cost_ms = json_number_value(cost);
	w->exception = model_text_or_null(data, "exception");
	if (json_is_integer(json_object_get(data, "dropped")))
		w->dropped = json_integer_value(json_object_get(data, "dropped"));
	parse_stack(json_object_get(data, "stack"), w);
	parse_values(json_object_get(data, "values"), w);
}

void
watch_record_clear(struct watch_record *w)
{
	size_t i;

	strv_free(w->observed, w->nobserved);
	free(w->method);
	free(w->thread);
	free(w->exception);
	for (i = 0; i < w->nstack; i++) {
		free(w->stack[i].file);
		free(w->stack[i].func);
	}
	free(w->stack);
	for (i = 0; i < w->nvalues; i++) {
		free(w->values[i].expr);
		free(w->values[i].type_name);
		free(w->values[i].error);
		value_tree_free(w->values[i].value);
	}
	free(w->values);
	memset(w, 0, sizeof *w);
}
