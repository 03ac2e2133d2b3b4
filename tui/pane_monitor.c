/*
 * The monitor pane: the table a `:monitor` keeps, one line per observed
 * method, updated in place at each cycle's end, with what changed since
 * the cycle before (calls up or down, the average cost up or down) and
 * sparklines of the calls and the p99 cost over the last 8 cycles.
 * q or Esc stops the monitor, so that the agent removes its hooks, and
 * closes the pane.  Like the watch pane it only shows what the runner
 * hands it (runner_io.record).
 */
#include "config.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/model_monitor.h"
#include "tui/tui.h"

#define MONITOR_TREND 8	/* cycles in the sparklines */

struct monitor_line {
	char *method;
	struct monitor_row cur, prev;	/* cur.cycle 0: none yet; prev.cycle 0: no previous */
	double calls[MONITOR_TREND], p99[MONITOR_TREND];	/* the last cycles, oldest first */
	size_t ntrend;
};

struct monitor_view {
	struct monitor_line *rows;
	size_t nrows, arows;
	long long cycles;
	double cycle_s;
	char *what;
	char *end;		/* "stopped after 3 cycles", or NULL while running */
	bool running, leave;
};

static void
view_clear(struct monitor_view *v)
{
	size_t i;

	for (i = 0; i < v->nrows; i++) {
		free(v->rows[i].method);
		monitor_row_clear(&v->rows[i].cur);
		monitor_row_clear(&v->rows[i].prev);
	}
	v->nrows = 0;
	v->cycles = 0;
}

static struct monitor_line *
row_of(struct monitor_view *v, const char *method)
{
	struct monitor_line *l;
	size_t i;

	for (i = 0; i < v->nrows; i++)
		if (strcmp(v->rows[i].method, method) == 0)
			return &v->rows[i];
	l = ARRAY_PUSH(v->rows, v->nrows, v->arows);
	memset(l, 0, sizeof *l);
	l->method = xstrdup(method);
	return l;
}

static void
started(struct pane *p, const struct monitor_row *m)
{
	struct monitor_view *v = p->data;
	size_t i;

	view_clear(v);
	free(v->what);
	free(v->end);
	v->end = NULL;
	v->what = m->nobserved == 1 ? xstrdup(m->observed[0]) :
	    xasprintf("%zu methods", m->nobserved);
	for (i = 0; i < m->nobserved; i++)
		row_of(v, m->observed[i]);
	v->cycle_s = m->cycle_s;
	v->running = true;
	v->leave = false;
	p->cursor = p->top = 0;
	pane_clamp(p);
}

/* A cycle's row of one method (moved out of *m): the one before becomes prev. */
static void
cycled(struct pane *p, struct monitor_row *m)
{
	struct monitor_view *v = p->data;
	struct monitor_line *l = row_of(v, m->method ? m->method : "?");

	monitor_row_clear(&l->prev);
	l->prev = l->cur;
	l->cur = *m;
	memset(m, 0, sizeof *m);
	if (l->ntrend == MONITOR_TREND) {
		memmove(l->calls, l->calls + 1, (MONITOR_TREND - 1) * sizeof l->calls[0]);
		memmove(l->p99, l->p99 + 1, (MONITOR_TREND - 1) * sizeof l->p99[0]);
		l->ntrend--;
	}
	l->calls[l->ntrend] = (double)l->cur.calls;
	l->p99[l->ntrend++] = l->cur.has_cost ? l->cur.p99_ms : 0.0;
	if (l->cur.cycle > v->cycles)
		v->cycles = l->cur.cycle;
	pane_clamp(p);
}

bool
pane_monitor_record(void *tui, struct runner_record *rec)
{
	struct tui *t = tui;
	struct pane *p;
	struct monitor_view *v;

	if (strcmp(rec->cmd, "monitor") != 0)
		return false;
	p = tui_pane(t, &pane_monitor_ops);
	v = p->data;
	if (rec->kind == RUNNER_RECORD_END) {
		if (!v->running)
			return false;
		v->running = false;
		free(v->end);
		v->end = xasprintf("%s after %lld cycle%s", rec->failed ? "ended" : rec->cancelled ?
		    "stopped" : rec->reset ? "removed by reset" : "done", rec->shown,
		    rec->shown == 1 ? "" : "s");
		if (!rec->failed)
			tui_status(t, false, "monitor: %s; the hooks are removed", v->end);
		if (v->leave)
			tui_hide_pane(t, p);
		t->dirty = true;
		return true;
	}
	if (rec->monitor == NULL)
		return false;
	if (rec->kind == RUNNER_RECORD_START) {
		started(p, rec->monitor);
		tui_show_pane(t, p, true);
	} else {
		cycled(p, rec->monitor);
	}
	t->dirty = true;
	return true;
}

static void
monitor_open(struct pane *p)
{
	p->data = xcalloc(1, sizeof(struct monitor_view));
}

static void
monitor_close(struct pane *p)
{
	struct monitor_view *v = p->data;

	if (v == NULL)
		return;
	view_clear(v);
	free(v->rows);
	free(v->what);
	free(v->end);
	free(v);
	p->data = NULL;
}

