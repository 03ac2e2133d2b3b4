/*
 * model_torch — see model_torch.h.  The flat fields are read by
 * core/model.c's table-driven reader; the stage and the memory (null
 * where nothing measures it) by hand.
 */
#include "config.h"

#include "core/model_torch.h"

#include <stdlib.h>
#include <string.h>

#include "core/model.h"
#include "core/util.h"

static const struct model_field modules_fields[] = {
	MODEL_FIELD(struct torch_modules, root, MODEL_TEXT),
	MODEL_FIELD(struct torch_modules, memory, MODEL_TEXT),
	MODEL_FIELD(struct torch_modules, steps, MODEL_COUNT),
	MODEL_FIELD(struct torch_modules, steps_asked, MODEL_COUNT),
	MODEL_FIELD(struct torch_modules, roots, MODEL_COUNT),
	MODEL_FIELD(struct torch_modules, modules, MODEL_COUNT),
};

static const struct model_field row_fields[] = {
	MODEL_FIELD(struct torch_row, module, MODEL_TEXT),
	MODEL_FIELD(struct torch_row, calls, MODEL_COUNT),
	MODEL_FIELD(struct torch_row, avg_ms, MODEL_NUM),
	MODEL_FIELD(struct torch_row, total_ms, MODEL_NUM),
	MODEL_FIELD(struct torch_row, share, MODEL_NUM),
	MODEL_FIELD(struct torch_row, mem, MODEL_INT),
	MODEL_FIELD(struct torch_row, mem_peak, MODEL_INT),
};

struct torch_modules *
torch_modules_parse(json_t *data)
{
	struct torch_modules *t = xcalloc(1, sizeof *t);
	json_t *rows = json_object_get(data, "rows"), *r, *ms;
	const char *stage;
	double total = 0;
	size_t i;

	model_fields_read(data, modules_fields, MODEL_NFIELDS(modules_fields), t);
	json_array_foreach(json_object_get(data, "step_ms"), i, ms)
		total += json_number_value(ms);
	t->step_avg_ms = t->steps ? total / (double)t->steps : 0.0;
	t->rows = xcalloc(json_array_size(rows) + 1, sizeof *t->rows);
	json_array_foreach(rows, i, r) {
		struct torch_row *row = &t->rows[t->nrows++];

		model_fields_read(r, row_fields, MODEL_NFIELDS(row_fields), row);
		stage = json_string_value(json_object_get(r, "stage"));
		row->backward = stage != NULL && strcmp(stage, "backward") == 0;
		row->has_mem = json_is_integer(json_object_get(r, "mem"));
	}
	return t;
}

void
torch_modules_free(struct torch_modules *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrows; i++)
		free(t->rows[i].module);
	free(t->rows);
	free(t->root);
	free(t->memory);
	free(t);
}
