#include "config.h"

#include "core/memread.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "core/util.h"

#define PAGE 4096u
#define MEM_BATCH 1024	/* IOV_MAX on Linux */
#define SMALL_BATCH 64	/* ranges of a batch kept on the stack */

int
mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (len == 0)
		return 0;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = EFAULT;	/* a partial read: the rest is unmapped */
	return -1;
}

int
mem_read_u64(pid_t pid, uint64_t addr, uint64_t *value)
{
	return mem_read(pid, addr, value, sizeof *value);
}

struct mem_page {
	uint64_t page;		/* address / PAGE, 0 = empty slot */
	bool loaded;		/* read (else only claimed) */
	bool ok;		/* readable */
	bool pending;		/* asked for while deferring, not read yet */
	bool live;		/* read afresh: it holds what a thread changes */
	/*
	 * Refreshed from a sampler's list (mem_cache_refresh_spans with
	 * lens), and how many looks in a row before this one did not use it.
	 */
	bool listed;
	unsigned idle;
	unsigned epoch;		/* mc->epoch when read */
	/*
	 * The bytes [lo, hi) of the page that were read (a sampler's batch
	 * reads only the part of a page its last looks used), and [ulo, uhi)
	 * the part served since the page was claimed, with what the looks
	 * before used (mem_cache_refresh_spans).
	 */
	uint16_t lo, hi, ulo, uhi;
	/* its place in the batch that read it (mem_cache_rank), 0 if read otherwise */
	unsigned rank;
	unsigned char *data;
};

struct mem_cache {
	pid_t pid;
	size_t max_pages, used;
	struct mem_page *slots;	/* 2 * max_pages, open addressing */
	size_t nslots;
	/*
	 * The used slots in the order they were claimed: clearing and
	 * listing touch these, not all the slots (a sampler does both on
	 * every tick; scanning the table was a tenth of its CPU).
	 */
	struct mem_page **inuse;	/* max_pages */
	bool deferring;		/* misses are noted, not read */
	struct mem_page **pending;	/* the noted pages */
	size_t npending, apending;
	unsigned epoch;		/* see mem_cache_expire() */
	unsigned long reads;	/* system calls made, see mem_cache_reads() */
	/* bumped when a page is read, claimed or forgotten (struct mem_window) */
	unsigned long stamp;
	unsigned rank_max;	/* the latest rank served fresh since mem_cache_rank_reset */
	unsigned rank_min;	/* the earliest (not 0); UINT_MAX if none */
	/*
	 * The slot last found: a walk reads frame after frame from one page.
	 * Trusted only while it still holds that page (a slot cleared or
	 * claimed since holds 0 or another).
	 */
	struct mem_page *last;
	/* Room for spans read together (read_batch_spans), kept: no allocation a tick. */
	unsigned char *scratch;
	size_t ascratch;
};

struct mem_cache *
mem_cache_new(pid_t pid, size_t max_pages)
{
	struct mem_cache *mc = xcalloc(1, sizeof *mc);

	mc->pid = pid;
	mc->max_pages = max_pages;
	for (mc->nslots = 64; mc->nslots < 2 * max_pages; mc->nslots *= 2)
		;
	mc->slots = xcalloc(mc->nslots, sizeof *mc->slots);
	mc->inuse = xcalloc(max_pages ? max_pages : 1, sizeof *mc->inuse);
	return mc;
}

void
mem_cache_free(struct mem_cache *mc)
{
	size_t i;

	if (mc == NULL)
		return;
	for (i = 0; i < mc->nslots; i++)
		free(mc->slots[i].data);
	free(mc->slots);
	free(mc->inuse);
	free(mc->pending);
	free(mc->scratch);
	free(mc);
}

void
mem_cache_clear(struct mem_cache *mc)
{
	size_t i;

	/* Keep the buffers; forget their contents. */
	for (i = 0; i < mc->used; i++)
		mc->inuse[i]->page = 0;
	mc->used = 0;
	mc->npending = 0;
	mc->stamp++;
}

void
mem_cache_expire(struct mem_cache *mc)
{
	mc->epoch++;
	mc->stamp++;
}

/* A page served fresh: the ranks read since mem_cache_rank_reset. */
static inline void
rank_served(struct mem_cache *mc, const struct mem_page *p)
{
	if (p->rank > mc->rank_max)
		mc->rank_max = p->rank;
	if (p->rank != 0 && p->rank < mc->rank_min)
		mc->rank_min = p->rank;
}

