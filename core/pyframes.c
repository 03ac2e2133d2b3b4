/*
 * core/pyframes.c — one thread's Python frames, read from outside while the
 * thread runs: the frame chain (frame objects on 3.8–3.10, interpreter
 * frames on 3.11+), its code objects (cached across snapshots), and the
 * checks that tell a torn read from a whole one, with the retries and the
 * last-resort stopped read that follow.  The snapshot around it is
 * core/pystack.c.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/memread.h"
#include "core/procfs.h"
#include "core/pyobj.h"
#include "core/pystack_int.h"
#include "core/tstop.h"
#include "core/util.h"

#define READ_ROUNDS	3	/* of READ_TRIES, the CPU yielded between */

/* ---- frames ------------------------------------------------------------- */

/* The first frame of code c in this snapshot: it holds c's strings. */
static struct code_strs * __attribute__((noinline))
snap_uses(struct py_reader *r, struct code_info *c)
{
	struct code_strs *s = c->strs != NULL ? c->strs : pycode_strs(c);

	if (c->snap_serial != r->generation) {
		c->snap_serial = r->generation;
		*ARRAY_PUSH(r->used, r->nused, r->aused) = c->addr;
		s->refs++;
		*ARRAY_PUSH(r->snap->strs, r->snap->nstrs, r->snap->astrs) = s;
	}
	return s;
}

static inline void
push_frame(struct py_reader *r, struct py_thread *t, size_t *alloc,
    struct code_info *c, int line, bool entry)
{
	struct py_frame *f = ARRAY_PUSH(t->frames, t->nframes, *alloc);
	struct code_strs *s = c->strs;

	if (__builtin_expect(c->snap_serial != r->generation || s == NULL, 0))
		s = snap_uses(r, c);
	*f = (struct py_frame){ .filename = s->filename, .name = s->name,
	    .qualname = s->qualname, .line = line, .code = c->addr, .entry = entry,
	    .code_id = c->serial };
}

void
pyframes_free(struct py_thread *t)
{
	free(t->frames);
	t->frames = NULL;
	t->nframes = t->aframes = 0;
}

/*
 * Brent's cycle detection over a frame chain: a chain that comes back on
 * itself was read while the thread changed it.
 */
struct chain_guard {
	uint64_t mark;
	unsigned power, lam;
};

static bool
chain_loops(struct chain_guard *g, uint64_t frame)
{
	if (frame == g->mark)
		return true;
	if (++g->lam == g->power) {
		g->mark = frame;
		g->power *= 2;
		g->lam = 0;
	}
	return false;
}

/*
 * One read of one thread's stack, and why it cannot be trusted.  Reads do
 * not stop the thread: it runs on while its frames are read one by one, so
 * a frame read late may have returned (and been freed or reused), or be a
 * generator's frame that yielded and lost its caller link, since the frame
 * above it was read.  The chain read then ends early or wanders into
 * frames that are not this thread's stack.
 */
struct walk {
	const char *torn;	/* why this read is torn; NULL if it is not */
	uint64_t at;		/* the address it was seen at */
	uint64_t *seen;		/* frames read, innermost first */
	size_t nseen, aseen;
	size_t aframes;		/* the room of t->frames, kept over tries */
	/* what every read so far touched: re-read at once before a retry */
	uint64_t *hint;
	size_t nhint, ahint;
	/*
	 * 3.11+: the innermost frame, if a thread's own, and the caller and
	 * code it was read with: read again with the state after the walk
	 * (innermost_moved()), in the same system call.
	 */
	uint64_t inner, inner_back, inner_code;
	size_t inner_size;
	/*
	 * 3.11+: the link (f_back's address) of the first frame of the
	 * thread's own but the innermost whose caller is not one -- a
	 * generator's frame, an entry shim -- and the caller it named: read
	 * again with the innermost (read_checks).  A frame's link is written
	 * when its evaluation starts, after the rest of it; the page holding
	 * it is copied forward, so the frame can be copied before the link
	 * was written and its callees above it after they were pushed -- the
	 * old link then names whatever the slot held (3.11 coroutines:
	 * call_soon, called from the C task, linked to the `sleep` coroutine
	 * whose __sleep0 was made in that slot), and nothing else tells.  A
	 * caller of the thread's own sits where the slot check looks.
	 */
	uint64_t link_at, link_was;
	/*
	 * 3.11+: the addresses the walk took its head from: the state's
	 * cframe (3.11-3.12) or current frame, and 3.11-3.12 that cframe's
	 * current frame (else 0).  See read_before_head.
	 */
	uint64_t head_ts, head_cf;
	unsigned long reads0;	/* mem_cache_reads() when the walk began */
	/*
	 * The ranges the checks after the walk read, for the next batch; and
	 * this snapshot's batch copy of them, if the walk may use it (the
	 * first read of a prefetched snapshot).
	 */
	struct post_range want[POST_RANGES];
	size_t nwant;
	const struct post_read *pre;
	struct stack_hint *h;	/* the thread's hint, if it has one */
	bool ds_guess;		/* its data stack's fields are h's (ds_known) */
};

static void __attribute__((noinline))
walk_note_page(struct walk *w, uint64_t addr, size_t len)
{
	if (w->nhint < 256) {
		*ARRAY_PUSH(w->hint, w->nhint, w->ahint) = addr;
		*ARRAY_PUSH(w->hint, w->nhint, w->ahint) = addr + len - 1;
	}
}

/* Remember a frame (or thread state) read, for the checks and the retry. */
static inline void
walk_note(struct walk *w, uint64_t addr, size_t len, bool frame)
{
	if (frame)
		*ARRAY_PUSH(w->seen, w->nseen, w->aseen) = addr;
	/*
	 * The hint is a list of pages (mem_cache_refresh reads each once):
	 * a range on the page noted last adds nothing, and a stack's frames
	 * lie page after page.
	 */
	if (w->nhint < 2 || (w->hint[w->nhint - 1] ^ addr) >= 4096 ||
	    (w->hint[w->nhint - 1] ^ (addr + len - 1)) >= 4096)
		walk_note_page(w, addr, len);
}

static void
walk_torn(struct walk *w, const char *why, uint64_t at)
{
	w->torn = why;
	w->at = at;
}

static bool
walk_saw(const struct walk *w, uint64_t frame)
{
	size_t i;

	for (i = 0; i < w->nseen; i++)
		if (w->seen[i] == frame)
			return true;
	return false;
}

/*
 * A frame's code object that cannot be read as one: the frame was reused,
 * or the code is newer than a page read earlier (imports compile code all
 * the time).  Its pages are read again before the retry.
 */
static void
bad_code(struct walk *w, const struct code_info *c, uint64_t frame)
{
	walk_note(w, c->addr, PYOFF_CODE_SPAN, false);
	if (c->p_filename != 0)
		walk_note(w, c->p_filename, PYOFF_UNICODE_SPAN, false);
	if (c->p_name != 0)
		walk_note(w, c->p_name, PYOFF_UNICODE_SPAN, false);
	if (c->p_qualname != 0)
		walk_note(w, c->p_qualname, PYOFF_UNICODE_SPAN, false);
	walk_torn(w, "a frame without a readable code object", frame);
}

/*
 * Ranges read after the walk, to check it.  They are noted for the next
 * snapshot's batch, and served from this snapshot's batch (struct
 * post_read) where that is sound: every range asked for was read whole
 * there, and the cache has made no system call since the batch -- so
 * every page this walk used was copied by the batch, before these ranges
 * in the same call.  Otherwise they are read now, in one call.
 */
static void
checks_read(struct py_reader *r, struct walk *w, const struct mem_range *rg, size_t n,
    bool *ok)
{
	const struct post_read *p = w->pre;
	size_t i, j, found = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < w->nwant && w->want[j].addr != rg[i].addr; j++)
			;
		if (j == w->nwant && w->nwant < POST_RANGES)
			w->want[w->nwant++] = (struct post_range){ rg[i].addr, rg[i].len, 0, false };
	}
	if (p != NULL && p->generation == r->generation &&
	    mem_cache_reads(r->mc) == r->batch_reads) {
		for (i = 0; i < n; i++) {
			for (j = 0; j < p->n; j++)
				if (p->r[j].addr == rg[i].addr && p->r[j].len == rg[i].len && p->r[j].ok)
					break;
			if (j == p->n)
				break;
			found++;
		}
	}
	if (found < n || n == 0) {
		mem_read_ranges(r->rt->pid, rg, n, ok);
		return;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; p->r[j].addr != rg[i].addr; j++)
			;
		memcpy(rg[i].buf, p->buf + p->r[j].off, rg[i].len);
		ok[i] = true;
	}
}

