/*
 * The watch pane: the calls a `:watch` observes, one line each as they
 * arrive (time, thread when the agent names it, cost, method, a one-line
 * summary of the values), the newest kept in view unless the user moved
 * up (the title then counts the new ones); a backslash keeps only the
 * calls whose method or values match a PCRE2 pattern.  Enter unfolds the
 * call under the cursor into the text `watch` prints in --cmd; Space
 * pauses the display (calls are still counted and kept); c clears; q or
 * Esc stops the watch, so that the agent removes its hooks, and closes
 * the pane.  It only shows: the runner hands it the events
 * (runner_io.record) of the watch that runs in the background
 * (tui/stream.c), which Back stops.
 */
#include "config.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/model.h"
#include "core/render_agent.h"
#include "tui/tui.h"

#define WATCH_KEEP 1000		/* calls kept; older ones go (and are counted) */
#define WATCH_SUMMARY 400	/* bytes of a call's one-line summary */

struct watch_call {
	struct watch_record w;
	char *summary;		/* the values on one line */
	char **full;		/* unfolded: render_watch_record's lines; else NULL */
	size_t nfull;
};

struct watch_line {
	size_t call;
	size_t sub;		/* 0: the call's line; k: line k-1 of its full text */
};

struct watch_view {
	struct watch_call *calls;	/* WATCH_KEEP of them */
	size_t ncalls;
	size_t shown;		/* calls on screen: the rest came while paused */
	long long seen;		/* calls the agent sent */
	long long evicted;	/* calls that went from a full store */
	long long agent_dropped;	/* calls the agent could not send */
	size_t unseen;		/* came while the user looked elsewhere */
	char *what;		/* the watched method(s) */
	char *end;		/* "done after 3 calls", or NULL while running */
	bool running, paused, leave;
	bool threads;		/* the agent names the calling threads: a THREAD column */
	char *filter;		/* only calls whose line matches it, or NULL */
	pcre2_code *filter_re;
	struct watch_line *lines;
	size_t nlines, alines;
};

/* A value tree on one line, at most WATCH_SUMMARY bytes. */
static void
add_oneline(struct sbuf *out, const char *text)
{
	bool space = false;

	for (; *text != '\0' && out->len < WATCH_SUMMARY; text++) {
		if (*text == '\n' || *text == ' ') {
			space = true;
			continue;
		}
		if (space && out->len > 0)
			sbuf_add(out, " ");
		space = false;
		sbuf_addf(out, "%c", *text);
	}
}

static char *
summary(const struct watch_record *w)
{
	struct sbuf out = { 0 }, v = { 0 };
	size_t i;

	if (w->exception != NULL) {
		sbuf_add(&out, "raised ");
		add_oneline(&out, w->exception);
		sbuf_add(&out, "  ");
	}
	for (i = 0; i < w->nvalues && out.len < WATCH_SUMMARY; i++) {
		const struct watch_value *wv = &w->values[i];

		v.len = 0;
		if (v.s != NULL)
			v.s[0] = '\0';
		if (wv->error != NULL)
			sbuf_addf(&v, "(%s)", wv->error);
		else
			render_value(&v, wv->value, 0);
		sbuf_addf(&out, "%s%s=", i > 0 ? "  " : "", wv->expr);
		add_oneline(&out, v.s ? v.s : "");
	}
	sbuf_free(&v);
	return out.s ? out.s : xstrdup("");
}

static void
call_clear(struct watch_call *c)
{
	size_t i;

	watch_record_clear(&c->w);
	free(c->summary);
	for (i = 0; i < c->nfull; i++)
		free(c->full[i]);
	free(c->full);
	memset(c, 0, sizeof *c);
}

/* Does the call pass the filter (its method or its values match)? */
static bool
passes(const struct watch_view *v, const struct watch_call *c, pcre2_match_data *md)
{
	return v->filter_re == NULL ||
	    pcre2_match(v->filter_re, (PCRE2_SPTR)c->w.method, PCRE2_ZERO_TERMINATED, 0, 0, md,
	    NULL) >= 0 ||
	    pcre2_match(v->filter_re, (PCRE2_SPTR)c->summary, PCRE2_ZERO_TERMINATED, 0, 0, md,
	    NULL) >= 0;
}

