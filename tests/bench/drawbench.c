/*
 * drawbench — the TUI drawing benchmarks' shared harness (drawbench.h).
 */
#include "config.h"

#include "tests/bench/drawbench.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/util.h"
#include "tui/draw.h"

bool
drawbench_open(struct drawbench *b, const char *name, int argc, char **argv)
{
	static const char *const defaults[] = { "80x24", "200x50" };

	b->sizes = defaults;
	b->nsizes = FP_NELEM(defaults);
	if (argc > 1) {
		b->sizes = (const char *const *)argv + 1;
		b->nsizes = (size_t)argc - 1;
	}
	b->out = fopen("/dev/null", "w");
	b->in = fopen("/dev/null", "r");
	setlocale(LC_CTYPE, "C.UTF-8");
	draw_init(true);
	if ((b->scr = newterm("xterm-256color", b->out, b->in)) == NULL) {
		fprintf(stderr, "%s: no xterm-256color terminfo\n", name);
		return false;
	}
	set_term(b->scr);
	start_color();
	return true;
}

bool
drawbench_size(struct drawbench *b, size_t k, int *cols, int *rows)
{
	if (sscanf(b->sizes[k], "%dx%d", cols, rows) != 2)
		return false;
	resizeterm(*rows, *cols);
	return true;
}

void
drawbench_close(struct drawbench *b)
{
	endwin();
	delscreen(b->scr);
	fclose(b->out);
	fclose(b->in);
}

uint64_t
drawbench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
drawbench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

double
drawbench_redraw(struct tui *t, size_t runs, uint64_t (*clock)(void),
    void (*before)(void *ctx, size_t i), void *ctx)
{
	uint64_t v[1000];
	size_t i;

	if (runs > FP_NELEM(v))
		runs = FP_NELEM(v);
	for (i = 0; i < runs; i++) {
		uint64_t t0 = clock();

		if (before != NULL)
			before(ctx, i);
		clearok(curscr, TRUE);
		tui_draw(t);
		v[i] = clock() - t0;
	}
	qsort(v, runs, sizeof *v, drawbench_cmp_u64);
	return (double)v[runs / 2];
}
