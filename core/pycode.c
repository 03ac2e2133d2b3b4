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
/* CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR, the same on 3.8+ */
#define CO_ANY_GENERATOR	(0x20 | 0x80 | 0x200)

/*
 * A sampler does not check every code object it knows on every tick.  A
 * check is a few words, but process_vm_readv costs per page it pins
 * (~0.5 us each here, the bytes hardly count), and code objects lie on a
 * page each: a 30-deep stack of 25 functions would pin 25 pages a tick
 * for them alone.  So one read or checked is trusted without a read for
 * PYCODE_TRUST_NS; the batch that starts a tick (pycode_refresh) checks
 * the ones at least PYCODE_RECHECK_NS old, at most PYCODE_EARLY_CHECKS of
 * them a tick while younger than PYCODE_LATE_NS (spreading the checks of
 * code first met together over ticks), all of them from then on; one that
 * is still older than PYCODE_TRUST_NS when a frame meets it is checked in
 * that snapshot (pycode_check, a system call of its own).
 *
 * What that costs: a code object freed and another one made at its
 * address (a function defined again, code compiled and dropped) is named
 * as the old one for at most PYCODE_TRUST_NS after its last check -- not
 * longer (tests/integration/test_perf.py, test_replaced_code_named_anew).
 * On 3.11+ a frame that runs outside a cached code object's bytecode (its
 * instruction pointer past the size the cache read) has that code checked
 * at once, whatever its age.  A snapshot that is not a sampler's (`stack`)
 * checks every code object it uses, every time.
 */
/* PYCODE_TRUST_NS: pystack_int.h (pycode_frame trusts as pycode_get does) */
#define PYCODE_RECHECK_NS	(PYCODE_TRUST_NS / 2)
#define PYCODE_LATE_NS		(PYCODE_TRUST_NS * 3 / 4)
#define PYCODE_EARLY_CHECKS	2

/* ---- reading objects ---------------------------------------------------- */

/* A str object as UTF-8; NULL if unreadable or not a compact string. */
static char *
read_unicode(struct py_reader *r, uint64_t addr)
{
	return pyobj_read_str_current(r->mc, &r->rt->off, addr, MAX_STRING);
}

