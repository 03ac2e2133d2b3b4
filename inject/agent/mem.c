/*
 * mem — see mem.h.  Rows are sorted and cut to --limit here, so that an
 * answer stays small however many types the program has.
 */
#include "config.h"

#include "inject/agent/mem.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/protocol.h"
#include "inject/agent/memscan.h"
#include "inject/agent/pyagent.h"
#include "memhelper_py.h"	/* generated from memhelper.py: memhelper_py_source */

#define WAIT_STEP_MS 50

struct mem_row {
	PyTypeObject *tp;
	long long count, size;		/* the last snapshot */
	long long dcount, dsize;	/* diff: since the first */
};

static long long
arg_ll(json_t *args, const char *key, long long dflt)
{
	json_t *v = json_object_get(args, key);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static bool descending_order, by_delta;

static int
by_size(const void *a, const void *b)
{
	const struct mem_row *x = a, *y = b;
	long long kx = by_delta ? x->dsize : x->size, ky = by_delta ? y->dsize : y->size;
	int c = kx < ky ? -1 : kx > ky;

	if (c == 0)
		c = by_delta ? (x->dcount < y->dcount ? -1 : x->dcount > y->dcount) :
		    (x->count < y->count ? -1 : x->count > y->count);
	return descending_order ? -c : c;
}

static json_t *
scan_info(const struct memscan *s)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:b,s:b,s:b,s:i,s:f,s:f}",
	    "objects", (json_int_t)s->objects, "bytes", (json_int_t)s->bytes,
	    "untracked", (json_int_t)s->untracked, "types", (json_int_t)s->ntypes,
	    "approximate", s->approximate, "cut_short", s->cut_short,
	    "python_sizeof", s->python_sizeof,
	    "slices", (int)s->slices, "max_hold_ms", s->max_hold_ms, "wall_ms", s->wall_ms);
}

/* Sort, cut to limit and describe rows (diff: with deltas). */
static json_t *
rows_json(struct mem_row *rows, size_t n, json_t *args, bool diff)
{
	const char *order = json_string_value(json_object_get(args, "order"));
	long long limit = arg_ll(args, "limit", 20);
	json_t *a = json_array();
	size_t i;

	descending_order = order == NULL || strcmp(order, "ascending") != 0;
	by_delta = diff;
	qsort(rows, n, sizeof *rows, by_size);
	for (i = 0; i < n && (long long)i < limit; i++) {
		char *name = fmt_type_name(rows[i].tp);
		json_t *r = json_pack("{s:s,s:I,s:I}", "type", name,
		    "count", (json_int_t)rows[i].count, "size", (json_int_t)rows[i].size);

		if (diff) {
			json_object_set_new(r, "count_delta", json_integer(rows[i].dcount));
			json_object_set_new(r, "size_delta", json_integer(rows[i].dsize));
		}
		json_array_append_new(a, r);
		free(name);
	}
	return a;
}

static json_t *
do_summary(struct agent_job *job)
{
	struct memscan s;
	struct mem_row *rows;
	size_t i, n = 0;
	char *why = NULL;
	json_t *data, *end;

	if (!memscan_run(&s, job, &why)) {
		end = proto_new_end_error(job->id, strcmp(why, "cancelled") ? "internal" : "cancelled", why);
		free(why);
		memscan_clear(&s);
		return end;
	}
	rows = calloc(s.ntypes + 1, sizeof *rows);
	for (i = 0; rows != NULL && i < s.cap; i++)
		if (s.types[i].tp != NULL)
			rows[n++] = (struct mem_row){ s.types[i].tp, s.types[i].count, s.types[i].size, 0, 0 };
	data = json_pack("{s:s,s:o,s:I}", "action", "summary", "scan", scan_info(&s),
	    "total_types", (json_int_t)n);
	json_object_set_new(data, "rows", rows_json(rows, n, job->args, false));
	free(rows);
	memscan_clear(&s);
	return proto_new_end_ok(job->id, data);
}

/* Sleep ms without the GIL; false when the job was cancelled meanwhile. */
static bool
wait_released(struct agent_job *job, double ms)
{
	PyThreadState *ts = PyEval_SaveThread();
	bool ok = true;

	while (ms > 0 && (ok = !agent_job_is_cancelled(job))) {
		double step = ms < WAIT_STEP_MS ? ms : WAIT_STEP_MS;
		struct timespec t = { 0, (long)(step * 1e6) };

		nanosleep(&t, NULL);
		ms -= step;
	}
	PyEval_RestoreThread(ts);
	return ok && !agent_job_is_cancelled(job);
}

