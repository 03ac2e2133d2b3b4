/*
 * unwind — the native (C) stack of a stopped thread, symbolized.
 *
 * Frames are found with libunwind in remote mode from the CFI tables
 * (.eh_frame_hdr) the target has in memory, so unwinding needs no file;
 * function names, source files and lines come from elfutils (libdwfl),
 * which opens each module through /proc/<pid>/root so that processes in
 * containers work.
 *
 * One unwinder serves every thread of one process and is made to be used
 * again and again: it reads /proc/<pid>/maps once (and again when a pc falls
 * outside every known mapping: a library was loaded since), and
 * keeps the read-only memory it has read, libunwind's per-pc cache and a
 * per-pc symbol cache.  The first unwind pays for loading debug info (tens
 * of milliseconds with libpython's DWARF and libc6-dbg); after that a frame
 * costs about a microsecond.
 *
 * It never stops, resumes or writes to the target: the thread must already
 * be stopped by tstop_stop().  Not thread-safe: one unwinder, one thread of
 * ours at a time.
 */
#ifndef FP_UNWIND_H
#define FP_UNWIND_H

#include <stddef.h>
#include <sys/types.h>

#include "core/pystack.h"

struct unwinder;

/* Returns 0 or an enum fp_status (FP_ENOPROC, FP_EPERM, FP_EEXITED, FP_ERR). */
int unwinder_open(pid_t pid, struct unwinder **u, char **cause);

/*
 * The native stack of thread `tid` of the unwinder's process, innermost
 * frame first, at most 1024 frames.  *frames is malloc'd and freed by the
 * caller with native_frames_free().  A stack cut short (no unwind info for
 * some frame) is not an error: the frames found so far are returned.
 * Fails (FP_EEXITED, FP_ERR) when the thread is gone or not stopped.
 */
int unwinder_thread(struct unwinder *u, pid_t tid, struct native_frame **frames,
    size_t *n, char **cause);

/*
 * The same in two halves, so that the thread is held only for the first:
 * unwinder_thread_pcs() reads the stack of the stopped thread (registers
 * once, memory through the page cache: a few hundred microseconds once the
 * unwind tables are cached) and fills only pc and exact of each frame;
 * unwinder_symbolize(), called after the thread is let go, names them
 * (the first time, loading debug info costs tens of milliseconds).
 */
int unwinder_thread_pcs(struct unwinder *u, pid_t tid,
    struct native_frame **frames, size_t *n, char **cause);
void unwinder_symbolize(struct unwinder *u, struct native_frame *frames,
    size_t n);

/*
 * Warm the unwinder's caches (unwind tables, libunwind's per-pc state,
 * read-only pages) for thread `tid` WITHOUT stopping it, when it is blocked
 * in a system call: /proc/<pid>/task/<tid>/syscall gives its pc and stack
 * pointer, enough to walk most of its stack.  The next
 * unwinder_thread_pcs() of the stopped thread then finds everything cached
 * and holds it a fraction of the time.  Does nothing for a running thread.
 */
void unwinder_warm(struct unwinder *u, pid_t tid);

void unwinder_close(struct unwinder *u);

#endif