/* 3.8–3.10: the frame still runs (not returned, not a yielded generator). */
static bool
frame_object_runs(const struct py_offsets *o, const unsigned char *buf)
{
	signed char state = (signed char)buf[o->frame_state];

	return o->frame_state == PYOFF_NONE || state == o->frame_state_running ||
	    (o->frame_state_unwinding != PYOFF_NONE && state == o->frame_state_unwinding);
}

/* 3.8–3.10: a chain of PyFrameObjects, one C evaluation call each. */
static void
read_frame_objects(struct py_reader *r, struct py_thread *t, uint64_t frame,
    unsigned depth, struct walk *w)
{
	const struct py_offsets *o = &r->rt->off;
	unsigned char buf[512];
	size_t fsize = (size_t)o->frame_size;
	struct chain_guard g = { 0, 1, 0 };
	uint64_t last = 0;
	bool last_gen = false;

	if (fsize > sizeof buf)
		fsize = sizeof buf;
	while (frame != 0) {
		struct code_info *c;
		int64_t lasti;	/* a torn read may hold any i32: doubled, it fits */
		int line;

		if (t->nframes >= depth) {
			t->error = xasprintf("stack deeper than %u frames: cut", depth);
			return;
		}
		if (!mem_ptr_ok(frame, 8) || rd_fresh(r, frame, buf, fsize) != 0 ||
		    chain_loops(&g, frame))
			return walk_torn(w, "a frame became unreadable", frame);
		/*
		 * A frame on a thread's stack runs until it returns; one that
		 * does not was freed (its f_back now links the free list) or
		 * is a generator that yielded (f_back cleared).  Only the
		 * innermost may be caught returning, its caller still linked.
		 */
		if (r->check && !frame_object_runs(o, buf) &&
		    (t->nframes > 0 || mem_field_u64(buf, o->frame_back) == 0))
			return walk_torn(w, "a frame returned or a generator yielded", frame);
		walk_note(w, frame, fsize, true);
		lasti = mem_field_i32(buf, o->frame_lasti);
		if (o->version_hex >= 0x030A0000 && lasti >= 0)
			lasti *= 2;	/* 3.10 counts instructions */
		c = pycode_frame(r, frame, mem_field_u64(buf, o->frame_code), PYCODE_AT_UNKNOWN,
		    lasti, &line);
		if (r->check && !c->valid)
			return bad_code(w, c, frame);
		push_frame(r, t, &w->aframes, c, line, true);
		last = frame;
		last_gen = c->generator;
		frame = mem_field_u64(buf, o->frame_back);
	}
	/*
	 * A sampler's walk (batch_codes) served from the pages one system
	 * call copied -- its tick's batch, or a retry's refresh -- or torn.
	 * The checks below cannot tell a chain read over several calls: a
	 * recursion's frame objects move over a few pages, and a frame read
	 * by a call of its own, after the others, had been reused (a run
	 * under load saw 32 `recurse` frames of 31 on 3.8).  The retry reads
	 * every page the walk noted at once, outermost first.
	 */
	if (r->check && r->batch_codes && last != 0 && t->error == NULL &&
	    mem_cache_reads(r->mc) != w->reads0)
		return walk_torn(w, "frames read apart from the batch", last);
	/*
	 * Running, with no caller: the thread's first frame -- or a frame
	 * copied while it was being linked: the target writes f_back before
	 * it marks the frame running (a generator resumed, a frame taken from
	 * the free list), and one copy may see the old f_back (NULL: the chain
	 * ends early) beside the new mark.  Read again past the cache, its
	 * f_back is then the new one (x86-64 keeps stores in order).
	 *
	 * Not for a generator's frame: resumed and suspended hundreds of
	 * thousands of times a second (churn.py genexpr: sum() over one),
	 * its f_back is set and cleared faster than a copy of a frame takes,
	 * and both copies were now and then caught between.  A generator's
	 * frame always has its caller while it runs (gen_send_ex links it),
	 * as 3.11+ says of its own (pyframes_chain_may_end): one last on the
	 * chain lost it.
	 */
	if (r->check && last != 0 && t->error == NULL) {
		struct mem_range rg = { last, buf, fsize };
		bool ok;

		if (last_gen)
			return walk_torn(w, "a generator's frame lost its caller", last);
		checks_read(r, w, &rg, 1, &ok);
		if (!ok || mem_field_u64(buf, o->frame_back) != 0 || !frame_object_runs(o, buf))
			walk_torn(w, "the first frame read was being linked", last);
	}
}

static bool
is_shim(const struct py_offsets *o, int owner)
{
	return (o->frame_owned_by_cstack != PYOFF_NONE && owner == o->frame_owned_by_cstack) ||
	    (o->frame_owned_by_interpreter != PYOFF_NONE && owner == o->frame_owned_by_interpreter);
}

bool
pyframes_chain_may_end(const struct py_offsets *o, int owner, bool is_entry)
{
	if (owner == o->frame_owned_by_generator)
		return false;
	/* 3.15 has no FRAME_OWNED_BY_CSTACK: its shims are all the interpreter's. */
	if (o->frame_owned_by_cstack != PYOFF_NONE || o->frame_owned_by_interpreter != PYOFF_NONE)
		return is_shim(o, owner);
	return is_entry;
}

/*
 * 3.11+: may a frame of this owner be on a running chain?  A generator's
 * frame is, only while its generator executes: one read with its
 * generator suspended was reached through a stale link (a frame slot
 * reused under the read, its `previous` not yet rewritten).  The state
 * comes from the same copy of the page as the frame: read later, a
 * generator that ran when it was copied may have yielded since, which
 * tears nothing.  A frame owned by a frame object has returned.  Returns
 * why not, or NULL.
 */
static const char *
frame_off_chain(struct py_reader *r, uint64_t frame, int owner, bool innermost)
{
	const struct py_offsets *o = &r->rt->off;
	signed char state;

	if (owner == o->frame_owned_by_generator) {
		/* The thread's current frame ran when found; a yield in between keeps its caller. */
		if (o->gen_frame_state == PYOFF_NONE || innermost)
			return NULL;
		if (rd_fresh(r, frame + (uint64_t)o->gen_frame_state, &state, 1) != 0)
			return "a generator became unreadable";
		return state == o->gen_state_executing ? NULL :
		    "a generator's frame on the chain does not run";
	}
	if (o->frame_owned_by_thread != PYOFF_NONE && owner != o->frame_owned_by_thread &&
	    !is_shim(o, owner))
		return "a frame that returned was on the chain";
	return NULL;
}

/*
 * 3.11+: the innermost frame, read again past the cache, still holds the
 * code and caller it was read with.  Its slot at the top of the data stack
 * is reused all the time (each call pushes its frame there and sets its
 * code before its `previous`): a copy caught in between, or copied after
 * the thread had moved on, links a new frame to an old caller.
 */
static bool
innermost_moved(struct py_reader *r, const struct walk *w, bool read, const unsigned char *again)
{
	const struct py_offsets *o = &r->rt->off;

	return !read || mem_field_u64(again, o->frame_back) != w->inner_back ||
	    mem_field_u64(again, o->frame_code) != w->inner_code;
}

/*
 * 3.11+: a whole chain ends at the thread's first frame, which the data
 * stack holds at the start of its root chunk (3.11-3.13 skip one slot of
 * it so that it is never freed: data[0] or data[1]).  A chain read that
 * ends elsewhere lost its bottom to a stale link.
 */
static void
check_base(struct py_reader *r, uint64_t chunk, uint64_t base, struct walk *w)
{
	const struct py_offsets *o = &r->rt->off;
	uint64_t previous = chunk, data;
	unsigned hops;

	if (o->chunk_data == PYOFF_NONE || base == 0)
		return;
	for (hops = 0; previous != 0; hops++) {
		chunk = previous;
		if (hops > 64 || !mem_ptr_ok(chunk, 8) ||
		    rd_fresh(r, chunk + (uint64_t)o->chunk_previous, &previous, sizeof previous) != 0)
			return walk_torn(w, "the thread's data stack became unreadable", chunk);
	}
	data = chunk + (uint64_t)o->chunk_data;
	if (base != data && base != data + 8)
		walk_torn(w, "the frames end above the thread's first frame", base);
}