/* Rows of b against a: every type in either, zero deltas left out. */
static size_t
diff_rows(const struct memscan *a, const struct memscan *b, struct mem_row *rows)
{
	const struct memscan_type *o;
	size_t i, n = 0;

	for (i = 0; i < b->cap; i++) {
		const struct memscan_type *t = &b->types[i];

		if (t->tp == NULL)
			continue;
		o = memscan_find(a, t->tp);
		rows[n] = (struct mem_row){ t->tp, t->count, t->size,
		    t->count - (o ? o->count : 0), t->size - (o ? o->size : 0) };
		if (rows[n].dcount != 0 || rows[n].dsize != 0)
			n++;
	}
	for (i = 0; i < a->cap; i++) {
		const struct memscan_type *t = &a->types[i];

		if (t->tp != NULL && memscan_find(b, t->tp) == NULL)
			rows[n++] = (struct mem_row){ t->tp, 0, 0, -t->count, -t->size };
	}
	return n;
}

static json_t *
do_diff(struct agent_job *job)
{
	double interval = json_number_value(json_object_get(job->args, "interval"));
	struct memscan a, b;
	struct mem_row *rows;
	char *why = NULL;
	json_t *data, *end;
	size_t n;

	memset(&b, 0, sizeof b);
	if (interval <= 0)
		return proto_new_end_error(job->id, "usage", "mem diff: --interval must be more than 0");
	if (!memscan_run(&a, job, &why) || !wait_released(job, interval * 1e3) ||
	    !memscan_run(&b, job, &why)) {
		end = proto_new_end_error(job->id, why && strcmp(why, "cancelled") ? "internal" :
		    "cancelled", why ? why : "cancelled");
		free(why);
		memscan_clear(&a);
		memscan_clear(&b);
		return end;
	}
	rows = calloc(a.ntypes + b.ntypes + 1, sizeof *rows);
	n = rows ? diff_rows(&a, &b, rows) : 0;
	data = json_pack("{s:s,s:f,s:o,s:o,s:I}", "action", "diff", "interval", interval,
	    "before", scan_info(&a), "scan", scan_info(&b), "total_types", (json_int_t)n);
	json_object_set_new(data, "rows", rows_json(rows, n, job->args, true));
	free(rows);
	memscan_clear(&a);
	memscan_clear(&b);
	return proto_new_end_ok(job->id, data);
}

/*
 * live: a summary every `interval` seconds, each sent as an event (the
 * `summary` answer's data), until the client cancels or leaves.  The
 * client keeps the history (the trend per type); here nothing is kept
 * between samples.
 */
static json_t *
do_live(struct agent_job *job)
{
	double interval = json_number_value(json_object_get(job->args, "interval"));
	json_t *end, *data;
	long long sample = 0;

	if (interval <= 0)
		return proto_new_end_error(job->id, "usage", "mem live: interval must be more than 0");
	for (;;) {
		end = do_summary(job);
		data = json_object_get(end, "data");
		if (!json_is_true(json_object_get(end, "ok")) || data == NULL)
			return end;
		json_object_set_new(data, "sample", json_integer(++sample));
		json_object_set_new(data, "interval", json_real(interval));
		json_object_set_new(data, "action", json_string("live"));
		agent_send(job->conn, proto_new_event(job->id, json_incref(data)));
		json_decref(end);
		if (!wait_released(job, interval * 1e3))
			return proto_new_end_error(job->id, "cancelled", "cancelled");
	}
}

/* ---- mem sites: memhelper.py ------------------------------------------------ */

static PyObject *memhelper;	/* its namespace */

/*
 * A thread of ours that attaches to the interpreter (PyGILState_Ensure
 * without a thread state) allocates its thread state through the raw
 * allocator, without the GIL; when tracemalloc is on, its hook records the
 * allocation.  If tracemalloc is stopped meanwhile, the hook works on freed
 * tables and the process crashes (CPython gh-128679, fixed in 3.13; seen
 * here on 3.12 with a cancel's interrupt thread against `mem sites stop`).
 * So attaching and switching tracemalloc exclude each other.
 *
 * The switch runs Python code, which lets the GIL go now and then; an
 * attaching thread holds the GIL when it is done.  So neither side may
 * wait for the other while holding a lock the other needs: attach_lock
 * guards two counters and is only ever held for a moment, never across a
 * wait for the GIL.  (It once was held across the whole switch: a thread
 * that held the GIL and wanted attach_lock -- a closing connection's
 * `sites_drop` -- and the switching thread, which held attach_lock and
 * wanted the GIL back, waited for each other for ever.)
 */
