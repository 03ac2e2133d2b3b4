/*
 * core/pycode.c — the code objects a thread's frames run, read from
 * outside: file, names and line table, cached across snapshots by
 * address, and checked again (in one batch) when a later snapshot may
 * find another object at the same address.  The frames that use them
 * are core/pyframes.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/linetable.h"
#include "core/memread.h"
#include "core/pyobj.h"
#include "core/pystack_int.h"
#include "core/util.h"

#define MAX_STRING	4096
/* More pointers than a frame of any real code holds: a size read past it is torn. */
#define FRAMESIZE_MAX (1 << 20)
#define CO_NO_MONITORING_EVENTS 0x2000000	/* 3.13 cpython/code.h */

/* ---- reading objects ---------------------------------------------------- */

/* A str object as UTF-8; NULL if unreadable or not a compact string. */
static char *
read_unicode(struct py_reader *r, uint64_t addr)
{
	return pyobj_read_str(r->mc, &r->rt->off, addr, MAX_STRING);
}

static uint8_t *
read_bytes(struct py_reader *r, uint64_t addr, size_t *lenp)
{
	const struct py_offsets *o = &r->rt->off;
	uint64_t len;
	uint8_t *buf;

	if (!mem_ptr_ok(addr, 8) ||
	    rd_u64(r, addr + (uint64_t)o->bytes_size, &len) != 0 ||
	    len > PYCODE_MAX_TABLE)
		return NULL;
	buf = xmalloc(len ? len : 1);
	if (rd(r, addr + (uint64_t)o->bytes_sval, buf, len) != 0) {
		free(buf);
		return NULL;
	}
	*lenp = len;
	return buf;
}

/*
 * A new serial for each reading of a code object, unique over every
 * reader of this process: the same serial, the same strings.
 */
static uint64_t
next_serial(void)
{
	static uint64_t serials;

	return __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
}

void
pycode_clear(struct code_info *c)
{
	free(c->filename);
	free(c->name);
	free(c->qualname);
	free(c->table);
	memset(c, 0, sizeof *c);
}

int
pycode_line(const struct py_reader *r, struct code_info *c, int64_t offset)
{
	unsigned i;

	for (i = 0; i < c->nlines; i++)
		if (c->line_at[i] == offset)
			return c->line[i];
	i = c->next_line;
	c->next_line = (i + 1) % PYCODE_LINES;
	if (c->nlines < PYCODE_LINES)
		c->nlines++;
	c->line_at[i] = offset;
	c->line[i] = linetable_line(r->rt->off.version_hex, c->table, c->table_len,
	    c->firstlineno, offset);
	return c->line[i];
}

static size_t
code_slot(const struct py_reader *r, uint64_t addr)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (r->acodes - 1);
}

static void
codes_grow(struct py_reader *r)
{
	struct code_info *old = r->codes;
	size_t oldn = r->acodes, i;

	r->acodes = oldn ? oldn * 2 : 256;
	r->codes = xcalloc(r->acodes, sizeof *r->codes);
	for (i = 0; i < oldn; i++) {
		size_t s;

		if (old[i].addr == 0)
			continue;
		s = code_slot(r, old[i].addr);
		while (r->codes[s].addr != 0)
			s = (s + 1) & (r->acodes - 1);
		r->codes[s] = old[i];
	}
	free(old);
}

/* The slot of addr: its entry, or the empty one it would take. */
static struct code_info *
code_at(const struct py_reader *r, uint64_t addr)
{
	size_t s = code_slot(r, addr);

	while (r->codes[s].addr != 0 && r->codes[s].addr != addr)
		s = (s + 1) & (r->acodes - 1);
	return &r->codes[s];
}

static struct code_info *
find_code(const struct py_reader *r, uint64_t addr)
{
	struct code_info *c;

	if (r->acodes == 0)
		return NULL;
	c = code_at(r, addr);
	return c->addr == addr ? c : NULL;
}

/*
 * The type of a code object is PyCode_Type: memory that once held
 * something else (a frame's slot reused, a page read before the code was
 * made) can otherwise pass for code, names and all.  The type's address
 * is learnt from its tp_name once.
 */
static bool
is_code_type(struct py_reader *r, uint64_t type)
{
	const struct py_offsets *o = &r->rt->off;
	uint64_t name;
	char s[5];

	if (r->code_type != 0 || !mem_ptr_ok(type, 8))
		return type == r->code_type;
	if (rd_u64(r, type + (uint64_t)o->type_name, &name) != 0 || !mem_ptr_ok(name, 1) ||
	    rd(r, name, s, sizeof s) != 0 || memcmp(s, "code", sizeof s) != 0)
		return false;
	r->code_type = type;
	return true;
}

