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
#include "tui/draw.h"
#include "tui/keymap.h"
#include "tui/tui.h"

#define RUNS 100

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

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

/* Median of RUNS redraws, in ms; `feed`: a new sample before each. */
static double
redraw_ms(struct tui *t, struct memlive *m, struct mem_table **samples, bool feed)
{
	uint64_t v[RUNS];
	size_t i;

	for (i = 0; i < RUNS; i++) {
		uint64_t t0 = cpu_ns();

		if (feed)
			memlive_feed(m, samples[i % 8]);
		clearok(curscr, TRUE);
		tui_draw(t);
		v[i] = cpu_ns() - t0;
	}
	qsort(v, RUNS, sizeof *v, cmp_u64);
	return (double)v[RUNS / 2] / 1e6;
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
	static const char *const defaults[] = { "80x24", "200x50" };
	const char *const *sizes = defaults;
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	size_t nsizes = FP_NELEM(defaults), k;
	SCREEN *scr;

	if (argc > 1) {
		sizes = (const char *const *)argv + 1;
		nsizes = (size_t)argc - 1;
	}
	setlocale(LC_CTYPE, "C.UTF-8");
	draw_init(true);
	if ((scr = newterm("xterm-256color", out, in)) == NULL) {
		fprintf(stderr, "memdraw: no xterm-256color terminfo\n");
		return 1;
	}
	set_term(scr);
	start_color();
	printf("mem pane redraw, CPU time, %d runs each, median; baseline: 50 types\n", RUNS);
	for (k = 0; k < nsizes; k++) {
		struct result big, small;
		int cols, rows;

		if (sscanf(sizes[k], "%dx%d", &cols, &rows) != 2)
			continue;
		resizeterm(rows, cols);
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
	endwin();
	delscreen(scr);
	fclose(out);
	fclose(in);
	return 0;
}
