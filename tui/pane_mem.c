/*
 * The mem pane (M): every type's object count and size, re-sampled by the
 * agent every few seconds (a `mem` live stream), with the growth since the
 * first sample (or since `b`), highlighted, and each type's trend over the
 * last samples; sortable by size, count, growth.  Enter shows a few
 * instances of a type, as `vmtool -a getInstances` prints them.  `S`
 * switches to allocation sites (`mem sites` on this session's connection:
 * tracemalloc ends with the pane or the client); Enter on a site shows its
 * traceback here and its source in the source pane (an event: panes never
 * call each other).  `D` switches the types between the diff (growth
 * since the base) and a plain summary (counts and sizes now); `T` records
 * `torch modules -n 3` in the background and shows its table per module
 * and stage (Esc cancels it, and the agent removes its hooks).  Everything from the target is drawn through tline,
 * which escapes it (tui/draw.h).  Hiding the pane stops the sampling.
 */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/memlive.h"
#include "core/model_torch.h"
#include "core/render_mem.h"
#include "core/runner.h"
#include "tui/inside.h"
#include "tui/tui.h"

#define DEFAULT_INTERVAL 5	/* seconds between samples */
#define MIN_INTERVAL 0.5
#define MAX_INTERVAL 60
#define INSTANCES 5		/* Enter on a type: how many */
#define SITE_FRAMES 8		/* tracemalloc frames kept per allocation */
#define TORCH_STEPS 3		/* T: torch modules -n TORCH_STEPS */
#define TORCH_TIMEOUT 60	/* seconds to wait for them */

enum view { VIEW_TYPES, VIEW_SITES, VIEW_TEXT, VIEW_TORCH };
enum sort_col { SORT_SIZE, SORT_COUNT, SORT_GROWTH, SORT_NAME, SORT__COUNT };

static const char *const sort_names[SORT__COUNT] = { "SIZE", "COUNT", "GROWTH", "TYPE" };

/* The torch view's columns, in the order > cycles them; ORDER: the modules' tree order. */
enum tsort_col { TSORT_ORDER, TSORT_TOTAL, TSORT_AVG, TSORT_CALLS, TSORT_MEM, TSORT_NAME,
	TSORT__COUNT };

static const char *const tsort_names[TSORT__COUNT] = {
	"the modules' order", "TOTAL ms", "AVG ms", "CALLS", "MEMORY", "MODULE",
};

struct mem {
	struct memlive *live;
	enum view view, back;		/* back: the view Esc returns to from the text */
	enum sort_col sort;
	bool reverse;
	size_t *rows;			/* VIEW_TYPES: indices into live->types */
	size_t nrows, arows;
	struct mem_sites *sites;	/* VIEW_SITES: the latest diff */
	bool sites_on;			/* we started `mem sites` on this connection */
	char **text;			/* VIEW_TEXT: lines */
	size_t ntext;
	char *text_title;
	char *error;			/* the last failure, shown in the title */
	char *filter;			/* types: only names matching it, or NULL */
	pcre2_code *filter_re;
	double interval;
	bool summary;			/* VIEW_TYPES: counts and sizes now, no growth */
	struct torch_modules *torch;	/* VIEW_TORCH: the latest table */
	size_t *trows;			/* VIEW_TORCH: indices into torch->rows */
	size_t ntrows, atrows;
	enum tsort_col tsort;
	bool torch_busy;		/* recording: the agent's hooks are in */
	long long torch_hooked;		/* modules hooked (0: not said yet) */
	char *torch_error;		/* why the last T showed no table */
};

#define W_COUNT 10
#define W_SIZE 10
#define W_TREND MEMLIVE_TREND
#define W_CALLS 7
#define W_MS 10
#define W_SHARE 6
#define W_STAGE 8

static struct session *
sess(struct pane *p)
{
	return p->tui->runner != NULL ? runner_session(p->tui->runner) : NULL;
}

static long long
key_of(const struct memlive_type *t, enum sort_col c)
{
	switch (c) {
	case SORT_COUNT:
		return t->count;
	case SORT_GROWTH:
		return t->size - t->base_size;
	default:
		return t->size;
	}
}

