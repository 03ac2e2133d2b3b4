/*
 * memscan — counts the interpreter's objects by type, in C, walking the
 * collector's generation lists directly (no list of every object is ever
 * built).  The GIL is held in slices of a few milliseconds and released
 * between them, so the program's threads keep running during a scan; a
 * scan during which the heap changed under the cursor says so
 * (`approximate`).
 *
 * Counted: every object the collector tracks (generations 0-2 and the
 * frozen one), and the untracked objects they reference directly (ints,
 * strs, floats, tuples of atomics...), each once.  Objects reachable only
 * from C or from untracked objects are not counted.
 *
 * Must never: run the program's Python code during a slice (a type whose
 * __sizeof__ is written in Python is counted at its basic size), build a
 * Python object per scanned object, or keep the GIL for longer than one
 * slice.
 */
#ifndef FP_MEMSCAN_H
#define FP_MEMSCAN_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "inject/agent/agent.h"

struct memscan_type {
	PyTypeObject *tp;	/* a strong reference while the scan lives */
	long long count;
	long long size;		/* bytes, as sys.getsizeof reports them */
	/* How one instance's size is found (memscan.c's cache). */
	int size_kind;
	PyCFunction size_fn;
};

struct memscan {
	struct memscan_type *types;	/* hash table by tp; empty slots have tp NULL */
	size_t ntypes, cap;
	long long objects, bytes;
	long long untracked;		/* of objects: found as referents */
	bool approximate;		/* the heap changed between slices */
	bool cut_short;			/* stopped after SCAN_MAX_MS: not every object seen */
	bool python_sizeof;		/* a type's __sizeof__ is Python code: basic size used */
	unsigned slices;
	double wall_ms, max_hold_ms;
};

/*
 * Scan under the GIL (the caller holds it; it is released between slices
 * and held again on return).  Stops early, with false and *why, when the
 * job is cancelled or the collector's state cannot be found.
 */
bool memscan_run(struct memscan *scan, struct agent_job *job, char **why);
/* The entry of tp, or NULL. */
const struct memscan_type *memscan_find(const struct memscan *scan, PyTypeObject *tp);
/* Drop the type references (under the GIL) and the memory. */
void memscan_clear(struct memscan *scan);

#endif
