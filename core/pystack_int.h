/*
 * core/pystack_int.h — what core/pystack.c (threads, the snapshot) and
 * core/pyframes.c (one thread's frames, read and checked for tearing)
 * share: the reader itself.  Not for other modules: they use
 * core/pystack.h.
 */
#ifndef FP_PYSTACK_INT_H
#define FP_PYSTACK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/memread.h"
#include "core/pystack.h"

#define MAX_THREADS	4096	/* threads read of one interpreter */
#define STOP_TIMEOUT_MS	2000	/* a thread that does not stop by then is let go */
/* How many times one thread's stack is read before it is shown partial. */
#define READ_TRIES	12

/*
 * What we keep of a code object.  Code objects are immutable, but can be
 * freed and their address reused: an entry is re-validated (its filename,
 * name and table pointers compared) once per snapshot before reuse.
 */
struct code_info {
	uint64_t addr;
	uint64_t serial;	/* new at each reading of it: py_frame.code_id */
	/*
	 * Its strings as frames show them, shared with the snapshots that
	 * show it (pycode_strs); snap_serial: the snapshot that holds a
	 * reference already.
	 */
	unsigned snap_serial;
	struct code_strs *strs;
	uint64_t p_filename, p_name, p_table, p_qualname;
	/* the snapshot that checked it, or queued it for pycode_check */
	unsigned generation;
	/*
	 * py_reader.tick_ns of the snapshot that last read or checked it: a
	 * sampler trusts it unread for PYCODE_TRUST_NS after (pycode.c).
	 */
	uint64_t checked_ns;
	/* 3.11+: the bytes of its bytecode (Py_SIZE x 2); 0 if unknown */
	uint64_t code_bytes;
	/*
	 * What its filename, name, qualname and line table said when read
	 * (pycode.c, PYCODE_PRINTS): their objects' length and hash words.
	 */
#define PYCODE_PRINTS	4
	uint64_t print[PYCODE_PRINTS][2];
	bool valid;		/* it was a readable code object */
	char *filename, *name, *qualname;
	int firstlineno;
	int framesize;		/* 3.12–3.13 co_framesize, in pointers; 0 if unknown */
	bool shim;		/* 3.13: CPython's own trampoline code (_Py_InitCleanup) */
	bool generator;		/* a generator's, coroutine's or async generator's code */
	uint8_t *table;
	size_t table_len;
	/*
	 * The lines of the last offsets asked (pycode_line): a sampler meets
	 * the same frames at the same instructions tick after tick, and
	 * decoding the table was a twentieth of its CPU.  Several: one code
	 * object is often on a stack at a few offsets at once (a recursion
	 * calls itself from one place and works at another).  Entry i is
	 * known when i < nlines; they live as long as the table they were
	 * decoded from (pycode_clear forgets them).  Sound without reading
	 * the table again: a frame is still read whole every tick, and
	 * what it says now -- this code object (its entry validated for
	 * this snapshot, or read anew with a new serial) at this offset --
	 * is the key; a line is a function of the two.  Nothing of a frame
	 * is taken from an earlier tick that its bytes this tick do not say
	 * (struct frame_run: frames reused whole where the bytes are the same).
	 */
#define PYCODE_LINES	4
	unsigned nlines, next_line;
	int64_t line_at[PYCODE_LINES];
	int line[PYCODE_LINES];
};

/*
 * 3.11+: a run of a thread's own frames as one walk read them, one below
 * the other on its data stack: each frame's address and fields, what the
 * walk made of them (code object, line, entry), and the bytes of the
 * stack from the lowest frame to the end of the highest one's header
 * (pyframes.c, run_reuse).  A later walk that meets one of these frames
 * and finds the bytes below it unchanged -- the fields of every frame
 * there the same -- makes the same of them without reading them one by
 * one: a sampler's tick, where only the innermost frame moves.
 */
struct run_frame {
	uint64_t back, code, instr;	/* code: the field as read, less its tags */
	struct code_info *c;
	uint64_t serial;	/* c's then: c may have been read again since */
	unsigned char owner;
	bool entry;
};

struct frame_run {
	/* highest address (innermost) first: addresses, frames as pushed, fields */
	uint64_t *addr;
	struct py_frame *pf;
	struct run_frame *f;
	size_t n, a;
	unsigned char *bytes;	/* [addr[n-1], addr[0] + the header's size) */
	size_t abytes;
	/* what the walk checked them with (slot_bounds_of; r->check; r->codes_moved) */
	uint64_t slot_lo, slot_hi;
	bool check;
	unsigned moved;
};