static int
cmp_rows(const void *a, const void *b, void *arg)
{
	struct pane *p = arg;
	struct mem *m = p->data;
	const struct memlive_type *x = &m->live->types[*(const size_t *)a];
	const struct memlive_type *y = &m->live->types[*(const size_t *)b];
	long long kx, ky;
	int r;

	if (m->sort == SORT_NAME) {
		r = strcmp(x->type, y->type);
	} else {
		kx = key_of(x, m->sort);
		ky = key_of(y, m->sort);
		r = (kx < ky) - (kx > ky);	/* largest first */
		if (r == 0)
			r = strcmp(x->type, y->type);
	}
	return m->reverse ? -r : r;
}

/* The rows again (a sample came, the sort changed); the cursor stays on its type. */
static void
rebuild(struct pane *p)
{
	struct mem *m = p->data;
	const char *was = m->nrows && p->cursor < m->nrows ? m->live->types[m->rows[p->cursor]].type : NULL;
	pcre2_match_data *md;
	size_t i;

	m->nrows = 0;
	md = m->filter_re ? pcre2_match_data_create_from_pattern(m->filter_re, NULL) : NULL;
	for (i = 0; i < m->live->ntypes; i++) {
		const struct memlive_type *t = &m->live->types[i];

		if (t->count == 0 && t->base_count == 0 && t->size == 0 && t->base_size == 0)
			continue;
		if (md != NULL && pcre2_match(m->filter_re, (PCRE2_SPTR)t->type, PCRE2_ZERO_TERMINATED,
		    0, 0, md, NULL) < 0)
			continue;
		*ARRAY_PUSH(m->rows, m->nrows, m->arows) = i;
	}
	pcre2_match_data_free(md);
	if (m->nrows > 1)
		qsort_r(m->rows, m->nrows, sizeof *m->rows, cmp_rows, p);
	for (i = 0; was != NULL && i < m->nrows; i++)
		if (m->live->types[m->rows[i]].type == was) {
			p->cursor = i;
			break;
		}
	pane_clamp(p);
}

static double
tkey_of(const struct torch_row *r, enum tsort_col c)
{
	switch (c) {
	case TSORT_TOTAL:
		return r->total_ms;
	case TSORT_AVG:
		return r->avg_ms;
	case TSORT_CALLS:
		return (double)r->calls;
	case TSORT_MEM:
		return r->has_mem ? (double)r->mem : -1e300;
	default:
		return 0;
	}
}

static int
cmp_trows(const void *a, const void *b, void *arg)
{
	struct mem *m = arg;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const struct torch_row *x = &m->torch->rows[ia], *y = &m->torch->rows[ib];
	double kx, ky;
	int r;

	if (m->tsort == TSORT_NAME) {
		r = strcmp(x->module, y->module);
	} else {
		kx = tkey_of(x, m->tsort);
		ky = tkey_of(y, m->tsort);
		r = (kx < ky) - (kx > ky);	/* largest first */
	}
	if (r == 0)
		r = (ia > ib) - (ia < ib);	/* then the modules' order */
	return m->reverse ? -r : r;
}

/* The torch table's rows in the chosen order. */
static void
rebuild_torch(struct pane *p)
{
	struct mem *m = p->data;
	size_t i;

	m->ntrows = 0;
	for (i = 0; m->torch != NULL && i < m->torch->nrows; i++)
		*ARRAY_PUSH(m->trows, m->ntrows, m->atrows) = i;
	if (m->ntrows > 1)	/* never a NULL array: qsort_r's is declared non-null */
		qsort_r(m->trows, m->ntrows, sizeof *m->trows, cmp_trows, m);
	pane_clamp(p);
}

static void
text_clear(struct mem *m)
{
	size_t i;

	for (i = 0; i < m->ntext; i++)
		free(m->text[i]);
	free(m->text);
	m->text = NULL;
	m->ntext = 0;
	free(m->text_title);
	m->text_title = NULL;
}

/* Show `text` (lines) in the text view under `title`. */
static void
show_text(struct pane *p, const char *title, const char *text)
{
	struct mem *m = p->data;
	const char *s = text, *nl;
	size_t a = 0;
	char *t = xstrdup(title);	/* it may be m->text_title */

	text_clear(m);
	m->text_title = t;
	while (*s != '\0') {
		nl = strchr(s, '\n');
		*ARRAY_PUSH(m->text, m->ntext, a) = nl ? xstrndup(s, (size_t)(nl - s)) : xstrdup(s);
		s = nl ? nl + 1 : s + strlen(s);
	}
	if (m->view != VIEW_TEXT)
		m->back = m->view;
	m->view = VIEW_TEXT;
	p->cursor = p->top = 0;
	p->tui->dirty = true;
}