/* Where the search for `page` among the slots begins. */
static inline size_t
slot_hash(const struct mem_cache *mc, uint64_t page)
{
	return (size_t)((page * 0x9e3779b97f4a7c15ull) >> 32) & (mc->nslots - 1);
}

/* The slot holding `page`, or NULL: a lookup only, nothing claimed. */
static struct mem_page *
page_at(const struct mem_cache *mc, uint64_t page)
{
	size_t s = slot_hash(mc, page);
	struct mem_page *p;

	if (page == 0)
		return NULL;
	while ((p = &mc->slots[s])->page != 0) {
		if (p->page == page)
			return p;
		s = (s + 1) & (mc->nslots - 1);
	}
	return NULL;
}

/* The slot of `page`, claimed (not loaded) if new; NULL if the cache is full. */
static struct mem_page *
slot_of(struct mem_cache *mc, uint64_t page)
{
	size_t s = slot_hash(mc, page);
	struct mem_page *p;

	if (mc->last != NULL && mc->last->page == page)
		return mc->last;
	/* At most half the slots are used, so an empty one is always found. */
	while ((p = &mc->slots[s])->page != 0) {
		if (p->page == page)
			return mc->last = p;
		s = (s + 1) & (mc->nslots - 1);
	}
	if (mc->used >= mc->max_pages)
		return NULL;
	if (p->data == NULL)
		p->data = xmalloc(PAGE);
	mc->stamp++;
	p->page = page;
	p->loaded = p->pending = p->live = p->listed = false;
	p->idle = 0;
	p->rank = 0;
	p->lo = 0;
	p->hi = PAGE;
	p->ulo = PAGE;
	p->uhi = 0;
	mc->inuse[mc->used++] = p;
	return mc->last = p;
}

/*
 * How a read may be served: from any copy (plain: code objects, strings),
 * only from one made since the last expiry (fresh: what a thread changes,
 * the page then counts as live and ranked), or from such a copy without
 * either (current: a code object first met, see mem_cache_read_current).
 */
enum read_mode { RD_PLAIN, RD_FRESH, RD_CURRENT };

/*
 * The cached page holding `page`, read now if needed (unless plain, also
 * if read before the last expiry; also if only part of it was read, not
 * bytes [off, end)) or, while deferring, noted for mem_cache_fetch();
 * NULL if uncachable.  A page read again is read whole.
 */
static struct mem_page *
get_page(struct mem_cache *mc, uint64_t page, enum read_mode mode, size_t off, size_t end)
{
	struct mem_page *p = slot_of(mc, page);
	bool fresh = mode != RD_PLAIN;

	if (p != NULL && mode == RD_FRESH)
		p->live = true;
	if (p == NULL || p->pending || (p->loaded && (!fresh || p->epoch == mc->epoch) &&
	    off >= p->lo && end <= p->hi))
		return p;
	if (mc->deferring) {
		p->pending = true;
		*ARRAY_PUSH(mc->pending, mc->npending, mc->apending) = p;
		return p;
	}
	mc->reads++;
	mc->stamp++;
	p->ok = mem_read(mc->pid, page * PAGE, p->data, PAGE) == 0;
	p->loaded = true;
	p->rank = 0;
	p->lo = 0;
	p->hi = PAGE;
	p->epoch = mc->epoch;
	return p;
}

void
mem_cache_defer(struct mem_cache *mc, bool on)
{
	mc->deferring = on;
}

/*
 * Read n ranges in as few process_vm_readv calls as possible: one per
 * MEM_BATCH ranges, plus one for each unreadable range (the kernel stops at
 * the first remote range it cannot read).  ok[i] tells which were read.
 */
static void
readv_all(pid_t pid, struct iovec *local, struct iovec *remote, size_t n, bool *ok)
{
	size_t i = 0, k, end, got_ranges;
	ssize_t got;

	while (i < n) {
		end = n - i > MEM_BATCH ? i + MEM_BATCH : n;
		got = process_vm_readv(pid, local + i, end - i, remote + i, end - i, 0);
		/* Whole ranges read; a range cut short counts as not read. */
		for (got_ranges = 0; got > 0 && i + got_ranges < end &&
		    (size_t)got >= remote[i + got_ranges].iov_len; got_ranges++) {
			got -= (ssize_t)remote[i + got_ranges].iov_len;
			ok[i + got_ranges] = true;
		}
		i += got_ranges;
		if (i < end) {
			k = i++;
			ok[k] = mem_read(pid, (uint64_t)(uintptr_t)remote[k].iov_base,
			    local[k].iov_base, remote[k].iov_len) == 0;
		}
	}
}