/* 3.11–3.13: the chunk and top of the thread's data stack when the walk began. */
struct dstack {
	uint64_t chunk, top;
};

/* Where slot_holds_other_call checks: the chunk's data to its end (slot_bounds_of). */
struct slot_bounds {
	uint64_t lo, hi;
};

/*
 * 3.11–3.13: `callee` is the frame of the data stack read just before
 * `frame`, also of the data stack, with at most generator frames (in
 * their generators) and entry shims (on the C stack) between them on the
 * chain.  It was pushed while `frame` was the data stack's top frame (a
 * generator runs on behalf of the frame that resumed it, and pushes its
 * own calls on the data stack), so it sits right where `frame` ends
 * (co_framesize; 3.11 computes the same from its code).  A callee
 * elsewhere -- below its caller, or above where the caller ends -- was
 * read before the thread returned below it, and the slot its chain
 * points at now holds another call: one from another caller
 * (asyncio.sleep, called from a coroutine, where the event loop's
 * call_soon was).  Checked where both frames lie in the chunk the walk
 * began in (slot_bounds_of).
 */
static inline bool
slot_holds_other_call(const struct slot_bounds *b, uint64_t frame, const struct code_info *c,
    uint64_t callee)
{
	uint64_t span = b->hi - b->lo;

	/* unsigned: an address below lo, callee 0 included, wraps above the span */
	if (frame - b->lo >= span || callee - b->lo >= span)
		return false;
	if (frame >= callee)
		return true;
	return c->framesize > 0 && callee != frame + (uint64_t)c->framesize * 8;
}

/*
 * Where the check above applies: the chunk the walk began in, from its
 * data to its end -- not only below the top the state showed.  That copy
 * of the state may be older than the frames' (a page of frames read after
 * it), and a caller's slot on a page copied forward is copied before its
 * callees above it: copied just before the thread pushed into it, it still
 * holds the frame that was there, above that top.  3.11 coroutines in the
 * main thread showed `sleep` (its frame made there, then moved into its
 * coroutine) in the slot where `call_soon` ran, under _call_soon.  A
 * consistent chain passes the check above the top all the same.  The top
 * bounds it when the chunk's size cannot be read; none (0, 0) without one.
 * The size is a plain read: the chunk's header page is walked with its
 * first frames and so stays in a sampler's batch (live pages are read
 * again each tick); one whose walk stops short of it keeps it live by
 * this read.  A stale size from a chunk reused at that address only
 * moves the bound: too low checks fewer frames, too high may call a
 * consistent walk torn (read again), never the reverse.
 */
#define CHUNK_SIZE_MAX	(1ull << 30)

static struct slot_bounds
slot_bounds_of(struct py_reader *r, const struct dstack *ds)
{
	const struct py_offsets *o = &r->rt->off;
	uint64_t lo, size = 0;

	if (ds->top == 0 || o->chunk_data == PYOFF_NONE)
		return (struct slot_bounds){ 0, 0 };
	lo = ds->chunk + (uint64_t)o->chunk_data;
	if (o->chunk_size != PYOFF_NONE && mem_ptr_ok(ds->chunk, 8) &&
	    rd(r, ds->chunk + (uint64_t)o->chunk_size, &size, sizeof size) == 0 &&
	    size <= CHUNK_SIZE_MAX && ds->chunk + size >= ds->top && ds->chunk + size > lo)
		return (struct slot_bounds){ lo, ds->chunk + size };
	return ds->top > lo ? (struct slot_bounds){ lo, ds->top } : (struct slot_bounds){ 0, 0 };
}

/*
 * 3.13: where the thread's first frame would lie if the walk's chunk is
 * its root one (data[0] or data[1]), 0 elsewhere.  That frame's caller is
 * the entry frame of the thread's outermost evaluation, on the C stack,
 * which ends the chain: it is not read, one page of ~6 a sampler's tick
 * pins.  (3.11-3.12 read that page anyway, for the cframe; 3.14+ end
 * differently.)  Whether the chunk is the root one is asked only of a
 * frame found there (root_chunk).
 */
static uint64_t
root_data(const struct py_reader *r, const struct dstack *ds)
{
	const struct py_offsets *o = &r->rt->off;

	if (o->tstate_cframe != PYOFF_NONE || o->frame_owned_by_cstack == PYOFF_NONE ||
	    o->frame_owned_by_interpreter != PYOFF_NONE || o->chunk_data == PYOFF_NONE ||
	    ds->chunk == 0)
		return 0;
	return ds->chunk + (uint64_t)o->chunk_data;
}

static bool
root_chunk(struct py_reader *r, const struct dstack *ds)
{
	uint64_t previous;

	return rd_fresh(r, ds->chunk + (uint64_t)r->rt->off.chunk_previous, &previous,
	    sizeof previous) == 0 && previous == 0;
}

/*
 * 3.11+: frames taken from a run (struct frame_run).  A sampler's tick
 * reads a stack whose frames below the innermost have not moved, and took
 * each of them apart again: ~200 instructions a frame, most of a 30-deep
 * tick's own work.  A walk records the frames of the thread's own that it
 * reads one below the other (run_record) and keeps them, with the bytes of
 * the stack they lie in (run_save).  A later walk that reaches one of them
 * compares the bytes from the lowest up to that frame's header with the
 * ones kept (run_reuse).  The same bytes are the same fields for every
 * frame there -- links, code, offsets, owner -- so reading them would make
 * the same frames, lines and checks of them, as long as what else those
 * depend on is the same too: each code object still trusted as
 * pycode_frame trusts it (the same reading of it: its serial), the slot
 * check's bounds, the thread's root frame not among them (it ends the
 * walk).  The one check that involves a frame outside the run, the slot of
 * the highest reused frame against the callee the walk comes from, is
 * made.  Nothing is taken from an earlier tick that this tick's bytes do
 * not say.
 */
#define RUN_BYTES_MAX	(64u * 1024)
#define RUN_TRIES	2	/* reuses tried a walk: a frame whose call moved fails one */

enum { REC_NONE, REC_OPEN, REC_SHUT };

/* A frame that is not one of the run's ends it: later frames are not below. */
static inline void
run_end(int *state)
{
	if (*state == REC_OPEN)
		*state = REC_SHUT;
}

/*
 * A frame the walk made of its bytes, just pushed (t's last); a frame that
 * is not a thread's own, or not below the last, ends the run.
 */
static inline void
run_record(struct frame_run *rec, int *state, uint64_t addr, const struct run_frame *f,
    const struct py_thread *t, size_t fsize)
{
	if (*state == REC_SHUT)
		return;
	if (rec->n > 0 && (addr >= rec->addr[rec->n - 1] ||
	    rec->addr[0] + fsize - addr > RUN_BYTES_MAX)) {
		*state = REC_SHUT;
		return;
	}
	if (rec->n == rec->a) {
		size_t a = rec->a;

		array_reserve(&rec->addr, &a, rec->n + 1, sizeof *rec->addr);
		a = rec->a;
		array_reserve(&rec->pf, &a, rec->n + 1, sizeof *rec->pf);
		a = rec->a;
		array_reserve(&rec->f, &a, rec->n + 1, sizeof *rec->f);
		rec->a = a;
	}
	rec->addr[rec->n] = addr;
	rec->pf[rec->n] = t->frames[t->nframes - 1];
	rec->f[rec->n++] = *f;
	*state = REC_OPEN;
}

/* Each page part of [lo, end): *next is where this one ends. */
static inline uint64_t
run_page_end(uint64_t a, uint64_t end)
{
	uint64_t next = (a | 4095u) + 1;

	return next < end ? next : end;
}

