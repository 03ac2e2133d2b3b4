#include "config.h"

#include "core/memread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "core/util.h"

#define PAGE 4096u
#define MEM_BATCH 1024	/* IOV_MAX on Linux */

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
	bool ok;		/* readable */
	bool pending;		/* asked for while deferring, not read yet */
	unsigned char *data;
};

struct mem_cache {
	pid_t pid;
	size_t max_pages, used;
	struct mem_page *slots;	/* 2 * max_pages, open addressing */
	size_t nslots;
	bool deferring;		/* misses are noted, not read */
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
	free(mc);
}

void
mem_cache_clear(struct mem_cache *mc)
{
	size_t i;

	/* Keep the buffers; forget their contents. */
	for (i = 0; i < mc->nslots; i++)
		mc->slots[i].page = 0;
	mc->used = 0;
}

/* The cached page holding `page`, read now if needed; NULL if uncachable. */
static struct mem_page *
get_page(struct mem_cache *mc, uint64_t page)
{
	size_t s = (size_t)((page * 0x9e3779b97f4a7c15ull) >> 32) & (mc->nslots - 1);
	struct mem_page *p;

	/* At most half the slots are used, so an empty one is always found. */
	while ((p = &mc->slots[s])->page != 0) {
		if (p->page == page)
			return p;
		s = (s + 1) & (mc->nslots - 1);
	}
	if (mc->used >= mc->max_pages)
		return NULL;
	if (p->data == NULL)
		p->data = xmalloc(PAGE);
	p->page = page;
	p->pending = mc->deferring;
	p->ok = !p->pending && mem_read(mc->pid, page * PAGE, p->data, PAGE) == 0;
	mc->used++;
	return p;
}

void
mem_cache_defer(struct mem_cache *mc, bool on)
{
	mc->deferring = on;
}

/*
 * Read n pending pages with as few process_vm_readv calls as possible: one
 * per IOV_MAX pages, plus one for each unreadable page (the kernel stops at
 * the first remote range it cannot read).
 */
static void
read_batch(struct mem_cache *mc, struct mem_page **batch, size_t n)
{
	struct iovec local[MEM_BATCH], remote[MEM_BATCH];
	size_t i = 0, k, done;
	ssize_t got;

	while (i < n) {
		for (k = i; k < n; k++) {
			local[k - i] = (struct iovec){ batch[k]->data, PAGE };
			remote[k - i] = (struct iovec){ (void *)(uintptr_t)(batch[k]->page * PAGE), PAGE };
		}
		got = process_vm_readv(mc->pid, local, n - i, remote, n - i, 0);
		done = got > 0 ? (size_t)got / PAGE : 0;
		for (k = i; k < i + done; k++) {
			batch[k]->ok = true;
			batch[k]->pending = false;
		}
		i += done;
		if (i < n) {
			batch[i]->ok = mem_read(mc->pid, batch[i]->page * PAGE, batch[i]->data, PAGE) == 0;
			batch[i]->pending = false;
			i++;
		}
	}
}

size_t
mem_cache_fetch(struct mem_cache *mc)
{
	struct mem_page *batch[MEM_BATCH];
	size_t i, n = 0, total = 0;

	for (i = 0; i < mc->nslots; i++) {
		if (mc->slots[i].page == 0 || !mc->slots[i].pending)
			continue;
		batch[n++] = &mc->slots[i];
		total++;
		if (n == MEM_BATCH) {
			read_batch(mc, batch, n);
			n = 0;
		}
	}
	if (n > 0)
		read_batch(mc, batch, n);
	return total;
}

int
mem_cache_read(struct mem_cache *mc, uint64_t addr, void *buf, size_t len)
{
	unsigned char *out = buf;

	if (len > 4 * PAGE)
		return mem_read(mc->pid, addr, buf, len);
	while (len > 0) {
		uint64_t page = addr / PAGE;
		size_t off = (size_t)(addr % PAGE), n = PAGE - off;
		struct mem_page *p = page ? get_page(mc, page) : NULL;

		if (n > len)
			n = len;
		if (p == NULL) {
			if (mem_read(mc->pid, addr, out, n) != 0)
				return -1;
		} else if (p->pending) {
			errno = EAGAIN;
			return -1;
		} else if (!p->ok) {
			errno = EFAULT;
			return -1;
		} else {
			memcpy(out, p->data + off, n);
		}
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

int
mem_cache_read_u64(struct mem_cache *mc, uint64_t addr, uint64_t *value)
{
	return mem_cache_read(mc, addr, value, sizeof *value);
}
