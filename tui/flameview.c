#include "config.h"

#include "tui/flameview.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static void
forget_labels(struct flameview *v)
{
	size_t i;

	for (i = 0; i < v->nlabels; i++) {
		free(v->labels[i]);
		free(v->shorts[i]);
	}
	v->nlabels = 0;
}

void
flameview_free(struct flameview *v)
{
	size_t i;

	for (i = 0; i < v->arows; i++)
		free(v->rows[i].cells);
	free(v->rows);
	forget_labels(v);
	free(v->labels);
	free(v->shorts);
	free(v->rank);
	free(v->color);
	memset(v, 0, sizeof *v);
}

static const char *const *sort_labels;

static int
cmp_label(const void *a, const void *b)
{
	return strcmp(sort_labels[*(const uint32_t *)a], sort_labels[*(const uint32_t *)b]);
}

/*
 * A frame's colour: a stable hash of its package (the directory under
 * site-packages or dist-packages), else of its file's name, else of the
 * native module; so one package keeps one colour from run to run.
 */
static uint8_t
module_color(const struct profile_frame *fr)
{
	const char *f = fr->file != NULL ? fr->file : fr->name, *s, *end;
	uint32_t h = 2166136261u;

	if ((s = strstr(f, "-packages/")) != NULL)
		s += strlen("-packages/");
	else if ((s = strrchr(f, '/')) != NULL)
		s++;
	else
		s = f;
	for (end = s; *end != '\0' && *end != '/' && *end != '.'; end++)
		;
	for (; s < end; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return (uint8_t)(h % FLAMEVIEW_COLORS);
}

/* Labels of frames new since the last layout, and every frame's rank by label. */
static void
update_labels(struct flameview *v, const struct profile *p)
{
	uint32_t *order;
	size_t i;

	/* Another profile (a new mode, another thread's): its frames are others. */
	if (v->labelled != p->serial) {
		forget_labels(v);
		v->labelled = p->serial;
	}
	if (v->nlabels == p->nframes)
		return;
	array_reserve(&v->labels, &v->alabels, p->nframes, sizeof *v->labels);
	array_reserve(&v->shorts, &v->ashorts, p->nframes, sizeof *v->shorts);
	array_reserve(&v->color, &v->acolor, p->nframes, sizeof *v->color);
	for (i = v->nlabels; i < p->nframes; i++) {
		const struct profile_frame *fr = &p->frames[i];
		const char *base = fr->file != NULL && strrchr(fr->file, '/') ? strrchr(fr->file, '/') + 1 :
		    fr->file;

		v->labels[i] = profile_frame_label(fr);
		v->shorts[i] = base == NULL || fr->thread ? xstrdup(fr->name) :
		    xasprintf(fr->native ? "%s [%s]" : "%s (%s)", fr->name, base);
		v->color[i] = module_color(&p->frames[i]);
	}
	v->nlabels = p->nframes;
	order = xcalloc(v->nlabels, sizeof *order);
	for (i = 0; i < v->nlabels; i++)
		order[i] = (uint32_t)i;
	sort_labels = (const char *const *)v->labels;
	qsort(order, v->nlabels, sizeof *order, cmp_label);
	free(v->rank);
	v->rank = xcalloc(v->nlabels, sizeof *v->rank);
	for (i = 0; i < v->nlabels; i++)
		v->rank[order[i]] = (uint32_t)i;
	free(order);
}

static const uint32_t *sort_rank;
static const struct profile *sort_profile;

static int
cmp_rank(const void *a, const void *b)
{
	uint32_t x = sort_rank[sort_profile->nodes[*(const uint32_t *)a].frame];
	uint32_t y = sort_rank[sort_profile->nodes[*(const uint32_t *)b].frame];

	return (x > y) - (x < y);
}

static void
add_cell(struct flameview *v, size_t row, uint32_t node, int x, int w)
{
	struct flame_cell *c;

	while (v->nrows <= row) {
		if (v->nrows == v->arows) {
			array_reserve(&v->rows, &v->arows, v->nrows + 1, sizeof *v->rows);
			memset(v->rows + v->nrows, 0, (v->arows - v->nrows) * sizeof *v->rows);
		}
		v->rows[v->nrows++].n = 0;
	}
	c = ARRAY_PUSH(v->rows[row].cells, v->rows[row].n, v->rows[row].a);
	c->node = node;
	c->frame = v->cur->nodes[node].frame;
	c->x = x;
	c->w = w;
}

/* The children of `node` at least a cell wide, in label order, from x0. */
static void
layout_node(struct flameview *v, const struct profile *p, uint32_t node, size_t row, double x0,
    double scale)
{
	uint32_t *kids, c;
	size_t n = 0, i;
	double x = x0;

	for (c = p->nodes[node].child; c != PROFILE_NONE; c = p->nodes[c].sibling)
		n++;
	if (n == 0)
		return;
	kids = xcalloc(n, sizeof *kids);
	n = 0;
	for (c = p->nodes[node].child; c != PROFILE_NONE; c = p->nodes[c].sibling)
		kids[n++] = c;
	sort_rank = v->rank;
	sort_profile = p;
	qsort(kids, n, sizeof *kids, cmp_rank);
	for (i = 0; i < n; i++) {
		double w = (double)p->nodes[kids[i]].total * scale;
		int a = (int)(x + 0.5), b = (int)(x + w + 0.5);	/* x >= 0 */

		if (b > a) {
			add_cell(v, row, kids[i], a, b - a);
			layout_node(v, p, kids[i], row + 1, x, scale);
		}
		x += w;
	}
	free(kids);
}

void
flameview_layout(struct flameview *v, const struct profile *p, uint32_t zoom, int width)
{
	size_t i;

	for (i = 0; i < v->nrows; i++)
		v->rows[i].n = 0;
	v->nrows = 0;
	v->zoom = zoom;
	v->width = width;
	v->cur = p;
	update_labels(v, p);
	if (width <= 0 || zoom >= p->nnodes)
		return;
	add_cell(v, 0, zoom, 0, width);
	if (p->nodes[zoom].total > 0)
		layout_node(v, p, zoom, 1, 0, (double)width / (double)p->nodes[zoom].total);
}

const char *
flameview_label(const struct flameview *v, const struct profile *p, uint32_t node)
{
	if (node == 0)
		return "all";
	return v->labels[p->nodes[node].frame];
}

bool
flameview_find(const struct flameview *v, uint32_t node, size_t *row, size_t *cell)
{
	size_t r, k;

	for (r = 0; r < v->nrows; r++)
		for (k = 0; k < v->rows[r].n; k++)
			if (v->rows[r].cells[k].node == node) {
				*row = r;
				*cell = k;
				return true;
			}
	return false;
}

long
flameview_depth(const struct profile *p, uint32_t zoom, uint32_t node)
{
	long d = 0;

	while (node != zoom) {
		if (node == 0 || node >= p->nnodes)
			return -1;
		node = p->nodes[node].parent;
		d++;
	}
	return d;
}

uint64_t
flameview_search(struct flameview *v, const struct profile *p, const pcre2_code *re, bool *match)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	uint32_t *stack, n = 0;
	uint64_t sum = 0;
	size_t i, cap = p->nnodes + 1;

	update_labels(v, p);
	for (i = 0; i < p->nframes; i++)
		match[i] = pcre2_match(re, (PCRE2_SPTR)v->labels[i], strlen(v->labels[i]), 0, 0, md,
		    NULL) >= 0;
	pcre2_match_data_free(md);
	/* depth first from the zoom; a match's subtree is not searched again */
	stack = xcalloc(cap, sizeof *stack);
	stack[n++] = v->zoom;
	while (n > 0) {
		uint32_t node = stack[--n], c;

		if (node != 0 && match[p->nodes[node].frame]) {
			sum += p->nodes[node].total;
			continue;
		}
		for (c = p->nodes[node].child; c != PROFILE_NONE && n < cap; c = p->nodes[c].sibling)
			stack[n++] = c;
	}
	free(stack);
	return sum;
}

