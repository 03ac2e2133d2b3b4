/*
 * render_agent — plain text of what the agent answers: the EXPR / TYPE /
 * VALUE blocks of getglobal and vmtool, and the inside-view additions to
 * `stack` (Python thread names, frame locals, asyncio tasks).  Like
 * core/render, output goes to a sbuf and never depends on the terminal.
 *
 * They render the models of core/model.h, never the protocol's JSON.
 */
#ifndef FP_RENDER_AGENT_H
#define FP_RENDER_AGENT_H

#include "core/model.h"
#include "core/pyruntime.h"
#include "core/pystack.h"
#include "core/source.h"
#include "core/util.h"

/* One value tree, continuation lines indented by `indent` spaces. */
void render_value(struct sbuf *out, const struct value_tree *node, int indent);

/* The EXPR / TYPE / VALUE block of a getglobal or vmtool getInstances answer. */
void render_value_block(struct sbuf *out, const struct value_block *b);

/*
 * One event of a watch request: the start (what is observed), or one
 * call with its time, cost, outcome, caller stack and EXPR / VALUE rows.
 */
void render_watch_record(struct sbuf *out, const struct watch_record *w);

/*
 * Give the snapshot's threads their Python names (threading.Thread.name)
 * from the agent's `threads` answer; the OS names stay where Python has
 * none.
 */
void render_apply_thread_names(struct py_snapshot *snap, const struct agent_threads *m);

/*
 * The `stack` dump with each Python frame's locals under it (from the
 * agent's `threads` answer with locals).  Native frames are not merged in
 * this view.
 */
void render_stack_locals(struct sbuf *out, const struct py_snapshot *snap,
    const struct pyruntime *rt, const char *cmdline, struct source_cache *sc,
    const struct agent_threads *m);

/* The asyncio section of `stack -a`. */
void render_asyncio(struct sbuf *out, const struct py_snapshot *snap,
    const struct agent_threads *m);

#endif