/* After a walk that reused nothing: keep what it recorded, with its bytes. */
static void
run_save(struct py_reader *r, struct stack_hint *h, size_t fsize, const struct slot_bounds *slots,
    bool check)
{
	const struct py_offsets *o = &r->rt->off;
	struct frame_run *rec = &h->rec, old;
	uint64_t lo, end, a, next;
	size_t k;

	if (rec->n < 2)
		return;
	lo = rec->addr[rec->n - 1];
	end = rec->addr[0] + fsize;
	array_reserve(&rec->bytes, &rec->abytes, (size_t)(end - lo), 1);
	for (a = lo; a < end; a = next) {
		const void *p;

		next = run_page_end(a, end);
		if ((p = mem_cache_peek(r->mc, a, (size_t)(next - a))) == NULL)
			return;
		memcpy(rec->bytes + (a - lo), p, (size_t)(next - a));
	}
	/* The bytes the walk read: a page read again since (a frame out of its extent) differs. */
	for (k = 0; k < rec->n; k++) {
		const struct run_frame *f = &rec->f[k];
		const unsigned char *fp = rec->bytes + (rec->addr[k] - lo);

		if (mem_field_u64(fp, o->frame_back) != f->back ||
		    (mem_field_u64(fp, o->frame_code) & ~o->frame_code_tags) != f->code ||
		    mem_field_u64(fp, o->frame_lasti) != f->instr || fp[o->frame_owner] != f->owner ||
		    (o->frame_is_entry != PYOFF_NONE && (fp[o->frame_is_entry] != 0) != f->entry))
			return;
	}
	rec->slot_lo = slots->lo;
	rec->slot_hi = slots->hi;
	rec->check = check;
	rec->moved = r->codes_moved;
	old = h->run;
	h->run = *rec;
	*rec = old;
}

/*
 * The walk is at `frame`, the next to read, with room for `room` more
 * frames: if the run holds it and the bytes below it are unchanged, push
 * it and the run's frames below it, note them read, and return how many;
 * else 0 (nothing done that matters: the walk reads on).
 */
static size_t
run_reuse(struct py_reader *r, struct py_thread *t, struct walk *w, const struct frame_run *run,
    uint64_t frame, size_t fsize, size_t room, const struct slot_bounds *slots, bool check,
    uint64_t data, uint64_t callee)
{
	uint64_t lo = run->addr[run->n - 1], end = frame + fsize, a, next;
	const struct code_info *prev = NULL;
	size_t i = 0, j = run->n, k, count;

	while (i < j) {	/* the first at or below frame: highest address first */
		size_t mid = (i + j) / 2;

		if (run->addr[mid] > frame)
			i = mid + 1;
		else
			j = mid;
	}
	if (i == run->n || run->addr[i] != frame)
		return 0;
	count = run->n - i;
	if (count > room || run->moved != r->codes_moved || run->check != check ||
	    run->slot_lo != slots->lo || run->slot_hi != slots->hi ||
	    (data != 0 && data + 8 >= lo && data <= frame))
		return 0;
	for (k = i; k < run->n; k++) {
		const struct code_info *c = run->f[k].c;

		if (c == prev)	/* a recursion */
			continue;
		if (c->serial != run->f[k].serial || !c->valid || (c->generation != r->generation &&
		    (!r->batch_codes || r->tick_ns - c->checked_ns >= PYCODE_TRUST_NS)))
			return 0;
		prev = c;
	}
	if (check && slot_holds_other_call(slots, frame, run->f[i].c, callee))
		return 0;	/* the walk reads it, and finds it torn */
	for (a = lo; a < end; a = next) {
		const void *p;

		next = run_page_end(a, end);
		if ((p = mem_cache_peek_fresh(r->mc, a, (size_t)(next - a))) == NULL ||
		    memcmp(p, run->bytes + (a - lo), (size_t)(next - a)) != 0)
			return 0;
	}
	/*
	 * The frames as pushed then: the same reading of each code object
	 * (serial) has the same strings.  This snapshot holds them too.
	 */
	for (k = i, prev = NULL; k < run->n; k++)
		if (run->f[k].c != prev && (prev = run->f[k].c)->snap_serial != r->generation)
			snap_uses(r, run->f[k].c);
	array_reserve(&t->frames, &w->aframes, t->nframes + count, sizeof *t->frames);
	memcpy(&t->frames[t->nframes], &run->pf[i], count * sizeof *t->frames);
	t->nframes += count;
	array_reserve(&w->seen, &w->aseen, w->nseen + count, sizeof *w->seen);
	memcpy(&w->seen[w->nseen], &run->addr[i], count * sizeof *w->seen);
	w->nseen += count;
	for (a = end; a > lo; a = next) {	/* innermost first, as a walk notes them */
		next = (a - 1) & ~(uint64_t)4095;
		if (next < lo)
			next = lo;
		walk_note(w, next, (size_t)(a - next), false);
	}
	return count;
}

/* 3.11+: _PyInterpreterFrames, several per C evaluation call. */
static void
walk_interp_frames(struct py_reader *r, struct py_thread *t, uint64_t frame,
    unsigned depth, struct walk *w, uint64_t *base, const struct dstack *ds,
    struct mem_window *win)
{
	const struct py_offsets *o = &r->rt->off;
	/*
	 * The layout in locals: this loop runs for every frame of every
	 * tick, and each store into the snapshot would make the compiler
	 * load them from *o again.  PYOFF_NONE equals no owner byte.
	 */
	const int64_t at_back = o->frame_back, at_code = o->frame_code, at_instr = o->frame_lasti;
	const int64_t at_owner = o->frame_owner, at_entry = o->frame_is_entry;
	const int64_t by_thread = o->frame_owned_by_thread, by_cstack = o->frame_owned_by_cstack;
	const int64_t by_interp = o->frame_owned_by_interpreter;
	const uint64_t code_tags = o->frame_code_tags, adaptive = (uint64_t)o->code_code_adaptive;
	const bool check = r->check;
	const struct slot_bounds slots = check ? slot_bounds_of(r, ds) : (struct slot_bounds){ 0, 0 };
	unsigned char buf[PYOFF_FRAME_SPAN];
	size_t fsize = (size_t)o->frame_size;
	unsigned steps = 0;
	struct chain_guard g = { 0, 1, 0 };
	uint64_t last = 0, callee = 0, data = root_data(r, ds);
	int owner = -1, rec_state = REC_NONE;
	bool is_entry = false;
	const char *why;
	struct frame_run *run = NULL, *rec = NULL;
	unsigned run_tries = 0;
	size_t reused = 0;

