/*
 * render_mem — plain text of `mem summary` and `mem diff` (the layout of
 * PyFlightProfiler's guide: types | # objects | total size, with deltas
 * for a diff), from the model in core/model.h.  Type names come from the
 * target and are escaped here.
 */
#ifndef FP_RENDER_MEM_H
#define FP_RENDER_MEM_H

#include "core/model.h"
#include "core/util.h"

/* "1.23 MB" as pympler writes it (1024-based); with sign, "+" before growth. */
void render_mem_size(char *buf, size_t n, long long bytes, bool sign);
void render_mem_table(struct sbuf *out, const struct mem_table *t);
/* What `mem sites start|diff|stop` did; diff: the sites that grew most, file:line. */
void render_mem_sites(struct sbuf *out, const struct mem_sites *m);
/* RSS, pymalloc's arenas and the gap between them. */
void render_mem_rss(struct sbuf *out, const struct mem_rss *m);

#endif
