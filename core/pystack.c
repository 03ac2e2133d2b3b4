#include "config.h"

#include "core/pystack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/memread.h"
#include "core/procfs.h"
#include "core/pystack_int.h"
#include "core/pythreads.h"
#include "core/tstop.h"
#include "core/unwind.h"
#include "core/util.h"

#define DEFAULT_DEPTH	4096
#define SYS_futex_nr	202	/* x86_64 */
#define PREFETCH_PAGES	128	/* pages re-read at once by a no_proc snapshot */
#define NOSTOP_TRIES	2	/* reads of a stack by a reader that may not stop it */
#define PTHREAD_SPAN	2048	/* bytes of a struct pthread searched for its tid */

struct tid_info {
	pid_t tid;
	struct proc_thread_stat st;
	char *comm;
	bool used;		/* matched to a Python thread */
	bool stopped;		/* we stopped it (--block) */
};

/* ---- threads ------------------------------------------------------------ */

/*
 * 3.8–3.10 keep only the pthread_t (the address of glibc's struct pthread).
 * Find where that structure keeps the kernel tid: an offset at which every
 * Python thread's struct pthread holds one of the process's tids, a
 * different one for each struct.  Word-aligned offsets are tried first,
 * then the others: the upper half of a pointer into the mappings near the
 * top of the address space is 0x7fxx, a tid in that range once the pid
 * counter wrapped, and struct pthread opens with pointers to itself, so
 * without the "different" and the order every thread took that one tid.
 * One struct alone proves an offset only by holding the pid (the main
 * thread's tid); an offset it merely allows is used but not kept.
 */
static int64_t
pthread_tid_offset_in(const unsigned char *bufs, const bool *readable,
    const struct py_thread *threads, size_t n, const struct tid_info *tids, size_t ntids,
    pid_t pid, int64_t off, bool *proved)
{
	size_t i, j, nstructs = 0;
	bool has_pid = false;

	for (i = 0; i < n; i++) {
		int32_t v;
		bool found = false, first = true;

		if (!readable[i])
			continue;
		v = mem_field_i32(bufs + i * PTHREAD_SPAN, off);
		for (j = 0; j < ntids && !found; j++)
			found = tids[j].tid == v;
		if (!found)
			return -1;
		for (j = 0; j < i; j++) {
			if (!readable[j])
				continue;
			if (threads[j].thread_id == threads[i].thread_id)
				first = false;	/* two states of one OS thread */
			else if (mem_field_i32(bufs + j * PTHREAD_SPAN, off) == v)
				return -1;
		}
		nstructs += first;
		has_pid |= v == pid;
	}
	*proved = nstructs >= 2 || has_pid;
	return off;
}

static int64_t
find_pthread_tid_offset(struct py_reader *r, struct py_thread *threads, size_t n,
    const struct tid_info *tids, size_t ntids)
{
	unsigned char *bufs;
	bool *readable, proved = false;
	int64_t off, found = -1;
	size_t i, nread = 0;
	int pass;

	if (r->pthread_tid_off >= 0 || n == 0)
		return r->pthread_tid_off;
	bufs = xmalloc(n * PTHREAD_SPAN);
	readable = xcalloc(n, sizeof *readable);
	for (i = 0; i < n; i++)
		if (mem_ptr_ok(threads[i].thread_id, 8) &&
		    rd(r, threads[i].thread_id, bufs + i * PTHREAD_SPAN, PTHREAD_SPAN) == 0) {
			readable[i] = true;
			nread++;
		}
	for (pass = 0; pass < 2 && nread > 0 && found < 0; pass++)
		for (off = pass * 4; off + 4 <= PTHREAD_SPAN && found < 0; off += 8)
			found = pthread_tid_offset_in(bufs, readable, threads, n, tids, ntids,
			    r->rt->pid, off, &proved);
	if (found >= 0 && proved)
		r->pthread_tid_off = found;
	free(readable);
	free(bufs);
	return found;
}

static struct tid_info *
find_tid(struct tid_info *tids, size_t n, pid_t tid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tids[i].tid == tid)
			return &tids[i];
	return NULL;
}

