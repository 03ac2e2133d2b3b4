/*
 * drawbench — the harness the TUI drawing benchmarks share (tuidraw,
 * flamedraw, memdraw): a real curses screen whose output goes to
 * /dev/null, the screen sizes from the command line (COLSxROWS ...,
 * default 80x24 200x50), and the median of a number of full redraws.
 */
#ifndef FP_BENCH_DRAWBENCH_H
#define FP_BENCH_DRAWBENCH_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/tui.h"

struct drawbench {
	SCREEN *scr;
	FILE *out, *in;
	const char *const *sizes;
	size_t nsizes;
};

/* The screen; false (and a message naming `name`) without its terminfo. */
bool drawbench_open(struct drawbench *b, const char *name, int argc, char **argv);
/* The k-th size: the screen resized to it; false when it is not COLSxROWS. */
bool drawbench_size(struct drawbench *b, size_t k, int *cols, int *rows);
void drawbench_close(struct drawbench *b);

/* CPU time of this thread: wall time on a shared machine says more about
 * the other processes than about the redraw. */
uint64_t drawbench_cpu_ns(void);
int drawbench_cmp_u64(const void *a, const void *b);

/*
 * Median, in ns by clock (drawbench_cpu_ns or now_ns), of runs full
 * redraws of t (at most 1,000); before(ctx, i), when not NULL, runs ahead
 * of the i-th and is timed with it.
 */
double drawbench_redraw(struct tui *t, size_t runs, uint64_t (*clock)(void),
    void (*before)(void *ctx, size_t i), void *ctx);

#endif
