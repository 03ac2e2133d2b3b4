/*
 * render_tt — see render_tt.h.  The table follows the command guide's
 * (INDEX, TIMESTAMP, COST, IS-RET, IS-EXP, ...), with the thread and the
 * record a replay came from added.
 */
#include "config.h"

#include "core/render_tt.h"

#include <string.h>
#include <time.h>

#include "core/render_agent.h"
#include "core/termsafe.h"

static void
add_time(struct sbuf *out, double t)
{
	char when[64];
	time_t sec = (time_t)t;
	struct tm tm;

	if (localtime_r(&sec, &tm) == NULL ||
	    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		strcpy(when, "?");
	sbuf_addf(out, "%s.%03d", when, (int)((t - (double)sec) * 1000) % 1000);
}

static void
add_bytes(struct sbuf *out, long long n)
{
	if (n >= 10LL << 20)
		sbuf_addf(out, "%.1f MiB", (double)n / (1 << 20));
	else if (n >= 10LL << 10)
		sbuf_addf(out, "%.1f KiB", (double)n / (1 << 10));
	else
		sbuf_addf(out, "%lld B", n);
}

void
render_tt_row_header(struct sbuf *out)
{
	sbuf_add(out, "INDEX   TIMESTAMP                  COST(ms)  IS-RET  IS-EXP  "
	    "THREAD            METHOD\n");
}

void
render_tt_row(struct sbuf *out, const struct tt_row *r)
{
	size_t len;

	sbuf_addf(out, "%-7lld ", r->index);
	add_time(out, r->time);
	sbuf_addf(out, "  %10.3f  %-6s  %-6s  ", r->cost_ms, r->exception ? "false" : "true",
	    r->exception ? "true" : "false");
	/* Padded by hand: termsafe escapes, so a printf width would count wrong. */
	len = out->len;
	termsafe_adds(out, r->thread, TERMSAFE_FIELD);
	for (len = out->len - len; len < 16; len++)
		sbuf_add(out, " ");
	sbuf_add(out, "  ");
	termsafe_adds(out, r->method, TERMSAFE_FIELD);
	if (r->replay_of > 0)
		sbuf_addf(out, "  (replay of %lld)", r->replay_of);
	sbuf_add(out, "\n");
}

void
render_tt_store(struct sbuf *out, const struct tt_store_info *s)
{
	sbuf_addf(out, "store: %lld record%s (at most %lld), ", s->records,
	    s->records == 1 ? "" : "s", s->max_records);
	add_bytes(out, s->bytes);
	sbuf_add(out, " kept alive (at most ");
	add_bytes(out, s->max_bytes);
	sbuf_addf(out, "), %lld evicted so far\n", s->evicted);
}

static void
started(struct sbuf *out, const struct tt_event *e)
{
	size_t i;

	for (i = 0; i < e->call.nobserved; i++)
		termsafe_addf(out, "Recording %s (Ctrl-C to stop).\n", e->call.observed[i]);
	if (e->has_store)
		render_tt_store(out, &e->store);
	render_tt_row_header(out);
}

static void
evicted(struct sbuf *out, const struct tt_event *e)
{
	if (e->evicted <= 0)
		return;
	sbuf_addf(out, "tt: the store is full: evicted %lld oldest record%s (", e->evicted,
	    e->evicted == 1 ? "" : "s");
	if (e->evicted_first == e->evicted_last)
		sbuf_addf(out, "%lld", e->evicted_first);
	else
		sbuf_addf(out, "%lld to %lld", e->evicted_first, e->evicted_last);
	sbuf_add(out, "); tt -t --store-records N --store-mib N set the bounds\n");
}

/* A record in detail: the watch layout, then what only tt knows. */
static void
detail(struct sbuf *out, const struct tt_event *e)
{
	render_watch_record(out, &e->call);
	termsafe_addf(out, "    thread      %s\n", e->row.thread);
	if (e->row.replay_of > 0)
		sbuf_addf(out, "    replay of   %lld%s\n", e->row.replay_of,
		    e->replay > 0 ? "" : " (a replay recorded earlier)");
	if (e->mutated)
		sbuf_addf(out, "    warning     the arguments were changed since record %lld was "
		    "taken: %s\n", e->row.replay_of > 0 ? e->row.replay_of : e->row.index,
		    e->replay > 0 ? "this replay used them as they are now" :
		    "they are shown as they are now");
}

void
render_tt_event(struct sbuf *out, const struct tt_event *e)
{
	evicted(out, e);
	if (e->started) {
		started(out, e);
		return;
	}
	if (e->filter_error != NULL) {
		termsafe_addf(out, "tt: %s at ", e->call.method);
		add_time(out, e->call.time);
		termsafe_addf(out, ": %s\n", e->filter_error);
		return;
	}
	if (e->dropped > 0)
		sbuf_addf(out, "tt: %lld calls were not recorded: they came faster than they could "
		    "be stored\n", e->dropped);
	if (e->call.nvalues > 0 || e->replay > 0)
		detail(out, e);
	else
		render_tt_row(out, &e->row);
}

void
render_tt_list(struct sbuf *out, const struct tt_list *l)
{
	size_t i;

	if (l->nrows > 0) {
		render_tt_row_header(out);
		for (i = 0; i < l->nrows; i++)
			render_tt_row(out, &l->rows[i]);
	}
	if (l->matched > (long long)l->nrows)
		sbuf_addf(out, "(%lld older matching records not listed)\n",
		    l->matched - (long long)l->nrows);
	for (i = 0; i < l->nerrors; i++)
		termsafe_addf(out, "tt: record %lld: the expression %s\n", l->error_index[i],
		    l->errors[i]);
	if (l->error_count > (long long)l->nerrors)
		sbuf_addf(out, "tt: the expression raised on %lld more records\n",
		    l->error_count - (long long)l->nerrors);
	sbuf_addf(out, "%lld record%s %s; ", l->matched, l->matched == 1 ? "" : "s",
	    l->searched ? "matched" : "listed");
	render_tt_store(out, &l->store);
}
