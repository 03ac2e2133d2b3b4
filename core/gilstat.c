#include "config.h"

#include "core/gilstat.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/jsonrec.h"
#include "core/termsafe.h"

/* Warning lines kept between two flushes; the rest are counted. */
#define MAX_WARNINGS	20
#define NAME_WIDTH	24

struct gthread {
	pid_t tid;
	char *name;
	/* exact */
	uint64_t takecnt, take_all, holds, hold_all, dropcnt, drop_all;
	uint64_t want_at, held_at, drop_at;	/* 0: not in that phase */
	/* statistical */
	uint64_t samples, held_ns, wait_ns, seen_ns, longest_hold;
	enum py_gil_state last;
	uint64_t run_ns;	/* the current run of samples in `last` */
};

struct warning {
	pid_t tid;
	bool take;		/* a take that waited, else a hold */
	uint64_t ns;
	uint64_t end_ns;	/* when it ended, now_ns() clock */
};

struct gilstat {
	struct gilstat_opts o;
	bool exact;
	struct gthread *th;
	size_t nth, ath;
	struct warning w[MAX_WARNINGS];
	size_t nw;
	uint64_t wmore;
};

struct gilstat *
gilstat_new(const struct gilstat_opts *opts, bool exact)
{
	struct gilstat *gs = xcalloc(1, sizeof *gs);

	gs->o = *opts;
	gs->exact = exact;
	return gs;
}

void
gilstat_free(struct gilstat *gs)
{
	size_t i;

	if (gs == NULL)
		return;
	for (i = 0; i < gs->nth; i++)
		free(gs->th[i].name);
	free(gs->th);
	free(gs);
}

static struct gthread *
thread_of(struct gilstat *gs, pid_t tid)
{
	struct gthread *t;
	size_t i;

	for (i = 0; i < gs->nth; i++)
		if (gs->th[i].tid == tid)
			return &gs->th[i];
	t = ARRAY_PUSH(gs->th, gs->nth, gs->ath);
	memset(t, 0, sizeof *t);
	t->tid = tid;
	return t;
}

void
gilstat_name(struct gilstat *gs, pid_t tid, const char *name)
{
	struct gthread *t = thread_of(gs, tid);

	if (name == NULL || (t->name != NULL && strcmp(t->name, name) == 0))
		return;
	free(t->name);
	t->name = xstrdup(name);
}

static void
warn(struct gilstat *gs, pid_t tid, bool take, uint64_t ns, uint64_t end_ns)
{
	uint64_t limit = take ? gs->o.take_ns : gs->o.hold_ns;

	if (limit == 0 || ns <= limit)
		return;
	if (gs->nw == MAX_WARNINGS) {
		gs->wmore++;
		return;
	}
	gs->w[gs->nw].tid = tid;
	gs->w[gs->nw].take = take;
	gs->w[gs->nw].end_ns = end_ns;
	gs->w[gs->nw++].ns = ns;
}

/*
 * take_gil entry → return is a take (its wait); its return → drop_gil's
 * entry is a hold; drop_gil entry → return is a drop.  An event whose
 * start was before `gilstat on` is not counted as a duration.
 */
void
gilstat_event(struct gilstat *gs, const struct gilprobe_event *ev)
{
	struct gthread *t = thread_of(gs, ev->tid);

	switch (ev->kind) {
	case GILPROBE_TAKE_ENTER:
		t->want_at = ev->time_ns;
		break;
	case GILPROBE_TAKE_RETURN:
		t->takecnt++;
		if (t->want_at != 0 && ev->time_ns >= t->want_at) {
			t->take_all += ev->time_ns - t->want_at;
			warn(gs, t->tid, true, ev->time_ns - t->want_at, ev->time_ns);
		}
		t->want_at = 0;
		t->held_at = ev->time_ns;
		break;
	case GILPROBE_DROP_ENTER:
		if (t->held_at != 0 && ev->time_ns >= t->held_at) {
			t->holds++;
			t->hold_all += ev->time_ns - t->held_at;
			warn(gs, t->tid, false, ev->time_ns - t->held_at, ev->time_ns);
		}
		t->held_at = 0;
		t->drop_at = ev->time_ns;
		break;
	case GILPROBE_DROP_RETURN:
	default:
		t->dropcnt++;
		if (t->drop_at != 0 && ev->time_ns >= t->drop_at)
			t->drop_all += ev->time_ns - t->drop_at;
		t->drop_at = 0;
		break;
	}
}