/* ---- what the agent answers (core/memlive calls these from session_pump) ---- */

static void
on_sample(void *ctx, struct memlive *live)
{
	struct pane *p = ctx;
	struct mem *m = p->data;
	char *cause = NULL;

	(void)live;
	free(m->error);
	m->error = NULL;
	rebuild(p);
	/* the sites follow the same clock */
	if (m->sites_on && !memlive_running(m->live, MEMLIVE_SITES) && sess(p) != NULL)
		memlive_sites(m->live, sess(p), "diff", 0, &cause);
	free(cause);
	p->tui->dirty = true;
}

static void
on_sites(void *ctx, struct mem_sites *s)
{
	struct pane *p = ctx;
	struct mem *m = p->data;

	if (strcmp(s->what, "diff") == 0) {
		mem_sites_free(m->sites);
		m->sites = s;
		pane_clamp(p);
	} else {
		if (strcmp(s->what, "start") == 0)
			tui_status(p->tui, false, "mem sites: tracemalloc %s; it stops with this pane",
			    s->was_tracing ? "was running already (left as it was)" : "started");
		mem_sites_free(s);
	}
	p->tui->dirty = true;
}

static void
on_text(void *ctx, const char *text)
{
	struct pane *p = ctx;
	struct mem *m = p->data;

	show_text(p, m->text_title ? m->text_title : "Instances", text);
}

static void
on_error(void *ctx, enum memlive_kind kind, const char *cause)
{
	struct pane *p = ctx;
	struct mem *m = p->data;

	if (kind == MEMLIVE_TORCH) {
		/* the torch view says it; the types' title keeps its own state */
		free(m->torch_error);
		m->torch_error = xstrdup(cause);
		m->torch_busy = false;
		tui_status(p->tui, true, "torch modules: %s", cause);
		p->tui->dirty = true;
		return;
	}
	free(m->error);
	m->error = xstrdup(cause);
	if (kind == MEMLIVE_SITES)
		m->sites_on = false;
	tui_status(p->tui, true, "mem: %s", cause);
	p->tui->dirty = true;
}

static void
on_torch_hooked(void *ctx, long long modules)
{
	struct pane *p = ctx;

	((struct mem *)p->data)->torch_hooked = modules;
	p->tui->dirty = true;
}

static void
on_torch(void *ctx, struct torch_modules *t)
{
	struct pane *p = ctx;
	struct mem *m = p->data;

	torch_modules_free(m->torch);
	m->torch = t;
	m->torch_busy = false;
	rebuild_torch(p);
	tui_status(p->tui, false, "torch modules: %lld step%s of %s recorded; the hooks are removed",
	    t->steps, t->steps == 1 ? "" : "s", t->root);
	p->tui->dirty = true;
}

static const struct memlive_handler handler = {
	.sample = on_sample, .sites = on_sites, .text = on_text, .error = on_error,
	.torch_hooked = on_torch_hooked, .torch = on_torch,
};

/* ---- starting and stopping -------------------------------------------------- */

static bool
start(struct pane *p, double interval)
{
	struct mem *m = p->data;
	char *cause = NULL;

	if (interval <= 0 && m->interval > 0 && memlive_running(m->live, MEMLIVE_LIVE))
		return true;	/* already sampling: just show it */
	if (!inside_attach(p->tui, true, false) || sess(p) == NULL)
		return false;	/* the status says why */
	m->interval = interval > 0 ? interval : DEFAULT_INTERVAL;
	if (memlive_start(m->live, sess(p), m->interval, &cause) != FP_OK) {
		tui_status(p->tui, true, "mem: %s", cause ? cause : "cannot start");
		free(cause);
		return false;
	}
	tui_status(p->tui, false, "mem: every type re-sampled every %g s inside the process; "
	    "b measures growth from now, S shows allocation sites", m->interval);
	return true;
}

