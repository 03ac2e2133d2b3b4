/*
 * memread unit test, on this process's own memory (process_vm_readv works
 * on oneself): deferred page reads and their batched fetch; fresh reads
 * and batched refresh.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/memread.h"
#include "tests/unit/tap.h"

#define PAGE 4096

static void
deferred_reads(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *m, buf[16];
	uint64_t a, b, c, v = 0;
	struct mem_cache *mc;
	int rc;

	/* Three pages, the middle one unmapped: the batch must not stop there. */
	m = mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		ok(false, "mmap three pages");
		return;
	}
	memset(m, 0xaa, (size_t)page);
	memset(m + 2 * page, 0xcc, (size_t)page);
	munmap(m + page, (size_t)page);
	a = (uintptr_t)m + 8;
	b = (uintptr_t)m + (uint64_t)page + 8;
	c = (uintptr_t)m + 2 * (uint64_t)page + 8;

	mc = mem_cache_new(getpid(), 64);
	mem_cache_defer(mc, true);
	errno = 0;
	rc = mem_cache_read(mc, a, buf, sizeof buf);
	ok(rc == -1 && errno == EAGAIN, "deferring: a page not cached fails with EAGAIN");
	ok(mem_cache_read(mc, b, buf, sizeof buf) == -1 && mem_cache_read(mc, c, buf, 8) == -1,
	    "deferring: every miss fails");
	is_int(mem_cache_fetch(mc), 3, "fetch reads the three noted pages");
	ok(mem_cache_read_u64(mc, a, &v) == 0 && v == 0xaaaaaaaaaaaaaaaaull,
	    "after the fetch, the first page is there");
	ok(mem_cache_read_u64(mc, c, &v) == 0 && v == 0xccccccccccccccccull,
	    "the page after an unmapped one is read too");
	errno = 0;
	rc = mem_cache_read(mc, b, buf, sizeof buf);
	ok(rc == -1 && errno == EFAULT, "the unmapped page fails with EFAULT");
	is_int(mem_cache_fetch(mc), 0, "nothing left to fetch");
	mem_cache_defer(mc, false);
	mem_cache_clear(mc);
	ok(mem_cache_read_u64(mc, c, &v) == 0 && v == 0xccccccccccccccccull,
	    "not deferring: reads read at once");
	mem_cache_free(mc);

	{
		uint64_t addrs[4] = { a, b, c, 0 };
		unsigned char spans[4 * 8];
		bool got[4];

		mem_read_spans(getpid(), addrs, 4, 8, spans, got);
		ok(got[0] && spans[0] == 0xaa && !got[1] && got[2] && spans[16] == 0xcc && !got[3],
		    "spans: the readable ones are read, past an unreadable one too");
	}
	munmap(m, (size_t)page);
	munmap(m + 2 * page, (size_t)page);
}

