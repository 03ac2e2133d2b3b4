/*
 * render_trace — see render_trace.h.  The tree is drawn the way Arthas and
 * PyFlightProfiler users know it: `---[cost] name #line, with +--- for a
 * child that has younger siblings.
 */
#include "config.h"

#include "core/render_trace.h"

#include <string.h>
#include <time.h>

#include "core/termsafe.h"

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

/* Milliseconds, or microseconds under one: tiny calls are the common case. */
static void
add_dur(struct sbuf *out, int width, long long ns)
{
	if (ns >= 1000000)
		sbuf_addf(out, "%*.3fms", width, ns / 1e6);
	else
		sbuf_addf(out, "%*.1fus", width, ns / 1e3);
}

void
render_trace_label(struct sbuf *out, const struct trace_node *n,
    const struct trace_node *parent)
{
	sbuf_addf(out, "[%5.1f%% ", trace_node_share(n, parent));
	add_dur(out, 8, n->total_ns);
	sbuf_add(out, "] ");
	termsafe_addf(out, "%s", n->name);
	if (n->line > 0)
		sbuf_addf(out, " #%lld", n->line);
	if (n->file != NULL)
		termsafe_addf(out, "  (%s:%lld)", base_name(n->file), n->def_line);
	if (n->count > 1) {
		sbuf_addf(out, "  [count=%lld min=", n->count);
		add_dur(out, 0, n->min_ns);
		sbuf_add(out, " max=");
		add_dur(out, 0, n->max_ns);
		sbuf_add(out, " total=");
		add_dur(out, 0, n->total_ns);
		sbuf_add(out, "]");
	}
}

void
render_trace_hidden(struct sbuf *out, const struct trace_node *n)
{
	sbuf_addf(out, "(%lld more call%s, ", n->hidden, n->hidden == 1 ? "" : "s");
	add_dur(out, 0, n->hidden_ns);
	sbuf_add(out, ": under -i, below -d or importing)");
}

static void
add_tree(struct sbuf *out, const struct trace_node *n, const struct trace_node *parent,
    struct sbuf *prefix, bool last)
{
	size_t keep = prefix->len, i;

	sbuf_add(out, prefix->s != NULL ? prefix->s : "");
	sbuf_add(out, last ? "`---" : "+---");
	render_trace_label(out, n, parent);
	sbuf_add(out, "\n");
	sbuf_add(prefix, last ? "    " : "|   ");
	for (i = 0; i < n->nchildren; i++)
		add_tree(out, &n->children[i], n, prefix, i + 1 == n->nchildren);
	if (n->hidden > 0) {
		sbuf_add(out, prefix->s);
		sbuf_add(out, "    ");
		render_trace_hidden(out, n);
		sbuf_add(out, "\n");
	}
	prefix->len = keep;
	prefix->s[keep] = '\0';
}

/* What the tree leaves out: the eval path sees Python frames only. */
static void
trace_mechanism(struct sbuf *out, const struct trace_record *t)
{
	if (t->mechanism != NULL && strcmp(t->mechanism, "eval") == 0)
		sbuf_add(out, "(Python calls only: time in builtins is their caller's own; "
		    "--c-calls shows them, at a higher cost.)\n");
	else if (t->mechanism_note != NULL)
		termsafe_addf(out, "(With the profile hook, builtins included: %s.)\n",
		    t->mechanism_note);
}

static void
trace_started(struct sbuf *out, const struct trace_record *t)
{
	size_t i;

	if (t->nobserved == 1 && t->matched == 1) {
		termsafe_addf(out, "Tracing %s (Ctrl-C to stop).\n", t->observed[0]);
		trace_mechanism(out, t);
		return;
	}
	sbuf_addf(out, "Pattern matched %lld method%s; tracing %zu (Ctrl-C to stop):\n",
	    t->matched, t->matched == 1 ? "" : "s", t->nobserved);
	for (i = 0; i < t->nobserved; i++)
		termsafe_addf(out, "  %s\n", t->observed[i]);
	trace_mechanism(out, t);
}

void
render_trace_record(struct sbuf *out, const struct trace_record *t)
{
	struct sbuf prefix = { 0 };
	char when[64];
	time_t sec = (time_t)t->time;
	struct tm tm;

	if (t->started) {
		trace_started(out, t);
		return;
	}
	if (localtime_r(&sec, &tm) == NULL ||
	    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		strcpy(when, "?");
	sbuf_addf(out, "[%lld] %s.%03d  ", t->index, when,
	    (int)((t->time - (double)sec) * 1000) % 1000);
	termsafe_addf(out, "%s  thread=%s  cost=%.3f ms", t->method, t->thread, t->cost_ms);
	if (t->exception != NULL)
		termsafe_addf(out, "  raised %s", t->exception);
	sbuf_add(out, "\n");
	if (t->dropped > 0)
		sbuf_addf(out, "    (%lld traced calls were not shown: they came faster than they "
		    "could be sent)\n", t->dropped);
	if (t->filter_error != NULL)
		termsafe_addf(out, "    (the filter raised %s: such calls are not traced)\n",
		    t->filter_error);
	if (t->root == NULL) {
		sbuf_add(out, "    (no call tree was recorded)\n");
		return;
	}
	sbuf_add(&prefix, "");
	add_tree(out, t->root, NULL, &prefix, true);
	if (t->unrecorded > 0)
		sbuf_addf(out, "    (%lld calls beyond the recorder's limit of distinct call sites "
		    "are counted in their parents only)\n", t->unrecorded);
	sbuf_free(&prefix);
}