static void
rebuild(struct pane *p)
{
	struct watch_view *v = p->data;
	pcre2_match_data *md = v->filter_re ?
	    pcre2_match_data_create_from_pattern(v->filter_re, NULL) : NULL;
	struct watch_line *l;
	size_t i, k;

	v->nlines = 0;
	for (i = 0; i < v->shown; i++)
		for (k = 0; k <= v->calls[i].nfull && passes(v, &v->calls[i], md); k++) {
			l = ARRAY_PUSH(v->lines, v->nlines, v->alines);
			l->call = i;
			l->sub = k;
		}
	pcre2_match_data_free(md);
	pane_clamp(p);
	p->tui->dirty = true;
}

static void
view_clear(struct watch_view *v)
{
	size_t i;

	for (i = 0; i < v->ncalls; i++)
		call_clear(&v->calls[i]);
	v->ncalls = v->shown = v->nlines = v->unseen = 0;
}

static void
started(struct pane *p, const struct watch_record *w)
{
	struct watch_view *v = p->data;

	view_clear(v);
	free(v->what);
	free(v->end);
	v->end = NULL;
	if (w->nobserved == 1)
		v->what = xstrdup(w->observed[0]);
	else
		v->what = xasprintf("%zu methods", w->nobserved);
	v->seen = v->evicted = v->agent_dropped = 0;
	v->running = true;
	v->paused = v->leave = false;
	p->cursor = p->top = 0;
	rebuild(p);
}

/* Is the cursor on the last line (or the list empty): does it follow the newest? */
static bool
following(const struct pane *p)
{
	const struct watch_view *v = p->data;

	return v->nlines == 0 || p->cursor + 1 >= v->nlines;
}

/* The cursor on the newest call. */
static void
follow_newest(struct pane *p)
{
	struct watch_view *v = p->data;

	if (v->nlines > 0)
		pane_set_cursor(p, v->nlines - 1 - v->lines[v->nlines - 1].sub);
	v->unseen = 0;
}

/* Show what came while paused; follow the newest while the cursor is on the last line. */
static void
show_new(struct pane *p)
{
	struct watch_view *v = p->data;
	size_t added = v->ncalls - v->shown;
	bool follow = following(p);

	if (added == 0)
		return;
	v->shown = v->ncalls;
	rebuild(p);
	if (follow)
		follow_newest(p);
	else
		v->unseen += added;
}

/* Keep the call (moved out of *w); the oldest goes from a full store. */
static void
arrived(struct pane *p, struct watch_record *w)
{
	struct watch_view *v = p->data;
	struct watch_call *c;

	if (v->calls == NULL)
		v->calls = xcalloc(WATCH_KEEP, sizeof *v->calls);
	if (v->ncalls == WATCH_KEEP) {
		size_t gone = 0;

		while (gone < v->nlines && v->lines[gone].call == 0)
			gone++;	/* its lines: none when filtered out */

		call_clear(&v->calls[0]);
		memmove(&v->calls[0], &v->calls[1], (WATCH_KEEP - 1) * sizeof v->calls[0]);
		v->ncalls--;
		v->evicted++;
		if (v->shown > 0) {
			v->shown--;
			pane_lines_dropped(p, gone);
			rebuild(p);
		}
	}
	c = &v->calls[v->ncalls++];
	memset(c, 0, sizeof *c);
	c->w = *w;
	memset(w, 0, sizeof *w);
	c->summary = summary(&c->w);
	v->threads = v->threads || c->w.thread != NULL;
	v->seen++;
	if (c->w.dropped > v->agent_dropped)
		v->agent_dropped = c->w.dropped;
	if (!v->paused)
		show_new(p);
	p->tui->dirty = true;
}

static void
ended(struct pane *p, const struct runner_record *rec)
{
	struct watch_view *v = p->data;
	const char *how = rec->failed ? "ended" : rec->cancelled ? "stopped" : rec->reset ?
	    "removed by reset" : "done";

	v->running = false;
	if (rec->dropped > v->agent_dropped)
		v->agent_dropped = rec->dropped;
	free(v->end);
	v->end = xasprintf("%s after %lld call%s", how, rec->shown, rec->shown == 1 ? "" : "s");
	if (!rec->failed)
		tui_status(p->tui, false, "watch: %s; the hooks are removed", v->end);
	if (v->leave)
		tui_hide_pane(p->tui, p);
	p->tui->dirty = true;
}