static void
fresh_reads(void)
{
	unsigned char *mem = aligned_alloc(PAGE, 3 * PAGE);
	struct mem_cache *mc = mem_cache_new(getpid(), 16);
	uint64_t a = (uint64_t)(uintptr_t)mem, v = 0, addrs[3];

	memset(mem, 0, 3 * PAGE);
	mem[0] = 1;
	mem[PAGE] = 1;
	mem[2 * PAGE] = 1;
	ok(mem_cache_read_u64(mc, a, &v) == 0 && v == 1, "a read caches the page");
	mem[0] = 2;
	ok(mem_cache_read_u64(mc, a, &v) == 0 && v == 1, "a plain read is served from the cache");
	ok(mem_cache_read_fresh(mc, a, &v, sizeof v) == 0 && v == 1,
	    "a fresh read is served by a page read since the last expiry");
	mem_cache_expire(mc);
	ok(mem_cache_read_u64(mc, a, &v) == 0 && v == 1, "after an expiry a plain read still is");
	ok(mem_cache_read_fresh(mc, a, &v, sizeof v) == 0 && v == 2, "a fresh read reads it again");

	ok(mem_cache_read_u64(mc, a + PAGE, &v) == 0 && v == 1, "a second page is cached");
	mem[0] = 3;
	mem[PAGE] = 3;
	mem[2 * PAGE] = 3;
	mem_cache_expire(mc);
	addrs[0] = a + 2 * PAGE + 17;	/* not cached yet */
	addrs[1] = a + PAGE;
	addrs[2] = a + 8;
	mem_cache_refresh(mc, addrs, 3);
	mem[0] = 4;
	mem[PAGE] = 4;
	mem[2 * PAGE] = 4;
	ok(mem_cache_read_fresh(mc, a, &v, sizeof v) == 0 && v == 3 &&
	    mem_cache_read_fresh(mc, a + PAGE, &v, sizeof v) == 0 && v == 3 &&
	    mem_cache_read_fresh(mc, a + 2 * PAGE, &v, sizeof v) == 0 && v == 3,
	    "a refresh reads every listed page at once, new ones too, for this expiry");
	addrs[0] = 0x1000;	/* unmapped: the batch stops there, nothing breaks */
	mem_cache_expire(mc);
	mem_cache_refresh(mc, addrs, 3);
	ok(mem_cache_read_fresh(mc, a, &v, sizeof v) == 0 && v == 4,
	    "pages a refresh did not reach are read on demand");
	ok(mem_cache_read_fresh(mc, 0x1000, &v, sizeof v) != 0, "an unmapped page still fails");

	mem_cache_free(mc);
	free(mem);
}

/* What a sampler's tick reads: live pages only, spans beside them, ranges at once. */
static void
sampler_reads(void)
{
	unsigned char *mem = aligned_alloc(PAGE, 3 * PAGE);
	struct mem_cache *mc = mem_cache_new(getpid(), 16);
	uint64_t a = (uint64_t)(uintptr_t)mem, v = 0, pages[4], span_addrs[2], x = 0;
	unsigned char y = 0;
	unsigned char span_buf[16];
	bool span_ok[2];
	struct mem_spans sp = { span_addrs, 2, 8, span_buf, span_ok };

	memset(mem, 0, 3 * PAGE);
	mem[0] = 1;
	mem[2 * PAGE] = 5;
	ok(mem_cache_read_fresh(mc, a, &v, sizeof v) == 0 && v == 1 &&
	    mem_cache_read_u64(mc, a + PAGE, &v) == 0,
	    "one page read afresh, one plainly");
	ok(mem_cache_pages(mc, pages, NULL, 4, false) == 2 &&
	    mem_cache_pages(mc, pages, NULL, 4, true) == 1 &&
	    pages[0] == a, "live_only lists the page read afresh, not the other");
	mem[0] = 2;
	mem_cache_clear(mc);
	span_addrs[0] = a + 2 * PAGE;
	span_addrs[1] = 0x1000;	/* unmapped */
	mem_cache_refresh_spans(mc, pages, NULL, 1, &sp);
	mem[0] = 3;
	ok(mem_cache_read_fresh(mc, a, &v, sizeof v) == 0 && v == 2 && span_ok[0] &&
	    span_buf[0] == 5 && !span_ok[1],
	    "a refresh with spans reads the pages and the readable spans together");
	{
		struct mem_range rg[3] = { { a, &v, sizeof v }, { 0x1000, &x, sizeof x },
					   { a + 2 * PAGE, &y, 1 } };
		bool rok[3];

		mem_read_ranges(getpid(), rg, 3, rok);
		ok(rok[0] && v == 3 && !rok[1] && rok[2] && y == 5,
		    "ranges in one go: the readable read, the unreadable one said so");
	}
	{
		struct mem_range after[2] = { { a, &x, sizeof x }, { 0x1000, &v, sizeof v } };
		bool aok[2] = { false, true };
		unsigned long calls;

		mem_cache_clear(mc);
		sp.after = after;
		sp.nafter = 2;
		sp.after_ok = aok;
		mem_cache_refresh_spans(mc, pages, NULL, 1, &sp);
		calls = mem_cache_reads(mc);
		ok(aok[0] && x == 3 && !aok[1] && span_ok[0],
		    "ranges after the pages and spans: read in the same refresh");
		ok(mem_cache_read_fresh(mc, a, &v, sizeof v) == 0 && mem_cache_reads(mc) == calls &&
		    mem_cache_read_u64(mc, a + PAGE, &v) == 0 && mem_cache_reads(mc) == calls + 1,
		    "the cache counts its system calls: none for a page it holds");
	}
	mem_cache_free(mc);
	free(mem);
}