static uint8_t *
read_bytes(struct py_reader *r, uint64_t addr, size_t *lenp)
{
	const struct py_offsets *o = &r->rt->off;
	uint64_t len;
	uint8_t *buf;

	if (!mem_ptr_ok(addr, 8) ||
	    rd_current(r, addr + (uint64_t)o->bytes_size, &len, sizeof len) != 0 ||
	    len > PYCODE_MAX_TABLE)
		return NULL;
	buf = xmalloc(len ? len : 1);
	if (rd_current(r, addr + (uint64_t)o->bytes_sval, buf, len) != 0) {
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
	pycode_strs_release(c->strs);
	free(c->filename);
	free(c->name);
	free(c->qualname);
	free(c->table);
	memset(c, 0, sizeof *c);
}

struct code_info *
pycode_frame_slow(struct py_reader *r, uint64_t frame, uint64_t code, int64_t at,
    int64_t line_at, int *line)
{
	struct frame_memo *m;
	struct code_info *c;

	if (r->memo == NULL)
		r->memo = xcalloc(PYCODE_MEMO, sizeof *r->memo);
	m = &r->memo[pycode_memo_slot(frame, line_at)];
	c = pycode_get(r, code, at);
	if (!c->valid) {
		*line = 0;
		return c;
	}
	*line = pycode_line(r, c, line_at);
	*m = (struct frame_memo){ frame, code, c->serial, at, line_at, c, r->codes_moved, *line };
	return c;
}

struct code_strs *
pycode_strs(struct code_info *c)
{
	const char *fn = c->filename != NULL ? c->filename : "???";
	const char *nm = c->name != NULL ? c->name : "???";
	size_t lf, ln, lq;
	struct code_strs *s;

	if (c->strs != NULL)
		return c->strs;
	lf = strlen(fn) + 1;
	ln = strlen(nm) + 1;
	lq = c->qualname != NULL ? strlen(c->qualname) + 1 : 0;
	s = xmalloc(sizeof *s + lf + ln + lq);
	s->refs = 1;	/* c's */
	s->filename = memcpy(s->data, fn, lf);
	s->name = memcpy(s->data + lf, nm, ln);
	s->qualname = lq > 0 ? memcpy(s->data + lf + ln, c->qualname, lq) : NULL;
	return c->strs = s;
}

void
pycode_strs_release(struct code_strs *s)
{
	if (s != NULL && --s->refs == 0)
		free(s);
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

	r->codes_moved++;
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

/*
 * A check of a cached code object compares the pointers it holds, but an
 * address can be reused by each of them at once: the code of a function
 * compiled again and again (the same size, freed and made in the same
 * order) gets the old one's address, and its name and filename strings
 * and line table the old ones' addresses too; comparing pointers alone
 * then named every new function as the first for as long as the sampler
 * ran.  So a check also compares what each of them says: a str's length
 * and hash words (a code object's names are interned, their hash known; a
 * hash computed after the read fails one check, and the code is read once
 * more), a bytes object's size and the word after it (its hash or first
 * bytes).  Print k of c: 0 filename, 1 name, 2 qualname
 * (3.11+; before, the name again), 3 line table.
 */
static uint64_t
print_addr(const struct py_offsets *o, const struct code_info *c, unsigned k)
{
	switch (k) {
	case 0:
		return c->p_filename + (uint64_t)o->unicode_length;
	case 1:
		return c->p_name + (uint64_t)o->unicode_length;
	case 2:
		return (c->p_qualname != 0 ? c->p_qualname : c->p_name) + (uint64_t)o->unicode_length;
	default:
		return c->p_table + (uint64_t)o->bytes_size;
	}
}

/* Does buf, a copy of c's object (or its check span, shifted), hold the pointers c holds? */
static bool
same_pointers(const struct py_offsets *o, const struct code_info *c, const unsigned char *buf)
{
	return c->p_filename == mem_field_u64(buf, o->code_filename) &&
	    c->p_name == mem_field_u64(buf, o->code_name) &&
	    c->p_table == mem_field_u64(buf, o->code_linetable) &&
	    (o->code_qualname == PYOFF_NONE || c->p_qualname == mem_field_u64(buf, o->code_qualname));
}

/* Do c's strings and table still say what they said (read through the cache)? */
static bool
same_prints(struct py_reader *r, const struct code_info *c)
{
	uint64_t now[2];
	unsigned k;

	for (k = 0; k < PYCODE_PRINTS; k++)
		if (rd_current(r, print_addr(&r->rt->off, c, k), now, sizeof now) != 0 ||
		    memcmp(now, c->print[k], sizeof now) != 0)
			return false;
	return true;
}

/* Does a frame running `at` in c run inside it?  Unknown: yes. */
static bool
code_holds(const struct code_info *c, int64_t at)
{
	/* 3.11-3.12 point before the first instruction (-2) until it runs */
	return at == PYCODE_AT_UNKNOWN || c->code_bytes == 0 ||
	    (at >= -2 && at <= (int64_t)c->code_bytes);
}

/* The code object at addr, read or taken from the cache; never NULL. */
struct code_info *
pycode_get(struct py_reader *r, uint64_t addr, int64_t at)
{
	const struct py_offsets *o = &r->rt->off;
	unsigned char buf[PYOFF_CODE_SPAN];
	struct code_info *c;
	size_t csize = (size_t)o->code_size;
	unsigned k;

	if (r->ncodes * 2 >= r->acodes)
		codes_grow(r);
	c = code_at(r, addr);
	/* An invalid one is read again: it may have been read from a stale page. */
	if (c->addr == addr && c->valid && c->generation == r->generation)
		return c;	/* checked by this snapshot, or queued for its check */
	if (c->addr == addr && c->valid && r->batch_codes) {
		/* A sampler's: trusted for a while (see PYCODE_TRUST_NS), else checked after the walks. */
		if (r->tick_ns - c->checked_ns < PYCODE_TRUST_NS && code_holds(c, at))
			return c;
		c->generation = r->generation;
		*ARRAY_PUSH(r->unchecked, r->nunchecked, r->aunchecked) = addr;
		return c;
	}

	if (csize > sizeof buf)
		csize = sizeof buf;
	if (rd_current(r, addr, buf, csize) != 0) {
		if (c->addr == 0)
			r->ncodes++;
		pycode_clear(c);
		c->addr = addr;
		c->serial = next_serial();
		c->generation = r->generation;
		c->checked_ns = r->tick_ns;
		return c;
	}
	if (c->addr == addr && c->valid && same_pointers(o, c, buf) && same_prints(r, c)) {
		c->generation = r->generation;
		c->checked_ns = r->tick_ns;
		return c;
	}
	if (c->addr == 0)
		r->ncodes++;
	pycode_clear(c);
	c->addr = addr;
	c->serial = next_serial();
	c->generation = r->generation;
	c->checked_ns = r->tick_ns;
	/* 3.11+ keeps its bytecode in the code object: Py_SIZE code units of 2 bytes. */
	if (o->code_code_adaptive != PYOFF_NONE && (size_t)o->bytes_size + 8 <= csize) {
		int64_t units = (int64_t)mem_field_u64(buf, o->bytes_size);

		c->code_bytes = units > 0 && units <= (int64_t)PYCODE_MAX_TABLE * 4 ? (uint64_t)units * 2 : 0;
	}
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
	c->generator = o->code_flags != PYOFF_NONE && (size_t)o->code_flags + 4 <= csize &&
	    (mem_field_i32(buf, o->code_flags) & CO_ANY_GENERATOR) != 0;
	c->filename = read_unicode(r, c->p_filename);
	c->name = read_unicode(r, c->p_name);
	if (o->code_qualname != PYOFF_NONE) {
		c->p_qualname = mem_field_u64(buf, o->code_qualname);
		c->qualname = read_unicode(r, c->p_qualname);
	}
	c->table = read_bytes(r, c->p_table, &c->table_len);
	/*
	 * An empty name or qualname is a string read from a page copied
	 * before the string was made there: the compiler never makes one.
	 * CI saw a module's frame "in " twice while its process imported,
	 * when code objects and strings were read from any copy of their
	 * pages, one made in an earlier try of the same `stack` among them
	 * (now mem_cache_read_current: none older than the last expiry).  Not
	 * valid: its pages are read again.
	 */
	c->valid = c->filename != NULL && c->name != NULL && c->name[0] != '\0' &&
	    (c->qualname == NULL || c->qualname[0] != '\0') &&
	    is_code_type(r, mem_field_u64(buf, o->object_type));
	for (k = 0; k < PYCODE_PRINTS && c->valid; k++)
		if (rd_current(r, print_addr(o, c, k), c->print[k], sizeof c->print[k]) != 0)
			c->valid = false;
	return c;
}

/* The span of a code object that holds the pointers pycode_get() compares. */
static void
code_check_span(const struct py_offsets *o, int64_t *lo, size_t *len)
{
	const int64_t at[] = { o->code_filename, o->code_name, o->code_linetable, o->code_qualname };
	int64_t min = at[0], max = at[0];
	size_t i;

	for (i = 1; i < sizeof at / sizeof at[0]; i++) {
		if (at[i] == PYOFF_NONE)
			continue;
		if (at[i] < min)
			min = at[i];
		if (at[i] > max)
			max = at[i];
	}
	*lo = min;
	*len = (size_t)(max - min) + 8;
}

/* Spans read to check one code object: its pointers, then each print. */
#define SPANS_PER_CODE	(1 + PYCODE_PRINTS)
#define PRINT_LEN	(2 * sizeof(uint64_t))	/* struct code_info's print[k] */

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
	if (len < PRINT_LEN)
		len = PRINT_LEN;
	for (i = 0; i < n; i++) {
		struct code_info *c = find_code(r, codes[i]);
		const unsigned char *b = buf + i * SPANS_PER_CODE * len;
		bool same;
		unsigned k;

		if (c == NULL || !c->valid)
			continue;
		same = ok[i * SPANS_PER_CODE] && same_pointers(o, c, b - lo);
		for (k = 0; k < PYCODE_PRINTS && same; k++)
			same = ok[i * SPANS_PER_CODE + 1 + k] &&
			    memcmp(b + (1 + k) * len, c->print[k], PRINT_LEN) == 0;
		if (same) {
			if (current)
				c->generation = r->generation;
			c->checked_ns = r->tick_ns;
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
#define SPANS_SMALL	(32 * SPANS_PER_CODE)
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
	if (sp->len < PRINT_LEN)
		sp->len = PRINT_LEN;
	n *= SPANS_PER_CODE;
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
	for (i = 0; i < n; i++) {
		const struct code_info *c = find_code(r, codes[i / SPANS_PER_CODE]);
		unsigned k = (unsigned)(i % SPANS_PER_CODE);

		/* an entry gone or invalid is skipped by codes_compare: any readable address */
		if (k == 0 || c == NULL)
			addrs[i] = codes[i / SPANS_PER_CODE] + (uint64_t)lo;
		else
			addrs[i] = print_addr(&r->rt->off, c, k - 1);
	}
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

/*
 * Of the code objects the last snapshot used, the ones this tick's batch
 * checks (see PYCODE_TRUST_NS), into due[]; returns how many.  The rest
 * are trusted unread, or checked after the walks if too old by then.
 */
static size_t
codes_due(struct py_reader *r, uint64_t *due)
{
	size_t i, n = 0, early = 0;

	for (i = 0; i < r->nused; i++) {
		const struct code_info *c = find_code(r, r->used[i]);
		uint64_t age;

		if (c == NULL || !c->valid)
			continue;
		age = r->tick_ns - c->checked_ns;
		if (age < PYCODE_RECHECK_NS)
			continue;
		if (age < PYCODE_LATE_NS && early++ >= PYCODE_EARLY_CHECKS)
			continue;
		due[n++] = r->used[i];
	}
	return n;
}

void
pycode_refresh(struct py_reader *r, const uint64_t *pages, const uint32_t *lens, size_t npages,
    const struct mem_range *after, size_t nafter, bool *after_ok)
{
	struct mem_spans sp;
	struct spans_room room;
	uint64_t small[SPANS_SMALL], *due = r->nused <= SPANS_SMALL ? small :
	    xmalloc(r->nused * sizeof *due);
	size_t n = codes_due(r, due);

	spans_of(r, due, n, &sp, &room);
	sp.after = after;
	sp.nafter = nafter;
	sp.after_ok = after_ok;
	mem_cache_refresh_spans(r->mc, pages, lens, npages, &sp);
	(void)codes_compare(r, due, n, sp.buf, sp.ok, true);
	spans_free(&sp, &room);
	if (due != small)
		free(due);
}

void
pycode_begin(struct py_reader *r)
{
	r->nunchecked = 0;
	r->nused = 0;
}