	if (fsize > sizeof buf)
		fsize = sizeof buf;
	if (w->h != NULL) {
		run = w->h->run.n > 0 ? &w->h->run : NULL;
		rec = &w->h->rec;
		rec->n = 0;
	}
	while (frame != 0) {
		struct code_info *c;
		const unsigned char *fp;
		uint64_t code, instr, back;
		int64_t addrq;
		int line;

		if (t->nframes >= depth || ++steps > 4 * depth) {
			t->error = xasprintf("stack deeper than %u frames: cut", depth);
			return;
		}
		/* below the innermost, frames kept from an earlier walk (run_reuse) */
		if (run != NULL && steps > 1 && frame <= run->addr[0] &&
		    frame >= run->addr[run->n - 1] && run_tries++ < RUN_TRIES) {
			size_t n = run_reuse(r, t, w, run, frame, fsize,
			    depth - t->nframes < 4 * depth - steps + 1 ? depth - t->nframes :
			    4 * depth - steps + 1, &slots, check, data, callee);

			if (n > 0) {
				const struct run_frame *f = &run->f[run->n - 1];

				reused += n;
				steps += (unsigned)n - 1;
				last = callee = *base = run->addr[run->n - 1];
				owner = f->owner;
				is_entry = f->entry;
				frame = f->back;
				run = NULL;
				continue;
			}
		}
		/* served in place from the cache's page, not copied; else read */
		if (!mem_ptr_ok(frame, 8) || chain_loops(&g, frame) ||
		    ((fp = mem_window_peek(win, frame, fsize)) == NULL &&
		    (fp = mem_cache_peek_window(r->mc, frame, fsize, win)) == NULL &&
		    rd_fresh(r, frame, (void *)(fp = buf), fsize) != 0))
			return walk_torn(w, "a frame became unreadable", frame);
		/* every field now: a later read may bring a newer copy of its page */
		back = mem_field_u64(fp, at_back);
		code = mem_field_u64(fp, at_code) & ~code_tags;
		instr = mem_field_u64(fp, at_instr);
		/* the frame whose link led here, not the innermost: see struct walk, link_at */
		if (check && owner == by_thread && steps > 2 && fp[at_owner] != by_thread &&
		    w->link_at == 0 &&
		    !(back == 0 && (fp[at_owner] == by_cstack || fp[at_owner] == by_interp))) {
			w->link_at = last + (uint64_t)at_back;
			w->link_was = frame;
		}
		owner = fp[at_owner];
		is_entry = at_entry != PYOFF_NONE && fp[at_entry];
		walk_note(w, frame, fsize, true);
		last = frame;
		if (check && steps == 1 && owner == by_thread) {
			/* checked after the walk, with the state (check_unchanged) */
			w->inner = frame;
			w->inner_back = back;
			w->inner_code = mem_field_u64(fp, at_code);
			w->inner_size = fsize;
			if (w->ds_guess && (frame < slots.lo || frame >= slots.hi))
				w->h->ds_thread = 0;	/* out of that chunk: see ds_known */
		}
		/* a thread's own frame is never off its chain (frame_off_chain) */
		if (check && owner != by_thread &&
		    (why = frame_off_chain(r, frame, owner, steps == 1)) != NULL)
			return walk_torn(w, why, frame);
		if (owner == by_cstack || owner == by_interp) {	/* is_shim() */
			/*
			 * 3.12+: a shim frame below each C call's first frame:
			 * FRAME_OWNED_BY_CSTACK in 3.12–3.13,
			 * FRAME_OWNED_BY_INTERPRETER in 3.14–3.15 (ceval.c's
			 * entry frame; 3.15 also ends each thread's chain in a
			 * base frame of that owner).  3.14's CSTACK (4) is
			 * assigned nowhere but skipped as CPython's readers do.
			 */
			if (t->nframes > 0)
				t->frames[t->nframes - 1].entry = true;
			run_end(&rec_state);
			frame = back;
			continue;
		}
		/* 3.14: f_executable is a _PyStackRef; its low bits are tags (code, above). */
		addrq = (int64_t)(instr - (code + adaptive));
		/* a frame that runs outside the bytecode a cached code had: checked now */
		c = pycode_frame(r, frame, code, addrq,
		    addrq < 0 || addrq > (int64_t)PYCODE_MAX_TABLE * 8 ? -1 : addrq, &line);
		if (!c->valid) {
			/*
			 * 3.11–3.13: a frame of a thread or a generator always
			 * holds code (3.13 puts None only in its entry shims,
			 * skipped above).  One that does not is a stale link
			 * into memory reused since: a C stack's old entry
			 * frame, now the locals of other C calls, read on
			 * through whatever pointers they hold.
			 */
			if (check && o->version_hex < 0x030E0000)
				return bad_code(w, c, frame);
			/* 3.14+: f_executable may be something other than code. */
			callee = 0;
			run_end(&rec_state);
			frame = back;
			continue;
		}
		if (owner == by_thread) {
			if (check && slot_holds_other_call(&slots, frame, c, callee))
				return walk_torn(w, "a frame's slot holds another call than its callee's "
				    "caller", frame);
			callee = frame;
		}
		if (c->shim) {	/* checked as a callee above, never shown */
			run_end(&rec_state);
			frame = back;
			continue;
		}
		push_frame(r, t, &w->aframes, c, line, is_entry);
		*base = frame;
		if (data != 0 && (frame == data || frame == data + 8) &&
		    owner == by_thread && root_chunk(r, ds)) {
			owner = (int)by_cstack;	/* the chain ends in its shim */
			break;
		}
		if (rec != NULL && owner == by_thread)
			run_record(rec, &rec_state, frame, &(struct run_frame){ back, code, instr, c,
			    c->serial, (unsigned char)owner, is_entry }, t, fsize);
		else
			run_end(&rec_state);
		frame = back;
	}
	/* The outermost frame is always the first of its C call. */
	if (t->nframes > 0)
		t->frames[t->nframes - 1].entry = true;
	if (r->check && last != 0 && !pyframes_chain_may_end(o, owner, is_entry))
		walk_torn(w, owner == o->frame_owned_by_generator ?
		    "a generator's frame lost its caller" :
		    "the frames end before the thread's entry frame", last);
	if (rec != NULL && reused == 0 && w->torn == NULL && t->error == NULL)
		run_save(r, w->h, fsize, &slots, check);
}

/* The frames of a 3.11+ thread, each page's served through a window. */
static void
read_interp_frames(struct py_reader *r, struct py_thread *t, uint64_t frame,
    unsigned depth, struct walk *w, uint64_t *base, const struct dstack *ds)
{
	struct mem_window win = { 0 };

	walk_interp_frames(r, t, frame, depth, w, base, ds, &win);
	mem_window_close(r->mc, &win);
}

/*
 * The innermost frame of a thread state, 0 if none.  3.11–3.12: each call
 * of the evaluation loop publishes its _PyCFrame (on the C stack) before
 * it sets that cframe's current_frame; a cframe that is not the root one
 * (previous set) but holds no frame is caught in between.
 */
static uint64_t
current_frame(struct py_reader *r, const unsigned char *ts, struct walk *w)
{
	const struct py_offsets *o = &r->rt->off;
	uint64_t cframe, frame = 0, previous = 0;

	if (o->tstate_cframe != PYOFF_NONE) {
		cframe = mem_field_u64(ts, o->tstate_cframe);
		if (!mem_ptr_ok(cframe, 8) ||
		    rd_fresh(r, cframe + (uint64_t)o->cframe_current_frame, &frame, sizeof frame) != 0 ||
		    rd_fresh(r, cframe + (uint64_t)o->cframe_previous, &previous, sizeof previous) != 0) {
			walk_torn(w, "the thread's current frame is unreadable", cframe);
			return 0;
		}
		if (frame == 0 && previous != 0 && r->check)
			walk_torn(w, "the thread was entering the evaluation loop", cframe);
		return frame;
	}
	return mem_field_u64(ts, o->tstate_frame);
}

/*
 * After a walk: the thread's current frame and (3.11+) data-stack chunk,
 * read again past the cache.  A different chunk may mean the frames read
 * were freed.  A different current frame is fine when the thread has
 * returned into a frame we read, or has gone deeper from one (its new
 * frames lead back onto the chain read within MAX_HOPS links, each read
 * afresh): the chain read is still what lies below.  Returns why not, or
 * NULL.
 */
#define MAX_HOPS	32

/* Does the chain from `frame` lead back onto the one read within MAX_HOPS links? */
static bool
leads_back(struct py_reader *r, uint64_t frame, uint64_t frame0, const struct walk *w)
{
	const struct py_offsets *o = &r->rt->off;
	unsigned hops;

	for (hops = 0; hops < MAX_HOPS; hops++) {
		if (frame == frame0 || walk_saw(w, frame))
			return true;
		if (!mem_ptr_ok(frame, 8) ||
		    mem_read_u64(r->rt->pid, frame + (uint64_t)o->frame_back, &frame) != 0)
			break;
	}
	return false;
}

/*
 * The ranges rg[0..n) of a check after the walk and, on the first look,
 * the innermost frame and the link (w->link_at) again, in one system call
 * (rg has room for two more).
 * When either cannot be trusted the walk is torn (at it) and that is
 * returned -- looking again cannot mend it; else NULL, and a later look
 * does not read them again.
 */
static const char *
read_checks(struct py_reader *r, struct walk *w, struct mem_range *rg, size_t n, bool *ok)
{
	unsigned char again[PYOFF_FRAME_SPAN];
	uint64_t link = 0;
	size_t in = n, ln = n;
	bool inner = w->inner != 0;

	if (inner)
		rg[n++] = (struct mem_range){ w->inner, again, w->inner_size };
	if (w->link_at != 0)
		rg[ln = n++] = (struct mem_range){ w->link_at, &link, sizeof link };
	checks_read(r, w, rg, n, ok);
	w->pre = NULL;	/* a look again is later: read now */
	if (inner && innermost_moved(r, w, ok[in], again)) {
		walk_torn(w, "the innermost frame was being reused", w->inner);
		return w->torn;
	}
	if (w->link_at != 0 && (!ok[ln] || link != w->link_was)) {
		walk_torn(w, "a frame's link was being written", w->link_at);
		return w->torn;
	}
	w->inner = 0;
	w->link_at = 0;
	return NULL;
}