/* Stop what runs in the target: the sampling, and tracemalloc if we started it. */
static void
stop(struct pane *p)
{
	struct mem *m = p->data;
	char *cause = NULL;

	if (sess(p) == NULL)
		return;
	memlive_stop(m->live, sess(p));
	m->interval = 0;
	if (m->torch_busy) {
		memlive_torch_cancel(m->live, sess(p));
		m->torch_busy = false;
	}
	if (m->sites_on) {
		m->sites_on = false;
		memlive_sites(m->live, sess(p), "stop", 0, &cause);
		free(cause);
	}
}

static void
toggle_sites(struct pane *p)
{
	struct mem *m = p->data;
	char *cause = NULL;

	if (m->view == VIEW_SITES) {
		m->view = VIEW_TYPES;
	} else {
		m->view = VIEW_SITES;
		if (!m->sites_on && sess(p) != NULL) {
			if (memlive_sites(m->live, sess(p), "start", SITE_FRAMES, &cause) == FP_OK)
				m->sites_on = true;
			else
				tui_status(p->tui, true, "mem sites: %s", cause);
			free(cause);
		}
	}
	p->cursor = p->top = 0;
	p->tui->dirty = true;
}

/* T: record `torch modules` in the background, or leave the torch view (cancelling it). */
static void
toggle_torch(struct pane *p)
{
	struct mem *m = p->data;
	char *cause = NULL;

	p->cursor = p->top = 0;
	p->tui->dirty = true;
	if (m->view == VIEW_TORCH) {
		if (m->torch_busy && sess(p) != NULL) {
			memlive_torch_cancel(m->live, sess(p));
			tui_status(p->tui, false, "torch modules: cancelled; the hooks are removed");
		}
		m->torch_busy = false;
		m->view = VIEW_TYPES;
		return;
	}
	m->view = VIEW_TORCH;
	if (m->torch_busy)
		return;		/* left by S or D while recording: it goes on */
	free(m->torch_error);
	m->torch_error = NULL;
	if (sess(p) == NULL) {
		m->torch_error = xstrdup("the agent is not loaded");
		return;
	}
	if (memlive_torch(m->live, sess(p), TORCH_STEPS, TORCH_TIMEOUT, &cause) == FP_OK) {
		m->torch_busy = true;
		m->torch_hooked = 0;
	} else {
		m->torch_error = xstrdup(cause ? cause : "cannot start");
	}
	free(cause);
}

/* ---- drawing ---------------------------------------------------------------- */

static size_t
mem_nlines(struct pane *p)
{
	struct mem *m = p->data;

	switch (m->view) {
	case VIEW_SITES:
		return m->sites ? m->sites->nrows : 0;
	case VIEW_TEXT:
		return m->ntext;
	case VIEW_TORCH:
		return m->torch_busy || m->torch_error != NULL ? 1 : m->ntrows;
	default:
		return m->nrows;
	}
}

static void
torch_title(struct mem *m, struct sbuf *out)
{
	const struct torch_modules *t = m->torch;

	sbuf_add(out, "Torch modules");
	if (m->torch_busy)
		sbuf_addf(out, " · recording %d steps…", TORCH_STEPS);
	else if (m->torch_error == NULL && t != NULL)
		sbuf_addf(out, " · %lld step%s of %s, %.3f ms a step%s · memory: %s", t->steps,
		    t->steps == 1 ? "" : "s", t->root, t->step_avg_ms, t->steps < t->steps_asked ?
		    " (fewer than asked)" : "", t->memory);
	sbuf_add(out, m->torch_busy ? " · Esc cancels" : " · T or Esc: back to the types");
}

static void
mem_title(struct pane *p, struct sbuf *out)
{
	struct mem *m = p->data;
	const struct memlive *l = m->live;
	char size[32];

	if (m->view == VIEW_TEXT) {
		sbuf_add(out, m->text_title ? m->text_title : "Mem");
		return;
	}
	if (m->view == VIEW_TORCH) {
		torch_title(m, out);
		return;
	}
	sbuf_add(out, m->view == VIEW_SITES ? "Mem sites" : m->summary ? "Mem summary (D: diff)" :
	    "Mem diff (D: summary)");
	if (m->view == VIEW_TYPES && m->filter != NULL)
		sbuf_addf(out, " · %zu shown · %s", m->nrows, m->filter);
	if (l->samples == 0) {
		sbuf_add(out, m->interval > 0 ? " · first sample..." : " · stopped");
	} else {
		render_mem_size(size, sizeof size, l->scan.bytes, false);
		sbuf_addf(out, " · %lld types · %s · sample %lld", l->scan.types, size, l->samples);
		if (m->view != VIEW_TYPES || !m->summary)
			sbuf_addf(out, ", growth since %lld", l->base_sample + 1);
		if (m->interval > 0)
			sbuf_addf(out, " · every %g s", m->interval);
		if (l->scan.approximate)
			sbuf_add(out, " · approximate");
	}
	if (m->error != NULL)
		sbuf_addf(out, " · %s", m->error);
}

