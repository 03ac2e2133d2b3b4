/*
 * tuidraw — what the TUI costs with a big target: 1,000 threads x 50
 * frames on a real curses screen (terminal output to /dev/null).
 *
 *   full redraw   every pane rebuilt and the whole screen repainted
 *                 (clearok), with the cursor moved so both panes change
 *   refresh       a new snapshot taken in (CPU%, sort, selection) + redraw
 *   memory        RSS with the snapshot on screen (and the one before it,
 *                 as during a refresh)
 *
 * The baseline, measured in the same run, is the same work for the
 * threads.py target (5 threads x 6 frames).  Not a pass/fail test: it
 * prints numbers next to the budgets (redraw <= 5 ms, RSS <= 30 MB).
 *
 *   tests/bench/tuidraw [COLSxROWS ...]     default: 80x24 200x50
 */
#include "config.h"

#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tests/bench/drawbench.h"
#include "tui/draw.h"
#include "tui/tui.h"

#define RUNS 200

static long
rss_kb(void)
{
	char *s = read_file_str("/proc/self/status", NULL), *p;
	long kb = -1;

	if (s != NULL && (p = strstr(s, "VmRSS:")) != NULL)
		kb = strtol(p + 6, NULL, 10);
	free(s);
	return kb;
}

static void
move_cursor(void *ctx, size_t i)
{
	/* move the selection: the stack pane shows another thread */
	pane_set_cursor(tui_pane(ctx, &pane_threads_ops), i % 2 ? 0 : 1);
}

/* Median of RUNS full redraws, in microseconds. */
static double
redraw_us(struct tui *t)
{
	return drawbench_redraw(t, RUNS, now_ns, move_cursor, t) / 1e3;
}

/* Freeing a snapshot (core's model: every frame's strings are malloc'd). */
static double
free_us(size_t nthreads, size_t depth)
{
	uint64_t v[9];
	size_t i;

	for (i = 0; i < FP_NELEM(v); i++) {
		struct py_snapshot *s = tui_fake_snapshot(nthreads, depth);
		uint64_t t0 = now_ns();

		py_snapshot_free(s);
		v[i] = now_ns() - t0;
	}
	qsort(v, FP_NELEM(v), sizeof *v, drawbench_cmp_u64);
	return (double)v[FP_NELEM(v) / 2] / 1e3;
}

static double
refresh_us(struct tui *t, size_t nthreads, size_t depth)
{
	uint64_t v[RUNS / 10];
	size_t i;

	for (i = 0; i < FP_NELEM(v); i++) {
		struct py_snapshot *s = tui_fake_snapshot(nthreads, depth);
		uint64_t t0 = now_ns();

		tui_set_snapshot(t, s);
		tui_draw(t);
		v[i] = now_ns() - t0;
	}
	qsort(v, FP_NELEM(v), sizeof *v, drawbench_cmp_u64);
	return (double)v[FP_NELEM(v) / 2] / 1e3;
}

int
main(int argc, char **argv)
{
	struct drawbench b;
	size_t k;
	long rss0;

	if (getenv("TERM") == NULL)
		setenv("TERM", "xterm-256color", 1);
	if (!drawbench_open(&b, "tuidraw", argc, argv))
		return 1;
	rss0 = rss_kb();
	printf("TUI draw cost, %d runs each, median; baseline: 5 threads x 6 frames\n", RUNS);
	for (k = 0; k < b.nsizes; k++) {
		struct tui *small, *big;
		double bs, bb, rs, rb;
		long before, after;
		int cols, rows;

		if (!drawbench_size(&b, k, &cols, &rows))
			continue;
		small = tui_new_headless(tui_fake_snapshot(5, 6));
		bs = redraw_us(small);
		rs = refresh_us(small, 5, 6);
		tui_free(small);

		before = rss_kb();
		big = tui_new_headless(tui_fake_snapshot(1000, 50));
		bb = redraw_us(big);
		rb = refresh_us(big, 1000, 50);
		after = rss_kb();
		printf("%4dx%-3d full redraw:  1000x50 %7.3f ms   baseline %6.3f ms   = %5.1fx   (budget 5 ms)\n",
		    cols, rows, bb / 1e3, bs / 1e3, bb / bs);
		printf("%4dx%-3d refresh+draw: 1000x50 %7.3f ms   baseline %6.3f ms   = %5.1fx\n",
		    cols, rows, rb / 1e3, rs / 1e3, rb / rs);
		printf("%4dx%-3d   of which py_snapshot_free() of the old 1000x50 snapshot: %.3f ms\n",
		    cols, rows, free_us(1000, 50) / 1e3);
		printf("%4dx%-3d RSS: %.1f MB with 1000x50 on screen (%.1f MB before it; budget 30 MB)\n",
		    cols, rows, (double)after / 1024, (double)before / 1024);
		tui_free(big);
	}
	printf("RSS at start (curses, libraries): %.1f MB\n", (double)rss0 / 1024);
	drawbench_close(&b);
	return 0;
}