/*
 * 3.11-3.12, the first look: the state's cframe, the current frame of the
 * cframe the walk began with, and the innermost frame, again -- not the
 * rest of the state.  While the state still points to that cframe and its
 * current frame leads back onto the chain read, the frames below are the
 * ones read: a data-stack chunk taken since holds frames above them.  The
 * state's cframe must be read too: a cframe lives on the C stack of its
 * evaluation call, and once that call returns (a coroutine suspends) its
 * memory still says the frame it ran -- the walk's own first frame --
 * however far the thread has moved on.  The rest of the state (on 3.11
 * its fields span two pages for the main thread) is read only when this
 * fails.  True when the look is conclusive; *why then says what was
 * wrong, or is NULL.
 */
static bool
cframe_unchanged(struct py_reader *r, const struct py_thread *t, uint64_t frame0,
    uint64_t cframe0, struct walk *w, const char **why)
{
	const struct py_offsets *o = &r->rt->off;
	uint64_t cframe = 0, current = 0;
	struct mem_range rg[4];
	bool ok[4];

	/* the state's cframe first: a current frame read after it is of that cframe */
	rg[0] = (struct mem_range){ t->tstate + (uint64_t)o->tstate_cframe, &cframe, sizeof cframe };
	rg[1] = (struct mem_range){ cframe0 + (uint64_t)o->cframe_current_frame, &current,
	    sizeof current };
	if ((*why = read_checks(r, w, rg, 2, ok)) != NULL)
		return true;
	return ok[0] && ok[1] && cframe == cframe0 && leads_back(r, current, frame0, w);
}

/*
 * After a walk: the thread's current frame and (3.11+) data-stack chunk,
 * read again past the cache.  A different chunk may mean the frames read
 * were freed.  A different current frame is fine when the thread has
 * returned into a frame we read, or has gone deeper from one (its new
 * frames lead back onto the chain read within MAX_HOPS links, each read
 * afresh): the chain read is still what lies below.  Returns why not, or
 * NULL.
 */
static const char *
changed_since(struct py_reader *r, const struct py_thread *t, uint64_t frame0,
    uint64_t chunk0, uint64_t cframe0, struct walk *w)
{
	const struct py_offsets *o = &r->rt->off;
	unsigned char ts[PYOFF_TSTATE_SPAN];
	int64_t at = o->tstate_frame != PYOFF_NONE ? o->tstate_frame : o->tstate_cframe;
	int64_t lo = at, hi = at + 8, ch = o->tstate_datastack_chunk;
	size_t n = 1, cf = 0;
	uint64_t frame, chunk = 0, current = 0;
	struct mem_range rg[4];
	bool ok[4], current_ok = false;
	const char *why;

	if (o->tstate_cframe != PYOFF_NONE && mem_ptr_ok(cframe0, 8) &&
	    cframe_unchanged(r, t, frame0, cframe0, w, &why))
		return why;
	/*
	 * One system call: the state's current frame (or cframe) and chunk;
	 * 3.11-3.12 the cframe's current frame, from the cframe the walk
	 * began with -- good if the state still points to that one, read
	 * again if not; and, on the first look, the innermost frame again.
	 */
	if (ch != PYOFF_NONE) {
		lo = ch < lo ? ch : lo;
		hi = ch + 8 > hi ? ch + 8 : hi;
	}
	rg[0] = (struct mem_range){ t->tstate + (uint64_t)lo, ts + lo, (size_t)(hi - lo) };
	if (mem_ptr_ok(cframe0, 8))
		rg[cf = n++] = (struct mem_range){ cframe0 + (uint64_t)o->cframe_current_frame,
		    &current, sizeof current };
	if ((why = read_checks(r, w, rg, n, ok)) != NULL)
		return why;
	current_ok = cf != 0 && ok[cf];
	if (!ok[0])
		return "the thread ended";
	if (ch != PYOFF_NONE)
		chunk = mem_field_u64(ts, ch);
	if (chunk != chunk0)
		return "the thread moved to another data-stack chunk";
	frame = mem_field_u64(ts, at);
	if (o->tstate_cframe != PYOFF_NONE && frame == cframe0 && current_ok)
		frame = current;
	else if (o->tstate_cframe != PYOFF_NONE && (!mem_ptr_ok(frame, 8) ||
	    mem_read_u64(r->rt->pid, frame + (uint64_t)o->cframe_current_frame, &frame) != 0))
		return "the thread's current frame became unreadable";
	return leads_back(r, frame, frame0, w) ? NULL : "the current frame changed";
}

/*
 * 3.11+, a sampler's first read of a thread: was every page the walk used
 * copied by this snapshot's batch no later than its head?  The batch
 * reads the pages of the threads' heads last (pyframes_prefetch), the
 * state's before its cframe's, and the kernel copies in order.  Then the
 * head was read after every frame: the frames below the one it names are
 * its callers, pushed before it and running while it runs, so their
 * copies are theirs -- unless the innermost frame itself was pushed after
 * its page was copied, which the innermost frame read again after the
 * batch tells (a generator's frame copied before it was resumed has lost
 * its caller, and the walk ends torn).  The state's cframe, read before
 * that cframe's current frame, was live when the head was copied: a
 * cframe is read dead only after its call returned, and its memory then
 * still names a frame that was the head after that.
 */
static bool
read_before_head(struct py_reader *r, const struct walk *w)
{
	unsigned ts, cf, max;

	if (w->pre == NULL || w->pre->generation != r->generation ||
	    mem_cache_reads(r->mc) != r->batch_reads ||
	    r->rt->off.frame_model == PY_FRAMES_OBJECTS || w->head_ts == 0)
		return false;
	/*
	 * A frame below pushed after its copy means the innermost was too --
	 * seen only if the innermost's copy is no later than any other's:
	 * its page must be the batch's first the walk used (a 3.13 entry
	 * shim on a C-stack page copied before it once linked call_soon to
	 * sleep).
	 */
	if (w->nseen == 0 || mem_cache_rank(r->mc, w->seen[0]) != mem_cache_rank_min(r->mc))
		return false;
	max = mem_cache_rank_max(r->mc);
	ts = mem_cache_rank(r->mc, w->head_ts);
	if (ts == 0)
		return false;
	if (w->head_cf == 0)
		return max <= ts;
	cf = mem_cache_rank(r->mc, w->head_cf);
	return cf > ts && max <= cf;
}

/*
 * The state after a walk is itself read while the thread runs: a thread
 * entering the evaluation loop publishes its new _PyCFrame (3.11–3.12)
 * before that frame's current_frame is set.  Look again, cheaply, before
 * throwing the whole walk away.
 */
static void
check_unchanged(struct py_reader *r, const struct py_thread *t, uint64_t frame0,
    uint64_t chunk0, uint64_t cframe0, struct walk *w)
{
	const char *why = NULL;
	struct mem_range rg[2];
	bool ok[2];
	int look;

	if (read_before_head(r, w)) {
		if (w->inner != 0 || w->link_at != 0)
			read_checks(r, w, rg, 0, ok);
		return;
	}
	for (look = 0; look < 3; look++) {
		if ((why = changed_since(r, t, frame0, chunk0, cframe0, w)) == NULL)
			return;
		if (w->torn != NULL)
			return;	/* read_checks: looking again cannot mend it */
	}
	walk_torn(w, why, frame0);
}

/*
 * A sampler's first read of a thread whose state has its data stack's
 * fields on a page of their own (3.11.7's main thread: its state, in the
 * runtime's static data, straddles a page, and they come last): take
 * them from the thread's last read of them, and leave that page unread --
 * one pin of ~4 a tick.  They serve the checks against tearing alone, and
 * none of those goes wrong on older values:
 *  - slot_holds_other_call checks within the chunk, to its end, not to
 *    the top; an older chunk that the thread has left only bounds fewer
 *    frames -- and the walk then forgets it (its innermost frame of the
 *    thread's own lies outside: the next read reads the state whole);
 *  - the root chunk is never freed while its thread lives, and an older
 *    chunk leads to it or is unreadable (check_base: torn, read again);
 *  - the full checks read the state's chunk afresh (a different one:
 *    torn, read again).
 * Every other read reads the whole state, and keeps what it found.
 */
