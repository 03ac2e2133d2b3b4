/*
 * memread — read another process's memory without stopping it
 * (process_vm_readv).  A read either fills the whole buffer or fails;
 * callers treat every value read as untrusted.
 */
#ifndef FP_MEMREAD_H
#define FP_MEMREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 0 on success, else -1 with errno (EFAULT: unmapped, ESRCH: gone, EPERM). */
int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int mem_read_u64(pid_t pid, uint64_t addr, uint64_t *value);

/*
 * A page cache for one consistent look at a process: reads are served from
 * whole 4 KiB pages read once each, so walking 600 frames costs tens of
 * system calls instead of hundreds.  mem_cache_clear() forgets everything
 * (call it whenever the target may have run since).
 */
struct mem_cache;
struct mem_cache *mem_cache_new(pid_t pid, size_t max_pages);
void mem_cache_free(struct mem_cache *mc);
void mem_cache_clear(struct mem_cache *mc);
int mem_cache_read(struct mem_cache *mc, uint64_t addr, void *buf, size_t len);
int mem_cache_read_u64(struct mem_cache *mc, uint64_t addr, uint64_t *value);

/*
 * Batched reads for walks that fan out (many objects at each level): while
 * deferring, a read that needs a page not yet cached fails with EAGAIN and
 * notes the page; mem_cache_fetch() then reads every noted page in one
 * process_vm_readv and returns how many there were.  Walk, fetch, walk
 * again until nothing is noted: one system call per level of the walk, not
 * one per object.
 */
void mem_cache_defer(struct mem_cache *mc, bool on);
size_t mem_cache_fetch(struct mem_cache *mc);
pid_t mem_cache_pid(const struct mem_cache *mc);

/* One range to read: len bytes at addr into buf. */
struct mem_range {
	uint64_t addr;
	void *buf;
	size_t len;
};

/*
 * n ranges past the cache in one system call (one per 1024, and one more
 * per unreadable range); ok[i] tells which were read whole.
 */
void mem_read_ranges(pid_t pid, const struct mem_range *ranges, size_t n, bool *ok);
/*
 * Many small reads at once, past the cache: n ranges of len bytes from
 * addrs[i] into buf + i * len, as mem_read_ranges().  For looking at many
 * scattered objects once without copying whole pages.
 */
void mem_read_spans(pid_t pid, const uint64_t *addrs, size_t n, size_t len,
    unsigned char *buf, bool *ok);

/*
 * For what a running thread changes (thread states, frames): a page is
 * served by mem_cache_read_fresh() only if it was read since the last
 * mem_cache_expire(), else it is read again.  Immutable things (type
 * objects, a thread's name) keep using mem_cache_read() and any page read
 * before; code objects and their strings, kept by address after one
 * read, use mem_cache_read_current().
 * So a reader that expires before each thread's walk, and before each
 * retry of it, re-reads only the pages that can have changed.
 */
void mem_cache_expire(struct mem_cache *mc);
int mem_cache_read_fresh(struct mem_cache *mc, uint64_t addr, void *buf, size_t len);
/*
 * Served from a copy made since the last expiry, as mem_cache_read_fresh,
 * but the page is neither live (a sampler's batch does not take it up)
 * nor ranked: for an object read once and then kept by address -- a code
 * object first met, its strings -- which an earlier copy of its page may
 * predate (`stack`'s retries expire the cache while the program imports).
 */
int mem_cache_read_current(struct mem_cache *mc, uint64_t addr, void *buf, size_t len);

/*
 * Read the pages holding these addresses afresh, in one system call (and
 * one more per unreadable page) and in the order given: a stack known from an earlier read is then
 * re-read within microseconds instead of one page at a time while the
 * thread runs on.
 */
void mem_cache_refresh(struct mem_cache *mc, const uint64_t *addrs, size_t n);

/* Ranges read beside the pages, in the same system call: n of len bytes each. */
struct mem_spans {
	const uint64_t *addrs;
	size_t n, len;
	unsigned char *buf;	/* n * len bytes */
	bool *ok;		/* n: each read whole */
	/*
	 * Optional: ranges read last, after every page and span, in the
	 * same system call (the kernel copies in the order given): a check
	 * that must be read after what it checks, made without a call of
	 * its own.
	 */
	const struct mem_range *after;
	size_t nafter;
	bool *after_ok;		/* nafter: each read whole */
};
/*
 * As mem_cache_refresh, with spans; with `lens` (else NULL), each addrs[i]
 * names one page and only lens[i] bytes from it (and a little around) are
 * read, as mem_cache_pages() gives them: what the last look used.
 */
void mem_cache_refresh_spans(struct mem_cache *mc, const uint64_t *addrs, const uint32_t *lens,
    size_t n, const struct mem_spans *sp);

/*
 * How many system calls the cache has made so far: equal before and after
 * a walk, every page the walk used came from a batch read before it.
 */
unsigned long mem_cache_reads(const struct mem_cache *mc);

/*
 * The order in which a batch copied its pages.  mem_cache_refresh_spans
 * gives each page it reads its place in the batch, 1 on (the kernel
 * copies in the order given); a page read any other way has rank 0.
 * mem_cache_rank_max is the highest rank read fresh since the last
 * mem_cache_rank_reset; mem_cache_rank that of the page holding `addr`
 * if it was read this epoch, else 0.  While mem_cache_reads is unchanged
 * since the batch, a walk whose pages all rank at most that of its head
 * (the thread state's current frame) read every frame no later than the
 * head was copied.
 */
