/*
 * model — what the parsers of core/model_*.c share: a field's text, the
 * list of strings an answer names (observed functions), and the
 * table-driven reader of flat fields (see core/model.h).
 */
#include "config.h"

#include "core/model.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

char *
model_text(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return xstrdup(s ? s : "");
}

char *
model_text_or_null(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? xstrdup(s) : NULL;
}

long long
model_int(json_t *o, const char *key, long long dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

char **
model_strings(json_t *array, size_t *n)
{
	char **v = xcalloc(json_array_size(array) + 1, sizeof *v);
	json_t *s;
	size_t i;

	*n = 0;
	json_array_foreach(array, i, s)
		if (json_is_string(s))
			v[(*n)++] = xstrdup(json_string_value(s));
	return v;
}

void
model_fields_read(json_t *o, const struct model_field *fields, size_t n, void *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct model_field *f = &fields[i];
		json_t *v = json_object_get(o, f->key);
		void *at = (char *)out + f->offset;

		switch (f->kind) {
		case MODEL_TEXT:
			*(char **)at = model_text(o, f->key);
			break;
		case MODEL_TEXT_OR_NULL:
			*(char **)at = model_text_or_null(o, f->key);
			break;
		case MODEL_INT:
			*(long long *)at = model_int(o, f->key, 0);
			break;
		case MODEL_COUNT:
			*(long long *)at = json_is_integer(v) && json_integer_value(v) > 0 ?
			    json_integer_value(v) : 0;
			break;
		case MODEL_NUM:
			*(double *)at = json_is_number(v) ? json_number_value(v) : 0.0;
			break;
		case MODEL_BOOL:
			*(bool *)at = json_is_true(v);
			break;
		}
	}
}