bool
pane_watch_record(void *tui, struct runner_record *rec)
{
	struct tui *t = tui;
	struct pane *p;

	if (strcmp(rec->cmd, "watch") != 0)
		return false;
	p = tui_pane(t, &pane_watch_ops);
	if (rec->kind == RUNNER_RECORD_END) {
		if (!((struct watch_view *)p->data)->running)
			return false;
		ended(p, rec);
		return true;
	}
	if (rec->watch == NULL)
		return false;
	if (rec->kind == RUNNER_RECORD_START) {
		started(p, rec->watch);
		tui_show_pane(t, p, true);
	} else {
		arrived(p, rec->watch);
	}
	return true;
}

static void
watch_open(struct pane *p)
{
	p->data = xcalloc(1, sizeof(struct watch_view));
}

static void
watch_close(struct pane *p)
{
	struct watch_view *v = p->data;

	if (v == NULL)
		return;
	view_clear(v);
	free(v->calls);
	free(v->lines);
	free(v->what);
	free(v->end);
	free(v->filter);
	pcre2_code_free(v->filter_re);
	free(v);
	p->data = NULL;
}

static bool
watch_filter(struct pane *p, const char *re, char **cause)
{
	struct watch_view *v = p->data;
	pcre2_code *code;
	bool follow;

	if (!pane_filter_compile(re, &code, cause))
		return false;
	pcre2_code_free(v->filter_re);
	free(v->filter);
	v->filter_re = code;
	v->filter = code ? xstrdup(re) : NULL;
	follow = following(p);
	rebuild(p);
	if (follow)
		follow_newest(p);
	return true;
}

static const char *
watch_filter_text(struct pane *p)
{
	return ((struct watch_view *)p->data)->filter;
}

static size_t
watch_nlines(struct pane *p)
{
	return ((struct watch_view *)p->data)->nlines;
}

static void
watch_title(struct pane *p, struct sbuf *out)
{
	struct watch_view *v = p->data;

	sbuf_add(out, "Watch");
	if (v->what == NULL)
		return;
	sbuf_addf(out, " %s %s %s %lld seen, %lld dropped %s ", glyph(G_DOT), v->what,
	    glyph(G_DOT), v->seen, v->evicted + v->agent_dropped, glyph(G_DOT));
	if (v->end != NULL)
		sbuf_add(out, v->end);
	else if (v->paused)
		sbuf_addf(out, "paused, %zu waiting (Space resumes)", v->ncalls - v->shown);
	else
		sbuf_add(out, "running (q stops)");
	if (v->filter != NULL)
		sbuf_addf(out, " %s matching /%s/", glyph(G_DOT), v->filter);
	if (v->unseen > 0)
		sbuf_addf(out, " %s %zu new", glyph(G_DOT), v->unseen);
}

static void
watch_header(struct pane *p, struct tline *l)
{
	struct watch_view *v = p->data;

	tline_addf(l, EL_HEADER, "%-12s  ", "TIME");
	if (v->threads)
		tline_addf(l, EL_HEADER, "%-12s  ", "THREAD");
	tline_addf(l, EL_HEADER, "%9s  %-24s  %s", "COST ms", "METHOD", "VALUES");
}

static void
call_line(const struct watch_view *v, const struct watch_call *c, struct tline *l)
{
	const struct watch_record *w = &c->w;
	bool raised = w->exception != NULL;
	time_t sec = (time_t)w->time;
	char when[16];
	struct tm tm;

	if (localtime_r(&sec, &tm) == NULL || strftime(when, sizeof when, "%H:%M:%S", &tm) == 0)
		strcpy(when, "?");
	tline_addf(l, EL_WATCH_TIME, "%s.%03d  ", when, (int)((w->time - (double)sec) * 1000) % 1000);
	if (v->threads)
		tline_addf(l, EL_DEFAULT, "%-12.12s  ", w->thread ? w->thread : "-");
	if (w->has_cost)
		tline_addf(l, EL_WATCH_COST, "%9.3f  ", w->cost_ms);
	else
		tline_addf(l, EL_WATCH_COST, "%9s  ", "at entry");
	tline_addf(l, raised ? EL_WATCH_ERROR : EL_WATCH_METHOD, "%-24s  ", w->method);
	tline_add(l, raised ? EL_WATCH_ERROR : EL_DEFAULT, c->summary);
}

