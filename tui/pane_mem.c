/*
 * The mem pane (M): every type's object count and size, re-sampled by the
 * agent every few seconds (a `mem` live stream), with the growth since the
 * first sample (or since `b`), highlighted, and each type's trend over the
 * last samples; sortable by size, count, growth.  Enter shows a few
 * instances of a type, as `vmtool -a getInstances` prints them.  `S`
 * switches to allocation sites (`mem sites` on this session's connection:
 * tracemalloc ends with the pane or the client); Enter on a site shows its
 * traceback here and its source in the source pane (an event: panes never
 * call each other).  Everything from the target is drawn through tline,
 * which escapes it (tui/draw.h).  Hiding the pane stops the sampling.
 */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/memlive.h"
#include "core/render_mem.h"
#include "core/runner.h"
#include "tui/inside.h"
#include "tui/tui.h"

#define DEFAULT_INTERVAL 5	/* seconds between samples */
#define MIN_INTERVAL 0.5
#define MAX_INTERVAL 60
#define INSTANCES 5		/* Enter on a type: how many */
#define SITE_FRAMES 8		/* tracemalloc frames kept per allocation */

enum view { VIEW_TYPES, VIEW_SITES, VIEW_TEXT };
enum sort_col { SORT_SIZE, SORT_COUNT, SORT_GROWTH, SORT_NAME, SORT__COUNT };

static const char *const sort_names[SORT__COUNT] = { "SIZE", "COUNT", "GROWTH", "TYPE" };

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
};

#define W_COUNT 10
#define W_SIZE 10
#define W_TREND MEMLIVE_TREND

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
	qsort_r(m->rows, m->nrows, sizeof *m->rows, cmp_rows, p);
	for (i = 0; was != NULL && i < m->nrows; i++)
		if (m->live->types[m->rows[i]].type == was) {
			p->cursor = i;
			break;
		}
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

	free(m->error);
	m->error = xstrdup(cause);
	if (kind == MEMLIVE_SITES)
		m->sites_on = false;
	tui_status(p->tui, true, "mem: %s", cause);
	p->tui->dirty = true;
}

static const struct memlive_handler handler = {
	.sample = on_sample, .sites = on_sites, .text = on_text, .error = on_error,
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
	default:
		return m->nrows;
	}
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
	sbuf_add(out, m->view == VIEW_SITES ? "Mem sites" : "Mem");
	if (m->view == VIEW_TYPES && m->filter != NULL)
		sbuf_addf(out, " · %zu shown · %s", m->nrows, m->filter);
	if (l->samples == 0) {
		sbuf_add(out, m->interval > 0 ? " · first sample..." : " · stopped");
	} else {
		render_mem_size(size, sizeof size, l->scan.bytes, false);
		sbuf_addf(out, " · %lld types · %s · sample %lld, growth since %lld", l->scan.types,
		    size, l->samples, l->base_sample + 1);
		if (m->interval > 0)
			sbuf_addf(out, " · every %g s", m->interval);
		if (l->scan.approximate)
			sbuf_add(out, " · approximate");
	}
	if (m->error != NULL)
		sbuf_addf(out, " · %s", m->error);
}

static void
header_col(struct tline *l, struct mem *m, enum sort_col c, const char *name, int width, bool right)
{
	char buf[32];

	if (m->sort == c)
		snprintf(buf, sizeof buf, "%s%s", name, draw_utf8() ?
		    (m->reverse ? "\u25b2" : "\u25bc") : (m->reverse ? "^" : "v"));
	else
		snprintf(buf, sizeof buf, "%s", name);
	tline_col(l, EL_HEADER, buf, width, right);
}

static void
mem_header(struct pane *p, struct tline *l)
{
	struct mem *m = p->data;

	if (m->view == VIEW_TEXT) {
		tline_add(l, EL_HEADER, "Esc: back");
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
	tline_col(l, EL_HEADER, "ΔCOUNT", W_COUNT, true);
	tline_add(l, EL_HEADER, " ");
	header_col(l, m, SORT_SIZE, "SIZE", W_SIZE, true);
	tline_add(l, EL_HEADER, " ");
	header_col(l, m, SORT_GROWTH, "GROWTH", W_SIZE, true);
	tline_add(l, EL_HEADER, " ");
	tline_col(l, EL_HEADER, "TREND", W_TREND, false);
	tline_add(l, EL_HEADER, " ");
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
	snprintf(buf, sizeof buf, "%+lld", t->count - t->base_count);
	tline_col(l, growth_elem(t->count - t->base_count), buf, W_COUNT, true);
	tline_add(l, EL_DEFAULT, " ");
	render_mem_size(buf, sizeof buf, t->size, false);
	tline_col(l, EL_DEFAULT, buf, W_SIZE, true);
	tline_add(l, EL_DEFAULT, " ");
	render_mem_size(buf, sizeof buf, t->size - t->base_size, true);
	tline_col(l, growth_elem(t->size - t->base_size), buf, W_SIZE, true);
	tline_add(l, EL_DEFAULT, " ");
	trend(l, t);
	tline_add(l, EL_DEFAULT, " ");
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
mem_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct mem *m = p->data;

	if (m->view == VIEW_TEXT)
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
		if (m->view != VIEW_TEXT)
			return false;
		m->view = m->back;
		p->cursor = p->top = 0;
		break;
	case A_MEM_SITES:
		toggle_sites(p);
		return true;
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
		m->sort = (enum sort_col)((m->sort + (a == A_SORT_NEXT ? 1 : SORT__COUNT - 1)) % SORT__COUNT);
		tui_status(p->tui, false, "sorted by %s", sort_names[m->sort]);
		break;
	case A_SORT_INVERT:
		m->reverse = !m->reverse;
		break;
	default:
		return false;
	}
	rebuild(p);
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
		if (!p->visible && (m->interval > 0 || m->sites_on))
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
	pcre2_code *code = NULL;
	PCRE2_SIZE off;
	int err;

	if (re != NULL && *re != '\0' && (code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED,
	    PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_CASELESS, &err, &off, NULL)) == NULL) {
		PCRE2_UCHAR msg[256];

		pcre2_get_error_message(err, msg, sizeof msg);
		fail(cause, FP_EUSAGE, "bad type filter at offset %zu: %s", (size_t)off, (char *)msg);
		return false;
	}
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