static enum flame_sort top_sort;
static bool top_invert;

static int
cmp_top(const void *a, const void *b)
{
	const struct flame_top *x = a, *y = b;
	uint64_t kx, ky;
	int r;

	switch (top_sort) {
	case FLAME_SORT_OWN: kx = x->self; ky = y->self; break;
	case FLAME_SORT_OWN_TIME: kx = x->self_ns; ky = y->self_ns; break;
	case FLAME_SORT_TOTAL_TIME: kx = x->total_ns; ky = y->total_ns; break;
	case FLAME_SORT_TOTAL:
	default: kx = x->total; ky = y->total; break;
	}
	r = (kx < ky) - (kx > ky);	/* biggest first */
	if (r == 0)
		r = (x->frame > y->frame) - (x->frame < y->frame);
	return top_invert ? -r : r;
}

struct flame_top *
flameview_top(const struct profile *p, uint32_t root, enum flame_sort sort, bool invert, size_t *n)
{
	struct flame_top *rows = xcalloc(p->nframes + 1, sizeof *rows);
	uint32_t *onpath = xcalloc(p->nframes + 1, sizeof *onpath);
	/* an explicit walk: (node, leaving) pairs, so that a frame's total
	 * counts only its outermost call on each path */
	struct { uint32_t node; bool leave; } *stack;
	size_t ns = 0, cap = 2 * p->nnodes + 2, i, k;

	for (i = 0; i < p->nframes; i++)
		rows[i].frame = (uint32_t)i;
	stack = xcalloc(cap, sizeof *stack);
	stack[ns].node = root;
	stack[ns++].leave = false;
	while (ns > 0) {
		uint32_t node = stack[--ns].node, c;
		const struct profile_node *nd = &p->nodes[node];
		bool leave = stack[ns].leave, code = node != 0 && nd->frame < p->nframes;

		if (leave) {
			if (code)
				onpath[nd->frame]--;
			continue;
		}
		if (code) {
			struct flame_top *r = &rows[nd->frame];

			r->self += nd->self;
			r->self_ns += nd->self_ns;
			if (onpath[nd->frame]++ == 0) {
				r->total += nd->total;
				r->total_ns += nd->total_ns;
			}
			stack[ns].node = node;
			stack[ns++].leave = true;
		}
		for (c = nd->child; c != PROFILE_NONE && ns < cap; c = p->nodes[c].sibling) {
			stack[ns].node = c;
			stack[ns++].leave = false;
		}
	}
	free(stack);
	free(onpath);
	for (i = k = 0; i < p->nframes; i++)
		if (rows[i].total > 0)
			rows[k++] = rows[i];
	top_sort = sort;
	top_invert = invert;
	qsort(rows, k, sizeof *rows, cmp_top);
	*n = k;
	return rows;
}
