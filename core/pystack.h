/*
 * pystack — every thread's Python stack, read from outside the process.
 *
 * No code runs in the target.  Memory is read with process_vm_readv; a
 * thread is stopped (ptrace) only when the caller asks for native frames
 * (for that thread, while it is unwound) or for a consistent snapshot
 * (--block: every thread, for the duration of the read).  Every stopped
 * thread is resumed before py_reader_snapshot() returns, on every path.
 *
 * The snapshot and everything it points to belong to the caller, freed by
 * py_snapshot_free().
 */
#ifndef FP_PYSTACK_H
#define FP_PYSTACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/pyruntime.h"

enum py_gil_state {
	GIL_UNKNOWN = 0,
	GIL_NONE,		/* neither holds nor waits */
	GIL_HELD,		/* holds the GIL */
	GIL_WAITING,		/* blocked taking the GIL */
};

/*
 * Frame strings belong to the snapshot (it holds a reference to each code
 * object's strings); never free or modify them.
 */
struct py_frame {
	char *filename;		/* co_filename, as the code object says */
	char *name;		/* co_name */
	char *qualname;		/* co_qualname (3.11+), else NULL */
	int line;		/* 0 when unknown */
	uint64_t code;		/* address of the code object */
	/*
	 * This frame is the outermost one run by its call of the C evaluation
	 * loop: the boundary used to merge with native frames.
	 */
	bool entry;
	/*
	 * Unique in this process to one reading of one code object (its
	 * names and file as read then; core/pycode.c); 0 when unknown.  A
	 * profile keys frames by it without comparing names.
	 */
	uint64_t code_id;
};

struct native_frame {
	uint64_t pc;
	char *function;		/* symbol name, NULL when unknown */
	uint64_t offset;	/* pc - symbol start */
	char *module;		/* basename of the ELF file, NULL if unmapped */
	char *file;		/* source file from debug info, or NULL */
	int line;		/* 0 when unknown */
	bool is_eval;		/* a CPython evaluation-loop frame */
	bool exact;		/* pc is the interrupted instruction, not a return address */
};

struct py_thread {
	pid_t tid;		/* OS thread id; 0 when it could not be matched */
	uint64_t thread_id;	/* pthread_t, as threading.get_ident() */
	char *name;		/* OS thread name (/proc/.../comm), NULL if gone */
	char os_state;		/* /proc/.../stat state letter, read first */
	enum py_gil_state gil;
	bool is_main;
	uint64_t tstate;	/* address of the PyThreadState */
	uint64_t cpu_ticks;	/* utime + stime, clock ticks */

	struct py_frame *frames;	/* innermost first */
	size_t nframes, aframes;	/* aframes: its room */
	char *error;		/* why the stack is cut short, or NULL */
	/*
	 * The thread changed its stack under every read of it (reads do not
	 * stop it): the frames are the last read's, possibly short or mixed,
	 * and `error` says what was seen.  Not expected with --block.
	 */
	bool partial;
	unsigned retries;	/* reads done again because the stack changed */
	bool stopped_read;	/* torn under every try, read once while stopped */
	char *stop_error;	/* why that stop failed, or NULL */

	struct native_frame *native;	/* innermost first; --native only */
	size_t nnative;
	char *native_error;	/* why native frames are missing, or NULL */
};

struct py_snapshot {
	pid_t pid;
	char version[24];	/* "3.12.1" */
	struct py_thread *threads;	/* in interpreter order (newest first) */
	size_t nthreads;
	bool native;		/* native frames were asked for */
	bool blocked;		/* the process was stopped while read */
	uint64_t taken_ns;	/* now_ns() when taken */
	/* a reference to the strings of each code object its frames show */
	struct code_strs **strs;
	size_t nstrs, astrs;
	/*
	 * The room of threads[], and how many of its slots hold a frames
	 * array of their own (a snapshot recycled by py_reader_recycle keeps
	 * them for the next one).
	 */
	size_t athreads, ninit;
};

struct py_snapshot_opts {
	bool native;		/* unwind native frames (stops each thread briefly) */
	bool block;		/* stop every thread for a consistent read */
	unsigned max_depth;	/* frames per thread; 0 = default (4096) */
	/*
	 * Read nothing under /proc (a sampler refreshes thread states at its
	 * own pace): os_state is 0, names and cpu_ticks are unset.  Before
	 * 3.11 an OS tid needs one full snapshot first (it finds where glibc
	 * keeps it).  Exit is found by reads failing, not by a /proc check;
	 * a thread waiting for the GIL shows GIL_NONE (that needs /proc).
	 * The pages the last such snapshot read are re-read in one batch.
	 */
	bool no_proc;
	/*
	 * Who holds the GIL is not wanted: nothing of the GIL is read (on
	 * 3.11 its page is the runtime's; 3.12+ its own), every thread
	 * shows GIL_UNKNOWN.
	 */
	bool no_gil;
};

struct py_reader;

/*
 * Find the CPython runtime of `pid` and prepare to read it.  Returns an
 * enum fp_status; *cause says why on failure.
 */
int py_reader_open(pid_t pid, struct py_reader **reader, char **cause);
/*
 * May this reader stop a thread (default: yes)?  One that may reads a torn
 * stack again, in rounds that let the thread run, and as the last resort
 * stops that thread for one read.  One that may not (a sampler, gilstat's
 * statistical mode) never stops a thread: a torn stack is read once more,
 * back to back, then shown partial -- counted, not chased.
 */
void py_reader_may_stop(struct py_reader *r, bool may);
/*
 * Is a thread blocked in system call `nr` with first argument `arg0`
 * (procfs_syscall_fd) waiting for the GIL of the last snapshot?  For a
 * no_proc snapshot's caller, which reads thread states itself.
 */
bool py_reader_gil_wait(const struct py_reader *r, long nr, uint64_t arg0);
const struct pyruntime *py_reader_runtime(const struct py_reader *reader);
int py_reader_snapshot(struct py_reader *reader,
    const struct py_snapshot_opts *opts, struct py_snapshot **snap,
    char **cause);
void py_reader_close(struct py_reader *reader);

void py_snapshot_free(struct py_snapshot *snap);
/*
 * As py_snapshot_free, for a snapshot of this reader's: its threads' and
 * frames' room is kept for the reader's next snapshot (a sampler takes
 * thousands a second).
 */
void py_reader_recycle(struct py_reader *reader, struct py_snapshot *snap);
void native_frames_free(struct native_frame *frames, size_t n);

#endif
