/*
 * render_torch — the plain text of the `torch` answers (profile, memory,
 * modules), from the agent's JSON (modules: from its model).  Names and paths come from the target
 * and are escaped here.
 */
#ifndef FP_RENDER_TORCH_H
#define FP_RENDER_TORCH_H

#include <jansson.h>

#include "core/model_torch.h"
#include "core/util.h"

/* "waiting for the next call of ..." of a torch request's event. */
void render_torch_waiting(struct sbuf *out, const char *cmd, json_t *event);
/* The end of torch profile / torch memory: what was written where. */
void render_torch_written(struct sbuf *out, const char *cmd, json_t *data);
/* The end of torch modules: the steps and the per module and stage table. */
void render_torch_modules(struct sbuf *out, const struct torch_modules *t);

#endif