/* GIL holder and the address range of the GIL structure. */
static void
read_gil(struct py_reader *r, uint64_t interp, uint64_t *holder, uint64_t *gil)
{
	const struct py_offsets *o = &r->rt->off;
	uint64_t g = 0, last = 0;
	int32_t locked = 0;

	*holder = 0;
	if (o->runtime_gil != PYOFF_NONE)
		g = r->rt->runtime + (uint64_t)o->runtime_gil;
	else if (o->interp_gil_ptr != PYOFF_NONE)
		rd_fresh(r, interp + (uint64_t)o->interp_gil_ptr, &g, sizeof g);
	*gil = mem_ptr_ok(g, 8) ? g : 0;
	if (o->runtime_tstate_current != PYOFF_NONE) {
		/* 3.8–3.11: the thread state that holds the GIL, NULL if none. */
		rd_fresh(r, r->rt->runtime + (uint64_t)o->runtime_tstate_current, holder,
		    sizeof *holder);
		return;
	}
	if (*gil == 0)
		return;
	if (rd_fresh(r, *gil + (uint64_t)o->gil_locked, &locked, sizeof locked) == 0 &&
	    locked == 1 &&
	    rd_fresh(r, *gil + (uint64_t)o->gil_last_holder, &last, sizeof last) == 0)
		*holder = last;
}

bool
py_reader_gil_wait(const struct py_reader *r, long nr, uint64_t arg0)
{
	const struct py_offsets *o = &r->rt->off;
	uint64_t size = o->gil_size > 0 ? (uint64_t)o->gil_size : 256;

	/* pthread_cond_wait / mutex lock on the GIL's own futex words. */
	return r->gil != 0 && nr == SYS_futex_nr && arg0 >= r->gil && arg0 < r->gil + size;
}

/* Only asked while someone holds the GIL: nobody waits for a free one. */
static bool
waits_on_gil(struct py_reader *r, pid_t tid)
{
	uint64_t arg0;
	long nr;

	return r->gil != 0 && tid != 0 && procfs_thread_syscall(r->rt->pid, tid, &nr, &arg0) &&
	    py_reader_gil_wait(r, nr, arg0);
}

static void
free_thread(struct py_thread *t)
{
	free(t->stop_error);
	pyframes_free(t);
	free(t->name);
	free(t->error);
	native_frames_free(t->native, t->nnative);
	free(t->native_error);
}

/* What a snapshot holds besides its threads' frames' room: given back. */
static void
snapshot_empty(struct py_snapshot *snap)
{
	size_t i;

	for (i = 0; i < snap->nthreads; i++) {
		struct py_frame *frames = snap->threads[i].frames;
		size_t aframes = snap->threads[i].aframes;

		snap->threads[i].frames = NULL;
		free_thread(&snap->threads[i]);
		snap->threads[i].frames = frames;
		snap->threads[i].aframes = aframes;
		snap->threads[i].nframes = 0;
	}
	if (snap->nthreads > snap->ninit)
		snap->ninit = snap->nthreads;
	snap->nthreads = 0;
	for (i = 0; i < snap->nstrs; i++)
		pycode_strs_release(snap->strs[i]);
	snap->nstrs = 0;
}

void
py_reader_recycle(struct py_reader *r, struct py_snapshot *snap)
{
	if (snap == NULL)
		return;
	snapshot_empty(snap);
	py_snapshot_free(r->spare);
	r->spare = snap;
}

void
py_snapshot_free(struct py_snapshot *snap)
{
	size_t i;

	if (snap == NULL)
		return;
	for (i = 0; i < snap->nthreads; i++)
		free_thread(&snap->threads[i]);
	for (; i < snap->ninit; i++)
		free(snap->threads[i].frames);	/* a recycled slot's room */
	free(snap->threads);
	for (i = 0; i < snap->nstrs; i++)
		pycode_strs_release(snap->strs[i]);
	free(snap->strs);
	free(snap);
}

/*
 * The interpreter read at the start of a snapshot is still there at its
 * end.  A process that execs keeps its pid but not its memory: what was
 * read at the old runtime's addresses since is not its state.
 */
