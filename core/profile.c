#include "config.h"

#include "core/profile.h"

#include <stdlib.h>
#include <string.h>

#include "core/termsafe.h"
#include "core/util.h"

/* One slot of the open-addressed tables: a 64-bit key and a value. */
struct profile_slot {
	uint64_t key;		/* 0 = empty */
	uint32_t value;
};

static uint64_t
mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static uint64_t
hash_str(uint64_t h, const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h * 0x100000001b3ull;
}

/* The slot of key (empty when absent); grows the table at half full. */
static struct profile_slot *
slot_find(struct profile_slot **tab, size_t *alloc, size_t *n, uint64_t key)
{
	size_t i, mask;

	if (key == 0)
		key = 1;
	if ((*n + 1) * 2 > *alloc) {
		struct profile_slot *old = *tab;
		size_t oalloc = *alloc;

		*alloc = oalloc ? oalloc * 2 : 256;
		*tab = xcalloc(*alloc, sizeof **tab);
		for (i = 0; i < oalloc; i++)
			if (old[i].key != 0) {
				size_t j = mix(old[i].key) & (*alloc - 1);

				while ((*tab)[j].key != 0)
					j = (j + 1) & (*alloc - 1);
				(*tab)[j] = old[i];
			}
		free(old);
	}
	mask = *alloc - 1;
	for (i = mix(key) & mask; (*tab)[i].key != 0 && (*tab)[i].key != key; i = (i + 1) & mask)
		;
	return &(*tab)[i];
}

struct profile *
profile_new(bool by_thread)
{
	struct profile *p = xcalloc(1, sizeof *p);
	struct profile_node *root = ARRAY_PUSH(p->nodes, p->nnodes, p->anodes);

	memset(root, 0, sizeof *root);
	static uint64_t serials;

	root->frame = root->parent = root->child = root->sibling = PROFILE_NONE;
	p->by_thread = by_thread;
	p->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
	return p;
}

void
profile_free(struct profile *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nframes; i++) {
		free(p->frames[i].name);
		free(p->frames[i].file);
	}
	free(p->frames);
	free(p->nodes);
	free(p->codes);
	free(p->names);
	free(p->children);
	free(p->path);
	free(p->ids);
	free(p->last_path);
	free(p->last_node);
	free(p->last_code);
	free(p->path_code);
	free(p);
}

static char *
safe(const char *s)
{
	struct sbuf b = { 0 };

	if (s == NULL)
		return NULL;
	termsafe_adds(&b, s, TERMSAFE_FIELD);
	return sbuf_steal(&b);
}

/* The id of (name, file), interned; raw strings from the target. */
static uint32_t
intern_kind(struct profile *p, const char *name, const char *file, int line,
    bool thread, bool native, bool process)
{
	char *sname = safe(name != NULL ? name : "???"), *sfile = safe(file);
	uint64_t h = hash_str(hash_str(0xcbf29ce484222325ull + process * 4 + thread * 2 + native,
	    sname), sfile);
	struct profile_slot *sl;
	struct profile_frame *fr;

	/* Probe past equal hashes of different names. */
	for (;; h++) {
		sl = slot_find(&p->names, &p->anames, &p->nnames, h);
		if (sl->key == 0)
			break;
		fr = &p->frames[sl->value];
		if (fr->thread == thread && fr->native == native && fr->process == process &&
		    strcmp(fr->name, sname) == 0 &&
		    (fr->file == NULL ? sfile == NULL : sfile != NULL && strcmp(fr->file, sfile) == 0)) {
			free(sname);
			free(sfile);
			return sl->value;
		}
	}
	sl->key = h != 0 ? h : 1;
	sl->value = (uint32_t)p->nframes;
	p->nnames++;
	fr = ARRAY_PUSH(p->frames, p->nframes, p->aframes);
	fr->name = sname;
	fr->file = sfile;
	fr->line = line;
	fr->thread = thread;
	fr->native = native;
	fr->process = process;
	return sl->value;
}

static uint32_t
intern(struct profile *p, const char *name, const char *file, int line,
    bool thread, bool native)
{
	return intern_kind(p, name, file, line, thread, native, false);
}

/*
 * A Python frame's id: by its code object's address, validated by its
 * strings (an address can be reused by another code object).
 */
