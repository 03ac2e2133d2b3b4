/*
 * profile — samples folded into a call tree, and the tree written out:
 * collapsed stacks (flamegraph.pl's input), speedscope JSON, a top-style
 * text table, and (core/flamesvg) an interactive SVG.
 *
 * Frames are interned by name and file (one id per function); a code
 * object's address maps to its id through a cache validated by comparing
 * strings, so a sample costs hash lookups, not string hashing.  Names
 * come from the target: each writer escapes them for its format and
 * never trusts them to be well formed.
 */
#ifndef FP_PROFILE_H
#define FP_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/sampler.h"

struct profile_frame {
	char *name;		/* qualname where known, else name */
	char *file;		/* filename, or module for native frames; may be NULL */
	int line;		/* line where the function was first seen running */
	bool thread;		/* a thread root (--threads), not code */
	bool process;		/* a process root (perf over a set), not code */
	bool native;
};

struct profile_node {
	uint32_t frame;		/* index in frames; the root has none (UINT32_MAX) */
	uint32_t parent;
	uint32_t child, sibling;	/* first child, next sibling; UINT32_MAX = none */
	uint64_t self, total;	/* samples */
	uint64_t self_ns, total_ns;
};

#define PROFILE_NONE	UINT32_MAX

struct profile {
	struct profile_frame *frames;
	size_t nframes, aframes;
	struct profile_node *nodes;	/* nodes[0] is the root */
	size_t nnodes, anodes;
	bool by_thread;
	/*
	 * Unique per profile_new() in this process: a view tells a new
	 * profile from an old one freed at the same address.
	 */
	uint64_t serial;
	/* private: lookup tables */
	struct profile_slot *codes, *names, *children;
	size_t acodes, ncodes, anames, nnames, achildren, nchildren;
	uint32_t *path;
	size_t apath;
	/*
	 * Python frames by py_frame.code_id (one reading of one code object:
	 * its strings cannot differ), and the last sample's path and nodes:
	 * a sampler adds the same stack, or one sharing a long prefix with
	 * the last, again and again.  Both are keyed by what the sample
	 * being added says: a frame id by its code_id (which names one set
	 * of strings for ever), a node by the ids of its whole path from the
	 * root (nodes are never removed, and one path has one node).
	 */
	struct profile_slot *ids;
	size_t aids, nids;
	uint32_t *last_path, *last_node;
	uint64_t *last_code, *path_code;	/* code_id of each entry, 0 if none */
	size_t nlast, alast, alast_node, alast_code, apath_code;
};

struct profile *profile_new(bool by_thread);
void profile_free(struct profile *p);
/* Add one sample: its frames (and native ones) under the root. */
void profile_add(struct profile *p, const struct sample *s);
/*
 * The same under a process root frame named `process` (perf over a set:
 * "pid 4101 python3 train.py", "rank 3 (pid 4101)"), above any thread root.
 */
void profile_add_in(struct profile *p, const char *process, const struct sample *s);

/* Writers; each returns 0, or -1 with errno from the stream. */
int profile_write_collapsed(const struct profile *p, FILE *f);
int profile_write_speedscope(const struct profile *p, FILE *f, const char *title);
int profile_write_text(const struct profile *p, FILE *f, unsigned max_rows);

/* The frame's label as the writers show it: "name (file:line)". Malloc'd. */
char *profile_frame_label(const struct profile_frame *fr);

#endif
