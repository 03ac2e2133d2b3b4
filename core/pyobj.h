/*
 * pyobj — a few kinds of Python objects read from outside: str, dict and an
 * instance's attributes (its dict at tp_dictoffset, or its managed dict or
 * inline values on 3.11+).
 *
 * Everything read is untrusted: a value that does not look right makes a
 * lookup fail (0 or NULL), never an error, and every walk is bounded (dict
 * sizes, string lengths).  Nothing here stops or writes to the target.
 */
#ifndef FP_PYOBJ_H
#define FP_PYOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/memread.h"
#include "core/pyoffsets.h"

/*
 * One way of looking at a process: its page cache, the offsets in use (for
 * objects and str) and the generated table of the same minor version (for
 * dicts and attributes; NULL when there is none).  `serial` changes with
 * each consistent look, so that cached key addresses are checked once per
 * look.
 */
struct pyobj {
	struct mem_cache *mc;
	const struct py_offsets *o;
	const struct py_attr_offsets *a;
	unsigned serial;
};

/*
 * A str key to look up.  The address of the key object that matched last
 * is remembered: dict keys with the same name are usually the same
 * (interned) object, so later lookups compare addresses before strings.
 */
struct pyobj_name {
	const char *text;	/* ASCII */
	uint64_t addr;
	unsigned checked;	/* serial in which addr was compared as text */
};

/* A str object as UTF-8 (malloc'd), at most max_len characters; else NULL. */
char *pyobj_read_str(struct mem_cache *mc, const struct py_offsets *o, uint64_t addr,
    size_t max_len);
/* The same, from pages copied since the cache's last expiry (mem_cache_read_current). */
char *pyobj_read_str_current(struct mem_cache *mc, const struct py_offsets *o, uint64_t addr,
    size_t max_len);

/* The object at addr is a str (or of a subclass of str). */
bool pyobj_is_str(struct pyobj *p, uint64_t addr);

/* The value of the str key `name` in the dict at `dict`; 0 if none. */
uint64_t pyobj_dict_get(struct pyobj *p, uint64_t dict, struct pyobj_name *name);

/*
 * Call fn for each item of the dict at `dict` (at most `max`), with the
 * key's hash as the dict stored it, or -1 in tables that store none.
 * fn returns false to stop.
 */
typedef bool (*pyobj_item_fn)(void *arg, uint64_t key, uint64_t value, int64_t hash);
void pyobj_dict_each(struct pyobj *p, uint64_t dict, size_t max, pyobj_item_fn fn,
    void *arg);

/* The instance attribute `name` of the object at `obj`; 0 if none. */
uint64_t pyobj_getattr(struct pyobj *p, uint64_t obj, struct pyobj_name *name);

#endif