static uint32_t
py_frame_id(struct profile *p, const struct py_frame *f)
{
	const char *name = f->qualname != NULL ? f->qualname : f->name;
	struct profile_slot *sl, *byid = NULL;
	uint32_t id;

	if (f->code_id != 0) {
		byid = slot_find(&p->ids, &p->aids, &p->nids, f->code_id);
		if (byid->key != 0)
			return byid->value;
		byid->key = f->code_id;
		p->nids++;
	}
	sl = slot_find(&p->codes, &p->acodes, &p->ncodes, f->code);

	if (sl->key != 0) {
		const struct profile_frame *fr = &p->frames[sl->value];

		/* The interned strings are escaped: compare only the plain ones. */
		if (fr->file != NULL && f->filename != NULL && strcmp(fr->name, name) == 0 &&
		    strcmp(fr->file, f->filename) == 0)
			id = sl->value;
		else
			id = sl->value = intern(p, name, f->filename, f->line, false, false);
	} else {
		id = sl->value = intern(p, name, f->filename, f->line, false, false);
		sl->key = f->code != 0 ? f->code : 1;
		p->ncodes++;
	}
	if (byid != NULL)
		byid->value = id;
	return id;
}

static uint32_t
child_of(struct profile *p, uint32_t parent, uint32_t frame)
{
	uint64_t key = ((uint64_t)parent << 32 | frame) + 1;
	struct profile_slot *sl = slot_find(&p->children, &p->achildren, &p->nchildren, key);
	struct profile_node *n;

	if (sl->key != 0)
		return sl->value;
	sl->key = key;
	sl->value = (uint32_t)p->nnodes;
	p->nchildren++;
	n = ARRAY_PUSH(p->nodes, p->nnodes, p->anodes);
	memset(n, 0, sizeof *n);
	n->frame = frame;
	n->parent = parent;
	n->child = PROFILE_NONE;
	n->sibling = p->nodes[parent].child;
	p->nodes[parent].child = sl->value;
	return sl->value;
}

/* Room in the path for `need` nodes. */
static inline void
path_room(struct profile *p, size_t need)
{
	if (need > p->apath || need > p->apath_code) {
		array_reserve(&p->path, &p->apath, need, sizeof *p->path);
		array_reserve(&p->path_code, &p->apath_code, need, sizeof *p->path_code);
	}
}

static inline void
path_push_code(struct profile *p, size_t *n, uint32_t id, uint64_t code_id)
{
	path_room(p, *n + 1);
	p->path_code[*n] = code_id;
	p->path[(*n)++] = id;
}

static void
path_push(struct profile *p, size_t *n, uint32_t id)
{
	path_push_code(p, n, id, 0);
}

static void
push_segment(struct profile *p, size_t *n, const struct py_thread *t, size_t *inner, size_t outer)
{
	/* Python frames outer..*inner, in calling order (frames[] is innermost first). */
	if (outer > *inner)
		path_room(p, *n + (outer - *inner));	/* once: a sampler adds thousands a second */
	while (outer > *inner) {
		const struct py_frame *f = &t->frames[--outer];
		uint32_t id;

		/* The same reading of a code object as the last path's here: the same id. */
		if (f->code_id != 0 && *n < p->nlast && p->last_code[*n] == f->code_id)
			id = p->last_path[*n];
		else
			id = py_frame_id(p, f);
		p->path_code[*n] = f->code_id;
		p->path[(*n)++] = id;
	}
}

/*
 * Native and Python frames merged: each evaluation-loop frame stands for
 * the Python frames up to the next entry frame.  What does not pair up
 * (counts disagree) goes on top, Python last.
 */
static void
merge_native(struct profile *p, size_t *n, const struct py_thread *t)
{
	size_t py = t->nframes, k = t->nnative, end;

	while (k > 0) {
		const struct native_frame *nf = &t->native[--k];

		if (nf->is_eval && py > 0) {
			/* this call of the loop runs its entry frame and those above up to the next entry */
			end = py - 1;
			while (end > 0 && !t->frames[end - 1].entry)
				end--;
			push_segment(p, n, t, &end, py);
			py = end;
			while (k > 0 && t->native[k - 1].is_eval)
				k--;	/* its helper frames of the same loop call */
			continue;
		}
		if (nf->is_eval)
			continue;
		path_push(p, n, intern(p, nf->function != NULL ? nf->function : "??",
		    nf->module, 0, false, true));
	}
	end = 0;
	push_segment(p, n, t, &end, py);
}

