#include "config.h"

#include "core/model.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* A count the agent sent; negative or missing is `none`. */
static long long
count(json_t *o, const char *key, long long none)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : none;
}

static struct value_tree *
leaf(const char *repr)
{
	struct value_tree *v = xcalloc(1, sizeof *v);

	v->kind = VALUE_LEAF;
	v->repr = xstrdup(repr);
	v->n = -1;
	return v;
}

/* The items of a container or the attributes of an object. */
static void
parse_items(struct value_tree *v, json_t *items)
{
	size_t i, alloc = 0;
	json_t *it;

	json_array_foreach(items, i, it) {
		struct value_item *item;
		json_t *first = json_array_get(it, 0), *second = json_array_get(it, 1);

		if (v->kind == VALUE_OBJECT && !json_is_string(first))
			continue;	/* an attribute with no name: nothing to show */
		item = ARRAY_PUSH(v->items, v->nitems, alloc);
		memset(item, 0, sizeof *item);
		if (v->kind == VALUE_OBJECT) {
			item->name = xstrdup(json_string_value(first));
			item->value = value_tree_parse(second);
		} else if (v->kind == VALUE_MAP) {
			item->key = value_tree_parse(first);
			item->value = value_tree_parse(second);
		} else {
			item->value = value_tree_parse(it);
		}
	}
}

struct value_tree *
value_tree_parse(json_t *node)
{
	struct value_tree *v;

	if (!json_is_object(node))
		return leaf("?");
	if (json_object_get(node, "r") != NULL) {
		v = xcalloc(1, sizeof *v);
		v->kind = VALUE_LEAF;
		v->repr = model_text(node, "r");
		v->repr_failed = json_is_true(json_object_get(node, "err"));
		v->recursive = json_is_true(json_object_get(node, "rec"));
		v->n = -1;
		return v;
	}
	v = xcalloc(1, sizeof *v);
	if (json_object_get(node, "obj") != NULL) {
		v->kind = VALUE_OBJECT;
		v->type_name = model_text(node, "obj");
		v->addr = model_text(node, "addr");
	} else {
		v->kind = json_object_get(node, "map") != NULL ? VALUE_MAP : VALUE_SEQ;
		v->type_name = model_text(node, v->kind == VALUE_MAP ? "map" : "seq");
		v->open = model_text(node, "open");
		v->close = model_text(node, "close");
	}
	v->n = count(node, "n", -1);
	v->more = count(node, "more", 0);
	parse_items(v, json_object_get(node, v->kind == VALUE_OBJECT ? "attrs" : "items"));
	return v;
}

void
value_tree_free(struct value_tree *v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < v->nitems; i++) {
		free(v->items[i].name);
		value_tree_free(v->items[i].key);
		value_tree_free(v->items[i].value);
	}
	free(v->items);
	free(v->repr);
	free(v->type_name);
	free(v->addr);
	free(v->open);
	free(v->close);
	free(v);
}

struct value_block *
value_block_parse(json_t *data)
{
	struct value_block *b = xcalloc(1, sizeof *b);

	b->expr = model_text(data, "expr");
	b->type_name = model_text(data, "type");
	b->has_count = json_is_integer(json_object_get(data, "count"));
	b->count = count(data, "count", 0);
	b->shown = count(data, "shown", 0);
	b->value = value_tree_parse(json_object_get(data, "value"));
	b->truncated = json_is_true(json_object_get(data, "truncated"));
	return b;
}

void
value_block_free(struct value_block *b)
{
	if (b == NULL)
		return;
	free(b->expr);
	free(b->type_name);
	value_tree_free(b->value);
	free(b);
}