/*
 * A sampler's batch reads only the part of a page the last look used (and
 * a little around it); a read outside it reads the whole page, at once.
 */
static void
partial_pages(void)
{
	unsigned char *mem = aligned_alloc(PAGE, PAGE);
	struct mem_cache *mc = mem_cache_new(getpid(), 16);
	uint64_t a = (uint64_t)(uintptr_t)mem, v = 0, page;
	uint32_t len = 0;
	unsigned long calls;

	memset(mem, 0, PAGE);
	mem[2048] = 1;
	mem[2048 + 64] = 1;
	mem[0] = 1;
	mem[PAGE - 8] = 1;
	ok(mem_cache_read_fresh(mc, a + 2048, &v, sizeof v) == 0 && v == 1 &&
	    mem_cache_read_fresh(mc, a + 2048 + 64, &v, sizeof v) == 0 && v == 1,
	    "two reads from the middle of a page");
	ok(mem_cache_pages(mc, &page, &len, 1, true) == 1 && page == a + 2048 && len == 72,
	    "the part of the page they used: from the first byte served to the last");
	mem_cache_clear(mc);
	mem_cache_expire(mc);
	mem_cache_refresh_spans(mc, &page, &len, 1, NULL);
	calls = mem_cache_reads(mc);
	mem[2048] = 2;
	mem[0] = 2;
	mem[PAGE - 8] = 2;
	ok(mem_cache_read_fresh(mc, a + 2048, &v, sizeof v) == 0 && v == 1 &&
	    mem_cache_reads(mc) == calls, "a read in that part: from the batch, no system call");
	ok(mem_cache_read_fresh(mc, a + 2048 - 200, &v, sizeof v) == 0 && v == 0 &&
	    mem_cache_reads(mc) == calls, "a read just beside it: from the batch too");
	ok(mem_cache_read_u64(mc, a, &v) == 0 && v == 2 && mem_cache_reads(mc) == calls + 1 &&
	    mem_cache_read_fresh(mc, a + PAGE - 8, &v, sizeof v) == 0 && v == 2 &&
	    mem_cache_reads(mc) == calls + 1,
	    "a read far outside it reads the whole page again, once, plain or fresh");
	ok(mem_cache_read_fresh(mc, a + 2048, &v, sizeof v) == 0 && v == 2,
	    "and serves every byte from that newer copy");
	ok(mem_cache_pages(mc, &page, &len, 1, true) == 1 && page == a && len == PAGE,
	    "the part used now runs from the far read to the last one");
	mem_cache_clear(mc);
	mem_cache_expire(mc);
	page = a + 2048;
	len = 8;
	mem_cache_refresh_spans(mc, &page, &len, 1, NULL);
	ok(mem_cache_read_fresh(mc, a + 2048, &v, sizeof v) == 0 &&
	    mem_cache_pages(mc, &page, &len, 1, true) == 1 && page == a + 2048 && len == 8,
	    "a part refreshed and used within: the same part again");
	ok(mem_cache_read_fresh(mc, a + 2048 + 300, &v, sizeof v) == 0 &&
	    mem_cache_pages(mc, &page, &len, 1, true) == 1 && page == a + 2048 && len == 308,
	    "used beyond it: the part grows, keeping what was used before");
	mem_cache_clear(mc);
	mem_cache_expire(mc);
	page = a;
	mem_cache_refresh_spans(mc, &page, NULL, 1, NULL);
	calls = mem_cache_reads(mc);
	ok(mem_cache_read_fresh(mc, a + PAGE - 8, &v, sizeof v) == 0 && v == 2 &&
	    mem_cache_reads(mc) == calls, "without lens a refresh reads whole pages");
	mem_cache_free(mc);
	free(mem);
}

