/*
 * flameview — a core/profile tree laid out as an icicle graph (the root
 * on top) in terminal cells, for the flame pane: which frame is in which
 * cells of which row, moving between frames, the share a search covers,
 * and the top table.  No curses here: the benchmark and the pane use it
 * alike.  Only frames at least one cell wide are laid out, so a redraw
 * costs what is on screen, not the number of distinct stacks.
 */
#ifndef FP_FLAMEVIEW_H
#define FP_FLAMEVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include "core/profile.h"

#define FLAMEVIEW_COLORS 6

struct flame_cell {
	uint32_t node;
	uint32_t frame;		/* its frame; PROFILE_NONE for the root */
	int x, w;		/* cells from the left edge */
};

struct flame_row {
	struct flame_cell *cells;
	size_t n, a;
};

struct flameview {
	struct flame_row *rows;	/* rows[0]: the zoomed node, full width */
	size_t nrows, arows;
	uint32_t zoom;		/* node of the profile at the top */
	int width;
	const struct profile *cur;	/* being laid out */
	/* private: frame labels and their alphabetical rank, per frame id */
	char **labels;		/* "name (file)": the status line, search, the top table */
	char **shorts;		/* "name (basename)": in the cells */
	uint8_t *color;		/* 0 .. FLAMEVIEW_COLORS - 1, by module */
	uint32_t *rank;
	size_t nlabels, alabels, ashorts, acolor;
	uint64_t labelled;	/* the serial of the profile the labels are of */
};

void flameview_free(struct flameview *v);
/* Lay out `p` from node `zoom` in `width` cells. */
void flameview_layout(struct flameview *v, const struct profile *p, uint32_t zoom, int width);
/* "name (file)", escaped when drawn; valid until the next layout. */
const char *flameview_label(const struct flameview *v, const struct profile *p, uint32_t node);
/* The row and cell of `node`, false if it is not drawn. */
bool flameview_find(const struct flameview *v, uint32_t node, size_t *row, size_t *cell);
/* Depth of `node` under the zoom (0 for the zoom itself), or -1 if not under it. */
long flameview_depth(const struct profile *p, uint32_t zoom, uint32_t node);
/*
 * Samples under the zoom in frames whose label matches `re` (a frame under
 * another match counted once).  Also sets match[frame] for every frame
 * (array of p->nframes, the caller's).
 */
uint64_t flameview_search(struct flameview *v, const struct profile *p, const pcre2_code *re,
    bool *match);

/* One function of the top table. */
struct flame_top {
	uint32_t frame;
	uint64_t self, total, self_ns, total_ns;
};
enum flame_sort { FLAME_SORT_OWN, FLAME_SORT_TOTAL, FLAME_SORT_OWN_TIME, FLAME_SORT_TOTAL_TIME,
	FLAME_SORT__COUNT };
/*
 * Every function under node `root`: own and total samples and time (a
 * function recursing is counted once in its total).  Malloc'd array, *n rows.
 */
struct flame_top *flameview_top(const struct profile *p, uint32_t root, enum flame_sort sort,
    bool invert, size_t *n);

#endif
