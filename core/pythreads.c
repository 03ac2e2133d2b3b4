#include "config.h"

#include "core/pythreads.h"

#include <stdlib.h>
#include <string.h>

#include "core/pyobj.h"
#include "core/pystack.h"
#include "core/util.h"

/* Bounds: threads in the registry, characters in one name. */
#define MAX_REGISTRY	4096
#define MAX_NAME	256
/* Levels of the path (dicts, keys, objects, strings) with room to spare. */
#define MAX_ROUNDS	32

struct pythreads {
	const struct py_offsets *o;		/* the runtime's offsets in use */
	const struct py_attr_offsets *a;	/* NULL: no names from Python */
	unsigned serial;
	/* The keys of the path, their key objects remembered between reads. */
	struct pyobj_name threading, active, name;
};

struct pythreads *
pythreads_new(const struct pyruntime *rt)
{
	struct pythreads *pt = xcalloc(1, sizeof *pt);
	const struct py_offsets *hdr;
	int exact;

	pt->o = &rt->off;
	pt->threading.text = "threading";
	pt->active.text = "_active";
	pt->name.text = "_name";
	/*
	 * Dict layouts are not in _Py_DebugOffsets (3.13): take them from the
	 * table generated from the same minor version's headers, if any.
	 */
	hdr = rt->off.attr.known ? &rt->off : py_offsets_find(rt->version_hex, &exact);
	if (hdr != NULL && (hdr->version_hex >> 16) == (rt->version_hex >> 16) &&
	    hdr->attr.known && rt->off.interp_modules != PYOFF_NONE &&
	    rt->off.object_type != PYOFF_NONE)
		pt->a = &hdr->attr;
	return pt;
}

void
pythreads_free(struct pythreads *pt)
{
	free(pt);
}

struct naming {
	struct pythreads *pt;
	struct pyobj *p;
	struct py_thread *threads;
	size_t n, named;
};

/* One item of threading._active: ident -> Thread. */
static bool
name_one(void *arg, uint64_t key, uint64_t thread, int64_t hash)
{
	struct naming *nm = arg;
	struct pythreads *pt = nm->pt;
	uint64_t name;
	size_t i;
	char *s;

	(void)key;
	/*
	 * The key is the int ident, and hash(n) == n for 0 <= n < the hash
	 * modulus (2**61 - 1): a pthread_t, an address, always is.
	 */
	if (hash <= 0 || (uint64_t)hash >= (uint64_t)pt->a->hash_modulus)
		return true;
	for (i = 0; i < nm->n; i++)
		if (nm->threads[i].thread_id == (uint64_t)hash)
			break;
	if (i == nm->n)
		return true;	/* a Thread whose thread state is gone */
	name = pyobj_getattr(nm->p, thread, &pt->name);
	if (!pyobj_is_str(nm->p, name) || (s = pyobj_read_str(nm->p->mc, pt->o, name, MAX_NAME)) == NULL)
		return true;
	free(nm->threads[i].name);
	nm->threads[i].name = s;
	nm->named++;
	return true;
}

/* One walk of the registry; reads that would block on deferred pages fail. */
static size_t
walk(struct pythreads *pt, struct pyobj *p, uint64_t interp, struct py_thread *threads,
    size_t n)
{
	struct naming nm = { .pt = pt, .p = p, .threads = threads, .n = n, .named = 0 };
	uint64_t modules, module, active;

	if (mem_cache_read_u64(p->mc, interp + (uint64_t)pt->o->interp_modules, &modules) != 0)
		return 0;
	/* Not imported (yet): no Thread objects, only OS names. */
	if ((module = pyobj_dict_get(p, modules, &pt->threading)) == 0 ||
	    (active = pyobj_getattr(p, module, &pt->active)) == 0)
		return 0;
	pyobj_dict_each(p, active, MAX_REGISTRY, name_one, &nm);
	return nm.named;
}

size_t
pythreads_name(struct pythreads *pt, struct mem_cache *mc, uint64_t interp,
    struct py_thread *threads, size_t n)
{
	struct pyobj p = { .mc = mc, .o = pt->o, .a = pt->a, .serial = ++pt->serial };
	size_t named = 0;
	unsigned round;

	if (pt->a == NULL || n == 0 || !mem_ptr_ok(interp, 8))
		return 0;
	/*
	 * Every Thread is read in the same pass: each walk notes the pages it
	 * lacks, which are then read in one system call, and the walk runs
	 * again — one call per level of the path, not one per object.  A walk
	 * that names a thread names it right (from a whole string), so
	 * partial walks do no harm.
	 */
	mem_cache_defer(mc, true);
	for (round = 0; round < MAX_ROUNDS; round++) {
		named = walk(pt, &p, interp, threads, n);
		if (mem_cache_fetch(mc) == 0)
			break;
	}
	mem_cache_defer(mc, false);
	return named;
}
