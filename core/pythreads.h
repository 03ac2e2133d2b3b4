/*
 * pythreads — Python's own thread names (threading.Thread.name), read from
 * outside, without the agent.
 *
 * CPython before 3.14 does not name OS threads, so /proc shows every thread
 * of a program as "python3".  The names live in the `threading` module:
 * sys.modules['threading']._active is a dict ident -> Thread, and each
 * Thread keeps its name in the instance attribute `_name`.  That path is
 * read here (as py-spy does) and matched to the interpreter's threads by
 * ident (the pthread_t the thread state keeps), never by order.
 *
 * Versions: 3.8–3.13, with the dict and object layouts generated from each
 * configured interpreter's headers (struct py_attr_offsets).  3.14+ names
 * its OS threads itself and has no table here: its threads keep their OS
 * names.  Whatever cannot be read leaves a thread its OS name; nothing here
 * fails, stops the target or reads without bound.
 */
#ifndef FP_PYTHREADS_H
#define FP_PYTHREADS_H

#include <stddef.h>
#include <stdint.h>

#include "core/memread.h"
#include "core/pyruntime.h"

struct py_thread;
struct pythreads;

/* Owned by the caller, freed by pythreads_free(). */
struct pythreads *pythreads_new(const struct pyruntime *rt);
void pythreads_free(struct pythreads *pt);

/*
 * Give each of the n threads (of the interpreter at `interp`) that
 * threading knows its Python name, replacing t->name; the others keep
 * theirs.  Returns how many were named.
 */
size_t pythreads_name(struct pythreads *pt, struct mem_cache *mc, uint64_t interp,
    struct py_thread *threads, size_t n);

#endif
