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

#define N(member, kind) MODEL_FIELD(struct trace_node, member, kind)

static const struct model_field node_fields[] = {
	N(name, MODEL_TEXT), N(file, MODEL_TEXT_OR_NULL), N(line, MODEL_INT),
	N(def_line, MODEL_INT), N(count, MODEL_INT), N(total_ns, MODEL_INT),
	N(min_ns, MODEL_INT), N(max_ns, MODEL_INT), N(hidden, MODEL_INT),
	N(hidden_ns, MODEL_INT), N(c, MODEL_BOOL),
};

#define T(member, kind) MODEL_FIELD(struct trace_record, member, kind)

static const struct model_field record_fields[] = {
	T(index, MODEL_INT), T(method, MODEL_TEXT), T(thread, MODEL_TEXT),
	T(exception, MODEL_TEXT_OR_NULL), T(filter_error, MODEL_TEXT_OR_NULL),
	T(time, MODEL_NUM), T(cost_ms, MODEL_NUM),
};

static void
node_parse(json_t *o, struct trace_node *n, int level)
{
	json_t *kids = json_object_get(o, "children"), *k;
	size_t i;

	memset(n, 0, sizeof *n);
	model_fields_read(o, node_fields, MODEL_NFIELDS(node_fields), n);
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
	json_t *tree = json_object_get(data, "tree");

	memset(t, 0, sizeof *t);
	t->dropped = -1;
	if (json_is_true(json_object_get(data, "started"))) {
		t->started = true;
		t->matched = model_int(data, "matched", 0);
		t->observed = model_strings(json_object_get(data, "observed"), &t->nobserved);
		t->mechanism = model_text_or_null(data, "mechanism");
		t->mechanism_note = model_text_or_null(data, "mechanism_note");
		return;
	}
	model_fields_read(data, record_fields, MODEL_NFIELDS(record_fields), t);
	if (json_is_integer(json_object_get(data, "dropped")))
		t->dropped = json_integer_value(json_object_get(data, "dropped"));
	if (json_is_object(tree)) {
		t->unrecorded = model_int(tree, "unrecorded", 0);
		t->root = xcalloc(1, sizeof *t->root);
		node_parse(tree, t->root, 0);
	}
}

void
trace_record_clear(struct trace_record *t)
{
	strv_free(t->observed, t->nobserved);
	free(t->mechanism);
	free(t->mechanism_note);
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