struct py_reader {
	struct pyruntime *rt;
	struct code_info *codes;	/* open-addressed hash on addr */
	size_t ncodes, acodes;
	unsigned codes_moved;		/* codes_grow() calls: memo entries older point nowhere */
	/*
	 * The frames met lately, by address and offsets, with the code and
	 * line they resolved to (pycode_frame); PYCODE_MEMO of them, direct
	 * mapped, made on first use.
	 */
	struct frame_memo {
		uint64_t frame, code, serial;
		int64_t at, line_at;
		struct code_info *c;
		unsigned moved;
		int line;
	} *memo;
	unsigned generation;		/* snapshot serial number */
	uint64_t tick_ns;		/* when this snapshot began (now_ns) */
	size_t tstate_used;		/* py_offsets_tstate_used(), once */
	size_t tstate_head_used;	/* py_offsets_tstate_head_used(), once */
	struct py_snapshot *snap;	/* the one being taken */
	struct py_snapshot *spare;	/* one recycled, for the next (py_reader_recycle) */
	int64_t pthread_tid_off;	/* 3.8–3.10: struct pthread's tid */
	struct unwinder *unwinder;
	struct mem_cache *mc;		/* cleared whenever the target may have run */
	struct pythreads *names;	/* Python's thread names */
	/*
	 * Check each read of a stack for tearing, and read a torn one up to
	 * `tries` times.  Benchmarks measure each part: FP_STACK_CHECK=0 turns
	 * the check off, FP_STACK_CHECK=once checks without reading again,
	 * FP_STACK_CHECK=nostop reads again but never stops a thread.
	 */
	bool check;
	unsigned tries;
	/*
	 * A stack still torn after every try is read once more with its thread
	 * stopped for that read alone (tens of microseconds), unless the caller
	 * may not stop threads (a sampler: it counts partial reads instead) or
	 * FP_STACK_CHECK is set to anything but 1 (benchmarks of the parts).
	 */
	bool may_stop, stop_allowed;
	bool never_stop;		/* py_reader_may_stop(r, false) */
	unsigned quick_tries;		/* 0 = rounds; else back-to-back reads */
	/*
	 * The pages of the last snapshot were just re-read in one batch
	 * (no_proc): a first read of each stack is served from them, not
	 * expired and read again.  The checks for tearing still look live.
	 */
	bool prefetched;
	uint64_t code_type;		/* &PyCode_Type, once seen */
	uint64_t gil;			/* the GIL's address at the last snapshot, 0 if unknown */
	/*
	 * The main interpreter, once read: its address never changes in a
	 * process (3.11+ it lies inside _PyRuntime), so a sampler's tick
	 * does not read the runtime's page for it again.  A full snapshot
	 * reads it again, and checks it at the end (same_interpreter).
	 */
	uint64_t interp;
	/*
	 * The thread list of the last snapshot, in the interpreter's order:
	 * a sampler's tick checks it by the states' own links (known_list)
	 * instead of reading the interpreter's head, one page a tick fewer.
	 */
	struct known_thread {
		uint64_t tstate, thread_id;
		pid_t tid;
	} *known;
	size_t nknown, aknown;
	/*
	 * A sampler's snapshot (no_proc) uses the code objects it knows
	 * without reading them, and notes them here; pycode_check()
	 * then reads the pointers that tell one code from another of all of
	 * them in one system call.
	 */
	bool batch_codes;
	uint64_t *unchecked;
	size_t nunchecked, aunchecked;
	/*
	 * The code objects the last snapshot's frames used: a sampler's next
	 * snapshot checks them in the same system call that re-reads its
	 * pages (pycode_refresh), so that only new ones need the batch.
	 */
	uint64_t *used;
	size_t nused, aused;
	/*
	 * Per thread state, the pages its last read touched: the next read
	 * of it (a sampler reads again and again) starts by re-reading them
	 * all at once, outermost first (see refresh_outer_first).
	 */
	struct stack_hint {
		uint64_t tstate;
		uint64_t *addrs;
		size_t n;
		/*
		 * 3.11+: where its last read found the head of its stack --
		 * the state's cframe or current frame, and 3.11-3.12 that
		 * cframe's current frame; 0 if none.  A sampler's batch reads
		 * their pages last (pyframes_prefetch).
		 */
		uint64_t head_ts, head_cf;
		unsigned generation;	/* the last snapshot that used it */
		/*
		 * Its read stayed torn with the thread stopped: what tears
		 * is its shape (a generator resumed from C), not a race, and
		 * stopping it again would cost the target for nothing.
		 */
		bool stop_useless;
		/*
		 * What its last read's checks after the walk read (see
		 * struct post_read): a sampler's next batch reads them again.
		 */
		struct post_read *post;
		/* scratch kept between its reads: the frames seen, the depth last read */
		uint64_t *seen;
		size_t aseen, depth;
		/*
		 * 3.11+: its data stack's chunk and top as last read from
		 * the state, and the thread (id) they were read for, 0 if
		 * none (read_thread_frames_once).
		 */
		uint64_t ds_chunk, ds_top, ds_thread;
		/* 3.11+: the run its reads reuse, and the one being read (struct frame_run) */
		struct frame_run run, rec;
	} *hints;
	size_t nhints, ahints;
	/* mem_cache_reads() right after a sampler's batch (pyframes_prefetch) */
	unsigned long batch_reads;
};