static size_t
monitor_nlines(struct pane *p)
{
	return ((struct monitor_view *)p->data)->nrows;
}

static void
monitor_title(struct pane *p, struct sbuf *out)
{
	struct monitor_view *v = p->data;

	sbuf_add(out, "Monitor");
	if (v->what == NULL)
		return;
	sbuf_addf(out, " %s %s every %g s %s cycle %lld %s %s", glyph(G_DOT), v->what, v->cycle_s,
	    glyph(G_DOT), v->cycles, glyph(G_DOT), v->end != NULL ? v->end : "running (q stops)");
}

static void
monitor_header(struct pane *p, struct tline *l)
{
	(void)p;
	tline_addf(l, EL_HEADER, "%-8s  %7s  %7s  %7s  %6s  %9s  %9s  %7s  %-8s  %-8s  %s", "TIME",
	    "TOTAL", "SUCCESS", "FAIL", "FAIL%", "AVG ms", "P99 ms", "CHANGE", "CALLS", "P99",
	    "METHOD");
}

/* What changed since the cycle before: calls (+3 / -2 / =) and the average (^ / v). */
static void
change(const struct monitor_line *r, struct tline *l)
{
	const struct monitor_row *c = &r->cur, *b = &r->prev;
	char d[24], arrow = ' ';

	if (b->cycle == 0) {
		tline_addf(l, EL_MONITOR_DELTA, "%7s  ", "new");
		return;
	}
	if (c->calls == b->calls)
		snprintf(d, sizeof d, "=");
	else
		snprintf(d, sizeof d, "%+lld", c->calls - b->calls);
	if (c->has_cost && b->has_cost && c->avg_ms > b->avg_ms * 1.1)
		arrow = '^';
	else if (c->has_cost && b->has_cost && c->avg_ms < b->avg_ms / 1.1)
		arrow = 'v';
	tline_addf(l, EL_MONITOR_DELTA, "%6s%c  ", d, arrow);
}

static void
monitor_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct monitor_view *v = p->data;
	const struct monitor_line *r = &v->rows[line];
	const struct monitor_row *c = &r->cur;
	time_t sec = (time_t)c->time;
	char when[16];
	struct tm tm;

	if (c->cycle == 0) {
		tline_addf(l, EL_DEFAULT, "%-8s  %7s  %7s  %7s  %6s  %9s  %9s  %7s  %8s  %8s  ", "-",
		    "-", "-", "-", "-", "-", "-", "", "", "");
		tline_add(l, EL_MONITOR_METHOD, r->method);
		return;
	}
	if (localtime_r(&sec, &tm) == NULL || strftime(when, sizeof when, "%H:%M:%S", &tm) == 0)
		strcpy(when, "?");
	tline_addf(l, EL_DEFAULT, "%-8s  %7lld  %7lld  ", when, c->calls, c->success);
	tline_addf(l, c->failed > 0 ? EL_MONITOR_FAIL : EL_DEFAULT, "%7lld  %5.1f%%  ", c->failed,
	    c->fail_rate);
	if (c->has_cost)
		tline_addf(l, EL_DEFAULT, "%9.3f  %9.3f  ", c->avg_ms, c->p99_ms);
	else
		tline_addf(l, EL_DEFAULT, "%9s  %9s  ", "-", "-");
	change(r, l);
	tline_sparkline(l, EL_MONITOR_TREND, r->calls, r->ntrend, MONITOR_TREND);
	tline_add(l, EL_DEFAULT, "  ");
	tline_sparkline(l, EL_MONITOR_TREND, r->p99, r->ntrend, MONITOR_TREND);
	tline_add(l, EL_DEFAULT, "  ");
	tline_add(l, EL_MONITOR_METHOD, r->method);
	if (c->dropped > 0)
		tline_addf(l, EL_MONITOR_FAIL, "  (%lld not counted)", c->dropped);
}

static bool
monitor_key(struct pane *p, enum action a)
{
	struct monitor_view *v = p->data;

	if (a != A_BACK || !v->running)
		return false;
	v->leave = true;	/* tui/stream.c stops it */
	tui_status(p->tui, false, "stopping the monitor...");
	return true;
}

static bool
monitor_live(struct pane *p)
{
	return ((struct monitor_view *)p->data)->running;
}

static const struct keybinding monitor_keys[] = {
	{ NULL, 'q', A_BACK, "Stop", "stop the monitor (the hooks are removed) and close the pane" },
	{ .key = 0 },
};

const struct pane_ops pane_monitor_ops = {
	.name = "monitor",
	.help_title = "Monitor pane (after :monitor)",
	.slot = SLOT_BOTTOM,
	.share = 4,
	.keys = monitor_keys,
	.marker = true,
	.open = monitor_open,
	.close = monitor_close,
	.nlines = monitor_nlines,
	.title = monitor_title,
	.header = monitor_header,
	.draw_line = monitor_draw_line,
	.key = monitor_key,
	.live = monitor_live,
};