static bool
same_interpreter(struct py_reader *r, uint64_t interp)
{
	uint64_t now;

	return mem_read_u64(r->rt->pid, r->rt->runtime + (uint64_t)r->rt->off.runtime_interp_head,
	    &now) == 0 && now == interp;
}

/* A new thread at the end of snap, zeroed; a slot used before keeps its frames' room. */
static struct py_thread *
push_thread(struct py_snapshot *snap)
{
	struct py_thread *t = ARRAY_PUSH(snap->threads, snap->nthreads, snap->athreads);
	bool used = snap->nthreads <= snap->ninit;
	struct py_frame *frames = used ? t->frames : NULL;
	size_t aframes = used ? t->aframes : 0;

	memset(t, 0, sizeof *t);
	t->frames = frames;
	t->aframes = aframes;
	if (!used)
		snap->ninit = snap->nthreads;
	return t;
}

/*
 * A sampler's tick: the threads of the last snapshot, if the list is
 * still theirs.  A thread state is linked both ways, a new one at the
 * head: a thread added makes the old head's prev non-NULL, one removed
 * rewrites a neighbour's link (or, the head removed, the next one's prev
 * to NULL), and a state freed and taken again by a new thread has another
 * thread id.  So when every state read holds the links and id it had, the
 * list is the one the interpreter's head leads to.  A change in the middle
 * of these reads is seen by the next tick, as with a read of the head.
 * False (and no threads) to read the list from the interpreter.
 */
static bool
known_list(struct py_reader *r, struct py_snapshot *snap)
{
	const struct py_offsets *o = &r->rt->off;
	size_t tsize = r->tstate_head_used, i, n = r->nknown;	/* links and id */

	if (n == 0 || o->tstate_prev == PYOFF_NONE)
		return false;
	for (i = 0; i < n; i++) {
		const struct known_thread *k = &r->known[i];
		unsigned char ts[PYOFF_TSTATE_SPAN];
		struct py_thread *t;

		if (rd_fresh(r, k->tstate, ts, tsize) != 0 ||
		    mem_field_u64(ts, o->tstate_prev) != (i > 0 ? r->known[i - 1].tstate : 0) ||
		    mem_field_u64(ts, o->tstate_next) != (i + 1 < n ? r->known[i + 1].tstate : 0) ||
		    mem_field_u64(ts, o->tstate_thread_id) != k->thread_id) {
			snap->nthreads = 0;
			return false;
		}
		t = push_thread(snap);
		t->tstate = k->tstate;
		t->thread_id = k->thread_id;
		t->tid = k->tid;
	}
	return true;
}

/* The list just read, for the next tick's known_list (threads not sorted yet). */
static void
keep_list(struct py_reader *r, const struct py_snapshot *snap)
{
	size_t i;

	r->nknown = 0;
	for (i = 0; i < snap->nthreads; i++)
		*ARRAY_PUSH(r->known, r->nknown, r->aknown) = (struct known_thread){
			snap->threads[i].tstate, snap->threads[i].thread_id, snap->threads[i].tid };
}