/* Spans on one page are read as one range: each still gets its own bytes. */
static void
spans_on_one_page(void)
{
	unsigned char *mem = aligned_alloc(PAGE, 2 * PAGE);
	struct mem_cache *mc = mem_cache_new(getpid(), 16);
	uint64_t a = (uint64_t)(uintptr_t)mem;
	uint64_t addrs[5] = { a + 3000, a + 100, 0x1000, a + PAGE + 40, a + 2000 };
	unsigned char buf[5 * 8];
	bool sok[5];
	struct mem_spans sp = { addrs, 5, 8, buf, sok };
	size_t i;
	bool right = true;

	for (i = 0; i < 2 * PAGE; i++)
		mem[i] = (unsigned char)(i * 7 + i / 251);
	memset(buf, 0, sizeof buf);
	mem_cache_refresh_spans(mc, NULL, NULL, 0, &sp);
	for (i = 0; i < 5; i++)
		if (i != 2 && (!sok[i] || memcmp(buf + i * 8, mem + (addrs[i] - a), 8) != 0))
			right = false;
	ok(right && !sok[2], "spans sharing a page, one beside them, one unmapped: each read "
	    "as if alone");
	mem_cache_free(mc);
	free(mem);
}

/*
 * A batch ranks its pages in the order it read them, the order given; the
 * highest rank read fresh since a reset is kept; a page read any other
 * way ranks 0.
 */
static void
batch_ranks(void)
{
	unsigned char *mem = aligned_alloc(PAGE, 4 * PAGE);
	struct mem_cache *mc = mem_cache_new(getpid(), 16);
	uint64_t a = (uint64_t)(uintptr_t)mem, v = 0;
	uint64_t pages[3] = { a + 2 * PAGE, a, a + PAGE };

	memset(mem, 0, 4 * PAGE);
	mem_cache_expire(mc);
	mem_cache_refresh_spans(mc, pages, NULL, 3, NULL);
	ok(mem_cache_rank(mc, a + 2 * PAGE + 8) == 1 && mem_cache_rank(mc, a) == 2 &&
	    mem_cache_rank(mc, a + PAGE + 100) == 3, "a batch ranks its pages 1, 2, 3 as given");
	ok(mem_cache_rank(mc, a + 3 * PAGE) == 0, "a page it did not read ranks 0");
	mem_cache_rank_reset(mc);
	ok(mem_cache_read_fresh(mc, a + 8, &v, sizeof v) == 0 && mem_cache_rank_max(mc) == 2 &&
	    mem_cache_read_fresh(mc, a + 2 * PAGE, &v, sizeof v) == 0 && mem_cache_rank_max(mc) == 2,
	    "the highest rank read since the reset: 2, then still 2 after a rank-1 read");
	ok(mem_cache_read(mc, a + PAGE, &v, sizeof v) == 0 && mem_cache_rank_max(mc) == 2,
	    "a read that is not fresh does not count");
	ok(mem_cache_read_fresh(mc, a + PAGE + 8, &v, sizeof v) == 0 && mem_cache_rank_max(mc) == 3,
	    "a fresh read of the last page: 3");
	ok(mem_cache_read_fresh(mc, a + 3 * PAGE, &v, sizeof v) == 0 &&
	    mem_cache_rank(mc, a + 3 * PAGE) == 0 && mem_cache_rank_max(mc) == 3,
	    "a page read on its own ranks 0");
	mem_cache_expire(mc);
	ok(mem_cache_rank(mc, a) == 0, "after an expiry, no page has a rank");
	mem_cache_free(mc);
	free(mem);
}