/* A run of samples in one state ended: a hold or a wait as long as it was seen. */
static void
run_ended(struct gilstat *gs, struct gthread *t, uint64_t now)
{
	if (t->last == GIL_HELD) {
		if (t->run_ns > t->longest_hold)
			t->longest_hold = t->run_ns;
		warn(gs, t->tid, false, t->run_ns, now);
	} else if (t->last == GIL_WAITING) {
		warn(gs, t->tid, true, t->run_ns, now);
	}
	t->run_ns = 0;
}

void
gilstat_sample(struct gilstat *gs, pid_t tid, enum py_gil_state state, uint64_t time_ns,
    uint64_t weight_ns)
{
	struct gthread *t = thread_of(gs, tid);

	t->samples++;
	t->seen_ns += weight_ns;
	if (state == GIL_HELD)
		t->held_ns += weight_ns;
	else if (state == GIL_WAITING)
		t->wait_ns += weight_ns;
	if (state != t->last)
		run_ended(gs, t, time_ns);
	t->last = state;
	t->run_ns += weight_ns;
	if (state == GIL_HELD && t->run_ns > t->longest_hold)
		t->longest_hold = t->run_ns;
}

static int
cmp_hold(const void *a, const void *b)
{
	const struct gthread *x = a, *y = b;
	uint64_t hx = x->hold_all + x->held_ns, hy = y->hold_all + y->held_ns;

	if (hx != hy)
		return hx > hy ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void
add_name(struct sbuf *out, const struct gthread *t)
{
	char *q = termsafe_quote(t->name ? t->name : "?", NAME_WIDTH - 1);

	sbuf_addf(out, "%-*s", NAME_WIDTH, q);
	free(q);
}

static uint64_t
avg(uint64_t all, uint64_t n)
{
	return n ? all / n : 0;
}

static void
exact_line(struct sbuf *out, const struct gthread *t)
{
	sbuf_addf(out, " %8d %8llu %13llu %10llu %13llu %10llu %8llu %11llu %9llu\n", (int)t->tid,
	    (unsigned long long)t->takecnt, (unsigned long long)t->hold_all,
	    (unsigned long long)avg(t->hold_all, t->holds), (unsigned long long)t->take_all,
	    (unsigned long long)avg(t->take_all, t->takecnt), (unsigned long long)t->dropcnt,
	    (unsigned long long)t->drop_all, (unsigned long long)avg(t->drop_all, t->dropcnt));
}

static void
statistical_line(struct sbuf *out, const struct gthread *t)
{
	double seen = t->seen_ns ? (double)t->seen_ns : 1.0;

	sbuf_addf(out, " %8d %8llu %6.1f %6.1f %13llu %13llu %13llu\n", (int)t->tid,
	    (unsigned long long)t->samples, 100.0 * (double)t->held_ns / seen,
	    100.0 * (double)t->wait_ns / seen, (unsigned long long)t->held_ns,
	    (unsigned long long)t->wait_ns, (unsigned long long)t->longest_hold);
}

void
gilstat_report(struct gilstat *gs, const char *header, struct sbuf *out)
{
	size_t i, n = gs->nth;

	qsort(gs->th, gs->nth, sizeof *gs->th, cmp_hold);
	if (n > gs->o.max_threads)
		n = gs->o.max_threads;
	sbuf_add(out, "gil statistics report: ");
	termsafe_adds(out, header, 0);
	sbuf_addf(out, "\n%-*s", NAME_WIDTH, "thread_name");
	if (gs->exact)
		sbuf_add(out, "      tid  takecnt      hold_all    holdavg      take_all    takeavg"
		    "  dropcnt    drop_all   dropavg\n");
	else
		sbuf_add(out, "      tid  samples  hold%  wait%      hold_all      wait_all"
		    "  longest_hold\n");
	for (i = 0; i < n; i++) {
		add_name(out, &gs->th[i]);
		if (gs->exact)
			exact_line(out, &gs->th[i]);
		else
			statistical_line(out, &gs->th[i]);
	}
	if (n < gs->nth)
		sbuf_addf(out, "(%zu more threads; gilstat on's max_threads shows more)\n", gs->nth - n);
	if (gs->nth == 0)
		sbuf_add(out, "(no thread took or held the GIL yet)\n");
}

static int
cmp_end(const void *a, const void *b)
{
	const struct warning *x = a, *y = b;

	return x->end_ns < y->end_ns ? -1 : x->end_ns > y->end_ns;
}

/* "12:01:07.113": the wall-clock time of a now_ns() instant, local time. */
static void
add_clock(struct sbuf *out, uint64_t mono_ns)
{
	struct timespec rt;
	uint64_t now = now_ns(), wall;
	time_t sec;
	struct tm tm;
	char buf[16];

	clock_gettime(CLOCK_REALTIME, &rt);
	wall = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec - (now - mono_ns);
	sec = (time_t)(wall / 1000000000u);
	localtime_r(&sec, &tm);
	strftime(buf, sizeof buf, "%H:%M:%S", &tm);
	sbuf_addf(out, "%s.%03u ", buf, (unsigned)(wall / 1000000u % 1000u));
}

void
gilstat_warnings(struct gilstat *gs, struct sbuf *out)
{
	size_t i;

	if (gs->nw == 0)
		return;
	sbuf_add(out, "gil warning report:\n");
	qsort(gs->w, gs->nw, sizeof *gs->w, cmp_end);	/* each thread's buffer came in turn */
	for (i = 0; i < gs->nw; i++) {
		const struct warning *w = &gs->w[i];
		const struct gthread *t = thread_of(gs, w->tid);

		add_clock(out, w->end_ns);
		add_name(out, t);
		sbuf_addf(out, " %8d %s %.3f ms (over %.3f ms)%s\n", (int)w->tid,
		    w->take ? "waited to take the GIL" : "held the GIL",
		    (double)w->ns / 1e6, (double)(w->take ? gs->o.take_ns : gs->o.hold_ns) / 1e6,
		    gs->exact ? "" : " as sampled");
	}
	if (gs->wmore > 0)
		sbuf_addf(out, "(%llu more over the thresholds since the last warnings)\n",
		    (unsigned long long)gs->wmore);
	gs->nw = 0;
	gs->wmore = 0;
}

/* Each thread's figures, as the text's columns (nanoseconds). */
static json_t *
thread_json(const struct gthread *t, bool exact)
{
	json_t *j = json_object();

	json_object_set_new(j, "tid", json_integer(t->tid));
	json_object_set_new(j, "name", jsonrec_string(t->name));
	if (exact)
		json_object_update_new(j, json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		    "takecnt", (json_int_t)t->takecnt, "hold_all_ns", (json_int_t)t->hold_all,
		    "hold_avg_ns", (json_int_t)avg(t->hold_all, t->holds),
		    "take_all_ns", (json_int_t)t->take_all,
		    "take_avg_ns", (json_int_t)avg(t->take_all, t->takecnt),
		    "dropcnt", (json_int_t)t->dropcnt, "drop_all_ns", (json_int_t)t->drop_all,
		    "drop_avg_ns", (json_int_t)avg(t->drop_all, t->dropcnt),
		    "holds", (json_int_t)t->holds));
	else
		json_object_update_new(j, json_pack("{s:I,s:I,s:I,s:I,s:I}",
		    "samples", (json_int_t)t->samples, "held_ns", (json_int_t)t->held_ns,
		    "wait_ns", (json_int_t)t->wait_ns, "seen_ns", (json_int_t)t->seen_ns,
		    "longest_hold_ns", (json_int_t)t->longest_hold));
	return j;
}