void mem_cache_rank_reset(struct mem_cache *mc);
/*
 * What mem_cache_read_fresh would copy, in place: a pointer to the cached
 * bytes [addr, addr + len) of a page read since the last expiry, or NULL
 * (not cached so, or across pages): then read.  Valid until the cache
 * next reads that page or is cleared -- take what is needed at once.
 */
const void *mem_cache_peek_fresh(struct mem_cache *mc, uint64_t addr, size_t len);
/*
 * The same look, and nothing else: the page is not marked live, used or
 * served (its rank does not count).  For copying what a walk has read
 * already.
 */
const void *mem_cache_peek(const struct mem_cache *mc, uint64_t addr, size_t len);
/*
 * A walk's frames lie one after another on a page: mem_cache_peek_window
 * is mem_cache_peek_fresh that also opens a window on the page, and
 * mem_window_peek serves the next frames on it with a bounds check
 * alone -- while the cache has neither read nor claimed nor forgotten a
 * page since (its stamp).  What the window served is the page's used
 * part once closed (mem_window_close): close it before the cache's pages
 * are listed, and before it is opened on another page.
 */
struct mem_window {
	uint64_t page;			/* address / 4096; data NULL: closed */
	const unsigned char *data;	/* the page's bytes */
	size_t lo, hi;			/* [lo, hi) of it may be served */
	size_t ulo, uhi;		/* the part served through it */
	const unsigned long *stamp_at;	/* the cache's stamp, and its value then */
	unsigned long stamp;
	void *slot;			/* the cache's page */
};
const void *mem_cache_peek_window(struct mem_cache *mc, uint64_t addr, size_t len,
    struct mem_window *w);
void mem_window_close(struct mem_cache *mc, struct mem_window *w);

static inline const void *
mem_window_peek(struct mem_window *w, uint64_t addr, size_t len)
{
	size_t off = (size_t)(addr & 4095u);

	if (w->data == NULL || addr / 4096u != w->page || *w->stamp_at != w->stamp ||
	    off < w->lo || off + len > w->hi)
		return NULL;
	if (off < w->ulo)
		w->ulo = off;
	if (off + len > w->uhi)
		w->uhi = off + len;
	return w->data + off;
}

unsigned mem_cache_rank_max(const struct mem_cache *mc);
/* The lowest rank but 0 read fresh since the reset; UINT_MAX if none. */
unsigned mem_cache_rank_min(const struct mem_cache *mc);
unsigned mem_cache_rank(struct mem_cache *mc, uint64_t addr);

/*
 * The addresses of up to `max` readable pages now cached; returns how many.
 * With `live_only`, only pages read afresh (mem_cache_read_fresh, or
 * refreshed): what a running thread changes, not code objects or strings.
 * A sampler takes them before clearing and refreshes them all at once:
 * the next look at a process that changed little costs one system call.
 * With `lens` (else NULL), addrs[i] is where the part of its page served
 * so far begins and lens[i] its length -- for a page refreshed with lens,
 * with the part given then: it only grows -- the kernel then copies a few
 * hundred bytes of a page, not 4 KiB.
 */
size_t mem_cache_pages(const struct mem_cache *mc, uint64_t *addrs, uint32_t *lens, size_t max,
    bool live_only);

/*
 * A lens[] word: the length in its low 16 bits, and above them how many
 * looks in a row have not used the page.  A page a look does not use
 * stays on the list for MEM_KEEP_LOOKS looks: a stack that moves over a
 * few pages (3.8-3.10's frame objects, a recursion's depth) then finds
 * all of them in the one batch a look begins with, read at one moment; a
 * walk that must read a page itself reads it later than the rest, and a
 * frame read later may have been reused since.  Before, a page stayed
 * forever (a runtime page read once was pinned every tick after).
 */
#define MEM_KEEP_LOOKS		64
#define MEM_SPAN(len, idle)	((uint32_t)(len) | (uint32_t)(idle) << 16)
#define MEM_SPAN_LEN(w)		((w) & 0xffffu)
#define MEM_SPAN_IDLE(w)	((w) >> 16)

/* Little helpers to pick a field out of a struct read in one go. */
static inline uint64_t
mem_field_u64(const void *base, int64_t off)
{
	uint64_t v;

	__builtin_memcpy(&v, (const char *)base + off, sizeof v);
	return v;
}

static inline uint32_t
mem_field_u32(const void *base, int64_t off)
{
	uint32_t v;

	__builtin_memcpy(&v, (const char *)base + off, sizeof v);
	return v;
}

static inline int32_t
mem_field_i32(const void *base, int64_t off)
{
	int32_t v;

	__builtin_memcpy(&v, (const char *)base + off, sizeof v);
	return v;
}

/* A plausible user-space pointer (non-NULL, canonical, aligned to `align`). */
static inline bool
mem_ptr_ok(uint64_t p, unsigned align)
{
	return p >= 0x1000 && p < 0x800000000000ull && (p & (align - 1)) == 0;
}

#endif
