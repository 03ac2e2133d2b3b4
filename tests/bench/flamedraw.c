/*
 * flamedraw — what the flame pane costs with a big profile: 50,000
 * distinct stacks (3,000 functions in 60 modules, 8 to 40 deep) on a real
 * curses screen (terminal output to /dev/null), the pane maximised.
 *
 *   redraw, new samples   the layout redone (as when samples arrived)
 *                         and the whole screen repainted
 *   redraw, no change     the layout kept, the screen repainted
 *   top table             the same with `t`: every node walked and sorted
 *
 * The baseline, measured in the same run, is the same work for a profile
 * of 50 distinct stacks.  Not a pass/fail test: it prints the numbers next
 * to the budget (redraw <= 10 ms with 50,000 stacks).
 *
 * Times are the drawing thread's CPU time (the machine is shared).
 *
 *   tests/bench/flamedraw [COLSxROWS ...]     default: 80x24 200x50
 */
#include "config.h"

#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/profile.h"
#include "core/util.h"
#include "tests/bench/drawbench.h"
#include "tui/draw.h"
#include "tui/flamelive.h"
#include "tui/keymap.h"
#include "tui/tui.h"

#define RUNS 100
#define FUNCS 3000
#define MODULES 60

static uint64_t rnd_state;

static uint32_t
rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state >> 11);
}

static size_t
distinct_stacks(const struct profile *p)
{
	size_t i, n = 0;

	for (i = 1; i < p->nnodes; i++)
		n += p->nodes[i].self > 0;
	return n;
}

/*
 * A profile of `want` distinct stacks.  Stacks share prefixes as real
 * programs' do: the frame at each level is drawn from a generator seeded
 * by the stack's number with fewer low bits the shallower the level.
 */
static struct profile *
make_profile(size_t want)
{
	struct profile *p = profile_new(false);
	struct py_frame *pool = xcalloc(FUNCS, sizeof *pool), frames[40];
	struct py_thread th = { .tid = 1000, .name = "worker" };
	struct sample smp = { .weight_ns = 10000000, .thread = &th, .on_cpu = true };
	size_t i, k, depth;

	for (i = 0; i < FUNCS; i++) {
		pool[i].filename = xasprintf("/srv/app/lib/python3.12/site-packages/pkg%zu/module_%zu.py",
		    i % MODULES, i % 17);
		pool[i].name = xasprintf("function_%zu", i);
		pool[i].qualname = xasprintf("Class%zu.function_%zu", i % 23, i);
		pool[i].line = (int)(10 + i % 900);
		pool[i].code = 0x7f1000000000ull + i * 64;
	}
	for (k = 0; k % 256 != 0 || distinct_stacks(p) < want; k++) {
		depth = 8 + k % 33;
		for (i = 0; i < depth; i++) {
			rnd_state = (k >> (i < 16 ? 16 - i : 0)) * 0x9e3779b97f4a7c15ull + i + 1;
			frames[depth - 1 - i] = pool[rnd() % (i < 3 ? 4 : FUNCS)];
		}
		th.frames = frames;
		th.nframes = depth;
		for (i = 0; i < 1 + k % 4; i++)
			profile_add(p, &smp);
	}
	for (i = 0; i < FUNCS; i++) {
		free(pool[i].filename);
		free(pool[i].name);
		free(pool[i].qualname);
	}
	free(pool);
	return p;
}

static void
grow_one(void *ctx, size_t i)
{
	(void)i;
	((struct flamelive *)ctx)->generation++;
}

/* Median of RUNS full redraws, in ms; `grow`: as if samples had arrived. */
static double
redraw_ms(struct tui *t, struct flamelive *fl, bool grow)
{
	return drawbench_redraw(t, RUNS, drawbench_cpu_ns, grow ? grow_one : NULL, fl) / 1e6;
}

struct result {
	double grow, same, top;
	size_t stacks, nodes;
};

static void
measure(struct profile *prof, struct result *r)
{
	struct tui *t = tui_new_headless(tui_fake_snapshot(5, 6));
	struct pane *p = tui_pane(t, &pane_flame_ops);
	struct flamelive *fl = flamelive_fake(prof, 100);

	r->stacks = distinct_stacks(prof);
	r->nodes = prof->nnodes;
	pane_flame_show(p, fl);
	t->maximised = p;
	tui_relayout(t);
	r->grow = redraw_ms(t, fl, true);
	r->same = redraw_ms(t, fl, false);
	p->ops->key(p, A_TOP_TABLE);
	r->top = redraw_ms(t, fl, true);
	tui_free(t);	/* frees the pane's model, and the profile with it */
}

int
main(int argc, char **argv)
{
	struct drawbench b;
	size_t k;

	if (!drawbench_open(&b, "flamedraw", argc, argv))
		return 1;
	printf("flame pane redraw, CPU time, %d runs each, median; baseline: 50 distinct stacks\n",
	    RUNS);
	for (k = 0; k < b.nsizes; k++) {
		struct result big, small;
		int cols, rows;

		if (!drawbench_size(&b, k, &cols, &rows))
			continue;
		measure(make_profile(50), &small);
		measure(make_profile(50000), &big);
		printf("%4dx%-3d %zu stacks (%zu nodes):\n", cols, rows, big.stacks, big.nodes);
		printf("%4dx%-3d   redraw, new samples: %7.3f ms   baseline %6.3f ms   = %6.1fx   (budget 10 ms)\n",
		    cols, rows, big.grow, small.grow, big.grow / small.grow);
		printf("%4dx%-3d   redraw, no change:   %7.3f ms   baseline %6.3f ms   = %6.1fx\n",
		    cols, rows, big.same, small.same, big.same / small.same);
		printf("%4dx%-3d   top table, new samples: %7.3f ms   baseline %6.3f ms   = %6.1fx\n",
		    cols, rows, big.top, small.top, big.top / small.top);
	}
	drawbench_close(&b);
	return 0;
}
