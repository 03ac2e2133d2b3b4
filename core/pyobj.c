#include "config.h"

#include "core/pyobj.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/*
 * Bounds on what a corrupted or hostile target can make us read: the
 * largest dict we walk (sys.modules of a big program has a few thousand
 * entries), and the largest hash table we accept (2**30 slots).
 */
#define MAX_ENTRIES	(1u << 15)
#define MAX_LOG2_SIZE	30
/* tp_dictoffset larger than this is not an instance's dict. */
#define MAX_DICTOFFSET	(1 << 16)

/* ---- str ---------------------------------------------------------------- */

static void
append_utf8(struct sbuf *b, uint32_t c)
{
	char out[4];
	size_t n;

	if (c < 0x80) {
		out[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		if (c >= 0xd800 && c <= 0xdfff)
			c = 0xfffd;	/* lone surrogate */
		out[0] = (char)(0xe0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		if (c > 0x10ffff)
			c = 0xfffd;
		out[0] = (char)(0xf0 | (c >> 18));
		out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	sbuf_addn(b, out, n);
}

static char *
read_str(struct mem_cache *mc, const struct py_offsets *o, uint64_t addr, size_t max_len,
    int (*rd)(struct mem_cache *, uint64_t, void *, size_t))
{
	unsigned char hdr[PYOFF_UNICODE_SPAN];
	uint32_t state, kind;
	uint64_t len, data;
	size_t hsize = (size_t)o->unicode_compact_size, i;
	struct sbuf b = { 0 };
	unsigned char *raw;

	if (!mem_ptr_ok(addr, 8) || hsize > sizeof hdr || rd(mc, addr, hdr, hsize) != 0)
		return NULL;
	state = mem_field_u32(hdr, o->unicode_state);
	len = mem_field_u64(hdr, o->unicode_length);
	kind = (state >> o->unicode_kind_shift) & o->unicode_kind_mask;
	if (!(state & o->unicode_compact_bit) || len > max_len)
		return NULL;
	if (state & o->unicode_ascii_bit) {
		kind = 1;
		data = addr + (uint64_t)o->unicode_ascii_size;
	} else {
		data = addr + (uint64_t)o->unicode_compact_size;
	}
	if (kind != 1 && kind != 2 && kind != 4)
		return NULL;
	raw = xmalloc(len * kind + 1);
	if (rd(mc, data, raw, len * kind) != 0) {
		free(raw);
		return NULL;
	}
	if (state & o->unicode_ascii_bit) {
		raw[len] = '\0';
		for (i = 0; i < len; i++)
			if (raw[i] >= 0x80)
				raw[i] = '?';
		return (char *)raw;
	}
	for (i = 0; i < len; i++) {
		uint32_t c;

		if (kind == 1)
			c = raw[i];
		else if (kind == 2)
			c = (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8;
		else
			memcpy(&c, raw + 4 * i, 4);
		append_utf8(&b, c);
	}
	free(raw);
	return sbuf_steal(&b);
}

char *
pyobj_read_str(struct mem_cache *mc, const struct py_offsets *o, uint64_t addr,
    size_t max_len)
{
	return read_str(mc, o, addr, max_len, mem_cache_read);
}

char *
pyobj_read_str_current(struct mem_cache *mc, const struct py_offsets *o, uint64_t addr,
    size_t max_len)
{
	return read_str(mc, o, addr, max_len, mem_cache_read_current);
}

static bool
str_is(struct pyobj *p, uint64_t addr, const char *text)
{
	char *s = pyobj_read_str(p->mc, p->o, addr, strlen(text));
	bool same = s != NULL && strcmp(s, text) == 0;

	free(s);
	return same;
}

/* ---- dicts -------------------------------------------------------------- */

static bool
rd_u64(struct pyobj *p, uint64_t addr, uint64_t *v)
{
	return mem_ptr_ok(addr, 8) && mem_cache_read_u64(p->mc, addr, v) == 0;
}

static bool
rd_u8(struct pyobj *p, uint64_t addr, uint8_t *v)
{
	return addr >= 0x1000 && mem_cache_read(p->mc, addr, v, 1) == 0;
}

/* The entries of one keys object, read at once. */
struct table {
	size_t n;		/* entries read */
	size_t esize;		/* bytes per entry */
	int64_t ekey, evalue, ehash;	/* ehash PYOFF_NONE: not stored */
	unsigned char *buf;	/* n * esize bytes */
	uint64_t *values;	/* split tables: n values, else NULL */
};

static void
table_free(struct table *t)
{
	free(t->buf);
	free(t->values);
	memset(t, 0, sizeof *t);
}

/* Where the entries start, and how many slots the hash table has. */
static bool
keys_layout(struct pyobj *p, uint64_t keys, uint64_t *entries, uint64_t *slots)
{
	const struct py_attr_offsets *a = p->a;
	uint64_t size;
	uint8_t log2, log2_bytes;

	if (a->keys_size != PYOFF_NONE) {
		/* 3.8–3.10: 1, 2 or 4 bytes an index as dk_size grows (8 past 2**32 slots, refused). */
		unsigned ix;

		if (!rd_u64(p, keys + (uint64_t)a->keys_size, &size) || size < 8 ||
		    size > (1ull << MAX_LOG2_SIZE) || (size & (size - 1)) != 0)
			return false;
		ix = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
		*entries = keys + (uint64_t)a->keys_indices + size * ix;
		*slots = size;
		return true;
	}
	/* 3.11+: the index array's size is stored, as a power of two. */
	if (!rd_u8(p, keys + (uint64_t)a->keys_log2_size, &log2) ||
	    !rd_u8(p, keys + (uint64_t)a->keys_log2_index_bytes, &log2_bytes) ||
	    log2 > MAX_LOG2_SIZE || log2_bytes < log2 || log2_bytes > log2 + 3)
		return false;
	*entries = keys + (uint64_t)a->keys_indices + (1ull << log2_bytes);
	*slots = 1ull << log2;
	return true;
}

/*
 * Read the entries of the keys object at `keys`; `values` is the address of
 * a split table's values array, or 0.  Bounded by MAX_ENTRIES.
 */
static bool
table_read(struct pyobj *p, uint64_t keys, uint64_t values, struct table *t)
{
	const struct py_attr_offsets *a = p->a;
	uint64_t entries, slots, n;
	uint8_t kind = 0;

	memset(t, 0, sizeof *t);
	if (!mem_ptr_ok(keys, 8) || !keys_layout(p, keys, &entries, &slots) ||
	    !rd_u64(p, keys + (uint64_t)a->keys_nentries, &n) || n > slots)
		return false;
	if (a->keys_kind != PYOFF_NONE && !rd_u8(p, keys + (uint64_t)a->keys_kind, &kind))
		return false;
	if (a->keys_kind == PYOFF_NONE || kind == a->kind_general) {
		t->esize = (size_t)a->entry_size;
		t->ekey = a->entry_key;
		t->evalue = a->entry_value;
		t->ehash = a->entry_hash;
	} else {
		/* 3.11+: str-only tables keep no hashes (the str has its own). */
		t->esize = (size_t)a->uentry_size;
		t->ekey = a->uentry_key;
		t->evalue = a->uentry_value;
		t->ehash = PYOFF_NONE;
	}
	t->n = n > MAX_ENTRIES ? MAX_ENTRIES : (size_t)n;
	if (t->n == 0)
		return true;
	t->buf = xmalloc(t->n * t->esize);
	if (mem_cache_read(p->mc, entries, t->buf, t->n * t->esize) != 0)
		goto bad;
	if (values != 0) {
		t->values = xmalloc(t->n * sizeof *t->values);
		if (!mem_ptr_ok(values, 8) ||
		    mem_cache_read(p->mc, values, t->values, t->n * sizeof *t->values) != 0)
			goto bad;
	}
	return true;
bad:
	table_free(t);
	return false;
}

static uint64_t
entry_key(const struct table *t, size_t i)
{
	return mem_field_u64(t->buf + i * t->esize, t->ekey);
}

static uint64_t
entry_value(const struct table *t, size_t i)
{
	if (t->values != NULL)
		return t->values[i];
	return mem_field_u64(t->buf + i * t->esize, t->evalue);
}

/* The ASCII str `text`, from its header and data read as one span. */
static bool
span_is(struct pyobj *p, const unsigned char *span, const char *text, size_t len)
{
	const struct py_offsets *o = p->o;
	uint32_t state = mem_field_u32(span, o->unicode_state);

	return (state & o->unicode_compact_bit) && (state & o->unicode_ascii_bit) &&
	    mem_field_u64(span, o->unicode_length) == len &&
	    memcmp(span + o->unicode_ascii_size, text, len) == 0;
}

/*
 * The first look for a key (or after its object changed): compare the text
 * of every key.  Keys are scattered over the heap (sys.modules' over some
 * forty pages), so each one's header and first bytes are read as a small
 * span, all in one system call, rather than page by page.
 */
static long
find_text(struct pyobj *p, const struct table *t, struct pyobj_name *name)
{
	size_t len = strlen(name->text), span = (size_t)p->o->unicode_ascii_size + len;
	size_t i, n = 0, *index;
	uint64_t *addrs;
	unsigned char *buf;
	bool *ok;
	long found = -1;

	if (t->n == 0 || span > PYOFF_UNICODE_SPAN)
		return -1;
	addrs = xmalloc(t->n * sizeof *addrs);
	index = xmalloc(t->n * sizeof *index);
	for (i = 0; i < t->n; i++) {
		if (!mem_ptr_ok(entry_key(t, i), 8))
			continue;	/* an empty or deleted slot */
		addrs[n] = entry_key(t, i);
		index[n++] = i;
	}
	buf = xmalloc(n * span + 1);
	ok = xmalloc(n * sizeof *ok + 1);
	mem_read_spans(mem_cache_pid(p->mc), addrs, n, span, buf, ok);
	for (i = 0; i < n && found < 0; i++)
		if (ok[i] && span_is(p, buf + i * span, name->text, len)) {
			found = (long)index[i];
			name->addr = addrs[i];
			name->checked = p->serial;
		}
	free(addrs);
	free(index);
	free(buf);
	free(ok);
	return found;
}

/* Index of the entry whose key is the str `name`, or -1. */
static long
table_find(struct pyobj *p, const struct table *t, struct pyobj_name *name)
{
	size_t i;

	if (name->addr != 0) {
		for (i = 0; i < t->n; i++) {
			if (entry_key(t, i) != name->addr)
				continue;
			if (name->checked == p->serial || str_is(p, name->addr, name->text)) {
				name->checked = p->serial;
				return (long)i;
			}
			break;
		}
	}
	return find_text(p, t, name);
}

static bool
has_type_flag(struct pyobj *p, uint64_t obj, int64_t flag)
{
	uint64_t type, flags;

	return rd_u64(p, obj + (uint64_t)p->o->object_type, &type) &&
	    rd_u64(p, type + (uint64_t)p->a->type_flags, &flags) &&
	    (flags & (uint64_t)flag) != 0;
}

bool
pyobj_is_str(struct pyobj *p, uint64_t addr)
{
	return p->a != NULL && mem_ptr_ok(addr, 8) &&
	    has_type_flag(p, addr, p->a->flag_unicode_subclass);
}

/* The entries of the dict object at `dict`. */
static bool
dict_table(struct pyobj *p, uint64_t dict, struct table *t)
{
	const struct py_attr_offsets *a = p->a;
	uint64_t keys, values;

	if (a == NULL || !mem_ptr_ok(dict, 8) || !has_type_flag(p, dict, a->flag_dict_subclass) ||
	    !rd_u64(p, dict + (uint64_t)a->dict_keys, &keys) ||
	    mem_cache_read_u64(p->mc, dict + (uint64_t)a->dict_values, &values) != 0)
		return false;
	/* A split table: values apart from the shared keys. */
	if (values != 0)
		values += (uint64_t)a->values_values;
	return table_read(p, keys, values, t);
}

uint64_t
pyobj_dict_get(struct pyobj *p, uint64_t dict, struct pyobj_name *name)
{
	struct table t;
	uint64_t value = 0;
	long i;

	if (!dict_table(p, dict, &t))
		return 0;
	if ((i = table_find(p, &t, name)) >= 0)
		value = entry_value(&t, (size_t)i);
	table_free(&t);
	return value;
}

void
pyobj_dict_each(struct pyobj *p, uint64_t dict, size_t max, pyobj_item_fn fn, void *arg)
{
	struct table t;
	size_t i, seen = 0;

	if (!dict_table(p, dict, &t))
		return;
	for (i = 0; i < t.n && seen < max; i++) {
		uint64_t key = entry_key(&t, i), value = entry_value(&t, i);
		int64_t hash = -1;

		if (key == 0 || value == 0)
			continue;	/* deleted */
		if (t.ehash != PYOFF_NONE)
			hash = (int64_t)mem_field_u64(t.buf + i * t.esize, t.ehash);
		seen++;
		if (!fn(arg, key, value, hash))
			break;
	}
	table_free(&t);
}

/* ---- instance attributes ------------------------------------------------ */

/* An attribute kept in values beside the type's shared keys (3.11+). */
static uint64_t
split_get(struct pyobj *p, uint64_t type, uint64_t flags, uint64_t values,
    size_t capacity, struct pyobj_name *name)
{
	const struct py_attr_offsets *a = p->a;
	struct table t;
	uint64_t keys, value = 0;
	long i;

	if (!(flags & (uint64_t)a->flag_heaptype) ||
	    !rd_u64(p, type + (uint64_t)a->heaptype_cached_keys, &keys) ||
	    !table_read(p, keys, 0, &t))
		return 0;
	i = table_find(p, &t, name);
	if (i >= 0 && (size_t)i < capacity)
		rd_u64(p, values + (uint64_t)a->values_values + 8 * (uint64_t)i, &value);
	table_free(&t);
	return value;
}

/* 3.11+: the managed dict, or values with no dict object at all. */
static uint64_t
managed_get(struct pyobj *p, uint64_t obj, uint64_t type, uint64_t flags,
    struct pyobj_name *name)
{
	const struct py_attr_offsets *a = p->a;
	uint64_t word = 0, dict = 0;
	uint8_t valid = 0, capacity = 0;

	switch (a->managed) {
	case PY_MANAGED_VALUES_PTR:	/* 3.11: pycore_object.h _PyObject_ValuesPointer */
		if (rd_u64(p, obj + (uint64_t)a->managed_values, &word) && word != 0)
			return split_get(p, type, flags, word, MAX_ENTRIES, name);
		break;
	case PY_MANAGED_TAGGED:
		/* 3.12: the low bit tags values, stored one byte below (_PyDictOrValues_GetValues) */
		if (rd_u64(p, obj + (uint64_t)a->managed_dict, &word) && (word & 1))
			return split_get(p, type, flags, word + 1, MAX_ENTRIES, name);
		return pyobj_dict_get(p, word, name);
	case PY_MANAGED_INLINE:
		/* 3.13: values after the header while `valid` (_PyObject_InlineValues) */
		if ((flags & (uint64_t)a->flag_inline_values) &&
		    rd_u8(p, obj + (uint64_t)(a->managed_values + a->values_valid), &valid) &&
		    valid &&
		    rd_u8(p, obj + (uint64_t)(a->managed_values + a->values_capacity), &capacity))
			return split_get(p, type, flags, obj + (uint64_t)a->managed_values,
			    capacity, name);
		break;
	default:
		return 0;
	}
	if (!rd_u64(p, obj + (uint64_t)a->managed_dict, &dict))
		return 0;
	return pyobj_dict_get(p, dict, name);
}

uint64_t
pyobj_getattr(struct pyobj *p, uint64_t obj, struct pyobj_name *name)
{
	const struct py_attr_offsets *a = p->a;
	uint64_t type, flags, dictoff, dict;

	if (a == NULL || !mem_ptr_ok(obj, 8) ||
	    !rd_u64(p, obj + (uint64_t)p->o->object_type, &type) ||
	    !rd_u64(p, type + (uint64_t)a->type_flags, &flags))
		return 0;
	if (flags & (uint64_t)a->flag_managed_dict)
		return managed_get(p, obj, type, flags, name);
	/* A dict pointer at tp_dictoffset (negative: counted from the end; not ours). */
	if (!rd_u64(p, type + (uint64_t)a->type_dictoffset, &dictoff) ||
	    (int64_t)dictoff <= 0 || dictoff > MAX_DICTOFFSET ||
	    !rd_u64(p, obj + dictoff, &dict))
		return 0;
	return pyobj_dict_get(p, dict, name);
}