json_t *
gilstat_report_json(struct gilstat *gs)
{
	json_t *threads = json_array();
	size_t i, n = gs->nth;

	qsort(gs->th, gs->nth, sizeof *gs->th, cmp_hold);
	if (n > gs->o.max_threads)
		n = gs->o.max_threads;
	for (i = 0; i < n; i++)
		json_array_append_new(threads, thread_json(&gs->th[i], gs->exact));
	return json_pack("{s:b,s:o,s:I}", "exact", gs->exact, "threads", threads,
	    "more", (json_int_t)(gs->nth - n));
}

json_t *
gilstat_warnings_json(struct gilstat *gs, uint64_t *more)
{
	json_t *all = json_array();
	size_t i;

	qsort(gs->w, gs->nw, sizeof *gs->w, cmp_end);
	for (i = 0; i < gs->nw; i++) {
		const struct warning *w = &gs->w[i];

		json_array_append_new(all, json_pack("{s:i,s:s,s:I,s:I}", "tid", (int)w->tid,
		    "what", w->take ? "take" : "hold", "ns", (json_int_t)w->ns,
		    "threshold_ns", (json_int_t)(w->take ? gs->o.take_ns : gs->o.hold_ns)));
	}
	*more = gs->wmore;
	gs->nw = 0;
	gs->wmore = 0;
	return all;
}