static void
header_col(struct tline *l, struct mem *m, int c, const char *name, int width, bool right)
{
	char buf[32];

	if ((m->view == VIEW_TORCH ? (int)m->tsort : (int)m->sort) == c)
		snprintf(buf, sizeof buf, "%s%s", name, draw_utf8() ?
		    (m->reverse ? "\u25b2" : "\u25bc") : (m->reverse ? "^" : "v"));
	else
		snprintf(buf, sizeof buf, "%s", name);
	tline_col(l, EL_HEADER, buf, width, right);
}

static void
torch_header(struct mem *m, struct tline *l)
{
	header_col(l, m, TSORT_CALLS, "CALLS", W_CALLS, true);
	tline_add(l, EL_HEADER, " ");
	header_col(l, m, TSORT_AVG, "AVG ms", W_MS, true);
	tline_add(l, EL_HEADER, " ");
	header_col(l, m, TSORT_TOTAL, "TOTAL ms", W_MS, true);
	tline_add(l, EL_HEADER, " ");
	tline_col(l, EL_HEADER, "STEP %", W_SHARE, true);
	tline_add(l, EL_HEADER, " ");
	header_col(l, m, TSORT_MEM, "MEMORY", W_SIZE, true);
	tline_add(l, EL_HEADER, "  ");
	tline_col(l, EL_HEADER, "STAGE", W_STAGE, false);
	tline_add(l, EL_HEADER, " ");
	header_col(l, m, TSORT_NAME, "MODULE", 200, false);
}

static void
mem_header(struct pane *p, struct tline *l)
{
	struct mem *m = p->data;

	if (m->view == VIEW_TEXT) {
		tline_add(l, EL_HEADER, "Esc: back");
		return;
	}
	if (m->view == VIEW_TORCH) {
		torch_header(m, l);
		return;
	}
	if (m->view == VIEW_SITES) {
		tline_col(l, EL_HEADER, "ΔSIZE", W_SIZE, true);
		tline_add(l, EL_HEADER, " ");
		tline_col(l, EL_HEADER, "ΔCOUNT", W_COUNT, true);
		tline_add(l, EL_HEADER, " ");
		tline_col(l, EL_HEADER, "SIZE", W_SIZE, true);
		tline_add(l, EL_HEADER, "  FILE:LINE");
		return;
	}
	header_col(l, m, SORT_COUNT, "COUNT", W_COUNT, true);
	tline_add(l, EL_HEADER, " ");
	if (!m->summary) {
		tline_col(l, EL_HEADER, "ΔCOUNT", W_COUNT, true);
		tline_add(l, EL_HEADER, " ");
	}
	header_col(l, m, SORT_SIZE, "SIZE", W_SIZE, true);
	tline_add(l, EL_HEADER, " ");
	if (!m->summary) {
		header_col(l, m, SORT_GROWTH, "GROWTH", W_SIZE, true);
		tline_add(l, EL_HEADER, " ");
		tline_col(l, EL_HEADER, "TREND", W_TREND, false);
		tline_add(l, EL_HEADER, " ");
	}
	header_col(l, m, SORT_NAME, "TYPE", 200, false);
}

static enum theme_elem
growth_elem(long long delta)
{
	return delta > 0 ? EL_THREAD_CPU_HIGH : delta < 0 ? EL_THREAD_IDLE : EL_DEFAULT;
}

