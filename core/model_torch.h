/*
 * model_torch — the end of `torch modules` (doc/protocol.md "torch") as C
 * structs, for the mem pane's torch view and whoever renders the table.
 * Parsed as core/model.h's models are: a missing or mistyped field is its
 * empty value; module names are kept as the target wrote them (escaped
 * where drawn).
 */
#ifndef FP_MODEL_TORCH_H
#define FP_MODEL_TORCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* One module in one stage. */
struct torch_row {
	char *module;			/* "fc1", "encoder.layers.0"; the root: its class */
	bool backward;			/* the stage: backward, else forward */
	long long calls;
	double avg_ms, total_ms;
	double share;			/* of the steps' time, in % */
	bool has_mem;			/* mem and mem_peak are measured */
	long long mem, mem_peak;	/* bytes: the change over the stage, its peak */
};

struct torch_modules {
	char *root;			/* the class of the largest module tree */
	char *memory;			/* what the memory figures are */
	long long steps, steps_asked, roots, modules;
	double step_avg_ms;		/* over the steps recorded */
	struct torch_row *rows;
	size_t nrows;
};

struct torch_modules *torch_modules_parse(json_t *data);
void torch_modules_free(struct torch_modules *t);

#endif