static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t switch_done = PTHREAD_COND_INITIALIZER;
static int attaching;	/* our threads between PyGILState_Ensure's start and end */
static bool switching;	/* a thread is starting or stopping tracemalloc */

PyGILState_STATE
agent_mem_gil_ensure(void)
{
	PyGILState_STATE g;

	/* called without the GIL: waiting here keeps nobody from it */
	pthread_mutex_lock(&attach_lock);
	while (switching)
		pthread_cond_wait(&switch_done, &attach_lock);
	attaching++;
	pthread_mutex_unlock(&attach_lock);
	g = PyGILState_Ensure();
	pthread_mutex_lock(&attach_lock);
	attaching--;
	pthread_mutex_unlock(&attach_lock);
	return g;
}

/*
 * Keep our threads from attaching until switching_end(); called with the
 * GIL, which is let go while another thread finishes attaching or
 * switching.
 */
static void
switching_begin(void)
{
	PyThreadState *ts;

	for (;;) {
		pthread_mutex_lock(&attach_lock);
		if (attaching == 0 && !switching) {
			switching = true;
			pthread_mutex_unlock(&attach_lock);
			return;
		}
		pthread_mutex_unlock(&attach_lock);
		/* it waits for the GIL to finish: let it have it */
		ts = PyEval_SaveThread();
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		PyEval_RestoreThread(ts);
	}
}

static void
switching_end(void)
{
	pthread_mutex_lock(&attach_lock);
	switching = false;
	pthread_cond_broadcast(&switch_done);
	pthread_mutex_unlock(&attach_lock);
}

/* fn(*args) in memhelper.py (steals args) as plain JSON; NULL with *why. */
static json_t *
memhelper_call(const char *fn, PyObject *args, char **why)
{
	bool switches;
	json_t *j;

	if (memhelper == NULL &&
	    (memhelper = agent_py_namespace(memhelper_py_source, "_flight_profiler_mem", why)) == NULL) {
		Py_XDECREF(args);
		return NULL;
	}
	/* start, stop, drop may start or stop tracemalloc: never while one of ours attaches */
	switches = strcmp(fn, "sites_diff") != 0 && strcmp(fn, "sites_has") != 0;
	if (switches)
		switching_begin();
	j = agent_py_call_plain(memhelper, fn, args, why);
	if (switches)
		switching_end();
	return j;
}

/* The agent's answer of a helper call: NULL data is an internal error, {"error"} a usage one. */
static json_t *
sites_end(struct agent_job *job, json_t *data, char *why, const char *what)
{
	json_t *end;

	if (data == NULL) {
		end = proto_new_end_error(job->id, "internal", why ? why : "mem sites failed");
		free(why);
		return end;
	}
	if (json_is_string(json_object_get(data, "error"))) {
		end = proto_new_end_error(job->id, "usage",
		    json_string_value(json_object_get(data, "error")));
		json_decref(data);
		return end;
	}
	json_object_set_new(data, "what", json_string(what));
	return proto_new_end_ok(job->id, data);
}