/* The last samples' sizes as a sparkline, scaled to the type's own range. */
static void
trend(struct tline *l, const struct memlive_type *t)
{
	static const char *const utf8[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char ascii[] = "_.-:=+*#";
	long long lo = t->trend[0], hi = t->trend[0];
	unsigned i, k;

	for (i = 1; i < t->ntrend; i++) {
		lo = t->trend[i] < lo ? t->trend[i] : lo;
		hi = t->trend[i] > hi ? t->trend[i] : hi;
	}
	for (i = 0; i < MEMLIVE_TREND; i++) {
		if (i + t->ntrend < MEMLIVE_TREND) {
			tline_add(l, EL_DEFAULT, " ");
			continue;
		}
		k = (unsigned)(t->ntrend + i - MEMLIVE_TREND);
		k = hi > lo ? (unsigned)((t->trend[k] - lo) * 7 / (hi - lo)) : 0;
		if (draw_utf8())
			tline_add(l, growth_elem(t->trend[t->ntrend - 1] - t->trend[0]), utf8[k]);
		else
			tline_addn(l, growth_elem(t->trend[t->ntrend - 1] - t->trend[0]), &ascii[k], 1);
	}
}

static void
draw_type(struct mem *m, size_t line, struct tline *l)
{
	const struct memlive_type *t = &m->live->types[m->rows[line]];
	char buf[32];

	snprintf(buf, sizeof buf, "%lld", t->count);
	tline_col(l, EL_DEFAULT, buf, W_COUNT, true);
	tline_add(l, EL_DEFAULT, " ");
	if (!m->summary) {
		snprintf(buf, sizeof buf, "%+lld", t->count - t->base_count);
		tline_col(l, growth_elem(t->count - t->base_count), buf, W_COUNT, true);
		tline_add(l, EL_DEFAULT, " ");
	}
	render_mem_size(buf, sizeof buf, t->size, false);
	tline_col(l, EL_DEFAULT, buf, W_SIZE, true);
	tline_add(l, EL_DEFAULT, " ");
	if (!m->summary) {
		render_mem_size(buf, sizeof buf, t->size - t->base_size, true);
		tline_col(l, growth_elem(t->size - t->base_size), buf, W_SIZE, true);
		tline_add(l, EL_DEFAULT, " ");
		trend(l, t);
		tline_add(l, EL_DEFAULT, " ");
	}
	tline_add(l, EL_THREAD_NAME, t->type);
}

static void
draw_site(const struct mem_site *s, struct tline *l)
{
	char buf[32];

	render_mem_size(buf, sizeof buf, s->size_delta, true);
	tline_col(l, growth_elem(s->size_delta), buf, W_SIZE, true);
	tline_add(l, EL_DEFAULT, " ");
	snprintf(buf, sizeof buf, "%+lld", s->count_delta);
	tline_col(l, growth_elem(s->count_delta), buf, W_COUNT, true);
	tline_add(l, EL_DEFAULT, " ");
	render_mem_size(buf, sizeof buf, s->size, false);
	tline_col(l, EL_DEFAULT, buf, W_SIZE, true);
	tline_add(l, EL_DEFAULT, "  ");
	tline_add(l, EL_STACK_FILE, s->where.file);
	tline_addf(l, EL_STACK_LINENO, ":%lld", s->where.line);
}

static void
draw_torch(struct mem *m, size_t line, struct tline *l)
{
	const struct torch_row *r;
	char buf[48];

	if (m->torch_busy) {
		if (m->torch_hooked > 0)
			tline_addf(l, EL_OUTPUT, "recording %d steps… %lld modules hooked; Esc cancels "
			    "and removes the hooks", TORCH_STEPS, m->torch_hooked);
		else
			tline_addf(l, EL_OUTPUT, "recording %d steps… (hooking the modules)",
			    TORCH_STEPS);
		return;
	}
	if (m->torch_error != NULL) {
		tline_add(l, EL_STACK_ERROR, m->torch_error);
		return;
	}
	r = &m->torch->rows[m->trows[line]];
	snprintf(buf, sizeof buf, "%lld", r->calls);
	tline_col(l, EL_DEFAULT, buf, W_CALLS, true);
	tline_add(l, EL_DEFAULT, " ");
	snprintf(buf, sizeof buf, "%.3f", r->avg_ms);
	tline_col(l, EL_DEFAULT, buf, W_MS, true);
	tline_add(l, EL_DEFAULT, " ");
	snprintf(buf, sizeof buf, "%.3f", r->total_ms);
	tline_col(l, EL_DEFAULT, buf, W_MS, true);
	tline_add(l, EL_DEFAULT, " ");
	snprintf(buf, sizeof buf, "%.1f%%", r->share);
	tline_col(l, EL_DEFAULT, buf, W_SHARE, true);
	tline_add(l, EL_DEFAULT, " ");
	if (r->has_mem)
		render_mem_size(buf, sizeof buf, r->mem, true);
	else
		snprintf(buf, sizeof buf, "-");
	tline_col(l, r->has_mem ? growth_elem(r->mem) : EL_DEFAULT, buf, W_SIZE, true);
	tline_add(l, EL_DEFAULT, "  ");
	tline_col(l, EL_DEFAULT, r->backward ? "backward" : "forward", W_STAGE, false);
	tline_add(l, EL_DEFAULT, " ");
	tline_add(l, EL_THREAD_NAME, r->module);
}

static void
mem_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct mem *m = p->data;

	if (m->view == VIEW_TORCH)
		draw_torch(m, line, l);
	else if (m->view == VIEW_TEXT)
		tline_add_text(l, EL_OUTPUT, m->text[line]);
	else if (m->view == VIEW_SITES)
		draw_site(&m->sites->rows[line], l);
	else
		draw_type(m, line, l);
}