void
mem_read_ranges(pid_t pid, const struct mem_range *ranges, size_t n, bool *ok)
{
	struct iovec local[8], remote[8];
	struct iovec *lp = n <= 8 ? local : xcalloc(n, sizeof *lp);
	struct iovec *rp = n <= 8 ? remote : xcalloc(n, sizeof *rp);
	size_t i;

	for (i = 0; i < n; i++) {
		lp[i] = (struct iovec){ ranges[i].buf, ranges[i].len };
		rp[i] = (struct iovec){ (void *)(uintptr_t)ranges[i].addr, ranges[i].len };
		ok[i] = false;
	}
	readv_all(pid, lp, rp, n, ok);
	if (lp != local) {
		free(lp);
		free(rp);
	}
}

void
mem_read_spans(pid_t pid, const uint64_t *addrs, size_t n, size_t len, unsigned char *buf,
    bool *ok)
{
	struct iovec *local = xcalloc(n ? n : 1, sizeof *local);
	struct iovec *remote = xcalloc(n ? n : 1, sizeof *remote);
	size_t i;

	for (i = 0; i < n; i++) {
		local[i] = (struct iovec){ buf + i * len, len };
		remote[i] = (struct iovec){ (void *)(uintptr_t)addrs[i], len };
		ok[i] = false;
	}
	readv_all(pid, local, remote, n, ok);
	free(local);
	free(remote);
}

/*
 * Spans that lie on one page, grouped: the kernel pins a page once per
 * range it is asked for (most of a range's cost), so one range from the
 * first to the last of them costs about a third of four.  On 3.8-3.10 a
 * tick's code objects, small and made together, mostly share a page or
 * two.  Only for a sampler's few dozen spans (a scan per span).
 */
struct span_group {
	uint64_t lo, hi;	/* the bytes read: [lo, hi) */
	size_t off;		/* where in mc->scratch, if more than one span */
	unsigned members;
};

static size_t
group_spans(struct mem_cache *mc, const struct mem_spans *sp, struct span_group *g,
    unsigned char *of)
{
	size_t i, j, ng = 0, room = 0;

	for (i = 0; i < sp->n; i++) {
		uint64_t a = sp->addrs[i], e = a + sp->len;

		for (j = 0; j < ng; j++)
			if (g[j].lo / PAGE == a / PAGE && (g[j].lo / PAGE == (e - 1) / PAGE))
				break;
		if (j == ng)
			g[ng++] = (struct span_group){ a, e, 0, 0 };
		if (a < g[j].lo)
			g[j].lo = a;
		if (e > g[j].hi)
			g[j].hi = e;
		g[j].members++;
		of[i] = (unsigned char)j;
	}
	for (j = 0; j < ng; j++)
		if (g[j].members > 1) {
			g[j].off = room;
			room += (size_t)(g[j].hi - g[j].lo);
		}
	if (room > mc->ascratch) {
		mc->scratch = xrealloc(mc->scratch, room);
		mc->ascratch = room;
	}
	return ng;
}