/*
 * The ranges a thread's checks after its walk read (the thread state,
 * 3.11-3.12 its cframe's current frame, the innermost frame; 3.8-3.10 the
 * first frame again; 3.11+ with its head read after its frames, only the
 * innermost frame).  A sampler's snapshot reads them once more at the
 * END of the batch that re-reads its pages: the kernel copies in order,
 * so they are copied after every page of that batch, and a walk served
 * from those pages alone may take them as its checks, without a system
 * call of its own (pyframes.c, checks_read).
 */
#define POST_RANGES	4
#define POST_BYTES	(PYOFF_TSTATE_SPAN + 8 + 2 * 512)
struct post_read {
	unsigned generation;	/* the snapshot whose batch read them */
	size_t n;
	struct post_range {
		uint64_t addr;
		size_t len, off;	/* off: into buf */
		bool ok;
	} r[POST_RANGES];
	unsigned char buf[POST_BYTES];
};

static inline int
rd(struct py_reader *r, uint64_t addr, void *buf, size_t len)
{
	return mem_cache_read(r->mc, addr, buf, len);
}

/* What a running thread changes: never served from a page read before the last expiry. */
static inline int
rd_fresh(struct py_reader *r, uint64_t addr, void *buf, size_t len)
{
	return mem_cache_read_fresh(r->mc, addr, buf, len);
}

/* An object read once and kept by address: not from a page copied before the last expiry. */
static inline int
rd_current(struct py_reader *r, uint64_t addr, void *buf, size_t len)
{
	return mem_cache_read_current(r->mc, addr, buf, len);
}

static inline int
rd_u64(struct py_reader *r, uint64_t addr, uint64_t *v)
{
	return mem_cache_read_u64(r->mc, addr, v);
}

/*
 * Read thread `t`'s Python frames (at most `depth`) into t->frames, again
 * while the stack changes under the read, and as the last resort with the
 * thread stopped (r->may_stop); t->partial and t->error say when it stayed
 * torn.  Frame strings live in r->snap's arena.
 */
void pyframes_read(struct py_reader *r, struct py_thread *t, unsigned depth);
/*
 * 3.11+: may a thread's chain end at a frame of this owner?  The first
 * frame of a thread is run by a C call of the evaluation loop: 3.11 marks
 * it is_entry; 3.12-3.14 put a shim frame under it (FRAME_OWNED_BY_CSTACK
 * in 3.12-3.13, FRAME_OWNED_BY_INTERPRETER in 3.14), which is then the
 * last; 3.15 ends every chain in the thread state's base frame, also the
 * interpreter's (CPython's own reader, Modules/_remote_debugging/frames.c,
 * takes that owner for "C frame or sentinel base frame").  A generator's
 * frame is never last: its `previous` is its caller while it runs and is
 * cleared when it yields.
 */
bool pyframes_chain_may_end(const struct py_offsets *o, int owner, bool is_entry);
void pyframes_free(struct py_thread *t);
/*
 * A code object's strings, one block shared by the code cache and every
 * snapshot that shows a frame of it: a sampler's tick takes a reference
 * per code object, not a copy per string.
 */