/* ---- keys and events -------------------------------------------------------- */

static void
enter(struct pane *p)
{
	struct mem *m = p->data;
	struct sbuf s = { 0 };
	char *cause = NULL;
	size_t k;

	if (m->view == VIEW_TYPES && p->cursor < m->nrows && sess(p) != NULL) {
		const char *type = m->live->types[m->rows[p->cursor]].type;

		free(m->text_title);
		m->text_title = xasprintf("Instances of %s (vmtool -a getInstances -n %d)", type,
		    INSTANCES);
		if (memlive_instances(m->live, sess(p), type, INSTANCES, &cause) != FP_OK)
			tui_status(p->tui, true, "mem: %s", cause);
		free(cause);
	} else if (m->view == VIEW_SITES && m->sites != NULL && p->cursor < m->sites->nrows) {
		const struct mem_site *site = &m->sites->rows[p->cursor];

		sbuf_addf(&s, "%s:%lld\n", site->where.file, site->where.line);
		for (k = 1; k < site->ntb; k++)
			sbuf_addf(&s, "  from %s:%lld\n", site->tb[k].file, site->tb[k].line);
		show_text(p, "Allocation site: traceback, newest first", s.s);
		sbuf_free(&s);
		tui_open(p->tui, &(struct pane_event){ .kind = EV_OPEN_SOURCE,
		    .filename = site->where.file, .line = (int)site->where.line });
	}
}

static bool
mem_key(struct pane *p, enum action a)
{
	struct mem *m = p->data;

	switch (a) {
	case A_ENTER:
		enter(p);
		return true;
	case A_BACK:
		if (m->view == VIEW_TORCH) {
			toggle_torch(p);
			return true;
		}
		if (m->view != VIEW_TEXT)
			return false;
		m->view = m->back;
		p->cursor = p->top = 0;
		break;
	case A_MEM_SITES:
		toggle_sites(p);
		return true;
	case A_MEM_TORCH:
		toggle_torch(p);
		return true;
	case A_MEM_VIEW:
		m->summary = !m->summary;
		if (m->summary && m->sort == SORT_GROWTH)
			m->sort = SORT_SIZE;
		m->view = VIEW_TYPES;
		tui_status(p->tui, false, m->summary ? "mem: the summary: counts and sizes now" :
		    "mem: the diff: growth since sample %lld", m->live->base_sample + 1);
		break;
	case A_FASTER:
	case A_SLOWER:
		if (m->interval > 0) {
			double v = a == A_FASTER ? m->interval / 2 : m->interval * 2;

			start(p, v < MIN_INTERVAL ? MIN_INTERVAL : v > MAX_INTERVAL ? MAX_INTERVAL : v);
		}
		return true;
	case A_MEM_BASE:
		memlive_rebase(m->live);
		tui_status(p->tui, false, "mem: growth is measured from sample %lld on",
		    m->live->samples);
		break;
	case A_SORT_NEXT:
	case A_SORT_PREV:
		if (m->view == VIEW_TORCH) {
			m->tsort = (enum tsort_col)((m->tsort + (a == A_SORT_NEXT ? 1 : TSORT__COUNT - 1)) %
			    TSORT__COUNT);
			tui_status(p->tui, false, "sorted by %s", tsort_names[m->tsort]);
			break;
		}
		do
			m->sort = (enum sort_col)((m->sort + (a == A_SORT_NEXT ? 1 : SORT__COUNT - 1)) %
			    SORT__COUNT);
		while (m->summary && m->sort == SORT_GROWTH);	/* no growth column there */
		tui_status(p->tui, false, "sorted by %s", sort_names[m->sort]);
		break;
	case A_SORT_INVERT:
		m->reverse = !m->reverse;
		break;
	default:
		return false;
	}
	rebuild(p);
	rebuild_torch(p);
	p->tui->dirty = true;
	return true;
}

