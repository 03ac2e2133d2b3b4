/*
 * render_trace — `trace` events as plain text (--cmd) and the one-line
 * label of a tree node that the TUI's trace pane draws too.  Every name
 * and path comes from the target and goes through termsafe.
 */
#ifndef FP_RENDER_TRACE_H
#define FP_RENDER_TRACE_H

#include "core/model_trace.h"
#include "core/util.h"

/* "[ 40.1%  4.950 ms] name #14  (file.py:20)  [count=5 min=... max=... total=...]" */
void render_trace_label(struct sbuf *out, const struct trace_node *n,
    const struct trace_node *parent);

/* "(3 more calls, 0.012 ms, under -i or below -d)" for n's left-out calls. */
void render_trace_hidden(struct sbuf *out, const struct trace_node *n);

/* The start (what is traced) or one traced call: a header and its tree. */
void render_trace_record(struct sbuf *out, const struct trace_record *t);

#endif