/* Pages, and (spans) nspans ranges of len bytes into buf, read in one go. */
static void
read_batch_spans(struct mem_cache *mc, struct mem_page **batch, size_t n,
    const struct mem_spans *sp)
{
	size_t nspans = sp != NULL ? sp->n : 0, nafter = sp != NULL ? sp->nafter : 0;
	struct span_group groups[SMALL_BATCH];
	unsigned char group_of[SMALL_BATCH];
	bool grouped = nspans > 1 && nspans <= SMALL_BATCH && sp->len < PAGE;
	size_t ngroups = grouped ? group_spans(mc, sp, groups, group_of) : nspans;
	size_t total = n + ngroups + nafter, i, j;
	/* A sampler's batch, every tick, fits on the stack: no allocation. */
	struct iovec slocal[SMALL_BATCH], sremote[SMALL_BATCH];
	bool sok[SMALL_BATCH];
	bool small = total <= SMALL_BATCH;
	struct iovec *local = small ? slocal : xmalloc(total * sizeof *local);
	struct iovec *remote = small ? sremote : xmalloc(total * sizeof *remote);
	bool *ok = small ? sok : xmalloc(total * sizeof *ok);

	memset(ok, 0, (total ? total : 1) * sizeof *ok);

	for (i = 0; i < n; i++) {
		struct mem_page *p = batch[i];

		local[i] = (struct iovec){ p->data + p->lo, (size_t)(p->hi - p->lo) };
		remote[i] = (struct iovec){ (void *)(uintptr_t)(p->page * PAGE + p->lo),
		    (size_t)(p->hi - p->lo) };
	}
	for (i = 0; i < nspans && !grouped; i++) {
		local[n + i] = (struct iovec){ sp->buf + i * sp->len, sp->len };
		remote[n + i] = (struct iovec){ (void *)(uintptr_t)sp->addrs[i], sp->len };
	}
	for (i = 0; i < ngroups && grouped; i++) {
		size_t len = (size_t)(groups[i].hi - groups[i].lo);
		/* a group of one is read straight into its place */
		for (j = 0; groups[i].members == 1 && group_of[j] != i; j++)
			;
		local[n + i] = (struct iovec){ groups[i].members == 1 ? sp->buf + j * sp->len :
		    mc->scratch + groups[i].off, len };
		remote[n + i] = (struct iovec){ (void *)(uintptr_t)groups[i].lo, len };
	}
	for (i = 0; i < nafter; i++) {
		local[n + ngroups + i] = (struct iovec){ sp->after[i].buf, sp->after[i].len };
		remote[n + ngroups + i] = (struct iovec){ (void *)(uintptr_t)sp->after[i].addr,
		    sp->after[i].len };
	}
	mc->reads++;
	mc->stamp++;
	readv_all(mc->pid, local, remote, total, ok);
	for (i = 0; i < n; i++) {
		batch[i]->ok = ok[i];
		batch[i]->pending = false;
		batch[i]->loaded = true;
		batch[i]->epoch = mc->epoch;
		batch[i]->rank = (unsigned)i + 1;	/* the kernel copies in this order */
	}
	for (i = 0; i < nspans; i++) {
		const struct span_group *gr = grouped ? &groups[group_of[i]] : NULL;

		sp->ok[i] = ok[n + (grouped ? group_of[i] : i)];
		if (gr != NULL && gr->members > 1 && sp->ok[i])
			memcpy(sp->buf + i * sp->len,
			    mc->scratch + gr->off + (size_t)(sp->addrs[i] - gr->lo), sp->len);
	}
	for (i = 0; i < nafter; i++)
		sp->after_ok[i] = ok[n + ngroups + i];
	if (!small) {
		free(ok);
		free(remote);
		free(local);
	}
}

static void
read_batch(struct mem_cache *mc, struct mem_page **batch, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		batch[i]->lo = 0;
		batch[i]->hi = PAGE;
	}
	read_batch_spans(mc, batch, n, NULL);
}

void
mem_cache_refresh(struct mem_cache *mc, const uint64_t *addrs, size_t n)
{
	mem_cache_refresh_spans(mc, addrs, NULL, n, NULL);
}

/*
 * What of a page a batch reads when told the part the last look used:
 * that part, widened by EXTENT_SLACK on each side (a stack moves by a
 * frame or two between looks; a read outside it costs a system call of
 * its own, for the whole page).
 */
#define EXTENT_SLACK	256u