/* A window on a page serves what it holds while the cache stays as it was. */
static void
windows(void)
{
	unsigned char *mem = aligned_alloc(PAGE, 2 * PAGE);
	struct mem_cache *mc = mem_cache_new(getpid(), 16);
	uint64_t a = (uint64_t)(uintptr_t)mem, addrs[4], v;
	uint32_t lens[4];
	struct mem_window w = { 0 };
	const unsigned char *p;
	size_t i, n;

	for (i = 0; i < 2 * PAGE; i++)
		mem[i] = (unsigned char)(i * 7);
	ok(mem_window_peek(&w, a, 8) == NULL, "a closed window serves nothing");
	p = mem_cache_peek_window(mc, a + 100, 16, &w);
	ok(p == NULL, "nothing cached yet: no window");
	mem_cache_expire(mc);
	ok(mem_cache_read_fresh(mc, a + 100, &v, 8) == 0, "the page read");
	p = mem_cache_peek_window(mc, a + 100, 16, &w);
	ok(p != NULL && p[0] == mem[100], "opened on the page, its bytes");
	p = mem_window_peek(&w, a + 3000, 80);
	ok(p != NULL && memcmp(p, mem + 3000, 80) == 0, "a later frame on it served by the window");
	ok(mem_window_peek(&w, a + 4090, 16) == NULL, "not across the page's end");
	ok(mem_window_peek(&w, a + PAGE + 8, 8) == NULL, "not another page");
	mem_window_close(mc, &w);
	n = mem_cache_pages(mc, addrs, lens, 4, true);
	ok(n == 1 && addrs[0] == a + 100 && MEM_SPAN_LEN(lens[0]) == 2980,
	    "closed: the part it served is the page's used part (%zu, +%u)",
	    n > 0 ? (size_t)(addrs[0] - a) : 0, n > 0 ? MEM_SPAN_LEN(lens[0]) : 0);
	ok(mem_window_peek(&w, a + 200, 8) == NULL, "a closed window serves nothing again");
	p = mem_cache_peek_window(mc, a + 200, 8, &w);
	ok(p != NULL && mem_cache_read_fresh(mc, a + PAGE, &v, 8) == 0 &&
	    mem_window_peek(&w, a + 300, 8) == NULL,
	    "another page read since: the window serves no more");
	p = mem_cache_peek_window(mc, a + 200, 8, &w);
	mem_cache_clear(mc);
	ok(p != NULL && mem_window_peek(&w, a + 300, 8) == NULL, "nor after a clear");
	mem_window_close(mc, &w);
	mem_cache_free(mc);
	free(mem);
}

/* A current read: from a copy made since the last expiry, yet not live. */
static void
current_reads(void)
{
	unsigned char *mem = aligned_alloc(PAGE, PAGE);
	struct mem_cache *mc = mem_cache_new(getpid(), 16);
	uint64_t a = (uint64_t)(uintptr_t)mem, addrs[4], v = 0;
	uint32_t lens[4];

	memset(mem, 0, PAGE);
	memcpy(mem + 64, &(uint64_t){ 1 }, 8);
	ok(mem_cache_read(mc, a + 64, &v, 8) == 0 && v == 1, "a plain read caches the page");
	memcpy(mem + 64, &(uint64_t){ 2 }, 8);
	ok(mem_cache_read_current(mc, a + 64, &v, 8) == 0 && v == 1,
	    "a current read is served by a copy of this expiry");
	mem_cache_expire(mc);
	ok(mem_cache_read(mc, a + 64, &v, 8) == 0 && v == 1, "after an expiry a plain read is still");
	ok(mem_cache_read_current(mc, a + 64, &v, 8) == 0 && v == 2,
	    "a current read reads the page again");
	ok(mem_cache_pages(mc, addrs, lens, 4, true) == 0, "and the page is not live");
	mem_cache_rank_reset(mc);
	ok(mem_cache_read_current(mc, a + 64, &v, 8) == 0 && mem_cache_rank_max(mc) == 0,
	    "nor ranked");
	mem_cache_free(mc);
	free(mem);
}

int
main(void)
{
	deferred_reads();
	fresh_reads();
	sampler_reads();
	partial_pages();
	spans_on_one_page();
	batch_ranks();
	windows();
	current_reads();
	return done_testing();
}