/* The code object at addr, read or taken from the cache; never NULL. */
struct code_info *
pycode_get(struct py_reader *r, uint64_t addr)
{
	const struct py_offsets *o = &r->rt->off;
	unsigned char buf[PYOFF_CODE_SPAN];
	struct code_info *c;
	size_t csize = (size_t)o->code_size;

	if (r->ncodes * 2 >= r->acodes)
		codes_grow(r);
	c = code_at(r, addr);
	/* An invalid one is read again: it may have been read from a stale page. */
	if (c->addr == addr && c->generation == r->generation && c->valid)
		return c;
	/* A sampler checks the ones it knows all at once, after the walks. */
	if (c->addr == addr && c->valid && r->batch_codes) {
		c->generation = r->generation;
		*ARRAY_PUSH(r->unchecked, r->nunchecked, r->aunchecked) = addr;
		return c;
	}

	if (csize > sizeof buf)
		csize = sizeof buf;
	if (rd(r, addr, buf, csize) != 0) {
		if (c->addr == 0)
			r->ncodes++;
		pycode_clear(c);
		c->addr = addr;
		c->serial = next_serial();
		c->generation = r->generation;
		return c;
	}
	if (c->addr == addr && c->valid &&
	    c->p_filename == mem_field_u64(buf, o->code_filename) &&
	    c->p_name == mem_field_u64(buf, o->code_name) &&
	    c->p_table == mem_field_u64(buf, o->code_linetable)) {
		c->generation = r->generation;
		return c;
	}
	if (c->addr == 0)
		r->ncodes++;
	pycode_clear(c);
	c->addr = addr;
	c->serial = next_serial();
	c->generation = r->generation;
	c->p_filename = mem_field_u64(buf, o->code_filename);
	c->p_name = mem_field_u64(buf, o->code_name);
	c->p_table = mem_field_u64(buf, o->code_linetable);
	c->firstlineno = mem_field_i32(buf, o->code_firstlineno);
	if (o->code_framesize != PYOFF_NONE && (size_t)o->code_framesize + 4 <= csize) {
		c->framesize = mem_field_i32(buf, o->code_framesize);
		if (c->framesize < 0 || c->framesize > FRAMESIZE_MAX)
			c->framesize = 0;	/* torn: unknown */
	}
	/*
	 * 3.11 pushes co_nlocalsplus + co_stacksize + FRAME_SPECIALS_SIZE
	 * pointers (_PyFrame_PushUnchecked), the specials being the frame's
	 * own fields before localsplus[1]: what 3.12 stores as co_framesize.
	 */
	if (o->code_nlocalsplus != PYOFF_NONE && o->code_stacksize != PYOFF_NONE &&
	    (size_t)o->code_nlocalsplus + 4 <= csize && (size_t)o->code_stacksize + 4 <= csize &&
	    o->frame_size > 8) {
		/* In 64 bits: a code object read torn holds any numbers at all. */
		int64_t n = (int64_t)mem_field_i32(buf, o->code_nlocalsplus) +
		    mem_field_i32(buf, o->code_stacksize) + (int64_t)((o->frame_size - 1) / 8);

		c->framesize = n > 0 && n <= FRAMESIZE_MAX ? (int)n : 0;
	}
	/*
	 * 3.13 calls a class's Python __init__ through a trampoline frame
	 * (CALL_ALLOC_AND_ENTER_INIT: _Py_InitCleanup, "__init__" line 0) that
	 * its own tracebacks never show; it alone carries this flag.  3.14+
	 * marks such frames by their owner (is_shim).
	 */
	c->shim = o->version_hex >= 0x030D0000 && o->version_hex < 0x030E0000 &&
	    o->code_flags != PYOFF_NONE && (size_t)o->code_flags + 4 <= csize &&
	    (mem_field_i32(buf, o->code_flags) & CO_NO_MONITORING_EVENTS) != 0;
	c->filename = read_unicode(r, c->p_filename);
	c->name = read_unicode(r, c->p_name);
	if (o->code_qualname != PYOFF_NONE)
		c->qualname = read_unicode(r, mem_field_u64(buf, o->code_qualname));
	c->table = read_bytes(r, c->p_table, &c->table_len);
	c->valid = c->filename != NULL && c->name != NULL &&
	    is_code_type(r, mem_field_u64(buf, o->object_type));
	return c;
}