void
mem_cache_refresh_spans(struct mem_cache *mc, const uint64_t *addrs, const uint32_t *lens,
    size_t n, const struct mem_spans *sp)
{
	enum { MAX_BATCH = 128 };
	struct mem_page *pages[MAX_BATCH];
	size_t i, j, k = 0;

	for (i = 0; i < n && k < MAX_BATCH; i++) {
		uint64_t page = addrs[i] / PAGE;
		struct mem_page *p = page ? slot_of(mc, page) : NULL;
		size_t lo = 0, hi = PAGE, len = lens != NULL ? MEM_SPAN_LEN(lens[i]) : 0;

		if (p == NULL)
			continue;
		if (lens != NULL) {
			p->listed = true;
			p->idle = MEM_SPAN_IDLE(lens[i]);
		}
		/*
		 * Not live until a read uses it (get_page, cache_read): a
		 * prefetch that marked its own pages live read every page
		 * ever used again each tick, used or not.
		 */
		if (p->pending || (p->loaded && p->epoch == mc->epoch))
			continue;
		for (j = 0; j < k && pages[j] != p; j++)
			;
		if (j < k)
			continue;
		if (lens != NULL) {
			lo = (size_t)(addrs[i] % PAGE);
			hi = lo + len > PAGE ? PAGE : lo + len;
			lo = lo > EXTENT_SLACK ? (lo - EXTENT_SLACK) & ~(size_t)63 : 0;
			hi = hi + EXTENT_SLACK < PAGE ? (hi + EXTENT_SLACK + 63) & ~(size_t)63 : PAGE;
			if (hi > PAGE)
				hi = PAGE;
		}
		p->lo = (uint16_t)lo;
		p->hi = (uint16_t)hi;
		if (len > 0) {
			/*
			 * What the last looks used counts as used: the part
			 * only grows (a stack that goes deeper now and then
			 * would otherwise miss it, and pay a call, half the
			 * time), up to the whole page.
			 */
			p->ulo = (uint16_t)(addrs[i] % PAGE);
			p->uhi = (uint16_t)(addrs[i] % PAGE + len > PAGE ? PAGE :
			    addrs[i] % PAGE + len);
		}
		pages[k++] = p;
	}
	if (k > 0 || (sp != NULL && (sp->n > 0 || sp->nafter > 0)))
		read_batch_spans(mc, pages, k, sp);
}

size_t
mem_cache_pages(const struct mem_cache *mc, uint64_t *addrs, uint32_t *lens, size_t max,
    bool live_only)
{
	size_t i, n = 0;

	for (i = 0; i < mc->used && n < max; i++) {
		const struct mem_page *p = mc->inuse[i];
		unsigned idle = p->live ? 0 : p->idle + 1;

		/* a listed page unused for MEM_KEEP_LOOKS looks leaves the list */
		if (!p->loaded || !p->ok ||
		    (live_only && !p->live && (!p->listed || idle >= MEM_KEEP_LOOKS)))
			continue;
		addrs[n] = p->page * PAGE;
		if (lens != NULL) {
			/* a page claimed but never served: read whole next time */
			size_t lo = p->ulo < p->uhi ? p->ulo : 0, hi = p->ulo < p->uhi ? p->uhi : PAGE;

			addrs[n] += lo;
			lens[n] = MEM_SPAN(hi - lo, idle);
		}
		n++;
	}
	return n;
}

unsigned long
mem_cache_reads(const struct mem_cache *mc)
{
	return mc->reads;
}

void
mem_cache_rank_reset(struct mem_cache *mc)
{
	mc->rank_max = 0;
	mc->rank_min = UINT_MAX;
}

unsigned
mem_cache_rank_min(const struct mem_cache *mc)
{
	return mc->rank_min;
}

unsigned
mem_cache_rank_max(const struct mem_cache *mc)
{
	return mc->rank_max;
}

unsigned
mem_cache_rank(struct mem_cache *mc, uint64_t addr)
{
	const struct mem_page *p = page_at(mc, addr / PAGE);

	return p != NULL && p->loaded && !p->pending && p->ok && p->epoch == mc->epoch ? p->rank : 0;
}

pid_t
mem_cache_pid(const struct mem_cache *mc)
{
	return mc->pid;
}

size_t
mem_cache_fetch(struct mem_cache *mc)
{
	size_t i, n, total = mc->npending;

	for (i = 0; i < mc->npending; i += n) {
		n = mc->npending - i > MEM_BATCH ? MEM_BATCH : mc->npending - i;
		read_batch(mc, mc->pending + i, n);
	}
	mc->npending = 0;
	return total;
}

/* Note the bytes [off, end) of a page as served (see mem_cache_pages). */
static inline void
page_used(struct mem_page *p, size_t off, size_t end)
{
	if (off < p->ulo)
		p->ulo = (uint16_t)off;
	if (end > p->uhi)
		p->uhi = (uint16_t)end;
}

