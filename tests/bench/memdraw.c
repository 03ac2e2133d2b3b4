/*
 * memdraw — what the mem pane costs with a big heap: 5,000 types on a
 * real curses screen (terminal output to /dev/null), the pane maximised,
 * eight samples in its history (every type's trend drawn).
 *
 *   redraw, new sample   a sample folded into the history, the rows
 *                        sorted again and the whole screen repainted
 *   redraw, no change    the screen repainted
 *   sorted by growth     a new sample with the rows sorted by growth
 *
 * The baseline, measured in the same run, is the same work with 50
 * types.  Not a pass/fail test: it prints the numbers next to the budget
 * (redraw with a new sample <= 10 ms with 5,000 types).
 *
 * Times are the drawing thread's CPU time (the machine is shared).
 *
 *   tests/bench/memdraw [COLSxROWS ...]     default: 80x24 200x50
 */
#include "config.h"

#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/memlive.h"
#include "core/util.h"
#include "tests/bench/drawbench.h"
#include "tui/draw.h"
#include "tui/keymap.h"
#include "tui/tui.h"

#define RUNS 100

/* A sample of `n` types, "pkgK.module_J.ClassI", sizes moving with `round`. */
static struct mem_table *
make_sample(size_t n, unsigned round)
{
	struct mem_table *t = xcalloc(1, sizeof *t);
	size_t i;

	t->rows = xcalloc(n, sizeof *t->rows);
	t->nrows = n;
	t->total_types = (long long)n;
	t->scan.types = (long long)n;
	for (i = 0; i < n; i++) {
		struct mem_row *r = &t->rows[i];

		r->type = xasprintf("pkg%zu.module_%zu.Class%zu", i % 60, i % 17, i);
		r->count = (long long)(100 + (i * 7919) % 100000 + (i % 5 == 0 ? round * 10 : 0));
		r->size = r->count * (long long)(48 + i % 200);
		t->scan.objects += r->count;
		t->scan.bytes += r->size;
	}
	return t;
}

struct feed {
	struct memlive *m;
	struct mem_table **samples;
};

static void
feed_one(void *ctx, size_t i)
{
	struct feed *f = ctx;

	memlive_feed(f->m, f->samples[i % 8]);
}

/* Median of RUNS redraws, in ms; `feed`: a new sample before each. */
static double
redraw_ms(struct tui *t, struct memlive *m, struct mem_table **samples, bool feed)
{
	struct feed f = { m, samples };

	return drawbench_redraw(t, RUNS, drawbench_cpu_ns, feed ? feed_one : NULL, &f) / 1e6;
}

struct result {
	double fed, same, growth;
};

static void
measure(size_t ntypes, struct result *r)
{
	struct tui *t = tui_new_headless(tui_fake_snapshot(5, 6));
	struct pane *p = tui_pane(t, &pane_mem_ops);
	struct memlive *m = pane_mem_model(p);
	struct mem_table *samples[8];
	size_t i;

	for (i = 0; i < 8; i++) {
		samples[i] = make_sample(ntypes, (unsigned)i);
		memlive_feed(m, samples[i]);
	}
	tui_show_pane(t, p, true);
	t->maximised = p;
	tui_relayout(t);
	r->fed = redraw_ms(t, m, samples, true);
	r->same = redraw_ms(t, m, samples, false);
	p->ops->key(p, A_SORT_NEXT);	/* size -> count */
	p->ops->key(p, A_SORT_NEXT);	/* -> growth */
	r->growth = redraw_ms(t, m, samples, true);
	for (i = 0; i < 8; i++)
		mem_table_free(samples[i]);
	tui_free(t);
}

int
main(int argc, char **argv)
{
	struct drawbench b;
	size_t k;

	if (!drawbench_open(&b, "memdraw", argc, argv))
		return 1;
	printf("mem pane redraw, CPU time, %d runs each, median; baseline: 50 types\n", RUNS);
	for (k = 0; k < b.nsizes; k++) {
		struct result big, small;
		int cols, rows;

		if (!drawbench_size(&b, k, &cols, &rows))
			continue;
		measure(50, &small);
		measure(5000, &big);
		printf("%4dx%-3d 5000 types:\n", cols, rows);
		printf("%4dx%-3d   redraw, new sample:  %7.3f ms   baseline %6.3f ms   = %6.1fx   "
		    "(budget 10 ms)\n", cols, rows, big.fed, small.fed, big.fed / small.fed);
		printf("%4dx%-3d   redraw, no change:   %7.3f ms   baseline %6.3f ms   = %6.1fx\n",
		    cols, rows, big.same, small.same, big.same / small.same);
		printf("%4dx%-3d   by growth, new sample: %7.3f ms   baseline %6.3f ms   = %6.1fx\n",
		    cols, rows, big.growth, small.growth, big.growth / small.growth);
	}
	drawbench_close(&b);
	return 0;
}