static bool
ds_known(const struct py_reader *r, const struct py_thread *t, const struct walk *w)
{
	uint64_t head_end = t->tstate + r->tstate_head_used - 1;

	return w->pre != NULL && w->h != NULL && w->h->ds_thread != 0 &&
	    w->h->ds_thread == t->thread_id && r->tstate_head_used < r->tstate_used &&
	    (head_end ^ (t->tstate + r->tstate_used - 1)) >= 4096;
}

static void
read_thread_frames_once(struct py_reader *r, struct py_thread *t, unsigned depth,
    struct walk *w)
{
	const struct py_offsets *o = &r->rt->off;
	unsigned char ts[PYOFF_TSTATE_SPAN];
	size_t tsize = r->tstate_used;
	uint64_t frame, chunk = 0, base = 0;
	struct dstack ds = { 0, 0 };

	t->nframes = 0;	/* its room is kept: w->aframes */
	free(t->error);
	t->error = NULL;
	w->torn = NULL;
	w->nseen = 0;
	w->nwant = 0;
	w->inner = 0;
	w->link_at = 0;
	w->head_ts = w->head_cf = 0;
	mem_cache_rank_reset(r->mc);
	w->reads0 = mem_cache_reads(r->mc);
	if (ds_known(r, t, w))
		tsize = r->tstate_head_used;
	walk_note(w, t->tstate, r->tstate_used, false);	/* a retry reads it whole, at once */
	if (rd_fresh(r, t->tstate, ts, tsize) != 0)
		return walk_torn(w, "the thread ended", t->tstate);
	w->ds_guess = tsize < r->tstate_used;
	if (w->ds_guess) {
		ds.chunk = w->h->ds_chunk;
		ds.top = w->h->ds_top;
	} else {
		if (o->tstate_datastack_chunk != PYOFF_NONE)
			ds.chunk = mem_field_u64(ts, o->tstate_datastack_chunk);
		if (o->tstate_datastack_top != PYOFF_NONE)
			ds.top = mem_field_u64(ts, o->tstate_datastack_top);
		if (w->h != NULL) {
			w->h->ds_chunk = ds.chunk;
			w->h->ds_top = ds.top;
			w->h->ds_thread = t->thread_id;
		}
	}
	chunk = ds.chunk;
	if (o->frame_model != PY_FRAMES_OBJECTS) {
		w->head_ts = t->tstate + (uint64_t)(o->tstate_cframe != PYOFF_NONE ?
		    o->tstate_cframe : o->tstate_frame);
		if (o->tstate_cframe != PYOFF_NONE)
			w->head_cf = mem_field_u64(ts, o->tstate_cframe) +
			    (uint64_t)o->cframe_current_frame;
	}
	frame = current_frame(r, ts, w);
	if (w->torn != NULL)
		return;
	if (o->frame_model == PY_FRAMES_OBJECTS)
		read_frame_objects(r, t, frame, depth, w);
	else
		read_interp_frames(r, t, frame, depth, w, &base, &ds);
	if (w->torn == NULL && t->error == NULL && r->check)
		check_base(r, chunk, base, w);
	if (w->torn == NULL && r->check)
		check_unchanged(r, t, frame, chunk, o->tstate_cframe != PYOFF_NONE ?
		    mem_field_u64(ts, o->tstate_cframe) : 0, w);
}

/*
 * Before a retry, re-read at once every page the earlier reads touched,
 * outermost frames first and the thread state last.  A caller outlives
 * its callee: frames each found running, read from the outside in, were
 * all on the stack when the innermost was read; read the other way, the
 * outer ones may have returned in between.
 */
static void
refresh_outer_first(struct py_reader *r, struct walk *w)
{
	size_t i, j;

	for (i = 0, j = w->nhint; i + 1 < j; i++, j--) {
		uint64_t a = w->hint[i];

		w->hint[i] = w->hint[j - 1];
		w->hint[j - 1] = a;
	}
	mem_cache_refresh(r->mc, w->hint, w->nhint);
	w->nhint = 0;	/* the next read notes its own pages */
}


/*
 * A running thread can change its stack under the read: read it again
 * (only the pages of thread states and frames: code objects and names stay
 * cached) a few times, then show what the last read found, marked partial.
 */
/* The process has exited (reaped or not): reading again is pointless. */
static bool
process_gone(struct py_reader *r)
{
	unsigned char byte;

	return mem_read(r->rt->pid, r->rt->runtime, &byte, 1) != 0 && errno == ESRCH;
}

/*
 * Between rounds of reads.  A whole round torn is mostly a thread that is
 * not running: preempted in the middle of changing its stack (a loaded
 * machine takes it off the CPU for milliseconds), it shows the same torn
 * state to every read.  Wait, up to 20 ms, until it has run again; then
 * the next round reads a state it has moved on to.
 */
static void
wait_until_ran(struct py_reader *r, pid_t tid)
{
	uint64_t ran = procfs_thread_ran_ns(r->rt->pid, tid), t0 = now_ns();

	sched_yield();
	if (ran == 0)
		return;
	while (procfs_thread_ran_ns(r->rt->pid, tid) == ran && now_ns() - t0 < 20000000) {
		struct timespec ts = { 0, 200000 };

		nanosleep(&ts, NULL);
	}
}

/* The hint of a thread state; a new one, or one unused by this snapshot, if none. */
static struct stack_hint *
find_hint(struct py_reader *r, uint64_t tstate)
{
	struct stack_hint *h = NULL;
	size_t i;

	for (i = 0; i < r->nhints; i++) {
		if (r->hints[i].tstate == tstate)
			h = &r->hints[i];
		else if (h == NULL && r->nhints >= MAX_THREADS && r->hints[i].generation != r->generation)
			h = &r->hints[i];	/* a thread gone since: reuse */
	}
	if (h == NULL && r->nhints < MAX_THREADS) {
		h = ARRAY_PUSH(r->hints, r->nhints, r->ahints);
		memset(h, 0, sizeof *h);
	}
	if (h != NULL && h->tstate != tstate) {
		h->tstate = tstate;
		h->n = 0;
		h->stop_useless = false;
		h->ds_thread = 0;
		h->run.n = 0;
	}
	if (h != NULL)
		h->generation = r->generation;
	return h;
}

/*
 * Every read was torn: the thread changes its stack faster than it can be
 * read (a tight recursion, a generator resumed in a loop), or this reader
 * kept losing the CPU in the middle of a read.  Stop that one thread, read
 * it once, and let it go: a consistent stack for a stop of tens of
 * microseconds, taken only here.  If it cannot be stopped (another tracer,
 * no permission) the read stays torn and is shown partial.
 */
static void
read_stopped(struct py_reader *r, struct py_thread *t, unsigned depth, struct walk *w)
{
	char *cause = NULL;

	if (tstop_stop(t->tid, STOP_TIMEOUT_MS, &cause) != FP_OK) {
		free(t->stop_error);
		t->stop_error = cause;
		return;
	}
	mem_cache_clear(r->mc);
	refresh_outer_first(r, w);
	w->pre = NULL;
	read_thread_frames_once(r, t, depth, w);
	tstop_resume(t->tid);
	t->stopped_read = true;
}

/* What the checks of this read read: the next batch reads it again (pyframes_prefetch). */
static void
post_keep(struct stack_hint *h, const struct walk *w)
{
	struct post_read *p = h->post;
	size_t i, off = 0;

	if (p == NULL)
		p = h->post = xcalloc(1, sizeof *p);
	p->n = 0;
	p->generation = 0;
	for (i = 0; i < w->nwant; i++) {
		if (w->want[i].len > POST_BYTES - off)
			break;
		p->r[p->n] = w->want[i];
		p->r[p->n].off = off;
		p->r[p->n++].ok = false;
		off += w->want[i].len;
	}
}

/* Is page number `pg` among the n sorted ones? */
static bool
page_among(const uint64_t *sorted, size_t n, uint64_t pg)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sorted[mid] == pg)
			return true;
		if (sorted[mid] < pg)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Sort the page numbers of n addresses, a handful: insertion. */