static void
watch_draw_line(struct pane *p, size_t line, struct tline *l)
{
	struct watch_view *v = p->data;
	const struct watch_line *wl = &v->lines[line];
	const struct watch_call *c = &v->calls[wl->call];

	if (wl->sub == 0)
		call_line(v, c, l);
	else
		tline_add(l, EL_WATCH_DETAIL, c->full[wl->sub - 1]);
}

/* Enter: the call under the cursor as `watch` prints it, or folded again. */
static void
unfold(struct pane *p)
{
	struct watch_view *v = p->data;
	struct watch_call *c;
	struct sbuf s = { 0 };
	char *line, *next;
	size_t i, at;

	if (p->cursor >= v->nlines)
		return;
	c = &v->calls[v->lines[p->cursor].call];
	pane_set_cursor(p, p->cursor - v->lines[p->cursor].sub);
	if (c->full != NULL) {
		for (i = 0; i < c->nfull; i++)
			free(c->full[i]);
		free(c->full);
		c->full = NULL;
		c->nfull = 0;
		rebuild(p);
		return;
	}
	render_watch_record(&s, &c->w);
	c->full = xcalloc(1, sizeof *c->full);
	for (line = s.s; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		c->full = xrealloc(c->full, (c->nfull + 1) * sizeof *c->full);
		c->full[c->nfull++] = xstrdup(line);
	}
	sbuf_free(&s);
	rebuild(p);
	/* the whole call in view, its first line under the cursor */
	at = p->cursor;
	pane_set_cursor(p, at + c->nfull);
	pane_set_cursor(p, at);
}

static bool
watch_key(struct pane *p, enum action a)
{
	struct watch_view *v = p->data;

	switch (a) {
	case A_ENTER:
		unfold(p);
		return true;
	case A_PAUSE:
		v->paused = !v->paused;
		if (!v->paused)
			show_new(p);
		return true;
	case A_CLEAR:
		view_clear(v);
		p->cursor = p->top = 0;
		rebuild(p);
		return true;
	case A_BACK:
		/* while it runs (tui/stream.c stops it): close when it has ended */
		if (!v->running)
			return false;
		v->leave = true;
		tui_status(p->tui, false, "stopping the watch...");
		return true;
	default:
		return false;
	}
}

static bool
watch_live(struct pane *p)
{
	return ((struct watch_view *)p->data)->running;
}

static void
watch_moved(struct pane *p)
{
	struct watch_view *v = p->data;

	if (p->cursor + 1 >= v->nlines)
		v->unseen = 0;
}

static const struct keybinding watch_keys[] = {
	{ NULL, '\n', A_ENTER, "Expand", "show the call's values in full, or fold them again" },
	{ NULL, KEY_ENTER, A_ENTER, NULL, "show the call's values in full, or fold them again" },
	{ NULL, ' ', A_PAUSE, "Pause", "pause or resume the list (calls are still kept)" },
	/* not c: that is the console everywhere, and clearing loses the calls */
	{ NULL, 'C', A_CLEAR, "Clear", "clear the list" },
	{ NULL, '\\', A_FILTER, "Filter", "show only the calls whose method or values match a "
	    "regular expression (empty: all)" },
	{ NULL, 'q', A_BACK, "Stop", "stop the watch (the hooks are removed) and close the pane" },
	{ .key = 0 },
};

const struct pane_ops pane_watch_ops = {
	.name = "watch",
	.help_title = "Watch pane (after :watch)",
	.slot = SLOT_BOTTOM,
	.share = 6,
	.keys = watch_keys,
	.marker = true,
	.open = watch_open,
	.close = watch_close,
	.nlines = watch_nlines,
	.title = watch_title,
	.header = watch_header,
	.draw_line = watch_draw_line,
	.key = watch_key,
	.moved = watch_moved,
	.filter = watch_filter,
	.filter_text = watch_filter_text,
	.live = watch_live,
};
