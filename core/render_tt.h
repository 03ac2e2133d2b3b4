/*
 * render_tt — plain text of `tt`: the record table (recording, -l, -s),
 * one record in detail (-i, -w, a replay) and the store's state.  Renders
 * the models of core/model.h; output goes to a sbuf, never the terminal.
 * Text from the target goes through core/termsafe.
 */
#ifndef FP_RENDER_TT_H
#define FP_RENDER_TT_H

#include "core/model.h"
#include "core/util.h"

/* The column titles of the record table, and one row of it. */
void render_tt_row_header(struct sbuf *out);
void render_tt_row(struct sbuf *out, const struct tt_row *r);

/* One event of tt -t, -i or -p (rows of a recording as table lines). */
void render_tt_event(struct sbuf *out, const struct tt_event *e);

/* The answer of tt -l or tt -s. */
void render_tt_list(struct sbuf *out, const struct tt_list *l);

/* "store: N records (at most M), B bytes (at most MB), E evicted so far". */
void render_tt_store(struct sbuf *out, const struct tt_store_info *s);

#endif
