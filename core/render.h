/*
 * render — plain-text views of the models, shared by --cmd, the line-mode
 * prompt and the TUI's "copy as text".  Output is appended to a sbuf and
 * never depends on the terminal.  Every piece of the target's text in it
 * (names, paths, source lines, its command line) goes through
 * core/termsafe as a single-line field: the output holds no control
 * character but the line breaks of its own layout.
 */
#ifndef FP_RENDER_H
#define FP_RENDER_H

#include "core/pyruntime.h"
#include "core/pystack.h"
#include "core/source.h"
#include "core/util.h"

/* "Has the GIL", "Waiting for the GIL", "Running" or "Idle". */
const char *render_thread_status(const struct py_thread *t);
/* The name to show for a frame's function: qualname (3.11+) or name. */
const char *render_frame_function(const struct py_frame *f);

/*
 * One Python frame: `    File "FILE", line N, in FUNC` after `prefix`, and
 * the source line under it when `sc` (may be NULL) has it.  File and
 * function are the target's text: escaped (core/termsafe).
 */
void render_frame_line(struct sbuf *out, const char *prefix, const char *file, int line,
    const char *func, struct source_cache *sc);
/* The source line under a frame (leading blanks dropped; nothing if blank). */
void render_code_line(struct sbuf *out, const char *src);

/*
 * The `stack` dump: a process header, then one traceback per thread in
 * the familiar "most recent call last" layout; merged with native frames
 * when the snapshot has them.  `sc` may be NULL (no source lines).
 */
void render_stack(struct sbuf *out, const struct py_snapshot *snap,
    const struct pyruntime *rt, const char *cmdline, struct source_cache *sc);

/* One thread's traceback (without the process header). */
void render_thread(struct sbuf *out, const struct py_thread *t,
    struct source_cache *sc);

#endif
