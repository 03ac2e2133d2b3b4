/*
 * gilprobe — every take and drop of the GIL in a live CPython process,
 * exactly, without patching the interpreter: kernel uprobes (entry and
 * return) on the target's own take_gil and drop_gil, opened with
 * perf_event_open on the uprobe PMU and read from mmap'd ring buffers.
 *
 * take_gil and drop_gil are static functions of ceval_gil.c (3.8–3.13), so
 * they are found in .symtab of the image holding _PyRuntime (libpython3.X.so
 * for the pyenv builds, the executable where Python is linked in).  A
 * stripped image (Debian's /usr/bin/python3.11) has no .symtab: open fails
 * with FP_ERR and says so, and the caller falls back to sampling.
 *
 * The probes are bound to our file descriptors and scoped to the target's
 * threads (one set and one ring buffer per thread; threads started later
 * are found at each poll, so a thread's first ~100 ms may be missed):
 * closing them (gilprobe_close, or our exit, even by SIGKILL)
 * removes them from the kernel.  Nothing is written under tracefs and
 * nothing in the target is stopped or changed.
 */
#ifndef FP_GILPROBE_H
#define FP_GILPROBE_H

#include <stdint.h>
#include <sys/types.h>

enum gilprobe_kind {
	GILPROBE_TAKE_ENTER = 0,	/* take_gil called: the thread wants the GIL */
	GILPROBE_TAKE_RETURN,		/* take_gil returned: the thread holds it */
	GILPROBE_DROP_ENTER,		/* drop_gil called: the hold ends */
	GILPROBE_DROP_RETURN,		/* drop_gil returned: released */
	GILPROBE_NKINDS,
};

struct gilprobe_event {
	enum gilprobe_kind kind;
	pid_t tid;
	uint64_t time_ns;	/* CLOCK_MONOTONIC, as now_ns() */
};

typedef void gilprobe_event_fn(void *arg, const struct gilprobe_event *ev);

struct gilprobe;

/*
 * Probe take_gil/drop_gil in `binary` (the path as the target names it,
 * e.g. pyruntime's) of process `pid`.  FP_EPERM when perf_event_open is
 * refused, FP_ERR when the functions are not found or the kernel has no
 * uprobe PMU; *cause says which, in a line a user can act on.
 */
int gilprobe_open(pid_t pid, const char *binary, struct gilprobe **gp, char **cause);
/*
 * Wait up to timeout_ms for events and hand every event buffered so far
 * to `fn`, in the order of each thread's buffer.  Returns the number of
 * events handed over.
 */
size_t gilprobe_poll(struct gilprobe *gp, int timeout_ms, gilprobe_event_fn *fn, void *arg);
/* Events the kernel dropped because a buffer was full, so far. */
uint64_t gilprobe_lost(const struct gilprobe *gp);
/* "take_gil, drop_gil at libpython3.12.so.1.0+0x2ae9f0, 0x2ae130; 4 threads" */
const char *gilprobe_describe(const struct gilprobe *gp);
/* Close every probe: they are gone from the kernel when this returns. */
void gilprobe_close(struct gilprobe *gp);

#endif
