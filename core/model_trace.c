/*
 * model_trace — trace events as trace_record models (see model_trace.h).
 */
#include "config.h"

#include "core/model_trace.h"

#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/util.h"

#define TRACE_MAX_LEVELS 300	/* the agent records at most 256 levels */

static long long
int_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer_value(v) : 0;
}

static void
node_parse(json_t *o, struct trace_node *n, int level)
{
	json_t *kids = json_object_get(o, "children"), *k;
	size_t i;

	memset(n, 0, sizeof *n);
	n->name = model_text(o, "name");
	n->file = model_text_or_null(o, "file");
	n->line = int_of(o, "line");
	n->def_line = int_of(o, "def_line");
	n->count = int_of(o, "count");
	n->total_ns = int_of(o, "total_ns");
	n->min_ns = int_of(o, "min_ns");
	n->max_ns = int_of(o, "max_ns");
	n->hidden = int_of(o, "hidden");
	n->hidden_ns = int_of(o, "hidden_ns");
	n->c = json_is_true(json_object_get(o, "c"));
	if (!json_is_array(kids) || json_array_size(kids) == 0 || level >= TRACE_MAX_LEVELS)
		return;
	n->children = xcalloc(json_array_size(kids), sizeof *n->children);
	json_array_foreach(kids, i, k)
		if (json_is_object(k))
			node_parse(k, &n->children[n->nchildren++], level + 1);
}

static void
node_clear(struct trace_node *n)
{
	size_t i;

	for (i = 0; i < n->nchildren; i++)
		node_clear(&n->children[i]);
	free(n->children);
	free(n->name);
	free(n->file);
}

void
trace_record_parse(json_t *data, struct trace_record *t)
{
	json_t *v, *tree = json_object_get(data, "tree");
	size_t i;

	memset(t, 0, sizeof *t);
	t->dropped = -1;
	if (json_is_true(json_object_get(data, "started"))) {
		t->started = true;
		t->matched = int_of(data, "matched");
		t->observed = xcalloc(json_array_size(json_object_get(data, "observed")) + 1,
		    sizeof *t->observed);
		json_array_foreach(json_object_get(data, "observed"), i, v)
			if (json_is_string(v))
				t->observed[t->nobserved++] = xstrdup(json_string_value(v));
		return;
	}
	t->index = int_of(data, "index");
	t->method = model_text(data, "method");
	t->thread = model_text(data, "thread");
	t->exception = model_text_or_null(data, "exception");
	t->filter_error = model_text_or_null(data, "filter_error");
	t->time = json_number_value(json_object_get(data, "time"));
	t->cost_ms = json_number_value(json_object_get(data, "cost_ms"));
	if (json_is_integer(json_object_get(data, "dropped")))
		t->dropped = json_integer_value(json_object_get(data, "dropped"));
	if (json_is_object(tree)) {
		t->unrecorded = int_of(tree, "unrecorded");
		t->root = xcalloc(1, sizeof *t->root);
		node_parse(tree, t->root, 0);
	}
}

void
trace_record_clear(struct trace_record *t)
{
	size_t i;

	for (i = 0; i < t->nobserved; i++)
		free(t->observed[i]);
	free(t->observed);
	free(t->method);
	free(t->thread);
	free(t->exception);
	free(t->filter_error);
	if (t->root != NULL) {
		node_clear(t->root);
		free(t->root);
	}
	memset(t, 0, sizeof *t);
}

double
trace_node_share(const struct trace_node *n, const struct trace_node *parent)
{
	if (parent == NULL)
		return 100.0;
	if (parent->total_ns <= 0)
		return 0.0;
	return 100.0 * (double)n->total_ns / (double)parent->total_ns;
}