static int
cache_read(struct mem_cache *mc, uint64_t addr, void *buf, size_t len, enum read_mode mode)
{
	unsigned char *out = buf;
	struct mem_page *p = mc->last;
	size_t off = (size_t)(addr % PAGE);
	bool fresh = mode != RD_PLAIN;

	/*
	 * A walk reads frame after frame from the page it read last: served
	 * from there without a lookup (a sampler's tick does this ~40 times).
	 * A slot cleared since holds page 0, never an address's page here.
	 */
	if (p != NULL && addr >= PAGE && p->page == addr / PAGE && p->loaded && !p->pending &&
	    p->ok && off >= p->lo && off + len <= p->hi && (!fresh || p->epoch == mc->epoch)) {
		if (mode == RD_FRESH) {
			p->live = true;
			rank_served(mc, p);
		}
		memcpy(out, p->data + off, len);
		page_used(p, off, off + len);
		return 0;
	}
	if (len > 4 * PAGE) {
		mc->reads++;
		return mem_read(mc->pid, addr, buf, len);
	}
	while (len > 0) {
		uint64_t page = addr / PAGE;
		size_t n;

		off = (size_t)(addr % PAGE);
		n = PAGE - off;
		if (n > len)
			n = len;
		p = page ? get_page(mc, page, mode, off, off + n) : NULL;
		if (p == NULL) {
			mc->reads++;
			if (mem_read(mc->pid, addr, out, n) != 0)
				return -1;
		} else if (p->pending) {
			errno = EAGAIN;
			return -1;
		} else if (!p->ok) {
			errno = EFAULT;
			return -1;
		} else {
			if (mode == RD_FRESH)
				rank_served(mc, p);
			memcpy(out, p->data + off, n);
			page_used(p, off, off + n);
		}
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

/* Whether page p holds [off, off + len) as read this epoch. */
static inline bool
page_holds(const struct mem_cache *mc, const struct mem_page *p, size_t off, size_t len)
{
	return p->loaded && !p->pending && p->ok && off >= p->lo && off + len <= p->hi &&
	    p->epoch == mc->epoch;
}

const void *
mem_cache_peek_fresh(struct mem_cache *mc, uint64_t addr, size_t len)
{
	struct mem_page *p = mc->last;
	size_t off = (size_t)(addr % PAGE);

	if ((p == NULL || p->page != addr / PAGE) && (p = page_at(mc, addr / PAGE)) == NULL)
		return NULL;
	if (!page_holds(mc, p, off, len))
		return NULL;
	mc->last = p;
	p->live = true;
	rank_served(mc, p);
	page_used(p, off, off + len);
	return p->data + off;
}

const void *
mem_cache_peek(const struct mem_cache *mc, uint64_t addr, size_t len)
{
	const struct mem_page *p = page_at(mc, addr / PAGE);
	size_t off = (size_t)(addr % PAGE);

	return p != NULL && page_holds(mc, p, off, len) ? p->data + off : NULL;
}

const void *
mem_cache_peek_window(struct mem_cache *mc, uint64_t addr, size_t len, struct mem_window *w)
{
	const unsigned char *at;
	struct mem_page *p;

	mem_window_close(mc, w);
	if ((at = mem_cache_peek_fresh(mc, addr, len)) == NULL)
		return NULL;
	p = mc->last;
	*w = (struct mem_window){ p->page, p->data, p->lo, p->hi, PAGE, 0,
	    &mc->stamp, mc->stamp, p };
	return at;
}

void
mem_window_close(struct mem_cache *mc, struct mem_window *w)
{
	struct mem_page *p = w->slot;

	if (w->data != NULL && mc->stamp == w->stamp && p->page == w->page && w->ulo < w->uhi)
		page_used(p, w->ulo, w->uhi);
	w->data = NULL;
}

int
mem_cache_read(struct mem_cache *mc, uint64_t addr, void *buf, size_t len)
{
	return cache_read(mc, addr, buf, len, RD_PLAIN);
}

int
mem_cache_read_fresh(struct mem_cache *mc, uint64_t addr, void *buf, size_t len)
{
	return cache_read(mc, addr, buf, len, RD_FRESH);
}

int
mem_cache_read_current(struct mem_cache *mc, uint64_t addr, void *buf, size_t len)
{
	return cache_read(mc, addr, buf, len, RD_CURRENT);
}

int
mem_cache_read_u64(struct mem_cache *mc, uint64_t addr, uint64_t *value)
{
	return mem_cache_read(mc, addr, value, sizeof *value);
}