void
profile_add(struct profile *p, const struct sample *s)
{
	profile_add_in(p, NULL, s);
}

/*
 * The common case, Python frames alone, in one pass from the outermost
 * frame: while the path is the last one's (each frame the same reading of
 * the same code at the same depth), its nodes are the last path's, with no
 * lookup.  The same as building the path and then walking it (below).
 */
static uint32_t
add_python_path(struct profile *p, const struct py_thread *t, uint64_t weight_ns)
{
	size_t n = t->nframes, i;
	uint32_t node = 0, id;
	bool same = true;

	if (n > p->alast || n > p->alast_node || n > p->alast_code) {
		array_reserve(&p->last_path, &p->alast, n, sizeof *p->last_path);
		array_reserve(&p->last_node, &p->alast_node, n, sizeof *p->last_node);
		array_reserve(&p->last_code, &p->alast_code, n, sizeof *p->last_code);
	}
	for (i = 0; i < n; i++) {
		const struct py_frame *f = &t->frames[n - 1 - i];
		bool known = f->code_id != 0 && i < p->nlast && p->last_code[i] == f->code_id;

		if (known && same) {
			node = p->last_node[i];
		} else {
			id = known ? p->last_path[i] : py_frame_id(p, f);
			if (same && i < p->nlast && p->last_path[i] == id) {
				node = p->last_node[i];
			} else {
				same = false;	/* what follows differs */
				node = child_of(p, node, id);
				p->last_path[i] = id;
				p->last_node[i] = node;
			}
			p->last_code[i] = f->code_id;
		}
		p->nodes[node].total++;
		p->nodes[node].total_ns += weight_ns;
	}
	p->nlast = n;
	return node;
}

void
profile_add_in(struct profile *p, const char *process, const struct sample *s)
{
	const struct py_thread *t = s->thread;
	size_t n = 0, i;
	uint32_t node = 0;

	if (process == NULL && !p->by_thread && t->nnative == 0) {
		p->nodes[0].total++;
		p->nodes[0].total_ns += s->weight_ns;
		node = add_python_path(p, t, s->weight_ns);
		p->nodes[node].self++;
		p->nodes[node].self_ns += s->weight_ns;
		return;
	}
	if (process != NULL)
		path_push(p, &n, intern_kind(p, process, NULL, 0, false, false, true));
	if (p->by_thread) {
		char *label = xasprintf("thread %s (%d)", t->name != NULL ? t->name : "?", (int)t->tid);

		path_push(p, &n, intern(p, label, NULL, 0, true, false));
		free(label);
	}
	if (t->nnative > 0) {
		merge_native(p, &n, t);
	} else {
		size_t end = 0;

		push_segment(p, &n, t, &end, t->nframes);
	}
	p->nodes[0].total++;
	p->nodes[0].total_ns += s->weight_ns;
	/* The prefix shared with the last sample's path has the same nodes: no lookups. */
	if (n > p->alast || n > p->alast_node || n > p->alast_code) {
		array_reserve(&p->last_path, &p->alast, n, sizeof *p->last_path);
		array_reserve(&p->last_node, &p->alast_node, n, sizeof *p->last_node);
		array_reserve(&p->last_code, &p->alast_code, n, sizeof *p->last_code);
	}
	for (i = 0; i < n; i++) {
		if (i < p->nlast && p->last_path[i] == p->path[i]) {
			node = p->last_node[i];
			p->last_code[i] = p->path_code[i];
		} else {
			node = child_of(p, node, p->path[i]);
			p->nlast = i;	/* what follows differs */
			p->last_path[i] = p->path[i];
			p->last_node[i] = node;
			p->last_code[i] = p->path_code[i];
		}
		p->nodes[node].total++;
		p->nodes[node].total_ns += s->weight_ns;
	}
	p->nlast = n;
	p->nodes[node].self++;
	p->nodes[node].self_ns += s->weight_ns;
}

char *
profile_frame_label(const struct profile_frame *fr)
{
	if (fr->thread || fr->process || fr->file == NULL)
		return xstrdup(fr->name);
	if (fr->native)
		return xasprintf("%s [%s]", fr->name, fr->file);
	return xasprintf("%s (%s)", fr->name, fr->file);
}