static void
sort_pages(uint64_t *v, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		v[i] /= 4096;
	for (i = 1; i < n; i++) {
		uint64_t x = v[i];

		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/*
 * The order of a sampler's batch: the pages of the last snapshot's
 * threads' heads last -- every state's before any cframe's -- so that
 * a walk served from the batch took its head after its frames
 * (read_before_head).  Stable otherwise.
 */
static void
heads_last(const struct py_reader *r, uint64_t *pages, uint32_t *lens, size_t npages)
{
	enum { SMALL = 128 };
	uint64_t sts[32], scf[32], spg[SMALL], *ts, *cf, *pg;
	uint32_t sln[SMALL], *ln;
	unsigned char scls[SMALL], *cls;
	size_t nts = 0, ncf = 0, i, k, n = 0;
	int c;

	/* up to two pages of each state (below) */
	ts = r->nhints <= 16 ? sts : xmalloc(2 * r->nhints * sizeof *ts);
	cf = r->nhints <= 32 ? scf : xmalloc(r->nhints * sizeof *cf);
	for (i = 0; i < r->nhints; i++) {
		if (r->hints[i].generation + 1 != r->generation)
			continue;
		/*
		 * The whole state: 3.11's main one (in the runtime's static
		 * data) spans two pages, its data stack's fields on the
		 * second.  Read before the frames, that page was the walk's
		 * first, and no walk of it took the short check.
		 */
		if (r->hints[i].head_ts != 0) {
			uint64_t head = r->hints[i].head_ts, start = r->hints[i].tstate;
			uint64_t end = start + r->tstate_used - 1;	/* < a page */

			ts[nts++] = head;
			if ((start ^ head) >= 4096)
				ts[nts++] = start;
			else if ((end ^ head) >= 4096)
				ts[nts++] = end;
		}
		if (r->hints[i].head_cf != 0)
			cf[ncf++] = r->hints[i].head_cf;
	}
	if (nts > 0 && npages > 1) {
		bool small = npages <= SMALL;

		pg = small ? spg : xmalloc(npages * sizeof *pg);
		ln = small ? sln : xmalloc(npages * sizeof *ln);
		cls = small ? scls : xmalloc(npages);
		sort_pages(ts, nts);
		sort_pages(cf, ncf);
		for (i = 0; i < npages; i++)
			cls[i] = page_among(cf, ncf, pages[i] / 4096) ? 2 :
			    page_among(ts, nts, pages[i] / 4096) ? 1 : 0;
		for (c = 0; c < 3; c++)
			for (k = 0; k < npages; k++)
				if (cls[k] == c) {
					pg[n] = pages[k];
					ln[n++] = lens[k];
				}
		memcpy(pages, pg, npages * sizeof *pages);
		memcpy(lens, ln, npages * sizeof *lens);
		if (!small) {
			free(cls);
			free(ln);
			free(pg);
		}
	}
	if (ts != sts)
		free(ts);
	if (cf != scf)
		free(cf);
}

void
pyframes_prefetch(struct py_reader *r, uint64_t *pages, uint32_t *lens, size_t npages)
{
	/* A few threads' checks fit on the stack: this runs every tick. */
	struct mem_range srg[64];
	bool sok[64];
	size_t want = r->nhints * POST_RANGES + 1, i, j, n = 0;
	struct mem_range *rg = want <= 64 ? srg : xmalloc(want * sizeof *rg);
	bool *ok = want <= 64 ? sok : xmalloc(want * sizeof *ok);

	memset(ok, 0, want * sizeof *ok);
	heads_last(r, pages, lens, npages);

	/* The threads of the last snapshot: the others' ranges are of no use now. */
	for (i = 0; i < r->nhints; i++) {
		struct post_read *p = r->hints[i].post;

		if (p == NULL || r->hints[i].generation + 1 != r->generation)
			continue;
		for (j = 0; j < p->n; j++)
			rg[n++] = (struct mem_range){ p->r[j].addr, p->buf + p->r[j].off, p->r[j].len };
	}
	pycode_refresh(r, pages, lens, npages, rg, n, ok);
	for (i = 0, n = 0; i < r->nhints; i++) {
		struct post_read *p = r->hints[i].post;

		if (p == NULL || r->hints[i].generation + 1 != r->generation)
			continue;
		for (j = 0; j < p->n; j++)
			p->r[j].ok = ok[n++];
		p->generation = r->generation;
	}
	r->batch_reads = mem_cache_reads(r->mc);
	if (rg != srg) {
		free(ok);
		free(rg);
	}
}

void
pyframes_read(struct py_reader *r, struct py_thread *t, unsigned depth)
{
	struct stack_hint *h = find_hint(r, t->tstate);
	struct walk w = { 0 };
	unsigned attempt, tries;
	uint64_t t0;

	t->partial = false;
	/* t->frames may hold an earlier read's frames, or a recycled slot's: its room is kept */
	t->nframes = 0;
	w.aframes = t->aframes;
	w.h = h;
	if (h != NULL) {
		w.hint = h->addrs;
		w.nhint = w.ahint = h->n;
		h->addrs = NULL;
		/* A sampler reads the same stacks again: the last read's room, no growing. */
		w.seen = h->seen;
		w.aseen = h->aseen;
		h->seen = NULL;
		if (h->depth > 0)
			array_reserve(&t->frames, &w.aframes, h->depth, sizeof *t->frames);
	}
	/*
	 * Up to READ_ROUNDS rounds of r->tries reads.  On a loaded machine a
	 * whole round can fall into one bad stretch (this reader descheduled
	 * in the middle of each read); yielding the CPU between rounds starts
	 * the next one on a fresh time slice.  Costs nothing when reads agree.
	 */
	tries = r->tries > 1 ? r->tries * READ_ROUNDS : r->tries;
	if (r->quick_tries > 0)
		tries = r->quick_tries;
	for (attempt = 1; ; attempt++) {
		w.pre = NULL;
		if (attempt > 1 || !r->prefetched) {
			mem_cache_expire(r->mc);
			refresh_outer_first(r, &w);
		} else {
			w.nhint = 0;	/* this read notes its own pages */
			w.pre = h != NULL ? h->post : NULL;
		}
		read_thread_frames_once(r, t, depth, &w);
		if (w.torn == NULL || attempt >= tries || process_gone(r))
			break;
		t->retries++;
		if (r->quick_tries > 0)
			continue;
		if (attempt % r->tries == 0) {
			wait_until_ran(r, t->tid);
			continue;
		}
		/*
		 * Reads back to back land in the same burst of changes (a
		 * recursion unwinding): from the middle try of a round on, let
		 * the thread run 20 us between reads.  Spin: a sleep that short
		 * costs a loaded machine milliseconds of scheduling.
		 */
		if (attempt % r->tries >= r->tries / 2)
			for (t0 = now_ns(); now_ns() - t0 < 20000;)
				;
	}
	if (w.torn != NULL && r->may_stop && t->tid > 0 && (h == NULL || !h->stop_useless) &&
	    !process_gone(r)) {
		read_stopped(r, t, depth, &w);
		if (h != NULL && t->stopped_read && w.torn != NULL)
			h->stop_useless = true;
	}
	if (h != NULL) {
		h->addrs = w.hint;
		h->n = w.nhint;
		h->seen = w.seen;
		h->aseen = w.aseen;
		h->depth = t->nframes;
		h->head_ts = w.head_ts;
		h->head_cf = w.head_cf;
		post_keep(h, &w);
	} else {
		free(w.hint);
		free(w.seen);
	}
	t->aframes = w.aframes;
	if (w.torn == NULL)
		return;
	t->partial = true;
	free(t->error);
	if (t->stopped_read)
		t->error = xasprintf("the stack could not be read whole, not even with the "
		    "thread stopped (%s, at 0x%llx)", w.torn, (unsigned long long)w.at);
	else
		t->error = xasprintf("the stack changed under each of %u reads (the last: %s, "
		    "at 0x%llx)%s", attempt, w.torn, (unsigned long long)w.at,
		    t->stop_error != NULL ? "; stopping it failed" : "");
}

static void
run_free(struct frame_run *run)
{
	free(run->addr);
	free(run->pf);
	free(run->f);
	free(run->bytes);
}

void
pyframes_reader_free(struct py_reader *r)
{
	size_t i;

	for (i = 0; i < r->acodes; i++)
		pycode_clear(&r->codes[i]);
	for (i = 0; i < r->nhints; i++) {
		free(r->hints[i].addrs);
		free(r->hints[i].seen);
		free(r->hints[i].post);
		run_free(&r->hints[i].run);
		run_free(&r->hints[i].rec);
	}
	free(r->hints);
	free(r->memo);
	free(r->codes);
	free(r->unchecked);
	free(r->used);
}