/* The span of a code object that holds the pointers pycode_get() compares. */
static void
code_check_span(const struct py_offsets *o, int64_t *lo, size_t *len)
{
	int64_t a = o->code_filename, b = o->code_name, c = o->code_linetable;
	int64_t min = a < b ? (a < c ? a : c) : (b < c ? b : c);
	int64_t max = a > b ? (a > c ? a : c) : (b > c ? b : c);

	*lo = min;
	*len = (size_t)(max - min) + 8;
}

/*
 * Compare what was just read of code objects codes[0..n) (code_check_span
 * of each) with what the cache holds: one that differs is another object
 * now, forgotten (read again when next met); with `current`, one that
 * agrees counts as checked for this snapshot.  Returns how many differed.
 */
static size_t
codes_compare(struct py_reader *r, const uint64_t *codes, size_t n, const unsigned char *buf,
    const bool *ok, bool current)
{
	const struct py_offsets *o = &r->rt->off;
	size_t i, len, changed = 0;
	int64_t lo;

	code_check_span(o, &lo, &len);
	for (i = 0; i < n; i++) {
		struct code_info *c = find_code(r, codes[i]);
		const unsigned char *b = buf + i * len - lo;

		if (c == NULL || !c->valid)
			continue;
		if (ok[i] && c->p_filename == mem_field_u64(b, o->code_filename) &&
		    c->p_name == mem_field_u64(b, o->code_name) &&
		    c->p_table == mem_field_u64(b, o->code_linetable)) {
			if (current)
				c->generation = r->generation;
			continue;
		}
		c->valid = false;
		changed++;
	}
	return changed;
}

/*
 * Room for the spans of a sampler's tick on the caller's stack: it checks
 * a few dozen code objects every tick, and allocating for them was a
 * tenth of a tick's CPU with the other per-tick allocations.
 */
#define SPANS_SMALL	64
#define SPAN_SMALL_LEN	64
struct spans_room {
	uint64_t addrs[SPANS_SMALL];
	unsigned char buf[SPANS_SMALL * SPAN_SMALL_LEN];
	bool ok[SPANS_SMALL];
};

/* The spans of codes[0..n) to read for codes_compare, into sp (freed by spans_free). */
static void
spans_of(struct py_reader *r, const uint64_t *codes, size_t n, struct mem_spans *sp,
    struct spans_room *room)
{
	uint64_t *addrs;
	size_t i;
	int64_t lo;

	memset(sp, 0, sizeof *sp);
	code_check_span(&r->rt->off, &lo, &sp->len);
	if (n <= SPANS_SMALL && sp->len <= SPAN_SMALL_LEN) {
		addrs = room->addrs;
		sp->buf = room->buf;
		sp->ok = room->ok;
		memset(room->ok, 0, sizeof room->ok);
	} else {
		addrs = xmalloc((n ? n : 1) * sizeof *addrs);
		sp->buf = xmalloc((n ? n : 1) * sp->len);
		sp->ok = xcalloc(n ? n : 1, sizeof *sp->ok);
	}
	for (i = 0; i < n; i++)
		addrs[i] = codes[i] + (uint64_t)lo;
	sp->addrs = addrs;
	sp->n = n;
}

static void
spans_free(struct mem_spans *sp, struct spans_room *room)
{
	if (sp->addrs != room->addrs) {
		free((void *)sp->addrs);
		free(sp->buf);
		free(sp->ok);
	}
	memset(sp, 0, sizeof *sp);
}

size_t
pycode_check(struct py_reader *r)
{
	struct mem_spans sp;
	struct spans_room room;
	size_t changed;

	if (r->nunchecked == 0)
		return 0;
	spans_of(r, r->unchecked, r->nunchecked, &sp, &room);
	mem_read_spans(r->rt->pid, sp.addrs, sp.n, sp.len, sp.buf, sp.ok);
	changed = codes_compare(r, r->unchecked, r->nunchecked, sp.buf, sp.ok, false);
	r->nunchecked = 0;
	spans_free(&sp, &room);
	return changed;
}

void
pycode_refresh(struct py_reader *r, const uint64_t *pages, const uint32_t *lens, size_t npages,
    const struct mem_range *after, size_t nafter, bool *after_ok)
{
	struct mem_spans sp;
	struct spans_room room;

	spans_of(r, r->used, r->nused, &sp, &room);
	sp.after = after;
	sp.nafter = nafter;
	sp.after_ok = after_ok;
	mem_cache_refresh_spans(r->mc, pages, lens, npages, &sp);
	(void)codes_compare(r, r->used, r->nused, sp.buf, sp.ok, true);
	spans_free(&sp, &room);
}

void
pycode_begin(struct py_reader *r)
{
	r->nunchecked = 0;
	r->nused = 0;
}