struct code_strs {
	unsigned refs;
	char *filename, *name, *qualname;	/* into data; qualname may be NULL */
	char data[];
};
/* c's block, made on first use; the caller takes no reference. */
struct code_strs *pycode_strs(struct code_info *c);
void pycode_strs_release(struct code_strs *s);

/* ---- core/pycode.c: code objects, cached across snapshots ---- */

/* The largest line table read, in bytes; no offset into code is larger than 8 times it. */
#define PYCODE_MAX_TABLE (1u << 20)

/*
 * The code object at addr, read or from the cache; never NULL (c->valid
 * says if it is one).  `at`: the byte offset into its bytecode that the
 * frame runs at (3.11+), PYCODE_AT_UNKNOWN if not known: a cached one that
 * does not hold it is checked in this snapshot.
 */
#define PYCODE_AT_UNKNOWN INT64_MIN
struct code_info *pycode_get(struct py_reader *r, uint64_t addr, int64_t at);
/*
 * As pycode_get, for the frame at `frame` running `code` at `at`, and its
 * line at `line_at` (pycode_line; *line is 0 for a code that is none):
 * a frame met again as it was (the same address, code and offsets) takes
 * both from struct frame_memo, without a lookup, while its code stays
 * trusted as pycode_get would trust it.  A sampler meets most frames of
 * a stack so tick after tick: the frames that did not change are reused.
 */
struct code_info *pycode_frame_slow(struct py_reader *r, uint64_t frame, uint64_t code,
    int64_t at, int64_t line_at, int *line);

/* How long a sampler trusts a code object unread after its last check (pycode.c). */
#define PYCODE_TRUST_NS		10000000ull	/* 10 ms */
#define PYCODE_MEMO		512	/* frames remembered; a power of two */

static inline size_t
pycode_memo_slot(uint64_t frame, int64_t line_at)
{
	uint64_t h = (frame ^ (uint64_t)line_at * 0x9e3779b97f4a7c15ull) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 55) & (PYCODE_MEMO - 1);
}

static inline struct code_info *
pycode_frame(struct py_reader *r, uint64_t frame, uint64_t code, int64_t at, int64_t line_at,
    int *line)
{
	const struct frame_memo *m = r->memo != NULL ? &r->memo[pycode_memo_slot(frame, line_at)] :
	    NULL;

	if (m != NULL && m->frame == frame && m->code == code && m->at == at &&
	    m->line_at == line_at && m->moved == r->codes_moved) {
		struct code_info *c = m->c;

		/* pycode_get's own trust: checked this snapshot, or trusted a while yet */
		if (c->addr == code && c->serial == m->serial && c->valid &&
		    (c->generation == r->generation ||
		    (r->batch_codes && r->tick_ns - c->checked_ns < PYCODE_TRUST_NS))) {
			*line = m->line;
			return c;
		}
	}
	return pycode_frame_slow(r, frame, code, at, line_at, line);
}
void pycode_clear(struct code_info *c);
/* The line of a code offset (linetable_line), -1 meaning none; remembers the last one. */
int pycode_line(const struct py_reader *r, struct code_info *c, int64_t offset);
/*
 * Check the code objects a batch_codes snapshot used unread; returns how
 * many turned out to be another object now (forgotten: the threads must
 * be read again).
 */
size_t pycode_check(struct py_reader *r);
/*
 * A sampler's snapshot begins: re-read these pages (the parts of them the
 * last snapshot used, as mem_cache_pages() gives them) and check the code
 * objects the last snapshot used, all in one system call.  Then
 * pycode_begin, as every snapshot does before its walks.
 */
void pycode_refresh(struct py_reader *r, const uint64_t *pages, const uint32_t *lens,
    size_t npages,
    const struct mem_range *after, size_t nafter, bool *after_ok);
/*
 * A sampler's snapshot begins: pycode_refresh, with each thread's checks
 * after its walk (struct post_read) read at the end of the same call.
 * The pages of the threads' heads (struct stack_hint) are put last in
 * pages[] first: a walk served from the batch alone then needs no more
 * than its innermost frame read again (pyframes.c, read_before_head).
 */
void pyframes_prefetch(struct py_reader *r, uint64_t *pages, uint32_t *lens, size_t npages);
void pycode_begin(struct py_reader *r);
/* What the frame reading keeps between snapshots (code objects, hints). */
void pyframes_reader_free(struct py_reader *r);

#endif