#define CONN_ARGS(job, fmt, ...) \
	Py_BuildValue("(K" fmt ")", (unsigned long long)(job)->conn, ##__VA_ARGS__)

/*
 * diff --interval S: wait S seconds, then diff.  Without a `start` of this
 * connection, a session of its own is started first and stopped after: the
 * whole of start, diff and stop in one command (what --cmd needs, since
 * tracemalloc ends with the client that started it).
 */
static json_t *
sites_diff_over(struct agent_job *job, double interval)
{
	json_t *started = NULL, *data;
	char *why = NULL;

	data = memhelper_call("sites_has", CONN_ARGS(job, ""), &why);
	if (data != NULL && !json_is_true(data)) {
		started = memhelper_call("sites_start", CONN_ARGS(job, "i",
		    (int)arg_ll(job->args, "frames", 1)), &why);
		if (started == NULL || json_object_get(started, "error") != NULL) {
			json_decref(data);
			return sites_end(job, started, why, "diff");
		}
	}
	json_decref(data);
	data = NULL;
	if (!wait_released(job, interval * 1e3))
		why = strdup("cancelled");
	else
		data = memhelper_call("sites_diff", CONN_ARGS(job, "i",
		    (int)arg_ll(job->args, "limit", 20)), &why);
	if (started != NULL) {
		json_decref(started);
		json_decref(memhelper_call("sites_stop", CONN_ARGS(job, ""), &why));
		if (data != NULL)
			json_object_set_new(data, "one_shot", json_true());
	}
	if (data == NULL && why != NULL && strcmp(why, "cancelled") == 0) {
		free(why);
		return proto_new_end_error(job->id, "cancelled", "cancelled");
	}
	return sites_end(job, data, why, "diff");
}

static json_t *
do_sites(struct agent_job *job)
{
	const char *what = json_string_value(json_object_get(job->args, "what"));
	double interval = json_number_value(json_object_get(job->args, "interval"));
	json_t *data = NULL;
	char *why = NULL;

	if (what != NULL && strcmp(what, "start") == 0)
		data = memhelper_call("sites_start", CONN_ARGS(job, "i",
		    (int)arg_ll(job->args, "frames", 1)), &why);
	else if (what != NULL && strcmp(what, "diff") == 0 && interval > 0)
		return sites_diff_over(job, interval);
	else if (what != NULL && strcmp(what, "diff") == 0)
		data = memhelper_call("sites_diff", CONN_ARGS(job, "i",
		    (int)arg_ll(job->args, "limit", 20)), &why);
	else if (what != NULL && strcmp(what, "stop") == 0)
		data = memhelper_call("sites_stop", CONN_ARGS(job, ""), &why);
	else
		return proto_new_end_error(job->id, "usage", "mem sites: start, diff or stop");
	return sites_end(job, data, why, what);
}

void
agent_mem_drop_conn(uint64_t conn)
{
	char *why = NULL;

	/* Only a helper that loaded can hold a session: never load it for this. */
	if (memhelper != NULL)
		json_decref(memhelper_call("sites_drop", Py_BuildValue("(K)",
		    (unsigned long long)conn), &why));
	free(why);
}

/* ---- mem rss: the kernel's view against pymalloc's ------------------------------ */

static long long
status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long long kb = -1;
	size_t n = strlen(key);

	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			kb = atoll(line + n + 1);
	if (f != NULL)
		fclose(f);
	return kb;
}

/* The number after the '=' of the first line containing `label`, commas dropped. */
static long long
stat_value(const char *text, const char *label)
{
	const char *at = strstr(text, label), *eq;
	long long v = 0;

	if (at == NULL || (eq = strchr(at, '=')) == NULL)
		return -1;
	for (eq++; *eq != '\0' && *eq != '\n'; eq++)
		if (*eq >= '0' && *eq <= '9')
			v = v * 10 + (*eq - '0');
	return v;
}

static json_t *
do_rss(struct agent_job *job)
{
	/* Exported by every libpython 3.8-3.13, but internal from 3.11: looked up, not linked. */
	int (*stats)(FILE *) = (int (*)(FILE *))dlsym(RTLD_DEFAULT, "_PyObject_DebugMallocStats");
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	json_t *data = json_pack("{s:I,s:I}", "rss", (json_int_t)status_kb("VmRSS") * 1024,
	    "hwm", (json_int_t)status_kb("VmHWM") * 1024);

	if (stats != NULL && (f = open_memstream(&text, &len)) != NULL) {
		int pymalloc = stats(f);

		fclose(f);
		json_object_set_new(data, "pymalloc", json_boolean(pymalloc));
		json_object_set_new(data, "arenas", json_integer(stat_value(text,
		    "# arenas allocated current")));
		json_object_set_new(data, "arena_bytes", json_integer(stat_value(text, " arenas * ")));
		json_object_set_new(data, "used_bytes", json_integer(stat_value(text,
		    "# bytes in allocated blocks")));
		json_object_set_new(data, "free_bytes", json_integer(stat_value(text,
		    "# bytes in available blocks")));
		free(text);
	}
	return proto_new_end_ok(job->id, data);
}

json_t *
agent_mem_run(struct agent_job *job)
{
	const char *action = json_string_value(json_object_get(job->args, "action"));

	if (action != NULL && strcmp(action, "summary") == 0)
		return do_summary(job);
	if (action != NULL && strcmp(action, "diff") == 0)
		return do_diff(job);
	if (action != NULL && strcmp(action, "sites") == 0)
		return do_sites(job);
	if (action != NULL && strcmp(action, "rss") == 0)
		return do_rss(job);
	if (action != NULL && strcmp(action, "live") == 0)
		return do_live(job);
	return proto_new_end_error(job->id, "usage",
	    "mem: the action is summary, diff, live, sites or rss");
}