static bool
mem_event(struct pane *p, const struct pane_event *ev)
{
	struct mem *m = p->data;

	switch (ev->kind) {
	case EV_OPEN_MEM:
		return start(p, ev->line);
	case EV_SNAPSHOT:
		/* closed: nothing of ours keeps running in the target */
		if (!p->visible && (m->interval > 0 || m->sites_on || m->torch_busy))
			stop(p);
		m->live->frozen = p->tui->paused;
		return false;
	default:
		return false;
	}
}

static bool
mem_filter(struct pane *p, const char *re, char **cause)
{
	struct mem *m = p->data;
	pcre2_code *code;

	if (!pane_filter_compile(re, &code, cause))
		return false;
	pcre2_code_free(m->filter_re);
	free(m->filter);
	m->filter_re = code;
	m->filter = code ? xstrdup(re) : NULL;
	rebuild(p);
	p->tui->dirty = true;
	return true;
}

static const char *
mem_filter_text(struct pane *p)
{
	return ((struct mem *)p->data)->filter;
}

struct memlive *
pane_mem_model(struct pane *p)
{
	return ((struct mem *)p->data)->live;
}

static void
mem_open(struct pane *p)
{
	struct mem *m = xcalloc(1, sizeof *m);

	m->live = memlive_new(&handler, p);
	p->data = m;
}

static void
mem_close(struct pane *p)
{
	struct mem *m = p->data;

	memlive_free(m->live, sess(p));
	free(m->rows);
	mem_sites_free(m->sites);
	torch_modules_free(m->torch);
	free(m->trows);
	free(m->torch_error);
	text_clear(m);
	free(m->error);
	free(m->filter);
	pcre2_code_free(m->filter_re);
	free(m);
	p->data = NULL;
}

static const struct keybinding mem_keys[] = {
	{ NULL, '\n', A_ENTER, "Open", "a type: a few of its instances; a site: its traceback and source" },
	{ NULL, KEY_ENTER, A_ENTER, NULL, "a type: a few of its instances; a site: its traceback and source" },
	{ NULL, 'S', A_MEM_SITES, "Sites", "allocation sites (tracemalloc, stopped with the pane) or types" },
	{ NULL, 'D', A_MEM_VIEW, NULL, "the types: a summary (counts and sizes now) or the diff (growth)" },
	{ NULL, 'T', A_MEM_TORCH, "Torch", "record torch modules -n 3 (Esc cancels); again: back to the types" },
	{ NULL, '\\', A_FILTER, "Filter", "show only the types matching a regular expression" },
	{ NULL, 'b', A_MEM_BASE, "Base", "measure the growth from the latest sample on" },
	{ NULL, '+', A_FASTER, NULL, "sample twice as often (down to every 0.5 s)" },
	{ NULL, '-', A_SLOWER, NULL, "sample half as often (up to every 60 s)" },
	{ NULL, '>', A_SORT_NEXT, NULL, "sort by the next column (size, count, growth, type)" },
	{ NULL, '<', A_SORT_PREV, NULL, "sort by the previous column" },
	{ NULL, 'I', A_SORT_INVERT, NULL, "invert the sort order" },
	{ .key = 0 },
};

const struct pane_ops pane_mem_ops = {
	.name = "types",
	.help_title = "Mem pane (M)",
	.slot = SLOT_BOTTOM,
	.share = 6,
	.keys = mem_keys,
	.marker = true,
	.back_first = true,
	.open = mem_open,
	.close = mem_close,
	.nlines = mem_nlines,
	.title = mem_title,
	.header = mem_header,
	.draw_line = mem_draw_line,
	.key = mem_key,
	.event = mem_event,
	.filter = mem_filter,
	.filter_text = mem_filter_text,
};