static int
cmp_threads(const void *a, const void *b)
{
	const struct py_thread *x = a, *y = b;

	if (x->is_main != y->is_main)
		return x->is_main ? -1 : 1;
	if ((x->tid == 0) != (y->tid == 0))
		return x->tid == 0 ? 1 : -1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void
unwind_one(struct py_reader *r, struct py_thread *t, bool stopped_already,
    unsigned depth)
{
	char *cause = NULL;

	if (t->tid == 0) {
		t->native_error = xstrdup("no OS thread matched: native frames unavailable");
		return;
	}
	/* Caches filled while it runs: the stop lasts only the reading. */
	if (!stopped_already)
		unwinder_warm(r->unwinder, t->tid);
	if (!stopped_already && tstop_stop(t->tid, STOP_TIMEOUT_MS, &cause) != FP_OK) {
		t->native_error = cause;
		return;
	}
	/* Read the Python frames again while stopped, so both stacks agree. */
	mem_cache_clear(r->mc);
	if (t->tstate != 0)
		pyframes_read(r, t, depth);
	if (unwinder_thread_pcs(r->unwinder, t->tid, &t->native, &t->nnative,
	    &cause) != FP_OK)
		t->native_error = cause;
	/* Held only for the reading: names are looked up after. */
	if (!stopped_already)
		tstop_resume(t->tid);
	unwinder_symbolize(r->unwinder, t->native, t->nnative);
}

int
py_reader_snapshot(struct py_reader *r, const struct py_snapshot_opts *opts,
    struct py_snapshot **snapp, char **cause)
{
	const struct py_offsets *o = &r->rt->off;
	pid_t pid = r->rt->pid, *tidv = NULL;
	struct tid_info *tids = NULL;
	struct py_snapshot *snap;
	size_t ntids = 0, i;
	uint64_t interp, tstate, holder, gil;
	unsigned depth = opts->max_depth ? opts->max_depth : DEFAULT_DEPTH;
	bool no_proc, known;
	int rc;

	*snapp = NULL;
	r->generation++;
	r->tick_ns = now_ns();
	/* Without /proc only where the tids can be known without it. */
	no_proc = opts->no_proc && !opts->block && !opts->native &&
	    (o->tstate_native_thread_id != PYOFF_NONE || r->pthread_tid_off >= 0);
	if (no_proc) {
		/*
		 * A sampler looks again and again: every page the last look
		 * read afresh (thread states, frames, the GIL's words) is read
		 * again at once, in one system call, and the walk then finds
		 * most of what it needs in the cache.  Code objects and their
		 * strings are not: they are cached whole by address, and
		 * checked in one batch at the end (pycode_check).
		 */
		uint64_t pages[PREFETCH_PAGES];
		uint32_t lens[PREFETCH_PAGES];
		size_t npages = mem_cache_pages(r->mc, pages, lens, PREFETCH_PAGES, true);

		mem_cache_clear(r->mc);
		pyframes_prefetch(r, pages, lens, npages);
		r->prefetched = npages > 0;
	} else {
		r->prefetched = false;
		mem_cache_clear(r->mc);
	}
	/* States first: once anything is stopped, every thread looks stopped. */
	if (!no_proc && (rc = procfs_tids(pid, &tidv, &ntids, cause)) != FP_OK)
		return rc;
	tids = ntids > 0 ? xcalloc(ntids, sizeof *tids) : NULL;	/* a sampler's tick has none */
	for (i = 0; i < ntids; i++) {
		tids[i].tid = tidv[i];
		/* The name comes with the state: one file per thread, not two. */
		if (procfs_thread_stat(pid, tidv[i], &tids[i].st))
			tids[i].comm = xstrdup(tids[i].st.comm);
	}
	free(tidv);

	if (r->spare != NULL) {
		snap = r->spare;	/* emptied: py_reader_recycle */
		r->spare = NULL;
		snap->native = snap->blocked = false;
	} else {
		snap = xcalloc(1, sizeof *snap);
	}
	snap->pid = pid;
	snap->native = opts->native;
	snap->blocked = opts->block;
	/* A sampler's tick began microseconds ago: one clock read a tick fewer. */
	snap->taken_ns = no_proc ? r->tick_ns : now_ns();
	r->snap = snap;
	r->batch_codes = no_proc;
	pycode_begin(r);
	r->may_stop = r->stop_allowed && !r->never_stop && !opts->block && !opts->native;
	r->quick_tries = r->never_stop ? NOSTOP_TRIES : 0;
	/* Not snprintf: a sampler takes thousands of snapshots a second. */
	_Static_assert(sizeof snap->version == sizeof r->rt->version, "one size");
	memcpy(snap->version, r->rt->version, sizeof snap->version);

	if (opts->native && r->unwinder == NULL &&
	    (rc = unwinder_open(pid, &r->unwinder, cause)) != FP_OK)
		goto fail;
	if (opts->block) {
		for (i = 0; i < ntids; i++) {
			char *why = NULL;

			rc = tstop_stop(tids[i].tid, STOP_TIMEOUT_MS, &why);
			if (rc == FP_OK) {
				tids[i].stopped = true;
			} else if (procfs_exists(pid) && rc != FP_EEXITED) {
				fail(cause, rc, "cannot stop thread %d of process %d: %s",
				    (int)tids[i].tid, (int)pid, why);
				free(why);
				goto fail;
			}
			free(why);
		}
	}

	/* A sampler finds it in the pages just re-read; the first look asks the runtime. */
	interp = no_proc ? r->interp : 0;
	if (interp == 0 && (rc = pyruntime_main_interp(r->rt, &interp, cause)) != FP_OK)
		goto fail;
	r->interp = interp;
	holder = 0;
	if (!opts->no_gil) {
		read_gil(r, interp, &holder, &gil);
		r->gil = gil;
	}
	known = no_proc && known_list(r, snap);
	if (known)
		tstate = 0;	/* the list is read */
	else if (rd_fresh(r, interp + (uint64_t)o->interp_tstate_head, &tstate, sizeof tstate) != 0) {
		rc = procfs_exists(pid) ?
		    fail(cause, FP_ERR, "process %d: cannot read the thread list", (int)pid) :
		    fail(cause, FP_EEXITED, "process %d exited while being read", (int)pid);
		goto fail;
	}
	while (tstate != 0) {
		unsigned char ts[PYOFF_TSTATE_SPAN];
		struct py_thread *t;
		size_t tsize = r->tstate_used;

		if (snap->nthreads >= MAX_THREADS || !mem_ptr_ok(tstate, 8) ||
		    rd_fresh(r, tstate, ts, tsize) != 0)
			break;
		t = push_thread(snap);
		t->tstate = tstate;
		t->thread_id = mem_field_u64(ts, o->tstate_thread_id);
		if (o->tstate_native_thread_id != PYOFF_NONE)
			t->tid = (pid_t)mem_field_i32(ts, o->tstate_native_thread_id);
		tstate = mem_field_u64(ts, o->tstate_next);
		/* A cycle means we raced with thread creation/exit. */
		for (i = 0; i + 1 < snap->nthreads; i++)
			if (snap->threads[i].tstate == tstate)
				tstate = 0;
	}
	/* 3.8-3.10: a known thread keeps the tid found for it (one page fewer). */
	for (i = 0; i < snap->nthreads && known; i++)
		known = snap->threads[i].tid != 0;
	if (o->tstate_native_thread_id == PYOFF_NONE && !known) {
		int64_t off = find_pthread_tid_offset(r, snap->threads, snap->nthreads, tids, ntids);

		for (i = 0; i < snap->nthreads && off >= 0; i++) {
			int32_t tid;

			if (rd_fresh(r, snap->threads[i].thread_id + (uint64_t)off,
			    &tid, sizeof tid) == 0)
				snap->threads[i].tid = tid;
		}
	}
	keep_list(r, snap);

	for (i = 0; i < snap->nthreads; i++) {
		struct py_thread *t = &snap->threads[i];
		struct tid_info *ti = find_tid(tids, ntids, t->tid);

		if (no_proc) {
			/* the caller knows the states and names */
		} else if (ti == NULL) {
			t->tid = 0;	/* a Python thread whose OS thread is gone or unmatched */
			t->os_state = '?';
		} else {
			ti->used = true;
			t->os_state = ti->st.state;
			t->cpu_ticks = ti->st.utime + ti->st.stime;
			t->name = ti->comm ? xstrdup(ti->comm) : NULL;
		}
		t->is_main = t->tid == pid;
		pyframes_read(r, t, depth);
		if (opts->no_gil)
			t->gil = GIL_UNKNOWN;
		else if (t->tstate == holder)
			t->gil = GIL_HELD;
		else if (holder != 0 && !no_proc && waits_on_gil(r, t->tid))
			t->gil = GIL_WAITING;
		else
			t->gil = GIL_NONE;
	}
	/* A code object known by its address was replaced since: read the stacks again. */
	if (r->batch_codes && pycode_check(r) > 0) {
		r->batch_codes = false;
		for (i = 0; i < snap->nthreads; i++)
			pyframes_read(r, &snap->threads[i], depth);
	}
	r->batch_codes = false;
	/* Python's own names, where threading has them; the OS names stand for the rest. */
	if (!no_proc)
		pythreads_name(r->names, r->mc, interp, snap->threads, snap->nthreads);

	if (opts->native) {
		for (i = 0; i < snap->nthreads; i++)
			unwind_one(r, &snap->threads[i], opts->block, depth);
		/* OS threads Python does not know (BLAS pools, CUDA, ...). */
		for (i = 0; i < ntids; i++) {
			struct py_thread *t;

			if (tids[i].used)
				continue;
			t = push_thread(snap);
			t->tid = tids[i].tid;
			t->is_main = t->tid == pid;
			t->os_state = tids[i].st.state;
			t->cpu_ticks = tids[i].st.utime + tids[i].st.stime;
			t->name = tids[i].comm ? xstrdup(tids[i].comm) : NULL;
			t->gil = holder != 0 && waits_on_gil(r, t->tid) ? GIL_WAITING : GIL_NONE;
			unwind_one(r, t, opts->block, depth);
		}
		for (i = 0; i < snap->nthreads; i++) {
			struct py_thread *t = &snap->threads[i];
			size_t k;

			for (k = 0; k < t->nnative && t->gil == GIL_NONE; k++)
				if (t->native[k].function != NULL &&
				    strstr(t->native[k].function, "take_gil") != NULL)
					t->gil = GIL_WAITING;
		}
	}
	if (snap->nthreads > 1)	/* threads is NULL when none was read: no qsort(NULL) */
		qsort(snap->threads, snap->nthreads, sizeof *snap->threads, cmp_threads);
	rc = FP_OK;
	/* What was read from a process that is gone is not its state: say so. */
	if (!no_proc && !procfs_exists(pid))
		rc = fail(cause, FP_EEXITED, "process %d exited while being read", (int)pid);
	else if (!no_proc && !same_interpreter(r, interp))
		rc = fail(cause, FP_EEXITED, "process %d replaced its Python while being read (it ran "
		    "another program with exec, or shut its interpreter down): attach to it again",
		    (int)pid);
fail:
	for (i = 0; i < ntids; i++) {
		if (tids[i].stopped)
			tstop_resume(tids[i].tid);
		free(tids[i].comm);
	}
	free(tids);
	r->snap = NULL;
	if (rc != FP_OK) {
		if (rc != FP_EEXITED && !procfs_exists(pid))
			rc = fail(cause, FP_EEXITED, "process %d exited while being read", (int)pid);
		py_snapshot_free(snap);
		return rc;
	}
	*snapp = snap;
	return FP_OK;
}

int
py_reader_open(pid_t pid, struct py_reader **rp, char **cause)
{
	struct py_reader *r;
	const char *check;
	int rc;

	*rp = NULL;
	r = xcalloc(1, sizeof *r);
	r->pthread_tid_off = -1;
	check = getenv("FP_STACK_CHECK");
	r->check = check == NULL || strcmp(check, "0") != 0;
	r->tries = check != NULL && strcmp(check, "once") == 0 ? 1 : READ_TRIES;
	r->stop_allowed = check == NULL || strcmp(check, "1") == 0;
	if ((rc = pyruntime_open(pid, &r->rt, cause)) != FP_OK) {
		free(r);
		return rc;
	}
	r->mc = mem_cache_new(pid, 1024);
	r->names = pythreads_new(r->rt);
	r->tstate_used = py_offsets_tstate_used(&r->rt->off);
	r->tstate_head_used = py_offsets_tstate_head_used(&r->rt->off);
	*rp = r;
	return FP_OK;
}

void
py_reader_may_stop(struct py_reader *r, bool may)
{
	r->never_stop = !may;
}

const struct pyruntime *
py_reader_runtime(const struct py_reader *r)
{
	return r->rt;
}

void
py_reader_close(struct py_reader *r)
{
	if (r == NULL)
		return;
	pyframes_reader_free(r);
	py_snapshot_free(r->spare);
	free(r->known);
	if (r->unwinder != NULL)
		unwinder_close(r->unwinder);
	mem_cache_free(r->mc);
	pythreads_free(r->names);
	pyruntime_close(r->rt);
	free(r);
}
